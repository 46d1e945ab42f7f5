//! A Windows session: brush-core as it comes (its own builtins, its own spawning through
//! `CreateProcess`), with the run's stdout and stderr on one pipe, the environment made fit for
//! a shell ([`crate::env::for_windows`]), and a run stopped by dropping the interpreter and
//! terminating what the run started.
//!
//! Every process a run starts is put in the session's Job Object ([`ProcessJob`]) while the run
//! goes and while its output drains: the session looks 2 ms after the start, then at doubling
//! intervals up to 100 ms, and only when the host has a child it did not have before. What those
//! processes start later joins the job by itself. Ending the job ends them all, wherever they are
//! in the tree: when a run is stopped, when the session ends, and when the host process ends,
//! however it ends, since only the host holds the job's handle. A run that ends before the first
//! look and leaves a process running with its output elsewhere (`cmd >file &`) leaves it out of
//! the job; closing the Shell still ends it, by its run tag.
//!
//! What the Unix session adds inside brush (cancellation at every simple command, concurrent
//! pipeline stages, the spawn policy, host isolation, in-place and direct paths, job records)
//! relies on fork, signals and poll(2), so a Windows session goes without it. One consequence is
//! visible: a stopped run cannot be unwound from inside, so the interpreter is dropped mid-run
//! and the session ends with it (`session_reset`); the next run starts a fresh one.

use std::io::Write as _;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::{Duration, Instant};

use brush_core::openfiles::{self, OpenFile, OpenFiles};
use brush_core::{ExecutionControlFlow, ExecutionResult, Shell, ShellVariable, SourceInfo};
use futures_util::FutureExt as _;
use shellwright_proc::{
    CancelReason, CancelToken, ProcessJob, RunRoots, RunScope, host_child_pids,
};

use super::{
    CreateStopped, RunOutcome, RunRequest, RunResult, SessionOptions, StoppedRuns, build_shell,
    panic_message, reported, starting_oldpwd, too_deep,
};
use crate::env::{for_windows, host_environment, initial_environment};
use crate::error::ShellError;
use crate::jobs::JobBook;
use crate::nesting::{PARSER_NESTING_LIMIT, nesting_depth};
use crate::output::{ChunkHandler, OutputPump, OutputTidy, StartHandler};

/// How long a stopped run's processes get between the polite request and the kill. Windows has
/// no polite request for a console program of another process group: both are
/// `TerminateProcess`.
const KILL_GRACE: Duration = Duration::from_millis(100);

/// The first look for a run's new processes, and the longest pause between two: a process is in
/// the job within this long of starting (the pause doubles from the first to the last).
const ADOPT_FIRST: Duration = Duration::from_millis(2);
const ADOPT_EVERY: Duration = Duration::from_millis(100);

/// How the foreground part of a run ended.
enum Ended {
    Finished(ExecutionResult),
    /// Refused before anything ran, with this exit status (the message is in the stream).
    Refused(i32),
    /// Stopped by its token; the interpreter was dropped mid-run.
    Stopped(CancelReason),
    /// brush panicked, with this message: the shell's state is not to be trusted any more.
    Panicked(String),
}

/// A live brush shell and what its runs share.
pub(crate) struct Session {
    pub(super) shell: Shell,
    output: OutputPump,
    /// The null device, opened once: between runs all three of the session's stdio are
    /// duplicates of it, and during a run its stdin.
    null: OpenFile,
    /// `executeShell`: the session ends with its one command (and runs its EXIT trap then).
    pub(super) one_shot: bool,
    stopped: StoppedRuns,
    /// Where the session's processes are kept (absent where Windows refused to make one: then a
    /// stopped run's processes are found by walking its tree alone).
    job: Option<ProcessJob>,
    /// The host's children already looked at: put in the job, or not the session's. Only a new
    /// one makes the session look for its runs' processes (a full process table, some
    /// milliseconds) instead of listing the host's children (a fraction of one).
    seen_children: Vec<u32>,
    /// The session's own values of the names the current run's `env` set (None: unset), put
    /// back when the run ends.
    pub(super) covered: Vec<(String, Option<ShellVariable>)>,
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
        _jobs: JobBook,
    ) -> Result<Self, CreateStopped> {
        let environment = for_windows(
            initial_environment(host_environment(), &options.session_env),
            &|path: &Path| path.is_dir(),
        );
        let builtins = brush_builtins::default_builtins(brush_builtins::BuiltinSet::BashMode);
        let mut shell = build_shell(builtins, environment).await?;
        let cwd = shell.working_dir().to_path_buf();
        let _ = shell
            .env_mut()
            .set_global("OLDPWD", starting_oldpwd(None, &cwd));
        let output = OutputPump::start()
            .map_err(|e| ShellError::Init(format!("cannot start the output thread: {e}")))?;
        let null = openfiles::null().map_err(|e| ShellError::Init(format!("NUL: {e}")))?;
        let mut session = Self {
            shell,
            output,
            null,
            one_shot: false,
            stopped,
            job: ProcessJob::new().ok(),
            seen_children: host_child_pids(),
            covered: Vec::new(),
        };
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

    /// Nothing of a Windows session runs on between its runs: brush's own jobs end with the
    /// session's runtime.
    pub fn stop(&self) {}

    /// Sources the snapshot as a run of its own, with stdio on the null device.
    async fn source_snapshot(
        &mut self,
        path: &Path,
        cancel: &CancelToken,
    ) -> Result<(), CreateStopped> {
        let fail =
            |e: &dyn std::fmt::Display| ShellError::Snapshot(format!("{}: {e}", path.display()));
        if let Ok(text) = std::fs::read_to_string(path)
            && nesting_depth(&text, PARSER_NESTING_LIMIT) > PARSER_NESTING_LIMIT
        {
            return Err(fail(&too_deep()).into());
        }
        let scope = RunScope::begin();
        self.enter_command_scope(&[], scope.tag())?;
        let params = self.shell.default_exec_params();
        let source = self
            .shell
            .source_script(path, std::iter::empty::<String>(), &params);
        let source = AssertUnwindSafe(source).catch_unwind();
        let ended = tokio::select! {
            biased;
            reason = cancel.cancelled() => Err(reason),
            result = source => Ok(result),
        };
        match ended {
            Ok(Ok(Ok(_))) => {
                self.leave_command_scope();
                Ok(())
            }
            Ok(Ok(Err(e))) => Err(fail(&e).into()),
            Ok(Err(payload)) => Err(fail(&format!(
                "brush panicked: {}",
                panic_message(payload.as_ref())
            ))
            .into()),
            Err(reason) => {
                self.stopped.push(scope);
                Err(CreateStopped::Cancelled(reason))
            }
        }
    }

    /// Runs one command, telling `on_start` where it starts and streaming its output to
    /// `on_chunk`, its processes found by `scope`; returns once every chunk was passed on.
    pub async fn run(
        &mut self,
        request: &RunRequest,
        scope: RunScope,
        on_start: Option<StartHandler>,
        on_chunk: ChunkHandler,
    ) -> Result<RunOutcome, ShellError> {
        let started = Instant::now();
        if let Some(reason) = request.cancel.reason() {
            let mut result = RunResult::stopped(reason);
            result.cwd = self.shell.working_dir().to_path_buf();
            return Ok(RunOutcome {
                result,
                keep_session: true,
            });
        }
        self.enter_cwd(request, on_start)?;
        self.enter_command_scope(&request.env, scope.tag())?;
        let (reader, writer) = self
            .output
            .begin(on_chunk)
            .map_err(|e| ShellError::Execution(format!("cannot create output pipe: {e}")))?;
        self.attach_stdio(OpenFile::PipeWriter(writer))?;
        let ended = self
            .execute(&request.command, &request.cancel, &scope)
            .await;
        if matches!(ended, Ended::Stopped(_) | Ended::Panicked(_)) {
            if let Some(job) = &self.job {
                job.terminate();
            }
            terminate_run(&scope).await;
        }
        let outcome = self.conclude(ended);
        self.detach_stdio();
        // What the run left running (`cmd &`) holds the pipe open while the output drains: it is
        // put in the job meanwhile, and stays with the session.
        tokio::select! {
            biased;
            () = reader.finish() => {}
            never = adopt_while_running(self.job.as_ref(), &scope, &mut self.seen_children) => match never {},
        }
        outcome.map(|outcome| outcome.took(started.elapsed()))
    }

    /// Checks and runs `command` until it ends or `cancel` fires, putting what it starts in the
    /// session's job meanwhile.
    async fn execute(&mut self, command: &str, cancel: &CancelToken, scope: &RunScope) -> Ended {
        let params = self.shell.default_exec_params();
        if nesting_depth(command, PARSER_NESTING_LIMIT) > PARSER_NESTING_LIMIT {
            let message = format!("bash: {}\n", too_deep());
            let _ = params.stderr(&self.shell).write_all(message.as_bytes());
            return Ended::Refused(2);
        }
        // Like `bash -c`: `$-` has `c`, and `$LINENO` counts the command string's lines.
        self.shell.start_command_string_mode();
        let source = SourceInfo::from("-c");
        let ended = {
            let run = self.shell.run_string(command, &source, &params);
            let run = AssertUnwindSafe(run).catch_unwind();
            let adopting = adopt_while_running(self.job.as_ref(), scope, &mut self.seen_children);
            tokio::select! {
                biased;
                reason = cancel.cancelled() => Err(reason),
                never = adopting => match never {},
                result = run => Ok(result),
            }
        };
        let ended = match ended {
            Err(reason) => Ended::Stopped(reason),
            Ok(Ok(Ok(result))) => Ended::Finished(result),
            // run_string reports brush's errors itself; what it still returns becomes a status.
            Ok(Ok(Err(error))) => Ended::Finished(reported(&mut self.shell, &params, error)),
            Ok(Err(payload)) => Ended::Panicked(panic_message(payload.as_ref())),
        };
        let _ = self.shell.end_command_string_mode();
        if let Ended::Finished(result) = &ended
            && (self.one_shot || !matches!(result.next_control_flow, ExecutionControlFlow::Normal))
        {
            // The session ends with this command: its EXIT trap runs now, into this transcript.
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {}
                _ = self.shell.on_exit() => {}
            }
        }
        ended
    }

    /// What a run that ended so means for the session, and where the session is now.
    fn conclude(&mut self, ended: Ended) -> Result<RunOutcome, ShellError> {
        let outcome = match ended {
            Ended::Finished(result) => RunOutcome {
                result: RunResult::finished(i32::from(u8::from(result.exit_code))),
                keep_session: !self.one_shot
                    && matches!(result.next_control_flow, ExecutionControlFlow::Normal),
            },
            Ended::Refused(code) => RunOutcome {
                result: RunResult::finished(code),
                keep_session: true,
            },
            // The interpreter was dropped mid-command: its call stack and scopes are not to be
            // trusted, so the session ends.
            Ended::Stopped(reason) => RunOutcome {
                result: RunResult::stopped(reason),
                keep_session: false,
            },
            Ended::Panicked(message) => {
                return Err(ShellError::Execution(format!(
                    "the shell failed (brush panicked: {message}); the session has ended"
                )));
            }
        };
        if outcome.keep_session {
            self.leave_command_scope();
        }
        let mut outcome = outcome;
        outcome.result.cwd = self.shell.working_dir().to_path_buf();
        Ok(outcome)
    }

    /// Makes the run's transcript the session's stdout and stderr, and the null device its stdin.
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

    /// Between runs the session's stdio is the null device, so the transcript's pipe can reach
    /// end of file.
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

/// Terminates what is left of a stopped run: the processes the host started during it, with
/// their trees.
pub(crate) async fn terminate_run(run: &RunScope) {
    run.stop(RunRoots::HostChildren, &[], KILL_GRACE).await;
}

/// Puts the run's new processes in `job` every little while, for as long as it is polled.
async fn adopt_while_running(
    job: Option<&ProcessJob>,
    scope: &RunScope,
    seen_children: &mut Vec<u32>,
) -> std::convert::Infallible {
    let mut pause = ADOPT_FIRST;
    loop {
        tokio::time::sleep(pause).await;
        if let Some(job) = job {
            adopt_new(job, scope, seen_children);
        }
        pause = (pause * 2).min(ADOPT_EVERY);
    }
}

/// Puts the run's processes in `job` when the host has a child not in `seen_children`, and
/// notes the host's children there. What those processes start later joins the job by itself.
fn adopt_new(job: &ProcessJob, scope: &RunScope, seen_children: &mut Vec<u32>) {
    let children = host_child_pids();
    if children.iter().all(|pid| seen_children.contains(pid)) {
        return;
    }
    for process in scope.find(RunRoots::HostChildren).processes {
        job.adopt(process.pid);
    }
    *seen_children = children;
}
