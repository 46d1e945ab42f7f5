//! shellwright-proc: cancellation and process trees.
//!
//! Owns two things every runtime in Shellwright needs: [`CancelToken`], the one-shot signal that a run
//! was aborted or timed out, and the process-tree code that finds and stops what a run started
//! ([`ProcessTable`], [`terminate_all`]). It does not spawn processes (the shell and PTY crates do).
//!
//! Processes are identified by pid *and* start time ([`ProcessId`]), so a pid reused by an unrelated
//! process is never signalled. Linux reads `/proc` directly (it needs the process group and the
//! start time in clock ticks, which `sysinfo` does not expose); other platforms enumerate through
//! `sysinfo`.

mod cancel;
mod tree;

pub use cancel::{CancelReason, CancelToken};
pub use tree::{
    ProcessId, ProcessInfo, ProcessTable, environ_contains, is_alive, send_signal, terminate_all,
};
