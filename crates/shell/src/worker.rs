//! The thread and the Tokio runtime a session lives on, and the session's end.
//!
//! brush's parser and interpreter recurse once per nesting level of the code they run (a function
//! call, a compound command, a substitution), and an unoptimised build spends tens of kilobytes
//! of stack per level: on an ordinary 2 MiB runtime thread a recursive function overflows after a
//! few dozen calls, and a stack overflow kills the whole host process. So each session gets its
//! own thread and its own multi-threaded runtime, and every thread of it — the session thread
//! that drives the foreground command, the workers that run the tasks brush spawns (background
//! jobs, command and process substitutions, coprocesses) and the blocking pool brush runs
//! pipeline builtins on — has a [`STACK_SIZE`] stack. It is address space, not memory: pages are
//! committed only as deep as the code actually recurses. The nesting limits ([`limits`],
//! [`nesting`]) keep every run well inside it.
//!
//! The runtime is also what bounds the session's in-process work. A session ends after `exit`,
//! an error (a panic inside brush included), a cancelled or timed-out run, or when its owner
//! drops it; then its hooks are stopped (every clone of the shell parks at its next simple
//! command), its runtime is shut down, which drops every task brush spawned for it, and only then
//! are the processes of a stopped run terminated (a job waiting on one would otherwise go on to
//! its next command when it dies). A run that ends its session is answered only once all of that
//! is done, so when its caller hears of the end, nothing the session ran in-process can run
//! another command or write another byte.
//!
//! [`limits`]: crate::limits
//! [`nesting`]: crate::nesting

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use shellwright_proc::{CancelReason, CancelToken, RunScope};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};

#[cfg(unix)]
use crate::brush;
use crate::error::ShellError;
use crate::jobs::JobBook;
use crate::limits::STACK_SIZE;
use crate::output::{ChunkHandler, OutputTidy, StartHandler};
use crate::session::{
    CreateStopped, RunOutcome, RunRequest, Session, SessionOptions, ShellEnvironment, StoppedRuns,
    terminate_run,
};

/// Worker threads per session: background jobs and substitutions that feed each other through
/// pipes with blocking writes need more than one thread besides the foreground.
const WORKERS: usize = 2;

/// How long shutting the runtime down may wait for blocking work (a pipeline builtin).
const SHUTDOWN_GRACE: Duration = Duration::from_millis(250);

type Reply = oneshot::Sender<Result<RunOutcome, ShellError>>;

struct Job {
    request: RunRequest,
    /// Finds what the run starts (its tag is handed to every process of it).
    scope: RunScope,
    on_start: Option<StartHandler>,
    on_chunk: ChunkHandler,
    reply: Reply,
}

/// The session, shared between its thread, which holds it for each queued run, and whoever runs
/// a command in place ([`SessionThread::try_run_inline`]) while it is idle.
type SharedSession = Arc<tokio::sync::Mutex<Option<Session>>>;

/// A handle to a session running on its own thread; dropping it ends the session.
pub(crate) struct SessionThread {
    jobs: mpsc::UnboundedSender<Job>,
    closed: oneshot::Receiver<()>,
    session: SharedSession,
    /// The session's runtime, which drives runs done in place (brush may spawn on it).
    runtime: Handle,
}

/// Whether a session outlives a run that ended this way: not after `exit`, an error or a
/// cancellation. A cwd that cannot be entered is refused before anything runs.
pub(crate) fn keeps_session(outcome: &Result<RunOutcome, ShellError>) -> bool {
    match outcome {
        Ok(outcome) => outcome.keep_session,
        Err(error) => matches!(error, ShellError::Cwd(_)),
    }
}

impl SessionThread {
    /// Starts a session (environment, builtins, snapshot) on a new thread. Resolves to the reason
    /// when `cancel` stops the snapshot first; the session is torn down by then.
    pub async fn start(
        options: &SessionOptions,
        cancel: &CancelToken,
        one_shot: bool,
        jobs: JobBook,
    ) -> Result<Result<Self, CancelReason>, ShellError> {
        let (ready_tx, ready) = oneshot::channel();
        let (queued, queue) = mpsc::unbounded_channel();
        let (closed_tx, closed) = oneshot::channel();
        let options = options.clone();
        let cancel = cancel.clone();
        let session = SharedSession::default();
        let served = Arc::clone(&session);
        std::thread::Builder::new()
            .name("shellwright-session".into())
            .stack_size(STACK_SIZE)
            .spawn(move || {
                let start = Start {
                    options: &options,
                    cancel: &cancel,
                    one_shot,
                    jobs,
                };
                serve(start, ready_tx, queue, closed_tx, served)
            })
            .map_err(|e| ShellError::Init(format!("cannot start the session thread: {e}")))?;
        match ready.await {
            Ok(Ok(runtime)) => Ok(Ok(Self {
                jobs: queued,
                closed,
                session,
                runtime,
            })),
            Ok(Err(CreateStopped::Cancelled(reason))) => Ok(Err(reason)),
            Ok(Err(CreateStopped::Failed(error))) => Err(error),
            Err(_) => Err(ShellError::Init("the session thread ended".into())),
        }
    }

    /// Runs one command in the session. When the run ends the session, this resolves after the
    /// session was torn down.
    pub async fn run(
        &self,
        request: RunRequest,
        scope: RunScope,
        on_start: Option<StartHandler>,
        on_chunk: ChunkHandler,
    ) -> Result<RunOutcome, ShellError> {
        self.send(request, scope, on_start, on_chunk)?.await
    }

    /// Queues one command for the session's thread at once, from any thread (no runtime needed);
    /// the returned answer is [`run`](Self::run)'s.
    pub fn send(
        &self,
        request: RunRequest,
        scope: RunScope,
        on_start: Option<StartHandler>,
        on_chunk: ChunkHandler,
    ) -> Result<impl Future<Output = Result<RunOutcome, ShellError>> + Send + use<>, ShellError>
    {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                request,
                scope,
                on_start,
                on_chunk,
                reply,
            })
            .map_err(|_| ShellError::Execution("the session has ended".into()))?;
        Ok(async move {
            answer
                .await
                .map_err(|_| ShellError::Execution("the session ended during the run".into()))?
        })
    }

    /// The session's runtime, for a run's timer armed off it ([`CancelToken::cancel_after`]
    /// needs one).
    pub fn runtime(&self) -> &Handle {
        &self.runtime
    }

    /// Runs `request` on the calling thread when the session is idle and the command qualifies
    /// ([`Session::inline_program`]), with the handlers `handlers` makes; `None` (and nothing made
    /// or run) otherwise. The caller
    /// must drop this handle when the outcome does not keep the session ([`keeps_session`]).
    pub fn try_run_inline(
        &self,
        request: &RunRequest,
        handlers: impl FnOnce() -> (Option<StartHandler>, ChunkHandler),
    ) -> Option<Result<RunOutcome, ShellError>> {
        #[cfg(unix)]
        {
            let mut slot = self.session.try_lock().ok()?;
            let session = slot.as_mut()?;
            let program = session.inline_program(request)?;
            let (on_start, on_chunk) = handlers();
            Some(session.run_inline(&self.runtime, program, request, on_start, on_chunk))
        }
        // Windows sessions have no path in place: every run is queued.
        #[cfg(windows)]
        {
            let _ = (request, handlers);
            None
        }
    }

    /// The session's working directory and exported variables, read between its runs.
    pub async fn environment(&self) -> Result<ShellEnvironment, ShellError> {
        self.session
            .lock()
            .await
            .as_ref()
            .map(Session::environment)
            .ok_or_else(|| ShellError::Execution("the session has ended".into()))
    }

    /// Ends the session and waits until everything it ran in-process has stopped.
    pub async fn close(self) {
        let Self { jobs, closed, .. } = self;
        drop(jobs);
        let _ = closed.await;
    }
}

/// The session thread: creates the session (one that ends with its first run when `one_shot`),
/// serves runs until one ends it or the handle is dropped, then tears it down.
/// What a session thread starts its session with.
struct Start<'a> {
    options: &'a SessionOptions,
    cancel: &'a CancelToken,
    /// The session ends with its first run.
    one_shot: bool,
    /// Where its background jobs are recorded.
    jobs: JobBook,
}

fn serve(
    start: Start<'_>,
    ready: oneshot::Sender<Result<Handle, CreateStopped>>,
    mut queue: mpsc::UnboundedReceiver<Job>,
    closed: oneshot::Sender<()>,
    shared: SharedSession,
) {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(WORKERS)
        .thread_name("shellwright-session-worker")
        .thread_stack_size(STACK_SIZE)
        .enable_all();
    // Workers and the blocking pool run brush code too: what they fork gets the policy.
    #[cfg(unix)]
    builder.on_thread_start(brush::adopt_spawn_policy);
    let runtime = match builder.build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let error = ShellError::Init(format!("cannot start the session runtime: {e}"));
            let _ = ready.send(Err(CreateStopped::Failed(error)));
            return;
        }
    };
    // After the runtime's workers were started: they keep sharing the host's context, as they did
    // when each run had a thread of its own.
    #[cfg(unix)]
    {
        brush::adopt_session_thread();
        let _context = runtime.enter();
        brush::keep_host_sigtstp();
    }
    let mut ready = Some(ready);
    let stopped = StoppedRuns::default();
    let ended = runtime.block_on(async {
        let mut session =
            Session::create(start.options, start.cancel, stopped.clone(), start.jobs).await?;
        if start.one_shot {
            session.end_after_run();
        }
        let tidier = session.output_tidier();
        *shared.lock().await = Some(session);
        if let Some(ready) = ready.take() {
            let _ = ready.send(Ok(Handle::current()));
        }
        let last_run = serve_runs(&shared, &mut queue, &tidier).await;
        Ok((shared.lock().await.take(), last_run))
    });
    // Whoever is waiting to hear how things ended is answered after the shutdown.
    let answer = match ended {
        Ok((session, last_run)) => {
            if let Some(session) = &session {
                session.stop();
            }
            // brush's jobs hold Tokio handles: drop them inside the runtime.
            let _context = runtime.enter();
            drop(session);
            last_run.map(|(reply, outcome)| Ending::Run(reply, outcome))
        }
        Err(stopped) => ready.take().map(|ready| Ending::Start(ready, stopped)),
    };
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    terminate_runs(&stopped.take());
    match answer {
        Some(Ending::Run(reply, outcome)) => {
            let _ = reply.send(outcome);
        }
        Some(Ending::Start(ready, stopped)) => {
            let _ = ready.send(Err(stopped));
        }
        None => {}
    }
    let _ = closed.send(());
}

enum Ending {
    Start(
        oneshot::Sender<Result<Handle, CreateStopped>>,
        CreateStopped,
    ),
    Run(Reply, Result<RunOutcome, ShellError>),
}

/// Terminates the processes of the runs that were stopped (on a runtime of its own: the
/// session's is gone by now).
fn terminate_runs(runs: &[RunScope]) {
    if runs.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        for run in runs {
            terminate_run(run).await;
        }
    });
}

/// Runs jobs until one ends the session (returned with its answer, to be sent after the
/// teardown) or the handle is dropped. After each answer, `tidier` does the output's
/// housekeeping, while the caller takes the answer up.
async fn serve_runs(
    session: &SharedSession,
    queue: &mut mpsc::UnboundedReceiver<Job>,
    tidier: &OutputTidy,
) -> Option<(Reply, Result<RunOutcome, ShellError>)> {
    while let Some(job) = queue.recv().await {
        // Released before the answer is sent: once the caller hears of the end, the session is
        // idle for a run in place.
        let outcome = match session.lock().await.as_mut() {
            Some(session) => {
                session
                    .run(&job.request, job.scope, job.on_start, job.on_chunk)
                    .await
            }
            // Not reached while runs are served (the slot is emptied after this loop), but an
            // error is a safer answer than a panic on the session's thread.
            None => Err(ShellError::Execution("the session has ended".into())),
        };
        if !keeps_session(&outcome) {
            return Some((job.reply, outcome));
        }
        let _ = job.reply.send(outcome);
        tidier.tidy();
    }
    None
}
