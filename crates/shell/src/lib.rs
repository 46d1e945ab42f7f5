//! shellwright-shell: a persistent, in-process bash-compatible shell built on brush-core.
//!
//! Owns the session runtime: the environment model ([`env`](mod@env)), creating and
//! keeping a brush session alive between runs ([`PersistentShell`]), streaming one merged
//! stdout/stderr transcript with incremental UTF-8 decoding and the drain rule ([`output`]),
//! cancellation of builtin-only loops and of every process a run started ([`hooks`]), runs
//! of one plain external program spawned without forking the host ([`direct_spawns`]),
//! `applyBashFixups` ([`fixups`]), the record of a shell's runs ([`history`]) and the read-only
//! terminal view of them in VS Code's OSC 633 dialect ([`mirror`], written with
//! `shellwright-term`'s encoder), and the bounds that keep any input from crashing or hanging the
//! host: each session on its own big-stack thread and runtime (which also bounds its in-process
//! jobs), nesting limits ([`nesting`], [`limits`]). It knows nothing of Node; `shellwright-node`
//! wraps it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), shellwright_shell::ShellError> {
//! use shellwright_shell::{PersistentShell, RunRequest, SessionOptions};
//! let shell = PersistentShell::new(SessionOptions::default());
//! let request = RunRequest { command: "cd /tmp && echo $PWD".into(), ..Default::default() };
//! let result = shell.run(request, Box::new(|chunk| print!("{chunk}"))).await?;
//! assert_eq!(result.exit_code, Some(0));
//! # Ok(()) }
//! ```

mod builtins;
mod direct;
pub mod env;
mod error;
pub mod fixups;
mod flags;
pub mod history;
pub mod hooks;
mod inline;
mod isolation;
pub mod limits;
pub mod minimize;
pub mod mirror;
pub mod nesting;
pub mod output;
mod parse_cache;
mod persistent;
mod session;
mod stages;
mod worker;

#[doc(hidden)]
pub use direct::direct_spawns;
pub use error::ShellError;
pub use fixups::{Fixups, apply_bash_fixups};
pub use history::{History, HistoryEntry};
pub use mirror::Mirror;
pub use persistent::{PersistentShell, execute_once};
pub use session::{RunRequest, RunResult, SessionOptions};
