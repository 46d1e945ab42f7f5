//! One run of a command in a pseudo-terminal: spawn, the I/O thread, and cancellation.
//!
//! Each run owns one I/O thread that polls the master side, the child (through a pidfd on Linux)
//! and a wake pipe. It reads to end of input (EIO, when the last holder of the slave side closes
//! it), so every byte the child wrote is handed to the [`PtyOutput`] before the run's result is
//! published. Processes that outlive the child and keep the slave open get
//! [`ORPHAN_DRAIN`] before the read stops. Input written through [`PtyControl`] is sent without
//! blocking the caller: what the terminal does not take at once is queued and written by the I/O
//! thread when the master becomes writable.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use shellwright_proc::{
    CancelReason, CancelToken, ProcessId, ProcessTable, is_alive, process_info, send_signal,
    signal_group, signal_name,
};
use tokio::sync::oneshot;

use crate::hooks::BashHooks;
use crate::{PtyCommand, PtyError, TermSize};

/// How long processes that outlive the child may keep the terminal open before the read ends.
pub const ORPHAN_DRAIN: Duration = Duration::from_secs(1);
/// How long SIGTERM gets before SIGKILL when a run is cancelled.
pub const CANCEL_GRACE: Duration = Duration::from_millis(500);

const READ_BUFFER: usize = 64 * 1024;

/// Receives the terminal's output on the I/O thread, in order.
pub trait PtyOutput: Send + 'static {
    /// Every byte read from the terminal, in arrival order.
    fn bytes(&mut self, chunk: &[u8]);
    /// Called once after the last read, before the run's result is published.
    fn finish(&mut self) {}
}

impl<F: FnMut(&[u8]) + Send + 'static> PtyOutput for F {
    fn bytes(&mut self, chunk: &[u8]) {
        self(chunk)
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtyExit {
    /// The exit status; 128+N for a death by signal N. `None` after a cancel or timeout.
    pub exit_code: Option<i32>,
    /// The signal's name (`"SIGKILL"`) when the child died by a signal and was not cancelled.
    pub signal: Option<String>,
    pub cancelled: bool,
    pub timed_out: bool,
}

/// Input, resize and process-group access for one run; cloneable and usable from any thread,
/// before the child is spawned (input is queued, the size is remembered) and while it runs.
#[derive(Clone, Default)]
pub struct PtyControl {
    shared: Arc<Mutex<Terminal>>,
}

#[derive(Default)]
struct Terminal {
    size: TermSize,
    /// Input the terminal has not taken yet.
    pending: Vec<u8>,
    /// The master side while the run is live.
    master: Option<Box<dyn MasterPty + Send>>,
    /// The write end of the I/O thread's wake pipe while the run is live.
    wake: Option<OwnedFd>,
    finished: bool,
}

impl Terminal {
    fn master_fd(&self) -> Option<RawFd> {
        self.master.as_ref()?.as_raw_fd()
    }

    /// Writes queued input without blocking; returns whether some is still queued.
    fn flush_input(&mut self) -> bool {
        let Some(fd) = self.master_fd() else {
            return !self.pending.is_empty();
        };
        while !self.pending.is_empty() {
            // SAFETY: `fd` is the open master; the buffer is valid for its length.
            let n = unsafe { libc::write(fd, self.pending.as_ptr().cast(), self.pending.len()) };
            if n > 0 {
                self.pending.drain(..n as usize);
                continue;
            }
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return true,
                // The terminal is gone (EIO): nobody will read this input.
                _ => {
                    self.pending.clear();
                    return false;
                }
            }
        }
        false
    }

    fn wake_io_thread(&self) {
        if let Some(wake) = &self.wake {
            // SAFETY: writing one byte from a valid buffer to an open pipe. A full pipe
            // (EAGAIN) already guarantees a wake-up, so the result does not matter.
            unsafe { libc::write(wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
    }
}

impl PtyControl {
    /// A control for a run that has not started, with the terminal size it will get.
    pub fn new(size: TermSize) -> Self {
        let control = Self::default();
        control.lock().size = size;
        control
    }

    fn lock(&self) -> MutexGuard<'_, Terminal> {
        // A panic while holding the lock cannot leave the state inconsistent (plain fields).
        self.shared
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Sends `data` to the terminal's input without blocking.
    pub fn write(&self, data: &[u8]) -> Result<(), PtyError> {
        let mut terminal = self.lock();
        if terminal.finished {
            return Err(PtyError::NotRunning);
        }
        let was_idle = terminal.pending.is_empty();
        terminal.pending.extend_from_slice(data);
        if was_idle && terminal.flush_input() {
            terminal.wake_io_thread();
        }
        Ok(())
    }

    /// Resizes the terminal (the child gets SIGWINCH).
    pub fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        let mut terminal = self.lock();
        if terminal.finished {
            return Err(PtyError::NotRunning);
        }
        terminal.size = size;
        if let Some(master) = &terminal.master {
            master
                .resize(pty_size(size))
                .map_err(|err| PtyError::Resize(err.to_string()))?;
        }
        Ok(())
    }

    pub fn size(&self) -> TermSize {
        self.lock().size
    }

    /// The terminal's foreground process group (`tcgetpgrp` on the master).
    pub fn foreground_group(&self) -> Option<u32> {
        let terminal = self.lock();
        let leader = terminal.master.as_ref()?.process_group_leader()?;
        u32::try_from(leader).ok()
    }

    /// Whether the run has ended (the terminal is closed).
    pub fn is_finished(&self) -> bool {
        self.lock().finished
    }
}

fn pty_size(size: TermSize) -> PtySize {
    PtySize {
        rows: size.rows(),
        cols: size.cols(),
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// A spawned run; [`wait`](Self::wait) for its end.
pub struct PtyRun {
    control: PtyControl,
    child: ProcessId,
    done: oneshot::Receiver<ChildExit>,
    io_thread: Option<JoinHandle<()>>,
}

/// Spawns `command` in a new pseudo-terminal attached to `control`; `output` receives every byte
/// the terminal produces. Blocks for the fork/exec only.
pub fn spawn(
    command: &PtyCommand,
    control: &PtyControl,
    output: impl PtyOutput,
) -> Result<PtyRun, PtyError> {
    command.validate()?;
    let cwd = command.working_dir()?;
    let size = control.size();
    let pair = native_pty_system()
        .openpty(pty_size(size))
        .map_err(|err| PtyError::Open(err.to_string()))?;
    // The rcfile must outlive bash's startup; the I/O thread keeps it until the run ends.
    let hooks = if command.wants_bash_hooks() {
        let hooks = BashHooks::write(command.login).map_err(|err| PtyError::Spawn {
            program: command.shell.clone(),
            reason: format!("cannot write the shell-integration rcfile: {err}"),
        })?;
        Some(hooks)
    } else {
        None
    };
    let argv = hooks
        .as_ref()
        .map_or_else(|| command.argv(), |hooks| hooks.argv(&command.shell));
    let mut builder = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
    builder.cwd(&cwd);
    let user_sets_term = command.env.iter().any(|(key, _)| key == "TERM");
    if !user_sets_term && std::env::var_os("TERM").is_none() {
        builder.env("TERM", "xterm-256color");
    }
    for (key, value) in &command.env {
        builder.env(key, value);
    }
    let child = pair
        .slave
        .spawn_command(builder)
        .map_err(|err| PtyError::Spawn {
            program: command.shell.clone(),
            reason: err.to_string(),
        })?;
    // Only the child may hold the slave side, so that its exit ends the read with EIO.
    drop(pair.slave);
    let master = pair.master;
    let master_fd = master
        .as_raw_fd()
        .ok_or_else(|| PtyError::Open("no master fd".into()))?;
    set_nonblocking(master_fd).map_err(|err| PtyError::Open(err.to_string()))?;
    let (wake_read, wake_write) = wake_pipe().map_err(|err| PtyError::Open(err.to_string()))?;

    let pid = child.process_id().unwrap_or_default();
    // The child is not reaped before the I/O thread reaps it, so its pid cannot be reused yet.
    let child_id = process_info(pid).map_or(ProcessId { pid, start_time: 0 }, |info| info.id);
    let pidfd = open_pidfd(pid);
    {
        let mut terminal = control.lock();
        // A resize that came while the terminal was being opened found no master to apply to.
        if terminal.size != size {
            let _ = master.resize(pty_size(terminal.size));
        }
        terminal.master = Some(master);
        terminal.wake = Some(wake_write);
        terminal.flush_input();
    }
    let (done_tx, done) = oneshot::channel();
    let io = IoLoop {
        fd: master_fd,
        wake: wake_read,
        pidfd,
        child,
        control: control.clone(),
        output: Box::new(output),
        exit: None,
        drain_deadline: None,
        _hooks: hooks,
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
                program: command.shell.clone(),
                reason: format!("cannot start the I/O thread: {err}"),
            });
        }
    };
    Ok(PtyRun {
        control: control.clone(),
        child: child_id,
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
) -> Result<PtyExit, PtyError> {
    if let Some(reason) = cancel.reason() {
        control.close();
        return Ok(cancelled_exit(reason));
    }
    let spawn_control = control.clone();
    let spawned = tokio::task::spawn_blocking(move || spawn(&command, &spawn_control, output))
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

impl PtyControl {
    /// Marks the run finished and releases the terminal.
    fn close(&self) {
        let mut terminal = self.lock();
        terminal.finished = true;
        terminal.pending.clear();
        terminal.master = None;
        terminal.wake = None;
    }
}

fn cancelled_exit(reason: CancelReason) -> PtyExit {
    PtyExit {
        exit_code: None,
        signal: None,
        cancelled: reason == CancelReason::Aborted,
        timed_out: reason == CancelReason::TimedOut,
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
    /// its end. When `cancel` fires first, stops the terminal's foreground process group and the
    /// child's tree (SIGTERM, up to [`CANCEL_GRACE`], SIGKILL) and reports the cancel.
    pub async fn wait(mut self, cancel: &CancelToken) -> Result<PtyExit, PtyError> {
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
    ) -> Result<PtyExit, PtyError> {
        if let Some(thread) = self.io_thread.take() {
            // The thread sent its result as its last act, so this join is immediate.
            let _ = thread.join();
        }
        let exit =
            exit.map_err(|_| PtyError::Io("the PTY I/O thread stopped unexpectedly".into()))?;
        if let Some(reason) = cancelled {
            return Ok(cancelled_exit(reason));
        }
        Ok(match exit {
            ChildExit::Code(code) => PtyExit {
                exit_code: Some(code),
                signal: None,
                cancelled: false,
                timed_out: false,
            },
            ChildExit::Signal(signal) => PtyExit {
                exit_code: Some(128 + signal),
                signal: Some(
                    signal_name(signal).map_or_else(|| format!("SIG{signal}"), str::to_string),
                ),
                cancelled: false,
                timed_out: false,
            },
        })
    }

    /// SIGTERM to the foreground group and the child's tree, a grace of at most
    /// [`CANCEL_GRACE`], then SIGKILL to whatever remains.
    async fn stop_tree(&self) {
        let targets = tree_children_first(self.child);
        let signal_all = |signal| {
            if let Some(group) = self.control.foreground_group() {
                signal_group(group, signal);
            }
            for id in &targets {
                send_signal(*id, signal);
            }
        };
        signal_all(libc::SIGTERM);
        let deadline = Instant::now() + CANCEL_GRACE;
        while Instant::now() < deadline {
            let group_left = self
                .control
                .foreground_group()
                .is_some_and(|group| signal_group(group, 0));
            if !group_left && !targets.iter().any(|id| is_alive(*id)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        signal_all(libc::SIGKILL);
    }
}

/// `root`'s running descendants, deepest first, then `root` itself when it still runs.
fn tree_children_first(root: ProcessId) -> Vec<ProcessId> {
    let table = ProcessTable::snapshot();
    if !table
        .get(root.pid)
        .is_some_and(|p| p.id == root && !p.zombie)
    {
        return Vec::new();
    }
    let mut targets: Vec<ProcessId> = table
        .descendants(root.pid)
        .into_iter()
        .rev()
        .filter(|p| !p.zombie)
        .map(|p| p.id)
        .collect();
    targets.push(root);
    targets
}

/// The child's end, as the kernel reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChildExit {
    Code(i32),
    Signal(i32),
}

/// The I/O thread's state: the master side, the wake pipe, the child and the output.
struct IoLoop {
    fd: RawFd,
    wake: OwnedFd,
    /// Becomes readable when the child exits (Linux); `None` elsewhere or once reaped.
    pidfd: Option<OwnedFd>,
    child: Box<dyn Child + Send + Sync>,
    control: PtyControl,
    output: Box<dyn PtyOutput>,
    exit: Option<ChildExit>,
    /// Set when the child exits: the read ends by then even if orphans keep the slave open.
    drain_deadline: Option<Instant>,
    /// The interactive bash's generated rcfile, removed when the run ends.
    _hooks: Option<BashHooks>,
}

enum ReadState {
    Open,
    Ended,
}

impl IoLoop {
    fn run(mut self) -> ChildExit {
        let mut buffer = vec![0u8; READ_BUFFER];
        loop {
            let (master, wake, pidfd) = self.poll();
            if master & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
                && matches!(self.read_available(&mut buffer), ReadState::Ended)
            {
                break;
            }
            if master & libc::POLLOUT != 0 {
                self.control.lock().flush_input();
            }
            if wake & libc::POLLIN != 0 {
                drain_pipe(self.wake.as_raw_fd());
            }
            if self.exit.is_none() && (pidfd || self.pidfd.is_none()) {
                self.try_reap();
            }
            if self
                .drain_deadline
                .is_some_and(|deadline| Instant::now() >= deadline)
            {
                break;
            }
        }
        let exit = match self.exit {
            Some(exit) => exit,
            // End of input came first: the child closed the terminal and is exiting (or will be
            // stopped by a cancel).
            None => self.reap_blocking(),
        };
        self.output.finish();
        self.control.close();
        exit
    }

    /// Waits for the next event; returns the master's events, the wake pipe's and whether the
    /// pidfd fired.
    fn poll(&self) -> (libc::c_short, libc::c_short, bool) {
        let wants_write = !self.control.lock().pending.is_empty();
        let mut fds = [
            poll_fd(
                self.fd,
                libc::POLLIN | if wants_write { libc::POLLOUT } else { 0 },
            ),
            poll_fd(self.wake.as_raw_fd(), libc::POLLIN),
            poll_fd(
                self.pidfd.as_ref().map_or(-1, AsRawFd::as_raw_fd),
                libc::POLLIN,
            ),
        ];
        let timeout_ms = match self.drain_deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                left.as_millis().min(i32::MAX as u128) as i32 + 1
            }
            // Without a pidfd, look for the child's exit every 10 ms.
            None if self.pidfd.is_none() && self.exit.is_none() => 10,
            None => -1,
        };
        // SAFETY: `fds` is a valid array of pollfd for its length; negative fds are ignored.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if ready <= 0 {
            return (0, 0, false);
        }
        (fds[0].revents, fds[1].revents, fds[2].revents != 0)
    }

    /// Reads until the terminal has nothing more for now (`Open`) or has ended (`Ended`).
    /// Bytes that are already available are gathered into one chunk (up to the buffer's size),
    /// which costs no latency and saves the consumer per-chunk overhead.
    fn read_available(&mut self, buffer: &mut [u8]) -> ReadState {
        let mut filled = 0;
        let state = loop {
            if filled == buffer.len() {
                self.deliver(&buffer[..filled]);
                filled = 0;
            }
            let free = &mut buffer[filled..];
            // SAFETY: reading into a valid buffer of its length from the open master.
            let n = unsafe { libc::read(self.fd, free.as_mut_ptr().cast(), free.len()) };
            if n > 0 {
                filled += n as usize;
                continue;
            }
            if n == 0 {
                break ReadState::Ended;
            }
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => break ReadState::Open,
                // EIO: every holder of the slave side has closed it.
                _ => break ReadState::Ended,
            }
        };
        self.deliver(&buffer[..filled]);
        state
    }

    /// The one place the terminal's bytes flow: everything read goes to the output (the
    /// emulator, then the consumer), in order, before anything else happens.
    fn deliver(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.output.bytes(bytes);
        }
    }

    fn try_reap(&mut self) {
        if let Ok(Some(exit)) = child_exit(self.child.as_mut(), false) {
            self.exit = Some(exit);
            self.pidfd = None;
            self.drain_deadline = Some(Instant::now() + ORPHAN_DRAIN);
        }
    }

    fn reap_blocking(&mut self) -> ChildExit {
        match child_exit(self.child.as_mut(), true) {
            Ok(Some(exit)) => exit,
            _ => ChildExit::Code(1),
        }
    }
}

/// The child's exit status; `block` waits for it.
fn child_exit(child: &mut dyn Child, block: bool) -> io::Result<Option<ChildExit>> {
    // portable-pty spawns a std child on Unix; its status keeps the signal number, which
    // portable-pty's own ExitStatus reduces to a description.
    if let Some(std_child) = child.downcast_mut::<std::process::Child>() {
        use std::os::unix::process::ExitStatusExt;
        let status = if block {
            Some(std_child.wait()?)
        } else {
            std_child.try_wait()?
        };
        return Ok(status.map(|status| match (status.code(), status.signal()) {
            (Some(code), _) => ChildExit::Code(code),
            (None, Some(signal)) => ChildExit::Signal(signal),
            (None, None) => ChildExit::Code(1),
        }));
    }
    let status = if block {
        Some(child.wait()?)
    } else {
        child.try_wait()?
    };
    Ok(status.map(|status| ChildExit::Code(i32::try_from(status.exit_code()).unwrap_or(1))))
}

fn poll_fd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an open fd with integer arguments.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A non-blocking, close-on-exec pipe: (read end, write end).
fn wake_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe writes two fds into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in [&read, &write] {
        set_nonblocking(fd.as_raw_fd())?;
        // SAFETY: fcntl on an open fd.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((read, write))
}

fn drain_pipe(fd: RawFd) {
    let mut sink = [0u8; 64];
    // SAFETY: reading into a valid buffer from an open non-blocking pipe.
    while unsafe { libc::read(fd, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
}

/// A pidfd for `pid` (Linux 5.3+), readable once the process exits.
#[cfg(target_os = "linux")]
fn open_pidfd(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes integers and returns a new fd (close-on-exec by default).
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative result is a new fd that nobody else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[cfg(not(target_os = "linux"))]
fn open_pidfd(_pid: u32) -> Option<OwnedFd> {
    None
}
