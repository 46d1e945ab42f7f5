//! `jobs`, as `bash -c` lists jobs: the running ones (a job that ended is dropped without a word,
//! as a non-interactive bash does), each as the command the user wrote, in bash's columns, with
//! its process for `-l` and `-p`.
//!
//! Background lists run through a call of ours (see `brush::jobs`), which the stock builtin would
//! list as that call, and brush runs each job as a task, so it knows no process of it and does
//! not implement `-l` or `-p`: ours finds the job's oldest live process by the tag its processes
//! carry. `-r` lists the same jobs, `-s` none (nothing stops a job here); `-n` and `-x` go to the
//! stock builtin.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::Duration;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::{error_prefix, operands, stock};
use crate::brush::job_table::{job_number, job_processes, name_jobs};

/// What `jobs` was asked for, when ours answers it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Listing {
    /// `-l`: with the pid.
    long: bool,
    /// `-p`: pids only.
    pids_only: bool,
    /// `-s`: stopped jobs only, of which there are none.
    stopped_only: bool,
    specs: Vec<String>,
}

/// The listing asked for; `None` for what the stock builtin handles (`-n`, `-x`, anything else).
fn parse(args: &[String]) -> Option<Listing> {
    let mut listing = Listing::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--" => {
                listing.specs.extend(rest.cloned());
                break;
            }
            flags if flags.starts_with('-') && flags.len() > 1 => {
                for flag in flags[1..].chars() {
                    match flag {
                        'l' => listing.long = true,
                        'p' => listing.pids_only = true,
                        'r' => {}
                        's' => listing.stopped_only = true,
                        _ => return None,
                    }
                }
            }
            spec => listing.specs.push(spec.to_string()),
        }
    }
    Some(listing)
}

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    name_jobs(ctx.shell);
    let Some(listing) = parse(&operands(&args)) else {
        return match stock("jobs") {
            Some(stock) => stock(ctx, args),
            None => Box::pin(async { Ok(ExecutionResult::new(2)) }),
        };
    };
    Box::pin(async move {
        let pids = if listing.long || listing.pids_only {
            job_pids(ctx.shell).await
        } else {
            HashMap::new()
        };
        Ok(list(ctx, &listing, &pids))
    })
}

/// How long `jobs -l` waits for a job without a process yet to start one: brush starts a job's
/// task after the command that started it went on, while bash forks before it does.
const FIRST_PROCESS_WAIT: Duration = Duration::from_millis(20);

/// The oldest live process of each running job, waiting [`FIRST_PROCESS_WAIT`] at most for jobs
/// that have none yet (a job of builtins never has one).
async fn job_pids(shell: &mut Shell) -> HashMap<usize, u32> {
    // Jobs that ended leave the table unreported, as in `bash -c`.
    let _ = shell.jobs_mut().poll();
    let ids: Vec<usize> = shell.jobs().jobs.iter().map(|job| job.id).collect();
    let deadline = tokio::time::Instant::now() + FIRST_PROCESS_WAIT;
    let mut pids = HashMap::new();
    loop {
        for &id in &ids {
            if let (false, Some(&pid)) = (pids.contains_key(&id), job_processes(shell, id).first())
            {
                pids.insert(id, pid);
            }
        }
        if pids.len() == ids.len() || tokio::time::Instant::now() >= deadline {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn list(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    listing: &Listing,
    pids: &HashMap<usize, u32>,
) -> ExecutionResult {
    // Jobs that ended leave the table unreported, as in `bash -c`.
    let _ = ctx.shell.jobs_mut().poll();
    let mut status = 0;
    let mut ids = Vec::new();
    for spec in &listing.specs {
        match job_number(ctx.shell, spec) {
            Some(id) => ids.push(id),
            None => {
                let prefix = error_prefix(ctx.shell);
                let _ = writeln!(ctx.stderr(), "{prefix}jobs: {spec}: no such job");
                status = 1;
            }
        }
    }
    let lines: Vec<String> = ctx
        .shell
        .jobs()
        .jobs
        .iter()
        .filter(|job| listing.specs.is_empty() || ids.contains(&job.id))
        .filter(|_| !listing.stopped_only)
        .filter_map(|job| {
            let (id, mark, command) = (job.id, job.annotation(), &job.command_line);
            let state = job.state.to_string();
            if !listing.long && !listing.pids_only {
                return Some(format!("[{id}]{mark}  {state:<24}{command}"));
            }
            let pid = pids.get(&job.id).copied();
            if listing.pids_only {
                return pid.map(|pid| pid.to_string());
            }
            let pid = pid.map_or_else(String::new, |pid| pid.to_string());
            Some(format!("[{id}]{mark} {pid:>5} {state:<24}{command}"))
        })
        .collect();
    let mut stdout = ctx.stdout();
    for line in lines {
        let _ = writeln!(stdout, "{line}");
    }
    ExecutionResult::new(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::builtins::test_args as strings;

    #[test]
    fn takes_listings_and_leaves_notifications_and_commands_to_the_stock_builtin() {
        let parsed = |args: &[&str]| parse(&strings(args));
        assert_eq!(parsed(&[]), Some(Listing::default()));
        assert_eq!(parsed(&["-r"]), Some(Listing::default()));
        assert_eq!(
            parsed(&["-lp", "%1"]),
            Some(Listing {
                long: true,
                pids_only: true,
                specs: strings(&["%1"]),
                ..Listing::default()
            })
        );
        assert_eq!(parsed(&["-s"]).map(|l| l.stopped_only), Some(true));
        assert_eq!(parsed(&["-n"]), None);
        assert_eq!(parsed(&["-x", "echo"]), None);
    }
}
