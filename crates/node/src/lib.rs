//! shellwright-node: the N-API layer, and the only crate that knows Node.
//!
//! Thin glue over the plain Rust crates: argument conversion with field-naming `TypeError`s
//! ([`options`]), output streaming to JS callbacks ([`delivery`]), `AbortSignal` →
//! `CancelToken` ([`abort`]), and one module per JS API area.

// `#[napi]` items are reached through napi's generated registration, which a `cargo test` build
// of this cdylib does not link, so they look unused there.
#![cfg_attr(test, allow(dead_code))]

mod abort;
mod delivery;
mod keys;
mod options;
mod process;
mod pty;
mod shell;
mod terminal;
