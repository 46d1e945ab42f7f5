//! `suspend`, which must never stop the host.
//!
//! The stock builtin sends SIGSTOP to its own process, which is the host. A session has no job
//! control, so ours answers as `bash -c` answers a plain `suspend`; `suspend -f` (which would
//! stop a `bash -c` anyway) gets the same answer, since there is no process of the session's own
//! to stop.

use std::io::Write as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{error_prefix, operands};

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let prefix = error_prefix(ctx.shell);
        if let Some(bad) = operands(&args)
            .into_iter()
            .find(|arg| arg != "-f" && arg != "--")
        {
            let _ = writeln!(ctx.stderr(), "{prefix}suspend: {bad}: invalid option");
            let _ = writeln!(ctx.stderr(), "suspend: usage: suspend [-f]");
            return Ok(ExecutionResult::new(2));
        }
        let _ = writeln!(
            ctx.stderr(),
            "{prefix}suspend: cannot suspend: no job control"
        );
        Ok(ExecutionResult::new(1))
    })
}
