//! The Unix output thread: it waits on the run's pipe and its end pipe with poll(2).

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc;
use std::time::Instant;

use shellwright_io::{PollFd, Utf8Decoder, poll, read_to_spare, set_pipe_capacity};
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
    /// The write end of the run's end pipe: closing it says that the foreground command ended.
    ended: Option<OwnedFd>,
    done: oneshot::Receiver<()>,
}

impl OutputReader {
    /// Tells the reader that the foreground command ended (start draining) and waits until it has
    /// read and delivered everything it is going to.
    pub async fn finish(mut self) {
        // Closing the end pipe is the signal (a reader whose run was dropped sees it too).
        drop(self.ended.take());
        let _ = (&mut self.done).await;
    }
}

/// One run's pipes and where its output goes.
struct ReadJob {
    data: PipeReader,
    /// Hangs up when the foreground command ended. A plain pipe, used only for its hang-up: it
    /// needs none of a wake pipe's non-blocking set-up.
    ended: OwnedFd,
    on_chunk: ChunkHandler,
    done: oneshot::Sender<()>,
}

/// A session's output thread: it serves one run at a time and lives as long as the session, so a
/// run does not pay for starting a thread (that cost dominated a builtin's latency).
pub struct OutputPump {
    jobs: mpsc::Sender<ReadJob>,
}

impl OutputPump {
    pub fn start() -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<ReadJob>();
        std::thread::Builder::new()
            .name("shellwright-output".into())
            .spawn(move || {
                let mut buf = Vec::with_capacity(READ_BUFFER);
                // Ends when the session drops the pump (the sender).
                for job in queue {
                    read_until_drained(&job.data, &job.ended, job.on_chunk, &mut buf);
                    let _ = job.done.send(());
                }
            })?;
        Ok(Self { jobs })
    }

    /// Creates a run's pipe and hands its read end to the thread; returns the reader handle and
    /// the write end that becomes the run's stdout and stderr.
    pub fn begin(&self, on_chunk: ChunkHandler) -> std::io::Result<(OutputReader, PipeWriter)> {
        let (data, data_tx) = shellwright_io::pipe()?;
        let (data, data_tx) = (PipeReader::from(data), PipeWriter::from(data_tx));
        let (ended, ended_tx) = shellwright_io::pipe()?;
        set_pipe_capacity(data_tx.as_fd(), PIPE_CAPACITY);
        let (done, done_rx) = oneshot::channel();
        self.jobs
            .send(ReadJob {
                data,
                ended,
                on_chunk,
                done,
            })
            .map_err(|_| std::io::Error::other("the output thread has stopped"))?;
        Ok((
            OutputReader {
                ended: Some(ended_tx),
                done: done_rx,
            },
            data_tx,
        ))
    }
}

fn read_until_drained(
    data: &PipeReader,
    ended: &OwnedFd,
    mut on_chunk: ChunkHandler,
    buf: &mut Vec<u8>,
) {
    let mut decoder = Utf8Decoder::new();
    let mut draining_since: Option<Instant> = None;
    let mut last_output = Instant::now();
    loop {
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
        // Once draining, the end pipe has said all it will: only the data pipe is watched.
        let mut fds = [
            PollFd::readable(Some(data.as_fd())),
            PollFd::readable(draining_since.is_none().then(|| ended.as_fd())),
        ];
        if poll(&mut fds, timeout).is_err() {
            break;
        }
        if fds[1].is_readable() {
            let now = Instant::now();
            draining_since = Some(now);
            last_output = last_output.max(now);
        }
        if fds[0].is_readable() {
            match read_to_spare(data.as_fd(), buf) {
                Ok(0) => break,
                Ok(_) => {
                    last_output = Instant::now();
                    on_chunk(take_text(&mut decoder, buf).into());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
    let tail = decoder.finish();
    if !tail.is_empty() {
        on_chunk(tail.into());
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
