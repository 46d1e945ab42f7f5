//! One run of a command in a pseudo-terminal: spawning it, waiting for its end, and cancelling it.
//!
//! What a run is does not depend on the platform: the command line, environment and run tag are
//! put together here ([`spawn_reading`]), every byte the terminal produces goes to the run's
//! [`PtyOutput`] before the run's result is published, and a [`PtyControl`] ([`control`]) writes
//! input and resizes without blocking the caller. A cancel stops everything the run started (see
//! [`PtyRun::wait`]). How the terminal is opened and read is the platform's:
//! - Unix ([`unix`]): a pseudo-terminal pair; one I/O thread per run ([`io_loop`]) polls the
//!   master, reads it to its end through a [`MasterReader`] ([`reader`]; or leaves the reading to
//!   the caller's [`ReadDriver`]) and reaps the child.
//! - Windows ([`windows`]): a pseudo console (ConPTY), read by a thread of its own, written by
//!   another, and closed in the order ConPTY needs once the child has exited.

mod control;
// The Windows run's; compiled for tests everywhere, since it is plain Rust.
#[cfg(any(windows, test))]
mod delivery;
mod exit;
#[cfg(unix)]
mod io_loop;
mod output;
#[cfg(unix)]
mod reader;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::thread::JoinHandle;
use std::time::Duration;

use portable_pty::CommandBuilder;
use shellwright_proc::{
    CancelReason, CancelToken, Outcome, ProcessId, RUN_TAG_VARIABLE, RunRoots, RunScope,
};
use tokio::sync::oneshot;

pub use control::PtyControl;
use exit::ChildExit;
pub use exit::ORPHAN_DRAIN;
pub use output::PtyOutput;
#[cfg(unix)]
pub use reader::{MasterReader, ReadDriver, ReadState};
#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
use windows as platform;

use crate::{PtyCommand, PtyError};

/// How long SIGTERM gets before SIGKILL when a run is cancelled.
pub const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// Who reads a run's terminal.
#[derive(Default)]
pub enum Reading {
    /// The run's I/O thread.
    #[default]
    IoThread,
    /// The driver, on its own thread; the I/O thread writes input, reads only when the driver
    /// stalls (see [`ReadDriver`]), and ends the run. Unix only: a Windows pseudo console is read
    /// with blocking reads, which an event loop cannot watch.
    #[cfg(unix)]
    Driver(Box<dyn ReadDriver>),
}

impl std::fmt::Debug for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::IoThread => "IoThread",
            #[cfg(unix)]
            Self::Driver(_) => "Driver",
        })
    }
}

/// A spawned run; [`wait`](Self::wait) for its end.
pub struct PtyRun {
    control: PtyControl,
    child: ProcessId,
    /// Finds what the run started when it is cancelled; the tag stays claimed until then.
    scope: RunScope,
    done: oneshot::Receiver<ChildExit>,
    io_thread: Option<JoinHandle<()>>,
    /// The run's processes as one group that ends when the run does, or with the host.
    #[cfg(windows)]
    job: Option<shellwright_proc::ProcessJob>,
}

/// What the platform's start gets: the command ready to spawn, and what it needs beside it.
struct Prepared {
    builder: CommandBuilder,
    scope: RunScope,
    /// The generated shell-integration files, kept until the run ends.
    #[cfg(unix)]
    hooks: Option<crate::hooks::ShellHooks>,
}

/// Spawns `command` in a new pseudo-terminal attached to `control`; `output` receives every byte
/// the terminal produces, read by the run's I/O thread. Blocks for the spawn only.
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
    let prepared = prepare(command)?;
    platform::start(command, prepared, control, Box::new(output), reading)
}

/// The command line, working directory and environment of the run, with its tag.
fn prepare(command: &PtyCommand) -> Result<Prepared, PtyError> {
    let cwd = command.working_dir()?;
    // The generated files must outlive the shell's startup; the run keeps them until it ends.
    #[cfg(unix)]
    let hooks = match command.integration() {
        Some(integration) => Some(
            crate::hooks::ShellHooks::write(integration, command.login).map_err(|err| {
                PtyError::Spawn {
                    program: command.shell.clone(),
                    reason: format!("cannot write the shell-integration files: {err}"),
                }
            })?,
        ),
        None => None,
    };
    #[cfg(unix)]
    let argv = hooks
        .as_ref()
        .map_or_else(|| command.argv(), |hooks| hooks.argv(&command.shell));
    #[cfg(windows)]
    let argv = command.argv();
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
    #[cfg(unix)]
    if let Some(hooks) = &hooks {
        for (key, value) in hooks.env(command.user_zdotdir()) {
            builder.env(key, value);
        }
    }
    // Set last, so that the run's processes can always be found by it.
    let scope = RunScope::begin();
    builder.env(RUN_TAG_VARIABLE, scope.tag());
    Ok(Prepared {
        builder,
        scope,
        #[cfg(unix)]
        hooks,
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
    /// session with `setsid`); SIGTERM, up to [`CANCEL_GRACE`], then SIGKILL. On Windows the
    /// run's job ends first, with whatever joined it wherever it went in the tree.
    async fn stop_tree(&self) {
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.terminate();
        }
        let foreground: Vec<u32> = self.control.foreground_group().into_iter().collect();
        self.scope
            .stop(RunRoots::Child(self.child), &foreground, CANCEL_GRACE)
            .await;
    }
}
