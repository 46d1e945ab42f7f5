//! What the brush integration remembers about each live session, between the builtins and hooks
//! that run inside brush and the session that drives it: the run's cancellation and limit tokens,
//! the user's view of the DEBUG trap and functrace, the session's umask, and how our builtins
//! ended it.
//!
//! Builtins get only a `&mut Shell`, so the record is found by the session's id, which our DEBUG
//! trap's command text carries ([`common::session_of`]). Every clone of the shell (jobs,
//! subshells, pipeline stages) finds the same record.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use brush_core::functions::Registration as FunctionRegistration;
use brush_core::traps::TrapHandler;
use brush_core::{ExecutionControlFlow, ExecutionExitCode, Shell, functions};
use shellwright_io::lock;
use shellwright_proc::CancelToken;
use tokio::sync::Notify;

use super::common::{self, BuiltinFn};
use super::job_output::JobOutput;
use crate::jobs::JobBook;

use crate::limits::LimitExceeded;

/// How a session was ended by one of our builtins, when that changes what happens at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// `exec cmd` replaced the shell: no EXIT trap (there is no shell left to run it).
    Exec,
    /// SIGKILL aimed at the session itself: no EXIT trap.
    Killed,
}

/// A command name our hooks diverted to unwind a stopped run (see `unwind`), and the function
/// it meant before, if any.
pub(crate) struct Diversion {
    pub name: String,
    pub original: Option<FunctionRegistration>,
}

/// One session's record.
#[derive(Default)]
pub(crate) struct SessionRecord {
    /// The running run's token, which the DEBUG trap obeys.
    pub run_token: Option<CancelToken>,
    /// The running run's tag (`SHELLWRIGHT_RUN`), which its shells and jobs carry.
    pub run_tag: Option<String>,
    /// Tags of this session's runs that were stopped, until the next run begins: whatever of them
    /// still runs unwinds at its next command.
    pub stopped_tags: HashSet<String>,
    /// Names diverted to unwind a stopped run, by diversion number.
    pub diversions: HashMap<u64, Diversion>,
    pub next_diversion: u64,
    /// Cancelled when a command of the session passes a nesting limit (see [`crate::limits`]).
    pub limit_token: Option<CancelToken>,
    pub exceeded: Option<LimitExceeded>,
    /// Set once the session is ending: no command of it, in any task, may start any more.
    pub stopping: bool,
    /// Set while the EXIT trap of a session torn down after a stop runs.
    pub exiting: bool,
    pub user_debug_trap: Option<TrapHandler>,
    pub user_functrace: bool,
    pub commands_seen: u64,
    /// What the session's processes and files are created with (see `isolation`).
    pub umask: u32,
    pub ending: Option<Ending>,
    /// Function calls refused by `FUNCNEST` whose stand-in has not run yet, by key (see
    /// `funcnest`); the last key given out.
    pub refusals: HashMap<u64, RefusedCall>,
    pub refusals_made: u64,
    /// Set when a refused call abandoned the session's current command line.
    pub line_abandoned: bool,
    /// For each function called so far, the user's definition last seen and the rewritten
    /// registration that runs it, if our rewrite changed it (see `bodies`).
    pub rewritten_functions:
        HashMap<String, (functions::Registration, Option<functions::Registration>)>,
    /// The functions whose rewritten registration a call put in a function table, to be put back.
    pub swapped_functions: HashMap<String, SwappedFunction>,
    /// Signals sent to the shell from copies of it, not yet acted on, and the notice of a new
    /// one (see `signals`).
    pub pending_signals: VecDeque<i32>,
    pub signal_arrived: Arc<Notify>,
    /// The builtin a signal's trap made end as the trap did, the next time it runs.
    pub replaced_builtin: Option<ReplacedBuiltin>,
    /// The session's background jobs, and the serial the next one gets (see `jobs`).
    pub jobs: JobBook,
    pub next_job_serial: u64,
    /// The identity of the running run's output pipe (see [`shellwright_io::file_identity`]):
    /// a job writing there gets a pipe of its own instead (see `jobs`).
    pub run_output: Option<shellwright_io::FileIdentity>,
    /// The output pipes of the running run's jobs, which pass what they read on to it while it
    /// goes.
    pub job_forwards: Vec<Arc<JobOutput>>,
}

/// A builtin whose function `signals` swapped for one call.
pub(crate) struct ReplacedBuiltin {
    pub name: String,
    pub function: BuiltinFn,
    pub exit_code: ExecutionExitCode,
    pub flow: ExecutionControlFlow,
}

/// A function whose rewritten registration is in a function table for one call (see `bodies`).
#[derive(Clone)]
pub(crate) struct SwappedFunction {
    pub rewritten: functions::Registration,
    pub original: functions::Registration,
}

/// A function call refused by `FUNCNEST`, until its stand-in runs.
pub(crate) struct RefusedCall {
    pub function: String,
    /// The function the stand-in replaced, put back by it.
    pub original: functions::Registration,
    /// `BASH_COMMAND` as the refused call set it.
    pub command_line: String,
}

impl SessionRecord {
    /// Whether a shell of this session whose run tag is `tag` may start no command any more:
    /// the session is ending, or its run was stopped.
    pub fn must_stop(&self, tag: Option<&str>) -> bool {
        self.stopping || self.run_stopped(tag)
    }
}

/// Whether a shell tagged `tag` belongs to the run tagged `run`: the run's own shells, and its
/// jobs' (`<run>.j<serial>`).
fn within(tag: &str, run: &str) -> bool {
    tag.strip_prefix(run)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

static SESSIONS: LazyLock<Mutex<HashMap<u64, SessionRecord>>> = LazyLock::new(Mutex::default);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Registers a new session's record; returns its id.
pub(crate) fn register(umask: u32, jobs: JobBook) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let record = SessionRecord {
        umask,
        jobs,
        ..SessionRecord::default()
    };
    lock(&SESSIONS).insert(id, record);
    id
}

/// Forgets a session's record (when the session ends).
pub(crate) fn remove(id: u64) {
    lock(&SESSIONS).remove(&id);
}

/// Runs `f` on the record of session `id`, if it is still registered.
pub(crate) fn with_session<R>(id: u64, f: impl FnOnce(&mut SessionRecord) -> R) -> Option<R> {
    lock(&SESSIONS).get_mut(&id).map(f)
}

/// Runs `f` on the record of the session `shell` belongs to.
pub(crate) fn with_shell<R>(shell: &Shell, f: impl FnOnce(&mut SessionRecord) -> R) -> Option<R> {
    with_session(common::session_of(shell)?, f)
}

/// The umask of the session `shell` belongs to.
pub(crate) fn session_umask(shell: &Shell) -> Option<u32> {
    with_shell(shell, |s| s.umask)
}

/// Whether the user turned functrace on in the session `shell` belongs to (brush's own value
/// for a shell that is not a session's). Our hooks force brush's functrace on; this is the value
/// the user set and sees.
pub(crate) fn user_functrace(shell: &Shell) -> bool {
    with_shell(shell, |s| s.user_functrace).unwrap_or_else(|| {
        shell
            .options()
            .shell_functions_inherit_debug_and_return_traps
    })
}

impl SessionRecord {
    /// Whether a shell of this session whose run tag is `tag` belongs to a stopped run: the
    /// running one once its token fired, or an earlier one stopped before.
    pub fn run_stopped(&self, tag: Option<&str>) -> bool {
        let Some(tag) = tag else {
            return false;
        };
        let current = self.run_tag.as_deref().is_some_and(|run| within(tag, run))
            && self
                .run_token
                .as_ref()
                .is_some_and(CancelToken::is_cancelled);
        current || self.stopped_tags.iter().any(|run| within(tag, run))
    }

    /// Whether any run of this session is stopped (cheap: checked before reading a shell's tag).
    pub fn any_run_stopped(&self) -> bool {
        !self.stopped_tags.is_empty()
            || self
                .run_token
                .as_ref()
                .is_some_and(CancelToken::is_cancelled)
    }
}
