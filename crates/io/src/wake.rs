//! The wake pipe: how one thread interrupts another thread's [`poll`](crate::poll()) without a
//! signal. [`Waker::wake`] writes a byte; the polling thread sees its [`WakeReceiver`] readable
//! and [`drain`](WakeReceiver::drain)s it. Both ends are non-blocking, so a wake never blocks
//! (a full pipe already guarantees a wake-up), and dropping the [`Waker`] also wakes the reader
//! for good (end of input), which is how an owner that goes away says so.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use crate::fd::{pipe, set_nonblocking};

/// The writing end: wakes the thread polling the matching [`WakeReceiver`].
#[derive(Debug)]
pub struct Waker(OwnedFd);

/// The reading end, polled for input by the thread to be woken.
#[derive(Debug)]
pub struct WakeReceiver(OwnedFd);

/// A new wake pipe.
pub fn wake_pipe() -> io::Result<(Waker, WakeReceiver)> {
    let (read, write) = pipe()?;
    set_nonblocking(read.as_fd())?;
    set_nonblocking(write.as_fd())?;
    Ok((Waker(write), WakeReceiver(read)))
}

impl Waker {
    /// Makes the receiver readable until it is drained.
    pub fn wake(&self) {
        // SAFETY: writing one byte from a valid buffer to an open pipe. EAGAIN (a full pipe) means
        // a wake-up is already pending, so the result does not matter.
        unsafe { libc::write(self.0.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    }
}

impl WakeReceiver {
    /// Consumes every pending wake, so the next poll waits again. Returns false once the
    /// [`Waker`] is gone (end of input): the receiver will stay readable from then on.
    pub fn drain(&self) -> bool {
        let mut sink = [0u8; 64];
        loop {
            // SAFETY: reading into a valid buffer from an open non-blocking pipe.
            let n = unsafe { libc::read(self.0.as_raw_fd(), sink.as_mut_ptr().cast(), sink.len()) };
            match n {
                0 => return false,
                n if n > 0 => continue,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => continue,
                _ => return true,
            }
        }
    }
}

impl AsFd for WakeReceiver {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll::{PollFd, poll};
    use std::time::{Duration, Instant};

    fn poll_once(receiver: &WakeReceiver, timeout: Duration) -> bool {
        let mut fds = [PollFd::readable(Some(receiver.as_fd()))];
        poll(&mut fds, Some(timeout)).expect("poll") == 1 && fds[0].is_readable()
    }

    #[test]
    fn a_wake_interrupts_a_poll_from_another_thread() {
        let (waker, receiver) = wake_pipe().expect("pipe");
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            waker.wake();
            waker
        });
        assert!(poll_once(&receiver, Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(5));
        let waker = thread.join().expect("thread");
        assert!(receiver.drain(), "the waker is still there");
        assert!(!poll_once(&receiver, Duration::ZERO), "drained");
        drop(waker);
    }

    #[test]
    fn wakes_coalesce_and_never_block_on_a_full_pipe() {
        let (waker, receiver) = wake_pipe().expect("pipe");
        // Far more than a pipe holds: every write past the capacity fails with EAGAIN, silently.
        for _ in 0..200_000 {
            waker.wake();
        }
        assert!(poll_once(&receiver, Duration::ZERO));
        assert!(receiver.drain());
        assert!(!poll_once(&receiver, Duration::ZERO));
    }

    #[test]
    fn dropping_the_waker_wakes_for_good() {
        let (waker, receiver) = wake_pipe().expect("pipe");
        assert!(!poll_once(&receiver, Duration::from_millis(10)));
        drop(waker);
        assert!(poll_once(&receiver, Duration::ZERO));
        assert!(!receiver.drain(), "end of input");
        assert!(poll_once(&receiver, Duration::ZERO));
    }

    #[test]
    fn poll_times_out_with_nothing_ready_and_skips_absent_fds() {
        let (_waker, receiver) = wake_pipe().expect("pipe");
        let mut fds = [
            PollFd::readable(None),
            PollFd::readable(Some(receiver.as_fd())),
        ];
        let started = Instant::now();
        assert_eq!(
            poll(&mut fds, Some(Duration::from_micros(1500))).expect("poll"),
            0
        );
        // Rounded up to 2 ms, never down to a busy 1 ms or 0.
        assert!(started.elapsed() >= Duration::from_millis(1));
        assert!(!fds[0].is_readable() && !fds[1].is_readable());
    }
}
