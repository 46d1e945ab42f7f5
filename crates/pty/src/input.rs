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
//! kernel cannot tell (not Linux, or an architecture whose system call numbers are unknown, or
//! Windows, whose consoles do not say), the state says so ([`InputState::known`]) and [`SessionTerminal::wait_for_input`] falls back to a
//! quiet period in the output.

use std::time::Duration;

#[cfg(unix)]
mod kernel;
#[cfg(unix)]
pub(crate) use kernel::{TerminalFacts, probe};

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

/// How often a waiter looks again while the program is busy.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(4);
/// How long a program must be seen waiting, without output, before a waiter believes it.
pub(crate) const STEADY: Duration = Duration::from_millis(15);
/// Without the kernel's word, a program counts as waiting after this long without output.
pub(crate) const QUIET_FALLBACK: Duration = Duration::from_millis(300);

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
