//! [`PtySession`]: a pseudo-terminal session that runs one command at a time, and the terminal
//! model that stays readable after the run.
//!
//! The session owns the rules a caller would otherwise re-implement around [`run`]: only one run
//! at a time ([`PtyError::AlreadyRunning`]); input, resizes and a kill reach the run as soon as
//! [`start`](PtySession::start) returns (input sent before the child exists is queued); a resize
//! changes the emulator and the pseudo-terminal together; the timeout is armed inside the run; the
//! terminal model (a [`SessionTerminal`]) outlives the run, so its screen, snapshot and command
//! records can be read after exit until the next start; and [`exec`](PtySession::exec) types into
//! the live run.
//!
//! A run counts as live until its [`RunGuard`] is dropped, not merely until the child exits: the
//! owner drops the guard once it has delivered the run's result, so nobody sees the session idle
//! while the result of its last run is still on its way.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use shellwright_io::lock;
use shellwright_proc::{CancelReason, CancelToken, Outcome};
use shellwright_term::terminal::DEFAULT_SCROLLBACK;
use shellwright_term::{CommandRecord, TerminalOptions};

use crate::{Attachment, Reading, TermSize, ViewerSink, run_reading};
use crate::{ExecError, InputState, PtyCommand, PtyControl, PtyError, PtyOutput, SessionTerminal};

/// How a run's terminal model is built, how long the run may take, and who reads its terminal.
#[derive(Debug)]
pub struct RunOptions {
    /// Cancels the run with [`CancelReason::TimedOut`] once elapsed.
    pub timeout: Option<Duration>,
    /// Lines of scrollback the emulator keeps.
    pub scrollback: usize,
    /// Whether the emulator answers the program's terminal queries.
    pub answer_queries: bool,
    /// The run's I/O thread by default; a [`ReadDriver`](crate::ReadDriver) reads on the
    /// caller's own event loop.
    pub reading: Reading,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            timeout: None,
            scrollback: DEFAULT_SCROLLBACK,
            answer_queries: true,
            reading: Reading::IoThread,
        }
    }
}

/// A pseudo-terminal session; cloning gives another handle to the same session.
#[derive(Clone, Default)]
pub struct PtySession {
    state: Arc<Mutex<SessionState>>,
}

#[derive(Default)]
struct SessionState {
    /// Counts starts, so a finished run never clears the state of a newer one.
    generation: u64,
    running: Option<LiveRun>,
    /// The terminal model of the latest run; `None` before the first start.
    terminal: Option<SessionTerminal>,
}

/// The handles of the run in progress.
struct LiveRun {
    control: PtyControl,
    cancel: CancelToken,
}

/// Keeps the session's run live until dropped (see the module doc).
#[must_use = "the session stays running until the guard is dropped"]
pub struct RunGuard {
    state: Arc<Mutex<SessionState>>,
    generation: u64,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        if state.generation == self.generation {
            state.running = None;
        }
    }
}

impl PtySession {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `command` in a new pseudo-terminal whose bytes pass through a fresh terminal model
    /// and then reach `output`. Returns the run, to be polled to its end, and the guard that keeps
    /// the session live. `cancel` stops the run (a token already cancelled starts nothing).
    pub fn start(
        &self,
        command: PtyCommand,
        options: RunOptions,
        cancel: CancelToken,
        output: impl PtyOutput,
    ) -> Result<
        (
            impl Future<Output = Result<Outcome, PtyError>> + Send + 'static,
            RunGuard,
        ),
        PtyError,
    > {
        let control = PtyControl::new(command.size);
        let terminal = SessionTerminal::reporting_run_end(TerminalOptions {
            cols: command.size.cols(),
            rows: command.size.rows(),
            scrollback: options.scrollback,
            answer_queries: options.answer_queries,
        });
        let generation = {
            let mut state = self.lock();
            if state.running.is_some() {
                return Err(PtyError::AlreadyRunning);
            }
            state.generation += 1;
            state.running = Some(LiveRun {
                control: control.clone(),
                cancel: cancel.clone(),
            });
            state.terminal = Some(terminal.clone());
            state.generation
        };
        let output = terminal.output(control.clone(), output);
        let RunOptions {
            timeout, reading, ..
        } = options;
        let work = async move {
            let _deadline = cancel.deadline(timeout);
            let exit = run_reading(command, control, output, reading, &cancel).await;
            // Viewers learn how it ended with their last piece; this also covers runs that never
            // spawned.
            terminal.finish_run(
                exit.as_ref()
                    .map(|outcome| *outcome)
                    .map_err(ToString::to_string),
            );
            exit
        };
        let guard = RunGuard {
            state: Arc::clone(&self.state),
            generation,
        };
        Ok((work, guard))
    }

    /// Whether a run is live.
    pub fn is_running(&self) -> bool {
        self.lock().running.is_some()
    }

    /// Sends `data` to the terminal's input. Input that arrives after the child's terminal closed
    /// but while the run is still live has nowhere to go and is dropped.
    pub fn write(&self, data: &[u8]) -> Result<(), PtyError> {
        ignore_ended(self.live_control()?.write(data))
    }

    /// Resizes the emulator and then the pseudo-terminal, so output the child draws for the new
    /// size meets the new size. When the pseudo-terminal refuses the size, the emulator goes back
    /// to the size they share.
    pub fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        let control = self.live_control()?;
        let before = control.size();
        let terminal = self.lock().terminal.clone();
        if let Some(terminal) = &terminal {
            terminal.resize(size.cols(), size.rows());
        }
        let resized = control.resize(size);
        if let (Err(PtyError::Resize(_)), Some(terminal)) = (&resized, &terminal) {
            terminal.resize(before.cols(), before.rows());
        }
        ignore_ended(resized)
    }

    /// Cancels the live run; it ends as cancelled.
    pub fn kill(&self) -> Result<(), PtyError> {
        let state = self.lock();
        let run = state.running.as_ref().ok_or(PtyError::NotRunning)?;
        run.cancel.cancel(CancelReason::Aborted);
        Ok(())
    }

    /// The terminal model of the latest run (live or ended); [`PtyError::NotRunning`] before the
    /// first start.
    pub fn terminal(&self) -> Result<SessionTerminal, PtyError> {
        self.lock().terminal.clone().ok_or(PtyError::NotRunning)
    }

    /// Adds a viewer of the latest run's terminal (see [`SessionTerminal::attach`]): while the run
    /// is live it follows the stream until the run ends or it detaches; after the run it gets the
    /// snapshot only. A viewer follows one run: after the next start, attach again.
    /// [`PtyError::NotRunning`] before the first start.
    pub fn attach(&self, sink: impl ViewerSink) -> Result<Attachment, PtyError> {
        Ok(self.terminal()?.attach(sink))
    }

    /// Types `command` into the live run once its shell shows a prompt and resolves with the
    /// command's record (see [`SessionTerminal::exec`]); `timeout` and `cancel` bound the wait.
    pub fn exec(
        &self,
        command: String,
        timeout: Option<Duration>,
        cancel: CancelToken,
    ) -> Result<impl Future<Output = Result<CommandRecord, ExecError>> + Send + 'static, PtyError>
    {
        let (control, terminal) = self.live_run().ok_or(PtyError::NotRunning)?;
        Ok(async move {
            let _deadline = cancel.deadline(timeout);
            terminal.exec(&control, &command, &cancel).await
        })
    }

    /// The live run's child pid; `None` while idle.
    pub fn pid(&self) -> Option<u32> {
        self.live_control().ok()?.pid()
    }

    /// Whether the live run's program waits for input now (see [`crate::input`]); not waiting
    /// while idle.
    pub fn input_state(&self) -> InputState {
        match self.live_run() {
            Some((control, terminal)) => terminal.input_state(&control),
            None => InputState::default(),
        }
    }

    /// Resolves as soon as the live run's program waits for input, or with a state that is not
    /// waiting once the run ends (at once while idle); `timeout` and `cancel` bound the wait (see
    /// [`SessionTerminal::wait_for_input`]).
    pub fn wait_for_input(
        &self,
        timeout: Option<Duration>,
        cancel: CancelToken,
    ) -> impl Future<Output = Result<InputState, ExecError>> + Send + 'static {
        let live = self.live_run();
        async move {
            let Some((control, terminal)) = live else {
                return Ok(InputState::default());
            };
            let _deadline = cancel.deadline(timeout);
            terminal.wait_for_input(&control, &cancel).await
        }
    }

    fn live_run(&self) -> Option<(PtyControl, SessionTerminal)> {
        let state = self.lock();
        match (&state.running, &state.terminal) {
            (Some(run), Some(terminal)) => Some((run.control.clone(), terminal.clone())),
            _ => None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }

    fn live_control(&self) -> Result<PtyControl, PtyError> {
        self.lock()
            .running
            .as_ref()
            .map(|run| run.control.clone())
            .ok_or(PtyError::NotRunning)
    }
}

/// A terminal that closed while the run is still live takes no more input or resizes; that is
/// not the caller's error.
fn ignore_ended(result: Result<(), PtyError>) -> Result<(), PtyError> {
    match result {
        Err(PtyError::NotRunning) => Ok(()),
        other => other,
    }
}
