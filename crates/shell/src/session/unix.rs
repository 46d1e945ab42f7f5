//! A Unix session: brush with our integration installed (cancellation at every simple command,
//! concurrent pipeline stages, the spawn policy, host isolation), its output read by the session's
//! output thread, and the three paths a run takes ([`queued`](super::queued), [`inline`](super::inline),
//! [`direct`](super::direct)).

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::Duration;

use brush_core::openfiles::{self, OpenFile, OpenFiles};
use brush_core::traps::TrapSignal;
use brush_core::{
    ExecutionControlFlow, ExecutionParameters, ExecutionResult, ProcessGroupPolicy, Shell,
    ShellVariable,
};
use futures_util::FutureExt as _;
use shellwright_proc::{CancelReason, CancelToken, RunScope};

use super::{
    CreateStopped, RunOutcome, RunResult, SessionOptions, StoppedRuns, build_shell, panic_message,
    starting_oldpwd, too_deep,
};
use crate::brush::{self, Integration};
use crate::env::{host_environment, initial_environment};
use crate::error::ShellError;
use crate::jobs::JobBook;
use crate::limits::LimitExceeded;
use crate::nesting::{PARSER_NESTING_LIMIT, nesting_depth};
use crate::output::{OutputPump, OutputTidy};
use crate::parse_cache::ParseCache;

/// What stops a queued run early — its cancel token, and the token the nesting limits cancel —
/// and the scope its processes are found by when it is stopped.
#[derive(Clone, Copy)]
pub(super) struct Stops<'a> {
    pub cancel: &'a CancelToken,
    pub limit: &'a CancelToken,
    pub scope: &'a RunScope,
}

/// How long an EXIT trap may run when the session is torn down after a cancellation.
pub(super) const EXIT_TRAP_AFTER_CANCEL: Duration = Duration::from_millis(500);

/// How the foreground part of a run ended.
pub(super) enum Ended {
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
    pub(super) shell: Shell,
    /// Our hooks, builtins and per-session record in `shell` (see [`brush`]).
    pub(super) brush: Integration,
    pub(super) output: OutputPump,
    /// `/dev/null`, opened once: each run's stdio is a duplicate of it, which is cheaper than
    /// opening the device four times per run.
    pub(super) null: OpenFile,
    /// `executeShell`: the session ends with its one command (and runs its EXIT trap then).
    pub(super) one_shot: bool,
    pub(super) stopped: StoppedRuns,
    /// The session's own values of the names the current run's `env` set (None: unset), put
    /// back when the run ends.
    pub(super) covered: Vec<(String, Option<ShellVariable>)>,
    pub(super) parses: ParseCache,
}

impl Session {
    /// What tidies the session's output between runs: the session's thread calls it once a run
    /// was answered, off the run's path.
    pub fn output_tidier(&self) -> OutputTidy {
        self.output.tidier()
    }

    pub async fn create(
        options: &SessionOptions,
        cancel: &CancelToken,
        stopped: StoppedRuns,
        jobs: JobBook,
    ) -> Result<Self, CreateStopped> {
        let environment = initial_environment(host_environment(), &options.session_env);
        let mut shell = build_shell(brush::builtins(), environment).await?;
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
    pub(super) fn exec_params(&self) -> ExecutionParameters {
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
    pub(super) fn stop_run(&self, scope: RunScope) {
        self.brush.stop();
        self.stopped.push(scope);
    }

    /// Whether a command of this session runs alone, with nothing of the user's run or printed
    /// around it — no DEBUG or ERR trap, no `set -e` (which can end the session), no `-x` or `-v`
    /// (which write traces), no `-n` (under which nothing runs) — and the session outlives it
    /// (no `executeShell`, whose EXIT trap ends the run). The paths that do brush's work in its
    /// stead ([`inline`], [`direct`]) need that.
    pub(super) fn runs_commands_alone(&self) -> bool {
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
    pub(super) fn conclude(&mut self, ended: Ended) -> Result<RunOutcome, ShellError> {
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
pub(super) fn is_alias_or_function(shell: &Shell, name: &str) -> bool {
    shell.aliases().contains_key(name) || shell.funcs().get(name).is_some()
}

/// Stops what is left of a stopped run: everything its tag or its tree leads to.
pub(crate) async fn terminate_run(run: &RunScope) {
    brush::terminate_run(run, brush::KILL_GRACE).await;
}
