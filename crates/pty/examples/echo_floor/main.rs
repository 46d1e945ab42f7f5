//! The floor of the PTY echo round trip with and without a reader thread, measured on this
//! machine: what the thread hop of the PTY runtime costs by itself, before any emulator, UTF-8
//! decoding or Node-API call.
//!
//! One `stty -echo; exec cat` runs in a pseudo-terminal. A round trip writes a line to the master
//! and waits until its echo has been read, two ways, in alternating blocks so that load on the
//! machine hits both alike:
//! - `direct`: the waiting thread polls the master and reads it (what node-pty does on libuv's
//!   loop, and the addon on Linux: it reads through a `ReadDriver` on Node's event loop);
//! - `hop`: a reader thread polls and reads the master and wakes the waiting thread through a wake
//!   pipe (what the run's I/O thread does, before its threadsafe call to JS, where no driver
//!   reads: off Linux, and behind a driver whose loop stalls).
//!
//! With `pinned` (2+ CPUs), `cat` runs on CPU 1 and the waiting thread on CPU 0, and the hop is
//! measured twice: with the reader on the waiter's CPU, and on `cat`'s (its wake of the waiter is
//! then a wake of another, possibly idle, CPU) — the placements the scheduler picks between.
//!
//! `cargo run --release -p shellwright-pty --example echo_floor [blocks] [pinned]`

#[cfg(unix)]
mod measure;

fn main() {
    #[cfg(unix)]
    measure::main();
    #[cfg(not(unix))]
    eprintln!("echo_floor measures a Unix pseudo-terminal: it has nothing to measure here");
}
