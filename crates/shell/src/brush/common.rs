//! What every part of the brush integration shares, and nothing of it depends on: the names of
//! our internal builtins, how a shell finds the session it belongs to and the limits it sets for
//! its processes (both in our DEBUG trap's text), and the pieces of text and state that our
//! hidden calls use to stay out of `set -x` traces and `BASH_COMMAND`.
//!
//! A leaf: it uses brush-core and the spawn policy (itself a leaf) alone, so that the hooks, the
//! pipeline stages, the `$-` rewrite and the builtins can all use it without using each other.

use brush_core::builtins::CommandExecuteFunc;
use brush_core::commands::CommandArg;
use brush_core::env::{EnvironmentLookup, EnvironmentScope};
use brush_core::extensions::DefaultShellExtensions;
use brush_core::traps::{TrapHandlerConfig, TrapSignal};
use brush_core::variables::ShellValueLiteral;
use brush_core::{Shell, ShellFd};

use super::spawn_policy::{self, RunLimits};

/// A builtin's function, as brush registers it.
pub(crate) type BuiltinFn = CommandExecuteFunc<DefaultShellExtensions>;

/// Our DEBUG trap's builtin: the cancellation point before every simple command (see `hooks`).
pub(crate) const DEBUG_TRAP_BUILTIN: &str = "__shellwright_debug_trap";
/// The builtin a pipeline stage is replaced by (see `stages`).
pub(crate) const STAGE_BUILTIN: &str = "__shellwright_stage";
/// The builtin that prints `T` when the user turned functrace on (see `flags`).
pub(crate) const FLAGS_BUILTIN: &str = "__shellwright_flags";
/// The builtin a background job (`cmd &`) is replaced by (see `jobs`).
pub(crate) const JOB_BUILTIN: &str = "__shellwright_job";
/// The builtin that records a background job just before it starts (see `jobs`).
pub(crate) const JOB_RECORD_BUILTIN: &str = "__shellwright_job_record";
/// The builtin that prints `$!`, the process of the last job the shell started (see `jobs`).
pub(crate) const LAST_JOB_PID_BUILTIN: &str = "__shellwright_last_job_pid";
/// The variable through which a job's record reaches the copy of the shell it runs in.
pub(crate) const JOB_SERIAL_VARIABLE: &str = "__SHELLWRIGHT_JOB";
/// The variable that names, in the shell that started it and in that shell's later copies, the
/// last job it started (its serial), for `$!`.
pub(crate) const LAST_JOB_VARIABLE: &str = "__SHELLWRIGHT_LAST_JOB";
/// The variables of ours a shell holds, which the builtins that list variables do not show.
pub(crate) const HIDDEN_VARIABLES: [&str; 3] = [
    shellwright_proc::RUN_TAG_VARIABLE,
    JOB_SERIAL_VARIABLE,
    LAST_JOB_VARIABLE,
];
/// The builtin a stopped run's diverted command runs (see `unwind`).
pub(crate) const UNWIND_BUILTIN: &str = "__shellwright_unwind";
/// The builtin a function call refused by `FUNCNEST` runs instead (see `funcnest`).
pub(crate) const REFUSED_BUILTIN: &str = "__shellwright_refused";

/// Whether `name` is one of the builtins only our hooks call, which bash does not have.
pub(crate) fn is_internal(name: &str) -> bool {
    [
        DEBUG_TRAP_BUILTIN,
        STAGE_BUILTIN,
        JOB_BUILTIN,
        JOB_RECORD_BUILTIN,
        LAST_JOB_PID_BUILTIN,
        FLAGS_BUILTIN,
        UNWIND_BUILTIN,
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
    parse_trap_key(trap_key_of(traps)?).map(|(session, _)| session)
}

/// The comment that ends our DEBUG trap's command ([`trap_command`]), which says what a shell is:
/// the session it belongs to and the resource limits it sets for the processes it starts
/// (`ulimit`), `<session>` or `<session>,<limits>` ([`RunLimits::encode`]). It lives in the trap
/// so that every clone of a shell carries its own, as a subshell's `ulimit` must not change its
/// parent's.
pub(crate) fn trap_key(session: u64, limits: &RunLimits) -> String {
    if limits.is_host() {
        session.to_string()
    } else {
        format!("{session},{}", limits.encode())
    }
}

/// Reads a [`trap_key`].
pub(crate) fn parse_trap_key(key: &str) -> Option<(u64, RunLimits)> {
    let (session, limits) = key.split_once(',').unwrap_or((key, ""));
    Some((session.parse().ok()?, RunLimits::decode(limits)?))
}

/// Our DEBUG trap's command: the builtin with `words` (its arguments and redirections), then the
/// [`trap_key`] in a comment.
///
/// The trap runs before every simple command, and brush expands each of its words every time:
/// the key rides in the comment, which the parser drops, and the builtin's name is quoted, since
/// brush asks its glob parser about every unquoted word. Words cost the most of an arithmetic
/// `for` loop's time.
pub(crate) fn trap_command(key: &str, words: &str) -> String {
    format!("'{DEBUG_TRAP_BUILTIN}' {words} #{key}")
}

/// The words and the key of a [`trap_command`].
fn split_trap_command(command: &str) -> Option<(&str, &str)> {
    command
        .strip_prefix('\'')?
        .strip_prefix(DEBUG_TRAP_BUILTIN)?
        .strip_prefix("' ")?
        .rsplit_once(" #")
}

/// The [`trap_key`] in a shell's trap table.
pub(crate) fn trap_key_of(traps: &TrapHandlerConfig) -> Option<&str> {
    let handler = traps.get_handler(TrapSignal::Debug)?;
    split_trap_command(&handler.command).map(|(_, key)| key)
}

/// The limits `shell` sets for the processes it starts (the host's when it sets none).
pub(crate) fn run_limits(shell: &Shell) -> RunLimits {
    trap_key_of(shell.traps())
        .and_then(parse_trap_key)
        .map_or(RunLimits::HOST, |(_, limits)| limits)
}

/// Gives the current thread the limits of `shell` for what it forks next (see [`spawn_policy`]):
/// for the builtins that start a program without our DEBUG hook before it.
pub(crate) fn adopt_run_limits(shell: &Shell) {
    spawn_policy::set_thread_limits(run_limits(shell));
    // What such a builtin starts is not reported as a job's first process: the job the thread ran
    // last may be another shell's.
    spawn_policy::set_thread_job(None);
}

/// Makes `limits` the ones `shell` (and the clones made of it from now on) sets for the
/// processes it starts, and the current thread's for the next fork. Does nothing to a shell that
/// is no session's.
pub(crate) fn set_run_limits(shell: &mut Shell, limits: RunLimits) {
    let Some(handler) = shell.traps().get_handler(TrapSignal::Debug).cloned() else {
        return;
    };
    let Some(session) = session_of_traps(shell.traps()) else {
        return;
    };
    let Some((words, _)) = split_trap_command(&handler.command) else {
        return;
    };
    let command = trap_command(&trap_key(session, &limits), words);
    shell
        .traps_mut()
        .register_handler(TrapSignal::Debug, command, handler.source_info);
    spawn_policy::set_thread_limits(limits);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trap_command_gives_back_its_words_and_key() {
        let words = "\"$BASH_COMMAND\" \"${BASH_XTRACEFD-}\" \"$_\" 255>&2 2>/dev/null";
        for key in ["7", "7,7=64:64,2=0:18446744073709551615"] {
            let command = trap_command(key, words);
            assert_eq!(
                command,
                format!("'__shellwright_debug_trap' {words} #{key}")
            );
            assert_eq!(split_trap_command(&command), Some((words, key)));
        }
    }

    #[test]
    fn a_command_that_is_not_our_trap_has_no_key() {
        for command in [
            "echo hi",
            "__shellwright_debug_trap \"$BASH_COMMAND\" #7",
            "'__shellwright_debug_trap' \"$BASH_COMMAND\"",
            "'__shellwright_debug_trapx' \"$_\" #7",
        ] {
            assert_eq!(split_trap_command(command), None, "{command}");
        }
    }
}
