//! Viewers of a run's terminal, the tmux model of `attach`: the terminal model is the source of
//! truth, and a viewer is painted from its snapshot and then follows the live stream.
//!
//! The cut. The run's reader feeds each chunk to the terminal and hands the passthrough (the chunk
//! minus answered queries) to [`Viewers::passed`] while it still holds the terminal's lock, and
//! [`SessionTerminal::attach`](crate::SessionTerminal::attach) takes the snapshot and registers the
//! viewer under that same lock. So a viewer's stream starts exactly where its snapshot ends:
//! snapshot + every later chunk, written into a fresh terminal of the attachment's size, is the
//! session's screen. Two things can sit *across* the cut, and a fresh terminal fed the snapshot
//! would not know them: a character whose bytes were split between reads, and an escape sequence
//! whose beginning was passed on but whose end has not arrived. The passthrough is decoded once,
//! for all viewers, so a split character simply comes whole in the next chunk; the bytes of an
//! unfinished sequence (up to [`OPEN_SEQUENCE_LIMIT`]) are kept here and begin a new viewer's
//! stream. A cut inside a longer sequence (say, a large OSC 52 clipboard write) cannot be
//! resumed: that viewer's first delivery is a resync, taken once the sequence has ended.
//!
//! Delivery never waits for a viewer. Each viewer has a queue of text; the feeding thread appends
//! to it and tells the viewer's [`ViewerSink`] once, and the viewer [`take`](Viewer::take)s
//! everything queued when it gets round to it. A queue that would pass [`VIEWER_QUEUE_LIMIT`] is
//! emptied and the viewer marked for a resync; so is every viewer when the terminal is resized
//! (the bytes that follow are drawn for the new size). A resync is computed when the viewer takes
//! it, on the viewer's thread: a fresh snapshot (it begins with RIS, `ESC c`, so it repaints an
//! already-used terminal from scratch) followed by the unfinished sequence, if any, with the size
//! it is drawn for.
//!
//! The end. A stream ends after the run's last byte, and when the run's owner says how it ended
//! (an exit status, a signal, a cancel, an error) the last delivery carries that too, as does the
//! first of a viewer attached later: a viewer in another process cannot ask the run itself.

use std::sync::{Arc, Mutex, MutexGuard};

use shellwright_io::Utf8Decoder;
use shellwright_io::lock;
use shellwright_proc::Outcome;

/// A viewer whose queue would grow past this many bytes is resynchronised instead.
pub const VIEWER_QUEUE_LIMIT: usize = 8 * 1024 * 1024;
/// Longest unfinished escape sequence a new viewer's stream can be resumed from.
pub const OPEN_SEQUENCE_LIMIT: usize = 64 * 1024;

/// Told when a viewer has something to [`take`](Viewer::take).
pub trait ViewerSink: Send + Sync + 'static {
    /// Something waits in the viewer's queue (text, a resync or the end) and the sink has not
    /// been told since the viewer last took. Called on the thread that feeds the terminal, with
    /// the terminal's lock held: it must return at once and must not call into the session.
    fn ready(&self);
}

impl<F: Fn() + Send + Sync + 'static> ViewerSink for F {
    fn ready(&self) {
        self()
    }
}

/// How the run a viewer followed ended: its outcome, or the message of the error that ended it
/// (a program that could not be spawned).
pub type RunEnd = Result<Outcome, String>;

/// What [`Viewer::take`] hands over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// The next piece of the viewer's stream; empty when nothing waits.
    pub chunk: String,
    /// `Some((cols, rows))` when `chunk` is a resync: a fresh snapshot (starting with RIS) that
    /// repaints the viewer from scratch and is drawn for this size, which the viewer takes on
    /// before writing it. Nothing queued before it needs to be written.
    pub resync: Option<(u16, u16)>,
    /// Nothing will follow: the run has ended (this was its last piece) or the viewer detached.
    pub ended: bool,
    /// With `ended`, how the run ended, when its owner said (see
    /// [`SessionTerminal::finish_run`](crate::SessionTerminal::finish_run)); `None` for a viewer
    /// that detached.
    pub run_end: Option<RunEnd>,
}

/// A new viewer: where its stream starts and the handle to follow it.
pub struct Attachment {
    /// Repaints a fresh terminal of `cols` × `rows` up to the cut.
    pub snapshot: String,
    /// `snapshot` without the scrollback, taken at the same cut: the screen alone, a screenful
    /// however long the history, for a viewer that paints the screen before the history.
    pub screen_snapshot: String,
    pub cols: u16,
    pub rows: u16,
    pub viewer: Viewer,
}

/// A handle to one viewer's stream; clones share it.
#[derive(Clone)]
pub struct Viewer {
    queue: Arc<Queue>,
    terminal: crate::SessionTerminal,
}

impl Viewer {
    pub(crate) fn new(queue: Arc<Queue>, terminal: crate::SessionTerminal) -> Self {
        Self { queue, terminal }
    }

    /// Takes everything queued for this viewer. A pending resync is computed here, under the
    /// terminal's lock (see the module doc). After `ended`, takes give nothing more.
    pub fn take(&self) -> Delivery {
        {
            let mut state = self.queue.lock();
            state.told = false;
            if state.mode != Mode::Resync {
                return state.take_text();
            }
        }
        self.terminal.resync(&self.queue)
    }

    /// Stops the stream: nothing more is queued or delivered. Idempotent.
    pub fn detach(&self) {
        let mut state = self.queue.lock();
        state.mode = Mode::Detached;
        state.text = String::new();
    }
}

/// The viewers of one run's terminal, and what a new one needs to start. Locked only while the
/// terminal's lock is held, so that feeds, attaches and resyncs are serialised with the cut.
pub(crate) struct Viewers {
    /// Decodes the passthrough once, for every viewer.
    decoder: Utf8Decoder,
    /// The passed-on bytes of the escape sequence still unfinished at the end of the last feed.
    open: Vec<u8>,
    /// False while the unfinished sequence is longer than [`OPEN_SEQUENCE_LIMIT`].
    open_known: bool,
    queues: Vec<Arc<Queue>>,
    ended: bool,
    /// How the run ended, once the stream ended with it known; given to later viewers too.
    run_end: Option<RunEnd>,
}

impl Default for Viewers {
    fn default() -> Self {
        Self {
            decoder: Utf8Decoder::new(),
            open: Vec::new(),
            open_known: true,
            queues: Vec::new(),
            ended: false,
            run_end: None,
        }
    }
}

impl Viewers {
    /// Takes the passthrough of one feed; `open_len` is how many of the bytes passed on so far
    /// belong to an unfinished sequence (`Terminal::open_sequence_len`, after the feed).
    pub(crate) fn passed(&mut self, passthrough: &[u8], open_len: usize) {
        if self.ended {
            return;
        }
        let text = if self.queues.is_empty() {
            self.decoder.skip(passthrough);
            String::new()
        } else {
            self.decoder.decode(passthrough)
        };
        self.track_open(passthrough, open_len);
        self.push(&text);
    }

    /// Ends every viewer's stream after what it was given, saying how the run ended when that is
    /// known; later viewers get the snapshot only (and `run_end`).
    pub(crate) fn end(&mut self, run_end: Option<RunEnd>) {
        if self.ended {
            return;
        }
        let text = self.decoder.finish();
        self.push(&text);
        self.ended = true;
        self.run_end = run_end;
        for queue in self.queues.drain(..) {
            let mut state = queue.lock();
            state.ended = true;
            state.run_end.clone_from(&self.run_end);
            if state.mode == Mode::AwaitSeam {
                // Nothing follows, so the snapshot alone is exact.
                state.mode = Mode::Resync;
            }
            queue.tell(state);
        }
    }

    /// Marks every viewer for a resync (after a resize: what follows is drawn for the new size).
    pub(crate) fn resync_all(&mut self) {
        for queue in &self.queues {
            let mut state = queue.lock();
            if state.mode != Mode::Detached {
                state.mode = Mode::Resync;
                state.text = String::new();
                queue.tell(state);
            }
        }
    }

    /// Registers a viewer cut at this point; `Attachment::snapshot` is taken under the same lock.
    pub(crate) fn add(&mut self, sink: Box<dyn ViewerSink>) -> Arc<Queue> {
        let queue = Arc::new(Queue::new(sink));
        let mut state = queue.lock();
        if self.ended {
            state.ended = true;
            state.run_end.clone_from(&self.run_end);
        } else {
            match self.resume_text() {
                Some(text) => state.text = text,
                None => state.mode = Mode::AwaitSeam,
            }
            self.queues.push(Arc::clone(&queue));
        }
        if state.ended || !state.text.is_empty() {
            queue.tell(state);
        } else {
            drop(state);
        }
        queue
    }

    /// What a viewer starting from a snapshot taken now is given first: the unfinished sequence,
    /// without the bytes of a split character the decoder still holds (they come in the next
    /// chunk). `None` when the sequence is too long to have been kept. After the end nothing
    /// follows, so nothing is needed.
    pub(crate) fn resume_text(&self) -> Option<String> {
        if self.ended {
            return Some(String::new());
        }
        if !self.open_known {
            return None;
        }
        let whole = self.open.len() - self.decoder.pending_len().min(self.open.len());
        Some(String::from_utf8_lossy(&self.open[..whole]).into_owned())
    }

    fn track_open(&mut self, passthrough: &[u8], open_len: usize) {
        if open_len == 0 {
            self.open.clear();
            self.open_known = true;
        } else if open_len > OPEN_SEQUENCE_LIMIT {
            self.open.clear();
            self.open_known = false;
        } else if open_len <= passthrough.len() {
            self.open.clear();
            self.open
                .extend_from_slice(&passthrough[passthrough.len() - open_len..]);
            self.open_known = true;
        } else {
            // The sequence began in an earlier feed, which left its beginning in `open`.
            let earlier = open_len - passthrough.len();
            if self.open_known && self.open.len() >= earlier {
                self.open.drain(..self.open.len() - earlier);
                self.open.extend_from_slice(passthrough);
            } else {
                self.open.clear();
                self.open_known = false;
            }
        }
    }

    fn push(&mut self, text: &str) {
        let seam_known = self.open_known;
        // A queue only the hub still holds has nobody left to take from it.
        self.queues
            .retain(|queue| Arc::strong_count(queue) > 1 && queue.push(text, seam_known));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Live,
    /// The queue was dropped; the next take is a fresh snapshot.
    Resync,
    /// Cut inside an unfinished sequence too long to resume from: resync once it has ended.
    AwaitSeam,
    Detached,
}

pub(crate) struct Queue {
    sink: Box<dyn ViewerSink>,
    state: Mutex<QueueState>,
}

pub(crate) struct QueueState {
    text: String,
    mode: Mode,
    /// The sink was told and the viewer has not taken since.
    told: bool,
    ended: bool,
    run_end: Option<RunEnd>,
}

impl QueueState {
    fn take_text(&mut self) -> Delivery {
        Delivery {
            chunk: std::mem::take(&mut self.text),
            resync: None,
            ended: self.ended || self.mode == Mode::Detached,
            run_end: self.take_run_end(),
        }
    }

    /// How the run ended, given once with the end of a stream a viewer did not detach from.
    fn take_run_end(&mut self) -> Option<RunEnd> {
        match self.mode {
            Mode::Detached => None,
            _ => self.run_end.take(),
        }
    }
}

impl Queue {
    fn new(sink: Box<dyn ViewerSink>) -> Self {
        Self {
            sink,
            state: Mutex::new(QueueState {
                text: String::new(),
                mode: Mode::Live,
                told: false,
                ended: false,
                run_end: None,
            }),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, QueueState> {
        // Plain fields: a panic while holding the lock cannot leave them inconsistent.
        lock(&self.state)
    }

    /// Appends a feed's text; false once the viewer detached (the hub forgets it).
    fn push(&self, text: &str, seam_known: bool) -> bool {
        let mut state = self.lock();
        match state.mode {
            Mode::Detached => return false,
            Mode::Resync => return true,
            Mode::AwaitSeam if !seam_known => return true,
            Mode::AwaitSeam => state.mode = Mode::Resync,
            Mode::Live if text.is_empty() => return true,
            Mode::Live if state.text.len() + text.len() > VIEWER_QUEUE_LIMIT => {
                state.text = String::new();
                state.mode = Mode::Resync;
            }
            Mode::Live => state.text.push_str(text),
        }
        self.tell(state);
        true
    }

    /// Tells the sink, unless it was told already and the viewer has not taken since.
    fn tell(&self, mut state: MutexGuard<'_, QueueState>) {
        if state.told {
            return;
        }
        state.told = true;
        drop(state);
        self.sink.ready();
    }

    /// Turns a pending resync into its delivery: `snapshot` (taken under the terminal's lock with
    /// the hub locked as `viewers`) drawn for `size`.
    pub(crate) fn resync(
        &self,
        viewers: &Viewers,
        snapshot: impl FnOnce() -> (String, (u16, u16)),
    ) -> Delivery {
        let mut state = self.lock();
        if state.mode != Mode::Resync {
            // Detached meanwhile.
            return state.take_text();
        }
        let Some(resume) = viewers.resume_text() else {
            state.mode = Mode::AwaitSeam;
            return Delivery::default();
        };
        let (mut chunk, size) = snapshot();
        chunk.push_str(&resume);
        state.text = String::new();
        state.mode = Mode::Live;
        Delivery {
            chunk,
            resync: Some(size),
            ended: state.ended,
            run_end: state.take_run_end(),
        }
    }
}
