//! shellwright-node: the N-API layer, and the only crate that knows Node.
//!
//! Thin glue over the plain Rust crates: argument conversion with one rule per kind of value
//! ([`options`]), errors with codes ([`error`]), output streaming to JS callbacks ([`delivery`]),
//! the property names of a run's result made once per environment ([`names`]),
//! work handed to the JS thread through one threadsafe function per environment ([`js_queue`]),
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

/// The addon's own allocations (the shell's, the terminal's, the PTY's; not Node's) come from
/// mimalloc on Linux: a terminal allocates and recycles a row per line of scrollback, and a
/// builtin run in place makes some eighty small allocations, which glibc's malloc serves more
/// slowly. The host's `malloc` is left alone (no `override`); nothing the addon allocates is freed
/// by C code, or the other way round. Loaded by a worker thread, the addon uses the system's
/// allocator instead (see [`allocator`]).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: allocator::AddonAllocator = allocator::AddonAllocator::new();

/// Run by the dynamic loader when the addon is loaded, ahead of the constructors without a
/// priority (napi-rs registers the exports in those, and they allocate). mimalloc commits the
/// arenas it reserves at once by default; where transparent huge pages are on, the first touches
/// then fault in whole huge pages: a PTY session streaming a gigabyte peaked at 135 MB of RSS
/// that way, against 104–114 MB with commits on demand (87 MB with glibc's malloc), at the same
/// speed. (A section `.init_array.NNNNN` runs before the unnumbered ones, in both GNU ld's and
/// lld's ordering.)
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array.00100")]
static CONFIGURE_ALLOCATOR: extern "C" fn() = configure_allocator;

#[cfg(target_os = "linux")]
extern "C" fn configure_allocator() {
    /// `mi_option_arena_eager_commit` of `mimalloc.h` (the same in its v2 and v3), which
    /// libmimalloc-sys does not name; its version is pinned for this (see Cargo.toml).
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    // SAFETY: sets one of mimalloc's documented options to a valid value; options may be set at
    // any time, and this one is read when an arena is reserved.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}

mod abort;
#[cfg(target_os = "linux")]
mod allocator;
mod attach;
mod construct;
mod delivery;
mod driven;
mod error;
mod exec;
mod fixups;
mod js_queue;
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
