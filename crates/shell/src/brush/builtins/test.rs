//! `test` and `[` on the paths of the process's own descriptors.
//!
//! The stock builtin stats `/dev/fd/N`, `/proc/self/fd/N` and `/dev/stdin|stdout|stderr` like any
//! path, and in a session the process is the host: `test -p /dev/fd/6` was true because the host
//! had a pipe at 6, whatever the run had there. A unary file test on such a path is made against
//! the run's descriptor instead: by the path of the descriptor that holds the run's file when the
//! run has N open, by a path that does not exist when it has not (so `-e` is false, as in bash).

use std::os::fd::AsRawFd as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{run_or_fail, stock};
use crate::brush::common::descriptor_path;

/// What a descriptor the run has not open is tested as: no such file.
const NOT_OPEN: &str = "/proc/self/fd/-1";

/// The unary operators that test a file by its path.
const FILE_TESTS: [&str; 20] = [
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-u", "-w", "-x", "-G",
    "-L", "-N", "-O", "-S",
];

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let mut args = args;
        // The run's files whose descriptors the rewritten paths name, open until the test ran.
        let mut held = Vec::new();
        for at in 1..args.len() {
            let tests_file = FILE_TESTS.contains(&args[at - 1].to_string().as_str());
            let Some(fd) = descriptor_path(&args[at].to_string()).filter(|_| tests_file) else {
                continue;
            };
            let file = ctx.params.try_fd(ctx.shell, fd);
            let path = match file.as_ref().map(|f| f.try_borrow_as_fd()) {
                Some(Ok(raw)) => format!("/proc/self/fd/{}", raw.as_raw_fd()),
                _ => NOT_OPEN.to_string(),
            };
            held.extend(file);
            args[at] = CommandArg::from(path);
        }
        let builtin = stock(&ctx.command_name);
        let result = run_or_fail(builtin, ctx, args).await;
        drop(held);
        result
    })
}
