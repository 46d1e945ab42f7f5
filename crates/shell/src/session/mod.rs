//! One brush-core session: creation (environment, builtins, snapshot) and running one command in
//! it with its output streamed, its environment scoped and its cancellation honoured. Parsing is
//! part of the run: it is bounded by the nesting check and, for large commands, done on a
//! blocking thread so that a timeout or an abort is not held up by it.

use std::any::Any;
use std::future::Future;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use brush_core::env::EnvironmentScope;
use brush_core::openfiles::{self, OpenFile, OpenFiles};
use brush_core::parser::{ParseError, ast};
use brush_core::traps::TrapSignal;
use brush_core::variables::ShellValueUnsetType;
use brush_core::{
    ErrorKind, ExecutionControlFlow, ExecutionParameters, ExecutionResult, ProfileLoadBehavior,
    RcLoadBehavior, Shell, ShellValue, ShellVariable, SourceInfo,
};
use futures_util::FutureExt as _;
use shellwright_io::Utf8Decoder;
use shellwright_proc::{CancelReason, CancelToken, RunScope, processless_run_tag};

use crate::builtins::{self, StateGuard};
use crate::direct::{self, DirectCommand};
use crate::env::{POWERSHELL_ENV_GUARD, host_environment, initial_environment, is_valid_name};
use crate::error::ShellError;
use crate::hooks::{self, HooksGuard, RUN_TAG_VARIABLE};
use crate::inline::{self, InlineProgram, Transcript};
use crate::isolation;
use crate::limits::{self, LimitExceeded};
use crate::nesting::{PARSER_NESTING_LIMIT, nesting_depth};
use crate::output::{ChunkHandler, OutputPump, StartHandler};
use crate::parse_cache::{MAX_CACHED_LEN, ParseCache, parse};
use crate::{flags, stages};

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
    /// brush panicked, with this message: the shell's state is not to be trusted any more.
    Panicked(String),
}

/// A live brush shell plus the hooks registered for it.
pub(crate) struct Session {
    shell: Shell,
    hooks: HooksGuard,
    state: StateGuard,
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
    ) -> Result<Self, CreateStopped> {
        let mut builtins = brush_builtins::default_builtins(brush_builtins::BuiltinSet::BashMode);
        // Ours first: the hooks then wrap `shopt` as ours left it (see `install_builtins`).
        builtins::install(&mut builtins);
        hooks::install_builtins(&mut builtins);
        stages::install_builtin(&mut builtins);
        flags::install_builtin(&mut builtins);

        let mut builder = Shell::builder()
            .do_not_inherit_env(true)
            .profile(ProfileLoadBehavior::Skip)
            .rc(RcLoadBehavior::Skip)
            .no_editing(true)
            .command_string_mode(true)
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
        // brush starts OLDPWD at its own cwd; `bash -c` starts without a value (we skip the host's).
        let _ = shell
            .env_mut()
            .set_global("OLDPWD", starting_oldpwd(None, Path::new("/")));
        let hooks = HooksGuard::register();
        hooks.install(&mut shell);
        let state = StateGuard::register(hooks.id(), isolation::host_umask());
        let output = OutputPump::start()
            .map_err(|e| ShellError::Init(format!("cannot start the output thread: {e}")))?;
        let null = openfiles::null().map_err(|e| ShellError::Init(format!("/dev/null: {e}")))?;
        let mut session = Self {
            shell,
            hooks,
            state,
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
        self.hooks.end_run();
        match ended {
            Ended::Finished(result) => {
                self.leave_command_scope();
                result.map(drop).map_err(CreateStopped::from)
            }
            Ended::Cancelled(reason) => {
                self.stop_run(scope);
                Err(CreateStopped::Cancelled(reason))
            }
            Ended::Panicked(message) => {
                self.stop_run(scope);
                Err(fail(&format!("brush panicked: {message}")).into())
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

    /// Runs one command, telling `on_start` where it starts and streaming its output to
    /// `on_chunk`; returns once every chunk was passed to `on_chunk`. A command that is one plain
    /// external program is spawned by the session itself ([`direct`]), all else by brush.
    pub async fn run(
        &mut self,
        request: &RunRequest,
        on_start: Option<StartHandler>,
        on_chunk: ChunkHandler,
    ) -> Result<RunOutcome, ShellError> {
        if let Some(reason) = request.cancel.reason() {
            return Ok(RunOutcome {
                result: RunResult::stopped(reason),
                keep_session: true,
            });
        }
        self.enter_cwd(request, on_start)?;
        let scope = RunScope::begin();
        self.enter_command_scope(&request.env, scope.tag())?;
        let (reader, writer) = self
            .output
            .begin(on_chunk)
            .map_err(|e| ShellError::Execution(format!("cannot create output pipe: {e}")))?;
        self.attach_stdio(OpenFile::PipeWriter(writer))?;
        let params = self.shell.default_exec_params();
        let direct = self.direct_command(&request.command, &params);

        self.hooks.begin_run(request.cancel.clone());
        let limit = self.hooks.watch_limits();
        let umask = self.state.umask();
        let ended = isolation::run_isolated(umask, async {
            match direct {
                Some(direct) => {
                    self.execute_direct(direct, &request.command, &params, &request.cancel, &limit)
                        .await
                }
                None => {
                    self.execute(&request.command, &params, &request.cancel, &limit)
                        .await
                }
            }
        })
        .await
        .map_err(|e| ShellError::Execution(format!("cannot start the run thread: {e}")))?;
        self.hooks.end_run();

        match ended {
            Ended::Cancelled(_) => {
                self.exit_trap_after_cancel().await;
                self.stop_run(scope);
            }
            Ended::Limit | Ended::Panicked(_) => self.stop_run(scope),
            Ended::Finished(_) | Ended::Refused(_) => {}
        }
        let outcome = self.conclude(ended);
        self.detach_stdio();
        reader.finish().await;
        outcome
    }

    /// The program of the request's command when this session may run it in place ([`inline`]):
    /// it qualifies by its text and shape, it has no `cwd` (entering one is a filesystem call,
    /// which can hang on a stalled mount), the session runs commands alone
    /// ([`runs_commands_alone`](Self::runs_commands_alone)), `set -u` (which can end the session)
    /// is off, no alias or function shadows its builtins, and no word of it can glob unless
    /// noglob (`set -f`) is on — pathname expansion reads directories, which can hang on a
    /// stalled mount as a `cwd` can, and no builtin of the allow-list turns noglob off. The
    /// calling thread must have [`limits::INLINE_STACK_NEEDED`] of stack left.
    pub fn inline_program(&mut self, request: &RunRequest) -> Option<InlineProgram> {
        if !inline::qualifies_by_text(&request.command)
            || !self.runs_commands_alone()
            || request.cwd.is_some()
            || self.shell.options().treat_unset_variables_as_error
            || limits::remaining_stack().is_none_or(|left| left < limits::INLINE_STACK_NEEDED)
        {
            return None;
        }
        let parser_options = self.shell.parser_options();
        let parsed = self.parses.get(&request.command, &parser_options).ok()?;
        let names = parsed.inline_builtins.as_ref()?;
        let shell = &self.shell;
        if parsed.may_glob && !shell.options().disable_filename_globbing {
            return None;
        }
        let shadowed = |name: &String| {
            is_alias_or_function(shell, name)
                || shell.builtins().get(name).is_none_or(|b| b.disabled)
        };
        (!names.iter().any(shadowed)).then(|| InlineProgram {
            program: parsed.program.clone(),
            expands_no_pathnames: parsed.expands_no_pathnames,
        })
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
            || self.hooks.has_user_debug_trap()
            || self.shell.traps().handles(TrapSignal::Err))
    }

    /// Runs `program` (from [`inline_program`](Self::inline_program)) on the calling thread,
    /// driving it with the session's `runtime` (brush may spawn on it), by the steps of
    /// [`run`](Self::run) — `on_start`, the run's environment and tag, `bash -c` mode — but
    /// without our DEBUG hook, and with its transcript (stdout and stderr) collected in memory
    /// and passed to `on_chunk` in one piece when it ends. Nothing it runs can wait, so it takes microseconds;
    /// nothing can cancel it either (its caller's thread is busy running it). Should a run end
    /// the session all the same, the outcome says so and the caller drops the session.
    pub fn run_inline(
        &mut self,
        runtime: &tokio::runtime::Handle,
        inline: InlineProgram,
        request: &RunRequest,
        on_start: Option<StartHandler>,
        mut on_chunk: ChunkHandler,
    ) -> Result<RunOutcome, ShellError> {
        self.enter_cwd(request, on_start)?;
        // It starts no process, so it needs no scope to find them by: only its tag.
        self.enter_command_scope(&request.env, &processless_run_tag())?;
        let transcript = Transcript::default();
        let idle_stdio = self.lend_stdio(&transcript);
        let params = self.shell.default_exec_params();
        self.hooks.begin_run(request.cancel.clone());
        // Our DEBUG trap parks a cancelled run, yields to timers and checks the nesting limits:
        // nothing a run in place can need (no user trap is set, or it would not be in place). It
        // costs brush a parse and an expansion of its command before every simple command, a
        // quarter of such a run: it is lifted for the run. brush sets `BASH_COMMAND` without it.
        let debug_trap = self.shell.traps().get_handler(TrapSignal::Debug).cloned();
        self.shell.traps_mut().remove_handlers(TrapSignal::Debug);
        // brush asks its pattern parser whether each word is a glob, a tenth of such a run; where
        // no word can be one, noglob (`set -f`) skips the question, unseen.
        let globbing = &mut self.shell.options_mut().disable_filename_globbing;
        let noglob = *globbing;
        *globbing |= inline.expands_no_pathnames;
        let program = Ok(inline.program);
        // Nothing can stop it (see above), and without our DEBUG trap no nesting limit is checked:
        // no stop is watched, which spared registering and dropping two waiters per run.
        let ended = drive(runtime, self.execute_parsed(program, &params, None));
        self.shell.options_mut().disable_filename_globbing = noglob;
        if let Some(trap) = debug_trap {
            self.shell.traps_mut().register_handler(
                TrapSignal::Debug,
                trap.command,
                trap.source_info,
            );
        }
        self.hooks.end_run();
        let outcome = self.conclude(ended);
        self.restore_stdio(idle_stdio);
        let mut decoder = Utf8Decoder::new();
        let mut text = decoder.decode(&transcript.take_written());
        text.push_str(&decoder.finish());
        if !text.is_empty() {
            on_chunk(text.into());
        }
        outcome
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
                keep_session: false,
            },
            Ended::Limit => RunOutcome {
                result: RunResult::finished(
                    self.hooks
                        .take_exceeded()
                        .map_or(1, |e: LimitExceeded| e.exit_code()),
                ),
                keep_session: false,
            },
        };
        if outcome.keep_session {
            self.leave_command_scope();
        }
        Ok(outcome)
    }

    /// Makes the request's `cwd` current and tells `on_start` where the run starts.
    fn enter_cwd(
        &mut self,
        request: &RunRequest,
        on_start: Option<StartHandler>,
    ) -> Result<(), ShellError> {
        if let Some(cwd) = &request.cwd {
            self.shell
                .set_working_dir(cwd)
                .map_err(|e| ShellError::Cwd(format!("{}: {e}", cwd.display())))?;
            if self.one_shot {
                // `executeShell` starts *in* cwd, as `bash -c` does: no previous directory.
                let _ = self
                    .shell
                    .env_mut()
                    .set_global("OLDPWD", starting_oldpwd(None, cwd));
            }
        }
        if let Some(on_start) = on_start {
            on_start(self.shell.working_dir());
        }
        Ok(())
    }

    /// The session is being torn down after a cancellation: its EXIT trap gets a short while.
    async fn exit_trap_after_cancel(&mut self) {
        if !self
            .shell
            .traps()
            .handles(brush_core::traps::TrapSignal::Exit)
            || self.state.take_ending().is_some()
        {
            return;
        }
        let token = CancelToken::new();
        let _deadline = token.cancel_after(EXIT_TRAP_AFTER_CANCEL);
        self.hooks.begin_run(token.clone());
        let shell = &mut self.shell;
        let _ = isolation::run_isolated(self.state.umask(), async {
            tokio::select! {
                biased;
                _ = shell.on_exit() => {}
                _ = token.cancelled() => {}
            }
        })
        .await;
        self.hooks.end_run();
    }

    /// The command of a run when the session spawns it itself ([`direct`]): one program with
    /// plain words, resolved as brush resolves it, in a session whose state gives brush nothing
    /// else to do around it.
    fn direct_command(
        &mut self,
        command: &str,
        params: &ExecutionParameters,
    ) -> Option<DirectCommand> {
        let words = direct::plain_words(command)?;
        let options = self.shell.options();
        if !self.runs_commands_alone()
            || options.enable_job_control
            || options.interactive
            || self.shell.funcs().iter().any(|(_, f)| f.is_exported())
        {
            return None;
        }
        let name = words[0];
        if is_alias_or_function(&self.shell, name) || self.shell.builtins().get(name).is_some() {
            return None;
        }
        let program = if name.contains('/') {
            PathBuf::from(name)
        } else {
            self.shell.find_first_executable_in_path_using_cache(name)?
        };
        // Last: it duplicates the run's descriptors, for nothing if another check declines.
        let stdio = direct::stdio(params.iter_fds(&self.shell))?;
        Some(DirectCommand {
            program,
            words: words.into_iter().map(String::from).collect(),
            stdio,
        })
    }

    /// Spawns a [`direct_command`](Self::direct_command) and waits for it as brush would have run
    /// it, leaving `$?`, `PIPESTATUS`, `$_` and `BASH_COMMAND` as brush leaves them. Should the
    /// spawn fail, nothing has run: brush runs `command` instead, and reports the failure its way.
    async fn execute_direct(
        &mut self,
        direct: DirectCommand,
        command: &str,
        params: &ExecutionParameters,
        cancel: &CancelToken,
        limit: &CancelToken,
    ) -> Ended {
        let last_word = direct.last_word().to_string();
        hooks::set_bash_command(&mut self.shell, direct.command_line());
        let exported = self.shell.env().iter_exported().filter_map(|(name, var)| {
            let value = var.value();
            value
                .is_set()
                .then(|| (name, value.to_cow_str(&self.shell).into_owned()))
        });
        let process = direct.into_process(self.shell.working_dir(), exported);
        let Ok(child) = tokio::process::Command::from(process).spawn() else {
            return self.execute(command, params, cancel, limit).await;
        };
        direct::count_spawn();
        self.set_last_argument(&last_word);
        self.wait_direct(child, params, cancel).await
    }

    /// Waits for a program [`execute_direct`](Self::execute_direct) spawned, until it ends or
    /// `cancel` fires, and sets `$?` and `PIPESTATUS` from its status.
    async fn wait_direct(
        &mut self,
        mut child: tokio::process::Child,
        params: &ExecutionParameters,
        cancel: &CancelToken,
    ) -> Ended {
        let status = tokio::select! {
            biased;
            reason = cancel.cancelled() => return Ended::Cancelled(reason),
            status = child.wait() => status,
        };
        // The program may have ended *because* the run was stopped (see `execute_parsed`).
        if let Some(reason) = cancel.reason() {
            return Ended::Cancelled(reason);
        }
        let result = match status {
            Ok(status) => {
                // brush's own reading of a status: the code, 128 + a signal, else 127.
                let result = ExecutionResult::from(std::process::Output {
                    status,
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                });
                let code = u8::from(result.exit_code);
                self.shell.set_last_exit_status(code);
                *self.shell.last_pipeline_statuses_mut() = vec![code];
                result
            }
            // As brush reports a wait that failed (another waiter reaped the program, say).
            Err(e) => reported(&mut self.shell, params, e.into()),
        };
        Ended::Finished(Ok(result))
    }

    /// Sets `$_` as brush does after a command: a fresh unexported variable, unless `_` is
    /// read-only.
    fn set_last_argument(&mut self, last: &str) {
        let env = self.shell.env_mut();
        if env.get("_").is_some_and(|(_, var)| var.is_readonly()) {
            return;
        }
        let _ = env.set_global("_", ShellVariable::new(ShellValue::String(last.into())));
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
        let parsed = if command.len() <= MAX_CACHED_LEN {
            self.parses
                .get(command, &options)
                .map(|parsed| parsed.program.clone())
        } else if command.len() <= INLINE_PARSE_MAX {
            parse(command, &options)
        } else {
            let text = command.to_owned();
            let parsing = tokio::task::spawn_blocking(move || parse(&text, &options));
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
        self.execute_parsed(parsed, params, Some(Stops { cancel, limit }))
            .await
    }

    /// Runs a parsed command (see [`execute`](Self::execute)).
    async fn execute_parsed(
        &mut self,
        parsed: Result<ast::Program, ParseError>,
        params: &ExecutionParameters,
        stops: Option<Stops<'_>>,
    ) -> Ended {
        let parsed = parsed.map(|mut program| {
            stages::run_concurrently(&mut program, self.hooks.id());
            program
        });
        // Like `bash -c`: `$-` has `c`, and `$LINENO` counts the command string's lines.
        self.shell.start_command_string_mode();
        let ended = {
            // A panic in brush (a bug of its own, such as an unchecked number) would otherwise
            // unwind through the session's thread, skipping the teardown that stops the run's
            // processes. The session is not used again after one (see `conclude`).
            let run = AssertUnwindSafe(run_parsed(&mut self.shell, parsed, params)).catch_unwind();
            let ended = |result: Result<ExecutionResult, Box<dyn Any + Send>>| match result {
                Ok(result) => Ended::Finished(Ok(result)),
                Err(payload) => Ended::Panicked(panic_message(payload.as_ref())),
            };
            match stops {
                None => ended(run.await),
                Some(stops) => {
                    tokio::pin!(run);
                    tokio::select! {
                        biased;
                        reason = stops.cancel.cancelled() => Ended::Cancelled(reason),
                        _ = stops.limit.cancelled() => Ended::Limit,
                        result = &mut run => ended(result),
                    }
                }
            }
        };
        // A command can finish *because* the run was stopped (its process killed, a stage it
        // read from ended): then the run was stopped, whatever the command made of it.
        let stopped = stops.map(|stops| (stops.cancel.reason(), stops.limit.is_cancelled()));
        let ended = match (ended, stopped) {
            (Ended::Finished(_), Some((Some(reason), _))) => Ended::Cancelled(reason),
            (Ended::Finished(_), Some((None, true))) => Ended::Limit,
            (ended, _) => ended,
        };
        let _ = self.shell.end_command_string_mode();
        if let Ended::Finished(Ok(result)) = &ended
            && (self.one_shot || !matches!(result.next_control_flow, ExecutionControlFlow::Normal))
            && self.state.take_ending().is_none()
        {
            // The session ends with this command: its EXIT trap runs now, into this transcript.
            match stops {
                None => {
                    let _ = self.shell.on_exit().await;
                }
                Some(stops) => tokio::select! {
                    biased;
                    _ = self.shell.on_exit() => {}
                    _ = stops.cancel.cancelled() => {}
                    _ = stops.limit.cancelled() => {}
                },
            }
        }
        ended
    }

    /// Pushes a command scope holding the run's tag, and sets the run's `env` over the session's
    /// own values until [`leave_command_scope`](Self::leave_command_scope).
    ///
    /// The `env` is set in the global scope, not in the command scope: a run that unsets one of
    /// its names must see it unset, as `env X=1 bash -c 'unset X; …'` does, not uncover the
    /// session's value beneath.
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
        let failed = |name: &str, e: brush_core::Error| {
            ShellError::Execution(format!("cannot set {name}: {e}"))
        };
        let env_mut = self.shell.env_mut();
        env_mut.push_scope(EnvironmentScope::Command);
        env_mut
            .add(
                RUN_TAG_VARIABLE,
                exported(tag.to_string()),
                EnvironmentScope::Command,
            )
            .map_err(|e| failed(RUN_TAG_VARIABLE, e))?;
        self.covered.clear();
        for (name, value) in env {
            if !self.covered.iter().any(|(covered, _)| covered == name) {
                let own = self.shell.env().get(name).map(|(_, var)| var.clone());
                self.covered.push((name.clone(), own));
            }
            let variable = if name == "OLDPWD" {
                starting_oldpwd(Some(value), self.shell.working_dir())
            } else {
                exported(value.clone())
            };
            self.shell
                .env_mut()
                .add(name.as_str(), variable, EnvironmentScope::Global)
                .map_err(|e| failed(name, e))?;
        }
        Ok(())
    }

    /// Pops the run's command scope and puts back the session's own values of its `env`.
    fn leave_command_scope(&mut self) {
        let env_mut = self.shell.env_mut();
        let _ = env_mut.pop_scope(EnvironmentScope::Command);
        for (name, own) in std::mem::take(&mut self.covered) {
            let _ = match own {
                Some(var) => env_mut.add(name, var, EnvironmentScope::Global),
                None => env_mut.unset(&name).map(drop),
            };
        }
    }

    /// Makes the run's transcript the session's own stdout and stderr, and /dev/null its stdin.
    ///
    /// They are the shell's fds rather than the run's parameters, so that `exec >file` can
    /// replace them and everything that writes to the shell's defaults (traps, completion
    /// functions) writes to the transcript — never to the host's stdout or stderr. Other fds a
    /// script opened with `exec` stay open across runs, as in one long bash session.
    fn attach_stdio(&mut self, output: OpenFile) -> Result<(), ShellError> {
        let fail =
            |e: &dyn std::fmt::Display| ShellError::Execution(format!("cannot set up stdio: {e}"));
        let stdin = self.null.try_clone().map_err(|e| fail(&e))?;
        let stderr = output.try_clone().map_err(|e| fail(&e))?;
        let files = self.shell.open_files_mut();
        files.set_fd(OpenFiles::STDIN_FD, stdin);
        files.set_fd(OpenFiles::STDOUT_FD, output);
        files.set_fd(OpenFiles::STDERR_FD, stderr);
        Ok(())
    }

    /// Makes `transcript` the session's stdout and stderr for a run in place; returns what they
    /// were. Between runs all three are /dev/null already ([`detach_stdio`](Self::detach_stdio)),
    /// so stdin stays as it is and nothing needs duplicating.
    fn lend_stdio(&mut self, transcript: &Transcript) -> [Option<OpenFile>; 2] {
        let files = self.shell.open_files_mut();
        [OpenFiles::STDOUT_FD, OpenFiles::STDERR_FD]
            .map(|fd| files.set_fd(fd, OpenFile::Stream(Box::new(transcript.clone()))))
    }

    /// Puts back the stdout and stderr [`lend_stdio`](Self::lend_stdio) replaced.
    fn restore_stdio(&mut self, idle: [Option<OpenFile>; 2]) {
        let files = self.shell.open_files_mut();
        for (fd, file) in [OpenFiles::STDOUT_FD, OpenFiles::STDERR_FD]
            .into_iter()
            .zip(idle)
        {
            let _ = match file {
                Some(file) => files.set_fd(fd, file),
                None => files.remove_fd(fd),
            };
        }
    }

    /// Between runs the session's stdio is /dev/null, so the transcript's pipe can reach EOF.
    fn detach_stdio(&mut self) {
        for fd in [
            OpenFiles::STDIN_FD,
            OpenFiles::STDOUT_FD,
            OpenFiles::STDERR_FD,
        ] {
            let _ = match self.null.try_clone() {
                Ok(null) => self.shell.open_files_mut().set_fd(fd, null),
                Err(_) => self.shell.open_files_mut().remove_fd(fd),
            };
        }
    }
}

/// Whether `name`, as a command's first word, runs an alias or a function of the user's.
fn is_alias_or_function(shell: &Shell, name: &str) -> bool {
    shell.aliases().contains_key(name) || shell.funcs().get(name).is_some()
}

/// What stops a queued run early: its cancel token, and the token the nesting limits cancel.
#[derive(Clone, Copy)]
struct Stops<'a> {
    cancel: &'a CancelToken,
    limit: &'a CancelToken,
}

/// Drives `future` to its end on the calling thread, in `runtime`'s context: polled once first —
/// a run in place is done in that one poll unless brush waited on something — and by the
/// runtime's `block_on` only if not done, which costs more than the run when it is not needed.
fn drive<F: Future>(runtime: &tokio::runtime::Handle, future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    {
        let _context = runtime.enter();
        let mut once = Context::from_waker(Waker::noop());
        if let Poll::Ready(output) = future.as_mut().poll(&mut once) {
            return output;
        }
    }
    // Polled again at once, with a waker that works: nothing is missed.
    runtime.block_on(future)
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
            let source = SourceInfo::from("-c");
            Err(brush_core::Error::from(ErrorKind::ParseError(e, source)).into_fatal())
        }
    };
    result.unwrap_or_else(|error| reported(shell, params, error))
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
