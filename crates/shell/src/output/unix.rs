//! The Unix output thread: it waits on the run's pipe and the session's end-of-run wake pipe with
//! poll(2).
//!
//! When the foreground command has ended and nothing holds the pipe open any more (the common
//! case: no background job writes to it), the rest of the output is read where the run ends, on
//! the session's thread ([`OutputReader::finish`]): waking the output thread for the last bytes
//! and waiting to hear back from it were two thread hand-offs on every run's path.
//!
//! Making and freeing pipes is kept off a run's path too: a pipe costs microseconds to create
//! and as much again to free (its pages are accounted to the memory cgroup), which was a tenth of
//! a `/bin/true` run's overhead. The output thread makes the next run's pipe once it is done with
//! a run, and it holds the last reference to each run's pipe, so the pipe is freed there; the end
//! of a run is told through one wake pipe the session keeps, not a pipe per run.

use std::io::{PipeReader, PipeWriter};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use shellwright_io::{
    PollFd, Utf8Decoder, WakeReceiver, Waker, lock, poll, read_to_spare, set_pipe_capacity,
    wake_pipe,
};
use tokio::sync::oneshot;

use super::{ChunkHandler, DRAIN_CAP, DRAIN_IDLE};

/// The pipe's buffer, fixed rather than left to the system (whose default is 16 pages, 1 MiB on
/// 64 KiB-page machines). A small one streams fastest: the writer and this reader keep reusing
/// the same few cache-hot pages, where 1 MiB took 20–40 % more CPU for the same stream and made
/// throughput swing by a third from run to run.
const PIPE_CAPACITY: usize = 64 << 10;
/// Up to this much is read, decoded and delivered as one chunk: as much as the pipe holds.
const READ_BUFFER: usize = PIPE_CAPACITY;
/// A read at least this long becomes its chunk's text without a copy, and the next read gets a
/// fresh buffer; a shorter one is copied out, so that no chunk holds more than twice its size.
const HAND_OVER: usize = READ_BUFFER / 2;

/// The reading side of one run, served by its session's [`OutputPump`].
pub struct OutputReader {
    run: RunNumber,
    ends: Arc<RunEnds>,
    done: oneshot::Receiver<()>,
    /// Let go of before the end is told, so that the output thread frees the pipe.
    stream: Option<Arc<Stream>>,
}

impl OutputReader {
    /// Tells the reader that the foreground command ended (start draining) and waits until it has
    /// read and delivered everything it is going to. When no writer holds the pipe any more, what
    /// is left in it is read here, without waiting for the output thread.
    pub async fn finish(mut self) {
        let read_here = self
            .stream
            .take()
            .is_none_or(|stream| stream.read_to_end_if_closed());
        self.ends.tell(self.run);
        if !read_here {
            let _ = (&mut self.done).await;
        }
    }
}

impl Drop for OutputReader {
    /// A reader whose run was dropped before it finished says so too: the output thread drains
    /// the pipe by the same rule and goes on to the next run.
    fn drop(&mut self) {
        if self.stream.take().is_some() {
            self.ends.tell(self.run);
        }
    }
}

/// Runs are numbered from 1 in the order the session begins them.
type RunNumber = u64;

/// Which runs' foreground commands have ended, shared by a session and its output thread.
struct RunEnds {
    /// The number of the latest run whose end was told; runs end in order.
    through: AtomicU64,
    /// Wakes the output thread after `through` moved.
    waker: Waker,
}

impl RunEnds {
    fn tell(&self, run: RunNumber) {
        self.through.fetch_max(run, Ordering::AcqRel);
        self.waker.wake();
    }

    fn has_ended(&self, run: RunNumber) -> bool {
        self.through.load(Ordering::Acquire) >= run
    }
}

/// One run's pipe and where its output goes, shared by the output thread and the run's
/// [`OutputReader`]: whoever reads holds the lock until the chunk was delivered, so chunks keep
/// their order whichever thread reads them.
struct Stream {
    data: PipeReader,
    reading: Mutex<Reading>,
}

struct Reading {
    decoder: Utf8Decoder,
    on_chunk: ChunkHandler,
    /// The read buffer: the output thread's own, lent to the stream while it serves this run.
    buf: Vec<u8>,
    /// Everything was read and delivered (end of file): nothing more is read.
    finished: bool,
}

impl Stream {
    /// Reads one chunk into `reading` and delivers it; returns false at end of file or on an
    /// error (then the tail is delivered and the stream is finished).
    fn read_chunk(&self, reading: &mut Reading) -> bool {
        // The run's end may read before the output thread has lent its buffer.
        if reading.buf.capacity() == 0 {
            reading.buf.reserve_exact(READ_BUFFER);
        }
        loop {
            match read_to_spare(self.data.as_fd(), &mut reading.buf) {
                Ok(0) => break,
                Ok(_) => {
                    let text = take_text(&mut reading.decoder, &mut reading.buf);
                    (reading.on_chunk)(text.into());
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        reading.finish();
        false
    }

    /// Reads the pipe to its end here when every writer has closed it (the pipe hangs up), so at
    /// most what it holds is left to read; returns whether the stream is finished. A pipe that a
    /// writer still holds is left to the output thread and its drain rule.
    fn read_to_end_if_closed(&self) -> bool {
        let mut reading = lock(&self.reading);
        if reading.finished {
            return true;
        }
        let mut fds = [PollFd::readable(Some(self.data.as_fd()))];
        let hung_up =
            poll(&mut fds, Some(Duration::ZERO)).is_ok() && fds[0].revents() & libc::POLLHUP != 0;
        if !hung_up {
            return false;
        }
        while self.read_chunk(&mut reading) {}
        true
    }
}

impl Reading {
    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let tail = self.decoder.finish();
        if !tail.is_empty() {
            (self.on_chunk)(tail.into());
        }
    }
}

/// One run's pipe, with the buffer size set: made ahead of the run by the output thread.
struct RunPipe {
    data: PipeReader,
    writer: PipeWriter,
}

impl RunPipe {
    fn new() -> std::io::Result<Self> {
        let (data, writer) = shellwright_io::pipe()?;
        set_pipe_capacity(writer.as_fd(), PIPE_CAPACITY);
        Ok(Self {
            data: PipeReader::from(data),
            writer: PipeWriter::from(writer),
        })
    }
}

/// The pipe the next run takes, when the output thread has made it.
type Spare = Arc<Mutex<Option<RunPipe>>>;

/// One run's pipe and where its output goes.
struct ReadJob {
    run: RunNumber,
    stream: Arc<Stream>,
    done: oneshot::Sender<()>,
}

/// A session's output thread: it serves one run at a time and lives as long as the session, so a
/// run does not pay for starting a thread (that cost dominated a builtin's latency).
pub struct OutputPump {
    jobs: mpsc::Sender<ReadJob>,
    ends: Arc<RunEnds>,
    spare: Spare,
    /// The number of the latest run begun.
    begun: AtomicU64,
}

impl OutputPump {
    pub fn start() -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<ReadJob>();
        let (waker, wakes) = wake_pipe()?;
        let ends = Arc::new(RunEnds {
            through: AtomicU64::new(0),
            waker,
        });
        let spare = Spare::default();
        let thread = OutputThread {
            ends: Arc::clone(&ends),
            wakes,
            spare: Arc::clone(&spare),
        };
        std::thread::Builder::new()
            .name("shellwright-output".into())
            .spawn(move || thread.serve(queue))?;
        Ok(Self {
            jobs,
            ends,
            spare,
            begun: AtomicU64::new(0),
        })
    }

    /// Hands the run's pipe (the one made ahead, or a new one) to the thread; returns the reader
    /// handle and the write end that becomes the run's stdout and stderr.
    pub fn begin(&self, on_chunk: ChunkHandler) -> std::io::Result<(OutputReader, PipeWriter)> {
        let pipe = match lock(&self.spare).take() {
            Some(pipe) => pipe,
            None => RunPipe::new()?,
        };
        let run = self.begun.fetch_add(1, Ordering::AcqRel) + 1;
        let (done, done_rx) = oneshot::channel();
        let stream = Arc::new(Stream {
            data: pipe.data,
            reading: Mutex::new(Reading {
                decoder: Utf8Decoder::new(),
                on_chunk,
                // The output thread lends its buffer when it takes the run up.
                buf: Vec::new(),
                finished: false,
            }),
        });
        let job = ReadJob {
            run,
            stream: Arc::clone(&stream),
            done,
        };
        let reader = OutputReader {
            run,
            ends: Arc::clone(&self.ends),
            done: done_rx,
            stream: Some(stream),
        };
        // A thread that has stopped gets no job: the reader then tells the end to nobody.
        if self.jobs.send(job).is_err() {
            return Err(std::io::Error::other("the output thread has stopped"));
        }
        Ok((reader, pipe.writer))
    }
}

/// What the output thread keeps between runs.
struct OutputThread {
    ends: Arc<RunEnds>,
    wakes: WakeReceiver,
    spare: Spare,
}

impl OutputThread {
    /// Serves the runs in order until the session drops the pump (the sender), making each next
    /// run's pipe while the session is between runs.
    fn serve(self, queue: mpsc::Receiver<ReadJob>) {
        let mut buf = Vec::with_capacity(READ_BUFFER);
        self.make_spare();
        for job in queue {
            std::mem::swap(&mut lock(&job.stream.reading).buf, &mut buf);
            self.read_until_drained(&job.stream, job.run);
            std::mem::swap(&mut lock(&job.stream.reading).buf, &mut buf);
            let ReadJob { run, stream, done } = job;
            let _ = done.send(());
            // The reader lets go of the stream before it tells the end: the pipe is freed here,
            // off the run's path.
            self.wait_for_end(run);
            drop(stream);
            self.make_spare();
        }
    }

    fn make_spare(&self) {
        let mut spare = lock(&self.spare);
        if spare.is_none() {
            // Without one the next run makes its own pipe, and says so if it cannot.
            *spare = RunPipe::new().ok();
        }
    }

    /// Waits until the end of `run` was told (it is, once the run's reader finished or was dropped).
    fn wait_for_end(&self, run: RunNumber) {
        while !self.ends.has_ended(run) {
            let mut fds = [PollFd::readable(Some(self.wakes.as_fd()))];
            if poll(&mut fds, None).is_err() {
                return;
            }
            self.wakes.drain();
        }
    }

    /// Reads and delivers the run's output until the run's end was told and then the pipe was
    /// drained: read to its end of file, or quiet for [`DRAIN_IDLE`] (at most [`DRAIN_CAP`] in all)
    /// while a background process still holds it open.
    fn read_until_drained(&self, stream: &Stream, run: RunNumber) {
        let mut draining_since: Option<Instant> = None;
        let mut last_output = Instant::now();
        loop {
            if draining_since.is_none() && self.ends.has_ended(run) {
                let now = Instant::now();
                draining_since = Some(now);
                last_output = last_output.max(now);
            }
            let timeout = match draining_since {
                None => None,
                Some(start) => {
                    let deadline = (last_output + DRAIN_IDLE).min(start + DRAIN_CAP);
                    match deadline.checked_duration_since(Instant::now()) {
                        Some(left) if !left.is_zero() => Some(left),
                        _ => break,
                    }
                }
            };
            // Once draining, the end has been told: only the data pipe is watched.
            let mut fds = [
                PollFd::readable(Some(stream.data.as_fd())),
                PollFd::readable(draining_since.is_none().then(|| self.wakes.as_fd())),
            ];
            if poll(&mut fds, timeout).is_err() {
                break;
            }
            if fds[1].is_readable() {
                // A wake says only that some run ended: the next turn reads which.
                self.wakes.drain();
            }
            let mut reading = lock(&stream.reading);
            // The run's end read the rest itself (see `OutputReader::finish`).
            if reading.finished {
                return;
            }
            if fds[0].is_readable() {
                if !stream.read_chunk(&mut reading) {
                    return;
                }
                last_output = Instant::now();
            }
        }
        lock(&stream.reading).finish();
    }
}

/// The text of what `buf` holds, leaving `buf` empty for the next read: a long read becomes the
/// text itself ([`HAND_OVER`]) and `buf` a fresh buffer; a short one is copied out of it.
fn take_text(decoder: &mut Utf8Decoder, buf: &mut Vec<u8>) -> String {
    if buf.len() >= HAND_OVER {
        let full = std::mem::replace(buf, Vec::with_capacity(READ_BUFFER));
        return decoder.decode_owned(full);
    }
    let text = decoder.decode(buf);
    buf.clear();
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A run's output on a pump of its own: what it collected, its reader and the pipe's write end.
    fn begun() -> (Arc<Mutex<String>>, OutputReader, PipeWriter) {
        let out = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&out);
        let on_chunk: ChunkHandler =
            Box::new(move |chunk| sink.lock().expect("lock").push_str(&chunk));
        let (reader, writer) = OutputPump::start()
            .and_then(|p| p.begin(on_chunk))
            .expect("pipe");
        (out, reader, writer)
    }

    #[tokio::test]
    async fn reads_to_end_of_file_once_writers_close() {
        let (out, reader, mut writer) = begun();
        writer.write_all("héllo\n".as_bytes()).expect("write");
        drop(writer);
        let started = Instant::now();
        reader.finish().await;
        assert_eq!(*out.lock().expect("lock"), "héllo\n");
        assert!(
            started.elapsed() < DRAIN_IDLE,
            "EOF must end the read at once"
        );
    }

    #[tokio::test]
    async fn long_reads_are_handed_over_with_characters_kept_whole() {
        let (out, reader, mut writer) = begun();
        // Two-byte characters after one ASCII byte: every full read ends inside a character.
        let text = format!("x{}", "é".repeat(3 * READ_BUFFER));
        writer.write_all(text.as_bytes()).expect("write");
        drop(writer);
        reader.finish().await;
        assert!(*out.lock().expect("lock") == text, "the text changed");
    }

    #[tokio::test]
    async fn chunks_keep_their_order_when_the_run_end_takes_over_the_reading() {
        // Each chunk with the thread that delivered it.
        let (chunks_tx, chunks) = mpsc::channel::<(std::thread::ThreadId, String)>();
        let on_chunk: ChunkHandler = Box::new(move |chunk| {
            let _ = chunks_tx.send((std::thread::current().id(), chunk.to_string()));
        });
        let (reader, mut writer) = OutputPump::start()
            .and_then(|p| p.begin(on_chunk))
            .expect("pipe");
        let here = std::thread::current().id();
        writer.write_all("first ".as_bytes()).expect("write");
        // The output thread delivers the first part while the writer still holds the pipe.
        let (first_on, first) = chunks
            .recv_timeout(Duration::from_secs(10))
            .expect("the output thread read nothing");
        assert_eq!(first, "first ");
        assert_ne!(first_on, here);
        // A character cut in two. The output thread may read the next part before the run ends
        // or leave it to the run's end (which thread reads is what the closed-pipe test below
        // pins down); either way the order and the character survive the change of reader.
        writer.write_all(&"then é".as_bytes()[..6]).expect("write");
        writer
            .write_all(&"é and the rest".as_bytes()[1..])
            .expect("write");
        drop(writer);
        reader.finish().await;
        let text: String = chunks.try_iter().map(|(_, chunk)| chunk).collect();
        assert_eq!(text, "then é and the rest");
    }

    #[test]
    fn a_closed_pipe_is_read_to_its_end_without_the_output_thread() {
        let (data, writer) = shellwright_io::pipe().expect("pipe");
        let out = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&out);
        let stream = Stream {
            data: PipeReader::from(data),
            reading: Mutex::new(Reading {
                decoder: Utf8Decoder::new(),
                on_chunk: Box::new(move |chunk| sink.lock().expect("lock").push(chunk.to_string())),
                buf: Vec::new(),
                finished: false,
            }),
        };
        let mut writer = PipeWriter::from(writer);
        writer.write_all(b"no thread \xc3").expect("write");
        // A writer still holds the pipe: that is the output thread's to wait for.
        assert!(!stream.read_to_end_if_closed());
        assert!(out.lock().expect("lock").is_empty());
        drop(writer);
        assert!(stream.read_to_end_if_closed());
        // The cut character is completed by nothing: the tail says so with U+FFFD.
        assert_eq!(*out.lock().expect("lock"), ["no thread ", "\u{fffd}"]);
        assert!(stream.read_to_end_if_closed(), "finished stays finished");
    }

    #[test]
    fn take_text_hands_a_long_read_over_and_copies_a_short_one() {
        let mut decoder = Utf8Decoder::new();
        let mut buf = Vec::with_capacity(READ_BUFFER);
        buf.extend(std::iter::repeat_n(b'a', HAND_OVER));
        let address = buf.as_ptr();
        let long = take_text(&mut decoder, &mut buf);
        assert_eq!((long.len(), long.as_ptr()), (HAND_OVER, address));
        assert_eq!((buf.len(), buf.capacity()), (0, READ_BUFFER));
        buf.extend_from_slice(b"short");
        let address = buf.as_ptr();
        assert_eq!(take_text(&mut decoder, &mut buf), "short");
        assert_eq!((buf.len(), buf.as_ptr()), (0, address));
    }

    /// A run on `pump` that writes `text` and ends: what its reader delivered.
    async fn run_on(pump: &OutputPump, text: &str) -> String {
        let out = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&out);
        let (reader, mut writer) = pump
            .begin(Box::new(move |chunk| {
                sink.lock().expect("lock").push_str(&chunk)
            }))
            .expect("pipe");
        writer.write_all(text.as_bytes()).expect("write");
        drop(writer);
        reader.finish().await;
        out.lock().expect("lock").clone()
    }

    #[tokio::test]
    async fn runs_in_turn_each_get_their_own_pipe_and_end() {
        let pump = OutputPump::start().expect("pump");
        let started = Instant::now();
        for n in 0..50 {
            assert_eq!(run_on(&pump, &format!("run {n}")).await, format!("run {n}"));
        }
        assert!(
            started.elapsed() < DRAIN_IDLE,
            "a run waited on another's pipe: {:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn a_reader_dropped_unfinished_lets_the_thread_go_on() {
        let pump = OutputPump::start().expect("pump");
        let (reader, _held) = pump.begin(Box::new(|_| {})).expect("pipe");
        drop(reader);
        // The next run streams while it goes: the output thread has moved on to it, which it does
        // only once it heard that the dropped run ended.
        let (chunks_tx, chunks) = mpsc::channel::<String>();
        let (reader, mut writer) = pump
            .begin(Box::new(move |chunk| {
                let _ = chunks_tx.send(chunk.to_string());
            }))
            .expect("pipe");
        writer.write_all(b"live").expect("write");
        let chunk = chunks.recv_timeout(Duration::from_secs(10));
        assert_eq!(
            chunk.as_deref(),
            Ok("live"),
            "nothing streamed while the run went"
        );
        drop(writer);
        reader.finish().await;
    }

    #[tokio::test]
    async fn a_writer_left_from_one_run_does_not_hold_the_next() {
        let pump = OutputPump::start().expect("pump");
        let (reader, mut lingering) = pump.begin(Box::new(|_| {})).expect("pipe");
        lingering.write_all(b"x").expect("write");
        reader.finish().await;
        let started = Instant::now();
        assert_eq!(run_on(&pump, "next").await, "next");
        assert!(started.elapsed() < DRAIN_IDLE, "{:?}", started.elapsed());
        // The old pipe was freed once drained: what its writer writes now reaches no transcript.
        let late = lingering
            .write_all(b"late")
            .expect_err("the old pipe is closed");
        assert_eq!(late.kind(), std::io::ErrorKind::BrokenPipe);
        assert_eq!(run_on(&pump, "last").await, "last");
    }

    #[tokio::test]
    async fn stops_after_the_idle_window_when_a_writer_lingers() {
        let (out, reader, mut writer) = begun();
        writer.write_all(b"x").expect("write");
        let started = Instant::now();
        reader.finish().await;
        let waited = started.elapsed();
        assert_eq!(*out.lock().expect("lock"), "x");
        assert!(
            waited >= DRAIN_IDLE && waited < DRAIN_CAP,
            "waited {waited:?}"
        );
        drop(writer);
    }
}
