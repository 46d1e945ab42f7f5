//! [`JobOutput`]: the pipe a background job writes through, and the thread that passes what it
//! writes on — to the transcript of the run that started the job while that run goes, to the
//! job's record after (see `jobs`).
//!
//! The run must not lose what its job wrote before it ended, nor show it after its own later
//! output (`(echo a) & wait; echo b` prints `a` first, as in bash, where the job writes to the
//! run's pipe itself). So the thread reads the job's pipe only while it holds the forward's lock,
//! and counts what it read: whoever holds the lock and sees `consumed` reach what the pipe held
//! when it asked knows that all of it has been passed on ([`JobOutput::flush`]).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use shellwright_io::{PollFd, lock, poll, read_to_spare, set_nonblocking};

use crate::jobs::JobBook;

/// How long a run's end, or `wait`, waits for a job's output to be passed on: a run's pipe that
/// nobody reads must not hold either longer.
const FLUSH_LIMIT: Duration = Duration::from_millis(250);

/// One job's output pipe, read by a thread of its own (see the module doc).
pub(crate) struct JobOutput {
    state: Mutex<Forward>,
    /// The read end of the job's pipe (non-blocking), read only while `state` is held.
    pipe: OwnedFd,
}

struct Forward {
    /// A copy of the run's output while the run goes; `None` once it resolved.
    target: Option<std::fs::File>,
    /// Bytes read from the job's pipe so far.
    consumed: u64,
}

impl JobOutput {
    /// Starts passing on what job `serial` writes into `pipe`: to `target` while it is set, into
    /// the job's record in `book` after.
    pub fn start(
        pipe: OwnedFd,
        target: Option<std::fs::File>,
        book: JobBook,
        serial: u64,
    ) -> std::io::Result<Arc<Self>> {
        set_nonblocking(pipe.as_fd())?;
        let output = Arc::new(Self {
            state: Mutex::new(Forward {
                target,
                consumed: 0,
            }),
            pipe,
        });
        let reader = Arc::clone(&output);
        std::thread::Builder::new()
            .name("shellwright-job-output".into())
            .spawn(move || reader.pass_on(&book, serial))?;
        Ok(output)
    }

    /// The count of bytes read at which what the pipe holds now will have been passed on.
    fn goal(&self) -> u64 {
        let forward = lock(&self.state);
        forward.consumed + unread(self.pipe.as_fd())
    }

    /// The forward's lock, once `goal` is reached.
    fn reached(&self, goal: u64) -> Option<MutexGuard<'_, Forward>> {
        let forward = lock(&self.state);
        (forward.consumed >= goal).then_some(forward)
    }

    /// Makes sure what the job wrote so far is in the run's transcript, waiting at most
    /// [`FLUSH_LIMIT`] (`wait` calls it: a job that ended before its run goes on has its output
    /// before what the run writes next).
    pub async fn flush(&self) {
        let goal = self.goal();
        let deadline = Instant::now() + FLUSH_LIMIT;
        // The reader takes the lock as soon as the pipe has something: this gives it the turn.
        while self.reached(goal).is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The run resolved: what the job wrote until now goes to its transcript (waiting at most
    /// [`FLUSH_LIMIT`]), the rest to the job's record.
    pub fn end_forwarding(&self) {
        let goal = self.goal();
        let deadline = Instant::now() + FLUSH_LIMIT;
        let mut forward = loop {
            match self.reached(goal) {
                Some(forward) => break forward,
                None if Instant::now() >= deadline => break lock(&self.state),
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        };
        forward.target = None;
    }

    /// Reads the job's pipe until every writer is gone.
    fn pass_on(&self, book: &JobBook, serial: u64) {
        let mut buffer = Vec::with_capacity(64 * 1024);
        loop {
            // Waiting happens without the lock, so that a flush can take it meanwhile.
            let mut ready = [PollFd::readable(Some(self.pipe.as_fd()))];
            if poll(&mut ready, None).is_err() {
                return;
            }
            let mut forward = lock(&self.state);
            buffer.clear();
            match read_to_spare(self.pipe.as_fd(), &mut buffer) {
                Ok(0) => return,
                Ok(read) => forward.consumed += read as u64,
                Err(error)
                    if matches!(
                        error.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue;
                }
                Err(_) => return,
            }
            let forwarded = forward.target.as_ref().is_some_and(|mut run_output| {
                std::io::Write::write_all(&mut run_output, &buffer).is_ok()
            });
            if !forwarded {
                forward.target = None;
                drop(forward);
                book.keep_output(serial, &buffer);
            }
        }
    }
}

/// How many bytes `pipe` holds unread.
fn unread(pipe: BorrowedFd<'_>) -> u64 {
    let mut bytes: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which points at `bytes`.
    let status = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&pipe),
            libc::FIONREAD,
            &mut bytes,
        )
    };
    if status < 0 {
        return 0;
    }
    u64::try_from(bytes).unwrap_or(0)
}
