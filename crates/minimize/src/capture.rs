//! [`Capture`]: the run's transcript kept for the minimizer, up to a byte limit, and prepared for
//! it while the run goes. Written from the output thread while the same text streams to the
//! caller; past the limit it stops keeping text and remembers that it overflowed (the minimizer
//! then leaves output unchanged).
//!
//! The text is appended to one buffer that reserves room for [`RESERVED`] bytes (or the limit,
//! if smaller) at its first chunk. The reservation is address space only: a page costs when the
//! text reaches it, so a short transcript pays for a short one. A string grown chunk by chunk
//! would be copied at every doubling, and chunks kept apart and joined at the end were copied
//! once more into fresh memory; on a megabyte either cost more than minimizing it.
//!
//! **Preparation.** Before any filter can look at a transcript, it is cleaned of escape
//! sequences and its important lines are found ([`text`](crate::text)); on coloured output
//! that is half of the minimizer's work. Both are done as the text arrives, a batch of whole
//! lines at a time, so that the minimizer's work when the run ends — what its caller waits for —
//! is the filter alone. They are done on a thread of their own (`shellwright-minimize`, one for
//! every capture of the process, started on first use), not on the thread that streams the
//! output: a program that prints fast would otherwise wait for the preparation, and the
//! output's caller with it. The batch is copied out under the capture's lock and prepared
//! outside it. [`Capture::take`] waits for the thread to catch up. Each batch is prepared
//! exactly as the whole text would be:
//! - Escape sequences are stripped batch by batch. A batch whose last sequence is not complete
//!   (an OSC string running across a line end) stops the preparation, and the whole transcript
//!   is cleaned at the end, as without it.
//! - Important lines are searched in the stripped batch (no pattern crosses a line end) and
//!   their starts offset by the text before it.
//! - Carriage-return redraws depend on the whole text (with a `\r` anywhere, blank lines are
//!   emptied too), so they are applied at the end, to the stripped text; the important lines
//!   are then searched again, in the redrawn text.

use std::borrow::Cow;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use shellwright_io::lock;

use crate::text::{self, Transcript, important_line_starts, strip_controls_complete};

/// Room reserved for the transcript up front: text up to this size is never moved.
const RESERVED: usize = 8 << 20;

/// Unprepared text a chunk must bring the capture to before its lines go to the preparer. Less is
/// prepared when the capture is taken, on the taker's thread, where it costs less than a hand-off
/// to another thread: a short transcript (a builtin's, run on the JS thread) never waits for one.
const BATCH: usize = 32 << 10;

#[derive(Debug)]
pub struct Capture {
    shared: Arc<Shared>,
}

/// What a capture shares with the thread that prepares it.
#[derive(Debug)]
struct Shared {
    limit: usize,
    /// [`BATCH`], smaller in tests.
    batch: usize,
    /// Whether pushes prepare their lines themselves rather than hand them to the preparer
    /// (tests, to prepare batch by batch at known places).
    inline: bool,
    state: Mutex<State>,
    /// Signalled when the preparer has caught up with the text.
    caught_up: Condvar,
}

#[derive(Debug, Default)]
struct State {
    text: String,
    overflowed: bool,
    prepared: Prepared,
    /// Whether the preparer has this capture in hand (queued or at work).
    preparing: bool,
    /// Changes whenever the text is taken or dropped, so that a batch prepared from the text
    /// before is not added to the text after.
    generation: u64,
}

/// The transcript's whole lines as far as they were prepared (see the module doc).
#[derive(Debug, Default)]
struct Prepared {
    /// Bytes of the transcript prepared: whole lines.
    through: usize,
    /// Those bytes without their controls, once they differ from the transcript (`None`: the
    /// same).
    stripped: Option<String>,
    /// The starts of the important lines in the stripped text, ascending.
    important: Vec<usize>,
    /// Whether the stripped text holds a `\r`.
    carriage_return: bool,
    /// Set when a batch ended inside an escape sequence: the transcript is cleaned whole.
    abandoned: bool,
}

/// A batch of whole lines prepared: the batch without its controls (`None` when it ran into an
/// unfinished escape sequence), whether that holds a `\r`, and its important lines' starts.
struct PreparedBatch {
    stripped: Option<(String, bool)>,
    important: Vec<usize>,
    end: usize,
}

/// A finished capture: the transcript as it streamed, and as the minimizer's filters read it.
#[derive(Debug)]
pub struct CapturedText {
    pub original: String,
    /// The cleaned transcript, when it differs from `original`.
    cleaned: Option<String>,
    /// The starts of the cleaned transcript's important lines, when they were found.
    important: Option<Vec<usize>>,
}

impl CapturedText {
    /// The cleaned transcript, with its important lines if they were found as it streamed.
    pub fn transcript(&self) -> Transcript<'_> {
        let cleaned = self.cleaned.as_deref().unwrap_or(&self.original);
        match &self.important {
            Some(important) => Transcript::with_important(cleaned, important.clone()),
            None => Transcript::new(cleaned),
        }
    }
}

impl Capture {
    pub fn new(limit: usize) -> Self {
        Self::with_batch(limit, BATCH, false)
    }

    fn with_batch(limit: usize, batch: usize, inline: bool) -> Self {
        Self {
            shared: Arc::new(Shared {
                limit,
                batch,
                inline,
                state: Mutex::default(),
                caught_up: Condvar::new(),
            }),
        }
    }

    /// Appends `chunk`, and has the lines it completed prepared; or marks the capture overflowed
    /// (and frees it) if it would pass the limit.
    pub fn push(&self, chunk: &str) {
        let mut state = self.shared.state();
        if state.overflowed || chunk.is_empty() {
            return;
        }
        if state.text.len() + chunk.len() > self.shared.limit {
            *state = State {
                overflowed: true,
                generation: state.generation + 1,
                ..State::default()
            };
            self.shared.caught_up.notify_all();
            return;
        }
        if state.text.capacity() == 0 {
            state.text.reserve(self.shared.limit.min(RESERVED));
        }
        state.text.push_str(chunk);
        // The preparer takes every whole line there is before it stops, so a chunk that ends
        // no line brings none for it.
        let ends_a_line = memchr::memchr(b'\n', chunk.as_bytes()).is_some();
        let unprepared = state.text.len() - state.prepared.through;
        if state.preparing
            || state.prepared.abandoned
            || !ends_a_line
            || unprepared < self.shared.batch
        {
            return;
        }
        state.preparing = true;
        drop(state);
        if self.shared.inline {
            self.shared.prepare();
        } else if let Err(shared) = preparer().send(Arc::clone(&self.shared)) {
            // No preparer thread: prepared here, on the thread that streams the output.
            shared.0.prepare();
        }
    }

    /// The whole transcript, taken out (the capture is left empty), or `None` if it went past
    /// the limit.
    pub fn take_text(&self) -> Option<String> {
        self.take().map(|captured| captured.original)
    }

    /// The whole transcript and its preparation, taken out (the capture is left empty), or
    /// `None` if it went past the limit. Waits for the preparer to finish the batch it has in
    /// hand, if any; what it was not handed is prepared here.
    pub fn take(&self) -> Option<CapturedText> {
        let mut state = self.shared.state();
        while state.preparing {
            state = self
                .shared
                .caught_up
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if state.overflowed {
            return None;
        }
        let generation = state.generation + 1;
        let mut taken = std::mem::replace(
            &mut *state,
            State {
                generation,
                ..State::default()
            },
        );
        drop(state);
        // Gives back the reservation's untouched rest (a reservation of megabytes is its own
        // mapping, which shrinks in place).
        taken.text.shrink_to_fit();
        Some(taken.prepared.finish(taken.text))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        // The text is freed now, not when the preparer lets go of it.
        let mut state = self.shared.state();
        let generation = state.generation + 1;
        *state = State {
            generation,
            preparing: state.preparing,
            ..State::default()
        };
    }
}

/// The thread that prepares every capture's lines as they stream (started on first use), or an
/// error when it cannot be started.
fn preparer() -> &'static Sender<Arc<Shared>> {
    static PREPARER: OnceLock<Sender<Arc<Shared>>> = OnceLock::new();
    PREPARER.get_or_init(|| {
        let (sender, captures) = mpsc::channel::<Arc<Shared>>();
        let started = std::thread::Builder::new()
            .name("shellwright-minimize".into())
            .spawn(move || {
                for shared in captures {
                    shared.prepare();
                }
            });
        // Without the thread the receiver is gone, and every send fails: captures then prepare
        // their lines themselves.
        drop(started);
        sender
    })
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Prepares batches of whole lines until none is left, then says it caught up. The text is
    /// copied out under the lock and prepared outside it, so the output keeps streaming.
    fn prepare(&self) {
        loop {
            let (batch, start, generation) = {
                let mut state = self.state();
                let start = state.prepared.through;
                let end = state.whole_lines_end();
                if end == start || state.prepared.abandoned {
                    state.preparing = false;
                    self.caught_up.notify_all();
                    return;
                }
                (state.text[start..end].to_string(), start, state.generation)
            };
            let batch = std::panic::catch_unwind(|| PreparedBatch::of(&batch, start));
            let mut state = self.state();
            if state.generation != generation {
                // Overflowed or dropped meanwhile (a take waits for this thread): whatever the
                // text is now, it was not this batch's.
                state.preparing = false;
                self.caught_up.notify_all();
                return;
            }
            match batch {
                Ok(batch) => {
                    let State { text, prepared, .. } = &mut *state;
                    prepared.add(text, batch, self.limit);
                }
                Err(_) => state.prepared.abandon(),
            }
        }
    }
}

impl State {
    /// Where the whole lines of the text end (`prepared.through` when no line was completed
    /// since).
    fn whole_lines_end(&self) -> usize {
        let through = self.prepared.through;
        memchr::memrchr(b'\n', &self.text.as_bytes()[through..])
            .map_or(through, |last| through + last + 1)
    }
}

impl PreparedBatch {
    /// Prepares `batch`, whole lines, which ends at `start + batch.len()` in the transcript.
    fn of(batch: &str, start: usize) -> Self {
        let end = start + batch.len();
        let Some(stripped) = strip_controls_complete(batch) else {
            return Self {
                stripped: None,
                important: Vec::new(),
                end,
            };
        };
        let carriage_return = memchr::memchr(b'\r', stripped.as_bytes()).is_some();
        // With a `\r` the lines are found again at the end, in the redrawn text.
        let important = if carriage_return {
            Vec::new()
        } else {
            important_line_starts(&stripped)
        };
        Self {
            stripped: Some((stripped.into_owned(), carriage_return)),
            important,
            end,
        }
    }
}

impl Prepared {
    /// Adds a prepared batch, which starts at `self.through` in `text`.
    fn add(&mut self, text: &str, batch: PreparedBatch, limit: usize) {
        let Some((stripped, carriage_return)) = batch.stripped else {
            self.abandon();
            return;
        };
        let batch_text = &text[self.through..batch.end];
        self.note(carriage_return, batch.important);
        match &mut self.stripped {
            None if stripped == batch_text => {}
            None => {
                let mut all = String::with_capacity(limit.min(RESERVED));
                all.push_str(&text[..self.through]);
                all.push_str(&stripped);
                self.stripped = Some(all);
            }
            Some(all) => all.push_str(&stripped),
        }
        self.through = batch.end;
    }

    /// Gives up on preparing as the text streams: the transcript is cleaned whole at the end.
    fn abandon(&mut self) {
        *self = Self {
            abandoned: true,
            ..Self::default()
        };
    }

    /// Records a stripped batch, which comes next in the stripped text: whether it holds a
    /// `\r`, and its important lines, found from its start.
    fn note(&mut self, carriage_return: bool, important: Vec<usize>) {
        let offset = self.stripped.as_ref().map_or(self.through, String::len);
        self.carriage_return |= carriage_return;
        if !self.carriage_return {
            self.important
                .extend(important.into_iter().map(|at| at + offset));
        }
    }

    /// `original` with what was prepared of it, the rest (a last line without its `\n`, or all
    /// of it when the preparation was abandoned) prepared now.
    fn finish(mut self, original: String) -> CapturedText {
        if self.abandoned {
            let cleaned = match text::clean(&original) {
                Cow::Borrowed(_) => None,
                Cow::Owned(cleaned) => Some(cleaned),
            };
            return CapturedText {
                original,
                cleaned,
                important: None,
            };
        }
        // The end of the text ends any escape sequence, as it does for the whole text.
        let rest = text::strip_controls(&original[self.through..]);
        let carriage_return = memchr::memchr(b'\r', rest.as_bytes()).is_some();
        self.note(carriage_return, important_line_starts(&rest));
        let stripped = match (self.stripped, rest) {
            (None, Cow::Borrowed(_)) => None,
            (None, Cow::Owned(rest)) => Some(original[..self.through].to_string() + &rest),
            (Some(mut all), rest) => {
                all.push_str(&rest);
                Some(all)
            }
        };
        if !self.carriage_return {
            return CapturedText {
                original,
                cleaned: stripped,
                important: Some(self.important),
            };
        }
        let plain = stripped.as_deref().unwrap_or(&original);
        let cleaned = text::redrawn(Cow::Borrowed(plain)).into_owned();
        CapturedText {
            original,
            cleaned: Some(cleaned),
            important: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_text_up_to_the_limit_and_no_part_past_it() {
        let capture = Capture::new(10);
        capture.push("hello ");
        capture.push("four");
        capture.push("!");
        assert_eq!(capture.take_text(), None);
        capture.push("");
        assert_eq!(capture.take_text(), None);
        let capture = Capture::new(10);
        capture.push("hello ");
        capture.push("four");
        assert_eq!(capture.take_text().as_deref(), Some("hello four"));
        assert_eq!(capture.take_text().as_deref(), Some(""));
        capture.push("again");
        assert_eq!(capture.take_text().as_deref(), Some("again"));
    }

    /// The preparation of `chunks`, pushed one by one: the cleaned text and the important lines.
    fn prepared(chunks: &[&str], batch: usize, inline: bool) -> (String, Vec<usize>) {
        let capture = Capture::with_batch(1 << 20, batch, inline);
        for chunk in chunks {
            capture.push(chunk);
        }
        let captured = capture.take().expect("within the limit");
        assert_eq!(captured.original, chunks.concat());
        let cleaned = captured.transcript().to_string();
        let important = captured
            .important
            .unwrap_or_else(|| important_line_starts(&cleaned));
        (cleaned, important)
    }

    /// What the whole text gives, prepared at once.
    fn whole(text: &str) -> (String, Vec<usize>) {
        let cleaned = text::clean(text);
        let important = important_line_starts(&cleaned);
        (cleaned.into_owned(), important)
    }

    #[test]
    fn a_transcript_prepared_as_it_streams_is_the_whole_one_prepared() {
        let transcripts = [
            "plain\nerror: one\nlast without end",
            "\x1b[1mbold\x1b[0m error\n\x1b[32m✓\x1b[0m passed\n",
            // An OSC string across a line end: the preparation starts again from the whole.
            "\x1b]0;title\nstill title\x07 error here\nnext\n",
            // A CSI cut by the end of a batch, and one cut by the end of the text.
            "a\x1b[1\n;2m error\nb\n\x1b[",
            // Carriage returns redraw lines, and empty blank ones everywhere.
            "   \nfailed 10%\rfailed 100%\n\x1b[2Kdone\r\n  \nerror\n",
            "",
            "\n\n\n",
        ];
        for text in transcripts {
            for size in 1..=text.len().max(1) {
                let mut chunks = Vec::new();
                let mut rest = text;
                while !rest.is_empty() {
                    let mut cut = size.min(rest.len());
                    while !rest.is_char_boundary(cut) {
                        cut += 1;
                    }
                    chunks.push(&rest[..cut]);
                    rest = &rest[cut..];
                }
                // Batch by batch as the chunks come (from any size), by the taker alone, and by
                // the preparer's thread, whose batches fall where its timing puts them.
                for (batch, inline) in [(1, true), (7, true), (BATCH, true), (1, false)] {
                    assert_eq!(
                        prepared(&chunks, batch, inline),
                        whole(text),
                        "{text:?} in chunks of {size}, batches from {batch}, inline {inline}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_capture_that_overflows_or_is_dropped_while_lines_are_prepared_lets_go() {
        let line = "\x1b[31merror\x1b[0m: something went wrong here\n".repeat(1000);
        let capture = Capture::with_batch(line.len() * 3, 1, false);
        for _ in 0..4 {
            capture.push(&line);
        }
        assert!(capture.take().is_none(), "overflowed");
        let capture = Capture::with_batch(1 << 20, 1, false);
        capture.push(&line);
        drop(capture);
        // The preparer is free for the next capture.
        let capture = Capture::with_batch(1 << 20, 1, false);
        capture.push(&line);
        let captured = capture.take().expect("within the limit");
        assert_eq!(captured.important.map(|starts| starts.len()), Some(1000));
    }

    #[test]
    fn an_unchanged_transcript_is_not_copied() {
        let capture = Capture::new(100);
        capture.push("one\ntwo\n");
        capture.push("three");
        let captured = capture.take().expect("within the limit");
        assert_eq!(captured.cleaned, None);
        assert_eq!(captured.important, Some(Vec::new()));
    }
}
