//! [`Process`]: one process, pinned to its identity, with the operations an agent needs to inspect
//! and stop it and everything it started.
//!
//! A `Process` remembers its [`ProcessId`] (pid + start time). Every operation first checks that the
//! pid still names that same process; once it has exited — or its pid has been reused — the
//! process reports [`ProcessStatus::Exited`], has no children, arguments or group, and signals
//! nothing.

use std::path::Path;
use std::time::Duration;

use crate::cancel::{CancelReason, CancelToken};
use crate::stop::{StopTargets, check, stop, wait_until_gone};
use crate::tree::{ProcessId, ProcessInfo, ProcessTable, is_alive, process_info};

/// Whether a [`Process`] is still running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessStatus {
    Running,
    /// Exited (a zombie counts), or its pid now belongs to another process.
    Exited,
}

/// A wait or terminate was stopped by its [`CancelToken`] before it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled ({0:?})")]
pub struct Cancelled(pub CancelReason);

/// How [`Process::terminate`] stops a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminateOptions {
    /// Also signal the root's process group when the root leads one (reaches members that left
    /// the tree, e.g. re-parented background jobs).
    pub group: bool,
    /// How long SIGTERM gets before SIGKILL; `None` sends SIGKILL right after SIGTERM.
    pub graceful: Option<Duration>,
    /// How long to wait for the tree to go after SIGKILL.
    pub timeout: Duration,
}

impl Default for TerminateOptions {
    fn default() -> Self {
        Self {
            group: false,
            graceful: Some(Duration::from_millis(1000)),
            timeout: Duration::from_millis(5000),
        }
    }
}

/// One process, identified by pid and start time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    info: ProcessInfo,
}

impl Process {
    /// The process that currently has `pid`, or `None` when there is none.
    pub fn from_pid(pid: u32) -> Option<Self> {
        if pid == 0 {
            return None;
        }
        process_info(pid).map(|info| Self { info })
    }

    /// Every process whose executable is exactly `path` (`/proc/<pid>/exe` on Linux; a
    /// process whose binary was deleted or replaced no longer matches), in pid order.
    pub fn from_path(path: &Path) -> Vec<Self> {
        let mut found: Vec<Self> = platform::pids_with_exe(path)
            .into_iter()
            .filter_map(Self::from_pid)
            .collect();
        found.sort_by_key(Self::pid);
        found
    }

    pub fn id(&self) -> ProcessId {
        self.info.id
    }

    pub fn pid(&self) -> u32 {
        self.info.id.pid
    }

    /// The parent's pid: the current one while the process runs (it changes when the parent
    /// exits and the process is re-parented), the last one seen afterwards.
    pub fn ppid(&self) -> Option<u32> {
        match self.current() {
            Some(now) => now.ppid,
            None => self.info.ppid,
        }
    }

    /// The command line (`/proc/<pid>/cmdline`), or empty once the process has exited or when it
    /// cannot be read. Non-UTF-8 bytes become U+FFFD.
    pub fn args(&self) -> Vec<String> {
        let Some(_) = self.current() else {
            return Vec::new();
        };
        let args = platform::args(self.id()).unwrap_or_default();
        // The pid may have been reused between the identity check and the read.
        if self.current().is_none() {
            return Vec::new();
        }
        args
    }

    /// The process group id while the process runs.
    pub fn group_id(&self) -> Option<u32> {
        self.current().and_then(|now| now.pgid)
    }

    /// Direct children that are still running, in pid order.
    pub fn children(&self) -> Vec<Self> {
        if self.current().is_none() {
            return Vec::new();
        }
        ProcessTable::snapshot()
            .children(self.pid())
            .filter(|child| !child.zombie)
            .map(|child| Self {
                info: child.clone(),
            })
            .collect()
    }

    pub fn status(&self) -> ProcessStatus {
        if is_alive(self.id()) {
            ProcessStatus::Running
        } else {
            ProcessStatus::Exited
        }
    }

    /// Sends `signal` to every running descendant (deepest first), then to the process itself,
    /// then to its process group when it leads one. Returns how many processes were signalled; the
    /// group signal is not counted. Signals nothing once the process has exited.
    pub fn kill_tree(&self, signal: i32) -> usize {
        let mut targets = StopTargets::tree(self.id());
        targets.groups.extend(self.led_group(&targets));
        targets.signal(signal)
    }

    /// SIGTERM to the tree (and, with `options.group`, to the group the root leads), a grace
    /// period, SIGKILL to what remains, then a bounded wait. Resolves `true` when the root, every
    /// descendant found at the start and the group have exited. Already exited → `true` at once.
    pub async fn terminate(
        &self,
        options: TerminateOptions,
        cancel: &CancelToken,
    ) -> Result<bool, Cancelled> {
        check(cancel)?;
        let mut targets = StopTargets::tree(self.id());
        if options.group {
            targets.groups.extend(self.led_group(&targets));
        }
        stop(&targets, options.graceful, options.timeout, cancel).await
    }

    /// Resolves `true` once the process has exited, `false` when `timeout` passes first
    /// (`None` waits forever). Polls cheaply: the interval grows from 1 ms to 20 ms.
    pub async fn wait_for_exit(
        &self,
        timeout: Option<Duration>,
        cancel: &CancelToken,
    ) -> Result<bool, Cancelled> {
        let me = StopTargets {
            processes: vec![self.id()],
            groups: Vec::new(),
        };
        wait_until_gone(&me, timeout, cancel).await
    }

    /// The current row for this pid, when it still names this process and it has not exited.
    fn current(&self) -> Option<ProcessInfo> {
        process_info(self.pid()).filter(|now| now.id == self.id() && !now.zombie)
    }

    /// The root's group, when the root was found running and leads its group.
    fn led_group(&self, targets: &StopTargets) -> Option<u32> {
        if !targets.processes.contains(&self.id()) {
            return None;
        }
        self.info.pgid.filter(|pgid| *pgid == self.pid())
    }
}

#[cfg(target_os = "linux")]
mod platform {
    use std::path::Path;

    use crate::tree::ProcessId;

    pub fn args(id: ProcessId) -> Option<Vec<String>> {
        let raw = std::fs::read(format!("/proc/{}/cmdline", id.pid)).ok()?;
        Some(split_cmdline(&raw))
    }

    /// `/proc/<pid>/cmdline` is NUL-separated with a trailing NUL (proc(5)).
    pub fn split_cmdline(raw: &[u8]) -> Vec<String> {
        let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
        if raw.is_empty() {
            return Vec::new();
        }
        raw.split(|b| *b == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect()
    }

    pub fn pids_with_exe(path: &Path) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == path)
            })
            .collect()
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    use std::path::Path;

    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

    use crate::tree::ProcessId;

    pub fn args(id: ProcessId) -> Option<Vec<String>> {
        let Ok(mut sys) = System::new() else {
            return None;
        };
        let pid = Pid::from_u32(id.pid);
        sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing().with_cmd(UpdateKind::Always),
        );
        let process = sys.process(pid)?;
        Some(
            process
                .cmd()
                .iter()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect(),
        )
    }

    pub fn pids_with_exe(path: &Path) -> Vec<u32> {
        let Ok(mut sys) = System::new() else {
            return Vec::new();
        };
        sys.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().with_exe(UpdateKind::Always),
        );
        sys.processes()
            .iter()
            .filter(|(_, p)| p.exe() == Some(path))
            .map(|(pid, _)| pid.as_u32())
            .collect()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Child, Command};
    use std::time::Instant;

    /// Spawns `sh -c script` in its own process group, so tests can stop whole trees.
    fn spawn_sh(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .expect("spawn sh")
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    /// Waits (bounded) until `process` has `count` children running `sleep`: the shell forks and
    /// execs asynchronously.
    fn wait_for_children(process: &Process, count: usize) -> Vec<Process> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let children = process.children();
            let sleeping = children
                .iter()
                .filter(|c| c.args().first().is_some_and(|a| a == "sleep"));
            if sleeping.count() >= count || Instant::now() > deadline {
                return children;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn splits_cmdline() {
        let table: [(&[u8], Vec<&str>); 4] = [
            (b"sleep\x0030\x00", vec!["sleep", "30"]),
            (b"", vec![]),
            (b"a\x00\x00b\x00", vec!["a", "", "b"]),
            (b"bad\xff\x00", vec!["bad\u{fffd}"]),
        ];
        for (raw, want) in table {
            assert_eq!(platform::split_cmdline(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn describes_a_running_child() {
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("spawn");
        let process = Process::from_pid(child.id()).expect("found");
        assert_eq!(process.pid(), child.id());
        assert_eq!(process.ppid(), Some(std::process::id()));
        // The kernel lets the parent run on before exec has published the new command line.
        let deadline = Instant::now() + Duration::from_secs(5);
        while process.args().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(process.args(), vec!["sleep", "30"]);
        assert_eq!(process.group_id(), Some(child.id()));
        assert_eq!(process.status(), ProcessStatus::Running);
        assert!(process.children().is_empty());
        let sleep_path = std::fs::read_link(format!("/proc/{}/exe", child.id())).expect("exe");
        assert!(
            Process::from_path(&sleep_path)
                .iter()
                .any(|p| p.pid() == child.id())
        );
        assert!(Process::from_path(Path::new("/no/such/binary")).is_empty());

        assert_eq!(process.kill_tree(libc::SIGKILL), 1);
        let status = child.wait().expect("reap");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert_eq!(process.status(), ProcessStatus::Exited);
        assert_eq!(process.args(), Vec::<String>::new());
        assert_eq!(process.group_id(), None);
        assert_eq!(process.kill_tree(libc::SIGKILL), 0);
    }

    #[test]
    fn a_reused_pid_is_another_process() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("spawn");
        let real = Process::from_pid(child.id()).expect("found");
        // The same pid with another start time: what a reused pid looks like.
        let stale = Process {
            info: ProcessInfo {
                id: ProcessId {
                    start_time: real.id().start_time + 1,
                    ..real.id()
                },
                ..real.info.clone()
            },
        };
        assert_eq!(stale.status(), ProcessStatus::Exited);
        assert_eq!(stale.kill_tree(libc::SIGKILL), 0);
        assert!(stale.args().is_empty());
        assert!(stale.children().is_empty());
        assert_eq!(stale.group_id(), None);
        let done = runtime().block_on(stale.wait_for_exit(None, &CancelToken::new()));
        assert_eq!(done, Ok(true));
        assert_eq!(
            real.status(),
            ProcessStatus::Running,
            "the stale handle signalled nothing"
        );
        assert_eq!(real.kill_tree(libc::SIGKILL), 1);
        child.wait().expect("reap");
    }

    #[test]
    fn from_pid_of_nothing_is_none() {
        assert_eq!(Process::from_pid(0), None);
        assert_eq!(Process::from_pid(u32::MAX), None);
    }

    #[test]
    fn kill_tree_signals_children_root_and_group() {
        // The trailing `sleep 30` keeps the shell from exiting normally between its children's
        // signal and its own.
        let mut child = spawn_sh("sleep 30 & sleep 30 & wait; sleep 30");
        let root = Process::from_pid(child.id()).expect("found");
        let kids = wait_for_children(&root, 2);
        assert_eq!(kids.len(), 2);
        assert!(kids.iter().all(|k| k.args() == ["sleep", "30"]));
        assert_eq!(root.kill_tree(libc::SIGTERM), 3);
        let status = child.wait().expect("reap");
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        crate::signal_group(root.pid(), libc::SIGKILL);
        let rt = runtime();
        for kid in &kids {
            let gone =
                rt.block_on(kid.wait_for_exit(Some(Duration::from_secs(5)), &CancelToken::new()));
            assert_eq!(gone, Ok(true));
        }
    }

    #[test]
    fn terminate_escalates_to_sigkill_after_the_grace() {
        // The shell ignores SIGTERM; its child sleeps.
        let mut child = spawn_sh("trap '' TERM; sleep 30 & wait; sleep 30");
        let root = Process::from_pid(child.id()).expect("found");
        let kids = wait_for_children(&root, 1);
        assert_eq!(kids.len(), 1);
        let options = TerminateOptions {
            graceful: Some(Duration::from_millis(100)),
            ..TerminateOptions::default()
        };
        let started = Instant::now();
        let done = runtime().block_on(root.terminate(options, &CancelToken::new()));
        assert_eq!(done, Ok(true));
        assert!(started.elapsed() >= Duration::from_millis(100));
        let status = child.wait().expect("reap");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert_eq!(kids[0].status(), ProcessStatus::Exited);
    }

    #[test]
    fn terminate_without_grace_kills_at_once() {
        let mut child = spawn_sh("trap '' TERM; while :; do sleep 1; done");
        let root = Process::from_pid(child.id()).expect("found");
        // Until the shell has forked its first `sleep`, its trap may not be set yet and the
        // SIGTERM sent ahead of the SIGKILL would end it instead.
        assert_eq!(wait_for_children(&root, 1).len(), 1);
        let options = TerminateOptions {
            graceful: None,
            group: true,
            ..TerminateOptions::default()
        };
        let started = Instant::now();
        let done = runtime().block_on(root.terminate(options, &CancelToken::new()));
        assert_eq!(done, Ok(true));
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(child.wait().expect("reap").signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn terminate_of_an_exited_process_is_true() {
        let mut child = Command::new("true").spawn().expect("spawn");
        let process = Process::from_pid(child.id()).expect("found");
        child.wait().expect("reap");
        let done =
            runtime().block_on(process.terminate(TerminateOptions::default(), &CancelToken::new()));
        assert_eq!(done, Ok(true));
    }

    #[test]
    fn wait_for_exit_times_out_and_cancels() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("spawn");
        let process = Process::from_pid(child.id()).expect("found");
        let rt = runtime();
        let started = Instant::now();
        let result = rt
            .block_on(process.wait_for_exit(Some(Duration::from_millis(50)), &CancelToken::new()));
        assert_eq!(result, Ok(false));
        assert!(started.elapsed() >= Duration::from_millis(50));

        let cancel = CancelToken::new();
        let result = rt.block_on(async {
            let _timer = cancel.cancel_after(Duration::from_millis(20));
            process.wait_for_exit(None, &cancel).await
        });
        assert_eq!(result, Err(Cancelled(CancelReason::TimedOut)));

        let aborted = CancelToken::new();
        aborted.cancel(CancelReason::Aborted);
        let result = rt.block_on(process.terminate(TerminateOptions::default(), &aborted));
        assert_eq!(result, Err(Cancelled(CancelReason::Aborted)));
        assert_eq!(
            process.status(),
            ProcessStatus::Running,
            "an aborted terminate sends nothing"
        );

        process.kill_tree(libc::SIGKILL);
        child.wait().expect("reap");
        // A zombie-free exit is seen by the next poll.
        let result =
            rt.block_on(process.wait_for_exit(Some(Duration::from_secs(1)), &CancelToken::new()));
        assert_eq!(result, Ok(true));
    }
}
