//! shellwright-node: the N-API layer, and the only crate that knows Node.
//!
//! Thin glue over the plain Rust crates: argument conversion with field-naming `TypeError`s
//! ([`options`]), output streaming to JS callbacks ([`delivery`]), `AbortSignal` →
//! `CancelToken` ([`abort`]), and one module per JS API area.

mod abort;
mod delivery;
mod options;
mod process;
mod pty;
mod shell;
