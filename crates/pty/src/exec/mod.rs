//! [`ExecSessions`]: commands an agent starts, types into and reads in steps — the shape of
//! Codex's `exec_command` / `write_stdin` tools — each in a pseudo-terminal of its own.
//!
//! Every step (a start, a write, a poll, a kill) returns an [`ExecUpdate`] at the earliest of:
//! the program exited, with everything it wrote read and rendered; it waits for input (the
//! kernel's word, [`crate::input`], not a quiet timer); or the step's yield time passed. The
//! update carries the text that is new since the previous one, as the terminal shows it
//! ([`output`]), cut to the step's byte budget from the front, and the TCP ports the session's
//! processes listen on (`shellwright_proc::listening_ports`), so "the server is up" needs no
//! reading of its log.
//!
//! A session is a [`PtySession`] running `bash -c <command>` ([`EXEC_SHELL`]; `cmd /c` on
//! Windows, where bash is not a given), answering the terminal queries
//! programs send, with the run driven by a task of its own: a session runs on whether or not
//! anyone asks. It stays in the table until an update has reported its end (then its id is
//! unknown), or it is killed; at most `max_sessions` are in the table at once. Dropping the
//! table, or [`ExecSessions::close`], stops every session with everything it started.

mod output;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use shellwright_io::lock;
use shellwright_proc::waits::process_tree;
use shellwright_proc::{CancelReason, CancelToken, Outcome, listening_ports};
use shellwright_term::terminal::DEFAULT_SCROLLBACK;
use tokio::sync::watch;

use crate::{InputState, PtyCommand, PtyError, PtySession, RunOptions, TermSize};
use output::{OutputCursor, keep_tail};

/// Sessions a table keeps unless told otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 16;
/// The shell a session's command runs through.
pub const EXEC_SHELL: &str = if cfg!(windows) { "cmd" } else { "bash" };
/// Bytes of output one update carries unless told otherwise.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 32 * 1024;
/// How long a start waits for the program to exit or ask for input, unless told otherwise.
pub const DEFAULT_START_YIELD: Duration = Duration::from_secs(10);
/// How long a write (or a poll) waits, unless told otherwise.
pub const DEFAULT_WRITE_YIELD: Duration = Duration::from_millis(250);
/// Rows that may scroll off a session's screen between two updates before the oldest are lost.
pub const SCROLLBACK_ROWS: usize = DEFAULT_SCROLLBACK;

/// What to run: `bash -c command` in a terminal of `size`.
#[derive(Clone, Debug)]
pub struct ExecStart {
    pub command: String,
    /// The working directory; `None` is the host's.
    pub cwd: Option<PathBuf>,
    /// Variables overlaid on the host's environment, or the whole environment without
    /// `inherit_env`.
    pub env: Vec<(String, String)>,
    pub inherit_env: bool,
    pub size: TermSize,
}

/// How long one step may wait and how much output it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub yield_time: Duration,
    pub max_output_bytes: usize,
}

/// What one step returns (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecUpdate {
    pub id: u32,
    /// The text that is new since the previous update (see [`output`]).
    pub output: String,
    /// How the program ended; `None` while it runs.
    pub outcome: Option<Outcome>,
    /// Present when the update returned because the program waits for input.
    pub waiting: Option<InputState>,
    /// The TCP ports the session's processes listen on, ascending.
    pub listening: Vec<u16>,
    /// Bytes of new output dropped from the front to keep within the step's budget.
    pub truncated_bytes: usize,
    /// Since the session started.
    pub elapsed: Duration,
}

/// One row of [`ExecSessions::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecInfo {
    pub id: u32,
    pub command: String,
    /// The child's pid while it runs.
    pub pid: Option<u32>,
    pub running: bool,
    pub started_at: SystemTime,
}

/// Why a step failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ExecSessionError {
    #[error("too many exec sessions: the limit is {0}; kill one or let one finish first")]
    Limit(usize),
    #[error("no exec session with id {id}: {}", known_sessions(.known))]
    UnknownSession { id: u32, known: Vec<u32> },
    #[error("the exec sessions are closed")]
    Closed,
    #[error(transparent)]
    Start(Arc<PtyError>),
}

fn known_sessions(known: &[u32]) -> String {
    if known.is_empty() {
        return "there are none (a session that ended is gone once an update reported its end)"
            .to_string();
    }
    let ids: Vec<String> = known.iter().map(u32::to_string).collect();
    format!("the sessions are {}", ids.join(", "))
}

/// A table of exec sessions; cloning gives another handle to the same table.
#[derive(Clone)]
pub struct ExecSessions {
    inner: Arc<Inner>,
}

struct Inner {
    table: Mutex<Table>,
    max_sessions: usize,
}

#[derive(Default)]
struct Table {
    sessions: BTreeMap<u32, Arc<Session>>,
    next_id: u32,
    closed: bool,
}

/// How a run ended, shared by everyone who waits for it.
type Ending = Result<Outcome, Arc<PtyError>>;

struct Session {
    id: u32,
    command: String,
    started: Instant,
    started_at: SystemTime,
    pty: PtySession,
    cancel: CancelToken,
    ended: watch::Receiver<Option<Ending>>,
    /// Where the previous update left the output; held for a whole step, so steps on one
    /// session take turns.
    cursor: tokio::sync::Mutex<OutputCursor>,
}

/// What a step waits for besides the end.
#[derive(Clone, Copy)]
enum Until {
    /// The program waits for input, or the time passed.
    InputOr(Duration),
    /// Only the end (a kill).
    End,
}

impl ExecSessions {
    /// A table that keeps at most `max_sessions` sessions (at least one).
    pub fn new(max_sessions: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                table: Mutex::new(Table {
                    next_id: 1,
                    ..Table::default()
                }),
                max_sessions: max_sessions.max(1),
            }),
        }
    }

    /// Starts `start` in a new session and returns its first update. A command that cannot be
    /// started (bad working directory, no `bash`) fails with [`ExecSessionError::Start`] and
    /// leaves no session behind. Call it inside a Tokio runtime: the session's run is a task.
    pub async fn start(
        &self,
        start: ExecStart,
        step: Step,
    ) -> Result<ExecUpdate, ExecSessionError> {
        let session = self.open(start)?;
        self.step(&session, "", Until::InputOr(step.yield_time), step)
            .await
    }

    /// Types `chars` into session `id` (nothing: a poll) and returns the next update.
    pub async fn write(
        &self,
        id: u32,
        chars: &str,
        step: Step,
    ) -> Result<ExecUpdate, ExecSessionError> {
        let session = self.get(id)?;
        self.step(&session, chars, Until::InputOr(step.yield_time), step)
            .await
    }

    /// Stops session `id` with everything it started (SIGTERM, then SIGKILL after
    /// [`crate::CANCEL_GRACE`]) and returns its last update once they are gone.
    pub async fn kill(
        &self,
        id: u32,
        max_output_bytes: usize,
    ) -> Result<ExecUpdate, ExecSessionError> {
        let session = self.get(id)?;
        session.cancel.cancel(CancelReason::Aborted);
        let step = Step {
            yield_time: Duration::ZERO,
            max_output_bytes,
        };
        self.step(&session, "", Until::End, step).await
    }

    /// The sessions in the table, by id.
    pub fn list(&self) -> Vec<ExecInfo> {
        let table = lock(&self.inner.table);
        table
            .sessions
            .values()
            .map(|session| ExecInfo {
                id: session.id,
                command: session.command.clone(),
                pid: session.pty.pid(),
                running: session.ended.borrow().is_none(),
                started_at: session.started_at,
            })
            .collect()
    }

    /// Stops every session with everything it started and waits until they are gone; later
    /// starts fail with [`ExecSessionError::Closed`].
    pub async fn close(&self) {
        let sessions: Vec<Arc<Session>> = {
            let mut table = lock(&self.inner.table);
            table.closed = true;
            std::mem::take(&mut table.sessions).into_values().collect()
        };
        for session in &sessions {
            session.cancel.cancel(CancelReason::Aborted);
        }
        for session in sessions {
            let mut ended = session.ended.clone();
            // The sender goes away only after sending the end.
            let _ = ended.wait_for(Option::is_some).await;
        }
    }

    /// Adds a session for `start` and starts its run as a task of its own.
    fn open(&self, start: ExecStart) -> Result<Arc<Session>, ExecSessionError> {
        let mut table = lock(&self.inner.table);
        if table.closed {
            return Err(ExecSessionError::Closed);
        }
        if table.sessions.len() >= self.inner.max_sessions {
            return Err(ExecSessionError::Limit(self.inner.max_sessions));
        }
        let pty = PtySession::new();
        let cancel = CancelToken::new();
        let command = PtyCommand {
            shell: EXEC_SHELL.to_string(),
            cwd: start.cwd,
            env: start.env,
            inherit_env: start.inherit_env,
            size: start.size,
            ..PtyCommand::new(start.command.clone())
        };
        let options = RunOptions {
            scrollback: SCROLLBACK_ROWS,
            ..RunOptions::default()
        };
        // The terminal model keeps what the program shows; nothing else reads the bytes.
        let (run, guard) = pty
            .start(command, options, cancel.clone(), |_: &[u8]| {})
            .map_err(|err| ExecSessionError::Start(Arc::new(err)))?;
        let (ended_tx, ended) = watch::channel(None);
        tokio::spawn(async move {
            let ending = run.await.map_err(Arc::new);
            drop(guard);
            let _ = ended_tx.send(Some(ending));
        });
        let id = table.next_id;
        table.next_id += 1;
        let session = Arc::new(Session {
            id,
            command: start.command,
            started: Instant::now(),
            started_at: SystemTime::now(),
            pty,
            cancel,
            ended,
            cursor: tokio::sync::Mutex::default(),
        });
        table.sessions.insert(id, Arc::clone(&session));
        Ok(session)
    }

    fn get(&self, id: u32) -> Result<Arc<Session>, ExecSessionError> {
        let table = lock(&self.inner.table);
        table
            .sessions
            .get(&id)
            .cloned()
            .ok_or_else(|| ExecSessionError::UnknownSession {
                id,
                known: table.sessions.keys().copied().collect(),
            })
    }

    fn forget(&self, id: u32) {
        lock(&self.inner.table).sessions.remove(&id);
    }

    /// Writes `chars`, waits as `until` says, and reads the update; the update that reports the
    /// end removes the session from the table.
    async fn step(
        &self,
        session: &Arc<Session>,
        chars: &str,
        until: Until,
        step: Step,
    ) -> Result<ExecUpdate, ExecSessionError> {
        let mut cursor = session.cursor.lock().await;
        if !chars.is_empty() {
            // Only fails once the run is over, when the end is what this step reports.
            let _ = session.pty.write(chars.as_bytes());
        }
        let waiting = session.wait(until).await;
        let ending = session.ended.borrow().clone();
        let outcome = match ending {
            Some(Err(err)) => {
                self.forget(session.id);
                return Err(ExecSessionError::Start(err));
            }
            Some(Ok(outcome)) => Some(outcome),
            None => None,
        };
        let output = match session.pty.terminal() {
            Ok(terminal) => cursor.next(&mut terminal.lock()),
            Err(_) => String::new(),
        };
        let (output, truncated_bytes) = keep_tail(output, step.max_output_bytes);
        let listening = if outcome.is_none() {
            session.listening()
        } else {
            self.forget(session.id);
            Vec::new()
        };
        Ok(ExecUpdate {
            id: session.id,
            output,
            waiting: waiting.filter(|_| outcome.is_none()),
            outcome,
            listening,
            truncated_bytes,
            elapsed: session.started.elapsed(),
        })
    }
}

impl Drop for Inner {
    /// Sessions nobody can reach any more are stopped (their runs' tasks stop what they started).
    fn drop(&mut self) {
        for session in lock(&self.table).sessions.values() {
            session.cancel.cancel(CancelReason::Aborted);
        }
    }
}

impl Session {
    /// Waits for the run's end or, with [`Until::InputOr`], for the program to wait for input
    /// (returned) or the time to pass.
    async fn wait(&self, until: Until) -> Option<InputState> {
        let mut ended = self.ended.clone();
        let end = ended.wait_for(Option::is_some);
        let Until::InputOr(yield_time) = until else {
            let _ = end.await;
            return None;
        };
        let asks = async {
            // Not waiting means the run ended: the end says so, in its own branch.
            match self.pty.wait_for_input(None, CancelToken::new()).await {
                Ok(state) if state.waiting => state,
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = end => None,
            state = asks => Some(state),
            () = tokio::time::sleep(yield_time) => None,
        }
    }

    /// The TCP ports the session's process tree listens on.
    fn listening(&self) -> Vec<u16> {
        self.pty
            .pid()
            .map_or_else(Vec::new, |pid| listening_ports(&process_tree(pid)))
    }
}
