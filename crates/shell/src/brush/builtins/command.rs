//! `command`, which starts the program it names without a simple command of its own, so without
//! our DEBUG hook before it: it gives the thread it runs on its shell's limits first (see
//! [`spawn_policy`](crate::brush::spawn_policy)). It matters where brush runs the builtin on
//! another thread than the hook's, as it does for the last stage of a pipeline. The rest is the
//! stock builtin.

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{run_or_fail, stock};
use crate::brush::common::adopt_run_limits;

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    adopt_run_limits(ctx.shell);
    run_or_fail(stock("command"), ctx, args)
}
