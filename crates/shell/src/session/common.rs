//! What every session shares, whatever its platform: how it is created ([`SessionOptions`]), a
//! run's request and result ([`RunRequest`], [`RunResult`], [`RunOutcome`]), the scopes of stopped
//! runs, and the helpers both sessions build variables and messages with.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use brush_core::builtins::Registration;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::variables::ShellValueUnsetType;
use brush_core::{
    ExecutionParameters, ExecutionResult, ProfileLoadBehavior, RcLoadBehavior, Shell, ShellValue,
    ShellVariable,
};
use shellwright_io::lock;
use shellwright_minimize::{Minimized, Minimizer};
use shellwright_proc::{CancelReason, CancelToken, Outcome, RunScope};

use crate::env::POWERSHELL_ENV_GUARD;
use crate::error::ShellError;
use crate::limits;
use crate::nesting::PARSER_NESTING_LIMIT;

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

/// The scopes of a session's stopped runs. Their processes are terminated only after the
/// session's runtime is shut down: a job waiting on one of them would otherwise wake up when it
/// dies and start its next command (a redirection is opened before any hook runs).
#[derive(Clone, Default)]
pub(crate) struct StoppedRuns(Arc<Mutex<Vec<RunScope>>>);

impl StoppedRuns {
    pub(super) fn push(&self, scope: RunScope) {
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

/// an error of a program: the status of the error becomes `$?`.
pub(super) fn reported(
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
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string())
}

pub(super) fn too_deep() -> String {
    format!("syntax error: nesting deeper than {PARSER_NESTING_LIMIT} levels")
}

/// `OLDPWD` as bash starts it: the inherited value when it names a directory, otherwise exported
/// without a value.
pub(super) fn starting_oldpwd(inherited: Option<&str>, cwd: &Path) -> ShellVariable {
    match inherited {
        Some(value) if cwd.join(value).is_dir() => exported(value.to_string()),
        _ => {
            let mut variable = ShellVariable::new(ShellValue::Unset(ShellValueUnsetType::Untyped));
            variable.export();
            variable
        }
    }
}

pub(super) fn exported(value: String) -> ShellVariable {
    let mut var = ShellVariable::new(ShellValue::String(value));
    var.export();
    var
}

/// A brush shell as every session starts one: no profile or rc file, `bash -c`'s mode and name,
/// brush's function-depth check one level past ours, `builtins`, and `environment` exported —
/// with the `$env` guard unless the environment defines `env` itself.
pub(super) async fn build_shell(
    builtins: impl IntoIterator<Item = (String, Registration<DefaultShellExtensions>)>,
    environment: Vec<(String, String)>,
) -> Result<Shell, ShellError> {
    let mut builder = Shell::builder()
        .do_not_inherit_env(true)
        .profile(ProfileLoadBehavior::Skip)
        .rc(RcLoadBehavior::Skip)
        .no_editing(true)
        .command_string_mode(true)
        .shell_name("bash".to_string())
        .max_function_call_depth(limits::FUNCTION_NESTING_LIMIT + 1)
        .builtins(builtins);
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
    builder
        .build()
        .await
        .map_err(|e| ShellError::Init(e.to_string()))
}
