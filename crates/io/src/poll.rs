//! `poll(2)` over a few descriptors, any of which may be absent.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

/// One descriptor to wait on and, after [`poll`], what happened to it. An absent descriptor
/// (`None`) is skipped by the kernel and never fires, so a caller's array keeps its shape.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct PollFd<'fd> {
    raw: libc::pollfd,
    fd: std::marker::PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> PollFd<'fd> {
    /// Waits for `events` (`libc::POLLIN`, `libc::POLLOUT`, …) on `fd`.
    pub fn new(fd: Option<BorrowedFd<'fd>>, events: libc::c_short) -> Self {
        Self {
            raw: libc::pollfd {
                // poll ignores entries with a negative fd.
                fd: fd.map_or(-1, |fd| fd.as_raw_fd()),
                events,
                revents: 0,
            },
            fd: std::marker::PhantomData,
        }
    }

    /// Waits for input (or end of input) on `fd`.
    pub fn readable(fd: Option<BorrowedFd<'fd>>) -> Self {
        Self::new(fd, libc::POLLIN)
    }

    /// The events that fired in the last [`poll`].
    pub fn revents(&self) -> libc::c_short {
        self.raw.revents
    }

    /// Whether a read would not block: data, end of input, or an error to report.
    pub fn is_readable(&self) -> bool {
        self.raw.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
    }

    /// Whether a write would not block.
    pub fn is_writable(&self) -> bool {
        self.raw.revents & libc::POLLOUT != 0
    }
}

/// Waits until one of `fds` is ready or `timeout` passes (`None` waits without limit); returns
/// how many are ready (0 on timeout). A signal that interrupts the wait also returns 0: callers
/// loop and recompute their deadlines anyway. Timeouts are rounded up to whole milliseconds, so
/// a deadline is never polled for in a busy loop.
pub fn poll(fds: &mut [PollFd<'_>], timeout: Option<Duration>) -> io::Result<usize> {
    let timeout_ms = timeout.map_or(-1, |timeout| {
        let ms = timeout.as_nanos().div_ceil(1_000_000);
        libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
    });
    // SAFETY: PollFd is a transparent wrapper of pollfd, so `fds` is a valid array of pollfd for
    // its length; the borrowed descriptors outlive the call.
    let ready = unsafe {
        libc::poll(
            fds.as_mut_ptr().cast::<libc::pollfd>(),
            fds.len() as libc::nfds_t,
            timeout_ms,
        )
    };
    if ready < 0 {
        let err = io::Error::last_os_error();
        return if err.kind() == io::ErrorKind::Interrupted {
            Ok(0)
        } else {
            Err(err)
        };
    }
    Ok(ready as usize)
}
