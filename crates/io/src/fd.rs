//! Pipes and descriptor flags: every pipe is close-on-exec from birth, so a child spawned on
//! another thread at the same moment can never inherit (and hold open) an end it must not have;
//! and what tells the descriptors of one pipe from others ([`file_identity`]).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// A close-on-exec pipe: (read end, write end). Both ends block until
/// [`set_nonblocking`] says otherwise.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as RawFd; 2];
    create(&mut fds)?;
    // SAFETY: both fds were just created by pipe and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn create(fds: &mut [RawFd; 2]) -> io::Result<()> {
    // SAFETY: pipe2 writes two fds into the array; the flag makes both close-on-exec atomically.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn create(fds: &mut [RawFd; 2]) -> io::Result<()> {
    // SAFETY: pipe writes two fds into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in *fds {
        // SAFETY: fcntl on a fd that was just created.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            let err = io::Error::last_os_error();
            // SAFETY: closing the fds we created and still own.
            unsafe { fds.iter().for_each(|fd| drop(OwnedFd::from_raw_fd(*fd))) };
            return Err(err);
        }
    }
    Ok(())
}

/// Puts `fd` in non-blocking mode: reads and writes that would wait fail with `EAGAIN` instead.
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on an open fd with integer arguments.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above; the flags are the fd's own, plus O_NONBLOCK.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads from `fd` into the unused capacity of `buf` and extends `buf` by what was read; returns
/// that length, 0 at end of file (or when `buf` has no capacity left). Unlike [`std::io::Read`],
/// the capacity need not be zeroed first: a fresh buffer is written by the kernel alone.
pub fn read_to_spare(fd: BorrowedFd<'_>, buf: &mut Vec<u8>) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    // SAFETY: read(2) writes at most `spare.len()` bytes into memory `buf` owns, and reads none.
    let n = unsafe { libc::read(fd.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    // SAFETY: the kernel initialised the first `n` bytes of the spare capacity.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// Asks for a pipe buffer of `bytes` (Linux); elsewhere, or when refused, the pipe keeps its
/// default size, which is only slower, never wrong.
pub fn set_pipe_capacity(fd: BorrowedFd<'_>, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        // SAFETY: fcntl on an open fd with integer arguments; failure changes nothing.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, bytes);
}

/// Which file a descriptor is open on (its device and inode): equal for every descriptor of one
/// pipe (or file), whatever their numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    device: libc::dev_t,
    inode: libc::ino_t,
}

/// The identity of the file `fd` is open on.
pub fn file_identity(fd: BorrowedFd<'_>) -> io::Result<FileIdentity> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the buffer for a valid descriptor, which a BorrowedFd is.
    if unsafe { libc::fstat(fd.as_raw_fd(), stat.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded, so it initialised the whole struct.
    let stat = unsafe { stat.assume_init() };
    Ok(FileIdentity {
        device: stat.st_dev,
        inode: stat.st_ino,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn flags(fd: BorrowedFd<'_>) -> (libc::c_int, libc::c_int) {
        // SAFETY: fcntl queries on an open fd.
        unsafe {
            (
                libc::fcntl(fd.as_raw_fd(), libc::F_GETFD),
                libc::fcntl(fd.as_raw_fd(), libc::F_GETFL),
            )
        }
    }

    #[test]
    fn pipes_are_close_on_exec_and_nonblocking_on_request() {
        let (read, write) = pipe().expect("pipe");
        for end in [&read, &write] {
            let (fd_flags, status) = flags(end.as_fd());
            assert_ne!(fd_flags & libc::FD_CLOEXEC, 0);
            assert_eq!(status & libc::O_NONBLOCK, 0);
        }
        set_nonblocking(read.as_fd()).expect("nonblocking");
        assert_ne!(flags(read.as_fd()).1 & libc::O_NONBLOCK, 0);
        let mut byte = [0u8; 1];
        // SAFETY: reading into a valid one-byte buffer from an open fd.
        let n = unsafe { libc::read(read.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
        assert_eq!(n, -1);
        assert_eq!(
            io::Error::last_os_error().raw_os_error(),
            Some(libc::EAGAIN)
        );
    }

    #[test]
    fn reads_into_spare_capacity_after_what_the_buffer_holds() {
        let (read, write) = pipe().expect("pipe");
        let mut writer = std::fs::File::from(write);
        std::io::Write::write_all(&mut writer, b"abcdef").expect("write");
        let mut buf = Vec::with_capacity(5);
        buf.push(b'>');
        assert_eq!(read_to_spare(read.as_fd(), &mut buf).expect("read"), 4);
        assert_eq!(buf, b">abcd");
        buf.clear();
        drop(writer);
        assert_eq!(read_to_spare(read.as_fd(), &mut buf).expect("read"), 2);
        assert_eq!(read_to_spare(read.as_fd(), &mut buf).expect("end"), 0);
        assert_eq!(buf, b"ef");
    }

    #[test]
    fn the_ends_of_one_pipe_share_an_identity_another_pipe_does_not() {
        use std::os::fd::AsFd as _;
        let (read, write) = pipe().expect("pipe");
        let (other, _) = pipe().expect("pipe");
        let copy = write.try_clone().expect("dup");
        let id = |fd: &OwnedFd| file_identity(fd.as_fd()).expect("fstat");
        assert_eq!(id(&read), id(&write));
        assert_eq!(id(&write), id(&copy));
        assert_ne!(id(&write), id(&other));
    }
}
