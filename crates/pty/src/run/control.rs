//! [`PtyControl`]: the caller's side of a run — input, resize and the foreground group — usable
//! from any thread before the child is spawned and while it runs.
//!
//! Input never blocks the caller. On Unix, what the terminal does not take at once is queued in
//! the [`MasterSide`] and written by the I/O thread when the master becomes writable (it is woken
//! through the run's wake pipe). On Windows it goes to the run's input thread, which writes it to
//! the pseudo console's input pipe.

#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::os::fd::RawFd;
#[cfg(unix)]
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
#[cfg(unix)]
use std::time::{Duration, Instant};

use portable_pty::{MasterPty, PtySize};
#[cfg(unix)]
use shellwright_io::Waker;
use shellwright_io::lock;

#[cfg(unix)]
use super::reader::MasterReader;
use crate::input::InputState;
#[cfg(unix)]
use crate::input::{self, TerminalFacts};
use crate::{PtyError, TermSize};

/// How long input written to the terminal may take to reach a program asleep in a read (the
/// kernel moves it through the line discipline on a worker of its own, microseconds later on an
/// idle machine).
#[cfg(unix)]
const INPUT_SETTLE: Duration = Duration::from_millis(30);

/// Input, resize and process-group access for one run; cloneable and usable from any thread,
/// before the child is spawned (input is queued, the size is remembered) and while it runs.
#[derive(Clone, Default)]
pub struct PtyControl {
    shared: Arc<Mutex<MasterSide>>,
}

/// The master side of the run's pseudo-terminal as the control and the I/O thread share it.
#[derive(Default)]
pub(super) struct MasterSide {
    pub(super) size: TermSize,
    /// Input the terminal has not taken yet.
    pub(super) pending: Vec<u8>,
    /// The master side while the run is live.
    pub(super) master: Option<Box<dyn MasterPty + Send>>,
    /// Wakes the I/O thread while the run is live.
    #[cfg(unix)]
    pub(super) wake: Option<Waker>,
    /// Hands input to the run's input thread while the run is live.
    #[cfg(windows)]
    input: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    /// The child's pid, once spawned.
    pub(super) child: Option<u32>,
    /// The terminal's slave side, once spawned.
    #[cfg(unix)]
    slave: Option<PathBuf>,
    /// The run's reader while it is live, so that a look at the terminal can wait until no chunk
    /// is between a read and the terminal model. Cleared at the end (it holds this control).
    #[cfg(unix)]
    reader: Option<MasterReader>,
    /// When input was last written and the program has not been seen busy since: the kernel
    /// hands it to the program a moment later, so until then a program asleep in a read may
    /// only not have been woken yet.
    #[cfg(unix)]
    unconsumed_input: Option<Instant>,
    pub(super) finished: bool,
}

#[cfg(unix)]
impl MasterSide {
    fn master_fd(&self) -> Option<RawFd> {
        self.master.as_ref()?.as_raw_fd()
    }

    /// Writes queued input without blocking; returns whether some is still queued.
    pub(super) fn flush_input(&mut self) -> bool {
        let Some(fd) = self.master_fd() else {
            return !self.pending.is_empty();
        };
        while !self.pending.is_empty() {
            // SAFETY: `fd` is the open master; the buffer is valid for its length.
            let n = unsafe { libc::write(fd, self.pending.as_ptr().cast(), self.pending.len()) };
            if n > 0 {
                self.pending.drain(..n as usize);
                self.unconsumed_input = Some(Instant::now());
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

    /// A program seen waiting right after input was written may not have been handed the input
    /// yet: it counts as waiting only once it has been seen busy since (it took the input), or
    /// [`INPUT_SETTLE`] has passed (the input did not wake it: a partial line, a key it ignores).
    fn settle_input(&mut self, state: &mut InputState) {
        let Some(written) = self.unconsumed_input else {
            return;
        };
        if !state.waiting {
            self.unconsumed_input = None;
        } else if written.elapsed() < INPUT_SETTLE {
            state.waiting = false;
        } else {
            self.unconsumed_input = None;
        }
    }

    fn wake_io_thread(&self) {
        if let Some(wake) = &self.wake {
            wake.wake();
        }
    }
}

#[cfg(windows)]
impl MasterSide {
    /// Hands queued input to the input thread; nothing stays queued (returns false).
    pub(super) fn flush_input(&mut self) -> bool {
        if let Some(input) = &self.input
            && !self.pending.is_empty()
        {
            // The thread is gone only when the pseudo console's input has closed: nobody will
            // read this input.
            let _ = input.send(std::mem::take(&mut self.pending));
        }
        self.pending.clear();
        false
    }

    /// Input is never left queued on Windows: there is no I/O thread to wake for it.
    fn wake_io_thread(&self) {}
}

impl PtyControl {
    /// A control for a run that has not started, with the terminal size it will get.
    pub fn new(size: TermSize) -> Self {
        let control = Self::default();
        control.lock().size = size;
        control
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, MasterSide> {
        // A panic while holding the lock cannot leave the state inconsistent (plain fields).
        lock(&self.shared)
    }

    /// Sends `data` to the terminal's input without blocking.
    pub fn write(&self, data: &[u8]) -> Result<(), PtyError> {
        let mut side = self.lock();
        if side.finished {
            return Err(PtyError::NotRunning);
        }
        let was_idle = side.pending.is_empty();
        side.pending.extend_from_slice(data);
        if was_idle && side.flush_input() {
            side.wake_io_thread();
        }
        Ok(())
    }

    /// Resizes the terminal (the child gets SIGWINCH); a resize the terminal refuses keeps the
    /// size it had.
    pub fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        let mut side = self.lock();
        if side.finished {
            return Err(PtyError::NotRunning);
        }
        if let Some(master) = &side.master {
            master
                .resize(pty_size(size))
                .map_err(|err| PtyError::Resize(err.to_string()))?;
        }
        side.size = size;
        Ok(())
    }

    pub fn size(&self) -> TermSize {
        self.lock().size
    }

    /// The child's pid while the run is live.
    pub fn pid(&self) -> Option<u32> {
        let side = self.lock();
        side.child.filter(|_| !side.finished)
    }

    /// Whether the program waits for input (see [`crate::input`]); the default (not waiting)
    /// once the run has ended or before it has spawned. The prompt is left to the terminal model.
    #[cfg(unix)]
    pub(crate) fn input_state(&self) -> InputState {
        let Some(reader) = self.lock().reader.clone() else {
            return InputState::default();
        };
        // The reader's lock first, as the reader takes it before this control's: while it is
        // held, every byte read has been through the terminal model.
        reader
            .quiescent(|| {
                let mut side = self.lock();
                let facts = TerminalFacts {
                    master: side.master_fd().filter(|_| !side.finished)?,
                    child: side.child?,
                    slave: side.slave.clone()?,
                };
                let mut state = input::probe(&facts);
                side.settle_input(&mut state);
                Some(state)
            })
            .unwrap_or_default()
    }

    /// Windows cannot tell whether a console program waits for input: the state says so
    /// ([`InputState::known`] is false), and waiters watch for a quiet period instead.
    #[cfg(windows)]
    pub(crate) fn input_state(&self) -> InputState {
        InputState::default()
    }

    /// The terminal's foreground process group (`tcgetpgrp` on the master); none on Windows.
    pub fn foreground_group(&self) -> Option<u32> {
        #[cfg(unix)]
        {
            let side = self.lock();
            let leader = side.master.as_ref()?.process_group_leader()?;
            u32::try_from(leader).ok()
        }
        #[cfg(windows)]
        None
    }

    /// Wakes the run's I/O thread (to look at the reader's state).
    #[cfg(unix)]
    pub(super) fn wake_io_thread(&self) {
        self.lock().wake_io_thread();
    }

    /// Whether the run has ended (the terminal is closed).
    pub fn is_finished(&self) -> bool {
        self.lock().finished
    }

    /// Attaches the spawned terminal: applies a resize that came while it was being opened,
    /// and sends input queued before the spawn.
    pub(super) fn attach(&self, spawned: Spawned) {
        let mut side = self.lock();
        if side.size != spawned.size {
            let _ = spawned.master.resize(pty_size(side.size));
        }
        #[cfg(unix)]
        {
            side.slave = spawned.master.tty_name();
            side.wake = Some(spawned.wake);
            side.reader = Some(spawned.reader);
        }
        #[cfg(windows)]
        {
            side.input = Some(spawned.input);
        }
        side.master = Some(spawned.master);
        side.child = Some(spawned.child);
        side.flush_input();
    }

    /// Marks the run finished and releases the terminal.
    pub(super) fn close(&self) {
        let mut side = self.lock();
        side.finished = true;
        side.pending.clear();
        #[cfg(unix)]
        {
            side.master = None;
            side.wake = None;
            side.reader = None;
        }
        #[cfg(windows)]
        {
            // The input first: the input thread ends and closes the console's input pipe.
            side.input = None;
            if let Some(master) = side.master.take() {
                // Closing a pseudo console waits for its host to finish writing, which older
                // Windows does until the output pipe is read; the run's reader may be the thread
                // that called this.
                let _ = std::thread::Builder::new()
                    .name("shellwright-conpty-close".into())
                    .spawn(move || drop(master));
            }
        }
    }
}

/// What [`PtyControl::attach`] takes over from the spawn.
pub(super) struct Spawned {
    pub master: Box<dyn MasterPty + Send>,
    /// The size the terminal was opened with.
    pub size: TermSize,
    #[cfg(unix)]
    pub wake: Waker,
    #[cfg(windows)]
    pub input: std::sync::mpsc::Sender<Vec<u8>>,
    pub child: u32,
    #[cfg(unix)]
    pub reader: MasterReader,
}

pub(super) fn pty_size(size: TermSize) -> PtySize {
    PtySize {
        rows: size.rows(),
        cols: size.cols(),
        pixel_width: 0,
        pixel_height: 0,
    }
}
