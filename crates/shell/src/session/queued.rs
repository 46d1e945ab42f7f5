//! The queued path, which every run takes unless it is done in place ([`inline`](super::inline)):
//! the run is handed to the session's thread, its stdout and stderr are one pipe that the output
//! thread reads, its command is checked against the nesting limits and parsed (on a blocking
//! thread when large), and it can be stopped at every simple command by its token or by a limit.
//! A command that is one plain program is spawned by the session itself ([`direct`](super::direct))
//! instead of through brush, inside this same path.

use std::any::Any;
use std::io::Write;
use std::os::fd::AsFd as _;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use brush_core::parser::{ParseError, ast};
use brush_core::{
    ErrorKind, ExecutionControlFlow, ExecutionParameters, ExecutionResult, Shell, SourceInfo,
};
use futures_util::FutureExt as _;
use shellwright_proc::{CancelToken, RunScope};

use brush_core::openfiles::OpenFile;

use super::{
    EXIT_TRAP_AFTER_CANCEL, Ended, RunOutcome, RunRequest, RunResult, Session, Stops,
    panic_message, reported, too_deep,
};
use crate::brush::{self, Integration, KILL_GRACE};
use crate::error::ShellError;
use crate::nesting::{PARSER_NESTING_LIMIT, nesting_depth};
use crate::output::{ChunkHandler, StartHandler};
use crate::parse_cache::{MAX_CACHED_LEN, parse};

impl Session {
    /// Runs one command, telling `on_start` where it starts and streaming its output to
    /// `on_chunk`, its processes found by `scope`; returns once every chunk was passed to
    /// `on_chunk`. A command that is one plain
    /// external program is spawned by the session itself ([`direct`]), all else by brush.
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
        let (mut reader, writer) = self
            .output
            .begin(on_chunk)
            .map_err(|e| ShellError::Execution(format!("cannot create output pipe: {e}")))?;
        // A one-shot session has no later run to read its jobs' records: its jobs write to the
        // run's pipe, which the drain reads, as `bash -c 'cmd &'` would.
        let output = (!self.one_shot)
            .then(|| shellwright_io::file_identity(writer.as_fd()).ok())
            .flatten();
        self.attach_stdio(OpenFile::PipeWriter(writer))?;
        let params = self.exec_params();
        let direct = self.direct_command(&request.command, &params);

        self.brush
            .begin_run(request.cancel.clone(), scope.tag(), output);
        let jobs_before = brush::job_marks(&mut self.shell);
        let limit = self.brush.watch_limits();
        let umask = self.brush.umask();
        let ended = brush::run_isolated(umask, async {
            let stops = Stops {
                cancel: &request.cancel,
                limit: &limit,
                scope: &scope,
            };
            match direct {
                Some(direct) => {
                    self.execute_direct(direct, &request.command, &params, stops)
                        .await
                }
                None => self.execute(&request.command, &params, stops).await,
            }
        })
        .await
        .map_err(|e| ShellError::Execution(format!("cannot start the run thread: {e}")))?;
        self.brush.end_run();

        match ended {
            Ended::Cancelled(_) => {
                // Whatever of the stopped run is left — its background jobs' processes — goes
                // now; the session lives on.
                brush::terminate_run(&scope, KILL_GRACE).await;
                brush::forget_jobs_since(&mut self.shell, &jobs_before);
                if self.one_shot {
                    self.exit_trap_after_cancel().await;
                }
            }
            Ended::Abandoned(_) => {
                self.exit_trap_after_cancel().await;
                self.stop_run(scope);
            }
            Ended::Limit | Ended::Panicked(_) => self.stop_run(scope),
            Ended::Finished(_) | Ended::Refused(_) => {}
        }
        self.brush.restore_diversions(&mut self.shell);
        let outcome = self.conclude(ended);
        // From here on the jobs keep what they write (see `brush::jobs`). Before the pipe is
        // unwatched: the jobs' output threads may be blocked writing to it, and ending the
        // forwarding waits for them.
        self.brush.end_job_forwarding(&mut self.shell);
        // Unwatched before the session's own writer closes, which would wake the output thread.
        reader.command_ended();
        self.detach_stdio();
        reader.finish().await;
        outcome.map(|outcome| outcome.took(started.elapsed()))
    }

    /// The session is being torn down after a cancellation: its EXIT trap gets a short while.
    pub(super) async fn exit_trap_after_cancel(&mut self) {
        if !self
            .shell
            .traps()
            .handles(brush_core::traps::TrapSignal::Exit)
            || self.brush.take_ending().is_some()
        {
            return;
        }
        let token = CancelToken::new();
        let _deadline = token.cancel_after(EXIT_TRAP_AFTER_CANCEL);
        self.brush.begin_exit_trap(token.clone());
        let shell = &mut self.shell;
        let _ = brush::run_isolated(self.brush.umask(), async {
            tokio::select! {
                biased;
                _ = shell.on_exit() => {}
                _ = token.cancelled() => {}
            }
        })
        .await;
        self.brush.end_run();
    }

    /// Checks, parses and runs `command`, until it ends, `cancel` fires or a limit is passed.
    pub(super) async fn execute(
        &mut self,
        command: &str,
        params: &ExecutionParameters,
        stops: Stops<'_>,
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
                reason = stops.cancel.cancelled() => return Ended::Cancelled(reason),
                joined = parsing => match joined {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        let error = ShellError::Execution(format!("the parser failed: {e}"));
                        return Ended::Finished(Err(error));
                    }
                },
            }
        };
        self.execute_parsed(command, parsed, params, Some(stops))
            .await
    }

    /// Runs a parsed command, `source` its text (see [`execute`](Self::execute)).
    pub(super) async fn execute_parsed(
        &mut self,
        source: &str,
        parsed: Result<ast::Program, ParseError>,
        params: &ExecutionParameters,
        stops: Option<Stops<'_>>,
    ) -> Ended {
        let parsed = parsed.map(|mut program| {
            brush::run_concurrently(&mut program, source, self.brush.id());
            program
        });
        // Like `bash -c`: `$-` has `c`, and `$LINENO` counts the command string's lines.
        self.shell.start_command_string_mode();
        let ended = {
            // A panic in brush (a bug of its own, such as an unchecked number) would otherwise
            // unwind through the session's thread, skipping the teardown that stops the run's
            // processes. The session is not used again after one (see `conclude`).
            let run = run_parsed(&mut self.shell, &self.brush, parsed, params);
            let run = AssertUnwindSafe(run).catch_unwind();
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
                        reason = stops.cancel.cancelled() => {
                            // Unwound from inside (see `brush::unwind`) while the run's processes
                            // are stopped, so that whatever waits on them returns.
                            let unwind = tokio::time::timeout(UNWIND_GRACE, &mut run);
                            let terminate = brush::terminate_run(stops.scope, KILL_GRACE);
                            match tokio::join!(unwind, terminate).0 {
                                Ok(_) => Ended::Cancelled(reason),
                                Err(_) => Ended::Abandoned(reason),
                            }
                        }
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
            && self.brush.take_ending().is_none()
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
}

/// How long a stopped run may take to unwind (its processes stopped, its next command diverted)
/// before its interpreter is dropped mid-run and the session with it.
const UNWIND_GRACE: Duration = Duration::from_secs(2);

/// Runs a parsed command the way brush's `run_string` does: a parse error is fatal (the session
/// ends, as after a syntax error in `bash -c`), other errors are reported and become a status.
/// Its lines run one by one, as brush runs a program's, except that a line a function call
/// refused by `FUNCNEST` abandoned sets `$?` to 1 and the next line runs (bash's behaviour).
async fn run_parsed(
    shell: &mut Shell,
    brush: &Integration,
    parsed: Result<ast::Program, ParseError>,
    params: &ExecutionParameters,
) -> ExecutionResult {
    let program = match parsed {
        Ok(program) => program,
        Err(e) => {
            let source = SourceInfo::from("-c");
            let error = brush_core::Error::from(ErrorKind::ParseError(e, source)).into_fatal();
            return reported(shell, params, error);
        }
    };
    let mut result = ExecutionResult::success();
    for line in program.complete_commands {
        let line = ast::Program {
            complete_commands: vec![line],
        };
        result = match shell.run_program(line, params).await {
            Ok(result) => result,
            Err(error) => reported(shell, params, error),
        };
        if brush.take_abandoned_line() {
            result = ExecutionResult::new(1);
            shell.set_last_exit_status(1);
        } else if !result.is_normal_flow() {
            break;
        }
    }
    result
}

/// Commands up to this size are parsed on the session thread; larger ones on a blocking thread
/// the run can stop waiting for.
const INLINE_PARSE_MAX: usize = 64 << 10;
