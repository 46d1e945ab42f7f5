//! One brush-core session: creation (environment, builtins, snapshot) and running one command in
//! it with its output streamed, its environment scoped and its cancellation honoured. Parsing is
//! part of the run: it is bounded by the nesting check and, for large commands, done on a
//! blocking thread so that a timeout or an abort is not held up by it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use brush_core::env::EnvironmentScope;
use brush_core::openfiles::{self, OpenFile, OpenFiles};
use brush_core::parser::{ParseError, ast};
use brush_core::{
    ErrorKind, ExecutionControlFlow, ExecutionParameters, ExecutionResult, ProfileLoadBehavior,
    RcLoadBehavior, Shell, ShellValue, ShellVariable, SourceInfo,
};
use brush_parser::{Parser, ParserOptions};
use shellwright_proc::{CancelReason, CancelToken, RunScope};

use crate::env::{POWERSHELL_ENV_GUARD, host_environment, initial_environment, is_valid_name};
use crate::error::ShellError;
use crate::hooks::{self, HooksGuard, RUN_TAG_VARIABLE};
use crate::limits::{self, LimitExceeded};
use crate::nesting::{PARSER_NESTING_LIMIT, nesting_depth};
use crate::output::{ChunkHandler, OutputPump};

/// Commands up to this size are parsed on the session thread; larger ones on a blocking thread
/// the run can stop waiting for.
const INLINE_PARSE_MAX: usize = 64 << 10;

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
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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
    Cancelled(CancelReason),
    /// A command passed a nesting limit (the message is in the stream).
    Limit,
}

/// A live brush shell plus the hooks registered for it.
pub(crate) struct Session {
    shell: Shell,
    hooks: HooksGuard,
    output: OutputPump,
    stopped: StoppedRuns,
}

impl Session {
    pub async fn create(
        options: &SessionOptions,
        cancel: &CancelToken,
        stopped: StoppedRuns,
    ) -> Result<Self, CreateStopped> {
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
            .max_function_call_depth(limits::FUNCTION_NESTING_LIMIT + 1)
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
            stopped,
        };
        if let Some(path) = &options.snapshot_path {
            session.source_snapshot(path, cancel).await?;
        }
        Ok(session)
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
        let mut params = self.shell.default_exec_params();
        params.set_fd(OpenFiles::STDIN_FD, null()?);
        params.set_fd(OpenFiles::STDOUT_FD, null()?);
        params.set_fd(OpenFiles::STDERR_FD, null()?);

        let scope = RunScope::begin();
        self.enter_command_scope(&[], scope.tag())?;
        self.hooks.begin_run(cancel.clone());
        let limit = self.hooks.watch_limits();
        let ended = {
            let source = self
                .shell
                .source_script(path, std::iter::empty::<String>(), &params);
            tokio::pin!(source);
            tokio::select! {
                biased;
                result = &mut source => Ended::Finished(result.map_err(|e| fail(&e))),
                reason = cancel.cancelled() => Ended::Cancelled(reason),
                _ = limit.cancelled() => Ended::Limit,
            }
        };
        self.hooks.end_run();
        match ended {
            Ended::Finished(result) => {
                let _ = self.shell.env_mut().pop_scope(EnvironmentScope::Command);
                result.map(drop).map_err(CreateStopped::from)
            }
            Ended::Cancelled(reason) => {
                self.stop_run(scope);
                Err(CreateStopped::Cancelled(reason))
            }
            Ended::Limit | Ended::Refused(_) => {
                self.stop_run(scope);
                let exceeded = self.hooks.take_exceeded();
                let message = exceeded.as_ref().map_or_else(String::new, |e| e.message());
                Err(fail(&message.trim_end()).into())
            }
        }
    }

    /// Parks every command of the session for good (see [`HooksGuard::stop`]).
    pub fn stop(&self) {
        self.hooks.stop();
    }

    /// Stops the session's commands; the processes of the run `scope` are terminated once the
    /// session is torn down.
    fn stop_run(&self, scope: RunScope) {
        self.hooks.stop();
        self.stopped.push(scope);
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
        let scope = RunScope::begin();
        self.enter_command_scope(&request.env, scope.tag())?;
        let (reader, writer) = self
            .output
            .begin(on_chunk)
            .map_err(|e| ShellError::Execution(format!("cannot create output pipe: {e}")))?;
        let params = self.run_params(writer)?;

        self.hooks.begin_run(request.cancel.clone());
        let limit = self.hooks.watch_limits();
        let ended = self
            .execute(&request.command, &params, &request.cancel, &limit)
            .await;
        self.hooks.end_run();
        drop(params);

        let outcome = match ended {
            Ended::Finished(Ok(result)) => {
                let keep_session = matches!(result.next_control_flow, ExecutionControlFlow::Normal);
                let code = i32::from(u8::from(result.exit_code));
                Ok(RunOutcome {
                    result: RunResult::finished(code),
                    keep_session,
                })
            }
            Ended::Finished(Err(error)) => Err(error),
            Ended::Refused(code) => Ok(RunOutcome {
                result: RunResult::finished(code),
                keep_session: true,
            }),
            Ended::Cancelled(reason) => {
                self.stop_run(scope);
                Ok(RunOutcome {
                    result: RunResult::stopped(reason),
                    keep_session: false,
                })
            }
            Ended::Limit => {
                self.stop_run(scope);
                let code = self
                    .hooks
                    .take_exceeded()
                    .map_or(1, |e: LimitExceeded| e.exit_code());
                Ok(RunOutcome {
                    result: RunResult::finished(code),
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

    /// Checks, parses and runs `command`, until it ends, `cancel` fires or a limit is passed.
    async fn execute(
        &mut self,
        command: &str,
        params: &ExecutionParameters,
        cancel: &CancelToken,
        limit: &CancelToken,
    ) -> Ended {
        if nesting_depth(command, PARSER_NESTING_LIMIT) > PARSER_NESTING_LIMIT {
            let message = format!("bash: {}\n", too_deep());
            let _ = params.stderr(&self.shell).write_all(message.as_bytes());
            return Ended::Refused(2);
        }
        let options = self.shell.parser_options();
        let parsed = if command.len() <= INLINE_PARSE_MAX {
            parse(command.to_owned(), &options)
        } else {
            let text = command.to_owned();
            let parsing = tokio::task::spawn_blocking(move || parse(text, &options));
            tokio::select! {
                biased;
                reason = cancel.cancelled() => return Ended::Cancelled(reason),
                joined = parsing => match joined {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        let error = ShellError::Execution(format!("the parser failed: {e}"));
                        return Ended::Finished(Err(error));
                    }
                },
            }
        };
        let run = run_parsed(&mut self.shell, parsed, params);
        tokio::pin!(run);
        tokio::select! {
            biased;
            result = &mut run => Ended::Finished(Ok(result)),
            reason = cancel.cancelled() => Ended::Cancelled(reason),
            _ = limit.cancelled() => Ended::Limit,
        }
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

fn parse(text: String, options: &ParserOptions) -> Result<ast::Program, ParseError> {
    Parser::new(std::io::BufReader::new(text.as_bytes()), options).parse_program()
}

/// Runs a parsed command the way brush's `run_string` does: a parse error is fatal (the session
/// ends, as after a syntax error in `bash -c`), other errors are reported and become a status.
async fn run_parsed(
    shell: &mut Shell,
    parsed: Result<ast::Program, ParseError>,
    params: &ExecutionParameters,
) -> ExecutionResult {
    let result = match parsed {
        Ok(program) => shell.run_program(program, params).await,
        Err(e) => {
            let source = SourceInfo::from("shellwright");
            Err(brush_core::Error::from(ErrorKind::ParseError(e, source)).into_fatal())
        }
    };
    result.unwrap_or_else(|error| {
        let _ = shell.display_error(&mut params.stderr(shell), &error);
        let result = error.into_result(shell);
        shell.set_last_exit_status(result.exit_code.into());
        result
    })
}

fn too_deep() -> String {
    format!("syntax error: nesting deeper than {PARSER_NESTING_LIMIT} levels")
}

fn exported(value: String) -> ShellVariable {
    let mut var = ShellVariable::new(ShellValue::String(value));
    var.export();
    var
}
