//! shellwright-shell: a persistent, in-process bash-compatible shell built on brush-core.
//!
//! Owns the session runtime: the environment model ([`env`](mod@env)); creating and keeping a
//! brush session alive between runs ([`PersistentShell`], runs queued in call order, on the
//! session's own big-stack thread and runtime: `worker`); the three paths a run takes (the
//! `session` module: queued, in place, one program spawned directly); everything added inside
//! brush — cancellation hooks, concurrent pipeline stages, corrected builtins, host isolation —
//! behind one install point (the `brush` module); streaming one merged stdout/stderr transcript
//! with incremental UTF-8 decoding and the drain rule ([`output`]); the output minimizer's
//! capture and result for a run (the filters themselves are `shellwright-minimize`'s); the record
//! of a shell's runs ([`history`]) and the read-only terminal view of them in VS Code's OSC 633
//! dialect ([`mirror`], written with `shellwright-term`'s encoder); and the bounds that keep any
//! input from crashing or hanging the host ([`nesting`], [`limits`]). It knows nothing of Node;
//! `shellwright-node` wraps it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), shellwright_shell::ShellError> {
//! use shellwright_shell::{PersistentShell, RunRequest, SessionOptions};
//! let shell = PersistentShell::new(SessionOptions::default());
//! let request = RunRequest { command: "cd /tmp && echo $PWD".into(), ..Default::default() };
//! let result = shell.run(request, Box::new(|chunk| print!("{chunk}"))).await?;
//! assert_eq!(result.exit_code(), Some(0));
//! # Ok(()) }
//! ```

// brush's integration (hooks, concurrent stages, spawn policy, isolation) and the paths that
// rely on it are Unix-only; a Windows session runs brush as it comes (see `session::windows`).
#[cfg(unix)]
mod brush;
pub mod env;
mod error;
pub mod history;
// A Windows session records no jobs (brush runs `cmd &` as it comes), so most of this is unused
// there.
#[cfg_attr(windows, allow(dead_code))]
pub mod jobs;
pub mod limits;
mod minimizing;
pub mod mirror;
pub mod nesting;
pub mod output;
#[cfg(unix)]
mod parse_cache;
#[cfg(unix)]
mod path_walk;
mod persistent;
mod session;
mod worker;

pub use error::ShellError;
pub use history::{History, HistoryEntry, HistoryLimits};
pub use jobs::ShellJob;
pub use mirror::Mirror;
pub use persistent::{PersistentShell, execute_once};
#[doc(hidden)]
#[cfg(unix)]
pub use session::direct_spawns;
pub use session::{RunRequest, RunResult, SessionOptions, ShellEnvironment};
