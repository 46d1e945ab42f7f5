//! `jobs`, listing each job as the command the user wrote.
//!
//! Background lists run through a call of ours (see `brush::jobs`), which the stock builtin would
//! list as that call; ours names the jobs first, then hands over to it.

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::stock;
use crate::brush::job_table::name_jobs;

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    name_jobs(ctx.shell);
    match stock("jobs") {
        Some(stock) => stock(ctx, args),
        None => Box::pin(async { Ok(ExecutionResult::new(2)) }),
    }
}
