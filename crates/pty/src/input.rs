//! Whether the program in a run's pseudo-terminal waits for input, read from the kernel rather than
//! guessed from a quiet output.
//!
//! A run waits for input when all of this holds (Linux):
//! - the terminal's foreground process group (`tcgetpgrp` on the master) has a member asleep
//!   reading the terminal — in `read` on it, or in `select`/`poll`/`epoll` while it holds the
//!   terminal on fd 0, 1 or 2 — and every other member is asleep in such a wait too, or only waits
//!   for its children (a `sh -c` parent in `wait4`): a member that runs, is stopped, or sleeps on
//!   anything else (a timer, a pipe, a lock) means the program is busy;
//! - nothing the program wrote is still unread on the master, and everything read has been fed to
//!   the terminal model (the reader feeds under the model's lock, taken here), so the prompt is on
//!   the screen;
//! - no input is waiting for the program: what was typed but not yet read (a complete line in
//!   canonical mode, any byte in raw mode) means it has work to do. Input just written may not
//!   have reached the line discipline yet (the kernel moves it on a worker of its own): for a
//!   short while after a write (`INPUT_SETTLE`, 30 ms) a program still asleep in its read only
//!   counts as waiting once it has been seen busy since — it took the input and asked again.
//!
//! The terminal's termios say how it reads: a line at a time (`ICANON`: prompts) or key by key
//! (TUIs, readline), and whether typed text is echoed (`ECHO` off: a password prompt). Where the
//! kernel cannot tell (not Linux, or an architecture whose system call numbers are unknown), the
//! state says so ([`InputState::known`]) and [`SessionTerminal::wait_for_input`] falls back to a
//! quiet period in the output.

use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shellwright_proc::process_info;
use shellwright_proc::waits::{Wait, fd_target, process_name, process_tree, wait_of};

/// How the terminal hands input to the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputMode {
    /// Canonical mode: the program reads whole lines (a prompt).
    Line,
    /// Raw or cbreak mode: the program reads keys as they come (a TUI, readline).
    Keys,
}

/// The process a run's input goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForegroundProcess {
    pub pid: u32,
    /// Its name as the kernel reports it (`comm`, at most 15 bytes).
    pub name: String,
}

/// Whether a run's program waits for input, and how it reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputState {
    /// The program waits for input (see the module doc).
    pub waiting: bool,
    /// Whether the kernel could tell; false where only a quiet period can be watched.
    pub known: bool,
    pub mode: Option<InputMode>,
    /// Whether typed text is echoed (false at a password prompt).
    pub echo: Option<bool>,
    /// The process that reads the input (else the foreground group's leader).
    pub foreground: Option<ForegroundProcess>,
    /// The cursor's row up to the cursor, while waiting: what the program asks.
    pub prompt: Option<String>,
}

/// What the master side of a live run says about its terminal.
pub(crate) struct TerminalFacts {
    pub master: RawFd,
    pub child: u32,
    /// The slave side's path (`/dev/pts/N`).
    pub slave: PathBuf,
}

/// How often a waiter looks again while the program is busy.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(4);
/// How long a program must be seen waiting, without output, before a waiter believes it.
pub(crate) const STEADY: Duration = Duration::from_millis(15);
/// Without the kernel's word, a program counts as waiting after this long without output.
pub(crate) const QUIET_FALLBACK: Duration = Duration::from_millis(300);

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

/// The cursor's row up to the cursor, from `lines` (each row's text, trailing blanks trimmed).
pub(crate) fn prompt_of(lines: &[String], row: usize, col: usize) -> Option<String> {
    let line = lines.get(row)?;
    let mut prompt: String = line.chars().take(col).collect();
    // The cursor may sit past the trimmed text, after a prompt's trailing blank.
    let shown = prompt.chars().count();
    if shown < col && line.chars().count() == shown {
        prompt.extend(std::iter::repeat_n(' ', col - shown));
    }
    Some(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_the_cursor_row_up_to_the_cursor() {
        let lines = vec!["$ ls".to_string(), "Password:".to_string(), String::new()];
        assert_eq!(prompt_of(&lines, 1, 10).as_deref(), Some("Password: "));
        assert_eq!(prompt_of(&lines, 0, 2).as_deref(), Some("$ "));
        assert_eq!(prompt_of(&lines, 2, 0).as_deref(), Some(""));
        assert_eq!(prompt_of(&lines, 5, 0), None);
    }
}
