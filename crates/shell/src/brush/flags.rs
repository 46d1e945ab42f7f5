//! `$-` as the user set the options, without the `functrace` flag our hooks force on.
//!
//! The cancellation hook needs brush's functrace on (see [`hooks`](super::hooks)), and brush
//! builds `$-` straight from its options, so it would read `hBTc` where bash has `hBc`. We parse
//! each run's command ourselves, so the walk that rewrites pipeline stages ([`stages`]) also
//! replaces every `$-` and `${-}` of the run's words (see `words`) by `${-//T/…}`, brush's
//! flags with their `T` replaced by a command substitution of our builtin
//! `__shellwright_flags`, which prints `T` only when the user turned functrace on. The other
//! flags are expanded in the shell itself (a command substitution's subshell has errexit off).
//! The builtin's own `set -x` trace line goes to `/dev/null`, also when `BASH_XTRACEFD` is set
//! (the variable is set aside inside the substitution's subshell only).
//! Code brush parses itself (`eval` strings, sourced files, traps) and the other forms of the
//! parameter (`${#-}`, `${-:0:1}`, …) still show brush's own flags.
//!
//! [`stages`]: super::stages

use std::collections::HashMap;
use std::io::Write as _;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::builtins;
use super::common::FLAGS_BUILTIN;
use super::state;

/// What `$-` is replaced by (see `words`).
pub(crate) const REPLACEMENT: &str =
    "${-//T/$(__shellwright_flags ${BASH_XTRACEFD:+$((BASH_XTRACEFD=-1))} 2>/dev/null)}";

/// Adds the flags builtin.
pub(crate) fn install_builtin(
    builtins: &mut HashMap<String, Registration<DefaultShellExtensions>>,
) {
    builtins::add_internal(builtins, FLAGS_BUILTIN, print_flags);
}

fn print_flags(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    _args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        if state::user_functrace(ctx.shell) {
            write!(ctx.stdout(), "T")?;
        }
        Ok(ExecutionResult::success())
    })
}
