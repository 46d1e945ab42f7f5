//! shellwright-proc: cancellation and process trees.
//!
//! Owns what every runtime in Shellwright needs: [`CancelToken`], the one-shot signal that a run
//! was aborted or timed out; the process-tree code that finds and stops what a run started
//! ([`ProcessTable`], [`terminate_all`], [`signal_group`]); and [`Process`], one process pinned to
//! its identity with the tree operations the JS `Process` class exposes (`kill_tree`, `terminate`,
//! `wait_for_exit`).
//! It does not spawn processes (the shell and PTY crates do).
//!
//! Processes are identified by pid *and* start time ([`ProcessId`]), so a pid reused by an unrelated
//! process is never signalled. Linux reads `/proc` directly (it needs the process group and the
//! start time in clock ticks, which `sysinfo` does not expose); other platforms enumerate through
//! `sysinfo`.

mod cancel;
mod process;
mod signal;
mod tree;

pub use cancel::{CancelReason, CancelToken, TimeoutGuard};
pub use process::{Cancelled, Process, ProcessStatus, TerminateOptions};
pub use signal::{signal_group, signal_name};
pub use tree::{
    ProcessId, ProcessInfo, ProcessTable, environ_contains, is_alive, process_info, send_signal,
    terminate_all,
};
