//! Runs whose whole command is one external program with plain literal words (`/bin/true`,
//! `ls -la src`), which a session spawns itself instead of through brush.
//!
//! brush-core 0.5 spawns every external command with `std::process::Command` plus a `pre_exec`
//! closure (the fd mappings of `command-fds` register one even when there is nothing to map), and
//! a closure forces std to `fork()` the whole host — the page tables of Node's heap included —
//! where it would otherwise use `posix_spawn` (on Linux a `clone(CLONE_VM | CLONE_VFORK)` that
//! copies nothing). Spawned here the same way ([`spawn`](super::spawn)), the same command costs a
//! fraction of that.
//!
//! The run stays the queued run it was ([`queued`](super::queued)): same session thread, umask, output pipe,
//! run tag and [`RunScope`](shellwright_proc::RunScope), same timeout and abort, same drain rule
//! and result. The child gets what brush would give it: argv as typed (argv\[0\] the name as typed),
//! the session's exported variables (set ones only) plus `_` set to the program's path, the
//! session's working directory, the run's stdin/stdout/stderr, a session and process group of its
//! own without a controlling terminal (what the spawn policy gives brush's), and std's signal
//! set-up (the one brush's spawn gets). Afterwards the session reads as after brush: `$?`,
//! `PIPESTATUS`, `$_` and `BASH_COMMAND` (see `Session::execute_direct`).
//!
//! What qualifies is decided twice. Here, from the text alone ([`plain_words`]): words of
//! letters, digits and `_ . / , : @ % + - =` separated by blanks, the first without `=` (that
//! would be an assignment) and not a reserved word — nothing to expand, quote, redirect, glob or
//! chain. Then by the session (`Session::direct_command`), from its state: the name is no alias,
//! function or builtin (enabled or not); it resolves — a name with a `/` as it is, any other
//! through brush's own PATH lookup and hash table; no fd beyond 0–2 is open in the session (brush
//! would pass it on); no function is exported (brush would pass it as `BASH_FUNC_…`); the session
//! is no `executeShell` one (its EXIT trap ends the run); the session set no resource limits
//! with `ulimit` (only brush's fork applies them); the system is Linux with musl or a glibc from
//! 2.26 on ([`spawn::supported`](super::spawn::supported)); and nothing would run or print in the
//! command's stead or around it — no user DEBUG or ERR trap, no `set -e`, `-x`, `-v` or `-m` —
//! and no `set -n`, under which nothing runs.
//! A program that does not resolve is left to brush, which reports it (127, with its
//! `command_not_found_handle` if there is one), and so is one whose spawn fails (not executable,
//! a script without `#!`, which brush's `execvp` hands to `/bin/sh`): nothing has run then, so
//! brush runs the command from the start, exactly as it would have.
//!
//! One difference remains, which no check can foresee: a program stopped by a signal (`kill
//! -STOP` from outside) keeps the run waiting until it continues, ends or the run is stopped,
//! where brush would end the run with status 148 and keep the program as a stopped job.

use std::borrow::Cow;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use brush_core::openfiles::{OpenFile, OpenFiles};
use brush_core::{ExecutionParameters, ExecutionResult, ShellFd, ShellValue, ShellVariable};
use shellwright_proc::CancelToken;

use super::spawn::{self, Child, EnvBlock, Spawn};
use super::{Ended, Session, Stops, is_alias_or_function, reported};
use crate::brush;

/// The longest command considered (argv is bounded by the command's text).
pub(crate) const DIRECT_MAX_LEN: usize = 4096;

/// Words that start syntax, not a command, when they come first.
const RESERVED_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "function", "in", "time", "coproc",
];

/// A command the session spawns itself: the program it resolved to and the words as typed.
#[derive(Debug)]
pub(crate) struct DirectCommand {
    pub program: PathBuf,
    pub words: Vec<String>,
    /// fds 0, 1 and 2 of the run (see [`stdio`]).
    pub stdio: [Option<OwnedFd>; 3],
}

impl DirectCommand {
    /// `BASH_COMMAND` while it runs: its words joined by spaces.
    pub fn command_line(&self) -> String {
        self.words.join(" ")
    }

    /// `$_` once it ran: its last word.
    pub fn last_word(&self) -> &str {
        self.words.last().map_or("", String::as_str)
    }

    /// Starts the process brush would start for it: in `cwd`, with `exported` (the session's
    /// exported variables that have a value) as its whole environment plus `_` set to the
    /// program's path. Its descriptors are closed on the way out, as std closes a spawned
    /// command's. An error means nothing ran.
    pub fn start<'v>(
        self,
        cwd: &Path,
        exported: impl Iterator<Item = (&'v str, Cow<'v, str>)>,
    ) -> std::io::Result<Child> {
        let mut env = EnvBlock::default();
        for (name, value) in exported.filter(|(name, _)| *name != "_") {
            env.push(name, &value)?;
        }
        env.push("_", &self.program.to_string_lossy())?;
        Spawn {
            program: &self.program,
            argv: &self.words,
            env,
            cwd,
            stdio: &self.stdio,
        }
        .start()
    }
}

/// Programs spawned directly by this process, for tests to tell the paths apart.
static SPAWNS: AtomicU64 = AtomicU64::new(0);

/// Counts one direct spawn.
pub(crate) fn count_spawn() {
    SPAWNS.fetch_add(1, Ordering::Relaxed);
}

/// How many programs runs have spawned directly so far, in this process: how a test tells a run
/// spawned directly from one brush ran (their effects are meant to be the same).
pub fn direct_spawns() -> u64 {
    SPAWNS.load(Ordering::Relaxed)
}

/// The words of `command` when it is a single simple command of plain literal words, which the
/// shell would pass to the program unchanged; `None` for anything else.
pub(crate) fn plain_words(command: &str) -> Option<Vec<&str>> {
    if command.len() > DIRECT_MAX_LEN || !command.bytes().all(|b| blank(b) || plain(b)) {
        return None;
    }
    let words: Vec<&str> = command
        .split([' ', '\t'])
        .filter(|word| !word.is_empty())
        .collect();
    let name = words.first()?;
    (!name.contains('=') && !RESERVED_WORDS.contains(name)).then_some(words)
}

fn blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

/// A byte that means itself wherever it stands in a word.
fn plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"_./,:@%+-=".contains(&byte)
}

/// The stdio of the spawned program — fds 0, 1 and 2 of the run as brush would pass them, `None`
/// for the host's own — or `None` when another fd is open, which brush would pass on too, or one
/// is an in-memory stream.
pub(crate) fn stdio(
    files: impl Iterator<Item = (ShellFd, OpenFile)>,
) -> Option<[Option<OwnedFd>; 3]> {
    let mut stdio = [None, None, None];
    for (fd, file) in files {
        let slot = match fd {
            OpenFiles::STDIN_FD => 0,
            OpenFiles::STDOUT_FD => 1,
            OpenFiles::STDERR_FD => 2,
            _ => return None,
        };
        stdio[slot] = match file {
            OpenFile::Stdin(_) | OpenFile::Stdout(_) | OpenFile::Stderr(_) => None,
            OpenFile::File(file) => Some(file.into()),
            OpenFile::PipeReader(pipe) => Some(pipe.into()),
            OpenFile::PipeWriter(pipe) => Some(pipe.into()),
            OpenFile::Stream(_) => return None,
        };
    }
    Some(stdio)
}

impl Session {
    /// The command of a run when the session spawns it itself ([`direct`]): one program with
    /// plain words, resolved as brush resolves it, in a session whose state gives brush nothing
    /// else to do around it.
    pub(super) fn direct_command(
        &mut self,
        command: &str,
        params: &ExecutionParameters,
    ) -> Option<DirectCommand> {
        let words = plain_words(command)?;
        let options = self.shell.options();
        if !self.runs_commands_alone()
            || options.enable_job_control
            || options.interactive
            || self.shell.funcs().iter().any(|(_, f)| f.is_exported())
            || !brush::has_host_limits(&self.shell)
            || !spawn::supported()
        {
            return None;
        }
        let name = words[0];
        if is_alias_or_function(&self.shell, name) || self.shell.builtins().get(name).is_some() {
            return None;
        }
        let program = if name.contains('/') {
            PathBuf::from(name)
        } else {
            self.shell.find_first_executable_in_path_using_cache(name)?
        };
        // Last: it duplicates the run's descriptors, for nothing if another check declines.
        let stdio = stdio(params.iter_fds(&self.shell))?;
        Some(DirectCommand {
            program,
            words: words.into_iter().map(String::from).collect(),
            stdio,
        })
    }

    /// Spawns a [`direct_command`](Self::direct_command) and waits for it as brush would have run
    /// it, leaving `$?`, `PIPESTATUS`, `$_` and `BASH_COMMAND` as brush leaves them. Should the
    /// spawn fail, nothing has run: brush runs `command` instead, and reports the failure its way.
    pub(super) async fn execute_direct(
        &mut self,
        direct: DirectCommand,
        command: &str,
        params: &ExecutionParameters,
        stops: Stops<'_>,
    ) -> Ended {
        let last_word = direct.last_word().to_string();
        brush::set_bash_command(&mut self.shell, direct.command_line());
        let exported = self.shell.env().iter_exported().filter_map(|(name, var)| {
            let value = var.value();
            value
                .is_set()
                .then(|| (name.as_str(), value.to_cow_str(&self.shell)))
        });
        let Ok(child) = direct.start(self.shell.working_dir(), exported) else {
            return self.execute(command, params, stops).await;
        };
        count_spawn();
        self.set_last_argument(&last_word);
        self.wait_direct(child, params, stops.cancel).await
    }

    /// Waits for a program [`execute_direct`](Self::execute_direct) spawned, until it ends or
    /// `cancel` fires, and sets `$?` and `PIPESTATUS` from its status.
    pub(super) async fn wait_direct(
        &mut self,
        mut child: Child,
        params: &ExecutionParameters,
        cancel: &CancelToken,
    ) -> Ended {
        let status = tokio::select! {
            biased;
            reason = cancel.cancelled() => return Ended::Cancelled(reason),
            status = child.wait() => status,
        };
        // The program may have ended *because* the run was stopped (see `execute_parsed`).
        if let Some(reason) = cancel.reason() {
            return Ended::Cancelled(reason);
        }
        let result = match status {
            Ok(status) => {
                // brush's own reading of a status: the code, 128 + a signal, else 127.
                let result = ExecutionResult::from(std::process::Output {
                    status,
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                });
                let code = u8::from(result.exit_code);
                self.shell.set_last_exit_status(code);
                *self.shell.last_pipeline_statuses_mut() = vec![code];
                result
            }
            // As brush reports a wait that failed (another waiter reaped the program, say).
            Err(e) => reported(&mut self.shell, params, e.into()),
        };
        Ended::Finished(Ok(result))
    }

    /// Sets `$_` as brush does after a command: a fresh unexported variable, unless `_` is
    /// read-only.
    pub(super) fn set_last_argument(&mut self, last: &str) {
        let env = self.shell.env_mut();
        if env.get("_").is_some_and(|(_, var)| var.is_readonly()) {
            return;
        }
        let _ = env.set_global("_", ShellVariable::new(ShellValue::String(last.into())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn plain_words_are_split_on_blanks() {
        assert_eq!(plain_words("/bin/true"), Some(vec!["/bin/true"]));
        assert_eq!(
            plain_words("  ls\t-la  src/a,b  x=1 a:b@c%d+e "),
            Some(vec!["ls", "-la", "src/a,b", "x=1", "a:b@c%d+e"])
        );
    }

    #[test]
    pub(super) fn anything_the_shell_would_interpret_does_not_qualify() {
        for command in [
            "",
            "   ",
            "X=1 ls",
            "X=1",
            "ls | cat",
            "ls > f",
            "ls 2>&1",
            "ls &",
            "ls; ls",
            "ls && ls",
            "ls\nls",
            "echo $HOME",
            "echo ${X}",
            "echo $(date)",
            "echo `date`",
            "echo *",
            "echo a?",
            "echo [ab]",
            "echo {a,b}",
            "echo ~",
            "echo 'a b'",
            "echo \"a\"",
            "echo a\\ b",
            "ls # comment",
            "! ls",
            "[[ -n x ]]",
            "(ls)",
            "time ls",
            "if",
            "for",
            "coproc",
            "ls é",
        ] {
            assert_eq!(plain_words(command), None, "{command:?}");
        }
        assert_eq!(plain_words(&"ls ".repeat(DIRECT_MAX_LEN)), None);
    }
}
