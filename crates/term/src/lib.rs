//! shellwright-term: the terminal model, with no I/O.
//!
//! Owns everything Shellwright knows about terminal byte streams without touching a file
//! descriptor: the key-sequence parser (`keys`) and the terminal emulator with its scrollback,
//! snapshots, query responder and OSC 133/633 command tracking. Byte streams are decoded with
//! `shellwright_io::Utf8Decoder`, the one UTF-8 decoder the runtimes share.
//! It does not own processes or pseudo-terminals (that is `shellwright-pty`).

pub mod keys;
mod params;

pub mod terminal;
pub use terminal::{
    CommandRecord, CursorState, Feed, MouseTracking, Terminal, TerminalModes, TerminalOptions,
    TerminalScreen,
};
