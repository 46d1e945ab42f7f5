//! shellwright-term: the terminal model, with no I/O.
//!
//! Owns everything Shellwright knows about terminal byte streams without touching a file
//! descriptor: incremental UTF-8 decoding of output streams (`utf8`), the key-sequence parser (`keys`), and the terminal emulator with its
//! scrollback, snapshots, query responder and OSC 133/633 command tracking.
//! It does not own processes or pseudo-terminals (that is `shellwright-pty`).

pub mod keys;
mod params;
pub mod utf8;

pub mod terminal;
pub use terminal::{
    CommandRecord, CursorState, Feed, MouseTracking, Terminal, TerminalModes, TerminalOptions,
    TerminalScreen,
};
