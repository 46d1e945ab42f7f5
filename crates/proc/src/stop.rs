//! Stopping processes: the one SIGTERM → grace → SIGKILL sequence every runtime uses.
//!
//! [`StopTargets`] names what to stop — processes by identity, children before parents, and
//! process groups — and [`stop`] stops them: SIGTERM to all, a bounded wait for them to go, then
//! SIGKILL to what remains and another bounded wait. A group counts as gone once it has no member
//! that is still running (unreaped zombies have exited; their parent reaps them when it will).

use std::time::{Duration, Instant};

use crate::cancel::CancelToken;
use crate::process::Cancelled;
use crate::signal::signal_group;
use crate::tree::{ProcessId, ProcessTable, is_alive, send_signal};

/// What [`stop`] signals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StopTargets {
    /// Processes in signalling order: pass children before their parents, so a parent cannot
    /// replace a child that died before it.
    pub processes: Vec<ProcessId>,
    /// Process groups, signalled after the processes (they reach members started since).
    pub groups: Vec<u32>,
}

impl StopTargets {
    /// `root`'s running descendants, deepest first, then `root` itself; empty once `root` has
    /// exited (or its pid names another process). The host process is never included.
    pub fn tree(root: ProcessId) -> Self {
        Self::tree_in(&ProcessTable::snapshot(), root)
    }

    /// [`tree`](Self::tree) read from an existing snapshot.
    pub fn tree_in(table: &ProcessTable, root: ProcessId) -> Self {
        let root_running = table
            .get(root.pid)
            .is_some_and(|p| p.id == root && !p.zombie);
        if !root_running {
            return Self::default();
        }
        let host = std::process::id();
        let mut processes: Vec<ProcessId> = table
            .descendants(root.pid)
            .into_iter()
            .rev()
            .filter(|p| !p.zombie && p.pid() != host)
            .map(|p| p.id)
            .collect();
        if root.pid != host {
            processes.push(root);
        }
        Self {
            processes,
            groups: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.processes.is_empty() && self.groups.is_empty()
    }

    /// Sends `signal` to every target still running; returns how many processes it reached
    /// (groups are not counted). The host's own group is never signalled.
    pub fn signal(&self, signal: i32) -> usize {
        let sent = self
            .processes
            .iter()
            .filter(|id| send_signal(**id, signal))
            .count();
        for group in &self.groups {
            signal_group(*group, signal);
        }
        sent
    }

    /// Whether any target process, or any running member of a target group, remains.
    fn any_left(&self) -> bool {
        if self.processes.iter().any(|id| is_alive(*id)) {
            return true;
        }
        // killpg(…, 0) is cheap and counts zombies; only then is the table read to tell.
        let live_groups: Vec<u32> = self
            .groups
            .iter()
            .copied()
            .filter(|group| signal_group(*group, 0))
            .collect();
        !live_groups.is_empty()
            && ProcessTable::snapshot()
                .iter()
                .any(|p| !p.zombie && p.pgid.is_some_and(|g| live_groups.contains(&g)))
    }
}

/// SIGTERM to `targets`, up to `grace` for them to go (`None`: no grace, SIGKILL right after),
/// SIGKILL to what remains and up to `kill_wait` for it to go. Resolves `true` when every target
/// is gone, `false` when some outlived `kill_wait`; `cancel` firing stops the wait (`Err`) —
/// a cancel that already happened sends nothing.
pub async fn stop(
    targets: &StopTargets,
    grace: Option<Duration>,
    kill_wait: Duration,
    cancel: &CancelToken,
) -> Result<bool, Cancelled> {
    check(cancel)?;
    if targets.is_empty() {
        return Ok(true);
    }
    targets.signal(libc::SIGTERM);
    if let Some(grace) = grace
        && wait_until_gone(targets, Some(grace), cancel).await?
    {
        return Ok(true);
    }
    targets.signal(crate::SIGKILL);
    wait_until_gone(targets, Some(kill_wait), cancel).await
}

pub(crate) fn check(cancel: &CancelToken) -> Result<(), Cancelled> {
    match cancel.reason() {
        Some(reason) => Err(Cancelled(reason)),
        None => Ok(()),
    }
}

/// Waits until no target is left (`Ok(true)`), `within` passes (`Ok(false)`; `None` waits
/// without limit) or `cancel` fires (`Err`). A cancel that already happened wins over targets
/// that are already gone. Polls cheaply: the interval grows from 1 ms to 20 ms.
pub(crate) async fn wait_until_gone(
    targets: &StopTargets,
    within: Option<Duration>,
    cancel: &CancelToken,
) -> Result<bool, Cancelled> {
    const FIRST_NAP: Duration = Duration::from_millis(1);
    const LONGEST_NAP: Duration = Duration::from_millis(20);
    let deadline = within.map(|within| Instant::now() + within);
    let mut nap = FIRST_NAP;
    loop {
        check(cancel)?;
        if !targets.any_left() {
            return Ok(true);
        }
        let mut sleep_for = nap;
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            sleep_for = sleep_for.min(left);
        }
        tokio::select! {
            () = tokio::time::sleep(sleep_for) => {}
            reason = cancel.cancelled() => return Err(Cancelled(reason)),
        }
        nap = (nap * 2).min(LONGEST_NAP);
    }
}
