//! Background jobs (`cmd &`) that a stopped run takes down with it, and only that run.
//!
//! brush runs a list started with `&` as a task of the session's runtime, with a copy of the
//! shell. The stages rewrite (see `stages`) replaces every such list by a call to our builtin
//! `__shellwright_job <session> <index>`, which runs the original list in that task and gives it
//! up the moment the run that started it is stopped: a job waiting on a process drops the wait
//! before the run's processes are killed, so it never goes on to its next command (whose
//! redirections brush would open before any hook could stop it). Jobs of other runs live on
//! between runs, as an interactive shell's do, until the session ends.

use std::collections::HashMap;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::common::JOB_BUILTIN;
use super::{builtins, stages, state};

/// The status of a job its run's stop ended (bash: 128 + SIGTERM).
const STOPPED_STATUS: u8 = 143;

/// Adds the job builtin.
pub(crate) fn install_builtin(table: &mut HashMap<String, Registration<DefaultShellExtensions>>) {
    builtins::add_internal(table, JOB_BUILTIN, run_job);
}

fn run_job(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let Some(command) = stages::registered(&args) else {
            return Ok(ExecutionResult::new(2));
        };
        let ExecutionContext {
            shell, mut params, ..
        } = ctx;
        stages::enter_call(shell, &mut params, &args);
        // The run that started the job: the one running while the job's task first runs.
        let stop = state::with_shell(shell, |s| s.run_token.clone()).flatten();
        let program = stages::program_of(&command);
        let ran = match stop {
            Some(stop) => tokio::select! {
                biased;
                _ = stop.cancelled() => return Ok(ExecutionResult::new(STOPPED_STATUS)),
                ran = shell.run_program(program, &params) => ran,
            },
            None => shell.run_program(program, &params).await,
        };
        Ok(ExecutionResult::new(stages::status_of(shell, &params, ran)))
    })
}
