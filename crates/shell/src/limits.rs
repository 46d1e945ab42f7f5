//! Nesting limits checked while a run executes, so that runaway recursion ends the run with a
//! message instead of overflowing the stack (which would kill the host process).
//!
//! Three limits, checked before every simple command of a queued run (from the session's
//! DEBUG-trap hook, see [`hooks`](crate::brush::hooks); a run in place nests nothing and runs without
//! the hook):
//! - function nesting, as bash's `FUNCNEST` counts it: [`FUNCTION_NESTING_LIMIT`] levels at most,
//!   fewer when the user sets `FUNCNEST` to a positive number (bash's own knob). A call past it is
//!   refused as bash refuses it, and the run goes on (see `brush::funcnest`); brush's own
//!   function-depth check backs it up one level deeper;
//! - the stack itself: when less than [`STACK_RESERVE`] is left on the current thread, whatever
//!   recursion got there (`eval` calling `eval`, a script sourcing itself) is stopped;
//! - file descriptors: brush duplicates a command's open files for each level it descends (about
//!   sixteen descriptors per function call), and the descriptor table is the host's. When fewer
//!   than [`FD_RESERVE`] are left, the run is stopped before the host's own sockets, files and
//!   other sessions are starved.
//!
//! The last two stop the run ([`check`]).

use std::cell::Cell;

use brush_core::Shell;

/// The stack of every thread that runs brush code (see [`worker`](crate::worker)). Enough for
/// the nesting limits in an unoptimised build with a wide margin; reserved address space,
/// committed only when used.
pub const STACK_SIZE: usize = 512 << 20;

/// The deepest function nesting a run may reach when `FUNCNEST` is unset. bash has no default
/// limit (it recurses until its stack runs out, some thousands of levels); this is as deep as
/// the session's stack holds in an unoptimised build, with room to spare.
pub const FUNCTION_NESTING_LIMIT: usize = 1_000;

/// Stop a run when less than this much stack is left: more than one nesting level of brush's
/// interpreter or parser can use between two checks, even unoptimised.
pub const STACK_RESERVE: usize = 24 << 20;

/// The stack a run in place (see `session::inline`) needs left on the calling thread — the
/// host's own, 8 MiB for Node's main thread — to be started there: it runs a flat list of
/// builtins that never nest.
pub const INLINE_STACK_NEEDED: usize = 2 << 20;

/// Stop a run when fewer descriptors than this are left below the process's limit.
pub const FD_RESERVE: usize = 256;

/// Why a run was stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LimitExceeded {
    Stack,
    Descriptors,
}

impl LimitExceeded {
    /// The line written to the run's stderr.
    pub fn message(&self) -> String {
        match self {
            Self::Stack => "bash: maximum nesting depth exceeded (stack exhausted)\n".to_string(),
            Self::Descriptors => {
                "bash: maximum nesting depth exceeded (out of file descriptors)\n".to_string()
            }
        }
    }

    /// The run's exit status.
    pub const fn exit_code(&self) -> i32 {
        1
    }
}

/// The function nesting limit in force for `shell`.
pub fn function_nesting_limit(shell: &Shell) -> usize {
    shell
        .env_str("FUNCNEST")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .map_or(FUNCTION_NESTING_LIMIT, |n| n.min(FUNCTION_NESTING_LIMIT))
}

/// Checks the stack and descriptor limits for the command about to run.
pub fn check() -> Option<LimitExceeded> {
    if remaining_stack().is_some_and(|left| left < STACK_RESERVE) {
        return Some(LimitExceeded::Stack);
    }
    if descriptors_left().is_some_and(|left| left < FD_RESERVE) {
        return Some(LimitExceeded::Descriptors);
    }
    None
}

/// How many descriptors can still be opened, estimated from the lowest free one (descriptors
/// are handed out lowest first, so everything below it is in use) and the soft limit.
///
/// The lowest free descriptor is found afresh (two syscalls). The limit is read once per
/// [`LIMIT_REREAD`] calls, and again whenever the answer comes near [`FD_RESERVE`]: the check runs
/// before every simple command, and the third syscall was a tenth of a loop's time. A limit
/// raised since the last read can therefore never stop a run; one lowered (by another part of
/// the host: a session's `ulimit` changes only what it starts) is seen within that many commands.
#[cfg(unix)]
pub fn descriptors_left() -> Option<usize> {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    /// The soft limit as last read; 0 before the first read.
    static SOFT_LIMIT: AtomicU64 = AtomicU64::new(0);
    static CALLS: AtomicU32 = AtomicU32::new(0);

    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor we own and close at once.
    let lowest_free = unsafe {
        let probe = libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 0);
        if probe < 0 {
            return Some(0);
        }
        libc::close(probe);
        probe as u64
    };
    let left = |soft: u64| usize::try_from(soft.saturating_sub(lowest_free)).ok();
    let cached = SOFT_LIMIT.load(Ordering::Relaxed);
    let fresh_read_due = CALLS
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(LIMIT_REREAD);
    if cached != 0 && !fresh_read_due && left(cached).is_some_and(|n| n >= 2 * FD_RESERVE) {
        return left(cached);
    }
    let soft = soft_descriptor_limit()?;
    SOFT_LIMIT.store(soft, Ordering::Relaxed);
    left(soft)
}

/// How many calls of [`descriptors_left`] may answer from the limit it read last.
#[cfg(unix)]
const LIMIT_REREAD: u32 = 64;

/// `RLIMIT_NOFILE`'s soft limit (at least 1: 0 means "not read yet" to the cache).
#[cfg(unix)]
fn soft_descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `limit`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    #[allow(clippy::useless_conversion)] // rlim_t is not u64 everywhere
    let soft = u64::try_from(limit.rlim_cur).unwrap_or(u64::MAX);
    Some(soft.max(1))
}

#[cfg(not(unix))]
pub fn descriptors_left() -> Option<usize> {
    None
}

/// How much stack the current thread has left, when it can be known.
pub fn remaining_stack() -> Option<usize> {
    let marker = 0u8;
    let here = std::ptr::addr_of!(marker) as usize;
    stack_low_end().map(|low| here.saturating_sub(low))
}

thread_local! {
    static STACK_LOW_END: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The lowest usable address of the current thread's stack (stacks grow down).
fn stack_low_end() -> Option<usize> {
    STACK_LOW_END.with(|cached| {
        if cached.get().is_none() {
            cached.set(query_stack_low_end());
        }
        cached.get()
    })
}

#[cfg(target_os = "linux")]
fn query_stack_low_end() -> Option<usize> {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is destroyed after use
    // and only read in between.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        ok.then_some(addr as usize)
    }
}

#[cfg(not(target_os = "linux"))]
fn query_stack_low_end() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_left_shrinks_as_calls_nest() {
        fn nested(levels: usize) -> usize {
            let pad = [0u8; 4096];
            std::hint::black_box(&pad);
            if levels == 0 {
                remaining_stack().unwrap_or(0)
            } else {
                nested(levels - 1)
            }
        }
        let shallow = remaining_stack().expect("known on linux");
        let deep = nested(16);
        assert!(deep + 16 * 4096 <= shallow, "{deep} vs {shallow}");
    }

    #[test]
    fn messages_read_like_bash() {
        assert_eq!(
            LimitExceeded::Stack.message(),
            "bash: maximum nesting depth exceeded (stack exhausted)\n"
        );
        assert_eq!(LimitExceeded::Descriptors.exit_code(), 1);
    }
}
