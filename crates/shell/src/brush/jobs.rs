//! Background jobs (`cmd &`): recorded in the session's [`JobBook`], stopped with the run that
//! started them and only that run, and their output kept once that run has resolved.
//!
//! brush runs a list started with `&` as a task of the session's runtime, with a copy of the
//! shell. The stages rewrite (see `stages`) turns `X &` into two commands:
//!
//! - `__shellwright_job_record <session> <index>`, run by the shell that starts the job, just
//!   before brush adds the job to its table: it records the job under the number brush is about to
//!   give it, and leaves the record's serial in a variable the job's copy of the shell inherits
//!   (jobs start in this order; their tasks may first run in any order);
//! - `__shellwright_job <session> <index> &`, which runs the original list in the job's task. It
//!   gives the job a tag of its own within its run's (`<run>.j<serial>`, so that stopping the run
//!   or closing the shell reaches its processes, and `jobs -l` finds them), sends the job's output
//!   through a pipe of its own, and gives the list up the moment the run that started it is
//!   stopped: a job waiting on a process drops the wait before the run's processes are killed, so
//!   it never goes on to its next command (whose redirections brush would open before any hook
//!   could stop it).
//!
//! The job's pipe is read by a thread of its own ([`JobOutput`]), which passes what the job writes
//! on to the run's transcript while the run goes, and to the job's record once it has resolved
//! (see [`Integration::end_job_forwarding`](super::Integration::end_job_forwarding)): the run does
//! not wait for its jobs' output to end, and nothing a job writes is lost. Jobs of runs that ended
//! normally live on between runs, as an interactive shell's do, until the session ends.
//!
//! brush expands `$!` to the process of the current job's first task only when that task is an
//! external command, which ours never is, so `$!` would always be empty. The walk that rewrites a
//! run's words (see `words`) replaces `$!` by a command substitution of
//! `__shellwright_last_job_pid`, which prints the first process of the last job the shell started
//! (its serial stays in [`LAST_JOB_VARIABLE`], also between runs), waiting a little for a job whose
//! task has not started it yet. The fork that starts that process reports it to the job's record
//! (see [`spawn_policy`](super::spawn_policy)), so `$!` names it also once it ended; were the
//! report lost, the process is found by the tag it carries while it runs. So `wait $!` finds the
//! job, and `kill $!` ends it. A job that starts no process (a loop of builtins) leaves `$!` empty.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::env::EnvironmentScope;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::openfiles::OpenFile;
use brush_core::{
    ExecutionContext, ExecutionParameters, ExecutionResult, Shell, ShellValue, ShellVariable,
};
use futures_util::future::BoxFuture;
use shellwright_io::file_identity;
use shellwright_proc::{CancelToken, RUN_TAG_VARIABLE};

use super::common::{
    JOB_BUILTIN, JOB_RECORD_BUILTIN, JOB_SERIAL_VARIABLE, LAST_JOB_PID_BUILTIN, LAST_JOB_VARIABLE,
};
use super::job_output::JobOutput;
use super::spawn_policy::{self, JobOfFork};
use super::{builtins, common, job_table, stages, state};
use crate::jobs::{JobBook, JobOrigin, JobProcess, first_process};

/// The status of a job its run's stop ended (bash: 128 + SIGTERM).
const STOPPED_STATUS: u8 = 143;

/// How long `$!` waits for the last job to start its first process: brush starts a job's task
/// after the command that started it went on, while bash forks before it does. A job that starts
/// one does so within microseconds, but on a loaded machine its task may wait its turn, and an
/// empty `$!` makes the usual `kill $!` fail; a job that ends stops the wait at once. Only a job
/// of builtins alone that keeps running costs `$!` the whole wait.
const FIRST_PROCESS_WAIT: Duration = Duration::from_secs(1);

/// Adds the job builtins.
pub(crate) fn install_builtins(table: &mut HashMap<String, Registration<DefaultShellExtensions>>) {
    builtins::add_internal(table, JOB_RECORD_BUILTIN, record_job);
    builtins::add_internal(table, JOB_BUILTIN, run_job);
    builtins::add_internal(table, LAST_JOB_PID_BUILTIN, print_last_job_pid);
}

/// `__shellwright_last_job_pid`: prints `$!`, the first process of the last job the shell
/// started, or nothing when it started none or that job started no process.
fn print_last_job_pid(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    _args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let serial = ctx.shell.env_str(LAST_JOB_VARIABLE);
        let serial = serial.and_then(|serial| serial.parse::<u64>().ok());
        let book = state::with_shell(ctx.shell, |s| s.jobs.clone());
        if let (Some(serial), Some(book)) = (serial, book)
            && let Some(pid) = job_pid(&book, serial).await
        {
            write!(ctx.stdout(), "{pid}")?;
        }
        Ok(ExecutionResult::success())
    })
}

/// Job `serial`'s first process: the one its fork reported, or else the oldest carrying its tag,
/// waited for up to [`FIRST_PROCESS_WAIT`] while the job runs without one. The reports are read
/// every 2 ms; the process table, a walk of `/proc` for when a report was lost, every 50 ms.
async fn job_pid(book: &JobBook, serial: u64) -> Option<u32> {
    const SCAN_EVERY: Duration = Duration::from_millis(50);
    let start = tokio::time::Instant::now();
    let mut next_scan = start + SCAN_EVERY;
    loop {
        note_reported_pids();
        let tag = match book.process_of(serial)? {
            JobProcess::Found(pid) => return Some(pid),
            JobProcess::Ended => return None,
            JobProcess::Running(tag) => tag,
        };
        let now = tokio::time::Instant::now();
        if now >= next_scan {
            if let Some(pid) = first_process(&tag) {
                book.remember_pid(serial, pid);
                return Some(pid);
            }
            next_scan = now + SCAN_EVERY;
        }
        if now >= start + FIRST_PROCESS_WAIT {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// `__shellwright_job_record <session> <index>`: records the job about to start, with what it
/// needs of the run that starts it.
fn record_job(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let shell = ctx.shell;
        let run_tag = shell.env_str(RUN_TAG_VARIABLE).map(|tag| tag.into_owned());
        let call_line = args.iter().map(ToString::to_string).collect::<Vec<_>>();
        let command = job_table::written_job(&call_line.join(" ")).unwrap_or_default();
        // bash's number: one past the highest in use (the entry brush adds right after this gets
        // it before any command sees it, see `job_table::name_jobs`).
        let id = shell
            .jobs()
            .jobs
            .iter()
            .map(|job| job.id)
            .max()
            .unwrap_or(0)
            + 1;
        let serial = state::with_shell(shell, |s| {
            let serial = s.next_job_serial;
            s.next_job_serial += 1;
            let origin = JobOrigin {
                tag: format!("{}.j{serial}", run_tag.unwrap_or_default()),
                run_stop: s.run_token.clone(),
                run_output: s.run_output,
            };
            s.jobs.add(serial, id, format!("{command} &"), origin);
            serial
        });
        if let Some(serial) = serial {
            for name in [JOB_SERIAL_VARIABLE, LAST_JOB_VARIABLE] {
                let variable = ShellVariable::new(ShellValue::String(serial.to_string()));
                let _ = shell
                    .env_mut()
                    .add(name, variable, EnvironmentScope::Global);
            }
        }
        Ok(ExecutionResult::success())
    })
}

/// Passes the first processes that jobs' forks reported on to the jobs' records.
fn note_reported_pids() {
    for (job, pid) in spawn_policy::take_job_reports() {
        state::with_session(job.session, |s| s.jobs.remember_pid(job.serial, pid));
    }
}

/// The job `shell` runs commands of, while the job's first process is not known: the DEBUG hook
/// names it to the fork policy before each command (see `spawn_policy::set_thread_job`).
pub(crate) fn job_without_pid(shell: &Shell) -> Option<JobOfFork> {
    let tag = shell.env_str(RUN_TAG_VARIABLE)?;
    let serial = tag.rsplit_once(".j")?.1.parse::<u64>().ok()?;
    let session = common::session_of(shell)?;
    note_reported_pids();
    let book = state::with_session(session, |s| s.jobs.clone())?;
    matches!(book.process_of(serial), Some(JobProcess::Running(_)))
        .then_some(JobOfFork { session, serial })
}

/// `__shellwright_job <session> <index> &`: runs the registered list as the job.
fn run_job(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let Some(command) = stages::registered(&args) else {
            return Ok(ExecutionResult::new(2));
        };
        let ExecutionContext {
            shell, mut params, ..
        } = ctx;
        stages::enter_call(shell, &mut params, &args);
        let job = JobStart::take(shell);
        if let Some(job) = &job {
            job.enter(shell, &mut params);
        }
        let program = stages::program_of(&command);
        let ran = match &job {
            Some(job) => tokio::select! {
                biased;
                _ = cancelled(job.origin.run_stop.as_ref()) => Err(STOPPED_STATUS),
                _ = job.killed.cancelled() => Err(job.killed_status()),
                ran = shell.run_program(program, &params) => Ok(ran),
            },
            // Not recorded (its session's record is gone): it goes as brush runs it.
            None => Ok(shell.run_program(program, &params).await),
        };
        let status = match ran {
            Ok(ran) => stages::status_of(shell, &params, ran),
            Err(status) => status,
        };
        if let Some(job) = job {
            // Its fork's report goes to its record before the record can be trimmed as ended, and
            // a session whose runs never ask for `$!` still keeps the report pipe from filling.
            note_reported_pids();
            job.book.end(job.serial, i32::from(status));
        }
        Ok(ExecutionResult::new(status))
    })
}

/// Resolves when `token` fires; never without one.
async fn cancelled(token: Option<&CancelToken>) {
    match token {
        Some(token) => {
            token.cancelled().await;
        }
        None => std::future::pending().await,
    }
}

/// The record a job's copy of the shell found (see [`record_job`]).
struct JobStart {
    serial: u64,
    book: JobBook,
    origin: JobOrigin,
    /// Fired by `kill %N` with a signal that ends the job (see `job_table::signal_job`).
    killed: CancelToken,
}

impl JobStart {
    /// The job's record, from the variable its copy of the shell inherited (which is removed: it
    /// is no variable of the user's).
    fn take(shell: &mut Shell) -> Option<Self> {
        let serial = shell.env_str(JOB_SERIAL_VARIABLE)?.parse::<u64>().ok()?;
        let _ = shell.env_mut().unset(JOB_SERIAL_VARIABLE);
        let book = state::with_shell(shell, |s| s.jobs.clone())?;
        let (origin, killed) = book.start_of(serial)?;
        Some(Self {
            serial,
            book,
            origin,
            killed,
        })
    }

    /// The status of a job `kill %N` ended: 128 + the signal.
    fn killed_status(&self) -> u8 {
        let signal = self.book.stopped_by(self.serial);
        let signal = signal.and_then(|n| u8::try_from(n).ok());
        signal.map_or(STOPPED_STATUS, |n| 128u8.saturating_add(n))
    }

    /// Tags the job's processes with its own tag, and sends its output through its own pipe.
    fn enter(&self, shell: &mut Shell, params: &mut ExecutionParameters) {
        let mut variable = ShellVariable::new(ShellValue::String(self.origin.tag.clone()));
        variable.export();
        let _ = shell
            .env_mut()
            .add(RUN_TAG_VARIABLE, variable, EnvironmentScope::Global);
        if let Some(run_output) = self.origin.run_output {
            let _ = divert_output(shell, params, run_output, self);
        }
    }
}

/// Gives the job a pipe of its own in place of every descriptor it holds on its run's output
/// (`run_output`: stdout, stderr, the call's saved stderr), and starts the thread that reads it,
/// passing it on to the run's transcript while that run goes.
fn divert_output(
    shell: &mut Shell,
    params: &mut ExecutionParameters,
    run_output: shellwright_io::FileIdentity,
    job: &JobStart,
) -> std::io::Result<()> {
    let is_run_output = |file: &OpenFile| {
        file.try_borrow_as_fd()
            .ok()
            .and_then(|fd| file_identity(fd).ok())
            == Some(run_output)
    };
    let in_params: Vec<_> = params
        .iter_fds(shell)
        .filter(|(_, file)| is_run_output(file))
        .collect();
    let Some((_, run_file)) = in_params.first() else {
        return Ok(());
    };
    let (read, write) = shellwright_io::pipe()?;
    let write = std::io::PipeWriter::from(write);
    for (fd, _) in &in_params {
        params.set_fd(*fd, OpenFile::PipeWriter(write.try_clone()?));
    }
    let in_shell: Vec<_> = shell
        .open_files()
        .iter_fds()
        .filter(|(_, file)| is_run_output(file))
        .map(|(fd, _)| fd)
        .collect();
    for fd in in_shell {
        shell
            .open_files_mut()
            .set_fd(fd, OpenFile::PipeWriter(write.try_clone()?));
    }
    drop(write);
    // Passed on to the run only while it goes: a job whose task first runs after its run ended
    // keeps everything it writes.
    let goes = |shell: &Shell| state::with_shell(shell, |s| s.run_output == Some(run_output));
    let copy = run_file
        .try_borrow_as_fd()
        .map_err(std::io::Error::other)?
        .try_clone_to_owned()?;
    let target = (goes(shell) == Some(true)).then(|| std::fs::File::from(copy));
    let output = JobOutput::start(read, target, job.book.clone(), job.serial)?;
    let registered = state::with_shell(shell, |s| {
        let goes = s.run_output == Some(run_output);
        if goes {
            s.job_forwards.push(Arc::clone(&output));
        }
        goes
    });
    if registered != Some(true) {
        // The run resolved meanwhile (its end took the forwards it had).
        output.end_forwarding();
    }
    Ok(())
}
