//! One brush-core session: its creation (environment, builtins, snapshot) and what every run in
//! it shares — its result, its command scope ([`scope`]), its stdio ([`stdio`]) and how it ends
//! ([`Session::conclude`]). A run takes one of three paths, one file each:
//!
//! - [`queued`]: on the session's thread, output on a pipe, cancellable at every simple command;
//! - [`inline`]: done in place on the caller's thread, for the builtins [`qualify`] admits;
//! - [`direct`]: inside a queued run, one plain external program spawned without brush (by
//!   [`spawn`]).
//!
//! A new execution path is a file here, chosen in [`queued`]'s `run` or by the caller (as the
//! in-place path is, by `PersistentShell::try_run_inline`).

mod direct;
mod inline;
pub(crate) mod qualify;
mod queued;
mod scope;
mod spawn;
mod stdio;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use brush_core::openfiles::{self, OpenFile, OpenFiles};
use brush_core::traps::TrapSignal;
use brush_core::variables::ShellValueUnsetType;
use brush_core::{
    ExecutionControlFlow, ExecutionParameters, ExecutionResult, ProcessGroupPolicy,
    ProfileLoadBehavior, RcLoadBehavior, Shell, ShellValue, ShellVariable,
};
use futures_util::FutureExt as _;
use shellwright_io::lock;
use shellwright_minimize::{Minimized, Minimizer};
use shellwright_proc::{CancelReason, CancelToken, Outcome, RunScope};

use crate::brush::{self, Integration};
use crate::env::{POWERSHELL_ENV_GUARD, host_environment, initial_environment};
use crate::error::ShellError;
use crate::jobs::JobBook;
use crate::limits::{self, LimitExceeded};
use crate::nesting::{PARSER_NESTING_LIMIT, nesting_depth};
use crate::output::OutputPump;
use crate::parse_cache::ParseCache;

pub use direct::direct_spawns;
pub use scope::ShellEnvironment;

/// How a session is created.
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// Set once, when the session is created (filtered like the host environment).
    pub session_env: Vec<(String, String)>,
    /// Sourced at creation with stdin, stdout and stderr on /dev/null.
    pub snapshot_path: Option<PathBuf>,
}

/// One command to run.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    pub command: String,
    /// Becomes the session's working directory before the command runs (and stays so).
    pub cwd: Option<PathBuf>,
    /// Exported for this run only.
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub cancel: CancelToken,
    /// Rewrites the run's output for an agent when it ends (see [`RunResult::minimized`]).
    pub minimizer: Option<Arc<Minimizer>>,
}

/// How a run ended, where the session is now, and what the minimizer made of its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    pub outcome: Outcome,
    /// The session's working directory after the run: where the next run starts (after a reset,
    /// the host's, where a fresh session starts).
    pub cwd: PathBuf,
    /// From the run's start to its last output.
    pub duration: Duration,
    /// The run ended the session (`exit`, `exec cmd`, a fatal error): the next run starts a fresh
    /// one, without the variables, functions and directory this one had.
    pub session_reset: bool,
    /// Present when the request had a minimizer and one of its filters rewrote the output.
    pub minimized: Option<Minimized>,
}

impl RunResult {
    pub(crate) fn finished(code: i32) -> Self {
        Self::from(Outcome::Exited(code))
    }

    /// The result of a run stopped before it finished.
    pub(crate) fn stopped(reason: CancelReason) -> Self {
        Self::from(Outcome::stopped(reason))
    }

    /// The exit status; none when the run was cancelled or timed out.
    pub fn exit_code(&self) -> Option<i32> {
        self.outcome.exit_code()
    }

    /// Whether an abort stopped it.
    pub fn cancelled(&self) -> bool {
        self.outcome.cancelled()
    }

    /// Whether its time ran out.
    pub fn timed_out(&self) -> bool {
        self.outcome.timed_out()
    }
}

impl From<Outcome> for RunResult {
    /// A result with no directory yet (the shell fills it in before the caller sees it).
    fn from(outcome: Outcome) -> Self {
        Self {
            outcome,
            cwd: PathBuf::new(),
            duration: Duration::ZERO,
            session_reset: false,
            minimized: None,
        }
    }
}

/// What stops a queued run early — its cancel token, and the token the nesting limits cancel —
/// and the scope its processes are found by when it is stopped.
#[derive(Clone, Copy)]
pub(super) struct Stops<'a> {
    pub cancel: &'a CancelToken,
    pub limit: &'a CancelToken,
    pub scope: &'a RunScope,
}

/// What a run means for the session that ran it.
pub(crate) struct RunOutcome {
    pub result: RunResult,
    /// False after `exit`, a top-level `return`/`break`, an error or a cancellation.
    pub keep_session: bool,
}

impl RunOutcome {
    /// The outcome of a run that took `duration`.
    pub(super) fn took(mut self, duration: Duration) -> Self {
        self.result.duration = duration;
        self
    }
}

/// How long an EXIT trap may run when the session is torn down after a cancellation.
const EXIT_TRAP_AFTER_CANCEL: Duration = Duration::from_millis(500);

/// The scopes of a session's stopped runs. Their processes are terminated only after the
/// session's runtime is shut down: a job waiting on one of them would otherwise wake up when it
/// dies and start its next command (a redirection is opened before any hook runs).
#[derive(Clone, Default)]
pub(crate) struct StoppedRuns(Arc<Mutex<Vec<RunScope>>>);

impl StoppedRuns {
    fn push(&self, scope: RunScope) {
        self.lock().push(scope);
    }

    pub fn take(&self) -> Vec<RunScope> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RunScope>> {
        lock(&self.0)
    }
}

/// Why creating a session gave no session.
pub(crate) enum CreateStopped {
    Failed(ShellError),
    /// The snapshot was still being sourced when the token was cancelled.
    Cancelled(CancelReason),
}

impl From<ShellError> for CreateStopped {
    fn from(error: ShellError) -> Self {
        Self::Failed(error)
    }
}

/// How the foreground part of a run ended.
enum Ended {
    Finished(Result<ExecutionResult, ShellError>),
    /// Refused before anything ran, with this exit status (the message is in the stream).
    Refused(i32),
    /// Stopped, with the interpreter back at the top (unwound, or never entered): the session
    /// can go on.
    Cancelled(CancelReason),
    /// Stopped by dropping the interpreter mid-run (it could not unwind in time): its state is
    /// not to be trusted any more.
    Abandoned(CancelReason),
    /// A command passed a nesting limit (the message is in the stream).
    Limit,
    /// brush panicked, with this message: the shell's state is not to be trusted any more.
    Panicked(String),
}

/// A live brush shell plus the hooks registered for it.
pub(crate) struct Session {
    shell: Shell,
    /// Our hooks, builtins and per-session record in `shell` (see [`brush`]).
    brush: Integration,
    output: OutputPump,
    /// `/dev/null`, opened once: each run's stdio is a duplicate of it, which is cheaper than
    /// opening the device four times per run.
    null: OpenFile,
    /// `executeShell`: the session ends with its one command (and runs its EXIT trap then).
    one_shot: bool,
    stopped: StoppedRuns,
    /// The session's own values of the names the current run's `env` set (None: unset), put
    /// back when the run ends.
    covered: Vec<(String, Option<ShellVariable>)>,
    parses: ParseCache,
}

impl Session {
    pub async fn create(
        options: &SessionOptions,
        cancel: &CancelToken,
        stopped: StoppedRuns,
        jobs: JobBook,
    ) -> Result<Self, CreateStopped> {
        let mut builder = Shell::builder()
            .do_not_inherit_env(true)
            .profile(ProfileLoadBehavior::Skip)
            .rc(RcLoadBehavior::Skip)
            .no_editing(true)
            .command_string_mode(true)
            .shell_name("bash".to_string())
            .max_function_call_depth(limits::FUNCTION_NESTING_LIMIT + 1)
            .builtins(brush::builtins());
        let environment = initial_environment(host_environment(), &options.session_env);
        let (guard_name, guard_value) = POWERSHELL_ENV_GUARD;
        if !environment.iter().any(|(name, _)| name == guard_name) {
            builder = builder.var(
                guard_name,
                ShellVariable::new(ShellValue::String(guard_value.into())),
            );
        }
        for (name, value) in environment {
            builder = builder.var(name, exported(value));
        }
        let mut shell = builder
            .build()
            .await
            .map_err(|e| ShellError::Init(e.to_string()))?;
        // brush starts OLDPWD at its own cwd; `bash -c` starts without a value (we skip the host's).
        let _ = shell
            .env_mut()
            .set_global("OLDPWD", starting_oldpwd(None, Path::new("/")));
        let brush = Integration::install(&mut shell, brush::host_umask(), jobs);
        let output = OutputPump::start()
            .map_err(|e| ShellError::Init(format!("cannot start the output thread: {e}")))?;
        let null = openfiles::null().map_err(|e| ShellError::Init(format!("/dev/null: {e}")))?;
        let mut session = Self {
            shell,
            brush,
            output,
            null,
            one_shot: false,
            stopped,
            covered: Vec::new(),
            parses: ParseCache::default(),
        };
        // The host's stdio is never the session's: between runs it is /dev/null.
        session.detach_stdio();
        if let Some(path) = &options.snapshot_path {
            session.source_snapshot(path, cancel).await?;
        }
        Ok(session)
    }

    /// Makes this session end with its next run, as `executeShell`'s does.
    pub fn end_after_run(&mut self) {
        self.one_shot = true;
    }

    /// Sources the snapshot as a run of its own: tagged, cancellable, under the nesting limits.
    async fn source_snapshot(
        &mut self,
        path: &Path,
        cancel: &CancelToken,
    ) -> Result<(), CreateStopped> {
        let fail =
            |e: &dyn std::fmt::Display| ShellError::Snapshot(format!("{}: {e}", path.display()));
        // An unreadable file is left to brush, which words the error; a readable one is checked.
        if let Ok(text) = std::fs::read_to_string(path)
            && nesting_depth(&text, PARSER_NESTING_LIMIT) > PARSER_NESTING_LIMIT
        {
            return Err(fail(&too_deep()).into());
        }
        let null = || openfiles::null().map_err(|e| fail(&e));
        let mut params = self.exec_params();
        params.set_fd(OpenFiles::STDIN_FD, null()?);
        params.set_fd(OpenFiles::STDOUT_FD, null()?);
        params.set_fd(OpenFiles::STDERR_FD, null()?);

        let scope = RunScope::begin();
        self.enter_command_scope(&[], scope.tag())?;
        self.brush.begin_run(cancel.clone(), scope.tag(), None);
        let limit = self.brush.watch_limits();
        let ended = {
            let source = self
                .shell
                .source_script(path, std::iter::empty::<String>(), &params);
            let source = AssertUnwindSafe(source).catch_unwind();
            tokio::pin!(source);
            tokio::select! {
                biased;
                result = &mut source => match result {
                    Ok(result) => Ended::Finished(result.map_err(|e| fail(&e))),
                    Err(payload) => Ended::Panicked(panic_message(payload.as_ref())),
                },
                reason = cancel.cancelled() => Ended::Cancelled(reason),
                _ = limit.cancelled() => Ended::Limit,
            }
        };
        // A stop unwinds the script (see `brush::unwind`), so sourcing can end normally after it.
        let ended = match (ended, cancel.reason()) {
            (Ended::Finished(_), Some(reason)) => Ended::Cancelled(reason),
            (ended, _) => ended,
        };
        self.brush.end_run();
        match ended {
            Ended::Finished(result) => {
                self.leave_command_scope();
                result.map(drop).map_err(CreateStopped::from)
            }
            Ended::Cancelled(reason) | Ended::Abandoned(reason) => {
                self.stop_run(scope);
                Err(CreateStopped::Cancelled(reason))
            }
            Ended::Panicked(message) => {
                self.stop_run(scope);
                Err(fail(&format!("brush panicked: {message}")).into())
            }
            Ended::Limit | Ended::Refused(_) => {
                self.stop_run(scope);
                let exceeded = self.brush.take_exceeded();
                let message = exceeded.as_ref().map_or_else(String::new, |e| e.message());
                Err(fail(&message.trim_end()).into())
            }
        }
    }

    /// The parameters a run's commands start with: brush's, but never in a process group of
    /// brush's making (`set -m`), since every process the session starts leads a session and a
    /// group of its own (brush's spawn policy), where joining or making another group fails.
    fn exec_params(&self) -> ExecutionParameters {
        let mut params = self.shell.default_exec_params();
        params.process_group_policy = ProcessGroupPolicy::SameProcessGroup;
        params
    }

    /// Parks every command of the session for good (see [`Integration::stop`]).
    pub fn stop(&self) {
        self.brush.stop();
    }

    /// Stops the session's commands; the processes of the run `scope` are terminated once the
    /// session is torn down.
    fn stop_run(&self, scope: RunScope) {
        self.brush.stop();
        self.stopped.push(scope);
    }

    /// Whether a command of this session runs alone, with nothing of the user's run or printed
    /// around it — no DEBUG or ERR trap, no `set -e` (which can end the session), no `-x` or `-v`
    /// (which write traces), no `-n` (under which nothing runs) — and the session outlives it
    /// (no `executeShell`, whose EXIT trap ends the run). The paths that do brush's work in its
    /// stead ([`inline`], [`direct`]) need that.
    fn runs_commands_alone(&self) -> bool {
        let options = self.shell.options();
        !(self.one_shot
            || options.do_not_execute_commands
            || options.exit_on_nonzero_command_exit
            || options.print_commands_and_arguments
            || options.print_shell_input_lines
            || self.brush.has_user_debug_trap()
            || self.shell.traps().handles(TrapSignal::Err))
    }

    /// What a run that ended so means: its result, and whether the session outlives it — in which
    /// case the run's command scope is left. Both paths, queued and in place, end here; a stopped
    /// run's processes and EXIT trap are the caller's to see to first.
    fn conclude(&mut self, ended: Ended) -> Result<RunOutcome, ShellError> {
        let outcome = match ended {
            Ended::Finished(Ok(result)) => RunOutcome {
                result: RunResult::finished(i32::from(u8::from(result.exit_code))),
                keep_session: matches!(result.next_control_flow, ExecutionControlFlow::Normal),
            },
            Ended::Finished(Err(error)) => return Err(error),
            Ended::Panicked(message) => {
                return Err(ShellError::Execution(format!(
                    "the shell failed (brush panicked: {message}); the session has ended"
                )));
            }
            Ended::Refused(code) => RunOutcome {
                result: RunResult::finished(code),
                keep_session: true,
            },
            Ended::Cancelled(reason) => RunOutcome {
                result: RunResult::stopped(reason),
                keep_session: !self.one_shot,
            },
            Ended::Abandoned(reason) => RunOutcome {
                result: RunResult::stopped(reason),
                keep_session: false,
            },
            Ended::Limit => RunOutcome {
                result: RunResult::finished(
                    self.brush
                        .take_exceeded()
                        .map_or(1, |e: LimitExceeded| e.exit_code()),
                ),
                keep_session: false,
            },
        };
        if outcome.keep_session {
            self.leave_command_scope();
        }
        let mut outcome = outcome;
        outcome.result.cwd = self.shell.working_dir().to_path_buf();
        Ok(outcome)
    }
}

/// Whether `name`, as a command's first word, runs an alias or a function of the user's.
fn is_alias_or_function(shell: &Shell, name: &str) -> bool {
    shell.aliases().contains_key(name) || shell.funcs().get(name).is_some()
}

/// The status of a command that failed with `error`, which is reported on stderr as brush reports
/// an error of a program: the status of the error becomes `$?`.
fn reported(
    shell: &mut Shell,
    params: &ExecutionParameters,
    error: brush_core::Error,
) -> ExecutionResult {
    let _ = shell.display_error(&mut params.stderr(shell), &error);
    let result = error.into_result(shell);
    shell.set_last_exit_status(result.exit_code.into());
    result
}

/// The text a panic was raised with.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string())
}

fn too_deep() -> String {
    format!("syntax error: nesting deeper than {PARSER_NESTING_LIMIT} levels")
}

/// `OLDPWD` as bash starts it: the inherited value when it names a directory, otherwise exported
/// without a value.
fn starting_oldpwd(inherited: Option<&str>, cwd: &Path) -> ShellVariable {
    match inherited {
        Some(value) if cwd.join(value).is_dir() => exported(value.to_string()),
        _ => {
            let mut variable = ShellVariable::new(ShellValue::Unset(ShellValueUnsetType::Untyped));
            variable.export();
            variable
        }
    }
}

fn exported(value: String) -> ShellVariable {
    let mut var = ShellVariable::new(ShellValue::String(value));
    var.export();
    var
}
