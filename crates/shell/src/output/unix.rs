//! The Unix output thread: it waits for runs' pipes to become readable, with mio's poll (epoll on
//! Linux, kqueue on macOS), and delivers what it reads.
//!
//! The session registers a run's pipe with the thread's poll when the run begins and takes it out
//! again when the run's foreground command has ended, before the run's writers close it, so the
//! thread is woken only by output. When nothing holds the pipe open any more (the common case: no
//! background job writes to it), the rest of the output is read where the run ends, on the
//! session's thread ([`OutputReader::finish`]); only a pipe that a lingering writer holds is handed
//! back to the output thread, which drains it by the rule in [`output`](super). So a run that
//! prints nothing never wakes the thread. Every wake-up of another thread costs the waking one an
//! inter-processor interrupt — a VM exit on a virtual machine — and a run used to pay three: the
//! hand-over of the pipe, the pipe's close and the news of the run's end.
//!
//! Making and freeing pipes is kept off a run's path too: a pipe costs microseconds to create and
//! as much again to free (its pages are accounted to the memory cgroup). The next run's pipe is
//! made, and the last one's freed, once the run was answered ([`OutputTidy`]).

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token};
use shellwright_io::{
    PollFd, Utf8Decoder, lock, poll, read_to_spare, set_nonblocking, set_pipe_capacity,
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
/// The poll token of the thread's waker; a run's pipe has its run's number.
const WAKE: Token = Token(usize::MAX);

/// Runs are numbered from 1 in the order the session begins them.
type RunNumber = u64;

fn token(run: RunNumber) -> Token {
    // Truncated on 32-bit targets: only runs being served at once need distinct tokens.
    Token(run as usize)
}

/// The reading side of one run, served by its session's [`OutputPump`].
pub struct OutputReader {
    run: RunNumber,
    shared: Arc<Shared>,
    /// Let go of when the run's end took its output over.
    stream: Option<Arc<Stream>>,
    /// The pipe is still registered with the output thread's poll.
    watched: bool,
}

impl OutputReader {
    /// The run's foreground command has ended: the output thread stops watching the pipe, so that
    /// the run's writers closing it do not wake it. Whatever is still in the pipe is read by
    /// [`finish`](Self::finish).
    pub fn command_ended(&mut self) {
        if let Some(stream) = self.stream.as_ref().filter(|_| self.watched) {
            self.watched = false;
            self.shared.unwatch(stream);
        }
    }

    /// Reads and delivers everything the run's pipe is going to give, then returns. When no writer
    /// holds the pipe any more, what is left in it is read here; otherwise the output thread
    /// drains it by the rule (end of file, or quiet for [`DRAIN_IDLE`], at most [`DRAIN_CAP`]).
    pub async fn finish(mut self) {
        self.command_ended();
        let Some(stream) = self.stream.take() else {
            return;
        };
        if stream.read_to_end_if_closed() {
            self.shared.retire(self.run, stream);
            return;
        }
        let (done, drained) = oneshot::channel();
        self.shared.drain(self.run, &stream, Some(done));
        let _ = drained.await;
    }
}

impl Drop for OutputReader {
    /// A reader whose run was dropped before it finished hands its pipe to the output thread,
    /// which drains it by the same rule.
    fn drop(&mut self) {
        self.command_ended();
        if let Some(stream) = self.stream.take() {
            self.shared.drain(self.run, &stream, None);
        }
    }
}

/// One run's pipe and where its output goes, shared by the output thread and the run's
/// [`OutputReader`]: whoever reads holds the lock until the chunk was delivered, so chunks keep
/// their order whichever thread reads them.
struct Stream {
    /// Non-blocking: the output thread reads until the pipe is empty.
    data: PipeReader,
    reading: Mutex<Reading>,
}

struct Reading {
    decoder: Utf8Decoder,
    on_chunk: ChunkHandler,
    /// The read buffer, allocated at the first read.
    buf: Vec<u8>,
    /// When output last came, for the drain's idle window.
    last_output: Option<Instant>,
    /// Everything was read and delivered (end of file), or the drain gave up: nothing more is
    /// read.
    finished: bool,
}

/// What one read of a run's pipe gave.
#[derive(PartialEq)]
enum Read {
    /// A chunk, delivered.
    Chunk,
    /// Nothing for now: a writer holds the pipe.
    Empty,
    /// End of file (or an error): the tail was delivered and the stream is finished.
    End,
}

impl Stream {
    fn read_chunk(&self, reading: &mut Reading) -> Read {
        if reading.buf.capacity() == 0 {
            reading.buf.reserve_exact(READ_BUFFER);
        }
        loop {
            match read_to_spare(self.data.as_fd(), &mut reading.buf) {
                Ok(0) => break,
                Ok(_) => {
                    let text = take_text(&mut reading.decoder, &mut reading.buf);
                    (reading.on_chunk)(text.into());
                    reading.last_output = Some(Instant::now());
                    return Read::Chunk;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Read::Empty,
                Err(_) => break,
            }
        }
        reading.finish();
        Read::End
    }

    /// Reads what the pipe holds, chunk by chunk, until it is empty or at its end.
    fn read_available(&self) {
        let mut reading = lock(&self.reading);
        while !reading.finished && self.read_chunk(&mut reading) == Read::Chunk {}
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
        if poll(&mut fds, Some(Duration::ZERO)).is_err() || fds[0].revents() & libc::POLLHUP == 0 {
            return false;
        }
        if fds[0].revents() & libc::POLLIN == 0 {
            // Closed and empty: end of file, without a buffer to read it into.
            reading.finish();
            return true;
        }
        loop {
            match self.read_chunk(&mut reading) {
                Read::Chunk => {}
                Read::End => return true,
                // Hung up, yet a writer again: someone opened the pipe anew (`/proc/…/fd`).
                Read::Empty => return false,
            }
        }
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

/// One run's pipe, with the buffer size set and its reading end non-blocking.
struct RunPipe {
    data: PipeReader,
    writer: PipeWriter,
}

impl RunPipe {
    fn new() -> std::io::Result<Self> {
        let (data, writer) = shellwright_io::pipe()?;
        set_nonblocking(data.as_fd())?;
        set_pipe_capacity(writer.as_fd(), PIPE_CAPACITY);
        Ok(Self {
            data: PipeReader::from(data),
            writer: PipeWriter::from(writer),
        })
    }
}

/// A run whose pipe the output thread serves.
struct Served {
    run: RunNumber,
    stream: Arc<Stream>,
    /// Set once the run's end handed the pipe back: the drain is under way.
    drain: Option<Drain>,
}

struct Drain {
    since: Instant,
    /// Told when the drain is over; `None` when the run's reader was dropped.
    done: Option<oneshot::Sender<()>>,
}

impl Served {
    /// When the drain is over unless more output comes: [`DRAIN_IDLE`] after the drain began or
    /// the last output, whichever is later, and at most [`DRAIN_CAP`] after it began.
    fn drain_deadline(&self, reading: &Reading) -> Option<Instant> {
        let drain = self.drain.as_ref()?;
        let quiet_since = reading
            .last_output
            .map_or(drain.since, |t| t.max(drain.since));
        Some((quiet_since + DRAIN_IDLE).min(drain.since + DRAIN_CAP))
    }
}

/// What a session and its output thread share.
struct Shared {
    registry: Registry,
    waker: mio::Waker,
    /// The run going on and the runs whose pipes are being drained.
    served: Mutex<Vec<Served>>,
    /// The pipe the next run takes, when [`OutputTidy::tidy`] has made it.
    spare: Mutex<Option<RunPipe>>,
    /// Pipes of ended runs, freed by [`OutputTidy::tidy`].
    retired: Mutex<Vec<Arc<Stream>>>,
    /// The pump was dropped: the thread ends once it drained what it serves.
    closing: AtomicBool,
    /// The thread has ended.
    stopped: AtomicBool,
    /// The thread's id, for tests to read its context switches.
    #[cfg(all(test, target_os = "linux"))]
    tid: std::sync::atomic::AtomicI32,
}

impl Shared {
    fn unwatch(&self, stream: &Stream) {
        let _ = self
            .registry
            .deregister(&mut SourceFd(&stream.data.as_raw_fd()));
    }

    /// The run's end read its output: the pipe is freed with the next tidy.
    fn retire(&self, run: RunNumber, stream: Arc<Stream>) {
        lock(&self.served).retain(|served| served.run != run);
        lock(&self.retired).push(stream);
    }

    /// Hands the run's pipe back to the output thread to drain, and wakes it.
    fn drain(&self, run: RunNumber, stream: &Stream, done: Option<oneshot::Sender<()>>) {
        let mut served = lock(&self.served);
        if self.stopped.load(Ordering::Acquire) {
            // Nobody would drain it: the run ends with what was read.
            lock(&stream.reading).finish();
            return;
        }
        let Some(entry) = served.iter_mut().find(|served| served.run == run) else {
            return;
        };
        entry.drain = Some(Drain {
            since: Instant::now(),
            done,
        });
        drop(served);
        // Registered anew, the pipe reports at once what it already holds.
        let source = &mut SourceFd(&stream.data.as_raw_fd());
        if self
            .registry
            .register(source, token(run), Interest::READABLE)
            .is_err()
        {
            // Unwatchable: the drain ends at its next check, with what is already read.
            lock(&stream.reading).finish();
        }
        let _ = self.waker.wake();
    }
}

/// Frees ended runs' pipes and makes the next run's, off the runs' path: the session calls
/// [`tidy`](Self::tidy) once a run was answered.
pub struct OutputTidy(Arc<Shared>);

impl OutputTidy {
    pub fn tidy(&self) {
        drop(std::mem::take(&mut *lock(&self.0.retired)));
        let mut spare = lock(&self.0.spare);
        if spare.is_none() {
            // Without one the next run makes its own pipe, and says so if it cannot.
            *spare = RunPipe::new().ok();
        }
    }
}

/// A session's output thread: it serves the session's runs and lives as long as the session, so
/// a run does not pay for starting a thread (that cost dominated a builtin's latency).
pub struct OutputPump {
    shared: Arc<Shared>,
    /// The number of the latest run begun.
    begun: AtomicU64,
}

impl OutputPump {
    pub fn start() -> std::io::Result<Self> {
        let poll = Poll::new()?;
        let shared = Arc::new(Shared {
            registry: poll.registry().try_clone()?,
            waker: mio::Waker::new(poll.registry(), WAKE)?,
            served: Mutex::default(),
            spare: Mutex::default(),
            retired: Mutex::default(),
            closing: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            #[cfg(all(test, target_os = "linux"))]
            tid: std::sync::atomic::AtomicI32::new(0),
        });
        let thread = OutputThread {
            poll,
            shared: Arc::clone(&shared),
        };
        std::thread::Builder::new()
            .name("shellwright-output".into())
            .spawn(move || thread.serve())?;
        OutputTidy(Arc::clone(&shared)).tidy();
        Ok(Self {
            shared,
            begun: AtomicU64::new(0),
        })
    }

    /// What frees ended runs' pipes and makes the next one, for the session to call between runs.
    pub fn tidier(&self) -> OutputTidy {
        OutputTidy(Arc::clone(&self.shared))
    }

    /// Registers the run's pipe (the one made ahead, or a new one) with the output thread;
    /// returns the reader handle and the write end that becomes the run's stdout and stderr.
    pub fn begin(&self, on_chunk: ChunkHandler) -> std::io::Result<(OutputReader, PipeWriter)> {
        let pipe = match lock(&self.shared.spare).take() {
            Some(pipe) => pipe,
            None => RunPipe::new()?,
        };
        let run = self.begun.fetch_add(1, Ordering::AcqRel) + 1;
        let stream = Arc::new(Stream {
            data: pipe.data,
            reading: Mutex::new(Reading {
                decoder: Utf8Decoder::new(),
                on_chunk,
                buf: Vec::new(),
                last_output: None,
                finished: false,
            }),
        });
        let mut served = lock(&self.shared.served);
        // Checked under the lock the thread ends with: a run it will not serve is refused.
        if self.shared.stopped.load(Ordering::Acquire) {
            return Err(std::io::Error::other("the output thread has stopped"));
        }
        served.push(Served {
            run,
            stream: Arc::clone(&stream),
            drain: None,
        });
        drop(served);
        let source = &mut SourceFd(&stream.data.as_raw_fd());
        if let Err(e) = self
            .shared
            .registry
            .register(source, token(run), Interest::READABLE)
        {
            lock(&self.shared.served).retain(|served| served.run != run);
            return Err(e);
        }
        let reader = OutputReader {
            run,
            shared: Arc::clone(&self.shared),
            stream: Some(stream),
            watched: true,
        };
        Ok((reader, pipe.writer))
    }
}

impl Drop for OutputPump {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::Release);
        let _ = self.shared.waker.wake();
    }
}

/// The output thread's side: its poll and what it shares with the session.
struct OutputThread {
    poll: Poll,
    shared: Arc<Shared>,
}

impl OutputThread {
    /// Serves runs' pipes until the pump is dropped and nothing is left to drain.
    fn serve(mut self) {
        #[cfg(all(test, target_os = "linux"))]
        // SAFETY: gettid has no preconditions.
        self.shared
            .tid
            .store(unsafe { libc::gettid() }, Ordering::Release);
        let mut events = Events::with_capacity(16);
        loop {
            let timeout = self
                .next_deadline()
                .map(|t| t.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout)
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
            for event in events.iter().filter(|event| event.token() != WAKE) {
                self.read(event.token());
            }
            self.end_drains();
            if self.shared.closing.load(Ordering::Acquire) && lock(&self.shared.served).is_empty() {
                break;
            }
        }
        // Runs begun from now on are refused, and those it served end with what was read, rather
        // than wait for it.
        let mut served = lock(&self.shared.served);
        self.shared.stopped.store(true, Ordering::Release);
        for entry in served.drain(..) {
            lock(&entry.stream.reading).finish();
            if let Some(done) = entry.drain.and_then(|drain| drain.done) {
                let _ = done.send(());
            }
        }
    }

    /// Reads what the pipe of the run `token` names holds (a run that already ended is skipped).
    fn read(&self, token: Token) {
        let stream = lock(&self.shared.served)
            .iter()
            .find(|served| self::token(served.run) == token)
            .map(|served| Arc::clone(&served.stream));
        if let Some(stream) = stream {
            stream.read_available();
        }
    }

    /// The earliest deadline of a drain under way.
    fn next_deadline(&self) -> Option<Instant> {
        lock(&self.shared.served)
            .iter()
            .filter_map(|served| served.drain_deadline(&lock(&served.stream.reading)))
            .min()
    }

    /// Ends the drains whose pipes reached their end or whose deadlines passed; a pipe is freed
    /// here when its reader was dropped, or by its reader once it heard.
    fn end_drains(&self) {
        let now = Instant::now();
        let mut ended = Vec::new();
        lock(&self.shared.served).retain_mut(|served| {
            let mut reading = lock(&served.stream.reading);
            let over = reading.finished
                || served
                    .drain_deadline(&reading)
                    .is_some_and(|deadline| deadline <= now);
            if !over || served.drain.is_none() {
                return true;
            }
            reading.finish();
            drop(reading);
            ended.push((Arc::clone(&served.stream), served.drain.take()));
            false
        });
        for (stream, drain) in ended {
            self.shared.unwatch(&stream);
            // Let go of before the reader hears, which frees the pipe with its own reference.
            drop(stream);
            if let Some(done) = drain.and_then(|drain| drain.done) {
                let _ = done.send(());
            }
        }
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
    use std::sync::{Arc, Mutex, mpsc};

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
                last_output: None,
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

    /// Begins a run on `pump` that writes `text`, and waits until the output thread delivered
    /// it; returns the run's reader and its writer, still open.
    fn streamed(pump: &OutputPump, text: &str) -> (OutputReader, PipeWriter) {
        let (chunks_tx, chunks) = mpsc::channel::<String>();
        let (reader, mut writer) = pump
            .begin(Box::new(move |chunk| {
                let _ = chunks_tx.send(chunk.to_string());
            }))
            .expect("pipe");
        writer.write_all(text.as_bytes()).expect("write");
        let chunk = chunks.recv_timeout(Duration::from_secs(10));
        assert_eq!(
            chunk.as_deref(),
            Ok(text),
            "nothing streamed while the run went"
        );
        (reader, writer)
    }

    #[tokio::test]
    async fn a_reader_dropped_unfinished_lets_the_thread_go_on() {
        let pump = OutputPump::start().expect("pump");
        let (reader, _held) = pump.begin(Box::new(|_| {})).expect("pipe");
        drop(reader);
        // The next run streams while it goes, though the dropped run's pipe, which a writer still
        // holds, is being drained.
        let (reader, writer) = streamed(&pump, "live");
        drop(writer);
        reader.finish().await;
    }

    /// The output thread's voluntary context switches so far, once it sleeps: each wake-up
    /// adds one.
    #[cfg(target_os = "linux")]
    fn switches_once_asleep(pump: &OutputPump) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        let task = loop {
            match pump.shared.tid.load(Ordering::Acquire) {
                0 if Instant::now() < deadline => std::thread::yield_now(),
                0 => panic!("the output thread never started"),
                tid => break format!("/proc/self/task/{tid}"),
            }
        };
        let state = || std::fs::read_to_string(format!("{task}/stat")).expect("stat");
        // The state follows the parenthesised name: `S` while it waits.
        while !state()
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('S'))
        {
            assert!(Instant::now() < deadline, "the output thread never slept");
            std::thread::sleep(Duration::from_millis(1));
        }
        let status = std::fs::read_to_string(format!("{task}/status")).expect("status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|count| count.trim().parse().ok())
            .expect("voluntary_ctxt_switches")
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn runs_that_print_nothing_do_not_wake_the_output_thread() {
        let pump = OutputPump::start().expect("pump");
        let before = switches_once_asleep(&pump);
        for _ in 0..3 {
            let (mut reader, writer) = pump.begin(Box::new(|_| {})).expect("pipe");
            // As a run ends: unwatched, then the writer closes.
            reader.command_ended();
            drop(writer);
            reader.finish().await;
        }
        assert_eq!(switches_once_asleep(&pump), before, "a silent run woke it");
        // A run that prints wakes it (once: the run's end reads what is left).
        let (reader, writer) = streamed(&pump, "woke");
        assert_eq!(switches_once_asleep(&pump), before + 1);
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
