//! shellwright-proc: cancellation and process trees.
//!
//! Owns what every runtime in Shellwright needs: [`CancelToken`], the one-shot signal that a run
//! was aborted or timed out, with the one place a run's deadline is armed
//! ([`CancelToken::deadline`]); [`Outcome`], how a run ended; the process table ([`ProcessTable`]); the one way processes are
//! stopped (SIGTERM, a grace, SIGKILL: [`stop`] over [`StopTargets`]); finding everything one run
//! started, by its tag, its tree, and the sessions and groups it created ([`RunScope`]); and
//! [`Process`], one process pinned to its identity with the tree operations the JS `Process`
//! class exposes (`kill_tree`, `terminate`, `wait_for_exit`); and what a process is blocked
//! waiting for, from the kernel ([`waits`]); the TCP ports processes listen on
//! ([`listening_ports`]); and the [`guardian`] that ends every process a run of this host started
//! once the host is gone (on Windows, a Job Object does that: `ProcessJob`).
//! It does not spawn processes (the shell and PTY crates do).
//!
//! Processes are identified by pid *and* start time ([`ProcessId`]), so a pid reused by an unrelated
//! process is never signalled. Linux reads `/proc` directly (it needs the process group and the
//! start time in clock ticks, which `sysinfo` does not expose); other platforms enumerate through
//! `sysinfo`.

mod cancel;
pub mod guardian;
#[cfg(windows)]
mod job;
mod outcome;
mod process;
mod scope;
mod signal;
mod sockets;
mod stop;
mod tree;
pub mod waits;

pub use cancel::{CancelReason, CancelToken, TimeoutGuard};
#[cfg(windows)]
pub use job::{ProcessJob, host_child_pids};
pub use outcome::Outcome;
pub use process::{Cancelled, Process, ProcessStatus, TerminateOptions};
pub use scope::{
    RUN_TAG_VARIABLE, RunRoots, RunScope, processes_tagged, processless_run_tag, stop_tagged,
    tag_within,
};
pub use signal::{SIGKILL, signal_group, signal_name};
pub use sockets::listening_ports;
pub use stop::{StopTargets, stop};
pub use tree::{
    ProcessId, ProcessInfo, ProcessTable, environ_contains, is_alive, now_as_start_time,
    process_info, send_signal,
};
