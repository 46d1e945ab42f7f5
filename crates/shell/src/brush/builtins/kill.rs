//! `kill`, where the session's own pid is the host's.
//!
//! `$$` in the session is the host process's pid, and `0` or `-<pgid>` name the host's process
//! group. A signal aimed there is meant for the shell itself, so it acts on the session as the
//! signal would act on `bash -c` (see [`signals`]): a trap the script set runs, an ignored signal
//! does nothing, and a fatal one ends the session with status 128 + the signal number (its EXIT
//! trap runs, except after SIGKILL). The host never receives it. A job spec (`%N`) reaches the
//! job's processes, and the job itself when the signal ends it (see `job_table::signal_job`):
//! brush runs a job as a task, which the stock builtin cannot signal. A process id (or `-<pgid>`)
//! is signalled here, with bash's default SIGTERM (the stock builtin sends SIGKILL, which gives a
//! server no chance to clean up) and bash's messages. Anything else goes to the stock builtin, one
//! target at a time; a coproc's `NAME_PID` as its job spec (see [`coproc_as_job`]).
//!
//! [`coproc_as_job`]: super::coproc_as_job

use std::io::Write as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::traps::TrapSignal;
use brush_core::{ExecutionContext, ExecutionControlFlow, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::{coproc_as_job, error_prefix, operands, run_or_fail, stock};
use crate::brush::{job_table, signals};

/// A `kill` command line split into its signal and its targets.
#[derive(Debug, PartialEq, Eq)]
struct KillRequest {
    /// The signal as written (`TERM`, `SIGTERM`, `15`), or `None` for the default SIGTERM.
    signal: Option<String>,
    targets: Vec<String>,
}

/// Splits `kill` arguments; `None` when the stock builtin should handle the line as a whole
/// (`-l`, `-L`, malformed options).
fn parse(args: &[String]) -> Option<KillRequest> {
    let mut signal = None;
    let mut rest = args.iter().peekable();
    while let Some(arg) = rest.peek() {
        match arg.as_str() {
            "--" => {
                rest.next();
                break;
            }
            "-s" | "-n" => {
                rest.next();
                signal = Some(rest.next()?.clone());
            }
            "-l" | "-L" => return None,
            other if other.starts_with('-') && other.len() > 1 && signal.is_none() => {
                let spec = &other[1..];
                // `-1` is a pid (every process) only after the signal; as the first word it is
                // a signal number, as in bash.
                signal = Some(spec.to_string());
                rest.next();
            }
            _ => break,
        }
    }
    Some(KillRequest {
        signal,
        targets: rest.cloned().collect(),
    })
}

/// Whether `target` names the session itself: the host's pid, its process group, or `0`.
fn is_self(target: &str) -> bool {
    let host = std::process::id() as i64;
    // SAFETY: getpgrp(2) cannot fail.
    let group = i64::from(unsafe { libc::getpgrp() });
    match target.parse::<i64>() {
        Ok(0) => true,
        Ok(pid) if pid > 0 => pid == host,
        Ok(pid) => -pid == group || -pid == host,
        Err(_) => false,
    }
}

/// The signal number of `spec` (`TERM`, `SIGterm`, `15`), if it is a real signal.
fn signal_number(spec: Option<&str>) -> Option<i32> {
    let Some(spec) = spec else {
        return Some(libc::SIGTERM);
    };
    let parsed = match spec.parse::<i32>() {
        Ok(n) => TrapSignal::try_from(n).ok()?,
        Err(_) => TrapSignal::try_from(spec.to_ascii_uppercase().as_str()).ok()?,
    };
    i32::try_from(parsed).ok()
}

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let args = coprocs_as_jobs(ctx.shell, args);
        let words = operands(&args);
        let request = match parse(&words) {
            Some(request) if !request.targets.is_empty() => request,
            _ => return run_or_fail(stock("kill"), ctx, args).await,
        };
        let Some(signal) = signal_number(request.signal.as_deref()) else {
            let spec = request.signal.unwrap_or_default();
            let _ = writeln!(
                ctx.stderr(),
                "bash: kill: {spec}: invalid signal specification"
            );
            return Ok(ExecutionResult::new(1));
        };
        let ExecutionContext {
            shell,
            command_name,
            params,
        } = ctx;
        let mut status = 0;
        for target in request.targets.iter().filter(|t| !is_self(t)) {
            if let Some(id) = job_table::job_number(shell, target)
                && job_table::signal_job(shell, id, signal)
            {
                continue;
            }
            if let Ok(pid) = target.parse::<libc::pid_t>() {
                if let Err(error) = signal_process(pid, signal) {
                    let prefix = error_prefix(shell);
                    let _ = writeln!(params.stderr(shell), "{prefix}kill: ({target}) - {error}");
                    status = 1;
                }
                continue;
            }
            let name =
                TrapSignal::try_from(signal).map_or_else(|_| signal.to_string(), |s| s.to_string());
            let argv = ["kill", "-s", name.as_str(), target.as_str()]
                .map(|word| CommandArg::from(word.to_string()))
                .to_vec();
            let context = ExecutionContext {
                shell: &mut *shell,
                command_name: command_name.clone(),
                params: params.clone(),
            };
            let result = run_or_fail(stock("kill"), context, argv).await?;
            if !result.is_success() {
                status = u8::from(result.exit_code);
            }
        }
        if !request.targets.iter().any(|t| is_self(t)) {
            return Ok(ExecutionResult::new(status));
        }
        // A copy of the shell (a subshell, stage, substitution or job) signals the session's
        // own shell, which acts on it at its next command; the shell itself acts at once.
        let mut result = if shell.is_subshell() && signals::queue(shell, signal) {
            ExecutionResult::success()
        } else {
            signals::act_on(shell, &params, signal).await?
        };
        if matches!(result.next_control_flow, ExecutionControlFlow::Normal) && status != 0 {
            result.exit_code = status.into();
        }
        Ok(result)
    })
}

/// Sends `signal` to process `pid` (a process group for a negative one); the error is what bash
/// says after the pid (`No such process`).
fn signal_process(pid: libc::pid_t, signal: i32) -> Result<(), String> {
    // SAFETY: kill(2) with plain integers; a pid gone meanwhile only makes it fail with ESRCH.
    if unsafe { libc::kill(pid, signal) } == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    Err(match error.raw_os_error() {
        Some(libc::ESRCH) => "No such process".to_string(),
        Some(libc::EPERM) => "Operation not permitted".to_string(),
        _ => error.to_string(),
    })
}

/// `args` with each target that is a coproc's `NAME_PID` made its job spec (see
/// [`coproc_as_job`]).
fn coprocs_as_jobs(shell: &Shell, mut args: Vec<CommandArg>) -> Vec<CommandArg> {
    let Some(request) = parse(&operands(&args)) else {
        return args;
    };
    let first_target = args.len() - request.targets.len();
    for arg in &mut args[first_target..] {
        if let Some(job) = coproc_as_job(shell, &arg.to_string()) {
            *arg = CommandArg::from(job);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::builtins::test_args as strings;

    #[test]
    fn splits_the_signal_from_the_targets() {
        let parsed = |args: &[&str]| parse(&strings(args)).unwrap();
        assert_eq!(parsed(&["123"]).signal, None);
        assert_eq!(parsed(&["-9", "1", "2"]).signal.as_deref(), Some("9"));
        assert_eq!(parsed(&["-9", "1", "2"]).targets, strings(&["1", "2"]));
        assert_eq!(parsed(&["-s", "USR1", "5"]).signal.as_deref(), Some("USR1"));
        assert_eq!(parsed(&["-n", "2", "5"]).signal.as_deref(), Some("2"));
        assert_eq!(parsed(&["--", "-5"]).targets, strings(&["-5"]));
        assert_eq!(parse(&strings(&["-l"])), None);
        assert_eq!(parse(&strings(&["-s"])), None);
    }

    #[test]
    fn recognises_the_session_itself() {
        let host = std::process::id().to_string();
        // SAFETY: getpgrp(2) cannot fail.
        let group = format!("-{}", unsafe { libc::getpgrp() });
        for target in [host.as_str(), "0", group.as_str()] {
            assert!(is_self(target), "{target}");
        }
        for target in ["1", "%1", "abc", "-1"] {
            assert!(!is_self(target), "{target}");
        }
    }

    #[test]
    fn reads_signal_names_and_numbers() {
        assert_eq!(signal_number(None), Some(libc::SIGTERM));
        assert_eq!(signal_number(Some("9")), Some(libc::SIGKILL));
        assert_eq!(signal_number(Some("usr1")), Some(libc::SIGUSR1));
        assert_eq!(signal_number(Some("SIGINT")), Some(libc::SIGINT));
        assert_eq!(signal_number(Some("NOPE")), None);
    }
}
