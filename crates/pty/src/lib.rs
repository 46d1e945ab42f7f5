//! shellwright-pty: commands in pseudo-terminals that never lose output and always clean up.
//!
//! Owns the PTY runtime: spawning a shell command in a new pseudo-terminal (portable-pty), the
//! reader that reads the terminal to its end ([`MasterReader`]: on the run's I/O thread, or on a
//! caller's event loop through a [`ReadDriver`], with the I/O thread behind it), the I/O thread
//! that writes queued input, resizing, and
//! cancellation of everything the run started (the terminal's foreground process group, the
//! child's tree and session, and every process carrying the run's `SHELLWRIGHT_RUN` tag — found by
//! `shellwright_proc::RunScope` — SIGTERM then SIGKILL). It does not interpret the bytes: a terminal
//! emulator (shellwright-term) and the consumer both sit behind [`PtyOutput`], which sees every
//! byte in order on the thread that read it. [`SessionTerminal`] is that emulator for one run: its
//! [`EmulatedOutput`] feeds every byte to a `shellwright_term::Terminal`, writes the terminal's
//! query replies back to the child, passes the rest on, and wakes [`SessionTerminal::exec`]
//! waiters when a prompt shows or a command completes. Interactive bash, zsh and fish get OSC
//! 133/633 hooks through generated startup files (`hooks`). [`PtySession`] puts these together for a caller that
//! runs one command at a time and reads the terminal after the run. [`SessionTerminal::attach`]
//! adds a viewer (`viewers`): a snapshot and the live stream after it, cut at one point of the
//! stream, with a bounded queue that never holds the read loop back. [`exec::ExecSessions`]
//! keeps a table of such sessions that an agent steps through: each step returns when the program
//! exits, waits for input or runs out of time, with the text that is new since the last step.
//!
//! Output is read until EIO (every holder of the slave side closed
//! it), with [`ORPHAN_DRAIN`] for processes that outlive the child; a cancel gives
//! [`CANCEL_GRACE`] before SIGKILL; sizes are clamped to 20..400 × 5..200. POSIX terminal
//! semantics: `tcgetpgrp(3)`, `pty(7)`. On Windows the terminal is a pseudo console (ConPTY),
//! with the differences its run module lists; the shell-integration hooks and the kernel's word
//! on waiting for input are Unix only.

mod command;
mod emulator;
mod error;
pub mod exec;
#[cfg(unix)]
mod hooks;
mod input;
mod run;
mod session;
mod viewers;

pub use command::{DEFAULT_SHELL, PtyCommand, TermSize};
pub use emulator::{EmulatedOutput, ExecError, SessionTerminal};
pub use error::PtyError;
pub use input::{ForegroundProcess, InputMode, InputState};
pub use run::{
    CANCEL_GRACE, ORPHAN_DRAIN, PtyControl, PtyOutput, PtyRun, Reading, run, run_reading, spawn,
    spawn_reading,
};
#[cfg(unix)]
pub use run::{MasterReader, ReadDriver, ReadState};
pub use session::{PtySession, RunGuard, RunOptions};
pub use viewers::{
    Attachment, Delivery, OPEN_SEQUENCE_LIMIT, RunEnd, VIEWER_QUEUE_LIMIT, Viewer, ViewerSink,
};
