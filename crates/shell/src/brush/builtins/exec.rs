//! `exec`, without replacing the host process.
//!
//! With only redirections it does what the stock builtin does: the redirections become the
//! session's own fds. With a command, `bash -c` would `execve` itself away; the session instead
//! runs the command to completion and then ends with its status, which is what the caller of
//! `bash -c` observes. In a subshell, where bash replaces only the subshell, the command runs and
//! the subshell ends. It hands `SHLVL` over as bash does (see [`hand_over_shell_level`]).

use std::io::Write as _;

use brush_core::commands::{self, CommandArg};
use brush_core::env::{EnvironmentLookup, EnvironmentScope};
use brush_core::extensions::DefaultShellExtensions;
use brush_core::variables::ShellValueLiteral;
use brush_core::{ExecutionContext, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::{error_prefix, exit_with, operands, stock};
use crate::brush::common::adopt_run_limits;
use crate::brush::state::{Ending, with_shell};

/// What `exec` was asked to do.
#[derive(Debug, Default, PartialEq, Eq)]
struct ExecRequest {
    argv0: Option<String>,
    clear_env: bool,
    login: bool,
    command: Vec<String>,
}

/// Parses `exec [-cl] [-a name] [command [args…]]`; `Err` holds a usage message.
fn parse(args: &[String]) -> Result<ExecRequest, String> {
    let mut request = ExecRequest::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            request.command.push(arg.clone());
            break;
        };
        let mut chars = flags.chars();
        while let Some(flag) = chars.next() {
            match flag {
                'c' => request.clear_env = true,
                'l' => request.login = true,
                'a' => {
                    let inline: String = chars.by_ref().collect();
                    let name = if inline.is_empty() {
                        rest.next().cloned()
                    } else {
                        Some(inline)
                    };
                    request.argv0 =
                        Some(name.ok_or_else(|| "-a: option requires an argument".to_string())?);
                }
                other => return Err(format!("-{other}: invalid option")),
            }
        }
    }
    request.command.extend(rest.cloned());
    Ok(request)
}

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let words = operands(&args);
        let request = match parse(&words) {
            Ok(request) => request,
            Err(message) => {
                let _ = writeln!(ctx.stderr(), "{}: {message}", ctx.command_name);
                let _ = writeln!(
                    ctx.stderr(),
                    "exec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]"
                );
                return Ok(ExecutionResult::new(2));
            }
        };
        if request.command.is_empty() {
            let fds: Vec<_> = ctx.iter_fds().collect();
            ctx.shell.replace_open_files(fds.into_iter());
            return Ok(ExecutionResult::success());
        }
        if !ctx.shell.is_subshell() {
            // The shell is gone once the command ends: its EXIT trap must not run.
            with_shell(ctx.shell, |s| s.ending = Some(Ending::Exec));
            if !request.clear_env {
                hand_over_shell_level(ctx.shell);
            }
        }
        let code = run_command(ctx, &request).await?;
        Ok(exit_with(code))
    })
}

/// Lowers `SHLVL` by one, as bash's `exec` does outside a `( … )` subshell: the program takes the
/// shell's place, so a shell it starts has the level this one had (`exec bash -c 'echo $SHLVL'`
/// prints what `echo $SHLVL` would have). Bash does it in a pipeline stage or a command
/// substitution too, where ours (a copy of the shell like a `( … )` one) does not.
fn hand_over_shell_level(shell: &mut Shell) {
    let level = shell
        .env_str("SHLVL")
        .and_then(|value| value.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let _ = shell.env_mut().update_or_add(
        "SHLVL",
        ShellValueLiteral::Scalar((level - 1).max(0).to_string()),
        |variable| {
            variable.export();
            Ok(())
        },
        EnvironmentLookup::Anywhere,
        EnvironmentScope::Global,
    );
}

/// Runs the command `exec` was given and returns its exit status.
async fn run_command(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    request: &ExecRequest,
) -> Result<u8, brush_core::Error> {
    // The command starts here, maybe on another thread than our DEBUG hook's.
    adopt_run_limits(ctx.shell);
    let plain = request.argv0.is_none() && !request.clear_env && !request.login;
    if plain && let Some(command) = stock("command") {
        // `command` finds builtins and executables but not functions, as exec does.
        let mut argv = vec![CommandArg::from("command".to_string())];
        argv.push(CommandArg::from("--".to_string()));
        argv.extend(request.command.iter().cloned().map(CommandArg::from));
        let program = request.command[0].clone();
        let mut stderr = ctx.stderr();
        let prefix = error_prefix(ctx.shell);
        return match command(ctx, argv).await {
            Ok(result) => Ok(u8::from(result.exit_code)),
            // bash -c reports it and exits (the shell is gone either way).
            Err(_) => {
                let (message, code) = not_executed(&program);
                for line in message {
                    let _ = writeln!(stderr, "{prefix}{line}");
                }
                Ok(code)
            }
        };
    }
    let program = &request.command[0];
    let mut argv0 = request.argv0.clone().unwrap_or_else(|| program.clone());
    if request.login {
        argv0.insert(0, '-');
    }
    let mut cmd = commands::compose_std_command(
        &ctx,
        program,
        &argv0,
        &request.command[1..],
        request.clear_env,
    )?;
    let status = match cmd.spawn() {
        // Waited for off this thread, so that a cancellation can still be noticed meanwhile.
        Ok(mut child) => tokio::task::spawn_blocking(move || child.wait())
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?,
        Err(error) => {
            let code = if error.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            let _ = writeln!(ctx.stderr(), "bash: {program}: {error}");
            return Ok(code);
        }
    }?;
    Ok(exit_status_code(status))
}

/// What bash says, and the status it exits with, when `exec` cannot run `program`.
fn not_executed(program: &str) -> (Vec<String>, u8) {
    if !program.contains('/') {
        return (vec![format!("exec: {program}: not found")], 127);
    }
    let path = std::path::Path::new(program);
    let reason = if path.is_dir() {
        "Is a directory"
    } else if path.exists() {
        "Permission denied"
    } else {
        return (vec![format!("{program}: No such file or directory")], 127);
    };
    (
        vec![
            format!("{program}: {reason}"),
            format!("exec: {program}: cannot execute: {reason}"),
        ],
        126,
    )
}

/// The shell's view of a child's end: its code, or 128 + the signal that killed it.
fn exit_status_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt as _;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    (code & 0xff) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::builtins::test_args as strings;

    #[test]
    fn parses_options_then_the_command() {
        assert_eq!(parse(&[]).unwrap(), ExecRequest::default());
        let request = parse(&strings(&["-cl", "-a", "name", "ls", "-l"])).unwrap();
        assert_eq!(
            request,
            ExecRequest {
                argv0: Some("name".into()),
                clear_env: true,
                login: true,
                command: strings(&["ls", "-l"]),
            }
        );
        assert_eq!(
            parse(&strings(&["--", "-x", "y"])).unwrap().command,
            strings(&["-x", "y"])
        );
        assert_eq!(
            parse(&strings(&["-anm", "true"])).unwrap().argv0.as_deref(),
            Some("nm")
        );
    }

    #[test]
    fn rejects_unknown_options_and_a_missing_name() {
        assert_eq!(parse(&strings(&["-x"])), Err("-x: invalid option".into()));
        assert!(parse(&strings(&["-a"])).is_err());
    }
}
