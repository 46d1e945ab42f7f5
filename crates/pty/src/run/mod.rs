//! One run of a command in a pseudo-terminal: spawning it, waiting for its end, and cancelling it.
//!
//! Each run owns one I/O thread ([`io_loop`]) that reads the terminal to its end through a
//! [`MasterReader`] ([`reader`]; or leaves the reading to the caller's [`ReadDriver`]), so every
//! byte the child wrote is handed to the [`PtyOutput`] before the run's result is published, and
//! a [`PtyControl`] ([`control`]) through which callers write input and resize without blocking.
//! A cancel stops everything the run started (see [`PtyRun::wait`]).

mod control;
mod io_loop;
mod reader;

use std::thread::JoinHandle;
use std::time::Duration;

use portable_pty::{CommandBuilder, native_pty_system};
use shellwright_io::{pidfd_open, set_nonblocking, wake_pipe};
use shellwright_proc::{
    CancelReason, CancelToken, Outcome, ProcessId, RUN_TAG_VARIABLE, RunRoots, RunScope,
    process_info, send_signal,
};
use tokio::sync::oneshot;

pub use control::PtyControl;
use control::{Spawned, pty_size};
pub use io_loop::ORPHAN_DRAIN;
use io_loop::{Backstop, ChildExit, IoLoop};
pub use reader::{MasterReader, PtyOutput, ReadDriver, ReadState, Reading};

use crate::hooks::ShellHooks;
use crate::{PtyCommand, PtyError};

/// How long SIGTERM gets before SIGKILL when a run is cancelled.
pub const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// A spawned run; [`wait`](Self::wait) for its end.
pub struct PtyRun {
    control: PtyControl,
    child: ProcessId,
    /// Finds what the run started when it is cancelled; the tag stays claimed until then.
    scope: RunScope,
    done: oneshot::Receiver<ChildExit>,
    io_thread: Option<JoinHandle<()>>,
}

/// Spawns `command` in a new pseudo-terminal attached to `control`; `output` receives every byte
/// the terminal produces, read by the run's I/O thread. Blocks for the fork/exec only.
pub fn spawn(
    command: &PtyCommand,
    control: &PtyControl,
    output: impl PtyOutput,
) -> Result<PtyRun, PtyError> {
    spawn_reading(command, control, output, Reading::IoThread)
}

/// [`spawn`], with the terminal read as `reading` says.
pub fn spawn_reading(
    command: &PtyCommand,
    control: &PtyControl,
    output: impl PtyOutput,
    reading: Reading,
) -> Result<PtyRun, PtyError> {
    command.validate()?;
    let cwd = command.working_dir()?;
    let size = control.size();
    let pair = native_pty_system()
        .openpty(pty_size(size))
        .map_err(|err| PtyError::Open(err.to_string()))?;
    // The generated files must outlive the shell's startup; the I/O thread keeps them until the
    // run ends.
    let hooks = match command.integration() {
        Some(integration) => Some(ShellHooks::write(integration, command.login).map_err(
            |err| PtyError::Spawn {
                program: command.shell.clone(),
                reason: format!("cannot write the shell-integration files: {err}"),
            },
        )?),
        None => None,
    };
    let argv = hooks
        .as_ref()
        .map_or_else(|| command.argv(), |hooks| hooks.argv(&command.shell));
    let mut builder = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
    builder.cwd(&cwd);
    if !command.inherit_env {
        builder.env_clear();
    }
    let user_sets_term = command.env.iter().any(|(key, _)| key == "TERM");
    let inherits_term = command.inherit_env && std::env::var_os("TERM").is_some();
    if !user_sets_term && !inherits_term {
        builder.env("TERM", "xterm-256color");
    }
    for (key, value) in &command.env {
        builder.env(key, value);
    }
    if let Some(hooks) = &hooks {
        for (key, value) in hooks.env(command.user_zdotdir()) {
            builder.env(key, value);
        }
    }
    // Set last, so that the run's processes can always be found by it.
    let scope = RunScope::begin();
    builder.env(RUN_TAG_VARIABLE, scope.tag());
    let child = pair
        .slave
        .spawn_command(builder)
        .map_err(|err| PtyError::Spawn {
            program: command.program_name(),
            reason: err.to_string(),
        })?;
    // Only the child may hold the slave side, so that its exit ends the read with EIO.
    drop(pair.slave);
    let master = pair.master;
    let master_fd = master
        .as_raw_fd()
        .ok_or_else(|| PtyError::Open("no master fd".into()))?;
    // SAFETY: `master` owns this fd and outlives the borrow.
    let master_borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(master_fd) };
    set_nonblocking(master_borrowed).map_err(|err| PtyError::Open(err.to_string()))?;
    let (waker, wake) = wake_pipe().map_err(|err| PtyError::Open(err.to_string()))?;

    let pid = child.process_id().unwrap_or_default();
    // The child is not reaped before the I/O thread reaps it, so its pid cannot be reused yet.
    let child_id = process_info(pid).map_or(ProcessId { pid, start_time: 0 }, |info| info.id);
    let pidfd = pidfd_open(pid);
    let reader = match MasterReader::new(master_borrowed, Box::new(output), control.clone()) {
        Ok(reader) => reader,
        Err(err) => {
            send_signal(child_id, libc::SIGKILL);
            control.close();
            return Err(PtyError::Open(format!(
                "cannot duplicate the master: {err}"
            )));
        }
    };
    control.attach(Spawned {
        master,
        size,
        wake: waker,
        child: pid,
        reader: reader.clone(),
    });
    // Handed over only now that input and resizes reach the terminal.
    let driver = match reading {
        Reading::IoThread => None,
        Reading::Driver(driver) => driver.start(reader.clone()).ok().map(|()| driver),
    };
    let (done_tx, done) = oneshot::channel();
    let io = IoLoop {
        fd: master_fd,
        wake,
        pidfd,
        child,
        control: control.clone(),
        reader,
        driver,
        backstop: Backstop::Watching,
        hooks,
    };
    let io_thread = std::thread::Builder::new()
        .name("shellwright-pty-io".into())
        .spawn(move || {
            let exit = io.run();
            let _ = done_tx.send(exit);
        });
    let io_thread = match io_thread {
        Ok(handle) => handle,
        Err(err) => {
            // The closure (and with it the child handle) is gone; stop the child we started.
            send_signal(child_id, libc::SIGKILL);
            control.close();
            return Err(PtyError::Spawn {
                program: command.program_name(),
                reason: format!("cannot start the I/O thread: {err}"),
            });
        }
    };
    Ok(PtyRun {
        control: control.clone(),
        child: child_id,
        scope,
        done,
        io_thread: Some(io_thread),
    })
}

/// Spawns `command` (on a blocking thread) and waits for its end. A token cancelled before the
/// call returns a cancelled result without starting anything.
pub async fn run(
    command: PtyCommand,
    control: PtyControl,
    output: impl PtyOutput,
    cancel: &CancelToken,
) -> Result<Outcome, PtyError> {
    run_reading(command, control, output, Reading::IoThread, cancel).await
}

/// [`run`], with the terminal read as `reading` says.
pub async fn run_reading(
    command: PtyCommand,
    control: PtyControl,
    output: impl PtyOutput,
    reading: Reading,
    cancel: &CancelToken,
) -> Result<Outcome, PtyError> {
    if let Some(reason) = cancel.reason() {
        control.close();
        return Ok(Outcome::stopped(reason));
    }
    let spawn_control = control.clone();
    let spawned = tokio::task::spawn_blocking(move || {
        spawn_reading(&command, &spawn_control, output, reading)
    })
    .await
    .map_err(|err| PtyError::Io(format!("spawn task failed: {err}")));
    match spawned {
        Ok(Ok(run)) => run.wait(cancel).await,
        Ok(Err(err)) | Err(err) => {
            control.close();
            Err(err)
        }
    }
}

impl PtyRun {
    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.pid
    }

    pub fn control(&self) -> &PtyControl {
        &self.control
    }

    /// Waits for the run to end: the child has exited and the terminal's output has been read to
    /// its end. When `cancel` fires first, stops everything the run started (see
    /// `RunScope` in shellwright-proc: SIGTERM, up to [`CANCEL_GRACE`], SIGKILL) and reports
    /// the cancel.
    pub async fn wait(mut self, cancel: &CancelToken) -> Result<Outcome, PtyError> {
        let reason = tokio::select! {
            biased;
            exit = &mut self.done => return self.finish(exit, None),
            reason = cancel.cancelled() => reason,
        };
        self.stop_tree().await;
        let exit = (&mut self.done).await;
        self.finish(exit, Some(reason))
    }

    fn finish(
        &mut self,
        exit: Result<ChildExit, oneshot::error::RecvError>,
        cancelled: Option<CancelReason>,
    ) -> Result<Outcome, PtyError> {
        if let Some(thread) = self.io_thread.take() {
            // The thread sent its result as its last act, so this join is immediate.
            let _ = thread.join();
        }
        let exit =
            exit.map_err(|_| PtyError::Io("the PTY I/O thread stopped unexpectedly".into()))?;
        if let Some(reason) = cancelled {
            return Ok(Outcome::stopped(reason));
        }
        Ok(match exit {
            ChildExit::Code(code) => Outcome::Exited(code),
            ChildExit::Signal(signal) => Outcome::Signaled(signal),
        })
    }

    /// Stops everything the run started: the terminal's foreground group, the child's tree and
    /// session, and every process carrying the run's tag (which finds descendants that left the
    /// session with `setsid`); SIGTERM, up to [`CANCEL_GRACE`], then SIGKILL.
    async fn stop_tree(&self) {
        let foreground: Vec<u32> = self.control.foreground_group().into_iter().collect();
        self.scope
            .stop(RunRoots::Child(self.child), &foreground, CANCEL_GRACE)
            .await;
    }
}
