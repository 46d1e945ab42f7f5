//! [`History`]: the record of a persistent shell's runs, kept as they happen — command, where it
//! ran, the streamed transcript, how it ended, when — for `Shell.history()` and for mirrors that
//! replay it and then follow it live.
//!
//! Memory is bounded three times ([`HistoryLimits`]): at most `entries` entries (the oldest go
//! first); each transcript keeps only its last [`OUTPUT_BUDGET`] bytes in a [`TranscriptBuffer`],
//! which drops output from the front and counts what it dropped — a run printing a gigabyte holds
//! about the budget; and all transcripts together keep at most `bytes` bytes, the oldest output
//! dropped first and counted in its entry's `truncated_bytes`, so that a hundred runs printing
//! megabytes hold the total budget rather than a hundred times the per-entry one.
//!
//! Observers ([`History::observe`]) are told of every start, chunk and end while the history's
//! lock is held, and are added under that same lock after reading the entries: what an observer
//! read and what it is told next meet at one point of the stream, nothing missing and nothing
//! twice.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use shellwright_io::SharedText;

use shellwright_io::lock;
use shellwright_proc::Outcome;

/// Entries kept unless the shell says otherwise.
pub const DEFAULT_HISTORY_LIMIT: usize = 100;
/// Bytes of transcript kept across all entries unless the shell says otherwise.
pub const DEFAULT_HISTORY_BYTES: usize = 32 << 20;
/// Bytes of transcript kept per entry: the largest replay a mirror asks for (10 000 lines of
/// 200 bytes).
pub const OUTPUT_BUDGET: usize = 10_000 * 200;

/// The last `budget` bytes of a text stream, cut on a character boundary, and how many bytes were
/// dropped before them. Large chunks are kept as they came, shared with the consumer they were
/// streamed to, so a fast stream is never copied here; small ones are copied together into pieces
/// of up to [`PIECE`] bytes. While text comes, storage grows with it and stays within about twice
/// the budget (a shared chunk is at least half full); [`shrink`](Self::shrink) then cuts it to the
/// text's size.
#[derive(Debug)]
pub struct TranscriptBuffer {
    budget: usize,
    /// The kept text, oldest first: all of it but the first `front` bytes of the first piece.
    pieces: VecDeque<Piece>,
    front: usize,
    /// Bytes kept.
    len: usize,
    /// Bytes dropped from the front or never stored.
    dropped: u64,
}

/// Chunks at least this long are kept shared; shorter text is copied into pieces this long.
const PIECE: usize = 16 << 10;

#[derive(Debug)]
enum Piece {
    Shared(SharedText),
    Copied(String),
}

impl Piece {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Shared(text) => text.as_bytes(),
            Self::Copied(text) => text.as_bytes(),
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Self::Shared(text) => text.capacity(),
            Self::Copied(text) => text.capacity(),
        }
    }
}

impl TranscriptBuffer {
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            pieces: VecDeque::new(),
            front: 0,
            len: 0,
            dropped: 0,
        }
    }

    /// Adds `chunk` without copying it when it is large and not mostly spare storage.
    pub fn push_shared(&mut self, chunk: &SharedText) {
        let shareable = chunk.len() >= PIECE && chunk.capacity() <= 2 * chunk.len();
        if !shareable || chunk.len() >= self.budget {
            return self.push(chunk);
        }
        self.len += chunk.len();
        self.pieces.push_back(Piece::Shared(chunk.clone()));
        self.trim();
    }

    /// Adds a copy of `text`.
    pub fn push(&mut self, mut text: &str) {
        if text.len() >= self.budget {
            // Only its end is kept: drop everything before, without copying it.
            let (tail, cut) = tail_within(text, self.budget);
            self.dropped += (self.len + cut) as u64;
            self.pieces.clear();
            (self.front, self.len) = (0, 0);
            text = tail;
        }
        if text.is_empty() {
            return;
        }
        self.len += text.len();
        match self.pieces.back_mut() {
            Some(Piece::Copied(last)) if last.len() + text.len() <= PIECE => {
                if last.capacity() - last.len() < text.len() {
                    // Geometric growth, but never past a piece.
                    let target = (last.len() + text.len())
                        .max(last.capacity() * 2)
                        .min(PIECE);
                    last.reserve_exact(target - last.len());
                }
                last.push_str(text);
            }
            _ => self.pieces.push_back(Piece::Copied(text.to_string())),
        }
        self.trim();
    }

    /// Drops bytes from the front until the budget holds what is kept.
    fn trim(&mut self) {
        while self.len > self.budget {
            let excess = self.len - self.budget;
            let first = self
                .pieces
                .front()
                .map_or(0, |p| p.bytes().len() - self.front);
            let cut = first.min(excess);
            if cut == first {
                self.pieces.pop_front();
                self.front = 0;
            } else {
                self.front += cut;
            }
            self.len -= cut;
            self.dropped += cut as u64;
        }
    }

    /// The kept text and the bytes dropped before it. When the cut fell inside a character, the
    /// rest of that character is dropped too.
    pub fn text(&self) -> (String, u64) {
        let mut joined = Vec::with_capacity(self.len);
        for (i, piece) in self.pieces.iter().enumerate() {
            let skip = if i == 0 { self.front } else { 0 };
            joined.extend_from_slice(&piece.bytes()[skip..]);
        }
        let partial = if self.dropped > 0 {
            joined.iter().take_while(|&&b| is_continuation(b)).count()
        } else {
            0
        };
        // In place: `split_off` would allocate even at 0.
        joined.drain(..partial);
        let text = match String::from_utf8(joined) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        (text, self.dropped + partial as u64)
    }

    /// Bytes of storage held.
    pub fn capacity(&self) -> usize {
        self.pieces.iter().map(Piece::capacity).sum()
    }

    /// Bytes of text kept.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops the first `bytes` bytes kept (all of them when fewer), counting them as dropped.
    pub fn drop_front(&mut self, bytes: usize) {
        let budget = self.budget;
        self.budget = self.len.saturating_sub(bytes);
        self.trim();
        self.budget = budget;
    }

    /// Gives back storage the text does not use (once no more text will come): the kept text
    /// becomes strings of its own size, no longer holding the chunks it shared, in pieces of at
    /// most [`PIECE`] bytes so that dropping its front later frees storage as it goes.
    pub fn shrink(&mut self) {
        // Most runs print less than a piece: kept whole, that piece only gives back its spare
        // storage (none, when it was copied at once), instead of being copied twice over.
        if let (0, 1, Some(Piece::Copied(only))) =
            (self.front, self.pieces.len(), self.pieces.front_mut())
            && only.len() <= PIECE
        {
            only.shrink_to_fit();
            return;
        }
        let (text, dropped) = self.text();
        self.pieces = VecDeque::new();
        (self.front, self.len, self.dropped) = (0, text.len(), dropped);
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut end = rest.len().min(PIECE);
            while !rest.is_char_boundary(end) {
                end += 1;
            }
            let (piece, after) = rest.split_at(end);
            self.pieces.push_back(Piece::Copied(piece.to_owned()));
            rest = after;
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xc0 == 0x80
}

/// The last `budget` bytes of `text`, cut forward to a character boundary, and the number of bytes
/// cut.
pub fn tail_within(text: &str, budget: usize) -> (&str, usize) {
    if text.len() <= budget {
        return (text, 0);
    }
    let mut cut = text.len() - budget;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    (&text[cut..], cut)
}

/// One run as the history shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    /// 1 for the shell's first run, then counting up.
    pub id: u64,
    pub command: String,
    /// The working directory the command started in.
    pub cwd: PathBuf,
    /// Where the session was when the run ended (after a `cd`, not `cwd`); `None` while running
    /// and when the run never reached the session.
    pub end_cwd: Option<PathBuf>,
    /// The transcript's last [`OUTPUT_BUDGET`] bytes, less what the history's total budget
    /// dropped from its front.
    pub output: String,
    /// Bytes of transcript dropped before `output`.
    pub truncated_bytes: u64,
    /// `None` while running, and when the run was stopped or failed.
    pub outcome: Option<Outcome>,
    /// Milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// `None` while running.
    pub finished_at_ms: Option<u64>,
}

impl HistoryEntry {
    pub fn is_running(&self) -> bool {
        self.finished_at_ms.is_none()
    }
}

/// What happened, as observers are told.
#[derive(Debug)]
pub enum HistoryEvent<'a> {
    /// A run started (its entry has no output yet).
    Started(&'a HistoryEntry),
    /// The running run printed this.
    Output(&'a str),
    /// The running run ended (its entry has its outcome; `output` is not filled in).
    Finished(&'a HistoryEntry),
}

/// Told of each event, under the history's lock: it must not call back into the history.
pub type Observer = Box<dyn FnMut(&HistoryEvent) + Send>;

/// How much a [`History`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Entries, the running one included (at least one).
    pub entries: usize,
    /// Bytes of transcript across all entries; each entry also keeps at most [`OUTPUT_BUDGET`].
    pub bytes: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        Self {
            entries: DEFAULT_HISTORY_LIMIT,
            bytes: DEFAULT_HISTORY_BYTES,
        }
    }
}

/// A shell's runs; cloning gives another handle to the same record.
#[derive(Clone)]
pub struct History {
    state: Arc<Mutex<State>>,
}

struct State {
    limits: HistoryLimits,
    next_id: u64,
    finished: VecDeque<Stored>,
    /// Bytes of transcript the finished entries keep.
    finished_bytes: usize,
    /// The finished entries before this index keep no transcript: where the total budget cuts
    /// next.
    first_kept: usize,
    running: Option<Stored>,
    observers: Vec<(u64, Observer)>,
    next_observer: u64,
}

/// An entry whose transcript is still in its ring.
struct Stored {
    entry: HistoryEntry,
    output: TranscriptBuffer,
}

impl Stored {
    fn snapshot(&self) -> HistoryEntry {
        let (output, truncated_bytes) = self.output.text();
        HistoryEntry {
            output,
            truncated_bytes,
            ..self.entry.clone()
        }
    }
}

impl History {
    /// A history that keeps at most `limits.entries` entries (at least one: the running run's)
    /// and `limits.bytes` bytes of transcript.
    pub fn new(limits: HistoryLimits) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                limits: HistoryLimits {
                    entries: limits.entries.max(1),
                    bytes: limits.bytes,
                },
                next_id: 1,
                finished: VecDeque::new(),
                finished_bytes: 0,
                first_kept: 0,
                running: None,
                observers: Vec::new(),
                next_observer: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The entries, oldest first, the running one last.
    pub fn entries(&self) -> Vec<HistoryEntry> {
        self.lock().entries()
    }

    /// A run of `command` started in `cwd`. Runs of one shell are serialised, so there is at most
    /// one running entry; a start while one runs finishes it first, without a result.
    pub fn start(&self, command: impl Into<String>, cwd: PathBuf) {
        let mut state = self.lock();
        state.finish(None, None);
        // The running entry counts toward the limit.
        while state.finished.len() >= state.limits.entries {
            state.pop_oldest();
        }
        let id = state.next_id;
        state.next_id += 1;
        let stored = Stored {
            entry: HistoryEntry {
                id,
                command: command.into(),
                cwd,
                end_cwd: None,
                output: String::new(),
                truncated_bytes: 0,
                outcome: None,
                started_at_ms: now_ms(),
                finished_at_ms: None,
            },
            output: TranscriptBuffer::new(OUTPUT_BUDGET.min(state.limits.bytes)),
        };
        state.notify(&HistoryEvent::Started(&stored.entry));
        state.running = Some(stored);
    }

    /// The running run printed `text` (ignored when nothing runs).
    pub fn output(&self, text: &SharedText) {
        let mut state = self.lock();
        let Some(running) = &mut state.running else {
            return;
        };
        running.output.push_shared(text);
        state.keep_within_budget();
        state.notify(&HistoryEvent::Output(text));
    }

    /// The running run ended: `outcome` is `None` when it failed without one; `end_cwd` is where
    /// it left the session.
    pub fn finish(&self, outcome: Option<Outcome>, end_cwd: Option<PathBuf>) {
        self.lock().finish(outcome, end_cwd);
    }

    /// Calls `open` with the entries and adds the observer it returns, under one lock: the
    /// observer is told of everything that happens after what `open` saw. Dropping the returned
    /// handle removes it.
    pub fn observe(&self, open: impl FnOnce(&[HistoryEntry]) -> Observer) -> Observation {
        let mut state = self.lock();
        let observer = open(&state.entries());
        let id = state.next_observer;
        state.next_observer += 1;
        state.observers.push((id, observer));
        Observation {
            history: Arc::downgrade(&self.state),
            id,
        }
    }
}

impl State {
    fn entries(&self) -> Vec<HistoryEntry> {
        self.finished
            .iter()
            .chain(&self.running)
            .map(Stored::snapshot)
            .collect()
    }

    fn notify(&mut self, event: &HistoryEvent) {
        for (_, observer) in &mut self.observers {
            observer(event);
        }
    }

    fn finish(&mut self, outcome: Option<Outcome>, end_cwd: Option<PathBuf>) {
        let Some(mut stored) = self.running.take() else {
            return;
        };
        stored.entry.outcome = outcome;
        stored.entry.end_cwd = end_cwd;
        stored.entry.finished_at_ms = Some(now_ms().max(stored.entry.started_at_ms));
        stored.output.shrink();
        self.notify(&HistoryEvent::Finished(&stored.entry));
        self.finished_bytes += stored.output.len();
        self.finished.push_back(stored);
        self.keep_within_budget();
    }

    fn pop_oldest(&mut self) {
        if let Some(oldest) = self.finished.pop_front() {
            self.finished_bytes -= oldest.output.len();
            self.first_kept = self.first_kept.saturating_sub(1);
        }
    }

    /// Drops the oldest finished output until all transcripts fit the total budget (the running
    /// entry's own budget is no larger, so it always fits alone).
    fn keep_within_budget(&mut self) {
        let running = self.running.as_ref().map_or(0, |r| r.output.len());
        let mut excess = (self.finished_bytes + running).saturating_sub(self.limits.bytes);
        while excess > 0 {
            let Some(oldest) = self.finished.get_mut(self.first_kept) else {
                return;
            };
            let cut = oldest.output.len().min(excess);
            oldest.output.drop_front(cut);
            self.finished_bytes -= cut;
            excess -= cut;
            if oldest.output.is_empty() {
                self.first_kept += 1;
            }
        }
    }
}

/// An observer's registration; dropping it removes the observer.
pub struct Observation {
    history: std::sync::Weak<Mutex<State>>,
    id: u64,
}

impl Drop for Observation {
    fn drop(&mut self) {
        if let Some(state) = self.history.upgrade() {
            let mut state = lock(&state);
            state.observers.retain(|(id, _)| *id != self.id);
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn finished(code: i32) -> Outcome {
        Outcome::Exited(code)
    }

    fn limits(entries: usize) -> HistoryLimits {
        HistoryLimits {
            entries,
            ..HistoryLimits::default()
        }
    }

    /// Pushes each step's text into a buffer of `budget` bytes and checks what it then holds.
    fn check(budget: usize, steps: &[(&str, &str, u64)]) {
        let mut buffer = TranscriptBuffer::new(budget);
        for (push, kept, dropped) in steps {
            buffer.push(push);
            assert_eq!(
                buffer.text(),
                (kept.to_string(), *dropped),
                "after {push:?}"
            );
        }
    }

    #[test]
    fn keeps_the_last_budget_bytes_and_counts_the_rest() {
        check(
            10,
            &[
                ("abc", "abc", 0),
                ("", "abc", 0),
                ("defghij", "abcdefghij", 0),
                ("kl", "cdefghijkl", 2),
                ("mnopqrstuvwx", "opqrstuvwx", 14),
                ("yz!", "rstuvwxyz!", 17),
            ],
        );
    }

    #[test]
    fn cuts_on_a_character_boundary() {
        // "é" is 2 bytes, "日" 3: a cut inside one drops the rest of it too.
        check(4, &[("aé日", "日", 3), ("é", "é", 6)]);
        check(5, &[("日日", "日", 3)]);
    }

    #[test]
    fn storage_stays_within_the_budget_for_a_gigabyte() {
        let budget = 1 << 20;
        let mut buffer = TranscriptBuffer::new(budget);
        let chunk = "0123456789abcdef".repeat(4096); // 64 KiB
        let pushes = (1usize << 30) / chunk.len();
        for _ in 0..pushes {
            buffer.push(&chunk);
            // The oldest piece may be partly dropped.
            assert!(
                buffer.capacity() < budget + chunk.len(),
                "{}",
                buffer.capacity()
            );
        }
        let (text, dropped) = buffer.text();
        assert_eq!(text.len(), budget);
        assert_eq!(dropped, (1u64 << 30) - budget as u64);
        assert!(text.starts_with("0123456789abcdef"));
    }

    #[test]
    fn storage_grows_with_the_text() {
        let mut buffer = TranscriptBuffer::new(OUTPUT_BUDGET);
        buffer.push("hi\n");
        assert!(buffer.capacity() < 64, "{}", buffer.capacity());
        buffer.shrink();
        assert_eq!(buffer.capacity(), 3);
    }

    proptest! {
        #[test]
        fn is_the_longest_suffix_on_a_boundary(
            chunks in proptest::collection::vec("[a-zé日\u{1F600}\n]{0,12}", 0..20),
            budget in 1usize..24,
        ) {
            let mut buffer = TranscriptBuffer::new(budget);
            let mut all = String::new();
            for chunk in &chunks {
                buffer.push(chunk);
                all.push_str(chunk);
            }
            let (text, dropped) = buffer.text();
            let (expected, cut) = tail_within(&all, budget);
            prop_assert_eq!(text.as_str(), expected);
            prop_assert_eq!(dropped, cut as u64);
            buffer.shrink();
            prop_assert_eq!(buffer.text(), (text.clone(), dropped));
            prop_assert_eq!(buffer.capacity(), text.len());
        }

        /// Large chunks, some kept shared, among small copied ones.
        #[test]
        fn shared_chunks_keep_the_same_suffix(
            chunks in proptest::collection::vec(
                ("[aé日\u{1F600}\n]{1,6}", 0usize..12_000, any::<bool>()),
                0..12,
            ),
            budget in PIECE..4 * PIECE,
        ) {
            let mut buffer = TranscriptBuffer::new(budget);
            let mut all = String::new();
            let mut largest = 0;
            for (pattern, repeat, shared) in &chunks {
                let chunk = SharedText::from(pattern.repeat(*repeat));
                if *shared {
                    buffer.push_shared(&chunk);
                } else {
                    buffer.push(&chunk);
                }
                all.push_str(&chunk);
                largest = largest.max(chunk.capacity());
                prop_assert!(buffer.capacity() < 2 * budget + largest.max(PIECE), "{}", buffer.capacity());
            }
            let (text, dropped) = buffer.text();
            let (expected, cut) = tail_within(&all, budget);
            prop_assert_eq!(text.as_str(), expected);
            prop_assert_eq!(dropped, cut as u64);
            buffer.shrink();
            prop_assert_eq!(buffer.text(), (text.clone(), dropped));
            prop_assert_eq!(buffer.capacity(), text.len());
        }
    }

    #[test]
    fn tail_within_cuts_forward_to_a_boundary() {
        assert_eq!(tail_within("abc", 5), ("abc", 0));
        assert_eq!(tail_within("abcdef", 2), ("ef", 4));
        assert_eq!(tail_within("a日b", 3), ("b", 4));
        assert_eq!(tail_within("a日b", 4), ("日b", 1));
    }

    #[test]
    fn records_runs_oldest_first_the_running_one_last() {
        let history = History::new(limits(3));
        history.start("echo a", PathBuf::from("/a"));
        history.output(&"a\n".into());
        history.finish(Some(finished(0)), None);
        history.start("sleep 9", PathBuf::from("/b"));
        history.output(&"x".into());
        let entries = history.entries();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].id, 1);
        assert_eq!(entries[0].command, "echo a");
        assert_eq!(entries[0].cwd, PathBuf::from("/a"));
        assert_eq!(entries[0].output, "a\n");
        assert_eq!(entries[0].outcome, Some(finished(0)));
        assert!(entries[0].finished_at_ms >= Some(entries[0].started_at_ms));
        assert_eq!(entries[1].id, 2);
        assert_eq!(entries[1].output, "x");
        assert!(entries[1].is_running());
        assert_eq!(entries[1].outcome, None);
    }

    #[test]
    fn keeps_at_most_limit_entries_counting_the_running_one() {
        let history = History::new(limits(2));
        for i in 0..5 {
            history.start(format!("c{i}"), PathBuf::from("/"));
            history.finish(Some(finished(i)), None);
        }
        let ids: Vec<u64> = history.entries().iter().map(|e| e.id).collect();
        assert_eq!(ids, [4, 5]);
        history.start("c5", PathBuf::from("/"));
        let ids: Vec<u64> = history.entries().iter().map(|e| e.id).collect();
        assert_eq!(ids, [5, 6]);
    }

    /// Each entry's (output, truncated bytes).
    fn transcripts(history: &History) -> Vec<(String, u64)> {
        let entries = history.entries();
        entries
            .into_iter()
            .map(|e| (e.output, e.truncated_bytes))
            .collect()
    }

    #[test]
    fn the_total_budget_drops_the_oldest_output_first_and_counts_it() {
        let history = History::new(HistoryLimits {
            entries: 10,
            bytes: 10,
        });
        for text in ["aaaa", "bbbb"] {
            history.start("c", PathBuf::from("/"));
            history.output(&text.into());
            history.finish(Some(finished(0)), None);
        }
        history.start("c", PathBuf::from("/"));
        history.output(&"ccc".into());
        // 11 bytes: one of the oldest goes.
        assert_eq!(
            transcripts(&history),
            [("aaa".into(), 1), ("bbbb".into(), 0), ("ccc".into(), 0)]
        );
        history.output(&"cccc".into());
        assert_eq!(
            transcripts(&history),
            [("".into(), 4), ("bbb".into(), 1), ("ccccccc".into(), 0)]
        );
        // The running entry alone keeps at most the total budget.
        history.output(&"dddddddd".into());
        assert_eq!(
            transcripts(&history),
            [("".into(), 4), ("".into(), 4), ("ccdddddddd".into(), 5)]
        );
        history.finish(Some(finished(0)), None);
        history.start("c", PathBuf::from("/"));
        history.output(&"e".into());
        assert_eq!(transcripts(&history)[2], ("cdddddddd".into(), 6));
    }

    #[test]
    fn the_total_budget_frees_storage_of_dropped_output() {
        let budget = 4 * PIECE;
        let history = History::new(HistoryLimits {
            entries: 100,
            bytes: budget,
        });
        let chunk = SharedText::from("x".repeat(3 * PIECE));
        for _ in 0..50 {
            history.start("c", PathBuf::from("/"));
            history.output(&chunk);
            history.finish(Some(finished(0)), None);
        }
        let state = history.lock();
        let stored: usize = state.finished.iter().map(|s| s.output.capacity()).sum();
        let kept: usize = state.finished.iter().map(|s| s.output.len()).sum();
        assert_eq!(kept, budget);
        assert_eq!(state.finished_bytes, budget);
        // At most one piece partly dropped.
        assert!(stored < budget + PIECE, "{stored}");
    }

    #[test]
    fn output_without_a_running_entry_is_ignored() {
        let history = History::new(limits(2));
        history.output(&"stray".into());
        history.finish(None, None);
        assert!(history.entries().is_empty());
    }

    #[test]
    fn observers_see_what_follows_their_replay() {
        let history = History::new(limits(10));
        history.start("one", PathBuf::from("/"));
        history.output(&"early ".into());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let observation = history.observe(|entries| {
            log.lock()
                .expect("lock")
                .push(format!("replay {}", entries[0].output));
            let log = Arc::clone(&log);
            Box::new(move |event| {
                let line = match event {
                    HistoryEvent::Started(e) => format!("start {}", e.command),
                    HistoryEvent::Output(text) => format!("out {text}"),
                    HistoryEvent::Finished(e) => {
                        format!("end {:?}", e.outcome.and_then(Outcome::exit_code))
                    }
                };
                log.lock().expect("lock").push(line);
            })
        });
        history.output(&"late".into());
        history.finish(Some(finished(3)), None);
        history.start("two", PathBuf::from("/"));
        drop(observation);
        history.output(&"unseen".into());
        assert_eq!(
            *seen.lock().expect("lock"),
            ["replay early ", "out late", "end Some(3)", "start two"]
        );
    }
}
