//! `cd DIR` without an option parser when there is nothing for one to parse.
//!
//! The stock `cd` reads its options with clap, which builds its whole command-line parser on every
//! call: most of the time of `Shell.run('cd /tmp')` done in place. With one operand that is no
//! option and `set -P` off, the stock builtin enters the directory as given (brush checks that it
//! is one, then keeps it normalised in `PWD`, the previous one in `OLDPWD`); ours does exactly
//! that itself, and fails as the stock one does. Anything else (`cd`, `cd -`, `-P`, `-L`, several
//! operands) goes to the stock builtin.

use brush_core::commands::CommandArg;
use brush_core::error::ErrorKind;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{operands, run_or_fail, stock};

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    let words = operands(&args);
    let resolves_links = ctx
        .shell
        .options()
        .do_not_resolve_symlinks_when_changing_dir;
    let [dir] = words.as_slice() else {
        return run_or_fail(stock("cd"), ctx, args);
    };
    if dir.starts_with('-') || resolves_links {
        return run_or_fail(stock("cd"), ctx, args);
    }
    let dir = dir.clone();
    Box::pin(async move {
        match ctx.shell.set_working_dir(&dir) {
            Ok(()) => Ok(ExecutionResult::success()),
            // As the stock builtin's failure reaches brush, which prints and maps it.
            Err(e) => Err(ErrorKind::BuiltinError(Box::new(e), ctx.command_name.clone()).into()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::stock_and_ours as both;

    #[tokio::test]
    async fn enters_and_fails_as_the_stock_cd_does() {
        let script = "cd /tmp; echo \"$PWD|$OLDPWD|$?\"; cd /definitely/not/here; echo $?; \
                      cd /etc/passwd; echo $?; cd /tmp/../usr/./; echo \"$PWD\"; cd -; cd -P /; \
                      echo \"$PWD\"; cd; echo \"$PWD\"";
        let (stock, ours) = both(script).await;
        assert_eq!(ours, stock);
        assert!(ours.starts_with("/tmp|"), "{ours}");
    }
}
