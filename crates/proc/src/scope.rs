//! [`RunScope`]: finding — and stopping — everything one run started, and nothing else.
//!
//! Every run gets a unique tag, exported to what it starts as `SHELLWRIGHT_RUN=<tag>`. The tag
//! alone is not enough: a program may clear its environment (`env -i`), and a process that
//! calls `setsid` leaves the tree and the terminal's process group. So a run's processes are
//! found by combining:
//!
//! - its roots: the processes that carry its tag, its own child (a PTY run's shell), or — for a
//!   runtime that spawns from the host itself — host children started during the run that carry
//!   no tag at all;
//! - the descendants of everything found;
//! - every member of a session or process group that something found created (leads).
//!
//! and never includes the host, a process that already existed when the run began (process start
//! times are compared with the run's), or a process tagged for another live run of this host.
//! Untagged host children are a heuristic: a process the host spawns by other means during the
//! run, with no tag in its environment, is taken for the run's.

use shellwright_io::lock;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use crate::cancel::CancelToken;
use crate::stop::{StopTargets, stop};
use crate::tree::{
    PidCursor, ProcessId, ProcessInfo, ProcessTable, host_children, now_as_start_time, pid_cursor,
    platform_environ,
};

/// The environment variable that carries a run's tag.
pub const RUN_TAG_VARIABLE: &str = "SHELLWRIGHT_RUN";

/// How many times [`RunScope::stop`] looks again: a dying script may fork once more.
const STOP_ROUNDS: usize = 5;
/// How long SIGKILL gets in each round.
const KILL_WAIT: Duration = Duration::from_secs(2);
/// The smallest pid space (`pid_max`) in which pids tell which of the processes started in the
/// run's first clock tick came before it ([`BeforeRun::PidsAround`]): the kernel would have to
/// hand out half of it within that one tick (10 ms) to fool the comparison.
const MIN_PID_SPACE: u32 = 2048;

/// The tags of this host's runs that have begun and not yet been dropped.
static LIVE_TAGS: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

fn live_tags() -> std::sync::MutexGuard<'static, HashSet<String>> {
    lock(&LIVE_TAGS)
}

/// A fresh tag, `<host pid>-<n>`: each run's, unique within the host.
fn next_tag() -> String {
    // Asked once: glibc no longer caches it, and the system call was 1–2% of a run done in
    // place. The host never forks without exec, so its pid does not change under it.
    static HOST: LazyLock<u32> = LazyLock::new(std::process::id);
    format!("{}-{}", *HOST, next_number())
}

/// The next number of the host's series of tags.
fn next_number() -> u64 {
    static NEXT_RUN: AtomicU64 = AtomicU64::new(1);
    NEXT_RUN.fetch_add(1, Ordering::Relaxed)
}

/// The tag of a run that cannot start any process (a builtin-only run done in place): from the
/// same series as [`RunScope::begin`]'s, without the scope, which only serves to find processes.
pub fn processless_run_tag() -> String {
    next_tag()
}

/// Where a run's processes start, besides the processes carrying its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunRoots {
    /// The run spawns its commands from the host process itself (the in-process shell): host
    /// children started during the run without any tag are the run's.
    HostChildren,
    /// The run has one child of its own (a PTY run's shell), tagged or not.
    Child(ProcessId),
}

/// One run's identity for finding what it started; dropping it ends the run's claim on its tag.
#[derive(Debug)]
pub struct RunScope {
    tag: String,
    /// Processes that started before this are never the run's.
    began: u64,
    /// Which processes of the tick `began` existed before the run.
    before: BeforeRun,
}

/// Start times are coarse (clock ticks), so a process started in the same tick as the run, just
/// before it, would look like the run's: this tells the two apart.
#[derive(Debug)]
enum BeforeRun {
    /// The last pid the kernel had handed out when the run began, and the size of the pid space.
    /// Pids are handed out in increasing order, wrapping around to a low pid past `pid_max`: the
    /// processes of that tick that started before the run hold the pids just behind `last` on
    /// that circle, the others those just ahead of it. Two small file reads.
    PidsAround { last: u32, max: u32 },
    /// Where the allocator cannot be read, or its pid space is too small to tell: the host's
    /// children when the run began (only a host child can be taken for the run's without
    /// carrying its tag). One file per host thread.
    HostChildren(HashSet<u32>),
}

impl BeforeRun {
    /// Read when the run begins, *after* its start tick: a process whose pid is handed out in
    /// between is not the run's either.
    fn now() -> Self {
        Self::choose(pid_cursor(), || host_children().into_iter().collect())
    }

    fn choose(cursor: Option<PidCursor>, host_children: impl FnOnce() -> HashSet<u32>) -> Self {
        match cursor {
            Some(PidCursor { last, max }) if max >= MIN_PID_SPACE && last < max => {
                Self::PidsAround { last, max }
            }
            _ => Self::HostChildren(host_children()),
        }
    }

    /// Whether `process`, started in the run's first tick, was there before the run.
    fn contains(&self, process: &ProcessInfo) -> bool {
        match self {
            Self::PidsAround { last, max } => pids_behind(*last, process.pid(), *max) < max / 2,
            Self::HostChildren(children) => children.contains(&process.pid()),
        }
    }
}

/// How many steps back from `last` `pid` lies on the circle of `max` pids the kernel hands out
/// in turn: 0 for `last` itself, 1 for the pid below it, `max - 1` for the one above it (the
/// next to be handed out, if free).
fn pids_behind(last: u32, pid: u32, max: u32) -> u32 {
    let steps = (i64::from(last) - i64::from(pid)).rem_euclid(i64::from(max));
    u32::try_from(steps).unwrap_or(u32::MAX)
}

impl Default for RunScope {
    fn default() -> Self {
        Self::begin()
    }
}

impl RunScope {
    /// A new run with a fresh tag (`<host pid>-<n>`), beginning now. The host's [`guardian`]
    /// is started first, so that whatever the run starts is ended with the host.
    ///
    /// [`guardian`]: crate::guardian
    pub fn begin() -> Self {
        Self::begin_tagged(next_tag())
    }

    /// A new run of the group of runs tagged `group` (a Shell's): its tag is `<group>.<n>`, so
    /// that [`stop_tagged`] with the group's tag reaches what any of them left behind.
    pub fn begin_within(group: &str) -> Self {
        Self::begin_tagged(format!("{group}.{}", next_number()))
    }

    fn begin_tagged(tag: String) -> Self {
        crate::guardian::ensure();
        live_tags().insert(tag.clone());
        let began = now_as_start_time();
        Self {
            tag,
            began,
            before: BeforeRun::now(),
        }
    }

    /// The value of [`RUN_TAG_VARIABLE`] for this run's processes.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Everything the run started that is still running, children before parents, with the
    /// groups it created.
    pub fn find(&self, roots: RunRoots) -> StopTargets {
        self.find_in(&ProcessTable::snapshot(), roots, &mut PlatformProbe)
    }

    /// Stops everything the run started (see [`stop`]), looking again while new processes keep
    /// appearing, up to a few rounds. `extra_groups` are signalled in the first round too (a
    /// terminal's foreground group).
    pub async fn stop(&self, roots: RunRoots, extra_groups: &[u32], grace: Duration) {
        let never = CancelToken::new();
        for round in 0..STOP_ROUNDS {
            let mut targets = self.find(roots);
            if round == 0 {
                targets.groups.extend(extra_groups);
            }
            if targets.is_empty() {
                return;
            }
            let _ = stop(&targets, Some(grace), KILL_WAIT, &never).await;
        }
    }

    /// [`find`](Self::find) over a given table, reading what it lacks through `probe`.
    fn find_in(
        &self,
        table: &ProcessTable,
        roots: RunRoots,
        probe: &mut dyn ProcessProbe,
    ) -> StopTargets {
        let host = std::process::id();
        let host_group = table.get(host).and_then(|p| p.pgid);
        let host_session = table.get(host).and_then(|p| p.session);
        let live = live_tags().clone();
        let mut tags: HashMap<u32, Option<String>> = HashMap::new();
        let mut tag_of = |probe: &mut dyn ProcessProbe, pid: u32| -> Option<String> {
            tags.entry(pid)
                .or_insert_with(|| probe.environ(pid).and_then(|env| run_tag(&env)))
                .clone()
        };
        // Candidates: running, not the host or its guardian, started since the run began.
        let guardian = crate::guardian::pid();
        let candidates: Vec<&ProcessInfo> = table
            .iter()
            .filter(|p| !p.zombie && p.pid() != host && Some(p.pid()) != guardian)
            .filter(|p| !self.existed_before(p))
            .collect();
        let mut theirs = HashSet::new();
        let mut found: HashMap<u32, &ProcessInfo> = HashMap::new();
        for p in &candidates {
            // A child still running the host's own image was forked but has not exec'd yet: its
            // environment is still the host's, so it may well belong to another live run. It is
            // left for a later round, by when it carries its run's tag. The image is read
            // *before* the environment: read after, a child that exec'd in between would pair
            // the host's environment (no tag) with its new image and pass for an untagged child
            // of this run — another run's `sleep`, killed as this run's.
            let host_child = matches!(roots, RunRoots::HostChildren) && p.ppid == Some(host);
            if host_child && probe.runs_host_image(p.pid()) {
                continue;
            }
            // Mid-exec the kernel has switched to the new image before it lays out the new
            // arguments and environment: for a moment both read empty. On the way out, an
            // exiting process drops its memory before it becomes a zombie, and both read empty
            // again. A host child counts only while its arguments are readable both before and
            // after its environment is read: otherwise an environment read empty mid-exec or
            // mid-exit would pass for `env -i` — another run's `sleep`, killed as this run's.
            // Such a child is left for a later round (a process that cleared its environment
            // still has arguments).
            if host_child && !probe.has_arguments(p.pid()) {
                continue;
            }
            let tag = tag_of(probe, p.pid());
            if host_child && tag.is_none() && !probe.has_arguments(p.pid()) {
                continue;
            }
            let is_root = match roots {
                RunRoots::HostChildren => host_child && tag.is_none(),
                RunRoots::Child(child) => p.id == child,
            };
            match tag {
                Some(tag) if tag_within(&tag, &self.tag) => {
                    found.insert(p.pid(), p);
                }
                Some(tag) if live.iter().any(|live| tag_within(&tag, live)) => {
                    theirs.insert(p.pid());
                }
                _ if is_root => {
                    found.insert(p.pid(), p);
                }
                _ => {}
            }
        }
        grow(found, &candidates, &theirs, host_group, host_session)
    }
}

/// `found`, grown to a fixed point over `candidates` — descendants, and members of sessions and
/// groups found processes lead (not the host's own, nor `theirs`) — as targets, children before
/// parents.
fn grow<'a>(
    mut found: HashMap<u32, &'a ProcessInfo>,
    candidates: &[&'a ProcessInfo],
    theirs: &HashSet<u32>,
    host_group: Option<u32>,
    host_session: Option<u32>,
) -> StopTargets {
    loop {
        let leads: HashSet<u32> = found
            .values()
            .filter(|p| p.pgid == Some(p.pid()) || p.session == Some(p.pid()))
            .map(|p| p.pid())
            .filter(|pid| Some(*pid) != host_group && Some(*pid) != host_session)
            .collect();
        let before = found.len();
        for p in candidates {
            if found.contains_key(&p.pid()) || theirs.contains(&p.pid()) {
                continue;
            }
            let in_led = [p.pgid, p.session]
                .into_iter()
                .flatten()
                .any(|id| leads.contains(&id));
            let child_of_found = p.ppid.is_some_and(|ppid| found.contains_key(&ppid));
            if in_led || child_of_found {
                found.insert(p.pid(), p);
            }
        }
        if found.len() == before {
            break;
        }
    }
    let mut processes: Vec<&ProcessInfo> = found.into_values().collect();
    // A child starts after its parent: newest first signals children before parents.
    processes.sort_by_key(|p| std::cmp::Reverse((p.id.start_time, p.pid())));
    let mut groups: Vec<u32> = processes
        .iter()
        .filter(|p| p.pgid == Some(p.pid()) && p.pgid != host_group)
        .map(|p| p.pid())
        .collect();
    groups.sort_unstable();
    StopTargets {
        processes: processes.iter().map(|p| p.id).collect(),
        groups,
    }
}

/// Whether a process tagged `tag` belongs to the run tagged `run`: it carries the run's tag, or a
/// tag the run handed one of its parts (a background job: `<run>.<n>`).
pub fn tag_within(tag: &str, run: &str) -> bool {
    tag.strip_prefix(run)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Stops every process carrying one of `tags` (or a tag within one, see [`tag_within`]),
/// whenever it started, with its descendants and the sessions and groups it leads; SIGTERM, then
/// SIGKILL after `grace`, looking again while new ones appear. For what outlived its run: a
/// Shell's background jobs when the Shell is closed.
pub async fn stop_tagged(tags: &[String], grace: Duration) {
    if tags.is_empty() {
        return;
    }
    let never = CancelToken::new();
    for _ in 0..STOP_ROUNDS {
        let targets = tagged(&ProcessTable::snapshot(), tags, &mut PlatformProbe);
        if targets.is_empty() {
            return;
        }
        let _ = stop(&targets, Some(grace), KILL_WAIT, &never).await;
    }
}

/// The live processes whose tag is exactly `tag`, oldest first: those of one background job (the
/// first is the one `jobs -l` shows).
pub fn processes_tagged(tag: &str) -> Vec<u32> {
    let table = ProcessTable::snapshot();
    let mut found: Vec<&ProcessInfo> = table
        .iter()
        .filter(|p| !p.zombie)
        .filter(|p| {
            platform_environ(p.pid())
                .and_then(|env| run_tag(&env))
                .as_deref()
                == Some(tag)
        })
        .collect();
    found.sort_by_key(|p| (p.id.start_time, p.pid()));
    found.into_iter().map(ProcessInfo::pid).collect()
}

fn tagged(table: &ProcessTable, tags: &[String], probe: &mut dyn ProcessProbe) -> StopTargets {
    let host = std::process::id();
    let host_group = table.get(host).and_then(|p| p.pgid);
    let host_session = table.get(host).and_then(|p| p.session);
    let guardian = crate::guardian::pid();
    let candidates: Vec<&ProcessInfo> = table
        .iter()
        .filter(|p| !p.zombie && p.pid() != host && Some(p.pid()) != guardian)
        .collect();
    let found = candidates
        .iter()
        .filter(|p| {
            probe
                .environ(p.pid())
                .and_then(|env| run_tag(&env))
                .is_some_and(|tag| tags.iter().any(|run| tag_within(&tag, run)))
        })
        .map(|p| (p.pid(), *p))
        .collect();
    grow(
        found,
        &candidates,
        &HashSet::new(),
        host_group,
        host_session,
    )
}

impl RunScope {
    fn existed_before(&self, process: &ProcessInfo) -> bool {
        process.id.start_time < self.began
            || (process.id.start_time == self.began && self.before.contains(process))
    }
}

impl Drop for RunScope {
    fn drop(&mut self) {
        live_tags().remove(&self.tag);
    }
}

/// What finding a run's processes reads about a process beyond the process table.
trait ProcessProbe {
    /// The process's environment block, if readable.
    fn environ(&mut self, pid: u32) -> Option<Vec<u8>>;
    /// Whether it runs the same executable as the host (a fork that has not exec'd yet).
    fn runs_host_image(&mut self, pid: u32) -> bool;
    /// Whether it shows its arguments: not in the middle of an `execve` or an exit.
    fn has_arguments(&mut self, pid: u32) -> bool;
}

/// The live system's processes.
struct PlatformProbe;

impl ProcessProbe for PlatformProbe {
    fn environ(&mut self, pid: u32) -> Option<Vec<u8>> {
        platform_environ(pid)
    }

    #[cfg(target_os = "linux")]
    fn runs_host_image(&mut self, pid: u32) -> bool {
        static HOST_EXE: std::sync::OnceLock<Option<std::path::PathBuf>> =
            std::sync::OnceLock::new();
        let host = HOST_EXE.get_or_init(|| std::fs::read_link("/proc/self/exe").ok());
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        host.is_some() && *host == exe
    }

    #[cfg(not(target_os = "linux"))]
    fn runs_host_image(&mut self, _pid: u32) -> bool {
        false
    }

    #[cfg(target_os = "linux")]
    fn has_arguments(&mut self, pid: u32) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|bytes| !bytes.is_empty())
    }

    #[cfg(not(target_os = "linux"))]
    fn has_arguments(&mut self, _pid: u32) -> bool {
        true
    }
}

/// The value of [`RUN_TAG_VARIABLE`] in a NUL-separated environment block (the first entry wins,
/// as with `getenv`).
fn run_tag(environ: &[u8]) -> Option<String> {
    let prefix = format!("{RUN_TAG_VARIABLE}=");
    environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST_GROUP: u32 = 7000;
    const HOST_SESSION: u32 = 7001;

    struct Row {
        pid: u32,
        ppid: u32,
        pgid: u32,
        session: u32,
        start: u64,
        tag: Option<&'static str>,
    }

    fn row(pid: u32, ppid: u32, start: u64, tag: Option<&'static str>) -> Row {
        Row {
            pid,
            ppid,
            pgid: HOST_GROUP,
            session: HOST_SESSION,
            start,
            tag,
        }
    }

    /// Rows of a made-up process table, every process settled (exec'd, not exiting).
    struct RowsProbe<'a>(&'a [Row]);

    impl ProcessProbe for RowsProbe<'_> {
        fn environ(&mut self, pid: u32) -> Option<Vec<u8>> {
            let row = self.0.iter().find(|r| r.pid == pid)?;
            let mut env = b"PATH=/bin\0".to_vec();
            if let Some(tag) = row.tag {
                env.extend_from_slice(format!("{RUN_TAG_VARIABLE}={tag}\0").as_bytes());
            }
            Some(env)
        }

        fn runs_host_image(&mut self, _pid: u32) -> bool {
            false
        }

        fn has_arguments(&mut self, pid: u32) -> bool {
            self.0.iter().any(|r| r.pid == pid)
        }
    }

    fn find(scope: &RunScope, roots: RunRoots, rows: &[Row]) -> Vec<u32> {
        let host = std::process::id();
        let table = ProcessTable::from_rows(
            std::iter::once(ProcessInfo {
                id: ProcessId {
                    pid: host,
                    start_time: 1,
                },
                ppid: Some(1),
                pgid: Some(HOST_GROUP),
                session: Some(HOST_SESSION),
                zombie: false,
            })
            .chain(rows.iter().map(|r| ProcessInfo {
                id: ProcessId {
                    pid: r.pid,
                    start_time: r.start,
                },
                ppid: Some(r.ppid),
                pgid: Some(r.pgid),
                session: Some(r.session),
                zombie: false,
            })),
        );
        let targets = scope.find_in(&table, roots, &mut RowsProbe(rows));
        let mut groups = targets.groups.clone();
        groups.sort_unstable();
        let mut pids: Vec<u32> = targets.processes.iter().map(|id| id.pid).collect();
        // Children first: every process comes before its parent.
        for (i, pid) in pids.iter().enumerate() {
            if let Some(parent) = rows.iter().find(|r| r.pid == *pid).map(|r| r.ppid) {
                assert!(
                    !pids[..i].contains(&parent),
                    "{parent} before its child {pid}"
                );
            }
        }
        pids.sort_unstable();
        pids
    }

    #[test]
    fn finds_tag_tree_sessions_and_new_untagged_host_children_only() {
        let host = std::process::id();
        let other = RunScope::begin();
        let other_tag: &'static str = Box::leak(other.tag().to_string().into_boxed_str());
        let scope = RunScope {
            tag: "run-under-test".into(),
            began: 100,
            before: BeforeRun::HostChildren(HashSet::from([9])),
        };
        let ours = Some("run-under-test");
        let rows = [
            // Existed before the run, even though it carries the tag: never ours; nor a host child
            // that was there when the run began, in the same clock tick.
            row(10, host, 50, ours),
            row(9, host, 100, None),
            // A tagged command and its untagged (env -i) child.
            row(11, host, 120, ours),
            row(12, 11, 121, None),
            // `setsid`: a tagged session leader, and an untagged process of its session whose
            // parent has exited.
            Row {
                pgid: 13,
                session: 13,
                ..row(13, 1, 130, ours)
            },
            Row {
                pgid: 13,
                session: 13,
                ..row(14, 1, 131, None)
            },
            // A new untagged host child (`env -i sleep`).
            row(15, host, 140, None),
            // A host child carrying another tag (the host's own environment), and a process of
            // another live run.
            row(16, host, 141, Some("outer-run")),
            row(17, host, 142, Some(other_tag)),
            // Its child joined our session: still the other run's.
            Row {
                pgid: 13,
                session: 13,
                ..row(18, 17, 143, Some(other_tag))
            },
            // Unrelated: untagged, not a host child, in the host's group.
            row(19, 1, 150, None),
        ];
        assert_eq!(
            find(&scope, RunRoots::HostChildren, &rows),
            vec![11, 12, 13, 14, 15]
        );
        let child = ProcessId {
            pid: 15,
            start_time: 140,
        };
        assert_eq!(
            find(&scope, RunRoots::Child(child), &rows),
            vec![11, 12, 13, 14, 15]
        );
        // A child that is not the one named is not a root.
        let stranger = ProcessId {
            pid: 15,
            start_time: 139,
        };
        assert_eq!(
            find(&scope, RunRoots::Child(stranger), &rows),
            vec![11, 12, 13, 14]
        );
        // Once the other run is over, its processes in our session are ours.
        drop(other);
        assert!(find(&scope, RunRoots::HostChildren, &rows).contains(&18));
    }

    #[test]
    fn in_the_runs_first_tick_pids_tell_earlier_processes_from_the_runs() {
        let host = std::process::id();
        let scope = |before| RunScope {
            tag: "first-tick".into(),
            began: 100,
            before,
        };
        // Untagged host children, all started in the run's first tick: 30 before the run, 40 and
        // 41 (its child) during it.
        let rows = [
            row(30, host, 100, None),
            row(40, host, 100, None),
            row(41, 40, 100, None),
        ];
        // The pid cursor stood at `last` when the run began.
        let cursor_at = |last| scope(BeforeRun::PidsAround { last, max: 32_768 });
        let by_pid = cursor_at(35);
        assert_eq!(find(&by_pid, RunRoots::HostChildren, &rows), vec![40, 41]);
        // Across the allocator's wrap-around: 32_760 came before the run, 320 and its child 321
        // during it, whether the cursor had wrapped when the run began (310) or not yet (32_765).
        let wrapped = [
            row(32_760, host, 100, None),
            row(320, host, 100, None),
            row(321, 320, 100, None),
        ];
        for last in [310, 32_765] {
            let found = find(&cursor_at(last), RunRoots::HostChildren, &wrapped);
            assert_eq!(found, vec![320, 321], "cursor at {last}");
        }
        // The same verdict from the host's children listed when the run began.
        let by_list = scope(BeforeRun::HostChildren(HashSet::from([30])));
        assert_eq!(find(&by_list, RunRoots::HostChildren, &rows), vec![40, 41]);
        // A later tick is the run's whatever the pid (the allocator may have wrapped since).
        let later = [row(30, host, 101, None)];
        assert_eq!(find(&by_pid, RunRoots::HostChildren, &later), vec![30]);
    }

    #[test]
    fn pids_are_compared_around_the_allocators_circle() {
        // Behind the cursor (handed out before it) up to half the circle, ahead of it after.
        assert_eq!(pids_behind(35, 35, 32_768), 0);
        assert_eq!(pids_behind(35, 30, 32_768), 5);
        assert_eq!(pids_behind(35, 40, 32_768), 32_763);
        assert_eq!(pids_behind(310, 32_760, 32_768), 318);
        assert_eq!(pids_behind(32_765, 320, 32_768), 32_445);
        // A pid above a `pid_max` lowered since lies more than half the circle back: taken for
        // one handed out after the cursor, as any pid ahead of it.
        assert_eq!(pids_behind(100, 40_000, 32_768), 25_636);
        assert_eq!(pids_behind(20_000, 4_000_000, 4_194_304), 214_304);

        let listed = || HashSet::from([7]);
        let at = |last, max| BeforeRun::choose(Some(PidCursor { last, max }), listed);
        let is_pids =
            |b: &BeforeRun, at: u32| matches!(b, BeforeRun::PidsAround { last, .. } if *last == at);
        let is_listed = |b: &BeforeRun| matches!(b, BeforeRun::HostChildren(c) if *c == listed());
        assert!(is_pids(&at(20_000, 4_194_304), 20_000));
        assert!(is_pids(&at(1, 32_768), 1));
        assert!(is_pids(&at(32_767, 32_768), 32_767));
        assert!(is_pids(&at(300, MIN_PID_SPACE), 300));
        // A pid space so small that one tick could go half round it, or a cursor past its end:
        // the host's children are listed instead.
        assert!(is_listed(&at(300, MIN_PID_SPACE - 1)));
        assert!(is_listed(&at(32_768, 32_768)));
        assert!(is_listed(&BeforeRun::choose(None, listed)));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_pid_allocator_hands_out_increasing_pids() {
        let Some(cursor) = pid_cursor() else {
            // A kernel without ns_last_pid: RunScope lists the host's children instead.
            eprintln!("skipped: /proc/sys/kernel/ns_last_pid is not readable here");
            return;
        };
        assert!(cursor.last < cursor.max);
        // A process started now gets a pid past the cursor, unless the allocator wrapped.
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("reap");
        let after = pid_cursor().expect("readable");
        assert!(
            pid > cursor.last || after.last < cursor.last,
            "{pid} after {cursor:?}"
        );
        assert!(after.last >= pid || after.last < cursor.last);
    }

    #[test]
    fn the_host_group_and_session_are_never_expanded() {
        let host = std::process::id();
        let scope = RunScope {
            tag: "host-group".into(),
            began: 100,
            before: BeforeRun::HostChildren(HashSet::new()),
        };
        // A tagged process that leads the host's group and session (as far as the table says)
        // must not pull in the rest of them.
        let rows = [
            Row {
                pgid: HOST_GROUP,
                session: HOST_SESSION,
                ..row(HOST_GROUP, host, 120, Some("host-group"))
            },
            row(21, 1, 130, None),
        ];
        assert_eq!(
            find(&scope, RunRoots::HostChildren, &rows),
            vec![HOST_GROUP]
        );
    }

    #[test]
    fn reads_the_first_tag_in_an_environment_block() {
        let env = format!("A=1\0{RUN_TAG_VARIABLE}=7-1\0{RUN_TAG_VARIABLE}=7-2\0");
        assert_eq!(run_tag(env.as_bytes()), Some("7-1".into()));
        assert_eq!(run_tag(b"A=1\0SHELLWRIGHT_RUNX=1\0"), None);
        assert_eq!(run_tag(b""), None);
    }

    #[test]
    fn tags_are_unique_and_live_while_their_scope_is() {
        let a = RunScope::begin();
        let b = RunScope::begin();
        assert_ne!(a.tag(), b.tag());
        assert!(a.tag().starts_with(&format!("{}-", std::process::id())));
        assert!(live_tags().contains(a.tag()));
        let tag = a.tag().to_string();
        drop(a);
        assert!(!live_tags().contains(&tag));
    }
}

#[cfg(all(test, target_os = "linux"))]
mod process_tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn never_takes_another_runs_commands_while_they_exec() {
        // Another run keeps spawning tagged commands; this run keeps looking for untagged host
        // children. A command seen between fork and exec, or mid-exec, must never be taken.
        let theirs = RunScope::begin();
        let ours = RunScope::begin();
        let spawned = std::sync::Mutex::new(HashSet::new());
        let done = std::sync::atomic::AtomicBool::new(false);
        let taken: HashSet<u32> = std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..3000 {
                    let mut child = Command::new("true")
                        .env(RUN_TAG_VARIABLE, theirs.tag())
                        .spawn()
                        .expect("spawn");
                    spawned.lock().expect("lock").insert(child.id());
                    child.wait().expect("wait");
                }
                done.store(true, Ordering::Relaxed);
            });
            let mut taken = HashSet::new();
            while !done.load(Ordering::Relaxed) {
                taken.extend(
                    ours.find(RunRoots::HostChildren)
                        .processes
                        .iter()
                        .map(|id| id.pid),
                );
            }
            taken
        });
        let spawned = spawned.into_inner().expect("lock");
        let wrongly: Vec<_> = taken.intersection(&spawned).collect();
        assert!(
            wrongly.is_empty(),
            "another run's commands taken: {wrongly:?}"
        );
    }
}
