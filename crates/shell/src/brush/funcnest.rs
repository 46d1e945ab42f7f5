//! `FUNCNEST`, enforced as bash enforces it: a call that would nest functions deeper than the
//! limit is refused before the function is entered.
//!
//! bash checks the limit when it calls a function. Past it, it reports
//! `f: maximum function nesting level exceeded (N)` and abandons the rest of the top-level command
//! line: `$?` is 1 and the next line runs. In a subshell, a command substitution, a pipeline stage
//! or a background job, the subshell ends with status 1 and its parent goes on. The limit is
//! `FUNCNEST` when set to a positive number, else ours ([`crate::limits`]), which keeps recursion
//! within the session thread's stack.
//!
//! Our DEBUG hook runs before each simple command, before brush resolves the command's name, but
//! brush ignores what the hook returns, so the hook cannot refuse the call itself. Instead it
//! replaces the function, for that one call, by a stand-in whose body is our builtin
//! `__shellwright_refused <key>`. The builtin puts the function back and returns status 1 with the
//! flow of `exit`, which leaves every function, loop, `eval` and `source` on the way and ends a
//! subshell with that status. In the session's own shell (not a subshell) it also marks the line
//! abandoned: the session runs a command's lines one by one and, finding the mark, sets `$?` to 1
//! and goes on with the next line instead of ending (see [`take_abandoned_line`]). `eval`,
//! `source` and `.` stop it too, with status 1, as bash's do — but bash then goes on with the next
//! line of their text, where ours end.

use std::collections::HashMap;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionControlFlow, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::builtins;
use super::common::{
    REFUSED_BUILTIN, XTRACEFD_ASIDE, restore_xtracefd, set_bash_command, user_line,
};
use super::state::{RefusedCall, with_session, with_shell};
use crate::limits::function_nesting_limit;

/// Adds the builtin of the stand-in, and has `eval`, `source` and `.` stop an abandoned line.
pub(crate) fn install_builtin(table: &mut HashMap<String, Registration<DefaultShellExtensions>>) {
    builtins::add_internal(table, REFUSED_BUILTIN, refused);
    for name in ["eval", "source", "."] {
        if let Some(registration) = table.get_mut(name) {
            registration.execute_func = stop_abandoned_line;
        }
    }
}

/// `eval`, `source` or `.`: when a refused call abandoned the line of their text, they end there
/// with status 1 instead of ending the session.
fn stop_abandoned_line(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let original = builtins::base(&ctx.command_name);
        let ExecutionContext {
            shell,
            command_name,
            params,
        } = ctx;
        let context = ExecutionContext {
            shell: &mut *shell,
            command_name,
            params,
        };
        let result = builtins::run_or_fail(original, context, args).await?;
        let abandoned = matches!(result.next_control_flow, ExecutionControlFlow::ExitShell)
            && !shell.is_subshell()
            && with_shell(shell, |s| std::mem::take(&mut s.line_abandoned)).unwrap_or(false);
        Ok(if abandoned {
            ExecutionResult::new(1)
        } else {
            result
        })
    })
}

/// Called by the hook of session `session` before `command_line` runs: when it calls a function
/// one level deeper than the limit allows, replaces the function by the stand-in for this call
/// and returns bash's message for the hook to write.
pub(crate) fn refuse_too_deep_call(
    shell: &mut Shell,
    session: u64,
    command_line: &str,
) -> Option<String> {
    let function = command_line.split(' ').next()?;
    // The limit is one at least: outside functions nothing is refused.
    let depth = shell.call_stack().function_call_depth();
    if depth == 0 || !calls_function(shell, function) {
        return None;
    }
    let limit = function_nesting_limit(shell);
    if depth < limit {
        return None;
    }
    let original = shell.funcs().get(function).cloned()?;
    let key = with_session(session, |s| {
        s.refusals_made += 1;
        s.refusals.insert(
            s.refusals_made,
            RefusedCall {
                function: function.to_string(),
                original,
                command_line: command_line.to_string(),
            },
        );
        s.refusals_made
    })?;
    // Its own trace line (`set -x`) goes to /dev/null with its stderr; `"$_"` last keeps `$_`.
    let body = format!("() {{ {REFUSED_BUILTIN} {key} {XTRACEFD_ASIDE} \"$_\" 2>/dev/null; }}");
    if shell.define_func_from_str(function, &body).is_err() {
        with_session(session, |s| s.refusals.remove(&key));
        return None;
    }
    let line = user_line(shell).map_or_else(String::new, |n| format!("line {n}: "));
    Some(format!(
        "bash: {line}{function}: maximum function nesting level exceeded ({limit})\n"
    ))
}

/// Whether `name`, run as a command, calls the function of that name (a POSIX special builtin
/// comes first in POSIX mode).
fn calls_function(shell: &Shell, name: &str) -> bool {
    let special = shell.options().posix_mode
        && shell
            .builtins()
            .get(name)
            .is_some_and(|b| !b.disabled && b.special_builtin);
    !special && shell.funcs().get(name).is_some()
}

/// Whether the last command line of session `session` was abandoned by a refused call; clears
/// the mark.
pub(crate) fn take_abandoned_line(session: u64) -> bool {
    with_session(session, |s| std::mem::take(&mut s.line_abandoned)).unwrap_or(false)
}

/// `__shellwright_refused <key> <xtracefd words> "$_"`: the stand-in's body.
fn refused(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let shell = ctx.shell;
        if let Some(aside) = args.get(2..args.len().saturating_sub(1)) {
            restore_xtracefd(shell, aside);
        }
        let key = args.get(1).and_then(|a| a.to_string().parse::<u64>().ok());
        let top_level = !shell.is_subshell();
        let refusal = with_shell(shell, |s| {
            s.line_abandoned |= top_level;
            key.and_then(|key| s.refusals.remove(&key))
        })
        .flatten();
        if let Some(refusal) = refusal {
            if let Some(slot) = shell.func_mut(&refusal.function) {
                *slot = refusal.original;
            }
            set_bash_command(shell, refusal.command_line);
        }
        let mut result = ExecutionResult::new(1);
        result.next_control_flow = ExecutionControlFlow::ExitShell;
        Ok(result)
    })
}
