//! One brush-core session: creation (environment, builtins, snapshot) and running one command in
//! it with its output streamed, its environment scoped and its cancellation honoured.

use std::path::{Path, PathBuf};
use std::time::Duration;

use brush_core::env::EnvironmentScope;
use brush_core::openfiles::{self, OpenFile, OpenFiles};
use brush_core::{
    ExecutionControlFlow, ExecutionParameters, ProfileLoadBehavior, RcLoadBehavior, Shell,
    ShellValue, ShellVariable, SourceInfo,
};
use shellwright_proc::{CancelReason, CancelToken, RunScope};

use crate::env::{POWERSHELL_ENV_GUARD, host_environment, initial_environment, is_valid_name};
use crate::error::ShellError;
use crate::hooks::{self, HooksGuard, RUN_TAG_VARIABLE};
use crate::output::{ChunkHandler, OutputPump};

/// SIGKILL follows SIGTERM this long after a cancellation (DESIGN §3.1: within 200 ms).
const KILL_GRACE: Duration = Duration::from_millis(150);

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
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// Absent when the run was cancelled or timed out.
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub timed_out: bool,
}

impl RunResult {
    fn finished(code: i32) -> Self {
        Self {
            exit_code: Some(code),
            cancelled: false,
            timed_out: false,
        }
    }

    /// The result of a run stopped before it finished.
    pub(crate) fn stopped(reason: CancelReason) -> Self {
        Self {
            exit_code: None,
            cancelled: reason.is_abort(),
            timed_out: reason.is_timeout(),
        }
    }
}

/// What a run means for the session that ran it.
pub(crate) struct RunOutcome {
    pub result: RunResult,
    /// False after `exit`, a top-level `return`/`break`, an error or a cancellation.
    pub keep_session: bool,
}

/// A live brush shell plus the hooks registered for it.
pub(crate) struct Session {
    shell: Shell,
    hooks: HooksGuard,
    output: OutputPump,
}

impl Session {
    pub async fn create(options: &SessionOptions) -> Result<Self, ShellError> {
        let mut builtins = brush_builtins::default_builtins(brush_builtins::BuiltinSet::BashMode);
        builtins.remove("exec");
        builtins.remove("suspend");
        hooks::install_builtins(&mut builtins);

        let mut builder = Shell::builder()
            .do_not_inherit_env(true)
            .profile(ProfileLoadBehavior::Skip)
            .rc(RcLoadBehavior::Skip)
            .no_editing(true)
            .shell_name("bash".to_string())
            .builtins(builtins);
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
        let hooks = HooksGuard::register();
        hooks.install(&mut shell);
        let output = OutputPump::start()
            .map_err(|e| ShellError::Init(format!("cannot start the output thread: {e}")))?;
        let mut session = Self {
            shell,
            hooks,
            output,
        };
        if let Some(path) = &options.snapshot_path {
            session.source_snapshot(path).await?;
        }
        Ok(session)
    }

    async fn source_snapshot(&mut self, path: &Path) -> Result<(), ShellError> {
        let fail =
            |e: &dyn std::fmt::Display| ShellError::Snapshot(format!("{}: {e}", path.display()));
        let null = || openfiles::null().map_err(|e| fail(&e));
        let mut params = self.shell.default_exec_params();
        params.set_fd(OpenFiles::STDIN_FD, null()?);
        params.set_fd(OpenFiles::STDOUT_FD, null()?);
        params.set_fd(OpenFiles::STDERR_FD, null()?);
        self.shell
            .source_script(path, std::iter::empty::<String>(), &params)
            .await
            .map_err(|e| fail(&e))?;
        Ok(())
    }

    /// Runs one command, streaming its output to `on_chunk`; returns once every chunk was passed
    /// to `on_chunk`.
    pub async fn run(
        &mut self,
        request: &RunRequest,
        on_chunk: ChunkHandler,
    ) -> Result<RunOutcome, ShellError> {
        if let Some(reason) = request.cancel.reason() {
            return Ok(RunOutcome {
                result: RunResult::stopped(reason),
                keep_session: true,
            });
        }
        if let Some(cwd) = &request.cwd {
            self.shell
                .set_working_dir(cwd)
                .map_err(|e| ShellError::Cwd(format!("{}: {e}", cwd.display())))?;
        }
        let _timer = request.timeout.map(|t| request.cancel.cancel_after(t));
        let scope = RunScope::begin();
        self.enter_command_scope(&request.env, scope.tag())?;
        let (reader, writer) = self
            .output
            .begin(on_chunk)
            .map_err(|e| ShellError::Execution(format!("cannot create output pipe: {e}")))?;
        let params = self.run_params(writer)?;

        self.hooks.begin_run(request.cancel.clone());
        let source = SourceInfo::from("shellwright");
        let ended = {
            let run = self
                .shell
                .run_string(request.command.as_str(), &source, &params);
            tokio::pin!(run);
            tokio::select! {
                biased;
                result = &mut run => Ok(result),
                reason = request.cancel.cancelled() => Err(reason),
            }
        };
        self.hooks.end_run();
        drop(params);

        let outcome = match ended {
            Ok(Ok(result)) => {
                let keep_session = matches!(result.next_control_flow, ExecutionControlFlow::Normal);
                let code = i32::from(u8::from(result.exit_code));
                Ok(RunOutcome {
                    result: RunResult::finished(code),
                    keep_session,
                })
            }
            Ok(Err(error)) => Err(ShellError::Execution(error.to_string())),
            Err(reason) => {
                hooks::terminate_run(&scope, KILL_GRACE).await;
                Ok(RunOutcome {
                    result: RunResult::stopped(reason),
                    keep_session: false,
                })
            }
        };
        if matches!(
            outcome,
            Ok(RunOutcome {
                keep_session: true,
                ..
            })
        ) {
            let _ = self.shell.env_mut().pop_scope(EnvironmentScope::Command);
        }
        reader.finish().await;
        outcome
    }

    /// Pushes a command scope holding the run's `env` and its tag; popped after the run.
    fn enter_command_scope(
        &mut self,
        env: &[(String, String)],
        tag: &str,
    ) -> Result<(), ShellError> {
        if let Some((name, _)) = env.iter().find(|(name, _)| !is_valid_name(name)) {
            return Err(ShellError::Execution(format!(
                "invalid environment variable name: {name:?}"
            )));
        }
        let env_mut = self.shell.env_mut();
        env_mut.push_scope(EnvironmentScope::Command);
        let entries = env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain([(RUN_TAG_VARIABLE, tag)]);
        for (name, value) in entries {
            env_mut
                .add(name, exported(value.to_string()), EnvironmentScope::Command)
                .map_err(|e| ShellError::Execution(format!("cannot set {name}: {e}")))?;
        }
        Ok(())
    }

    fn run_params(&self, output: std::io::PipeWriter) -> Result<ExecutionParameters, ShellError> {
        let fail =
            |e: &dyn std::fmt::Display| ShellError::Execution(format!("cannot set up stdio: {e}"));
        let mut params = self.shell.default_exec_params();
        params.set_fd(
            OpenFiles::STDIN_FD,
            openfiles::null().map_err(|e| fail(&e))?,
        );
        params.set_fd(
            OpenFiles::STDERR_FD,
            OpenFile::PipeWriter(output.try_clone().map_err(|e| fail(&e))?),
        );
        params.set_fd(OpenFiles::STDOUT_FD, OpenFile::PipeWriter(output));
        Ok(params)
    }
}

fn exported(value: String) -> ShellVariable {
    let mut var = ShellVariable::new(ShellValue::String(value));
    var.export();
    var
}
