//! shellwright-node: the N-API layer, and the only crate that knows Node.
//!
//! Thin glue over the plain Rust crates: argument conversion with one rule per kind of value
//! ([`options`]), errors with codes ([`error`]), output streaming to JS callbacks ([`delivery`]),
//! the property names of a run's result made once per environment ([`names`]),
//! `AbortSignal` → `CancelToken` ([`abort`]), one way to run async work and settle its promise
//! ([`settle`]), and one module per JS API area.
//!
//! No panic crosses into Node: every export is compiled with `catch_unwind` (a panic becomes a
//! thrown `Error`), and spawned work catches panics into a rejection (see [`settle`]).

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
mod error;
mod keys;
mod mirror;
mod names;
mod options;
mod process;
mod pty;
mod settle;
mod shell;
mod terminal;

/// The addon's own allocator (Node's heap is untouched): mimalloc keeps the memory of a freed
/// terminal's grid for the next allocations, where glibc's malloc hands the top of its heap back
/// to the system on free, so every new terminal faulted its scrollback (~29 MB at 120 columns ×
/// 10 000 lines) in again page by page. Many small, short-lived allocations (rows, chunks, strings)
/// also cost less there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_arena_eager_commit` (its `mimalloc.h` option enum; the -sys crate names
/// only some options).
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Arenas are committed as they are used, not eagerly. An eagerly committed arena is eligible for
/// transparent huge pages and purged in 2 MiB steps, which held a streaming session's resident
/// set at ~90 MB above its start where glibc held ~43 MB (`bench/pty-memory.mjs`); committed on
/// use it is ~46 MB, for a parse speed within a few percent.
#[napi_derive::module_init]
fn init_allocator() {
    // SAFETY: sets an option's value, which mimalloc reads when it next reserves an arena.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) }
}
