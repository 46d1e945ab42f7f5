//! The I/O thread of one run: it polls the master side, the child (through a pidfd on Linux) and
//! the wake pipe; reads the terminal to its end, handing every byte to the [`PtyOutput`] in order;
//! writes queued input when the master becomes writable; and reaps the child.
//!
//! The read ends at end of input (EIO, when the last holder of the slave side closes it), or
//! [`ORPHAN_DRAIN`] after the child exited when processes that outlive it keep the slave open.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use portable_pty::Child;
use shellwright_io::{PollFd, WakeReceiver, poll};

use super::control::PtyControl;
use super::{ORPHAN_DRAIN, PtyOutput};
use crate::hooks::BashHooks;

/// The most bytes one delivery to the output carries. A fast stream keeps the master readable, so
/// a read loop fills the whole buffer before it delivers; each delivery costs the emulator a fixed
/// amount on top of its bytes (it emulates the tail of what it skips), so larger batches cost less
/// CPU per MB. In bench/pty.bench.mjs, 256 KiB took about a quarter less CPU per MB than 64 KiB in
/// raw mode and no more in cooked mode (128 KiB was no better than 64 KiB), and a delivery per
/// read (≤ 4 KiB) three times as much.
const READ_BUFFER: usize = 256 * 1024;
/// A first read shorter than this is delivered at once and the loop goes back to its poll: it is
/// most likely all there is (an echo, a prompt), and the read that would find nothing more is not
/// made at all (when the JS thread shares the reader's CPU, it runs only once the reader sleeps;
/// the poll is level-triggered, so it returns at once if more came). A stream's first reads are
/// larger (the terminal buffers up to 4 KiB while the loop is away), so they keep gathering.
const EAGER_DELIVERY: usize = 512;
/// Without a pidfd, the child's exit is looked for this often.
const REAP_INTERVAL: Duration = Duration::from_millis(10);

/// The child's end, as the kernel reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChildExit {
    Code(i32),
    Signal(i32),
}

/// The I/O thread's state: the master side, the wake pipe, the child and the output.
pub(super) struct IoLoop {
    /// The master side, owned by the [`PtyControl`] until this loop closes it at its end.
    pub(super) fd: RawFd,
    pub(super) wake: WakeReceiver,
    /// Becomes readable when the child exits (Linux); `None` elsewhere or once reaped.
    pub(super) pidfd: Option<OwnedFd>,
    pub(super) child: Box<dyn Child + Send + Sync>,
    pub(super) control: PtyControl,
    pub(super) output: Box<dyn PtyOutput>,
    /// The interactive bash's generated rcfile, removed when the run ends.
    pub(super) hooks: Option<BashHooks>,
}

enum ReadState {
    Open,
    Ended,
}

/// What one poll reported.
struct Events {
    master_readable: bool,
    master_writable: bool,
    woken: bool,
    child_exited: bool,
}

impl IoLoop {
    /// Runs until the terminal's output has been read to its end and the child reaped; returns
    /// how the child ended.
    pub(super) fn run(mut self) -> ChildExit {
        let mut buffer = vec![0u8; READ_BUFFER];
        let mut exit = None;
        // Set when the child exits: the read ends by then even if orphans keep the slave open.
        let mut drain_deadline: Option<Instant> = None;
        loop {
            let events = self.poll(exit.is_some(), drain_deadline);
            if events.master_readable
                && matches!(self.read_available(&mut buffer), ReadState::Ended)
            {
                break;
            }
            if events.master_writable {
                self.control.lock().flush_input();
            }
            if events.woken {
                self.wake.drain();
            }
            if exit.is_none()
                && (events.child_exited || self.pidfd.is_none())
                && let Ok(Some(child_exit)) = child_exit(self.child.as_mut(), false)
            {
                exit = Some(child_exit);
                self.pidfd = None;
                drain_deadline = Some(Instant::now() + ORPHAN_DRAIN);
            }
            if drain_deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                break;
            }
        }
        // End of input may come first: the child closed the terminal and is exiting (or will be
        // stopped by a cancel).
        let exit = exit.unwrap_or_else(|| match child_exit(self.child.as_mut(), true) {
            Ok(Some(exit)) => exit,
            _ => ChildExit::Code(1),
        });
        self.output.finish();
        self.control.close();
        drop(self.hooks.take());
        exit
    }

    fn master(&self) -> BorrowedFd<'_> {
        // SAFETY: the master stays open in the control until `run` closes it after the loop.
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }

    /// Waits for the next event.
    fn poll(&self, reaped: bool, drain_deadline: Option<Instant>) -> Events {
        let wants_write = !self.control.lock().pending.is_empty();
        let master_events = libc::POLLIN | if wants_write { libc::POLLOUT } else { 0 };
        let mut fds = [
            PollFd::new(Some(self.master()), master_events),
            PollFd::readable(Some(self.wake.as_fd())),
            PollFd::readable(self.pidfd.as_ref().map(AsFd::as_fd)),
        ];
        let timeout = match drain_deadline {
            Some(deadline) => Some(deadline.saturating_duration_since(Instant::now())),
            None if self.pidfd.is_none() && !reaped => Some(REAP_INTERVAL),
            None => None,
        };
        if poll(&mut fds, timeout).unwrap_or(0) == 0 {
            return Events {
                master_readable: false,
                master_writable: false,
                woken: false,
                child_exited: false,
            };
        }
        Events {
            master_readable: fds[0].is_readable(),
            master_writable: fds[0].is_writable(),
            woken: fds[1].is_readable(),
            child_exited: fds[2].revents() != 0,
        }
    }

    /// Reads until the terminal has nothing more for now (`Open`) or has ended (`Ended`).
    /// Bytes that are already available are gathered into one chunk (up to the buffer's size),
    /// which saves the consumer per-chunk overhead; a short first read goes on at once and ends
    /// the round ([`EAGER_DELIVERY`]).
    fn read_available(&mut self, buffer: &mut [u8]) -> ReadState {
        let mut filled = 0;
        let mut first = true;
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
                if first && filled < EAGER_DELIVERY {
                    break ReadState::Open;
                }
                first = false;
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
    /// emulator and the consumer), in order, before anything else happens.
    fn deliver(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.output.bytes(bytes);
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
