//! The output pipe of one run: one pipe shared by stdout and stderr (so the transcript keeps
//! arrival order), read on its own thread (on Unix, the rest is read where the run ends once no
//! writer holds the pipe), decoded incrementally, and drained by the rule below.
//! After the foreground command ends, reading goes on until the pipe closes, 250 ms
//! pass without output, or 2 s pass in all (background jobs may hold the pipe open).
//!
//! The reader is a thread (one per session, see [`OutputPump`]) rather than a task because brush's
//! builtins write to the pipe with blocking writes from runtime threads: a reader that needed a
//! runtime thread could deadlock behind them.

use std::time::Duration;

use shellwright_io::SharedText;

/// How long the pipe may stay silent after the foreground command ended.
pub const DRAIN_IDLE: Duration = Duration::from_millis(250);
/// The most time draining may take after the foreground command ended.
pub const DRAIN_CAP: Duration = Duration::from_secs(2);

/// Receives each decoded chunk of a run's output, in order.
pub type ChunkHandler = Box<dyn FnMut(SharedText) + Send>;

/// Told the working directory a run starts in, once it is entered and before any output.
pub type StartHandler = Box<dyn FnOnce(&std::path::Path) + Send>;

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{OutputPump, OutputReader, OutputTidy};
#[cfg(windows)]
pub use windows::{OutputPump, OutputReader, OutputTidy};
