//! What every process a session's brush code forks gets before it runs: a session of its own (so
//! no controlling terminal and a process group of its own) and the resource limits the shell that
//! started it set with `ulimit` ([`RunLimits`]).
//!
//! brush-core 0.5 spawns every external command with `std::process::Command` plus a `pre_exec`
//! closure (the fd mappings of `command-fds` register one even when there is nothing to map), so
//! std forks with libc's `fork()`, and libc runs the handlers registered with `pthread_atfork`.
//! One such handler, registered once for the whole process, applies the policy of the thread that
//! forks; a thread without one (Node's and libuv's own, whose `child_process` forks) is left
//! alone. The policy is a thread's own: every thread that runs a session's brush code adopts it
//! ([`adopt_thread`]: the session thread, the session runtime's workers and blocking pool, a run's
//! thread), and before each simple command our DEBUG hook sets the limits of the shell about to
//! run it ([`set_thread_limits`]). A future moves between threads only where it waits, and brush
//! goes from the hook to the spawn without waiting, so the fork sees the limits of its own shell,
//! subshells included.
//!
//! The handler's child half runs in the new process before std's own set-up, where only
//! async-signal-safe code may run: system calls, no allocation, no locks. A thread-local of a
//! `dlopen`ed library may allocate on its first access from a thread, so the child half reads no
//! thread-local: the prepare half, in the parent before the fork, copies the thread's policy into
//! a slot of a static table claimed under the thread's id, which the child half finds by that
//! same id (`pthread_self` is the same in the child) and the parent half frees after the fork. A
//! table, not one static, because older glibc (before 2.28) runs two threads' forks side by side.
//!
//! A fork made for a background job also reports the new process to the job's record, so that `$!`
//! names it even when it ended before anyone asked (see `brush::jobs`): the DEBUG hook names the
//! job a thread runs ([`set_thread_job`]) until its first process is known, and the child half
//! writes the job and its own pid to a pipe — one `write(2)` of a few bytes, which is atomic and,
//! the pipe being non-blocking, never waits — read by [`take_job_reports`].
//!
//! Limits the kernel would refuse are refused by `ulimit` itself (the child cannot report a
//! failed `setrlimit`); a limit on open files so low that std cannot arrange the child's
//! descriptors makes the spawn fail, as in a shell that lowered its own limit.

use std::cell::{Cell, UnsafeCell};
use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

use shellwright_io::lock;

/// Resource numbers are below this (Linux's `RLIM_NLIMITS`).
pub(crate) const RESOURCES: usize = 16;

/// A resource's soft and hard limit, as `setrlimit(2)` takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    pub soft: libc::rlim_t,
    pub hard: libc::rlim_t,
}

/// The limits a shell sets for the processes it starts, where they differ from the host's: at
/// most one per resource, indexed by the resource's number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunLimits {
    set: [Option<Limit>; RESOURCES],
}

impl RunLimits {
    /// No limit of its own: the processes get the host's.
    pub const HOST: Self = Self {
        set: [None; RESOURCES],
    };

    /// The limit set for `resource`, if any.
    pub fn get(&self, resource: usize) -> Option<Limit> {
        self.set.get(resource).copied().flatten()
    }

    /// These limits with `resource` set to `limit` (`None`: the host's).
    pub fn with(mut self, resource: usize, limit: Option<Limit>) -> Self {
        if let Some(slot) = self.set.get_mut(resource) {
            *slot = limit;
        }
        self
    }

    pub fn is_host(&self) -> bool {
        self.set.iter().all(Option::is_none)
    }

    /// `resource=soft:hard` for each limit set, joined by `,` (empty for [`HOST`](Self::HOST)):
    /// a word that needs no quoting (see [`decode`](Self::decode)).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        for (resource, limit) in self.iter() {
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(&format!("{resource}={}:{}", limit.soft, limit.hard));
        }
        text
    }

    /// Reads what [`encode`](Self::encode) wrote; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let mut limits = Self::HOST;
        for entry in text.split(',').filter(|entry| !entry.is_empty()) {
            let (resource, values) = entry.split_once('=')?;
            let (soft, hard) = values.split_once(':')?;
            let resource: usize = resource.parse().ok().filter(|r| *r < RESOURCES)?;
            let limit = Limit {
                soft: soft.parse().ok()?,
                hard: hard.parse().ok()?,
            };
            limits.set[resource] = Some(limit);
        }
        Some(limits)
    }

    fn iter(&self) -> impl Iterator<Item = (usize, Limit)> + '_ {
        self.set
            .iter()
            .enumerate()
            .filter_map(|(resource, limit)| limit.map(|limit| (resource, limit)))
    }
}

/// A session's background job whose first process is not known yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobOfFork {
    pub session: u64,
    pub serial: u64,
}

thread_local! {
    /// The policy of the processes this thread forks: `None` on a thread that runs no session.
    static POLICY: Cell<Option<RunLimits>> = const { Cell::new(None) };
    /// The job whose first process this thread's next fork may be.
    static JOB: Cell<Option<JobOfFork>> = const { Cell::new(None) };
}

/// Says which job the command about to run on this thread belongs to, while that job's first
/// process is not known (`None` otherwise): a fork then reports itself (see [`take_job_reports`]).
pub(crate) fn set_thread_job(job: Option<JobOfFork>) {
    JOB.with(|cell| cell.set(job));
}

/// The bytes of one report: the session, the job's serial and the pid, in native order.
const REPORT_LEN: usize = 20;

/// The write end of the reports' pipe, for the child half (-1 until it exists).
static REPORT_WRITER: AtomicI32 = AtomicI32::new(-1);
/// The read end of the reports' pipe; the lock keeps two readers from splitting the reports.
static REPORT_READER: OnceLock<Mutex<OwnedFd>> = OnceLock::new();

/// Every job's first process reported since the last call, in the order they were forked.
pub(crate) fn take_job_reports() -> Vec<(JobOfFork, u32)> {
    let Some(reader) = REPORT_READER.get() else {
        return Vec::new();
    };
    let reader = lock(reader);
    let mut reports = Vec::new();
    let mut buffer = [0u8; REPORT_LEN * 64];
    loop {
        // SAFETY: reads into a buffer of this frame, its length passed; the fd is ours and open.
        let read =
            unsafe { libc::read(reader.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
        let Ok(read) = usize::try_from(read) else {
            return reports; // EAGAIN: nothing more
        };
        // Writes of a whole report are atomic, so the pipe only ever holds whole reports.
        for report in buffer[..read].chunks_exact(REPORT_LEN) {
            reports.push(decode_report(report));
        }
        if read < buffer.len() {
            return reports;
        }
    }
}

fn encode_report(job: JobOfFork, pid: u32) -> [u8; REPORT_LEN] {
    let mut report = [0u8; REPORT_LEN];
    report[..8].copy_from_slice(&job.session.to_ne_bytes());
    report[8..16].copy_from_slice(&job.serial.to_ne_bytes());
    report[16..].copy_from_slice(&pid.to_ne_bytes());
    report
}

fn decode_report(report: &[u8]) -> (JobOfFork, u32) {
    let mut session = [0u8; 8];
    let mut serial = [0u8; 8];
    let mut pid = [0u8; 4];
    session.copy_from_slice(&report[..8]);
    serial.copy_from_slice(&report[8..16]);
    pid.copy_from_slice(&report[16..REPORT_LEN]);
    let job = JobOfFork {
        session: u64::from_ne_bytes(session),
        serial: u64::from_ne_bytes(serial),
    };
    (job, u32::from_ne_bytes(pid))
}

/// Opens the reports' pipe, both ends non-blocking and closed on exec. Without it (out of
/// descriptors), jobs are found by their tag alone.
fn open_report_pipe() {
    let Ok((read, write)) = shellwright_io::pipe() else {
        return;
    };
    if shellwright_io::set_nonblocking(read.as_fd()).is_err()
        || shellwright_io::set_nonblocking(write.as_fd()).is_err()
    {
        return;
    }
    if REPORT_READER.set(Mutex::new(read)).is_ok() {
        // The write end lives as long as the process, as the handlers do.
        REPORT_WRITER.store(
            std::os::fd::IntoRawFd::into_raw_fd(write),
            Ordering::Release,
        );
    }
}

/// Makes every process the current thread forks from now on start a session of its own, with the
/// host's limits until [`set_thread_limits`] says otherwise. For the threads that run a
/// session's brush code, and only those.
pub(crate) fn adopt_thread() {
    register_handlers();
    POLICY.with(|policy| {
        if policy.get().is_none() {
            policy.set(Some(RunLimits::HOST));
        }
    });
}

/// Sets the limits of the processes the current thread forks, if it runs a session
/// ([`adopt_thread`]); elsewhere does nothing.
pub(crate) fn set_thread_limits(limits: RunLimits) {
    POLICY.with(|policy| {
        if policy.get().is_some() {
            policy.set(Some(limits));
        }
    });
}

/// The limits the processes the current thread forks get; `None` on a thread without a policy.
#[cfg(test)]
pub(crate) fn thread_limits() -> Option<RunLimits> {
    POLICY.with(Cell::get)
}

/// The policy of one fork in progress: claimed by the forking thread's id in the prepare
/// handler, read by the child, freed by the parent.
struct Slot {
    owner: AtomicUsize,
    limits: UnsafeCell<RunLimits>,
    job: UnsafeCell<Option<JobOfFork>>,
}

// SAFETY: `limits` and `job` are written only by the thread that claimed the slot
// (compare-exchange on `owner`), before it forks, and read only by that fork's child (a copy of
// memory made after the write) until the same thread frees the slot.
unsafe impl Sync for Slot {}

/// An unclaimed slot's owner (no thread's id is 0).
const FREE: usize = 0;
/// Forks that can be in their prepare-to-parent window at once before one waits for a slot.
const SLOTS: usize = 32;

static FORKS: [Slot; SLOTS] = [const {
    Slot {
        owner: AtomicUsize::new(FREE),
        limits: UnsafeCell::new(RunLimits::HOST),
        job: UnsafeCell::new(None),
    }
}; SLOTS];

/// Registers the fork handlers, once per process.
fn register_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        open_report_pipe();
        // SAFETY: the handlers are plain functions that live as long as the process (the addon is
        // never unloaded); registering cannot fail but for lack of memory, and then no policy
        // applies, which the tests of this module would show.
        unsafe {
            pthread_atfork(Some(prepare), Some(parent), Some(child));
        }
    });
}

unsafe extern "C" {
    fn pthread_atfork(
        prepare: Option<unsafe extern "C" fn()>,
        parent: Option<unsafe extern "C" fn()>,
        child: Option<unsafe extern "C" fn()>,
    ) -> libc::c_int;
}

/// The forking thread's id, the same in the parent and in the child.
fn thread_id() -> usize {
    // SAFETY: pthread_self cannot fail; it reads the thread pointer, no thread-local of ours.
    unsafe { libc::pthread_self() as usize }
}

/// Before a fork, in the parent: copies the thread's policy into a free slot.
unsafe extern "C" fn prepare() {
    let Some(limits) = POLICY.with(Cell::get) else {
        return;
    };
    let job = JOB.with(Cell::get);
    let me = thread_id();
    loop {
        for slot in &FORKS {
            if slot
                .owner
                .compare_exchange(FREE, me, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                // SAFETY: this thread owns the slot until `parent` frees it (see `Slot`).
                unsafe {
                    *slot.limits.get() = limits;
                    *slot.job.get() = job;
                }
                return;
            }
        }
        // Every slot is in a fork of another thread, which frees it right after its fork.
        std::thread::yield_now();
    }
}

/// After a fork, in the parent: frees the thread's slot, if it claimed one.
unsafe extern "C" fn parent() {
    let me = thread_id();
    for slot in &FORKS {
        if slot.owner.load(Ordering::Relaxed) == me {
            slot.owner.store(FREE, Ordering::Release);
            return;
        }
    }
}

/// After a fork, in the child: applies the policy the forking thread left in its slot, if any.
/// Async-signal-safe: loads, and the system calls of [`apply`].
unsafe extern "C" fn child() {
    let me = thread_id();
    for slot in &FORKS {
        if slot.owner.load(Ordering::Relaxed) == me {
            // SAFETY: the forking thread wrote the slot before the fork; nothing writes it here.
            let (limits, job) = unsafe { (&*slot.limits.get(), *slot.job.get()) };
            apply(limits);
            if let Some(job) = job {
                report(job);
            }
            return;
        }
    }
}

/// Reports the calling process as `job`'s (see [`take_job_reports`]). Async-signal-safe: getpid
/// and one write, which fails rather than waits when the pipe is full.
fn report(job: JobOfFork) {
    let writer = REPORT_WRITER.load(Ordering::Acquire);
    if writer < 0 {
        return;
    }
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    let report = encode_report(job, pid.unsigned_abs());
    // SAFETY: writes a buffer of this frame, its length passed, to the pipe's write end, which
    // lives as long as the process.
    unsafe { libc::write(writer, report.as_ptr().cast(), REPORT_LEN) };
}

/// Gives the calling process a session of its own and `limits`. Errors cannot be reported from
/// a fresh child; `setsid` cannot fail there (a new process leads no group), and `ulimit` refused
/// the limits the kernel would refuse.
fn apply(limits: &RunLimits) {
    // SAFETY: setsid and setrlimit are single system calls on memory of this frame.
    unsafe {
        libc::setsid();
        for (resource, limit) in limits.iter() {
            let value = libc::rlimit {
                rlim_cur: limit.soft,
                rlim_max: limit.hard,
            };
            libc::setrlimit(resource as _, &value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_survive_their_text_form() {
        let limits = RunLimits::HOST
            .with(
                libc::RLIMIT_NOFILE as usize,
                Some(Limit { soft: 64, hard: 64 }),
            )
            .with(
                libc::RLIMIT_CORE as usize,
                Some(Limit {
                    soft: 0,
                    hard: libc::RLIM_INFINITY,
                }),
            );
        assert_eq!(limits.encode(), "4=0:18446744073709551615,7=64:64");
        assert_eq!(RunLimits::decode(&limits.encode()), Some(limits));
        assert_eq!(RunLimits::HOST.encode(), "");
        assert_eq!(RunLimits::decode(""), Some(RunLimits::HOST));
        assert!(RunLimits::decode("").is_some_and(|l| l.is_host()));
        for bad in ["7", "7=1", "16=1:1", "x=1:1", "7=1:y", "7=-1:1"] {
            assert_eq!(RunLimits::decode(bad), None, "{bad}");
        }
        assert_eq!(limits.with(7, None).with(4, None), RunLimits::HOST);
    }

    #[test]
    fn only_adopted_threads_take_limits() {
        std::thread::spawn(|| {
            let limits = RunLimits::HOST.with(7, Some(Limit { soft: 9, hard: 9 }));
            set_thread_limits(limits);
            assert_eq!(thread_limits(), None);
            adopt_thread();
            assert_eq!(thread_limits(), Some(RunLimits::HOST));
            set_thread_limits(limits);
            assert_eq!(thread_limits(), Some(limits));
            adopt_thread();
            assert_eq!(
                thread_limits(),
                Some(limits),
                "adopting again keeps the limits"
            );
        })
        .join()
        .expect("join");
    }

    /// The session id and the open-files limit of a child forked (through a `pre_exec` closure,
    /// as brush spawns) by the current thread.
    fn forked_child_sees() -> (String, Vec<String>) {
        use std::os::unix::process::CommandExt as _;
        let mut command = std::process::Command::new("sh");
        command.args([
            "-c",
            "cut -d' ' -f6 /proc/self/stat; grep 'Max open files' /proc/self/limits",
        ]);
        // SAFETY: an empty closure; it only makes std fork instead of posix_spawn.
        unsafe { command.pre_exec(|| Ok(())) };
        let output = command.output().expect("spawn sh");
        let text = String::from_utf8(output.stdout).expect("utf-8");
        let (sid, limits) = text.split_once('\n').expect("two lines");
        let limits = limits.split_whitespace().map(String::from).collect();
        (sid.to_string(), limits)
    }

    #[test]
    fn a_fork_for_a_job_reports_its_pid() {
        std::thread::spawn(|| {
            adopt_thread();
            let job = JobOfFork {
                session: u64::MAX - 7,
                serial: 42,
            };
            // The session tests of this process read the same pipe, and one may take the report
            // first: a fork whose report nobody else took within a few tries is all it takes.
            let seen = (0..10).any(|_| {
                set_thread_job(Some(job));
                let mut child = {
                    use std::os::unix::process::CommandExt as _;
                    let mut command = std::process::Command::new("true");
                    // SAFETY: an empty closure; it only makes std fork instead of posix_spawn.
                    unsafe { command.pre_exec(|| Ok(())) };
                    command.spawn().expect("spawn true")
                };
                set_thread_job(None);
                let pid = child.id();
                let reports = take_job_reports();
                child.wait().expect("wait for true");
                // Other tests fork too, for other jobs or none.
                let mine: Vec<_> = reports.into_iter().filter(|(r, _)| *r == job).collect();
                assert!(mine.len() <= 1, "one fork, one report: {mine:?}");
                mine == [(job, pid)]
            });
            assert!(seen, "no fork of ten reported its pid");
        })
        .join()
        .expect("join");
        assert_eq!(
            decode_report(&encode_report(
                JobOfFork {
                    session: 1,
                    serial: 2
                },
                3
            )),
            (
                JobOfFork {
                    session: 1,
                    serial: 2
                },
                3
            )
        );
    }

    #[test]
    fn a_fork_of_an_adopted_thread_gets_a_session_and_limits_of_its_own() {
        // SAFETY: getsid(0) reads this process's session id.
        let host_session = unsafe { libc::getsid(0) }.to_string();
        std::thread::spawn(move || {
            let (sid, _) = forked_child_sees();
            assert_eq!(
                sid, host_session,
                "a thread without a policy forks as usual"
            );
            adopt_thread();
            let limits = RunLimits::HOST.with(
                libc::RLIMIT_NOFILE as usize,
                Some(Limit { soft: 40, hard: 50 }),
            );
            set_thread_limits(limits);
            let (sid, nofile) = forked_child_sees();
            assert_ne!(sid, host_session);
            assert_eq!(nofile, ["Max", "open", "files", "40", "50", "files"]);
        })
        .join()
        .expect("join");
    }
}
