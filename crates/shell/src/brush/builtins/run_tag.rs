//! The run's tag, `SHELLWRIGHT_RUN`, kept out of the user's sight in the shell.
//!
//! Every run exports `SHELLWRIGHT_RUN=<tag>` to the processes it starts: it is how the run's
//! processes are found and stopped, the one mark a process keeps through `setsid`, double forks
//! and reparenting. It is no variable of the user's, so the builtins that list variables —
//! `declare`, `typeset`, `export` and `set` — run with it set aside (it lives in the global scope
//! for the run, see `session::scope`), `compgen` drops it ([`corrected`](super::corrected)), and
//! `unset` leaves it alone (a child started after it would not be found). What the child
//! processes see is their environment: `env`, `printenv` and `/proc/<pid>/environ` still show it.

use brush_core::commands::CommandArg;
use brush_core::env::EnvironmentScope;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;
use shellwright_proc::RUN_TAG_VARIABLE;

use crate::brush::common::HIDDEN_VARIABLES;

use super::{export, run_or_fail, stock};

pub(super) fn declare(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(without_tag("declare", ctx, args))
}

pub(super) fn typeset(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(without_tag("typeset", ctx, args))
}

/// `export`: declarations alone without the stock builtin's option parser ([`mod@export`]), else the
/// stock builtin.
pub(super) fn export(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        match export::plain_declarations(&args) {
            Some(declarations) => export::export_plainly(ctx, declarations),
            None => without_tag("export", ctx, args).await,
        }
    })
}

pub(super) fn set(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(without_tag("set", ctx, args))
}

/// `unset`, which leaves the tag in place (unless it unsets functions).
pub(super) fn unset(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    let functions = args
        .iter()
        .skip(1)
        .map(ToString::to_string)
        .take_while(|word| word.starts_with('-') && word != "--")
        .any(|option| option.contains('f'));
    let args = if functions {
        args
    } else {
        args.into_iter()
            .filter(|arg| arg.to_string() != RUN_TAG_VARIABLE)
            .collect()
    };
    run_or_fail(stock("unset"), ctx, args)
}

/// Runs the stock builtin `name` with the tag set aside, and the variables a job's record is
/// handed over in and `$!` finds the last job by (see `brush::jobs`).
async fn without_tag(
    name: &str,
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> Result<ExecutionResult, brush_core::Error> {
    let ExecutionContext {
        shell,
        command_name,
        params,
    } = ctx;
    let mut aside = Vec::new();
    for hidden in HIDDEN_VARIABLES {
        if let Some((EnvironmentScope::Global, _)) = shell.env().get(hidden)
            && let Some(variable) = shell.env_mut().unset(hidden)?
        {
            aside.push((hidden, variable));
        }
    }
    let context = ExecutionContext {
        shell: &mut *shell,
        command_name,
        params,
    };
    let result = run_or_fail(stock(name), context, args).await;
    for (hidden, variable) in aside {
        shell
            .env_mut()
            .add(hidden, variable, EnvironmentScope::Global)?;
    }
    result
}
