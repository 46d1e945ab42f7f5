//! The terminal model inside a PTY run: every byte the child writes goes through a
//! `shellwright_term::Terminal` on the thread that reads it, the same way tmux sits between a
//! program and its viewers.
//!
//! [`EmulatedOutput`] is the [`PtyOutput`] that does it: it feeds each chunk to the terminal,
//! writes the terminal's query replies back to the child through [`PtyControl`] (without blocking),
//! and hands the rest — the chunk itself, borrowed, unless an answered query was cut out — to the
//! next output (plain text with no sequence in it goes on first and is fed after, which takes the
//! emulator off the path of an echo to its reader). At end of input it releases whatever the
//! terminal held back as a possible query, so nothing is lost. [`SessionTerminal`] is the shared
//! handle readers use (screen, snapshot, commands) and [`SessionTerminal::exec`] waits on: the
//! read loop publishes a small progress value (commands completed, prompt showing, run ended) and
//! wakes waiters only when it changes.

use std::sync::{Arc, Mutex, MutexGuard};

use std::time::Instant;

use shellwright_io::lock;
use shellwright_proc::{CancelReason, CancelToken};
use shellwright_term::{CommandRecord, Terminal, TerminalOptions};
use tokio::sync::watch;

use crate::input::{InputState, POLL_INTERVAL, QUIET_FALLBACK, STEADY, prompt_of};
use crate::viewers::{Attachment, Delivery, Queue, RunEnd, Viewer, ViewerSink, Viewers};
use crate::{PtyControl, PtyOutput};

/// Why [`SessionTerminal::exec`] gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("exec timed out")]
    TimedOut,
    #[error("exec aborted")]
    Aborted,
    #[error("exec failed: the session ended before the command finished")]
    Ended,
}

impl From<CancelReason> for ExecError {
    fn from(reason: CancelReason) -> Self {
        match reason {
            CancelReason::TimedOut => Self::TimedOut,
            CancelReason::Aborted => Self::Aborted,
        }
    }
}

/// What `exec` and `wait_for_input` wait on; republished after every feed, but only a change
/// wakes anyone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Progress {
    completed: u64,
    prompt: bool,
    ended: bool,
    /// Feeds so far: output came, so whether the program waits must be looked at again.
    feeds: u64,
}

impl Progress {
    fn of(terminal: &Terminal, ended: bool, feeds: u64) -> Self {
        Self {
            completed: terminal.completed_commands(),
            prompt: terminal.prompt_showing(),
            ended,
            feeds,
        }
    }
}

/// The terminal model of one run, shared by the reader that feeds it and those that look at it.
/// Cloning gives another handle to the same terminal.
#[derive(Clone)]
pub struct SessionTerminal {
    shared: Arc<Shared>,
}

struct Shared {
    terminal: Mutex<Terminal>,
    /// The run's owner reports how it ended ([`SessionTerminal::finish_run`]): viewers' streams
    /// end then, with it, rather than at end of input.
    run_end_follows: bool,
    /// Locked only while `terminal` is held (see `viewers`).
    viewers: Mutex<Viewers>,
    progress: watch::Sender<Progress>,
    /// Serialises `exec` calls: one command is typed and awaited at a time.
    exec_turn: tokio::sync::Mutex<()>,
}

impl SessionTerminal {
    /// A terminal whose viewers' streams end at end of input.
    pub fn new(options: TerminalOptions) -> Self {
        Self::build(options, false)
    }

    /// A terminal whose viewers' streams end when [`finish_run`](Self::finish_run) says how the
    /// run ended, so that they learn it with their last piece.
    pub fn reporting_run_end(options: TerminalOptions) -> Self {
        Self::build(options, true)
    }

    fn build(options: TerminalOptions, run_end_follows: bool) -> Self {
        Self {
            shared: Arc::new(Shared {
                terminal: Mutex::new(Terminal::new(options)),
                run_end_follows,
                viewers: Mutex::new(Viewers::default()),
                progress: watch::Sender::new(Progress::default()),
                exec_turn: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The terminal, for reading its screen, snapshot and commands, or resizing it. Hold the
    /// guard briefly: the run's reader waits for it.
    pub fn lock(&self) -> MutexGuard<'_, Terminal> {
        // A panic while feeding cannot leave the lock's data unusable for readers.
        lock(&self.shared.terminal)
    }

    /// The viewers' hub; the caller holds the terminal's lock.
    fn viewers(&self) -> MutexGuard<'_, Viewers> {
        lock(&self.shared.viewers)
    }

    /// Adds a viewer cut at the current point of the stream (see `viewers`): the snapshot and
    /// size it starts from, and the handle whose [`Viewer::take`] gives everything after the cut.
    /// `sink` is told whenever something waits. On a terminal whose run has ended the viewer
    /// gets the snapshot only, and its first take says `ended`.
    pub fn attach(&self, sink: impl ViewerSink) -> Attachment {
        let mut terminal = self.lock();
        let snapshot = terminal.snapshot();
        let screen_snapshot = terminal.snapshot_with_scrollback(0);
        let (cols, rows) = terminal.size();
        let queue = self.viewers().add(Box::new(sink));
        drop(terminal);
        Attachment {
            snapshot,
            screen_snapshot,
            cols,
            rows,
            viewer: Viewer::new(queue, self.clone()),
        }
    }

    /// A viewer's pending resync: a fresh snapshot cut at the current point.
    pub(crate) fn resync(&self, queue: &Queue) -> Delivery {
        let mut terminal = self.lock();
        let viewers = self.viewers();
        queue.resync(&viewers, || (terminal.snapshot(), terminal.size()))
    }

    /// Resizes the terminal; every viewer is resynchronised at the new size.
    pub fn resize(&self, cols: u16, rows: u16) {
        let mut terminal = self.lock();
        terminal.resize(cols, rows);
        self.viewers().resync_all();
    }

    /// The output to give [`crate::spawn`]/[`crate::run`]: feeds this terminal, answers queries
    /// through `control`, and passes the rest on to `downstream`. `downstream` may be called with
    /// the terminal locked (plain text is handed on before it is fed), so it must not lock this
    /// terminal itself: it hands the bytes on, and readers of the terminal run elsewhere.
    pub fn output<O: PtyOutput>(&self, control: PtyControl, downstream: O) -> EmulatedOutput<O> {
        EmulatedOutput {
            terminal: self.clone(),
            control,
            downstream,
        }
    }

    /// Marks the run over: pending and later [`exec`](Self::exec) calls fail with
    /// [`ExecError::Ended`], and viewers' streams end unless the owner reports how the run ended
    /// ([`reporting_run_end`](Self::reporting_run_end)). The output does it at end of input.
    pub fn mark_ended(&self) {
        let terminal = self.lock();
        if !self.shared.run_end_follows {
            self.viewers().end(None);
        }
        self.publish(&terminal, true);
    }

    /// Marks the run over and ends viewers' streams with how it ended (its outcome, or the error
    /// that ended it, a spawn that failed): for the owner of a terminal made with
    /// [`reporting_run_end`](Self::reporting_run_end), once the run's result is known.
    pub fn finish_run(&self, end: RunEnd) {
        let terminal = self.lock();
        self.viewers().end(Some(end));
        self.publish(&terminal, true);
    }

    fn publish(&self, terminal: &Terminal, ended: bool) {
        self.shared.progress.send_if_modified(|progress| {
            let feeds = progress.feeds + u64::from(!ended);
            let next = Progress::of(terminal, ended, feeds);
            // Once ended, always ended (a late reader must not revive the run).
            let next = Progress {
                ended: next.ended || progress.ended,
                ..next
            };
            let changed = *progress != next;
            *progress = next;
            changed
        });
    }

    /// Types `command` and Enter into the shell once it shows a prompt, and returns the command's
    /// record once its end is seen (OSC 133;D, or the next prompt in the fallback). When `cancel`
    /// fires after the command was typed, sends Ctrl+C and fails with the cancel's reason.
    pub async fn exec(
        &self,
        control: &PtyControl,
        command: &str,
        cancel: &CancelToken,
    ) -> Result<CommandRecord, ExecError> {
        let _turn = tokio::select! {
            biased;
            reason = cancel.cancelled() => return Err(reason.into()),
            turn = self.shared.exec_turn.lock() => turn,
        };
        let mut progress = self.shared.progress.subscribe();
        let ready = self
            .wait_for(&mut progress, cancel, |p| p.prompt || p.ended)
            .await?;
        if ready.ended {
            return Err(ExecError::Ended);
        }
        let before = self.lock().completed_commands();
        let mut line = String::with_capacity(command.len() + 1);
        line.push_str(command);
        line.push('\r');
        control
            .write(line.as_bytes())
            .map_err(|_| ExecError::Ended)?;
        if let Err(err) = self
            .wait_for(&mut progress, cancel, |p| p.completed > before || p.ended)
            .await
        {
            // Interrupt the command; the shell comes back to its prompt.
            let _ = control.write(b"\x03");
            return Err(err);
        }
        let terminal = self.lock();
        if terminal.completed_commands() > before {
            terminal.last_command().cloned().ok_or(ExecError::Ended)
        } else {
            Err(ExecError::Ended)
        }
    }

    /// Whether the run's program waits for input (see [`crate::input`]), with the cursor's row as
    /// its prompt when it does.
    pub fn input_state(&self, control: &PtyControl) -> InputState {
        let mut state = control.input_state();
        if state.waiting {
            let screen = self.lock().screen();
            state.prompt = prompt_of(
                &screen.lines,
                usize::from(screen.cursor.row),
                usize::from(screen.cursor.col),
            );
        }
        state
    }

    /// Resolves with the input state as soon as the program waits for input, or with a state that
    /// is not waiting once the run has ended; fails when `cancel` fires first. It looks again after
    /// every output and every [`POLL_INTERVAL`] meanwhile, and resolves once the program has been
    /// seen waiting for [`STEADY`] with no output in between: a program that draws its screen in
    /// steps from an event loop sleeps in `epoll` between the steps, and should not be caught
    /// half drawn. Where the kernel cannot tell, a program silent for [`QUIET_FALLBACK`] counts as
    /// waiting.
    pub async fn wait_for_input(
        &self,
        control: &PtyControl,
        cancel: &CancelToken,
    ) -> Result<InputState, ExecError> {
        let mut progress = self.shared.progress.subscribe();
        let mut last_output = Instant::now();
        let mut waiting_since: Option<Instant> = None;
        loop {
            let mut state = self.input_state(control);
            if state.waiting {
                let since = *waiting_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= STEADY {
                    return Ok(state);
                }
            } else {
                waiting_since = None;
            }
            if progress.borrow_and_update().ended {
                return Ok(InputState::default());
            }
            if !state.known && last_output.elapsed() >= QUIET_FALLBACK {
                state.waiting = true;
                return Ok(state);
            }
            tokio::select! {
                biased;
                reason = cancel.cancelled() => return Err(reason.into()),
                // The sender lives in `self.shared`: the channel cannot close while we wait.
                _ = progress.changed() => {
                    last_output = Instant::now();
                    waiting_since = None;
                }
                () = tokio::time::sleep(POLL_INTERVAL) => {}
            }
        }
    }

    async fn wait_for(
        &self,
        progress: &mut watch::Receiver<Progress>,
        cancel: &CancelToken,
        done: impl Fn(&Progress) -> bool,
    ) -> Result<Progress, ExecError> {
        tokio::select! {
            biased;
            reason = cancel.cancelled() => Err(reason.into()),
            // The sender lives in `self.shared`, so the channel cannot close while we wait.
            reached = progress.wait_for(|p| done(p)) => reached.map(|p| *p).map_err(|_| ExecError::Ended),
        }
    }
}

/// A [`PtyOutput`] that runs every byte through a [`SessionTerminal`] first (see the module doc).
pub struct EmulatedOutput<O> {
    terminal: SessionTerminal,
    control: PtyControl,
    downstream: O,
}

impl<O: PtyOutput> PtyOutput for EmulatedOutput<O> {
    fn bytes(&mut self, chunk: &[u8]) {
        let mut terminal = self.terminal.lock();
        let checked = terminal.check(chunk);
        // Plain text (an echo, a log line) goes on before it is emulated, so the consumer is woken
        // while the emulator works rather than after. The lock is held from before the hand-off:
        // a reader woken by these bytes still finds them applied.
        let handed_on = checked.passes_unchanged();
        if handed_on {
            self.downstream.bytes(chunk);
        }
        let feed = terminal.feed_checked(checked);
        self.terminal.publish(&terminal, false);
        // Under the same lock as the feed: this is the cut viewers attach at.
        self.terminal
            .viewers()
            .passed(&feed.passthrough, terminal.open_sequence_len());
        drop(terminal);
        if !feed.replies.is_empty() {
            // Fails only once the terminal is closed, when nobody is left to read the reply.
            let _ = self.control.write(&feed.replies);
        }
        if !handed_on && !feed.passthrough.is_empty() {
            self.downstream.bytes(&feed.passthrough);
        }
    }

    fn finish(&mut self) {
        let held = {
            let mut terminal = self.terminal.lock();
            let held = terminal.flush();
            self.terminal
                .viewers()
                .passed(&held, terminal.open_sequence_len());
            held
        };
        if !held.is_empty() {
            self.downstream.bytes(&held);
        }
        self.downstream.finish();
        self.terminal.mark_ended();
    }
}
