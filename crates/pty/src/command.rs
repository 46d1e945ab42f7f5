//! What to run in a pseudo-terminal: the shell command line, working directory, environment and
//! terminal size.

use std::path::{Path, PathBuf};

use crate::error::PtyError;
#[cfg(unix)]
use crate::hooks::Integration;

/// A terminal size in character cells, always within [`TermSize::COLS`] × [`TermSize::ROWS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermSize {
    cols: u16,
    rows: u16,
}

impl Default for TermSize {
    fn default() -> Self {
        Self {
            cols: 120,
            rows: 40,
        }
    }
}

impl TermSize {
    /// The allowed column range.
    pub const COLS: (u16, u16) = (20, 400);
    /// The allowed row range.
    pub const ROWS: (u16, u16) = (5, 200);

    /// A size clamped into the allowed ranges (so any integer is acceptable).
    pub fn clamped(cols: i64, rows: i64) -> Self {
        let clamp =
            |value: i64, (low, high): (u16, u16)| value.clamp(low.into(), high.into()) as u16;
        Self {
            cols: clamp(cols, Self::COLS),
            rows: clamp(rows, Self::ROWS),
        }
    }

    pub fn cols(&self) -> u16 {
        self.cols
    }

    pub fn rows(&self) -> u16 {
        self.rows
    }
}

/// The longest single argument or `KEY=value` environment string the kernel passes to a program
/// (Linux's `MAX_ARG_STRLEN`, 32 pages, counting the terminating NUL). A longer one makes the
/// exec fail inside the already-forked child, so it is refused before anything is spawned.
pub const MAX_ARG_BYTES: usize = 128 * 1024 - 1;

/// The shell a command runs through unless told otherwise: `sh` on Unix, `cmd` on Windows (found
/// through `PATH`, as any shell is).
pub const DEFAULT_SHELL: &str = if cfg!(windows) { "cmd" } else { "sh" };

/// A command run through a shell in a pseudo-terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtyCommand {
    /// The command line handed to the shell (unused when `interactive` or with `program`).
    pub command: String,
    /// A program and its arguments, run as they are: no shell, no quoting (`shell`, `login`
    /// and `command` are not used). The program is looked up on `PATH`.
    pub program: Option<Vec<String>>,
    /// The shell program (default [`DEFAULT_SHELL`]), resolved through `PATH`.
    pub shell: String,
    /// Run as a login shell (`-lc` instead of `-c`; POSIX-style shells only).
    pub login: bool,
    /// Start the shell itself as an interactive session instead of running `command`; bash, zsh
    /// and fish get shell-integration hooks (see `hooks`).
    pub interactive: bool,
    /// The working directory; `None` is the host process's current directory.
    pub cwd: Option<PathBuf>,
    /// Variables overlaid on the host environment (on nothing without `inherit_env`).
    pub env: Vec<(String, String)>,
    /// Whether the program starts from the host's environment; when false it gets `env` alone
    /// (and `TERM`, which every run has), as when it inherits another shell's exports.
    pub inherit_env: bool,
    pub size: TermSize,
}

impl PtyCommand {
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            program: None,
            shell: DEFAULT_SHELL.to_string(),
            login: false,
            interactive: false,
            cwd: None,
            env: Vec::new(),
            inherit_env: true,
            size: TermSize::default(),
        }
    }

    /// The program and its arguments: `cmd /c`, `powershell -Command`, else `-c` (`-lc` for a
    /// login shell). Interactive: the shell alone (`-i`, plus `-l` for a login shell, for
    /// POSIX-style shells); bash, zsh and fish are started by the spawner with their hooks
    /// instead.
    pub fn argv(&self) -> Vec<String> {
        if let Some(program) = &self.program {
            return program.clone();
        }
        let kind = shell_kind(&self.shell);
        let mut argv = vec![self.shell.clone()];
        if self.interactive {
            if kind.is_posix_style() {
                argv.push("-i".to_string());
                if self.login {
                    argv.push("-l".to_string());
                }
            }
            return argv;
        }
        let flag = match kind {
            ShellKind::Cmd => "/c",
            ShellKind::PowerShell => "-Command",
            _ if self.login => "-lc",
            _ => "-c",
        };
        argv.extend([flag.to_string(), self.command.clone()]);
        argv
    }

    /// The program the run starts: the shell, or the first word of `program`.
    pub fn program_name(&self) -> String {
        match &self.program {
            Some(program) => program.first().cloned().unwrap_or_default(),
            None => self.shell.clone(),
        }
    }

    /// Checks what the kernel would refuse at exec time: no program, an argument or an
    /// environment entry longer than [`MAX_ARG_BYTES`], or a NUL byte inside one (it cannot be
    /// passed at all).
    pub fn validate(&self) -> Result<(), PtyError> {
        let refuse = |reason: String| PtyError::Spawn {
            program: self.program_name(),
            reason,
        };
        if self
            .program
            .as_ref()
            .is_some_and(|program| program.is_empty())
        {
            return Err(refuse(
                "argv is empty: it needs at least the program".to_string(),
            ));
        }
        let own_program = self.program.is_some();
        for (what, text) in self.argv().iter().enumerate().map(|(i, arg)| {
            let what = match (own_program, i) {
                (true, 0) => "the program name".to_string(),
                (true, i) => format!("argument {i}"),
                (false, 0) => "the shell name".to_string(),
                (false, _) => "the command".to_string(),
            };
            (what, arg.as_str())
        }) {
            if text.len() > MAX_ARG_BYTES {
                return Err(refuse(format!(
                    "{what} is {} bytes, over the {MAX_ARG_BYTES}-byte limit of one argument",
                    text.len()
                )));
            }
            if text.contains('\0') {
                return Err(refuse(format!("{what} contains a NUL byte")));
            }
        }
        for (key, value) in &self.env {
            let entry = key.len() + 1 + value.len();
            if entry > MAX_ARG_BYTES {
                return Err(refuse(format!(
                    "the environment variable {key} is {entry} bytes, over the {MAX_ARG_BYTES}-byte limit of one entry"
                )));
            }
            if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
                return Err(refuse(format!(
                    "the environment variable {key:?} has an empty name, or contains '=' in its name or a NUL byte"
                )));
            }
        }
        Ok(())
    }

    /// The shell integration the run gets: bash, zsh or fish started interactively (see `hooks`).
    #[cfg(unix)]
    pub(crate) fn integration(&self) -> Option<Integration> {
        if self.program.is_some() || !self.interactive {
            return None;
        }
        match shell_kind(&self.shell) {
            ShellKind::Bash => Some(Integration::Bash),
            ShellKind::Zsh => Some(Integration::Zsh),
            ShellKind::Fish => Some(Integration::Fish),
            _ => None,
        }
    }

    /// The `ZDOTDIR` the user's zsh would read its startup files from: the run's, else the host's.
    #[cfg(unix)]
    pub(crate) fn user_zdotdir(&self) -> Option<String> {
        match self.env.iter().rev().find(|(key, _)| key == "ZDOTDIR") {
            Some((_, dir)) => Some(dir.clone()),
            None => std::env::var("ZDOTDIR").ok(),
        }
        .filter(|dir| !dir.is_empty())
    }

    /// The directory the child starts in, checked to exist and be a directory: it is never
    /// silently replaced by another one.
    pub fn working_dir(&self) -> Result<PathBuf, PtyError> {
        let dir = match &self.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .map_err(|err| cwd_error(Path::new("."), &err.to_string()))?,
        };
        match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok(dir),
            Ok(_) => Err(cwd_error(&dir, "not a directory")),
            Err(err) => Err(cwd_error(&dir, &io_reason(&err))),
        }
    }
}

fn cwd_error(dir: &Path, reason: &str) -> PtyError {
    PtyError::Cwd {
        path: dir.display().to_string(),
        reason: reason.to_string(),
    }
}

/// An `io::Error`'s text without the "(os error N)" suffix.
fn io_reason(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum ShellKind {
    Bash,
    Zsh,
    Fish,
    Cmd,
    PowerShell,
    Posix,
}

impl ShellKind {
    /// Takes `-c`, `-l` and `-i` as POSIX shells do (fish too).
    fn is_posix_style(&self) -> bool {
        !matches!(self, Self::Cmd | Self::PowerShell)
    }
}

fn shell_kind(shell: &str) -> ShellKind {
    let name = shell
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(shell)
        .to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    match name {
        "bash" => ShellKind::Bash,
        "zsh" => ShellKind::Zsh,
        "fish" => ShellKind::Fish,
        "cmd" => ShellKind::Cmd,
        "powershell" | "pwsh" => ShellKind::PowerShell,
        _ => ShellKind::Posix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_shell_command_line() {
        let table = [
            ("sh", false, vec!["sh", "-c", "echo hi"]),
            ("sh", true, vec!["sh", "-lc", "echo hi"]),
            ("/bin/bash", true, vec!["/bin/bash", "-lc", "echo hi"]),
            ("cmd", false, vec!["cmd", "/c", "echo hi"]),
            (
                "C:\\Windows\\System32\\CMD.EXE",
                true,
                vec!["C:\\Windows\\System32\\CMD.EXE", "/c", "echo hi"],
            ),
            (
                "powershell",
                false,
                vec!["powershell", "-Command", "echo hi"],
            ),
            ("pwsh.exe", true, vec!["pwsh.exe", "-Command", "echo hi"]),
            (
                "/usr/bin/pwsh",
                false,
                vec!["/usr/bin/pwsh", "-Command", "echo hi"],
            ),
            ("zsh", false, vec!["zsh", "-c", "echo hi"]),
        ];
        for (shell, login, want) in table {
            let command = PtyCommand {
                shell: shell.to_string(),
                login,
                ..PtyCommand::new("echo hi")
            };
            assert_eq!(command.argv(), want, "{shell} login={login}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn builds_interactive_shell_command_lines() {
        let table = [
            ("sh", false, vec!["sh", "-i"], None),
            ("zsh", true, vec!["zsh", "-i", "-l"], Some(Integration::Zsh)),
            (
                "/usr/bin/fish",
                false,
                vec!["/usr/bin/fish", "-i"],
                Some(Integration::Fish),
            ),
            (
                "/bin/bash",
                false,
                vec!["/bin/bash", "-i"],
                Some(Integration::Bash),
            ),
            (
                "bash",
                true,
                vec!["bash", "-i", "-l"],
                Some(Integration::Bash),
            ),
            ("cmd.exe", false, vec!["cmd.exe"], None),
            ("pwsh", true, vec!["pwsh"], None),
        ];
        for (shell, login, want, integration) in table {
            let command = PtyCommand {
                shell: shell.to_string(),
                login,
                interactive: true,
                ..PtyCommand::new("ignored")
            };
            assert_eq!(command.argv(), want, "{shell} login={login}");
            assert_eq!(command.integration(), integration, "{shell}");
        }
        let not_interactive = PtyCommand {
            shell: "zsh".to_string(),
            ..PtyCommand::new("x")
        };
        assert_eq!(not_interactive.integration(), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_users_zdotdir_comes_from_the_run_before_the_host() {
        let command = PtyCommand {
            env: vec![("ZDOTDIR".to_string(), "/run/own".to_string())],
            ..PtyCommand::new("x")
        };
        assert_eq!(command.user_zdotdir().as_deref(), Some("/run/own"));
        let empty = PtyCommand {
            env: vec![("ZDOTDIR".to_string(), String::new())],
            ..PtyCommand::new("x")
        };
        assert_eq!(empty.user_zdotdir(), None);
    }

    #[test]
    fn refuses_what_exec_would_refuse() {
        let long = "x".repeat(MAX_ARG_BYTES + 1);
        let fits = "x".repeat(MAX_ARG_BYTES - "A=".len());
        let with_env = |key: &str, value: &str| PtyCommand {
            env: vec![(key.to_string(), value.to_string())],
            ..PtyCommand::new("true")
        };
        let refused = |command: PtyCommand| command.validate().err().map(|e| e.to_string());
        assert_eq!(refused(PtyCommand::new("echo ok")), None);
        assert_eq!(refused(with_env("A", &fits)), None);
        assert_eq!(
            refused(PtyCommand::new(long.clone())),
            Some(format!(
                "Failed to spawn sh: the command is {} bytes, over the 131071-byte limit of one argument",
                MAX_ARG_BYTES + 1
            ))
        );
        assert_eq!(
            refused(with_env("BIG", &long)),
            Some(format!(
                "Failed to spawn sh: the environment variable BIG is {} bytes, over the 131071-byte limit of one entry",
                MAX_ARG_BYTES + 5
            ))
        );
        assert_eq!(
            refused(PtyCommand::new("echo a\0b")),
            Some("Failed to spawn sh: the command contains a NUL byte".to_string())
        );
        for key in ["", "A=B", "A\0"] {
            assert!(refused(with_env(key, "v")).is_some(), "{key:?}");
        }
        assert!(refused(with_env("A", "v\0")).is_some());
    }

    #[test]
    fn clamps_sizes() {
        let table = [
            ((120, 40), (120, 40)),
            ((0, 0), (20, 5)),
            ((-5, -1), (20, 5)),
            ((19, 4), (20, 5)),
            ((20, 5), (20, 5)),
            ((400, 200), (400, 200)),
            ((401, 201), (400, 200)),
            ((i64::MAX, i64::MIN), (400, 5)),
        ];
        for ((cols, rows), (want_cols, want_rows)) in table {
            let size = TermSize::clamped(cols, rows);
            assert_eq!(
                (size.cols(), size.rows()),
                (want_cols, want_rows),
                "{cols}x{rows}"
            );
        }
        assert_eq!(TermSize::default(), TermSize::clamped(120, 40));
    }

    #[test]
    fn checks_the_working_directory() {
        let missing = PtyCommand {
            cwd: Some("/definitely/not/here".into()),
            ..PtyCommand::new("true")
        };
        assert_eq!(
            missing.working_dir().map_err(|e| e.to_string()),
            Err("Failed to set cwd: /definitely/not/here: No such file or directory".to_string())
        );
        let file = PtyCommand {
            cwd: Some("/etc/hostname".into()),
            ..PtyCommand::new("true")
        };
        assert_eq!(
            file.working_dir().map_err(|e| e.to_string()),
            Err("Failed to set cwd: /etc/hostname: not a directory".to_string())
        );
        let tmp = PtyCommand {
            cwd: Some("/tmp".into()),
            ..PtyCommand::new("true")
        };
        assert_eq!(tmp.working_dir().ok(), Some(PathBuf::from("/tmp")));
        assert_eq!(
            PtyCommand::new("true").working_dir().ok(),
            std::env::current_dir().ok()
        );
    }
}
