//! What a process is waiting for, as the kernel reports it (Linux): the state of the process and
//! the system call its main thread is blocked in (`/proc/<pid>/stat`, `/proc/<pid>/syscall`,
//! proc(5)), and the file one of its descriptors names (`/proc/<pid>/fd/<n>`).
//!
//! The pseudo-terminal runtime uses it to tell, without guessing from a quiet output, that a
//! program waits for input: asleep in `read` on its terminal, or in `select`/`poll`/`epoll` while
//! it holds the terminal, while a parent that only waits for its children does not count.
//! System call numbers differ between architectures; x86-64 and AArch64 are known, elsewhere every
//! call reads as [`Wait::Other`] and callers fall back to something else.

use std::path::PathBuf;

/// What a process is doing, for the question "does it wait for input?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Running or ready to run: busy, not waiting.
    Running,
    /// Stopped by a signal or a tracer.
    Stopped,
    /// Asleep reading this descriptor (`read`, `readv`, `pread64`).
    Reading(i32),
    /// Asleep in `select`, `poll` or `epoll` (on descriptors this cannot see).
    Polling,
    /// Asleep waiting for a child (`wait4`, `waitid`).
    WaitingForChild,
    /// Asleep for another reason: a timer, a lock, a write, a call this does not know.
    Other,
}

/// What process `pid` waits for; `None` when it is gone (or this is not Linux).
pub fn wait_of(pid: u32) -> Option<Wait> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    match state(&stat)? {
        'R' => return Some(Wait::Running),
        'T' | 't' => return Some(Wait::Stopped),
        'S' | 'D' => {}
        // Zombie, dead, idle kernel thread: nothing that reads input.
        _ => return Some(Wait::Other),
    }
    let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?;
    Some(blocked_in(&syscall).map_or(Wait::Running, |call| call.map_or(Wait::Other, classify)))
}

/// The file descriptor `fd` of process `pid` names (`/dev/pts/3`, `pipe:[123]`, `/dev/tty`).
pub fn fd_target(pid: u32, fd: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// The direct children of `pid` (every thread's), from `/proc/<pid>/task/*/children`; empty when
/// the kernel does not offer the file.
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut children: Vec<u32> = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    children.sort_unstable();
    children.dedup();
    children
}

/// `root` and its descendants, parents before their children; at most [`TREE_LIMIT`] of them, so
/// that a fork bomb cannot make a look at the tree walk forever.
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut tree = Vec::new();
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(pid) = queue.pop_front() {
        if tree.len() >= TREE_LIMIT {
            break;
        }
        tree.push(pid);
        queue.extend(children_of(pid));
    }
    tree
}

/// The most processes [`process_tree`] returns.
pub const TREE_LIMIT: usize = 4096;

/// The process's name (`/proc/<pid>/comm`: the executable's, at most 15 bytes).
pub fn process_name(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end_matches('\n').to_string())
}

/// The state letter of a `/proc/<pid>/stat` line (after the command name, which may hold spaces
/// and parentheses: the last `)` ends it).
fn state(stat: &str) -> Option<char> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.trim_start().chars().next()
}

/// A blocked system call: its number and its first argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Call {
    number: i64,
    first_argument: u64,
}

/// The call a `/proc/<pid>/syscall` line says the thread is blocked in: `None` when it is running
/// (`running`), `Some(None)` when it is blocked outside a system call (`-1 sp pc`) or the line is
/// unreadable, else the call.
fn blocked_in(line: &str) -> Option<Option<Call>> {
    let line = line.trim();
    if line == "running" {
        return None;
    }
    let mut fields = line.split_whitespace();
    let number: i64 = match fields.next().and_then(|n| n.parse().ok()) {
        Some(number) if number >= 0 => number,
        _ => return Some(None),
    };
    let first_argument = fields
        .next()
        .and_then(|arg| u64::from_str_radix(arg.trim_start_matches("0x"), 16).ok());
    Some(first_argument.map(|first_argument| Call {
        number,
        first_argument,
    }))
}

/// What a blocked call means.
fn classify(call: Call) -> Wait {
    let calls = &numbers::CALLS;
    let number = call.number;
    if calls.reads.contains(&number) {
        // The descriptor is a C int: the register holds it zero-extended.
        return i32::try_from(call.first_argument).map_or(Wait::Other, Wait::Reading);
    }
    if calls.polls.contains(&number) {
        Wait::Polling
    } else if calls.waits.contains(&number) {
        Wait::WaitingForChild
    } else {
        Wait::Other
    }
}

/// The system call numbers of one architecture, by what they mean here.
struct Calls {
    reads: &'static [i64],
    polls: &'static [i64],
    waits: &'static [i64],
}

#[cfg(target_arch = "x86_64")]
mod numbers {
    /// read 0, pread64 17, readv 19; poll 7, select 23, epoll_wait 232, pselect6 270, ppoll 271,
    /// epoll_pwait 281, epoll_pwait2 441; wait4 61, waitid 247 (asm/unistd_64.h).
    pub(super) const CALLS: super::Calls = super::Calls {
        reads: &[0, 17, 19],
        polls: &[7, 23, 232, 270, 271, 281, 441],
        waits: &[61, 247],
    };
}

#[cfg(target_arch = "aarch64")]
mod numbers {
    /// read 63, readv 65, pread64 67; epoll_pwait 22, pselect6 72, ppoll 73, epoll_pwait2 441;
    /// waitid 95, wait4 260 (the generic asm-generic/unistd.h table).
    pub(super) const CALLS: super::Calls = super::Calls {
        reads: &[63, 65, 67],
        polls: &[22, 72, 73, 441],
        waits: &[95, 260],
    };
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod numbers {
    /// Unknown numbers: every call reads as [`Wait::Other`](super::Wait::Other).
    pub(super) const CALLS: super::Calls = super::Calls {
        reads: &[],
        polls: &[],
        waits: &[],
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis() {
        assert_eq!(state("123 (bash) S 1 123 123 34816"), Some('S'));
        assert_eq!(state("9 (a b) (c)) R 1 9 9"), Some('R'));
        assert_eq!(state("9 (cut"), None);
    }

    #[test]
    fn syscall_lines_as_the_kernel_writes_them() {
        assert_eq!(blocked_in("running\n"), None);
        assert_eq!(blocked_in("-1 0x7ffd1e1b2a48 0x7f27b5f2a7fa\n"), Some(None));
        let read =
            "0 0x0 0x55e280660f40 0x1000 0x1000 0x7f10bb498c68 0x0 0x7ffec57ef228 0x7f10bb3bd2ad";
        assert_eq!(
            blocked_in(read),
            Some(Some(Call {
                number: 0,
                first_argument: 0
            }))
        );
        assert_eq!(blocked_in("garbage"), Some(None));
        assert_eq!(blocked_in(""), Some(None));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_64_calls_are_classified() {
        let call = |number, first_argument| {
            classify(Call {
                number,
                first_argument,
            })
        };
        // bash's `read` builtin, python's and vim's input loops, sh waiting for its child, sleep.
        assert_eq!(call(0, 0), Wait::Reading(0));
        assert_eq!(call(0, 3), Wait::Reading(3));
        assert_eq!(call(270, 1), Wait::Polling);
        assert_eq!(call(61, u64::MAX), Wait::WaitingForChild);
        assert_eq!(call(35, 0), Wait::Other);
        assert_eq!(call(230, 0), Wait::Other);
        assert_eq!(call(0, u64::MAX), Wait::Other);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_asleep_in_a_read_of_a_pipe_is_seen_reading_it() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut child = Command::new("head")
            .args(["-c", "1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawns head");
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while wait_of(pid) != Some(Wait::Reading(0)) {
            assert!(
                std::time::Instant::now() < deadline,
                "head never blocked reading fd 0: {:?}",
                wait_of(pid)
            );
            std::thread::yield_now();
        }
        let target = fd_target(pid, 0).expect("fd 0 names the pipe");
        assert!(target.to_string_lossy().starts_with("pipe:"), "{target:?}");
        assert_eq!(process_name(pid).as_deref(), Some("head"));
        assert!(children_of(std::process::id()).contains(&pid));
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"x")
            .expect("writes");
        child.wait().expect("reaped");
        assert_eq!(wait_of(pid), None);
    }
}
