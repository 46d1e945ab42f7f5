//! The Windows output thread. Windows pipes cannot be polled, so each run's pipe gets a thread
//! of its own that blocks in `read` and hands what it reads to the session's output thread, which
//! decodes it, delivers it and applies the drain rule, waiting on a channel instead of poll(2).
//! A reader whose pipe a lingering process keeps open after the drain ended stays blocked until
//! that process closes it; its reads then go nowhere.

use std::io::{PipeReader, PipeWriter, Read as _};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

use shellwright_io::Utf8Decoder;
use tokio::sync::oneshot;

use super::{ChunkHandler, DRAIN_CAP, DRAIN_IDLE};

/// Up to this much is read, decoded and delivered as one chunk.
const READ_BUFFER: usize = 64 << 10;

/// What the pipe's reader and the run tell the output thread.
enum Event {
    Data(Vec<u8>),
    /// Every write end is closed.
    Eof,
    /// The foreground command ended: start draining.
    Ended,
}

/// The reading side of one run, served by its session's [`OutputPump`].
pub struct OutputReader {
    events: mpsc::Sender<Event>,
    done: oneshot::Receiver<()>,
}

impl OutputReader {
    /// Tells the reader that the foreground command ended (start draining) and waits until it has
    /// read and delivered everything it is going to.
    pub async fn finish(mut self) {
        let _ = self.events.send(Event::Ended);
        let _ = (&mut self.done).await;
    }
}

impl Drop for OutputReader {
    /// A run dropped before it finished ends its drain too.
    fn drop(&mut self) {
        let _ = self.events.send(Event::Ended);
    }
}

struct ReadJob {
    events: mpsc::Receiver<Event>,
    on_chunk: ChunkHandler,
    done: oneshot::Sender<()>,
}

/// A session's output thread: it serves one run at a time and lives as long as the session.
pub struct OutputPump {
    jobs: mpsc::Sender<ReadJob>,
}

/// Windows makes each run's pipe as the run begins: there is nothing to do between runs.
pub struct OutputTidy;

impl OutputTidy {
    pub fn tidy(&self) {}
}

impl OutputPump {
    /// What the session calls between runs (see the Unix pump's).
    pub fn tidier(&self) -> OutputTidy {
        OutputTidy
    }

    pub fn start() -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<ReadJob>();
        std::thread::Builder::new()
            .name("shellwright-output".into())
            .spawn(move || {
                for job in queue {
                    deliver_until_drained(&job.events, job.on_chunk);
                    let _ = job.done.send(());
                }
            })?;
        Ok(Self { jobs })
    }

    /// Creates a run's pipe and its reader thread; returns the reader handle and the write end
    /// that becomes the run's stdout and stderr.
    pub fn begin(&self, on_chunk: ChunkHandler) -> std::io::Result<(OutputReader, PipeWriter)> {
        let (data, data_tx) = std::io::pipe()?;
        let (events, received) = mpsc::channel();
        let reader_events = events.clone();
        std::thread::Builder::new()
            .name("shellwright-pipe".into())
            .spawn(move || read_pipe(data, &reader_events))?;
        let (done, done_rx) = oneshot::channel();
        self.jobs
            .send(ReadJob {
                events: received,
                on_chunk,
                done,
            })
            .map_err(|_| std::io::Error::other("the output thread has stopped"))?;
        Ok((
            OutputReader {
                events,
                done: done_rx,
            },
            data_tx,
        ))
    }
}

/// Reads the pipe until every writer has closed it (or nobody listens any more).
fn read_pipe(mut data: PipeReader, events: &mpsc::Sender<Event>) {
    // One buffer for every read; each chunk is an exact copy, so a short read does not keep a
    // whole buffer alive in the transcript.
    let mut buf = vec![0; READ_BUFFER];
    loop {
        match data.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if events.send(Event::Data(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A broken pipe is how Windows reports that the last writer closed.
            Err(_) => break,
        }
    }
    let _ = events.send(Event::Eof);
}

/// Delivers the run's output until end of file, or, once the foreground command ended, until
/// the drain rule says to stop.
fn deliver_until_drained(events: &mpsc::Receiver<Event>, mut on_chunk: ChunkHandler) {
    let mut decoder = Utf8Decoder::new();
    let mut draining_since: Option<Instant> = None;
    let mut last_output = Instant::now();
    loop {
        let event = match draining_since {
            None => events.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(start) => {
                let deadline = (last_output + DRAIN_IDLE).min(start + DRAIN_CAP);
                match deadline.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => events.recv_timeout(left),
                    _ => break,
                }
            }
        };
        match event {
            Ok(Event::Data(bytes)) => {
                last_output = Instant::now();
                on_chunk(decoder.decode_owned(bytes).into());
            }
            Ok(Event::Ended) => {
                if draining_since.is_none() {
                    let now = Instant::now();
                    draining_since = Some(now);
                    last_output = last_output.max(now);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
        }
    }
    let tail = decoder.finish();
    if !tail.is_empty() {
        on_chunk(tail.into());
    }
}
