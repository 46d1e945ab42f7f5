//! [`PersistentShell`]: one session kept alive between runs, runs serialised in call order, and
//! [`execute_once`] for a fresh session per call.
//!
//! A cancelled or timed-out run stops everything it started — its processes, its in-process
//! background jobs, the functions and loops it was in — and leaves the session as it was at that
//! moment: cwd, variables and functions set before the stop survive, as they do when you press
//! Ctrl-C in an interactive shell. Only `exit`, an error, a run that would not stop within a grace
//! period, or [`PersistentShell::close`] end the session.
//!
//! In-process background jobs (`cmd &`, `{ …; } &`) of a run that ended normally keep running
//! between runs, as an interactive shell's jobs do (a later run can `wait` for them), and stop
//! when the session ends. `execute_once` ends its session when the command ends, so the jobs it
//! left behind are stopped before it returns. (`bash -c` would leave them running as processes;
//! as tasks inside the host they must not outlive their session.) Processes such jobs started are
//! ordinary processes and are left running, as bash leaves them, until the shell is closed or the
//! host ends.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use std::path::PathBuf;
use std::time::Duration;

use shellwright_io::lock;
use shellwright_proc::{CancelReason, CancelToken, RunScope, processless_run_tag, stop_tagged};
use tokio::sync::{oneshot, watch};

use crate::error::ShellError;
use crate::history::{History, HistoryEntry, HistoryLimits};
use crate::jobs::{JobBook, ShellJob};
use crate::minimizing;
use crate::output::{ChunkHandler, StartHandler};
use crate::session::{RunOutcome, RunRequest, RunResult, SessionOptions, ShellEnvironment};
use crate::worker::{SessionThread, keeps_session};

/// A timeout shorter than this sends a run down the queued path even when it could be done in
/// place: there a timer can stop it, while a run in place is over before any timer could fire.
pub const INLINE_MIN_TIMEOUT: Duration = Duration::from_secs(1);

/// How long what a closed shell left running gets between SIGTERM and SIGKILL.
const CLOSE_GRACE: Duration = Duration::from_millis(150);

/// A shell whose cwd, variables and functions survive between runs.
///
/// The session is created lazily by the first run, and dropped — so the next run starts fresh,
/// and its result says `session_reset` — after `exit`, an error, or a cancelled run that would
/// not stop; a cancelled or timed-out run that stopped keeps it. Every run that gets to start is recorded
/// in the shell's [`History`]. Cloning gives another handle to the same shell.
#[derive(Clone)]
pub struct PersistentShell {
    inner: Arc<Inner>,
}

struct Inner {
    options: SessionOptions,
    /// Shared with the run that holds it ([`Started`]), which may take it on the caller's thread.
    session: Arc<tokio::sync::Mutex<Option<SessionThread>>>,
    /// Completes when the most recently queued run is done: each run waits for the one queued
    /// before it, which is what makes the order the *call* order rather than the poll order.
    queue_tail: Mutex<Option<oneshot::Receiver<()>>>,
    active: Mutex<Option<ActiveRun>>,
    history: History,
    /// The session's working directory as the last result reported it; `None` before any.
    cwd: Mutex<Option<PathBuf>>,
    /// The tag every run of this shell's is tagged within ([`RunScope::begin_within`]), so that
    /// [`close`](PersistentShell::close) reaches whatever any of them left running.
    tag: String,
    /// Set by [`close`](PersistentShell::close): later runs fail with [`ShellError::Closed`].
    closed: AtomicBool,
    /// The session's background jobs.
    jobs: JobBook,
}

/// The run currently holding the session, for [`PersistentShell::abort`].
#[derive(Clone)]
struct ActiveRun {
    cancel: CancelToken,
    finished: watch::Receiver<bool>,
}

impl PersistentShell {
    /// A shell whose history keeps the default number of entries and bytes.
    pub fn new(options: SessionOptions) -> Self {
        Self::with_history_limits(options, HistoryLimits::default())
    }

    /// A shell whose history keeps at most what `history_limits` says.
    pub fn with_history_limits(options: SessionOptions, history_limits: HistoryLimits) -> Self {
        let inner = Inner {
            options,
            session: Arc::default(),
            queue_tail: Mutex::new(None),
            active: Mutex::new(None),
            history: History::new(history_limits),
            cwd: Mutex::new(None),
            tag: processless_run_tag(),
            closed: AtomicBool::new(false),
            jobs: JobBook::default(),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Queues `request` behind the runs queued before this call and returns the run, which
    /// streams its output to `on_chunk`. A request whose token is already cancelled resolves at
    /// once without running.
    ///
    /// When the run can start now — every run queued before it has finished, the session exists
    /// and nothing holds it — it is handed to the session's thread here, on the calling thread
    /// ([`start_now`](Self::start_now)), rather than when the returned future is first polled:
    /// that saves the hop through the thread that polls it.
    pub fn run(
        &self,
        request: RunRequest,
        on_chunk: ChunkHandler,
    ) -> impl Future<Output = Result<RunResult, ShellError>> + Send + use<> {
        let (on_chunk, minimizing) = minimizing::capture(&request, on_chunk);
        let (my_turn_done, next_turn) = oneshot::channel::<()>();
        let previous = lock(&self.inner.queue_tail).replace(next_turn);
        let previous =
            previous.and_then(|mut previous| (!turn_is_over(&mut previous)).then_some(previous));
        let closed = self.inner.is_closed();
        let started = match previous {
            _ if closed => Err((request, on_chunk)),
            None if !request.cancel.is_cancelled() => self.start_now(request, on_chunk),
            _ => Err((request, on_chunk)),
        };
        let inner = Arc::clone(&self.inner);
        async move {
            if closed {
                return Err(ShellError::Closed);
            }
            let outcome = match started {
                Ok(started) => started.finish(&inner).await,
                Err((request, on_chunk)) => {
                    if let Some(reason) = request.cancel.reason() {
                        return Ok(RunResult::stopped(reason));
                    }
                    if let Some(previous) = previous {
                        // An error only means the previous run was dropped: its turn is over too.
                        let _ = previous.await;
                    }
                    let mut slot = inner.session.lock().await;
                    if inner.is_closed() {
                        return Err(ShellError::Closed);
                    }
                    let finished = inner.enter_active(&request.cancel);
                    let (on_start, on_chunk) = recorded(&inner.history, &request.command, on_chunk);
                    let scope = RunScope::begin_within(&inner.tag);
                    let new_session = NewSession {
                        options: &inner.options,
                        one_shot: false,
                        jobs: &inner.jobs,
                    };
                    let outcome = run_in(
                        &mut slot,
                        new_session,
                        request,
                        scope,
                        Some(on_start),
                        on_chunk,
                    )
                    .await;
                    inner.leave_active(outcome.as_ref().ok(), finished);
                    outcome
                }
            };
            drop(my_turn_done);
            let outcome = outcome.map(|result| inner.settled(result));
            minimizing::finished(minimizing.as_ref(), outcome)
        }
    }

    /// Hands `request` to the session's thread now, when the session exists and is free; gives
    /// the request back otherwise. The caller has checked that no run queued before it is left.
    // The request is given back by value on the hot path: boxing it would cost an allocation per
    // run (Windows' larger paths push it over clippy's size line).
    #[allow(clippy::result_large_err)]
    fn start_now(
        &self,
        request: RunRequest,
        on_chunk: ChunkHandler,
    ) -> Result<Started, (RunRequest, ChunkHandler)> {
        let Ok(slot) = Arc::clone(&self.inner.session).try_lock_owned() else {
            return Err((request, on_chunk));
        };
        let Some(session) = slot.as_ref() else {
            return Err((request, on_chunk));
        };
        // The timer runs on the session's runtime: this thread may have none.
        let deadline = {
            let _runtime = session.runtime().enter();
            request.cancel.deadline(request.timeout)
        };
        let finished = self.inner.enter_active(&request.cancel);
        let (on_start, on_chunk) = recorded(&self.inner.history, &request.command, on_chunk);
        let scope = RunScope::begin_within(&self.inner.tag);
        let answer = session.send(request, scope, Some(on_start), on_chunk);
        Ok(Started {
            slot,
            answer: Box::pin(async move {
                let outcome = answer?.await;
                drop(deadline);
                outcome
            }),
            finished,
        })
    }

    /// Runs `request` at once, on the calling thread, when nothing is queued or running and the
    /// command is made only of builtins that cannot block or start anything (see the
    /// `session::inline` module): its output reaches `on_chunk` in one piece before this returns,
    /// and it is recorded in the history as any run is. Gives the request back, with nothing run,
    /// otherwise — then [`run`](Self::run) it. A session must exist already (the first run
    /// creates it). A request already cancelled, or with a timeout under
    /// [`INLINE_MIN_TIMEOUT`], is given back too: the queued path reports those as it always
    /// does, while a run in place is over before any timer could fire.
    ///
    /// The run is driven to its end on the calling thread with the session runtime's `block_on`,
    /// which Tokio forbids on a thread that is driving a runtime: called from one, this declines
    /// (a plain thread or Node's JS thread is fine).
    pub fn try_run_inline(
        &self,
        request: RunRequest,
        on_chunk: ChunkHandler,
    ) -> Result<Result<RunResult, ShellError>, RunRequest> {
        let in_a_runtime = tokio::runtime::Handle::try_current().is_ok();
        let short_timeout = request.timeout.is_some_and(|t| t < INLINE_MIN_TIMEOUT);
        if in_a_runtime
            || short_timeout
            || request.cancel.is_cancelled()
            || self.inner.is_closed()
            || !self.is_idle()
        {
            return Err(request);
        }
        let Ok(mut slot) = self.inner.session.try_lock() else {
            return Err(request);
        };
        let Some(session) = slot.as_ref() else {
            return Err(request);
        };
        let history = &self.inner.history;
        let mut minimizing = None;
        let outcome = session.try_run_inline(&request, || {
            let (on_chunk, capture) = minimizing::capture(&request, on_chunk);
            minimizing = capture;
            let (on_start, on_chunk) = recorded(history, &request.command, on_chunk);
            (Some(on_start), on_chunk)
        });
        let Some(outcome) = outcome else {
            return Err(request);
        };
        let ended = outcome.as_ref().ok().map(|o| &o.result);
        history.finish(ended.map(|r| r.outcome), ended.and_then(end_cwd));
        let reset = !keeps_session(&outcome);
        if reset {
            // Dropping the handle ends the session on its own thread.
            *slot = None;
        }
        let outcome = outcome.map(|o| self.inner.settled(reset_if(reset, o.result)));
        Ok(minimizing::finished(minimizing.as_ref(), outcome))
    }

    /// Whether every run queued so far has finished (then the queue is left empty: a receiver
    /// that has seen its end may not be awaited again).
    fn is_idle(&self) -> bool {
        let mut tail = lock(&self.inner.queue_tail);
        let idle = tail.as_mut().is_none_or(turn_is_over);
        if idle {
            *tail = None;
        }
        idle
    }

    /// The session's working directory and exported variables — where a program it started
    /// would start, and what it would inherit — as they stand once every run queued before this
    /// call has finished. Queued like a run: runs queued after it wait for it. The session is
    /// created first when no run has created it yet.
    pub fn environment(
        &self,
    ) -> impl Future<Output = Result<ShellEnvironment, ShellError>> + Send + use<> {
        let (my_turn_done, next_turn) = oneshot::channel::<()>();
        let previous = lock(&self.inner.queue_tail).replace(next_turn);
        let inner = Arc::clone(&self.inner);
        async move {
            if let Some(previous) = previous {
                // An error only means the previous run was dropped: its turn is over too.
                let _ = previous.await;
            }
            let mut slot = inner.session.lock().await;
            if inner.is_closed() {
                return Err(ShellError::Closed);
            }
            let session = match slot.as_mut() {
                Some(session) => session,
                None => {
                    let new_session = NewSession {
                        options: &inner.options,
                        one_shot: false,
                        jobs: &inner.jobs,
                    };
                    match new_session.start(&CancelToken::new()).await? {
                        Ok(session) => slot.insert(session),
                        Err(reason) => {
                            return Err(ShellError::Execution(format!(
                                "the session could not start: {reason:?}"
                            )));
                        }
                    }
                }
            };
            let environment = session.environment().await;
            drop(my_turn_done);
            environment
        }
    }

    /// Cancels the running command, if any, and waits until it has ended.
    pub async fn abort(&self) {
        if let Some(mut finished) = self.interrupt() {
            let _ = finished.wait_for(|done| *done).await;
        }
    }

    /// Cancels the running command, if any, without waiting; returns what tells when it ended.
    pub fn interrupt(&self) -> Option<watch::Receiver<bool>> {
        let active = lock(&self.inner.active).clone()?;
        active.cancel.cancel(CancelReason::Aborted);
        Some(active.finished)
    }

    /// Ends the shell for good: later runs fail with [`ShellError::Closed`] (so do runs queued
    /// behind the running one), the running command is stopped, the session ends with its
    /// in-process jobs, and every process a run of this shell left running — background jobs,
    /// `nohup`, `setsid` — is terminated. Closing again does nothing more.
    pub async fn close(&self) {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.abort().await;
        let session = self.inner.session.lock().await.take();
        if let Some(session) = session {
            session.close().await;
        }
        stop_tagged(std::slice::from_ref(&self.inner.tag), CLOSE_GRACE).await;
    }

    /// The session's background jobs (`cmd &`), oldest first: those still running, and the latest
    /// that ended, with what each wrote after the run that started it resolved. Empty after the
    /// session ended (`exit`, [`close`](Self::close)): its jobs ended with it.
    pub fn jobs(&self) -> Vec<ShellJob> {
        if self.inner.is_closed() {
            return Vec::new();
        }
        self.inner.jobs.jobs()
    }

    /// The shell's runs, oldest first, the running one last.
    pub fn history(&self) -> &History {
        &self.inner.history
    }

    /// [`History::entries`] of this shell.
    pub fn history_entries(&self) -> Vec<HistoryEntry> {
        self.inner.history.entries()
    }
}

impl Drop for Inner {
    /// The last handle is gone without [`close`](PersistentShell::close) (a Shell the JS garbage
    /// collector took): what its runs left running ends as `close` would end it, on a thread of
    /// its own, as the handle may go on a thread that must not wait (Node's).
    fn drop(&mut self) {
        if self.is_closed() {
            return;
        }
        let tags = vec![std::mem::take(&mut self.tag)];
        let _ = std::thread::Builder::new()
            .name("shellwright-shell-end".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                if let Ok(runtime) = runtime {
                    runtime.block_on(stop_tagged(&tags, CLOSE_GRACE));
                }
            });
    }
}

/// A run handed to the session's thread by [`PersistentShell::start_now`], which holds the
/// session until it ends. The run goes on if this is dropped unpolled (only when the host tears
/// down): the session's thread finishes it, and the next run queues behind it there.
struct Started {
    slot: tokio::sync::OwnedMutexGuard<Option<SessionThread>>,
    answer: Pin<Box<dyn Future<Output = Result<RunOutcome, ShellError>> + Send>>,
    finished: watch::Sender<bool>,
}

impl Started {
    /// Waits for the run's end, then leaves the session as [`run_in`] does.
    async fn finish(mut self, inner: &Inner) -> Result<RunResult, ShellError> {
        let outcome = self.answer.await;
        let outcome = conclude(&mut self.slot, outcome);
        inner.leave_active(outcome.as_ref().ok(), self.finished);
        outcome
    }
}

impl Inner {
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Makes the run with `cancel` the one [`PersistentShell::abort`] stops; the returned sender
    /// tells when it ended ([`leave_active`](Self::leave_active)).
    fn enter_active(&self, cancel: &CancelToken) -> watch::Sender<bool> {
        let (finished_tx, finished) = watch::channel(false);
        *lock(&self.active) = Some(ActiveRun {
            cancel: cancel.clone(),
            finished,
        });
        finished_tx
    }

    /// `result` with the session's directory — a run stopped before it reached the session did
    /// not move it, so it is where the last run left it (or where a fresh session starts) — and
    /// the session's jobs forgotten when the run ended it (they ended with it).
    fn settled(&self, mut result: RunResult) -> RunResult {
        if result.session_reset {
            self.jobs.clear();
        }
        let mut cwd = lock(&self.cwd);
        if result.cwd.as_os_str().is_empty() {
            result.cwd = cwd.clone().unwrap_or_else(fresh_session_cwd);
        } else {
            *cwd = Some(result.cwd.clone());
        }
        result
    }

    /// Records how the active run ended and says it has.
    fn leave_active(&self, result: Option<&RunResult>, finished: watch::Sender<bool>) {
        self.history
            .finish(result.map(|r| r.outcome), result.and_then(end_cwd));
        *lock(&self.active) = None;
        let _ = finished.send(true);
    }
}

/// Whether the run that owns this end of the queue has finished (its sender was dropped); a
/// receiver that has seen its end may not be awaited again.
fn turn_is_over(previous: &mut oneshot::Receiver<()>) -> bool {
    matches!(
        previous.try_recv(),
        Err(oneshot::error::TryRecvError::Closed)
    )
}

/// Where `result`'s run left the session, if it reached it (see [`Inner::settled`]).
fn end_cwd(result: &RunResult) -> Option<PathBuf> {
    (!result.cwd.as_os_str().is_empty()).then(|| result.cwd.clone())
}

/// The handlers that record a run in `history` — its start, then each chunk before it goes on to
/// `on_chunk`. Every run's output passes here, so this is the one place it is recorded.
fn recorded(
    history: &History,
    command: &str,
    mut on_chunk: ChunkHandler,
) -> (StartHandler, ChunkHandler) {
    let starts = history.clone();
    let command = command.to_string();
    let on_start: StartHandler = Box::new(move |cwd| starts.start(command, cwd.to_path_buf()));
    let outputs = history.clone();
    let on_chunk: ChunkHandler = Box::new(move |chunk| {
        outputs.output(&chunk);
        on_chunk(chunk);
    });
    (on_start, on_chunk)
}

/// Runs in the session held by `slot`, creating it first if needed, and drops it when the run
/// ended in a way that does not keep a session. The timeout counts from here: creating the
/// session (sourcing the snapshot) and parsing are part of the run.
async fn run_in(
    slot: &mut Option<SessionThread>,
    new_session: NewSession<'_>,
    request: RunRequest,
    scope: RunScope,
    on_start: Option<StartHandler>,
    on_chunk: ChunkHandler,
) -> Result<RunResult, ShellError> {
    if let Some(reason) = request.cancel.reason() {
        return Ok(RunResult::stopped(reason));
    }
    let _deadline = request.cancel.deadline(request.timeout);
    let session = match slot {
        Some(session) => session,
        None => match new_session.start(&request.cancel).await? {
            Ok(session) => slot.insert(session),
            Err(reason) => return Ok(RunResult::stopped(reason)),
        },
    };
    let outcome = session.run(request, scope, on_start, on_chunk).await;
    conclude(slot, outcome)
}

/// What a shell's next session is made with.
struct NewSession<'a> {
    options: &'a SessionOptions,
    /// The session ends with its first run.
    one_shot: bool,
    /// Where the session records its background jobs: the jobs of the session before it ended
    /// with it, so they are forgotten.
    jobs: &'a JobBook,
}

impl NewSession<'_> {
    async fn start(
        self,
        cancel: &CancelToken,
    ) -> Result<Result<SessionThread, CancelReason>, ShellError> {
        self.jobs.clear();
        SessionThread::start(self.options, cancel, self.one_shot, self.jobs.clone()).await
    }
}

/// The result of a run in the session held by `slot`, which is dropped when the run ended in a
/// way that does not keep a session.
fn conclude(
    slot: &mut Option<SessionThread>,
    outcome: Result<RunOutcome, ShellError>,
) -> Result<RunResult, ShellError> {
    let reset = !keeps_session(&outcome);
    if reset {
        *slot = None;
    }
    outcome.map(|outcome| reset_if(reset, outcome.result))
}

/// `result` of a run that ended its session when `reset`: the next run starts a fresh session, in
/// the host's directory.
fn reset_if(reset: bool, mut result: RunResult) -> RunResult {
    if reset {
        result.session_reset = true;
        result.cwd = fresh_session_cwd();
    }
    result
}

/// Where a fresh session starts: the host's working directory.
fn fresh_session_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_default()
}

/// Runs `request` in a fresh session, which is ended — with every job it left running in-process
/// — before this returns.
pub async fn execute_once(
    options: SessionOptions,
    request: RunRequest,
    on_chunk: ChunkHandler,
) -> Result<RunResult, ShellError> {
    let (on_chunk, minimizing) = minimizing::capture(&request, on_chunk);
    let mut slot = None;
    let new_session = NewSession {
        options: &options,
        one_shot: true,
        jobs: &JobBook::default(),
    };
    let result = run_in(
        &mut slot,
        new_session,
        request,
        RunScope::begin(),
        None,
        on_chunk,
    )
    .await;
    if let Some(session) = slot {
        session.close().await;
    }
    let result = result.map(|mut result| {
        if result.cwd.as_os_str().is_empty() {
            result.cwd = fresh_session_cwd();
        }
        result
    });
    minimizing::finished(minimizing.as_ref(), result)
}
