//! The kernel's side of [`super`]: the terminal's foreground group, what each of its members is
//! asleep in, the terminal's termios, and the bytes queued either way (Unix; the waits Linux only).

use std::os::fd::RawFd;
use std::path::{Path, PathBuf};

use shellwright_proc::process_info;
use shellwright_proc::waits::{Wait, fd_target, process_name, process_tree, wait_of};

use super::{ForegroundProcess, InputMode, InputState};

/// What the master side of a live run says about its terminal.
pub(crate) struct TerminalFacts {
    pub master: RawFd,
    pub child: u32,
    /// The slave side's path (`/dev/pts/N`).
    pub slave: PathBuf,
}

/// The run's input state from the kernel, the prompt left to the caller (it needs the model).
pub(crate) fn probe(facts: &TerminalFacts) -> InputState {
    let termios = termios(facts.master);
    let mut state = InputState {
        known: cfg!(target_os = "linux") && known_architecture(),
        mode: termios.map(|(canonical, _)| {
            if canonical {
                InputMode::Line
            } else {
                InputMode::Keys
            }
        }),
        echo: termios.map(|(_, echo)| echo),
        ..InputState::default()
    };
    let Some(group) = foreground_group(facts.master) else {
        return state;
    };
    let members = group_members(facts.child, group);
    let reader = members
        .iter()
        .map(|&pid| (pid, member_waits(pid, &facts.slave)))
        .try_fold(None, |reader, (pid, verdict)| match verdict {
            Verdict::Reads => Some(reader.or(Some(pid))),
            Verdict::Ignored => Some(reader),
            Verdict::Busy => None,
        })
        .flatten();
    let leader = reader.unwrap_or(group);
    state.foreground = process_name(leader).map(|name| ForegroundProcess { pid: leader, name });
    state.waiting = state.known
        && reader.is_some()
        && unread(facts.master) == Some(0)
        && pending_input(&facts.slave) == Some(0);
    state
}

/// What one member of the foreground group means for "waits for input".
enum Verdict {
    /// Asleep reading the terminal.
    Reads,
    /// Only waits for its children: it neither reads nor works.
    Ignored,
    /// Runs, is stopped, or sleeps on something else.
    Busy,
}

fn member_waits(pid: u32, slave: &Path) -> Verdict {
    match wait_of(pid) {
        Some(Wait::Reading(fd)) if is_terminal(pid, fd, slave) => Verdict::Reads,
        Some(Wait::Polling) if (0..=2).any(|fd| is_terminal(pid, fd, slave)) => Verdict::Reads,
        Some(Wait::WaitingForChild) | None => Verdict::Ignored,
        Some(_) => Verdict::Busy,
    }
}

/// Whether descriptor `fd` of `pid` is the run's terminal (by its path, or as `/dev/tty`, which a
/// process of the run's session can only mean its own terminal).
fn is_terminal(pid: u32, fd: i32, slave: &Path) -> bool {
    fd_target(pid, fd).is_some_and(|target| target == slave || target == Path::new("/dev/tty"))
}

/// The run's processes (the child and its descendants) that are in `group`.
fn group_members(child: u32, group: u32) -> Vec<u32> {
    process_tree(child)
        .into_iter()
        .filter(|&pid| process_info(pid).and_then(|info| info.pgid) == Some(group))
        .collect()
}

fn known_architecture() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// `tcgetpgrp` on the master.
fn foreground_group(master: RawFd) -> Option<u32> {
    // SAFETY: tcgetpgrp takes an fd and returns an integer; a closed fd is an error.
    let group = unsafe { libc::tcgetpgrp(master) };
    u32::try_from(group).ok().filter(|&group| group > 0)
}

/// The terminal's `ICANON` and `ECHO` flags (the master reads the line discipline's termios).
fn termios(master: RawFd) -> Option<(bool, bool)> {
    // SAFETY: an all-zero termios is a valid value for tcgetattr to overwrite.
    let mut termios: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `termios` is a valid, writable termios; a bad fd is an error return.
    if unsafe { libc::tcgetattr(master, &mut termios) } != 0 {
        return None;
    }
    Some((
        termios.c_lflag & libc::ICANON != 0,
        termios.c_lflag & libc::ECHO != 0,
    ))
}

/// Bytes readable on `fd` (`FIONREAD`).
fn readable(fd: RawFd) -> Option<usize> {
    let mut count: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer; a bad fd is an error return.
    let status = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut count) };
    (status == 0).then(|| usize::try_from(count).unwrap_or(0))
}

/// Output the program wrote that the run's reader has not read yet.
fn unread(master: RawFd) -> Option<usize> {
    readable(master)
}

/// Input the program can read but has not (through a descriptor of the slave side of its own,
/// opened without becoming anyone's controlling terminal and closed at once).
fn pending_input(slave: &Path) -> Option<usize> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(slave)
        .ok()?;
    readable(file.as_raw_fd())
}
