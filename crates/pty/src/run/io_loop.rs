//! The I/O thread of one run: it polls the master side, the child (through a pidfd on Linux) and
//! the wake pipe; reads the terminal to its end through the run's [`MasterReader`] (unless a
//! [`ReadDriver`] reads it from its own event loop); writes queued input when the master becomes
//! writable; and reaps the child.
//!
//! Behind a driver it keeps a backstop ([`Backstop`]): when the terminal has stayed readable for
//! [`DRIVER_STALL`] without the driver reading (its event loop is busy with other work), this
//! thread reads until the driver reads again, so a busy event loop never stops the program.
//!
//! The read ends at end of input (EIO, when the last holder of the slave side closes it), or
//! [`ORPHAN_DRAIN`] after the child exited when processes that outlive it keep the slave open.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use portable_pty::Child;
use shellwright_io::{PollFd, WakeReceiver, poll};

use super::control::PtyControl;
use super::exit::{ChildExit, ORPHAN_DRAIN, child_exit};
use super::reader::{MasterReader, ReadDriver, ReadState};
use crate::hooks::ShellHooks;

/// Without a pidfd, the child's exit is looked for this often.
const REAP_INTERVAL: Duration = Duration::from_millis(10);
/// How long the terminal may stay readable without the driver reading before this thread reads.
/// Long enough that a driver keeping up is never overtaken (and this thread wakes at most twice
/// per period while output flows), short enough that a stalled one costs the program little.
const DRIVER_STALL: Duration = Duration::from_millis(10);

/// The I/O thread's watch over a driver (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(super) enum Backstop {
    /// Waits for the terminal to become readable.
    Watching,
    /// The terminal became readable when the driver had read `reads` times; by `until` it should
    /// have read again.
    Waiting { reads: u64, until: Instant },
    /// The driver stalled at `reads`: this thread reads until the driver does.
    Covering { reads: u64 },
}

/// The I/O thread's state: the master side, the wake pipe, the child and the reader.
pub(super) struct IoLoop {
    /// The master side, owned by the [`PtyControl`] until this loop closes it at its end.
    pub(super) fd: RawFd,
    pub(super) wake: WakeReceiver,
    /// Becomes readable when the child exits (Linux); `None` elsewhere or once reaped.
    pub(super) pidfd: Option<OwnedFd>,
    pub(super) child: Box<dyn Child + Send + Sync>,
    pub(super) control: PtyControl,
    pub(super) reader: MasterReader,
    /// Reads the terminal instead of this loop, when the caller gave one that took the reader.
    pub(super) driver: Option<Box<dyn ReadDriver>>,
    pub(super) backstop: Backstop,
    /// The interactive bash's generated rcfile, removed when the run ends.
    pub(super) hooks: Option<ShellHooks>,
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
        let mut exit = None;
        // Set when the child exits: the read ends by then even if orphans keep the slave open.
        let mut drain_deadline: Option<Instant> = None;
        loop {
            let events = self.poll(exit.is_some(), drain_deadline);
            if self.read(events.master_readable) == ReadState::Ended {
                break;
            }
            if events.master_writable {
                self.control.lock().flush_input();
            }
            if events.woken {
                self.wake.drain();
                // The driver wakes this loop when it has read the end.
                if self.reader.is_ended() {
                    break;
                }
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
        self.reader.end();
        if let Some(driver) = &self.driver {
            // It may have seen the end itself; stopping twice is harmless.
            driver.stop();
        }
        self.control.close();
        drop(self.hooks.take());
        exit
    }

    /// Reads when this thread is the reader, or backs the driver up (see [`Backstop`]).
    fn read(&mut self, readable: bool) -> ReadState {
        if self.driver.is_none() {
            return if readable {
                self.reader.read_until_empty()
            } else {
                ReadState::Open
            };
        }
        let reads = self.reader.driver_reads();
        let (backstop, read) = match self.backstop {
            Backstop::Watching if readable => (
                Backstop::Waiting {
                    reads,
                    until: Instant::now() + DRIVER_STALL,
                },
                false,
            ),
            // Still readable, and the driver has not read: it has stalled. (Not readable: the
            // driver read it all, and may have had nothing to read since.)
            Backstop::Waiting {
                reads: before,
                until,
            } if Instant::now() >= until => {
                if reads == before && self.master_readable_now() {
                    (Backstop::Covering { reads }, true)
                } else {
                    (Backstop::Watching, false)
                }
            }
            Backstop::Covering { reads: before } if readable => {
                if reads == before {
                    (Backstop::Covering { reads }, true)
                } else {
                    (Backstop::Watching, false)
                }
            }
            unchanged => (unchanged, false),
        };
        self.backstop = backstop;
        if read {
            self.reader.read_for_driver()
        } else {
            ReadState::Open
        }
    }

    fn master_readable_now(&self) -> bool {
        let mut fds = [PollFd::readable(Some(self.master()))];
        poll(&mut fds, Some(Duration::ZERO)).unwrap_or(0) > 0 && fds[0].is_readable()
    }

    fn master(&self) -> BorrowedFd<'_> {
        // SAFETY: the master stays open in the control until `run` closes it after the loop.
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }

    /// Waits for the next event. The master is polled for input only when this loop may read it,
    /// and for room only when input is queued: a master whose other side is closed reports a
    /// hang-up to any poll, which would otherwise wake this loop again and again while the driver
    /// has the read.
    fn poll(&self, reaped: bool, drain_deadline: Option<Instant>) -> Events {
        let wants_write = !self.control.lock().pending.is_empty();
        let (reads, backstop_check) = match (&self.driver, self.backstop) {
            (None, _) => (true, None),
            (Some(_), Backstop::Waiting { until, .. }) => (false, Some(until)),
            (Some(_), Backstop::Watching | Backstop::Covering { .. }) => (true, None),
        };
        let master_events =
            if reads { libc::POLLIN } else { 0 } | if wants_write { libc::POLLOUT } else { 0 };
        let master = (master_events != 0).then(|| self.master());
        let mut fds = [
            PollFd::new(master, master_events),
            PollFd::readable(Some(self.wake.as_fd())),
            PollFd::readable(self.pidfd.as_ref().map(AsFd::as_fd)),
        ];
        let now = Instant::now();
        let timeout = [
            drain_deadline.map(|deadline| deadline.saturating_duration_since(now)),
            (self.pidfd.is_none() && !reaped).then_some(REAP_INTERVAL),
            backstop_check.map(|until| until.saturating_duration_since(now)),
        ]
        .into_iter()
        .flatten()
        .min();
        if poll(&mut fds, timeout).unwrap_or(0) == 0 {
            return Events {
                master_readable: false,
                master_writable: false,
                woken: false,
                child_exited: false,
            };
        }
        Events {
            master_readable: reads && fds[0].is_readable(),
            // A hang-up flushes too: the write fails, and the input nobody will read is dropped.
            master_writable: wants_write
                && fds[0].revents() & (libc::POLLOUT | libc::POLLHUP | libc::POLLERR) != 0,
            woken: fds[1].is_readable(),
            child_exited: fds[2].revents() != 0,
        }
    }
}
