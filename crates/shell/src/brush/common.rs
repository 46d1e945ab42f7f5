//! What every part of the brush integration shares, and nothing of it depends on: the names of
//! our internal builtins, how a shell finds the session it belongs to, and the pieces of text and
//! state that our hidden calls use to stay out of `set -x` traces and `BASH_COMMAND`.
//!
//! A leaf: it uses brush-core alone, so that the hooks, the pipeline stages, the `$-` rewrite and
//! the builtins can all use it without using each other.

use brush_core::builtins::CommandExecuteFunc;
use brush_core::commands::CommandArg;
use brush_core::env::{EnvironmentLookup, EnvironmentScope};
use brush_core::extensions::DefaultShellExtensions;
use brush_core::traps::{TrapHandlerConfig, TrapSignal};
use brush_core::variables::ShellValueLiteral;
use brush_core::{Shell, ShellFd};

/// A builtin's function, as brush registers it.
pub(crate) type BuiltinFn = CommandExecuteFunc<DefaultShellExtensions>;

/// Our DEBUG trap's builtin: the cancellation point before every simple command (see `hooks`).
pub(crate) const DEBUG_TRAP_BUILTIN: &str = "__shellwright_debug_trap";
/// The builtin a pipeline stage is replaced by (see `stages`).
pub(crate) const STAGE_BUILTIN: &str = "__shellwright_stage";
/// The builtin that prints `T` when the user turned functrace on (see `flags`).
pub(crate) const FLAGS_BUILTIN: &str = "__shellwright_flags";
/// The builtin a function call refused by `FUNCNEST` runs instead (see `funcnest`).
pub(crate) const REFUSED_BUILTIN: &str = "__shellwright_refused";

/// Whether `name` is one of the builtins only our hooks call, which bash does not have.
pub(crate) fn is_internal(name: &str) -> bool {
    [
        DEBUG_TRAP_BUILTIN,
        STAGE_BUILTIN,
        FLAGS_BUILTIN,
        REFUSED_BUILTIN,
    ]
    .contains(&name)
}

/// The id of the session `shell` belongs to: it is written in our DEBUG trap's command text,
/// which every clone of the session's shell (jobs, subshells, stages) carries.
pub(crate) fn session_of(shell: &Shell) -> Option<u64> {
    session_of_traps(shell.traps())
}

/// [`session_of`], from a shell's trap table.
pub(crate) fn session_of_traps(traps: &TrapHandlerConfig) -> Option<u64> {
    let handler = traps.get_handler(TrapSignal::Debug)?;
    handler
        .command
        .strip_prefix(DEBUG_TRAP_BUILTIN)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Words that, expanded as arguments of a call of ours, keep that call's own `set -x` trace line
/// out of `BASH_XTRACEFD`'s descriptor: the first keeps the variable's value; the second, there
/// only when the value is not empty, sets it to -1, which names no descriptor, so brush writes
/// the trace line to the call's stderr (which the call sends to `/dev/null`). The builtin then
/// puts the value back with [`restore_xtracefd`] before anything else.
pub(crate) const XTRACEFD_ASIDE: &str =
    "\"${BASH_XTRACEFD-}\" ${BASH_XTRACEFD:+$((BASH_XTRACEFD=-1))}";

/// Puts back the `BASH_XTRACEFD` that [`XTRACEFD_ASIDE`] set aside, if it did: `words` are the
/// two words as they expanded (one word when it did nothing).
pub(crate) fn restore_xtracefd(shell: &mut Shell, words: &[CommandArg]) {
    if let [saved, _aside] = words {
        let _ = shell.env_mut().update_or_add(
            "BASH_XTRACEFD",
            ShellValueLiteral::Scalar(saved.to_string()),
            |_| Ok(()),
            EnvironmentLookup::Anywhere,
            EnvironmentScope::Global,
        );
    }
}

/// The descriptor a path names as the process's own: `/dev/fd/N`, `/proc/self/fd/N`,
/// `/dev/stdin`, `/dev/stdout` or `/dev/stderr`. Opened or tested by path, it would be the host
/// process's descriptor, not the run's.
pub(crate) fn descriptor_path(path: &str) -> Option<ShellFd> {
    match path {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => {
            let number = path
                .strip_prefix("/dev/fd/")
                .or_else(|| path.strip_prefix("/proc/self/fd/"))?;
            if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            number.parse().ok()
        }
    }
}

/// The line of the user's code about to run, seen from our DEBUG hook: that of the innermost
/// frame that is not a trap handler's (the hook runs in one).
pub(crate) fn user_line(shell: &Shell) -> Option<usize> {
    shell
        .call_stack()
        .iter()
        .find(|frame| !frame.frame_type.is_trap_handler())
        .and_then(|frame| frame.current_line())
}

/// Sets `BASH_COMMAND`, as brush does before each simple command, to `command_line`.
pub(crate) fn set_bash_command(shell: &mut Shell, command_line: String) {
    let _ = shell.env_mut().update_or_add(
        "BASH_COMMAND",
        ShellValueLiteral::Scalar(command_line),
        |_| Ok(()),
        EnvironmentLookup::Anywhere,
        EnvironmentScope::Global,
    );
}
