//! [`AddonAllocator`]: the addon's global allocator on Linux — mimalloc when the addon was loaded
//! on the process's main thread, the system's otherwise.
//!
//! mimalloc takes the first thread that allocates through it for the process's main thread and
//! keeps that thread's state as the process's own. Loaded by a worker thread, that thread is the
//! worker's, and it exits with the worker; a thread started later can get the exited thread's
//! stack and thread pointer back from glibc's cache, and mimalloc then takes it for the main
//! thread again and reads the state freed at the exit: the second worker to load the addon
//! after the first had exited crashed in `mi_thread_init` on its first allocation. The main
//! thread outlives every other, so there mimalloc is safe; elsewhere the system's allocator is
//! used, for the life of the process.
//!
//! The choice is made at the first allocation, on the thread that loads the addon, and never
//! changes, so every block is freed by the allocator that made it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering};

use mimalloc::MiMalloc;

/// Not chosen yet.
const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;

/// See the module doc.
pub struct AddonAllocator {
    choice: AtomicU8,
}

impl AddonAllocator {
    pub const fn new() -> Self {
        Self {
            choice: AtomicU8::new(UNDECIDED),
        }
    }

    /// Whether mimalloc serves this process's allocations (see the module doc).
    #[inline]
    fn mimalloc(&self) -> bool {
        match self.choice.load(Ordering::Relaxed) {
            MIMALLOC => true,
            SYSTEM => false,
            _ => self.choose(),
        }
    }

    #[cold]
    fn choose(&self) -> bool {
        let choice = if on_main_thread() { MIMALLOC } else { SYSTEM };
        // The loading thread allocates first, alone; should two threads race here all the same,
        // the first choice stands for both.
        match self
            .choice
            .compare_exchange(UNDECIDED, choice, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => choice == MIMALLOC,
            Err(chosen) => chosen == MIMALLOC,
        }
    }
}

/// Whether the calling thread is the process's main thread (its thread id is the process id).
fn on_main_thread() -> bool {
    // SAFETY: `gettid` takes no arguments and cannot fail; the raw syscall, since glibc before
    // 2.30 (the addon is built against 2.17) has no wrapper for it.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    tid == i64::from(std::process::id())
}

// SAFETY: every call goes to one allocator, the same for the life of the process (see
// `choose`), which upholds `GlobalAlloc`'s contract itself.
unsafe impl GlobalAlloc for AddonAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if self.mimalloc() {
                MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if self.mimalloc() {
                MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on; `ptr` came from the same allocator.
        unsafe {
            if self.mimalloc() {
                MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on; `ptr` came from the same allocator.
        unsafe {
            if self.mimalloc() {
                MiMalloc.realloc(ptr, layout, new_size)
            } else {
                System.realloc(ptr, layout, new_size)
            }
        }
    }
}
