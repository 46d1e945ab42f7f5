//! The session's stdin, stdout and stderr: `/dev/null` between runs, so the transcript's pipe can
//! reach end of file, and the run's transcript while it runs — as the shell's own descriptors, so
//! that `exec >file` can replace them and traps write to the transcript, never to the host's.

use brush_core::openfiles::{OpenFile, OpenFiles};

use super::Session;
use super::qualify::Transcript;
use crate::error::ShellError;

impl Session {
    /// Makes the run's transcript the session's own stdout and stderr, and /dev/null its stdin.
    ///
    /// They are the shell's fds rather than the run's parameters, so that `exec >file` can
    /// replace them and everything that writes to the shell's defaults (traps, completion
    /// functions) writes to the transcript — never to the host's stdout or stderr. Other fds a
    /// script opened with `exec` stay open across runs, as in one long bash session.
    pub(super) fn attach_stdio(&mut self, output: OpenFile) -> Result<(), ShellError> {
        let fail =
            |e: &dyn std::fmt::Display| ShellError::Execution(format!("cannot set up stdio: {e}"));
        let stdin = self.null.try_clone().map_err(|e| fail(&e))?;
        let stderr = output.try_clone().map_err(|e| fail(&e))?;
        let files = self.shell.open_files_mut();
        files.set_fd(OpenFiles::STDIN_FD, stdin);
        files.set_fd(OpenFiles::STDOUT_FD, output);
        files.set_fd(OpenFiles::STDERR_FD, stderr);
        Ok(())
    }

    /// Makes `transcript` the session's stdout and stderr for a run in place; returns what they
    /// were. Between runs all three are /dev/null already ([`detach_stdio`](Self::detach_stdio)),
    /// so stdin stays as it is and nothing needs duplicating.
    pub(super) fn lend_stdio(&mut self, transcript: &Transcript) -> [Option<OpenFile>; 2] {
        let files = self.shell.open_files_mut();
        [OpenFiles::STDOUT_FD, OpenFiles::STDERR_FD]
            .map(|fd| files.set_fd(fd, OpenFile::Stream(Box::new(transcript.clone()))))
    }

    /// Puts back the stdout and stderr [`lend_stdio`](Self::lend_stdio) replaced.
    pub(super) fn restore_stdio(&mut self, idle: [Option<OpenFile>; 2]) {
        let files = self.shell.open_files_mut();
        for (fd, file) in [OpenFiles::STDOUT_FD, OpenFiles::STDERR_FD]
            .into_iter()
            .zip(idle)
        {
            let _ = match file {
                Some(file) => files.set_fd(fd, file),
                None => files.remove_fd(fd),
            };
        }
    }

    /// Between runs the session's stdio is /dev/null, so the transcript's pipe can reach EOF.
    pub(super) fn detach_stdio(&mut self) {
        for fd in [
            OpenFiles::STDIN_FD,
            OpenFiles::STDOUT_FD,
            OpenFiles::STDERR_FD,
        ] {
            let _ = match self.null.try_clone() {
                Ok(null) => self.shell.open_files_mut().set_fd(fd, null),
                Err(_) => self.shell.open_files_mut().remove_fd(fd),
            };
        }
    }
}
