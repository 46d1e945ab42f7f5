//! [`MasterReader`]: the read side of a run — the terminal's output read to its end and handed, in
//! order, to the run's [`PtyOutput`] — and [`ReadDriver`], for a caller that reads it from its own
//! event loop instead of the run's I/O thread.
//!
//! Either way there is one reader and one place the bytes flow through. Without a driver the I/O
//! thread reads whenever the master is readable. A driver gets the reader once the child is
//! spawned, watches [`MasterReader::fd`] for readability on its own thread and calls
//! [`MasterReader::read`] until it reports [`ReadState::Ended`]. Reading on the thread that
//! consumes the output saves a thread hop per chunk: the thread the kernel wakes for the bytes is
//! the one that hands them on (the hop was a fifth of an echo's round trip).
//!
//! The reader owns a duplicate of the master, so the fd a driver watches stays open, whatever the
//! run does with its own master, until the driver lets go of the reader.

use shellwright_io::lock;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::control::PtyControl;
use super::output::PtyOutput;

/// The most bytes one delivery to the output carries. A fast stream keeps the master readable, so
/// a read loop fills the whole buffer before it delivers; each delivery costs the emulator a fixed
/// amount on top of its bytes (it emulates the tail of what it skips), so larger batches cost less
/// CPU per MB. In bench/pty.bench.mjs, 256 KiB took about a quarter less CPU per MB than 64 KiB in
/// raw mode and no more in cooked mode (128 KiB was no better than 64 KiB), and a delivery per
/// read (≤ 4 KiB) three times as much.
const READ_BUFFER: usize = 256 * 1024;
/// What a reader's buffer starts at. Most sessions never print more than a screen between two
/// reads, so the buffer grows (doubling, up to [`READ_BUFFER`]) only when a read round fills it:
/// idle sessions then hold 16 KiB instead of 256 KiB, which many short-lived sessions at once
/// would otherwise spread across the allocator's arenas.
const FIRST_READ_BUFFER: usize = 16 * 1024;
/// A first read shorter than this is delivered at once and the round ends: it is most likely all
/// there is (an echo, a prompt), and the read that would find nothing more is not made at all.
/// Whoever polls the master polls it level-triggered, so it comes back at once if more came. A
/// stream's first reads are larger (the terminal buffers up to 4 KiB while the reader is away), so
/// they keep gathering.
const EAGER_DELIVERY: usize = 512;
/// How long a driver's round (or the I/O thread's, standing in for a stalled driver) may gather
/// before it delivers what it has and lets the driver's event loop go on. A fast producer fills the whole buffer well within it; a terminal-bound
/// stream (`cat` of a large file, about 40 MB/s through the pseudo-terminal here) takes 5–6 ms
/// to fill 256 KiB, and each round then held Node's thread for that plus the emulator's work
/// on it — 9–10 ms a round, which a viewer attached meanwhile, a timer or any other event of the
/// host waited behind. With the bound, a round holds it for about 4 ms, and a viewer attached to
/// such a stream hears from it in half the time (bench/attach.bench.mjs: catch-up p50 27 → 14 ms;
/// the stream's throughput moved less than from one run to the next).
const DRIVER_ROUND: Duration = Duration::from_millis(2);

/// Whether the terminal may still produce output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadState {
    /// Nothing more for now: read again when the fd is readable.
    Open,
    /// Every holder of the terminal closed it (or the run gave up waiting for them): the output
    /// has been finished and nothing more will be read.
    Ended,
}

/// Reads a run's terminal from the caller's own event loop (see the module doc).
///
/// The run's I/O thread stands behind it: whenever the terminal stays readable for a while
/// without the driver reading (before the driver got going, or while its loop is busy), the
/// thread reads, until the driver does again. A driver that falls through costs speed, never
/// output.
pub trait ReadDriver: Send + 'static {
    /// Takes over reading once the child is spawned: from now on, call `reader.read()` whenever
    /// `reader.fd()` is readable, until it returns [`ReadState::Ended`]. Hands the reader back when
    /// it cannot take it at all, and the run's I/O thread reads instead.
    fn start(&self, reader: MasterReader) -> Result<(), MasterReader>;

    /// The run is over: stop watching the fd. Called once at the end of every run whose driver
    /// took the reader, whether a `read` of the driver's saw the end or the run ended the read
    /// itself (the child exited and processes that outlived it kept the terminal open past
    /// [`ORPHAN_DRAIN`](super::ORPHAN_DRAIN)). A later `read` returns [`ReadState::Ended`] without
    /// reading.
    fn stop(&self);
}

/// The read side of one run; clones share it. See the module doc.
#[derive(Clone)]
pub struct MasterReader {
    side: Arc<Mutex<ReadSide>>,
    /// The duplicate's number, readable without the lock.
    fd: RawFd,
    /// How many times the driver has read: the I/O thread reads too when this stops moving while
    /// the terminal is readable.
    driver_reads: Arc<AtomicU64>,
    /// Wakes the I/O thread when the read ends.
    control: PtyControl,
}

struct ReadSide {
    master: OwnedFd,
    output: Box<dyn PtyOutput>,
    buffer: Vec<u8>,
    ended: bool,
}

impl MasterReader {
    /// A reader of a duplicate of `master`, which must be non-blocking.
    pub(super) fn new(
        master: BorrowedFd<'_>,
        output: Box<dyn PtyOutput>,
        control: PtyControl,
    ) -> io::Result<Self> {
        let master = master.try_clone_to_owned()?;
        let fd = master.as_raw_fd();
        let side = ReadSide {
            master,
            output,
            buffer: vec![0; FIRST_READ_BUFFER],
            ended: false,
        };
        Ok(Self {
            side: Arc::new(Mutex::new(side)),
            fd,
            driver_reads: Arc::default(),
            control,
        })
    }

    /// The fd to watch for readability; open as long as this reader (or a clone) lives.
    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Reads what the terminal has ready, up to one buffer's worth or 2 ms of reading, and hands
    /// it to the output; at the end of input, finishes the output and reports
    /// [`ReadState::Ended`]. For the driver.
    pub fn read(&self) -> ReadState {
        self.driver_reads.fetch_add(1, Ordering::Relaxed);
        self.read_with(false)
    }

    /// [`read`](Self::read) for the I/O thread backing up a stalled driver: not counted as the
    /// driver's, and one round at a time (a buffer, or [`DRIVER_ROUND`] of reading), so that the
    /// thread looks again after each whether the driver is back.
    pub(super) fn read_for_driver(&self) -> ReadState {
        self.read_with(false)
    }

    pub(super) fn driver_reads(&self) -> u64 {
        self.driver_reads.load(Ordering::Relaxed)
    }

    /// Reads until the terminal has nothing more for now, delivering each full buffer.
    pub(super) fn read_until_empty(&self) -> ReadState {
        self.read_with(true)
    }

    fn read_with(&self, until_empty: bool) -> ReadState {
        let state = {
            let mut side = self.lock();
            if side.ended {
                return ReadState::Ended;
            }
            let state = side.read_available(until_empty);
            if state == ReadState::Ended {
                side.end();
            }
            state
        };
        if state == ReadState::Ended {
            self.control.wake_io_thread();
        }
        state
    }

    /// Runs `look` while no chunk is between a read and the output: everything read so far has
    /// been delivered (to the terminal model first).
    pub(crate) fn quiescent<R>(&self, look: impl FnOnce() -> R) -> R {
        let _side = self.lock();
        look()
    }

    pub(super) fn is_ended(&self) -> bool {
        self.lock().ended
    }

    /// Ends the read where it is, finishing the output; returns whether it was still open.
    pub(super) fn end(&self) -> bool {
        let mut side = self.lock();
        let was_open = !side.ended;
        side.end();
        was_open
    }

    fn lock(&self) -> MutexGuard<'_, ReadSide> {
        // A panic in the output while reading leaves at worst a chunk half delivered; the reader's
        // own fields stay consistent.
        lock(&self.side)
    }
}

impl ReadSide {
    /// Reads until the terminal has nothing more for now (`Open`) or has ended (`Ended`). Bytes
    /// that are already available are gathered into one chunk (up to the buffer's size), which
    /// saves the consumer per-chunk overhead; a short first read goes on at once and ends the round
    /// ([`EAGER_DELIVERY`]). Unless `until_empty`, the round also ends after one full buffer, so a
    /// driver's event loop gets its turn while a stream keeps the master readable, or once it
    /// has gathered for [`DRIVER_ROUND`].
    fn read_available(&mut self, until_empty: bool) -> ReadState {
        let mut filled = 0;
        let mut first = true;
        let started = Instant::now();
        let state = loop {
            if filled == self.buffer.len() && filled < READ_BUFFER {
                self.buffer.resize((filled * 2).min(READ_BUFFER), 0);
            } else if filled == self.buffer.len() {
                self.deliver(filled);
                filled = 0;
                if !until_empty {
                    break ReadState::Open;
                }
            }
            let free = &mut self.buffer[filled..];
            // SAFETY: reading into a valid buffer of its length from the open master.
            let n = unsafe {
                libc::read(
                    self.master.as_raw_fd(),
                    free.as_mut_ptr().cast(),
                    free.len(),
                )
            };
            if n > 0 {
                filled += n as usize;
                if first && filled < EAGER_DELIVERY {
                    break ReadState::Open;
                }
                first = false;
                if !until_empty && started.elapsed() >= DRIVER_ROUND {
                    break ReadState::Open;
                }
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
        self.deliver(filled);
        state
    }

    /// The one place the terminal's bytes flow: the first `filled` bytes of the buffer go to the
    /// output (the emulator and the consumer), in order, before anything else happens.
    fn deliver(&mut self, filled: usize) {
        if filled > 0 {
            self.output.bytes(&self.buffer[..filled]);
        }
    }

    fn end(&mut self) {
        if !self.ended {
            self.ended = true;
            self.output.finish();
            self.buffer = Vec::new();
        }
    }
}
