//! How the direct path ([`direct`](super::direct)) starts its program: `posix_spawn(3)`, which on
//! glibc is a `clone(CLONE_VM | CLONE_VFORK)` that copies nothing of the host, asked for what
//! brush's spawns get from the spawn policy and std: a session of its own
//! (`POSIX_SPAWN_SETSID`, so no controlling terminal and a process group of its own), an empty
//! signal mask and SIGPIPE at its default, its stdio and working directory.
//!
//! std's `Command` would use `posix_spawn` too, but cannot ask for a new session. Two pieces of
//! glibc are newer than the oldest glibc the addon is built for: `POSIX_SPAWN_SETSID` (2.26)
//! and `posix_spawn_file_actions_addchdir_np` (2.29), looked up when first needed
//! ([`supported`]); without them the direct path declines and brush runs the command (with the
//! fork handler's session). Only Linux's C libraries are asked: elsewhere the direct path is never
//! taken and brush starts every program.
//!
//! The program is waited for through a pidfd: on the session's thread for its first two
//! milliseconds ([`QUICK_EXIT`]), then polled by the runtime (on kernels without pidfds, on the
//! blocking pool); a [`Child`] dropped before its end — a cancelled run — is reaped by a thread
//! of its own once the run's termination ends it.

use std::ffi::{CString, c_char, c_int, c_short};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::Duration;

use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t};
use shellwright_io::{PollFd, poll};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// How long a program's exit is waited for on the session's thread before the runtime takes
/// the wait over ([`exits_soon`]): what `true`, `ls` or `git rev-parse` take.
const QUICK_EXIT: Duration = Duration::from_millis(2);

/// `posix_spawn_file_actions_addchdir_np`.
type AddChdir = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, *const c_char) -> c_int;

/// What the direct path needs of the C library, looked up once.
#[derive(Clone, Copy)]
struct Support {
    add_chdir: AddChdir,
    /// `POSIX_SPAWN_SETSID`.
    setsid: c_short,
}

/// The pieces of the C library that are looked up: present when the direct path can be taken.
fn support() -> Option<Support> {
    static SUPPORT: OnceLock<Option<Support>> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let setsid = setsid_flag()?;
        let add_chdir = lookup_add_chdir()?;
        accepts(setsid).then_some(Support { add_chdir, setsid })
    })
}

/// Whether this libc can spawn a process the direct path's way.
pub(crate) fn supported() -> bool {
    support().is_some()
}

#[cfg(target_os = "linux")]
fn setsid_flag() -> Option<c_short> {
    Some(libc::POSIX_SPAWN_SETSID)
}

/// Off Linux the direct path is not taken (see the module's documentation).
#[cfg(not(target_os = "linux"))]
fn setsid_flag() -> Option<c_short> {
    None
}

fn lookup_add_chdir() -> Option<AddChdir> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
    let symbol = unsafe {
        libc::dlsym(
            libc::RTLD_DEFAULT,
            c"posix_spawn_file_actions_addchdir_np".as_ptr(),
        )
    };
    if symbol.is_null() {
        return None;
    }
    // SAFETY: the symbol is glibc's (and musl's) function of exactly this signature.
    Some(unsafe { std::mem::transmute::<*mut libc::c_void, AddChdir>(symbol) })
}

/// Whether `posix_spawnattr_setflags` takes `POSIX_SPAWN_SETSID` (it refuses flags it does not
/// know with EINVAL).
fn accepts(setsid: c_short) -> bool {
    Attributes::new()
        .and_then(|mut attributes| attributes.set_flags(setsid))
        .is_ok()
}

/// Errors of the `posix_spawn` family, which return the error number instead of setting errno.
fn check(code: c_int) -> io::Result<()> {
    match code {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| nul_error())
}

fn nul_error() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "NUL in argument")
}

/// A `posix_spawnattr_t`, destroyed on drop.
struct Attributes(posix_spawnattr_t);

impl Attributes {
    fn new() -> io::Result<Self> {
        let mut attributes = MaybeUninit::<posix_spawnattr_t>::uninit();
        // SAFETY: init writes a valid attribute object, which is used only after it succeeded.
        unsafe {
            check(libc::posix_spawnattr_init(attributes.as_mut_ptr()))?;
            Ok(Self(attributes.assume_init()))
        }
    }

    fn set_flags(&mut self, flags: c_short) -> io::Result<()> {
        // SAFETY: an initialised attribute object.
        check(unsafe { libc::posix_spawnattr_setflags(&mut self.0, flags) })
    }

    /// An empty signal mask and SIGPIPE at its default (the host ignores it), as std gives every
    /// child.
    fn reset_signals(&mut self) -> io::Result<()> {
        // SAFETY: sigset operations on a local set, and setters that copy it into the attributes.
        unsafe {
            let mut set = MaybeUninit::<libc::sigset_t>::uninit();
            check(libc::sigemptyset(set.as_mut_ptr()))?;
            check(libc::posix_spawnattr_setsigmask(&mut self.0, set.as_ptr()))?;
            check(libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE))?;
            check(libc::posix_spawnattr_setsigdefault(
                &mut self.0,
                set.as_ptr(),
            ))
        }
    }
}

impl Drop for Attributes {
    fn drop(&mut self) {
        // SAFETY: the object was initialised by `new`.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

/// A `posix_spawn_file_actions_t`, destroyed on drop.
struct FileActions(posix_spawn_file_actions_t);

impl FileActions {
    fn new() -> io::Result<Self> {
        let mut actions = MaybeUninit::<posix_spawn_file_actions_t>::uninit();
        // SAFETY: init writes a valid object, which is used only after it succeeded.
        unsafe {
            check(libc::posix_spawn_file_actions_init(actions.as_mut_ptr()))?;
            Ok(Self(actions.assume_init()))
        }
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: the object was initialised by `new`.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
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
        let unsupported = || io::Error::from(io::ErrorKind::Unsupported);
        let support = support().ok_or_else(unsupported)?;
        let program = c_string(self.program.as_os_str().as_bytes())?;
        let cwd = c_string(self.cwd.as_os_str().as_bytes())?;
        let argv = self
            .argv
            .iter()
            .map(|word| c_string(word.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let argv_pointers = null_terminated(&argv);
        let env_pointers = self.env.pointers();

        let mut actions = FileActions::new()?;
        for (target, fd) in (0..).zip(self.stdio) {
            let Some(fd) = fd else { continue };
            // A source among 0–2 could be overwritten by an earlier dup2 (a host that closed its
            // own stdio); brush's fork copes with that, so it is left to brush.
            if fd.as_raw_fd() < 3 {
                return Err(unsupported());
            }
            // SAFETY: an initialised actions object and two fds; the action is only recorded.
            check(unsafe {
                libc::posix_spawn_file_actions_adddup2(&mut actions.0, fd.as_raw_fd(), target)
            })?;
        }
        // SAFETY: as above, with a NUL-terminated path that outlives the spawn.
        check(unsafe { (support.add_chdir)(&mut actions.0, cwd.as_ptr()) })?;

        let mut attributes = Attributes::new()?;
        attributes.reset_signals()?;
        attributes.set_flags(
            support.setsid
                | libc::POSIX_SPAWN_SETSIGMASK as c_short
                | libc::POSIX_SPAWN_SETSIGDEF as c_short,
        )?;
        let mut pid: pid_t = 0;
        // SAFETY: every pointer is valid for the call: the path, the NUL-terminated pointer
        // arrays over CStrings that outlive it, the initialised actions and attributes.
        check(unsafe {
            libc::posix_spawn(
                &mut pid,
                program.as_ptr(),
                &actions.0,
                &attributes.0,
                argv_pointers.as_ptr(),
                env_pointers.as_ptr(),
            )
        })?;
        Ok(Child { pid, reaped: false })
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
        let argv: Vec<String> = argv.iter().map(|word| (*word).to_string()).collect();
        Spawn {
            program: Path::new(program),
            argv: &argv,
            env,
            cwd: Path::new("/"),
            stdio: &[None, None, None],
        }
        .start()
        .expect("spawns")
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
