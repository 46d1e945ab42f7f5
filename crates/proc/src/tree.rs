//! Process enumeration and signalling, pinned to process identity.

use std::collections::HashMap;

/// A process's identity: its pid and its start time. A pid alone is not an identity because the
/// kernel reuses pids; the pair is unique for the life of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessId {
    pub pid: u32,
    /// Start time in the platform's finest unit (clock ticks since boot on Linux, seconds elsewhere).
    pub start_time: u64,
}

/// One row of a [`ProcessTable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    pub id: ProcessId,
    pub ppid: Option<u32>,
    /// Process group id, when the platform reports it.
    pub pgid: Option<u32>,
    /// Session id, when the platform reports it.
    pub session: Option<u32>,
    /// Exited but not yet reaped by its parent: it holds a pid but runs nothing.
    pub zombie: bool,
}

impl ProcessInfo {
    pub fn pid(&self) -> u32 {
        self.id.pid
    }
}

/// A snapshot of the machine's processes with a parent → children index.
#[derive(Debug, Default)]
pub struct ProcessTable {
    by_pid: HashMap<u32, ProcessInfo>,
    children: HashMap<u32, Vec<u32>>,
}

impl ProcessTable {
    /// Reads every process visible to us. Processes that vanish while being read are skipped.
    pub fn snapshot() -> Self {
        Self::from_rows(platform::list())
    }

    /// Builds a table from rows (used by tests and by the platform readers).
    pub fn from_rows(rows: impl IntoIterator<Item = ProcessInfo>) -> Self {
        let mut table = Self::default();
        for row in rows {
            if let Some(ppid) = row.ppid {
                table.children.entry(ppid).or_default().push(row.pid());
            }
            table.by_pid.insert(row.pid(), row);
        }
        for kids in table.children.values_mut() {
            kids.sort_unstable();
        }
        table
    }

    pub fn get(&self, pid: u32) -> Option<&ProcessInfo> {
        self.by_pid.get(&pid)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ProcessInfo> {
        self.by_pid.values()
    }

    /// Direct children of `pid`, in pid order.
    pub fn children(&self, pid: u32) -> impl Iterator<Item = &ProcessInfo> {
        self.children
            .get(&pid)
            .into_iter()
            .flatten()
            .filter_map(|child| self.by_pid.get(child))
    }

    /// Every descendant of `pid` (not `pid` itself), parents before their children.
    /// Reverse it to signal children first.
    pub fn descendants(&self, pid: u32) -> Vec<ProcessInfo> {
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::from([pid]);
        while let Some(parent) = queue.pop_front() {
            for child in self.children(parent) {
                // A cycle cannot happen in a consistent snapshot, but a racy one must not loop.
                if child.pid() != pid && !out.iter().any(|p: &ProcessInfo| p.pid() == child.pid()) {
                    queue.push_back(child.pid());
                    out.push(child.clone());
                }
            }
        }
        out
    }
}

/// The current row for `pid`, read without enumerating every process; `None` when no such pid
/// exists. The caller compares [`ProcessInfo::id`] to tell a reused pid from the process it means.
pub fn process_info(pid: u32) -> Option<ProcessInfo> {
    platform::read(pid)
}

/// Whether the process with this identity still exists and has not exited (a zombie has exited).
pub fn is_alive(id: ProcessId) -> bool {
    platform::read(id.pid).is_some_and(|info| info.id == id && !info.zombie)
}

/// Sends `signal` to the process if it is still the same process; returns whether it was sent.
pub fn send_signal(id: ProcessId, signal: i32) -> bool {
    platform::send_signal(id, signal)
}

/// Whether the process's initial environment holds the exact `NAME=value` entry. False when the
/// environment cannot be read (another user's process, or a platform without `/proc`).
pub fn environ_contains(pid: u32, entry: &str) -> bool {
    platform::environ(pid).is_some_and(|env| env.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
}

/// The current time in the unit of [`ProcessId::start_time`]: a process started after this call
/// has a start time at least this large.
pub fn now_as_start_time() -> u64 {
    platform::now_as_start_time()
}

/// The pids of the host process's children, as far as the platform can list them cheaply
/// (Linux: `/proc/self/task/*/children`); empty elsewhere.
pub(crate) fn host_children() -> Vec<u32> {
    platform::host_children()
}

/// Where the kernel's pid allocator stands: it hands out pids in increasing order, from just
/// after `last` up to below `max`, then wraps around to low pids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PidCursor {
    /// The last pid handed out in our pid namespace.
    pub last: u32,
    /// One past the largest pid the kernel hands out (`pid_max`).
    pub max: u32,
}

/// The pid allocator's position now (Linux: `/proc/sys/kernel/ns_last_pid` and `pid_max`);
/// `None` where the platform does not show it.
pub(crate) fn pid_cursor() -> Option<PidCursor> {
    platform::pid_cursor()
}

/// The process's initial environment, NUL-separated; `None` when it cannot be read.
pub(crate) fn platform_environ(pid: u32) -> Option<Vec<u8>> {
    platform::environ(pid)
}

#[cfg(target_os = "linux")]
mod platform {
    use super::{ProcessId, ProcessInfo};

    pub fn list() -> Vec<ProcessInfo> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(read)
            .collect()
    }

    pub fn read(pid: u32) -> Option<ProcessInfo> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(pid, &stat)
    }

    /// Parses `/proc/<pid>/stat` (proc(5)). The command name may contain spaces and parentheses,
    /// so fields are counted from the last `)`.
    pub fn parse_stat(pid: u32, stat: &str) -> Option<ProcessInfo> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = *fields.first()?;
        let ppid: u32 = fields.get(1)?.parse().ok()?;
        let pgid: u32 = fields.get(2)?.parse().ok()?;
        let session: u32 = fields.get(3)?.parse().ok()?;
        let start_time: u64 = fields.get(19)?.parse().ok()?;
        Some(ProcessInfo {
            id: ProcessId { pid, start_time },
            ppid: (ppid != 0).then_some(ppid),
            pgid: Some(pgid),
            session: Some(session),
            zombie: state == "Z" || state == "X",
        })
    }

    /// Clock ticks since boot, as `/proc/<pid>/stat` counts a process's start (proc(5)).
    pub fn now_as_start_time() -> u64 {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the valid timespec; sysconf takes an integer.
        let (ok, hz) = unsafe {
            (
                libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut now) == 0,
                libc::sysconf(libc::_SC_CLK_TCK),
            )
        };
        if !ok || hz <= 0 {
            return 0;
        }
        let hz = hz as u64;
        now.tv_sec as u64 * hz + now.tv_nsec as u64 * hz / 1_000_000_000
    }

    pub fn environ(pid: u32) -> Option<Vec<u8>> {
        std::fs::read(format!("/proc/{pid}/environ")).ok()
    }

    pub fn pid_cursor() -> Option<super::PidCursor> {
        let files = CURSOR_FILES.get_or_init(CursorFiles::open).as_ref()?;
        Some(super::PidCursor {
            last: read_number(&files.last_pid)?,
            max: read_number(&files.pid_max)?,
        })
    }

    /// The two sysctl files of the pid cursor, opened once per process. Every run reads the
    /// cursor as it begins (on Node's thread, for a `Shell`), and looking a path up under
    /// `/proc/sys` costs more than the read: with both files opened anew, beginning a run took
    /// 4.0–4.5 µs, with one `pread` each 1.2–1.9 µs (the `scope_cost` example).
    struct CursorFiles {
        last_pid: std::fs::File,
        pid_max: std::fs::File,
    }

    static CURSOR_FILES: std::sync::OnceLock<Option<CursorFiles>> = std::sync::OnceLock::new();

    impl CursorFiles {
        fn open() -> Option<Self> {
            Some(Self {
                last_pid: std::fs::File::open("/proc/sys/kernel/ns_last_pid").ok()?,
                pid_max: std::fs::File::open("/proc/sys/kernel/pid_max").ok()?,
            })
        }
    }

    /// A sysctl file's number, read afresh in one `pread` from its start: the kernel writes a
    /// sysctl's value anew for every read at offset 0 (it is a few bytes long).
    fn read_number(file: &std::fs::File) -> Option<u32> {
        use std::os::unix::fs::FileExt as _;
        let mut text = [0u8; 32];
        let n = file.read_at(&mut text, 0).ok()?;
        std::str::from_utf8(&text[..n]).ok()?.trim().parse().ok()
    }

    /// Each thread lists the children it forked (proc(5), `/proc/<pid>/task/<tid>/children`).
    /// A run that begins where `ns_last_pid` cannot be read (or `pid_max` is tiny) reads these,
    /// one file per host thread: each is read into one reused buffer with plain `read`s
    /// (`read_to_string` would `statx` and `lseek` each file first, to size a buffer for a file
    /// that reports no size).
    pub fn host_children() -> Vec<u32> {
        use std::io::Read;

        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return Vec::new();
        };
        let mut children = Vec::new();
        let mut list = Vec::new();
        for task in tasks.flatten() {
            list.clear();
            let Ok(mut file) = std::fs::File::open(task.path().join("children")) else {
                continue;
            };
            let mut chunk = [0u8; 1024];
            // Not `read_to_end`: for a `File` it sizes its buffer with a `statx` and an `lseek`.
            loop {
                match file.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => list.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => {
                        list.clear();
                        break;
                    }
                }
            }
            let pids = list
                .split(u8::is_ascii_whitespace)
                .filter_map(|pid| std::str::from_utf8(pid).ok()?.parse::<u32>().ok());
            children.extend(pids);
        }
        children
    }

    /// Signals through a pidfd when the kernel has them: once the pidfd is open and the start time
    /// still matches, the signal cannot reach a process that reused the pid.
    pub fn send_signal(id: ProcessId, signal: i32) -> bool {
        use std::os::fd::AsRawFd;
        let same = || read(id.pid).is_some_and(|p| p.id == id);
        let Some(pidfd) = shellwright_io::pidfd_open(id.pid) else {
            // SAFETY: kill with integer arguments.
            return same() && unsafe { libc::kill(id.pid as libc::pid_t, signal) } == 0;
        };
        same()
            // SAFETY: pidfd_send_signal on an open pidfd with a null siginfo.
            && unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            } == 0
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    use super::{ProcessId, ProcessInfo};
    use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System};

    fn info(pid: &Pid, p: &sysinfo::Process) -> ProcessInfo {
        let raw = pid.as_u32();
        #[cfg(unix)]
        let pgid = {
            // SAFETY: getpgid only reads kernel state for the given pid.
            let g = unsafe { libc::getpgid(raw as libc::pid_t) };
            (g > 0).then_some(g as u32)
        };
        #[cfg(not(unix))]
        let pgid = None;
        #[cfg(unix)]
        let session = {
            // SAFETY: getsid only reads kernel state for the given pid.
            let s = unsafe { libc::getsid(raw as libc::pid_t) };
            (s > 0).then_some(s as u32)
        };
        #[cfg(not(unix))]
        let session = None;
        ProcessInfo {
            id: ProcessId {
                pid: raw,
                start_time: p.start_time(),
            },
            ppid: p.parent().map(|pp| pp.as_u32()),
            pgid,
            session,
            zombie: matches!(p.status(), ProcessStatus::Zombie | ProcessStatus::Dead),
        }
    }

    /// Seconds since the epoch, the unit `sysinfo` reports start times in.
    pub fn now_as_start_time() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    pub fn list() -> Vec<ProcessInfo> {
        let Ok(mut sys) = System::new() else {
            return Vec::new();
        };
        sys.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing(),
        );
        sys.processes()
            .iter()
            .filter(|(_, p)| identified(p))
            .map(|(pid, p)| info(pid, p))
            .collect()
    }

    /// Whether sysinfo knows when the process started, which its identity needs. On Windows it
    /// reports 0 for a process it could not open — one still starting, or another user's — and a
    /// [`ProcessId`] made from that would match nothing later: such a process is left out until it
    /// can be opened.
    fn identified(p: &sysinfo::Process) -> bool {
        cfg!(not(windows)) || p.start_time() != 0
    }

    pub fn read(pid: u32) -> Option<ProcessInfo> {
        let mut sys = System::new().ok()?;
        let pid = Pid::from_u32(pid);
        sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing(),
        );
        sys.process(pid)
            .filter(|p| identified(p))
            .map(|p| info(&pid, p))
    }

    pub fn pid_cursor() -> Option<super::PidCursor> {
        None
    }

    /// Windows: the environment block sysinfo reads from the process's memory (its PEB), as
    /// `NAME=value` entries joined by NUL. Elsewhere (macOS) it is not read.
    #[cfg(windows)]
    pub fn environ(pid: u32) -> Option<Vec<u8>> {
        use std::os::windows::ffi::OsStrExt as _;
        let mut sys = System::new().ok()?;
        let pid = Pid::from_u32(pid);
        sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing().with_environ(sysinfo::UpdateKind::Always),
        );
        let process = sys.process(pid)?;
        let mut block = Vec::new();
        for entry in process.environ() {
            let wide: Vec<u16> = entry.encode_wide().collect();
            block.extend_from_slice(String::from_utf16_lossy(&wide).as_bytes());
            block.push(0);
        }
        (!block.is_empty()).then_some(block)
    }

    #[cfg(not(windows))]
    pub fn environ(_pid: u32) -> Option<Vec<u8>> {
        None
    }

    pub fn host_children() -> Vec<u32> {
        Vec::new()
    }

    pub fn send_signal(id: ProcessId, signal: i32) -> bool {
        #[cfg(unix)]
        {
            read(id.pid).is_some_and(|p| p.id == id)
                // SAFETY: kill with integer arguments.
                && unsafe { libc::kill(id.pid as libc::pid_t, signal) } == 0
        }
        #[cfg(windows)]
        {
            windows::terminate(id, signal)
        }
        #[cfg(not(any(unix, windows)))]
        {
            let _ = (id, signal);
            false
        }
    }

    /// Windows has no signals. As Node's `subprocess.kill` there, the signals that ask a process
    /// to end (SIGINT, SIGQUIT, SIGKILL, SIGTERM) end it at once with `TerminateProcess`; any
    /// other is refused.
    #[cfg(windows)]
    mod windows {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::Threading::{
            OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_TERMINATE, TerminateProcess,
        };

        use super::{ProcessId, read};

        const ENDING_SIGNALS: [i32; 4] = [2, 3, crate::SIGKILL, 15];

        /// The exit code a process ended this way reports, as `taskkill /F` leaves.
        const TERMINATED_EXIT_CODE: u32 = 1;

        pub fn terminate(id: ProcessId, signal: i32) -> bool {
            if !ENDING_SIGNALS.contains(&signal) {
                return false;
            }
            // SAFETY: OpenProcess takes plain values and returns a handle or null.
            let handle = unsafe {
                OpenProcess(
                    PROCESS_TERMINATE | PROCESS_QUERY_LIMITED_INFORMATION,
                    0,
                    id.pid,
                )
            };
            if handle.is_null() {
                return false;
            }
            // The open handle keeps the pid from being reused, so the identity checked here is
            // the process terminated below.
            let same = read(id.pid).is_some_and(|p| p.id == id);
            // SAFETY: `handle` is a process handle this function opened and has not closed.
            let ended = same && unsafe { TerminateProcess(handle, TERMINATED_EXIT_CODE) } != 0;
            // SAFETY: as above; it is closed exactly once, here.
            unsafe { CloseHandle(handle) };
            ended
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: u32, ppid: u32) -> ProcessInfo {
        ProcessInfo {
            id: ProcessId { pid, start_time: 1 },
            ppid: Some(ppid),
            pgid: None,
            session: None,
            zombie: false,
        }
    }

    #[test]
    fn descendants_are_breadth_first_and_exclude_the_root() {
        let table = ProcessTable::from_rows([
            row(1, 0),
            row(10, 1),
            row(11, 10),
            row(12, 10),
            row(13, 11),
            row(20, 1),
        ]);
        let pids: Vec<u32> = table.descendants(10).iter().map(ProcessInfo::pid).collect();
        assert_eq!(pids, vec![11, 12, 13]);
        assert!(table.descendants(13).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn parses_stat_with_parentheses_in_the_name() {
        let stat =
            "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        let info = platform::parse_stat(4242, stat).expect("parses");
        assert_eq!(
            info.id,
            ProcessId {
                pid: 4242,
                start_time: 987654
            }
        );
        assert_eq!(info.ppid, Some(1));
        assert_eq!(info.pgid, Some(4242));
        assert_eq!(info.session, Some(4242));
        assert!(!info.zombie);
        assert!(platform::parse_stat(1, "garbage").is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sees_itself_and_a_real_child() {
        use std::time::Duration;
        let me = std::process::id();
        let before = now_as_start_time();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let table = ProcessTable::snapshot();
        let child_info = table.get(child.id()).expect("child listed").clone();
        assert_eq!(child_info.ppid, Some(me));
        assert!(child_info.id.start_time >= before);
        assert!(child_info.id.start_time <= now_as_start_time());
        assert!(table.children(me).any(|p| p.pid() == child.id()));
        assert!(is_alive(child_info.id));
        assert!(environ_contains(
            child.id(),
            &format!("PATH={}", std::env::var("PATH").unwrap_or_default())
        ));
        assert!(!send_signal(
            ProcessId {
                start_time: child_info.id.start_time + 1,
                ..child_info.id
            },
            libc::SIGKILL
        ));
        assert!(
            is_alive(child_info.id),
            "a stale identity must not be signalled"
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let gone = rt.block_on(crate::stop(
            &crate::StopTargets {
                processes: vec![child_info.id],
                groups: Vec::new(),
            },
            Some(Duration::from_millis(500)),
            Duration::from_secs(2),
            &crate::CancelToken::new(),
        ));
        let status = child.wait().expect("reap");
        assert_eq!(gone, Ok(true));
        assert!(!is_alive(child_info.id));
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGTERM)
        );
    }
}
