//! shellwright-node: the N-API layer, and the only crate that knows Node.
//!
//! Thin glue over the plain Rust crates: argument conversion with one rule per kind of value
//! ([`options`]), errors with codes ([`error`]), output streaming to JS callbacks ([`delivery`]),
//! the property names of a run's result made once per environment ([`names`]),
//! `AbortSignal` → `CancelToken` ([`abort`]), the ways to run async work and settle its promise
//! ([`settle`]; [`driven`] polls a future on the threads that wake it), a PTY run's terminal read
//! on Node's event loop ([`loop_reader`], Linux), and one module per JS API area.
//!
//! No panic crosses into Node: every export is compiled with `catch_unwind` (a panic becomes a
//! thrown `Error`), spawned work catches panics into a rejection (see [`settle`]), and libuv
//! callbacks catch them too.

// `#[napi]` items are reached through napi's generated registration, which a `cargo test` build
// of this cdylib does not link, so they look unused there.
#![cfg_attr(test, allow(dead_code))]

// The panic backstop relies on unwinding; an aborting build would turn any bug into a crash of
// the host process.
#[cfg(panic = "abort")]
compile_error!("shellwright-node must be built with panic = \"unwind\"");

mod abort;
mod attach;
mod construct;
mod delivery;
mod driven;
mod error;
mod exec;
mod fixups;
mod keys;
#[cfg(target_os = "linux")]
mod loop_reader;
mod mirror;
mod names;
mod options;
mod process;
mod pty;
mod settle;
mod shell;
mod terminal;
