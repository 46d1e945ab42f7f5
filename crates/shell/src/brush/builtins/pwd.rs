//! `pwd` without an option parser when there is nothing for one to parse.
//!
//! The stock `pwd` reads its options with clap, which builds its whole command-line parser on
//! every call. With no operand and `set -P` off, it prints the directory the shell keeps, touching
//! no file; ours prints exactly that itself. Anything else (`-P`, `-L`, operands) goes to the stock
//! builtin.

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{print_line, run_or_fail, stock};

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    if args.len() > 1
        || ctx
            .shell
            .options()
            .do_not_resolve_symlinks_when_changing_dir
    {
        return run_or_fail(stock("pwd"), ctx, args);
    }
    let directory = ctx.shell.working_dir().to_string_lossy().into_owned();
    print_line(ctx, directory)
}

#[cfg(test)]
mod tests {
    use super::super::stock_and_ours as both;

    #[tokio::test]
    async fn prints_what_the_stock_pwd_prints() {
        let script = "cd /tmp; pwd; cd /usr/../etc; pwd; pwd -P; pwd -L; set -P; pwd";
        let (stock, ours) = both(script).await;
        assert_eq!(ours, stock);
        assert!(ours.starts_with("/tmp\n/etc\n"), "{ours}");
    }
}
