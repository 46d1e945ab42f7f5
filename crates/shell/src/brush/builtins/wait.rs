//! `wait` for named jobs and `wait -n`, with bash's statuses.
//!
//! The stock builtin returns 0 from `wait %1` whatever the job's status, does not implement
//! `wait -n` (it fails with status 99) nor waiting for a process id, and keeps a waited job in
//! the job table. Ours waits for the named jobs (or, with `-n`, for whichever job ends first),
//! returns the status of the last one, and forgets each job once waited for, as bash does; a job
//! or pid the session does not have gets bash's message and status 127. `wait` with no operands,
//! and `-f` and `-p`, are left to the stock builtin.
//!
//! brush-core runs every background job as a task of the session, not as a process of its own,
//! so a pid names a job when it is the process `$!` named for it (see `brush::jobs`) or when the
//! job's first task is an external command; a coproc's `NAME_PID` names its job (see
//! [`coproc_as_job`]).
//!
//! [`coproc_as_job`]: super::coproc_as_job

use std::io::Write as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::jobs::Job;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{coproc_as_job, error_prefix, operands, run_or_fail, stock};
use crate::brush::signals::WaitInterruptions;
use crate::brush::{common, state};

/// Status of `wait` when there is nothing (left) to wait for.
const NOTHING_TO_WAIT_FOR: u8 = 127;

/// What `wait` was asked for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Request {
    next: bool,
    /// `-f` or `-p`, which the stock builtin handles (or reports as not implemented).
    stock_only: bool,
    operands: Vec<String>,
}

fn parse(args: &[String]) -> Request {
    let mut request = Request::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--" => {
                request.operands.extend(rest.cloned());
                break;
            }
            flags if flags.starts_with('-') && flags.len() > 1 && !is_number(&flags[1..]) => {
                for flag in flags[1..].chars() {
                    match flag {
                        'n' => request.next = true,
                        _ => request.stock_only = true,
                    }
                }
            }
            operand => request.operands.push(operand.to_string()),
        }
    }
    request
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Which job an operand names, or bash's complaint about it (message, status).
fn find(jobs: &[Job], operand: &str) -> Result<usize, (String, u8)> {
    if let Some(spec) = operand.strip_prefix('%') {
        let wanted = match spec {
            "" | "%" | "+" => jobs.iter().position(Job::is_current),
            "-" => jobs.iter().position(Job::is_prev),
            number if is_number(number) => {
                let id = number.parse::<usize>().ok();
                jobs.iter().position(|job| Some(job.id) == id)
            }
            _ => None,
        };
        wanted.ok_or_else(|| (format!("{operand}: no such job"), NOTHING_TO_WAIT_FOR))
    } else if is_number(operand) {
        let pid = operand.parse::<i32>().ok();
        jobs.iter()
            .position(|job| job.representative_pid().is_some_and(|p| Some(p) == pid))
            .ok_or_else(|| {
                (
                    format!("pid {operand} is not a child of this shell"),
                    NOTHING_TO_WAIT_FOR,
                )
            })
    } else {
        Err((format!("`{operand}': not a pid or valid job spec"), 1))
    }
}

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let words = operands(&args);
        let mut request = parse(&words);
        for operand in &mut request.operands {
            if let Some(job) =
                coproc_as_job(ctx.shell, operand).or_else(|| pid_as_job(ctx.shell, operand))
            {
                *operand = job;
            }
        }
        let session = common::session_of(ctx.shell);
        let result = match WaitInterruptions::of(ctx.shell) {
            None => wait(ctx, args, &request).await,
            // A signal sent to the shell ends the wait, as in bash; also when the job that sent
            // it has ended by then.
            Some(interruptions) => tokio::select! {
                biased;
                interrupted = interruptions.next() => Ok(interrupted),
                result = wait(ctx, args, &request) => result,
            },
        };
        flush_job_output(session).await;
        result
    })
}

/// `%N` for a pid that `$!` named as job N's process.
fn pid_as_job(shell: &brush_core::Shell, operand: &str) -> Option<String> {
    let pid = operand.parse::<u32>().ok()?;
    let book = state::with_shell(shell, |s| s.jobs.clone())?;
    book.id_of_pid(pid).map(|id| format!("%{id}"))
}

/// Passes on to the run what its jobs wrote so far: what a job wrote before the wait for it ended
/// comes before what the run writes next, as when it writes to the run's pipe itself.
async fn flush_job_output(session: Option<u64>) {
    let outputs = session.and_then(|id| state::with_session(id, |s| s.job_forwards.clone()));
    for output in outputs.into_iter().flatten() {
        output.flush().await;
    }
}

/// Waits as `request` says (`args` is the command line, for the stock builtin).
async fn wait(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
    request: &Request,
) -> Result<ExecutionResult, brush_core::Error> {
    if request.stock_only || (!request.next && request.operands.is_empty()) {
        return run_or_fail(stock("wait"), ctx, args).await;
    }
    let prefix = error_prefix(ctx.shell);
    let mut stderr = ctx.stderr();
    let jobs = &mut ctx.shell.jobs_mut().jobs;
    let mut complain = |(message, code): (String, u8)| {
        let _ = writeln!(stderr, "{prefix}wait: {message}");
        code
    };
    if request.next {
        let mut named = Vec::new();
        for operand in &request.operands {
            match find(jobs, operand) {
                Ok(index) => named.push(index),
                Err(complaint) => drop(complain(complaint)),
            }
        }
        if request.operands.is_empty() {
            named = (0..jobs.len()).collect();
        }
        let code = first_to_end(jobs, &named).await?;
        return Ok(ExecutionResult::new(code.unwrap_or(NOTHING_TO_WAIT_FOR)));
    }
    // Each named job in turn; the status is the last operand's.
    let mut status = 0;
    for operand in &request.operands {
        status = match find(jobs, operand) {
            Ok(index) => {
                let code = u8::from(jobs[index].wait().await?.exit_code);
                jobs.remove(index);
                code
            }
            Err(complaint) => complain(complaint),
        };
    }
    Ok(ExecutionResult::new(status))
}

/// Waits for whichever of the jobs at `indices` ends first, forgets it and returns its status;
/// `None` when there is none.
async fn first_to_end(
    jobs: &mut Vec<Job>,
    indices: &[usize],
) -> Result<Option<u8>, brush_core::Error> {
    let waits: Vec<_> = jobs
        .iter_mut()
        .enumerate()
        .filter(|(index, _)| indices.contains(index))
        .map(|(index, job)| Box::pin(async move { (index, job.wait().await) }))
        .collect();
    if waits.is_empty() {
        return Ok(None);
    }
    let ((index, result), _, others) = futures_util::future::select_all(waits).await;
    drop(others);
    let code = u8::from(result?.exit_code);
    jobs.remove(index);
    Ok(Some(code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::builtins::test_args;

    #[test]
    fn reads_flags_and_operands() {
        let parsed = |list: &[&str]| parse(&test_args(list));
        assert_eq!(parsed(&[]), Request::default());
        assert_eq!(
            parsed(&["-n", "%1", "42"]),
            Request {
                next: true,
                stock_only: false,
                operands: vec!["%1".into(), "42".into()],
            }
        );
        assert!(parsed(&["-f", "%1"]).stock_only);
        assert!(parsed(&["-np", "v"]).stock_only);
        assert_eq!(parsed(&["--", "-n"]).operands, vec!["-n".to_string()]);
        assert!(!parsed(&["--", "-n"]).next);
    }

    #[test]
    fn complains_as_bash_about_what_it_cannot_find() {
        let none: Vec<Job> = Vec::new();
        assert_eq!(
            find(&none, "%3"),
            Err(("%3: no such job".to_string(), NOTHING_TO_WAIT_FOR))
        );
        assert_eq!(
            find(&none, "99999"),
            Err((
                "pid 99999 is not a child of this shell".to_string(),
                NOTHING_TO_WAIT_FOR
            ))
        );
        assert_eq!(
            find(&none, "abc"),
            Err(("`abc': not a pid or valid job spec".to_string(), 1))
        );
    }
}
