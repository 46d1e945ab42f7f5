//! shellwright-term: the terminal model, with no I/O.
//!
//! Owns everything Shellwright knows about terminal byte streams without touching a file
//! descriptor: the key-sequence parser (`keys`) and the terminal emulator with its scrollback,
//! snapshots, query responder, OSC 133/633 command tracking, and the encoder of the VS Code
//! shell-integration marks (OSC 633) that a mirror of a shell writes. Byte streams are decoded with
//! `shellwright_io::Utf8Decoder`, the one UTF-8 decoder the runtimes share.
//! It does not own processes or pseudo-terminals (that is `shellwright-pty`).

pub mod keys;
mod params;

pub mod terminal;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub use terminal::{
    Checked, CommandRecord, CursorState, Feed, IntegrationMark, MouseTracking, RunColor, Scrolled,
    ShownRow, Style, StyledRun, Terminal, TerminalModes, TerminalOptions, TerminalScreen,
};
