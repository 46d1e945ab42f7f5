//! One brush-core session: its creation (environment, builtins, snapshot) and what every run in
//! it shares — its result, its command scope ([`scope`]), its stdio ([`stdio`]) and how it ends
//! ([`Session::conclude`]). A run takes one of three paths, one file each:
//!
//! - [`queued`]: on the session's thread, output on a pipe, cancellable at every simple command;
//! - [`inline`]: done in place on the caller's thread, for the builtins [`qualify`] admits;
//! - [`direct`]: inside a queued run, one plain external program spawned without brush (by
//!   [`spawn`]).
//!
//! A new execution path is a file here, chosen in [`queued`]'s `run` or by the caller (as the
//! in-place path is, by `PersistentShell::try_run_inline`).

mod common;
#[cfg(unix)]
mod direct;
#[cfg(unix)]
mod inline;
#[cfg(unix)]
pub(crate) mod qualify;
#[cfg(unix)]
mod queued;
mod scope;
#[cfg(unix)]
mod spawn;
#[cfg(unix)]
mod stdio;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

pub(crate) use common::{CreateStopped, RunOutcome, StoppedRuns};
pub use common::{RunRequest, RunResult, SessionOptions};
// Re-exported (not merely used) so that the children's `super::` paths name where these live.
pub(in crate::session) use common::{
    build_shell, exported, panic_message, reported, starting_oldpwd, too_deep,
};
#[cfg(unix)]
pub use direct::direct_spawns;
pub use scope::ShellEnvironment;
#[cfg(unix)]
pub(in crate::session) use unix::{EXIT_TRAP_AFTER_CANCEL, Ended, Stops, is_alias_or_function};
#[cfg(unix)]
pub(crate) use unix::{Session, terminate_run};
#[cfg(windows)]
pub(crate) use windows::{Session, terminate_run};
