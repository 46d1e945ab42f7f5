//! shellwright-io: the byte-stream plumbing the runtimes share.
//!
//! Owns the few operating-system primitives that the shell's output reader, the PTY's I/O loop
//! and the process code all need, each written once and holding its descriptors as [`OwnedFd`]
//! so that nothing is closed twice or leaked: close-on-exec pipes and non-blocking mode
//! ([`fd`]), a `poll(2)` wrapper ([`poll`]), the pipe a reader thread is woken through
//! ([`wake`]), `pidfd_open(2)` ([`pidfd`]), and the one incremental UTF-8 decoder for output
//! streams, with the shared chunks it yields ([`utf8`]); and the poison-tolerant [`lock`] every
//! crate takes its mutexes with ([`sync`]). It knows nothing of shells, terminals or processes'
//! meaning.
//!
//! [`OwnedFd`]: std::os::fd::OwnedFd

#[cfg(unix)]
pub mod fd;
#[cfg(unix)]
pub mod pidfd;
#[cfg(unix)]
pub mod poll;
pub mod sync;
pub mod utf8;
#[cfg(unix)]
pub mod wake;

#[cfg(unix)]
pub use fd::{
    FileIdentity, file_identity, pipe, read_to_spare, set_nonblocking, set_pipe_capacity,
};
#[cfg(unix)]
pub use pidfd::pidfd_open;
#[cfg(unix)]
pub use poll::{PollFd, poll};
pub use sync::lock;
pub use utf8::{SharedText, Utf8Decoder};
#[cfg(unix)]
pub use wake::{WakeReceiver, Waker, wake_pipe};
