//! How the direct path ([`direct`](super::direct)) starts its program on Linux: a
//! `clone(CLONE_VM | CLONE_VFORK)` child, which is what glibc's and musl's `posix_spawn(3)` are,
//! that makes a few system calls on a stack its thread keeps
//! ([`ChildStack`](child::ChildStack)) and `execve(2)`s.
//! The program gets what brush's spawns get from the spawn policy and std: a session of its own
//! (so no controlling terminal, and a process group of its own), an empty signal mask, SIGPIPE at
//! its default (the host ignores it), its stdio and its working directory.
//!
//! Why not `posix_spawn`: glibc maps a fresh stack for every spawn and unmaps it after, and in a
//! multi-threaded host the unmapping flushes the TLB of the other CPUs the host runs on, by
//! inter-processor interrupt — 11 % of the session thread's time in a `/bin/true` loop on a
//! 2-vCPU VM (`perf record -g`), on the run's path; its child resets every signal's disposition
//! with two system calls each, where this one queries each and resets only those with a handler;
//! and what the direct path needs of it (`POSIX_SPAWN_SETSID`, 2.26;
//! `posix_spawn_file_actions_addchdir_np`, 2.29) is newer than the oldest glibc the addon is
//! built for. Off Linux the direct path is never taken and brush starts every program.
//!
//! Between the clone and the `execve` the child shares the host's memory while the calling thread
//! waits, so it runs nothing but raw system calls on what was laid out before the clone
//! ([`Plan`]): no allocation, no lock, no state of the C library (errno aside: it is the waiting
//! thread's). All signals are blocked on the calling thread around the clone, so that no handler
//! of the host runs on the child's stack before the child has set it back to the default.
//!
//! The program is waited for through a pidfd: on the session's thread for its first two
//! milliseconds ([`QUICK_EXIT`]), then polled by the runtime (on kernels without pidfds, on the
//! blocking pool); a [`Child`] dropped before its end — a cancelled run — is reaped by a thread
//! of its own once the run's termination ends it.

use std::ffi::{CString, c_char, c_int};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use libc::pid_t;
use shellwright_io::{PollFd, poll};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// How long a program's exit is waited for on the session's thread before the runtime takes
/// the wait over ([`exits_soon`]): what `true`, `ls` or `git rev-parse` take.
const QUICK_EXIT: Duration = Duration::from_millis(2);

/// Whether the direct path can start programs here: on Linux, with musl or a glibc from 2.26 on.
/// Until 2.24 glibc's `clone` wrapper overwrote the cached ids in the thread descriptor when the
/// child shares the caller's memory — the spawning thread's own, here (glibc bug 19957) — and
/// before 2.26 its `posix_spawn` could not start a session either, so the direct path never ran
/// there.
pub(crate) fn supported() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static RECENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *RECENT.get_or_init(|| glibc_at_least(2, 26))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        cfg!(target_os = "linux")
    }
}

/// Whether the glibc the process runs on is `major.minor` or later.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: returns a static NUL-terminated string such as "2.36".
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let mut parts = version
        .to_str()
        .unwrap_or("")
        .split('.')
        .map(str::parse::<u32>);
    match (parts.next(), parts.next()) {
        (Some(Ok(found_major)), Some(Ok(found_minor))) => {
            (found_major, found_minor) >= (major, minor)
        }
        _ => false,
    }
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| nul_error())
}

fn nul_error() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "NUL in argument")
}

/// A program's whole environment as `execve` takes it: `NAME=VALUE` strings, each ending in NUL,
/// laid end to end in one buffer — built per spawn, and a session exports dozens of variables,
/// so each costs one copy instead of three allocations.
#[derive(Debug, Default)]
pub(crate) struct EnvBlock {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl EnvBlock {
    /// Appends `NAME=VALUE`; a NUL in either cannot be passed, and nothing is appended.
    pub fn push(&mut self, name: &str, value: &str) -> io::Result<()> {
        if name.contains('\0') || value.contains('\0') {
            return Err(nul_error());
        }
        self.starts.push(self.bytes.len());
        self.bytes.reserve(name.len() + value.len() + 2);
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(b'=');
        self.bytes.extend_from_slice(value.as_bytes());
        self.bytes.push(0);
        Ok(())
    }

    /// The strings' pointers, then NULL; valid while the block is neither changed nor dropped.
    fn pointers(&self) -> Vec<*mut c_char> {
        self.starts
            .iter()
            .map(|&start| self.bytes[start..].as_ptr().cast::<c_char>().cast_mut())
            .chain(std::iter::once(std::ptr::null_mut()))
            .collect()
    }
}

/// What the direct path starts: `program` with `argv` (argv\[0\] included) and exactly `env`, in
/// `cwd`, with `stdio` as its fds 0–2 (`None`: the host's own).
pub(crate) struct Spawn<'a> {
    pub program: &'a Path,
    pub argv: &'a [String],
    pub env: EnvBlock,
    pub cwd: &'a Path,
    pub stdio: &'a [Option<OwnedFd>; 3],
}

impl Spawn<'_> {
    /// Starts the program in a session of its own. An error means nothing ran.
    pub fn start(self) -> io::Result<Child> {
        if !supported() {
            return Err(io::ErrorKind::Unsupported.into());
        }
        let program = c_string(self.program.as_os_str().as_bytes())?;
        let cwd = c_string(self.cwd.as_os_str().as_bytes())?;
        let argv = self
            .argv
            .iter()
            .map(|word| c_string(word.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let argv_pointers = null_terminated(&argv);
        let env_pointers = self.env.pointers();
        let mut stdio = [-1; 3];
        for (slot, fd) in stdio.iter_mut().zip(self.stdio) {
            let Some(fd) = fd else { continue };
            // A source among 0–2 could be overwritten by an earlier dup (a host that closed its
            // own stdio); brush's fork copes with that, so it is left to brush.
            if fd.as_raw_fd() < 3 {
                return Err(io::ErrorKind::Unsupported.into());
            }
            *slot = fd.as_raw_fd();
        }
        let plan = Plan {
            program: program.as_ptr(),
            argv: argv_pointers.as_ptr(),
            envp: env_pointers.as_ptr(),
            cwd: cwd.as_ptr(),
            stdio,
            error: std::sync::atomic::AtomicI32::new(0),
        };
        let pid = child::start(&plan)?;
        Ok(Child { pid, reaped: false })
    }
}

/// Everything the child reads, laid out before the clone; the pointers are valid until the
/// clone returns (the child has called `execve` or exited by then).
#[cfg_attr(
    not(target_os = "linux"),
    expect(dead_code, reason = "only Linux's child reads it")
)]
struct Plan {
    program: *const c_char,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
    cwd: *const c_char,
    /// The fds that become 0, 1 and 2; -1 leaves the host's.
    stdio: [c_int; 3],
    /// The errno of the step that failed, written by the child before it exits; 0 once it
    /// called `execve` successfully.
    error: std::sync::atomic::AtomicI32,
}

#[cfg(target_os = "linux")]
mod child {
    use std::cell::OnceCell;
    use std::ffi::{c_int, c_long, c_void};
    use std::io;
    use std::sync::atomic::Ordering;

    use libc::pid_t;

    use super::{Plan, reap};

    /// The child's stack: a few system calls need little of it. Below it, one page without
    /// access turns an overflow into a fault instead of a write into the host's memory.
    const STACK_SIZE: usize = 64 << 10;

    /// The stack a thread's children run on until they `execve`, mapped at its first spawn and
    /// kept: a spawn returns only once its child no longer uses it, so the next reuses it.
    pub(super) struct ChildStack {
        base: *mut c_void,
        len: usize,
    }

    impl ChildStack {
        fn new() -> io::Result<Self> {
            // SAFETY: sysconf has no preconditions.
            let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
                .unwrap_or(4096)
                .max(4096);
            let len = STACK_SIZE + page;
            // SAFETY: a fresh anonymous mapping, owned by the returned value.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let stack = Self { base, len };
            // SAFETY: the lowest page of the mapping just made.
            if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(stack)
        }

        /// Where the stack starts (it grows down): the mapping's end, page-aligned.
        fn top(&self) -> *mut c_void {
            self.base.wrapping_byte_add(self.len)
        }
    }

    impl Drop for ChildStack {
        fn drop(&mut self) {
            // SAFETY: the mapping `new` made, no longer used by any child.
            unsafe { libc::munmap(self.base, self.len) };
        }
    }

    thread_local! {
        static STACK: OnceCell<ChildStack> = const { OnceCell::new() };
    }

    /// Clones a child that runs `plan` and waits until it has called `execve` (the pid) or
    /// failed before (its error; it is reaped).
    pub(super) fn start(plan: &Plan) -> io::Result<pid_t> {
        let top = STACK.with(|stack| match stack.get() {
            Some(stack) => Ok(stack.top()),
            None => {
                let made = ChildStack::new()?;
                let top = made.top();
                let _ = stack.set(made);
                Ok::<_, io::Error>(top)
            }
        })?;
        let all = SignalSet::full();
        let mut old = SignalSet::empty();
        // SAFETY: valid sets; the old mask is put back below whatever the clone did.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), old.as_mut_ptr()) };
        // SAFETY: `child` only makes system calls on `plan`, which outlives the clone (it returns
        // once the child called execve or exited), on a stack no other child uses meanwhile.
        let pid = unsafe {
            libc::clone(
                child,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                std::ptr::from_ref(plan).cast_mut().cast(),
            )
        };
        let cloned = if pid < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(pid)
        };
        // SAFETY: the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut()) };
        let pid = cloned?;
        match plan.error.load(Ordering::Acquire) {
            0 => Ok(pid),
            errno => {
                let _ = reap(pid, 0);
                Err(io::Error::from_raw_os_error(errno))
            }
        }
    }

    /// A signal set, full or empty.
    struct SignalSet(libc::sigset_t);

    impl SignalSet {
        fn full() -> Self {
            let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            // SAFETY: sigfillset initialises the set.
            unsafe { libc::sigfillset(set.as_mut_ptr()) };
            // SAFETY: initialised above.
            Self(unsafe { set.assume_init() })
        }

        fn empty() -> Self {
            let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            // SAFETY: sigemptyset initialises the set.
            unsafe { libc::sigemptyset(set.as_mut_ptr()) };
            // SAFETY: initialised above.
            Self(unsafe { set.assume_init() })
        }

        fn as_ptr(&self) -> *const libc::sigset_t {
            &self.0
        }

        fn as_mut_ptr(&mut self) -> *mut libc::sigset_t {
            &mut self.0
        }
    }

    /// A signal's disposition as the kernel's `rt_sigaction` reads and writes it. Its layout
    /// after the handler differs between architectures, so it is a buffer larger than any of
    /// them, handler first: all zero is SIG_DFL with no flags and an empty mask.
    #[repr(C, align(8))]
    struct KernelSigaction([u64; 8]);

    /// The kernel's signal sets are 64 bits.
    const KERNEL_SIGSET: usize = 8;

    /// The child: everything it does before `execve` (see the module's documentation).
    extern "C" fn child(arg: *mut c_void) -> c_int {
        // SAFETY: `start` passes its plan, alive and unchanged while the parent waits.
        let plan = unsafe { &*arg.cast::<Plan>() };
        // SAFETY: raw system calls on the plan's valid pointers.
        let errno = unsafe { exec(plan) };
        plan.error.store(errno.max(1), Ordering::Release);
        // SAFETY: ends the child; nothing of the host's is run on the way out.
        unsafe { libc::syscall(libc::SYS_exit_group, 127 as c_long) };
        127
    }

    /// Resets the dispositions, enters a new session, sets up stdio and the working directory,
    /// unblocks every signal and calls `execve`; returns only on failure, with its errno.
    ///
    /// # Safety
    ///
    /// The plan's pointers must be valid: NUL-terminated strings and NULL-terminated arrays.
    unsafe fn exec(plan: &Plan) -> c_int {
        let default = KernelSigaction([0; 8]);
        for signal in 1..=64 {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut old = KernelSigaction([0; 8]);
            // SAFETY: reads the disposition into a local buffer larger than the kernel's struct.
            let query = unsafe {
                sys(
                    libc::SYS_rt_sigaction,
                    [signal.into(), 0, addr_mut(&mut old)],
                )
            };
            let handler = old.0[0];
            let ignored = handler == libc::SIG_IGN as u64;
            // A handler would run on this stack, in the host's memory; SIGPIPE is the host's to
            // ignore, not the program's.
            if query == 0
                && handler != libc::SIG_DFL as u64
                && !(ignored && signal != libc::SIGPIPE)
            {
                // SAFETY: writes SIG_DFL from a local, zeroed buffer.
                unsafe { sys(libc::SYS_rt_sigaction, [signal.into(), addr(&default), 0]) };
            }
        }
        // SAFETY: no pointers.
        if unsafe { sys(libc::SYS_setsid, [0; 3]) } < 0 {
            return errno();
        }
        for (target, fd) in (0..).zip(plan.stdio) {
            // SAFETY: no pointers; the source is an open fd above 2, so never the target.
            if fd >= 0 && unsafe { sys(libc::SYS_dup3, [fd.into(), target, 0]) } < 0 {
                return errno();
            }
        }
        // SAFETY: the plan's NUL-terminated path.
        if unsafe { sys(libc::SYS_chdir, [plan.cwd as c_long, 0, 0]) } < 0 {
            return errno();
        }
        let unblocked = 0u64;
        // SAFETY: sets the mask from a local.
        if unsafe {
            sys(
                libc::SYS_rt_sigprocmask,
                [libc::SIG_SETMASK.into(), addr(&unblocked), 0],
            )
        } < 0
        {
            return errno();
        }
        let [program, argv, envp] = [
            plan.program as c_long,
            plan.argv as c_long,
            plan.envp as c_long,
        ];
        // SAFETY: the plan's path and NULL-terminated arrays of NUL-terminated strings.
        unsafe { sys(libc::SYS_execve, [program, argv, envp]) };
        errno()
    }

    /// A pointer as a system call's argument.
    fn addr<T>(value: &T) -> c_long {
        std::ptr::from_ref(value) as c_long
    }

    /// A pointer the system call writes through.
    fn addr_mut<T>(value: &mut T) -> c_long {
        std::ptr::from_mut(value) as c_long
    }

    /// System call `number` with three arguments and, as the fourth, the size of a kernel signal
    /// set (which only the signal calls read): -1 and errno set on failure.
    ///
    /// # Safety
    ///
    /// Every pointer among the arguments must be valid for what the call does with it.
    unsafe fn sys(number: c_long, [a, b, c]: [c_long; 3]) -> c_long {
        // SAFETY: the caller's.
        unsafe { libc::syscall(number, a, b, c, KERNEL_SIGSET as c_long) }
    }

    /// The errno the last failed call left (the waiting thread's: the child shares its TLS).
    fn errno() -> c_int {
        // SAFETY: the calling thread's errno slot, always valid.
        unsafe { *libc::__errno_location() }
    }
}

/// Off Linux the direct path is not taken (see [`supported`]).
#[cfg(not(target_os = "linux"))]
mod child {
    use super::Plan;

    pub(super) fn start(_plan: &Plan) -> std::io::Result<libc::pid_t> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// The pointers of `strings`, then NULL, as `execve` takes them.
fn null_terminated(strings: &[CString]) -> Vec<*mut c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// A program the direct path started; reaped when waited for, or by a thread of its own when
/// dropped before it ended.
pub(crate) struct Child {
    pid: pid_t,
    reaped: bool,
}

impl Child {
    /// Waits until the program ends and reaps it.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let pid = self.pid;
        match shellwright_io::pidfd_open(pid as u32) {
            Some(pidfd) if exits_soon(&pidfd) => {}
            Some(pidfd) => {
                // SAFETY: an OwnedFd stays open, as the same fd, for as long as the AsyncFd owns it.
                let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }?;
                let _exited = pidfd.readable().await?;
            }
            None => {
                tokio::task::spawn_blocking(move || wait_for_exit(pid))
                    .await
                    .map_err(io::Error::other)??;
            }
        }
        let status = reap(pid, 0)?.unwrap_or_default();
        self.reaped = true;
        Ok(ExitStatus::from_raw(status))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Still running (`None`): reaped by a thread once it ends. An error means there is
        // nothing left to reap.
        if self.reaped || !matches!(reap(self.pid, libc::WNOHANG), Ok(None)) {
            return;
        }
        let pid = self.pid;
        // Without a thread the zombie stays until the host ends; nothing else can be done.
        let _ = std::thread::Builder::new()
            .name("shellwright-reaper".into())
            .spawn(move || reap(pid, 0));
    }
}

/// Whether the program of `pidfd` ends within [`QUICK_EXIT`], waited for on the calling thread
/// (the session's). A runtime worker that polled the pidfd would only wake that thread in turn:
/// one thread hand-off more between the program's exit and the run's end, tens of microseconds of
/// a `true`'s millisecond on a small machine. The caller's cancellation is seen when the window
/// closes (its `select!` polls the token again), so it comes at most that late.
fn exits_soon(pidfd: &OwnedFd) -> bool {
    let mut fds = [PollFd::readable(Some(pidfd.as_fd()))];
    matches!(poll(&mut fds, Some(QUICK_EXIT)), Ok(ready) if ready > 0)
}

/// `waitpid(pid, options)`, retried when a signal interrupts it: the raw status, or `None` when
/// `WNOHANG` found the process still running.
fn reap(pid: pid_t, options: c_int) -> io::Result<Option<c_int>> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into a local.
        match unsafe { libc::waitpid(pid, &mut status, options) } {
            -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => continue,
            -1 => return Err(io::Error::last_os_error()),
            0 => return Ok(None),
            _ => return Ok(Some(status)),
        }
    }
}

/// Blocks until `pid` has ended, leaving it to be reaped.
fn wait_for_exit(pid: pid_t) -> io::Result<()> {
    loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: waitid writes a siginfo_t into the local; WNOWAIT leaves the child unreaped.
        let result = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        match result {
            -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => continue,
            -1 => return Err(io::Error::last_os_error()),
            _ => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn spawned(program: &str, argv: &[&str]) -> Child {
        spawned_with(program, argv, EnvBlock::default())
    }

    fn spawned_with(program: &str, argv: &[&str], env: EnvBlock) -> Child {
        start(program, argv, env, "/", &[None, None, None]).expect("spawns")
    }

    fn start(
        program: &str,
        argv: &[&str],
        env: EnvBlock,
        cwd: &str,
        stdio: &[Option<OwnedFd>; 3],
    ) -> io::Result<Child> {
        let argv: Vec<String> = argv.iter().map(|word| (*word).to_string()).collect();
        Spawn {
            program: Path::new(program),
            argv: &argv,
            env,
            cwd: Path::new(cwd),
            stdio,
        }
        .start()
    }

    fn pidfd(child: &Child) -> OwnedFd {
        shellwright_io::pidfd_open(child.pid as u32).expect("a kernel with pidfds")
    }

    #[test]
    fn a_program_that_has_ended_is_seen_ending_on_the_calling_thread() {
        if !supported() {
            return;
        }
        let mut child = spawned("/bin/true", &["true"]);
        let pidfd = pidfd(&child);
        // Ended but not reaped, whatever the machine's load: the window has nothing to wait for.
        wait_for_exit(child.pid).expect("waits");
        assert!(exits_soon(&pidfd));
        assert_eq!(reap(child.pid, libc::WNOHANG).expect("reaps"), Some(0));
        child.reaped = true;
    }

    #[test]
    fn a_longer_one_is_handed_over_when_the_window_closes() {
        if !supported() {
            return;
        }
        let mut child = spawned("/bin/sleep", &["sleep", "5"]);
        let started = Instant::now();
        assert!(!exits_soon(&pidfd(&child)));
        // At most the window (a signal caught by the test process may end it sooner).
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(2), "{waited:?}");
        // SAFETY: signals the child this test started and has not reaped.
        unsafe { libc::kill(child.pid, libc::SIGKILL) };
        // Reaped here, not by the drop's thread, which the test process could outlive.
        assert!(reap(child.pid, 0).expect("reaps").is_some());
        child.reaped = true;
    }

    /// The program of `argv` run with its stdout on a pipe: what it printed, read to the end
    /// before the program is reaped (a full pipe would otherwise hold it).
    fn output_of(argv: &[&str], cwd: &str) -> io::Result<String> {
        use std::io::Read as _;

        let (read, write) = shellwright_io::pipe().expect("pipe");
        let mut child = start(
            argv[0],
            argv,
            EnvBlock::default(),
            cwd,
            &[None, Some(write), None],
        )?;
        let mut text = String::new();
        std::fs::File::from(read)
            .read_to_string(&mut text)
            .expect("reads");
        assert_eq!(reap(child.pid, 0).expect("reaps"), Some(0));
        child.reaped = true;
        Ok(text)
    }

    #[test]
    fn the_program_has_a_session_of_its_own_an_empty_mask_and_sigpipe_at_its_default() {
        if !supported() {
            return;
        }
        // Blocked on this thread while it spawns (the test harness ignores SIGPIPE, as std does).
        let mut usr1 = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: a local set, then this thread's mask, restored below.
        unsafe {
            libc::sigemptyset(usr1.as_mut_ptr());
            libc::sigaddset(usr1.as_mut_ptr(), libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, usr1.as_ptr(), std::ptr::null_mut());
        }
        let out = output_of(&["/bin/cat", "/proc/self/status", "/proc/self/stat"], "/");
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, usr1.as_ptr(), std::ptr::null_mut()) };
        let out = out.expect("spawns");
        let field = |name: &str| {
            let line = out.lines().find(|line| line.starts_with(name)).expect(name);
            u64::from_str_radix(line[name.len()..].trim(), 16).expect("a hex mask")
        };
        assert_eq!(field("SigBlk:"), 0);
        assert_eq!(field("SigIgn:") & (1 << (libc::SIGPIPE - 1)), 0);
        // After the command's name: state, parent, process group, session.
        let stat = out.lines().last().expect("stat");
        let pid: u32 = stat
            .split(' ')
            .next()
            .and_then(|pid| pid.parse().ok())
            .expect("pid");
        let fields: Vec<&str> = stat.rsplit_once(") ").expect("name").1.split(' ').collect();
        assert_eq!([fields[2], fields[3]], [pid.to_string(), pid.to_string()]);
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error() {
        if !supported() {
            return;
        }
        let kind = |argv: &[&str], cwd: &str| output_of(argv, cwd).map_err(|e| e.kind());
        assert_eq!(
            kind(&["/no/such/program"], "/"),
            Err(io::ErrorKind::NotFound)
        );
        assert_eq!(
            kind(&["/etc/passwd"], "/"),
            Err(io::ErrorKind::PermissionDenied)
        );
        assert_eq!(
            kind(&["/bin/true"], "/no/such/dir"),
            Err(io::ErrorKind::NotFound)
        );
        // A script without `#!` is not for execve: brush's execvp hands it to /bin/sh.
        let dir = std::env::temp_dir().join(format!("shellwright-spawn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let script = dir.join("script");
        std::fs::write(&script, "true\n").expect("script");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let ran = output_of(&[script.to_str().expect("utf-8")], "/");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(ran.map_err(|e| e.raw_os_error()), Err(Some(libc::ENOEXEC)));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_glibc_version_is_read_as_numbers() {
        assert!(glibc_at_least(2, 17));
        assert!(glibc_at_least(1, 99));
        assert!(!glibc_at_least(2, 999));
        assert!(!glibc_at_least(3, 0));
    }

    #[test]
    fn the_program_gets_exactly_the_env_block() {
        if !supported() {
            return;
        }
        let mut env = EnvBlock::default();
        env.push("A", "1 = 2").expect("no NUL");
        env.push("EMPTY", "").expect("no NUL");
        env.push("PATH", "/usr/bin:/bin").expect("no NUL");
        // Rejected whole: the block is as it was.
        assert!(env.push("B", "x\0y").is_err());
        assert!(env.push("B\0", "y").is_err());
        // Nothing else is passed (sh exports its own PWD).
        let script = r#"test "$A" = "1 = 2" && test "${EMPTY-unset}" = "" && test -z "${B+set}" \
            && test "$(env | grep -v '^PWD=' | wc -l)" -eq 3"#;
        let mut child = spawned_with("/bin/sh", &["sh", "-c", script], env);
        assert_eq!(reap(child.pid, 0).expect("reaps"), Some(0));
        child.reaped = true;
    }
}
