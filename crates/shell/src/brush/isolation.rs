//! The thread a run executes on, which keeps process-wide state of the host out of the shell's
//! reach.
//!
//! Each run is driven on a thread outside the runtime's workers — the session thread itself,
//! which [`adopt_session_thread`] prepares once, so that a run costs no thread of its own — for
//! two reasons:
//!
//! - **umask.** On Linux the umask lives in the thread's filesystem context, which threads share
//!   unless one calls `unshare(CLONE_FS)`. The session thread does so once, and each run
//!   installs the session's umask: files the shell creates (redirections) and processes it
//!   spawns see the session's umask, and the host's never changes.
//! - **Tasks brush spawns while a builtin blocks.** brush starts the producer of a process
//!   substitution with `tokio::spawn` and reads it with a blocking `read`. Spawned from a worker,
//!   the producer lands in that worker's private next-task slot, which no other worker may steal,
//!   and the blocked reader never lets it run. Spawned from a thread outside the runtime, it goes
//!   to the shared queue and any worker runs it.
//!
//! It also keeps the host's SIGTSTP disposition, which brush's job-control listener would
//! otherwise take over ([`keep_host_sigtstp`]).

use std::cell::Cell;
use std::future::Future;

use tokio::runtime::{Handle, RuntimeFlavor};

use super::spawn_policy;

thread_local! {
    /// True on a run thread whose filesystem context is private (its umask is the session's).
    static PRIVATE_UMASK: Cell<bool> = const { Cell::new(false) };
    /// True on a thread that has detached its filesystem context from the host's.
    static UNSHARED: Cell<bool> = const { Cell::new(false) };
    /// True on a session thread whose filesystem context is private: runs are driven on it.
    static SESSION_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Makes the current thread — a session's own, which drives its runtime with `block_on` and so is
/// no worker — the thread its runs execute on: its filesystem context is detached from the
/// host's once, here, instead of on a new thread per run, and what it forks gets the session's
/// spawn policy ([`spawn_policy`]). Returns whether the filesystem context could be detached.
pub(crate) fn adopt_session_thread() -> bool {
    spawn_policy::adopt_thread();
    let private = unshare_fs();
    SESSION_THREAD.with(|flag| flag.set(private));
    private
}

/// Whether the current thread owns its umask, so that setting it cannot reach the host.
pub(crate) fn umask_is_private() -> bool {
    PRIVATE_UMASK.with(Cell::get)
}

/// The host process's umask, read from `/proc` without the set-and-restore dance of `umask(2)`
/// (which would briefly change it for every thread).
pub(crate) fn host_umask() -> u32 {
    status_umask("/proc/self/status").unwrap_or(0o022)
}

/// The umask a `/proc/…/status` file shows.
fn status_umask(path: &str) -> Option<u32> {
    let status = std::fs::read_to_string(path).ok()?;
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))?;
    u32::from_str_radix(value.trim(), 8).ok()
}

/// Sets the current thread's umask if it is private; returns whether it did.
pub(crate) fn set_private_umask(mask: u32) -> bool {
    if !umask_is_private() {
        return false;
    }
    install_umask(mask);
    true
}

/// Sets the umask of the current thread, whose filesystem context its caller has made its own
/// ([`unshare_fs`]), so that it cannot reach the host's; returns the one it replaced.
fn install_umask(mask: u32) -> u32 {
    // SAFETY: umask(2) cannot fail; on this thread it only touches the thread's own context.
    unsafe { libc::umask(mask as libc::mode_t) as u32 }
}

/// Drives `future` to completion with a private filesystem context whose umask is `umask`: in
/// place on a session thread ([`adopt_session_thread`]), else on a new thread. On a
/// current-thread runtime (unit tests) the future simply runs in place. Fails only when no thread
/// can be created.
pub(crate) async fn run_isolated<F>(umask: u32, future: F) -> std::io::Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let handle = Handle::current();
    if handle.runtime_flavor() == RuntimeFlavor::CurrentThread {
        return Ok(future.await);
    }
    if SESSION_THREAD.with(Cell::get) {
        // The umask is the run's only while it runs: what the session thread does between runs
        // (sourcing the snapshot, tearing down) sees the thread's own, as before the run.
        let _private = PrivateUmask::enter(umask);
        return Ok(future.await);
    }
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("shellwright-run".into())
                .stack_size(crate::limits::STACK_SIZE)
                .spawn_scoped(scope, || {
                    spawn_policy::adopt_thread();
                    enter_private_fs(umask);
                    handle.block_on(future)
                });
            // A panic in brush propagates as it would have without the thread.
            worker.map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
        })
    })
}

/// The run's umask installed on a session thread ([`adopt_session_thread`]), and `umask` allowed
/// to change it, until drop, which puts back the umask the thread had before.
struct PrivateUmask {
    previous: u32,
}

impl PrivateUmask {
    fn enter(umask: u32) -> Self {
        PRIVATE_UMASK.with(|flag| flag.set(true));
        Self {
            previous: install_umask(umask),
        }
    }
}

impl Drop for PrivateUmask {
    fn drop(&mut self) {
        install_umask(self.previous);
        PRIVATE_UMASK.with(|flag| flag.set(false));
    }
}

/// Gives the current thread a private filesystem context with `umask` installed.
fn enter_private_fs(umask: u32) {
    let private = unshare_fs();
    PRIVATE_UMASK.with(|flag| flag.set(private));
    set_private_umask(umask);
}

/// Gives a thread of the blocking pool that runs a pipeline stage the session's umask, for the
/// files the stage opens and the processes it starts. The stage is a subshell: its `umask` builtin
/// still changes nothing (see [`umask_is_private`]). The thread goes back to the session's pool
/// with the umask in place.
pub(crate) fn enter_stage_fs(umask: u32) {
    if unshare_fs() {
        install_umask(umask);
    }
}

/// Detaches the current thread's cwd, root and umask from the other threads' (once); returns
/// whether they are its own. Only Linux can: elsewhere they stay the process's.
#[cfg(not(target_os = "linux"))]
fn unshare_fs() -> bool {
    false
}

/// Detaches the current thread's cwd, root and umask from the other threads' (once); returns
/// whether they are its own.
#[cfg(target_os = "linux")]
fn unshare_fs() -> bool {
    UNSHARED.with(|unshared| {
        if !unshared.get() {
            // SAFETY: unshare(CLONE_FS) only detaches this thread's cwd/root/umask.
            unshared.set(unsafe { libc::unshare(libc::CLONE_FS) } == 0);
        }
        unshared.get()
    })
}

/// Keeps the host's disposition of SIGTSTP (Ctrl+Z) as it was.
///
/// brush-core waits for every external command with a Tokio listener for SIGTSTP, so that an
/// interactive bash notices Ctrl+Z. Tokio installs its handler process-wide on first use and never
/// removes it: from then on the host would catch SIGTSTP instead of being suspended, and a Ctrl+Z
/// meant for the host would read as the running command having stopped. So before any session
/// runs, one listener is registered here and the host's disposition put back; Tokio installs its
/// handler only once, so the listeners brush creates later never fire. Must run inside a runtime.
pub(crate) fn keep_host_sigtstp() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            // SAFETY: sigaction with a null new action only reads the current one into `previous`,
            // and writing back exactly what was read restores it.
            unsafe {
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGTSTP, std::ptr::null(), &mut previous) != 0 {
                    return;
                }
                if signal(SignalKind::from_raw(libc::SIGTSTP)).is_ok() {
                    libc::sigaction(libc::SIGTSTP, &previous, std::ptr::null_mut());
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The current thread's umask, as the kernel reports it.
    fn thread_umask() -> u32 {
        status_umask("/proc/thread-self/status").expect("the thread's umask")
    }

    #[test]
    fn a_run_on_a_session_thread_leaves_the_threads_umask_as_it_found_it() {
        let host = host_umask();
        std::thread::spawn(|| {
            assert!(adopt_session_thread());
            install_umask(0o027);
            {
                let _run = PrivateUmask::enter(0o077);
                assert_eq!(thread_umask(), 0o077);
                // What the `umask` builtin does during the run.
                assert!(set_private_umask(0o007));
                assert_eq!(thread_umask(), 0o007);
            }
            assert_eq!(thread_umask(), 0o027);
            assert!(!set_private_umask(0o077), "only a run may set it");
            assert_eq!(thread_umask(), 0o027);
        })
        .join()
        .expect("join");
        assert_eq!(host_umask(), host);
    }
}
