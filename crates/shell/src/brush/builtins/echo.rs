//! `echo` without an option parser when there is nothing for one to parse.
//!
//! The stock `echo` reads its options with clap, which builds its whole command-line parser on
//! every call: that was most of the time of a builtin-only run such as `echo hi`. When no argument
//! starts with `-`, there are no options and the stock builtin prints its arguments joined by
//! spaces and a newline; ours prints exactly that itself. Anything else (`-n`, `-e`, `--`, `-x`)
//! goes to the stock builtin, options and all.

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{operands, print_line, run_or_fail, stock};

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    let words = operands(&args);
    if words.iter().any(|word| word.starts_with('-')) {
        return run_or_fail(stock("echo"), ctx, args);
    }
    print_line(ctx, words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::super::stock_and_ours as both;

    #[tokio::test]
    async fn prints_what_the_stock_echo_prints() {
        let script =
            r#"echo hi; echo; echo "a  b" c ''; echo -n x; echo -e 'y\tz'; echo -- -; echo -x a"#;
        let (stock, ours) = both(script).await;
        assert_eq!(ours, stock);
        assert_eq!(ours, "hi\n\na  b c \nxy\tz\n-- -\n-x a\n");
    }
}
