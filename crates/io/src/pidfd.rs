//! `pidfd_open(2)`: a descriptor that names one process for as long as it is open, so a reused
//! pid can never be mistaken for it, and that becomes readable when the process exits.

use std::os::fd::OwnedFd;

/// A pidfd for `pid` (Linux 5.3+, close-on-exec), or `None` when the process does not exist or
/// the kernel has no pidfds.
#[cfg(target_os = "linux")]
pub fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    use std::os::fd::{FromRawFd, RawFd};
    let pid = libc::pid_t::try_from(pid).ok().filter(|pid| *pid > 0)?;
    // SAFETY: pidfd_open takes integers and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a non-negative result is a new fd that nobody else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Other platforms have no pidfds.
#[cfg(not(target_os = "linux"))]
pub fn pidfd_open(_pid: u32) -> Option<OwnedFd> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::poll::{PollFd, poll};
    use std::os::fd::AsFd;
    use std::time::Duration;

    #[test]
    fn becomes_readable_when_the_process_exits() {
        let mut child = std::process::Command::new("sleep")
            .arg("0.05")
            .spawn()
            .expect("spawn");
        let pidfd = pidfd_open(child.id()).expect("pidfd");
        let mut fds = [PollFd::readable(Some(pidfd.as_fd()))];
        let ready = poll(&mut fds, Some(Duration::from_secs(10))).expect("poll");
        assert_eq!(ready, 1);
        assert!(fds[0].is_readable());
        child.wait().expect("reap");
        assert!(pidfd_open(0).is_none());
        assert!(pidfd_open(u32::MAX).is_none());
    }
}
