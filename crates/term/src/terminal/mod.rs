//! The terminal model: an emulator with scrollback, snapshots, a query responder and command
//! tracking, driven by the bytes a program writes to its terminal.
//!
//! [`Terminal::feed`] takes each chunk read from a pseudo-terminal and returns the bytes to pass on
//! to viewers (the chunk itself, borrowed, unless an answered query was cut out of it or the tail of
//! a possibly-query sequence is being held for the next chunk) and the replies owed to the program.
//! Everything else is read back on demand: [`Terminal::screen`], [`Terminal::styled_lines`],
//! [`Terminal::changed_rows`], [`Terminal::snapshot`], [`Terminal::commands`],
//! [`Terminal::prompt_showing`].
//!
//! Between the scanner and the emulator sit the corrections that make the emulator cost what the
//! input is worth and behave as xterm does: counts cut to the screen (`bounds`), tab stops kept for
//! snapshots, and `CSI ? 1049 l` restoring the saved cursor even on the normal screen.

#[macro_use]
mod handler_calls;

mod actions;
mod alternate;
mod bounds;
mod commands;
mod direct;
mod engine;
mod modes;
mod print_runs;
mod queries;
mod rows;
mod scanner;
mod snapshot;
mod styles;

use std::borrow::Cow;

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::TermMode;

pub use commands::{CommandRecord, IntegrationMark, MAX_OUTPUT_BYTES, MAX_RECORDS, escape_633};
pub use modes::{MouseTracking, TerminalModes};
pub use queries::{PRIMARY_ATTRIBUTES, SECONDARY_ATTRIBUTES, TERTIARY_ATTRIBUTES};
pub use rows::{Scrolled, ShownRow};
pub use styles::{RunColor, Style, StyledRun};

use actions::{Action, TabChange, action, default_tab_stops};
use commands::{CommandTracker, looks_like_prompt};
use engine::{Engine, row_text};
use queries::{ReplyContext, may_be_query};
use scanner::{Event, Origin, Scanner};

/// Size limits applied by [`TerminalOptions`] and [`Terminal::resize`].
pub const MIN_COLS: u16 = 2;
pub const MAX_COLS: u16 = 1000;
pub const MIN_ROWS: u16 = 1;
pub const MAX_ROWS: u16 = 1000;
pub const MAX_SCROLLBACK: usize = 1_000_000;
pub const DEFAULT_SCROLLBACK: usize = 10_000;
/// Longest unfinished sequence held back from viewers while it may still be a query.
pub const HOLD_LIMIT: usize = 1024;

/// How to build a [`Terminal`]; sizes are clamped to the limits above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalOptions {
    pub cols: u16,
    pub rows: u16,
    /// Lines of scrollback kept for the primary screen.
    pub scrollback: usize,
    /// Answer terminal queries (and cut them out of the passthrough stream).
    pub answer_queries: bool,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        Self {
            cols: 80,
            rows: 24,
            scrollback: DEFAULT_SCROLLBACK,
            answer_queries: true,
        }
    }
}

/// What one [`Terminal::feed`] produced.
#[derive(Debug, PartialEq, Eq)]
pub struct Feed<'a> {
    /// The bytes for viewers: the input minus answered queries, minus the held-back tail of an
    /// unfinished sequence that may still be a query (it follows in a later feed's passthrough).
    pub passthrough: Cow<'a, [u8]>,
    /// Replies owed to the program (to be written to the pseudo-terminal), in query order.
    pub replies: Vec<u8>,
}

/// Input as [`Terminal::check`] found it, to be fed with [`Terminal::feed_checked`]; not `Copy`,
/// so that feeding uses it up and it cannot be fed twice.
#[derive(Debug)]
pub struct Checked<'a> {
    input: &'a [u8],
    /// No sequence is under way and the input starts none.
    plain: bool,
}

impl Checked<'_> {
    /// Whether feeding it passes it on exactly as it is, with no replies: no sequence is under way
    /// and the input starts none (it has no ESC), so nothing in it can be an answered query, a
    /// rewritten sequence or a held-back tail. A reader can then hand the bytes on before feeding
    /// them.
    pub fn passes_unchanged(&self) -> bool {
        self.plain
    }
}

/// The cursor, 0-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CursorState {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}

/// What the screen shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalScreen {
    pub cols: u16,
    pub rows: u16,
    /// One entry per visible row (`len() == rows`), trailing blanks trimmed.
    pub lines: Vec<String>,
    pub cursor: CursorState,
    pub title: String,
    pub alt_screen: bool,
    pub modes: TerminalModes,
    /// BEL characters rung since the terminal was made (a BEL that ends an OSC string is its
    /// terminator, not a bell).
    pub bells: u64,
}

/// A terminal emulator with scrollback, query answers and command tracking. No I/O.
pub struct Terminal {
    engine: Engine,
    scanner: Scanner,
    tracker: CommandTracker,
    answer_queries: bool,
    /// DECSTBM region (1-based top and bottom), `None` for the whole screen. alacritty keeps its
    /// own private, so it is tracked here for snapshots and CPR in origin mode.
    scroll_region: Option<(u16, u16)>,
    /// Whether the cursor's row looked like a prompt after the last feed or resize (the prompt
    /// fallback; kept so that reading it needs no parsing).
    prompt_at_cursor: bool,
    /// The character REP repeats: the last one printed (the emulator keeps its own privately).
    last_printed: Option<char>,
    /// The run of one character the emulator was last given, for REP (see [`bounds::RepeatRun`]).
    repeat_run: bounds::RepeatRun,
    /// Horizontal tab stops by column, as the program set them (alacritty keeps its own privately);
    /// snapshots carry them when they differ from the default of every 8 columns.
    tab_stops: Vec<bool>,
    /// The scrollback was cleared or reflowed since [`take_scrolled`](Self::take_scrolled) last
    /// looked (see [`Scrolled::realigned`]).
    scrollback_realigned: bool,
    /// The rows as [`changed_rows`](Self::changed_rows) last saw them.
    damage: styles::Damage,
}

impl Terminal {
    pub fn new(options: TerminalOptions) -> Self {
        let (cols, rows) = clamp_size(options.cols, options.rows);
        let scrollback = options.scrollback.min(MAX_SCROLLBACK);
        Self {
            engine: Engine::new(cols, rows, scrollback),
            scanner: Scanner::default(),
            tracker: CommandTracker::default(),
            answer_queries: options.answer_queries,
            scroll_region: None,
            prompt_at_cursor: false,
            last_printed: None,
            repeat_run: bounds::RepeatRun::default(),
            tab_stops: default_tab_stops(cols),
            scrollback_realigned: false,
            damage: styles::Damage::default(),
        }
    }

    /// Looks at `input` against the terminal's current state, for a reader that acts on the answer
    /// before it feeds `input` with [`feed_checked`](Self::feed_checked). Costs one `memchr`.
    pub fn check<'a>(&self, input: &'a [u8]) -> Checked<'a> {
        Checked {
            input,
            plain: !self.scanner.in_sequence() && starts_no_sequence(input),
        }
    }

    /// Processes bytes written by the program. Never panics, whatever the bytes.
    pub fn feed<'a>(&mut self, input: &'a [u8]) -> Feed<'a> {
        let from_ground = !self.scanner.in_sequence();
        self.feed_plain_if(input, || from_ground && starts_no_sequence(input))
    }

    /// [`feed`](Self::feed) for input just [checked](Self::check), with nothing fed in between:
    /// what the check found is not worked out again.
    pub fn feed_checked<'a>(&mut self, checked: Checked<'a>) -> Feed<'a> {
        debug_assert_eq!(
            checked.plain,
            self.check(checked.input).plain,
            "the terminal was fed between check and feed"
        );
        self.feed_plain_if(checked.input, || checked.plain)
    }

    /// The feed; `plain` says whether `input` passes unchanged (asked only when it matters).
    fn feed_plain_if<'a>(&mut self, input: &'a [u8], plain: impl FnOnce() -> bool) -> Feed<'a> {
        let mut out = Passthrough::new(input);
        let mut replies = Vec::new();
        let mut pos = 0;
        // Resizing needs `&mut self`, so the size stays the same for the whole feed.
        let size = self.size();
        while let Some(event) = self.scanner.next(input, &mut pos) {
            let action = match event {
                Event::Text(text) => {
                    self.tracker.text(text);
                    self.repeat_run.text(text);
                    if let Some(c) = bounds::last_printed(text) {
                        self.last_printed = Some(c);
                    }
                    continue;
                }
                Event::Released => {
                    self.repeat_run.clear();
                    out.emit_extra(&mut self.engine, self.scanner.held());
                    self.scanner.clear_held();
                    continue;
                }
                Event::Sequence(sequence) => action(&sequence, self.answer_queries, size),
            };
            if matches!(action, Action::Nothing) && self.scanner.origin() != Origin::Held {
                // Most sequences: what `apply` does for them, without moving the action around.
                self.repeat_run.clear();
                continue;
            }
            self.apply(action, pos, &mut out, &mut replies);
        }
        let hold_from = self.hold_point(input, &mut out);
        out.emit_input(&mut self.engine, hold_from);
        if hold_from < input.len() {
            self.scanner.hold(&input[hold_from..]);
        }
        if !self.tracker.marks_seen() {
            // Plain text that ends with a carriage return (and line feed) leaves the cursor in
            // column 0, with nothing before it that could be a prompt: the check, which would
            // parse the deferred text to read the cursor's row, is not needed (an echoed line).
            let at_line_start = (input.ends_with(b"\r") || input.ends_with(b"\r\n")) && plain();
            self.prompt_at_cursor = !at_line_start && self.check_prompt_at_cursor();
            self.tracker.prompt_check(self.prompt_at_cursor);
        }
        Feed {
            passthrough: out.finish(),
            replies,
        }
    }

    fn apply(
        &mut self,
        action: Action,
        end: usize,
        out: &mut Passthrough<'_>,
        replies: &mut Vec<u8>,
    ) {
        let origin = self.scanner.origin();
        if !matches!(action, Action::Repeat(_)) {
            self.repeat_run.clear();
        }
        if let Action::Answer(query) = action {
            // Bring the emulator up to the query's point so the reply reflects the state there.
            match origin {
                Origin::Here(start) => out.emit_input(&mut self.engine, start),
                Origin::Held => {}
                Origin::Passed => out.emit_input(&mut self.engine, end),
            }
            self.engine.settle();
            let context = ReplyContext {
                engine: &self.engine,
                scroll_region: self.scroll_region,
            };
            queries::reply(&query, &context, replies);
            if origin != Origin::Passed {
                if self.engine.inside_sequence() {
                    // The query's ESC ended what was open (a string, a sequence): with the query
                    // cut out, ST ends it the same way, for the emulator and for viewers.
                    out.emit_extra(&mut self.engine, b"\x1b\\");
                }
                out.skip_to(end);
                self.scanner.clear_held();
            }
            return;
        }
        let action = match action {
            Action::ScrollRegion(top, bottom, Some(bytes)) => {
                self.rewrite(origin, end, &bytes, out);
                Action::ScrollRegion(top, bottom, None)
            }
            other => other,
        };
        match action {
            Action::Rewrite(bytes) => return self.rewrite(origin, end, &bytes, out),
            Action::Repeat(params) => {
                self.bring_to_start(origin, out);
                let context = self.repeat_context();
                let full_region = self.scroll_region.is_none();
                let bounded =
                    self.repeat_run
                        .repeat(&params, &context, self.last_printed, full_region);
                return match bounded {
                    Some(bytes) => self.rewrite(origin, end, &bytes, out),
                    None => out.emit_input(&mut self.engine, end),
                };
            }
            Action::LeaveAlternateScreen => {
                self.bring_to_start(origin, out);
                let primary = !self.engine.mode().contains(TermMode::ALT_SCREEN);
                out.emit_input(&mut self.engine, end);
                if primary {
                    // DECRC, for the emulator only: viewers got the sequence itself.
                    self.engine.advance(b"\x1b8");
                }
                return;
            }
            Action::Tabs(change) => {
                self.bring_to_start(origin, out);
                out.emit_input(&mut self.engine, end);
                self.change_tabs(change);
                return;
            }
            _ => {}
        }
        if origin == Origin::Held {
            out.emit_extra(&mut self.engine, self.scanner.held());
            self.scanner.clear_held();
        }
        match action {
            Action::Mark(mark) => self.tracker.mark(mark),
            Action::ScrollRegion(top, bottom, _) => {
                let rows = self.engine.rows();
                let bottom = bottom.unwrap_or(rows).min(rows);
                // Same rule as the engine: an empty region is ignored.
                if top < bottom {
                    self.scroll_region = (top > 1 || bottom < rows).then_some((top, bottom));
                    self.engine
                        .set_full_scroll_region(self.scroll_region.is_none());
                }
            }
            Action::ClearScrollback => self.scrollback_realigned = true,
            Action::Reset => {
                self.scrollback_realigned = true;
                self.scroll_region = None;
                self.engine.set_full_scroll_region(true);
                self.tab_stops = default_tab_stops(self.engine.cols());
            }
            _ => {}
        }
    }

    /// Brings the emulator (and viewers) up to where the sequence ending now began.
    fn bring_to_start(&mut self, origin: Origin, out: &mut Passthrough<'_>) {
        match origin {
            Origin::Here(start) => out.emit_input(&mut self.engine, start),
            Origin::Held => {
                out.emit_extra(&mut self.engine, self.scanner.held());
                self.scanner.clear_held();
            }
            Origin::Passed => {}
        }
    }

    /// Gives the emulator `bytes` in place of the sequence that ends at `end`; viewers get the
    /// sequence itself.
    fn rewrite(&mut self, origin: Origin, end: usize, bytes: &[u8], out: &mut Passthrough<'_>) {
        match origin {
            Origin::Here(start) => out.emit_input(&mut self.engine, start),
            Origin::Held => {
                // Bring_to_start may already have released them; then this is a no-op.
                out.pass_extra(self.scanner.held());
                self.scanner.clear_held();
            }
            // The emulator holds the sequence's beginning: CAN abandons it.
            Origin::Passed => self.engine.advance(b"\x18"),
        }
        out.pass_input(end);
        self.engine.advance(bytes);
    }

    fn repeat_context(&mut self) -> bounds::RepeatContext {
        use unicode_width::UnicodeWidthChar;
        self.engine.settle();
        let (_, col) = self.engine.cursor();
        let modes = self.engine.mode();
        bounds::RepeatContext {
            cols: self.engine.cols(),
            rows: self.engine.rows(),
            col,
            pending_wrap: self.engine.pending_wrap(),
            insert: modes.contains(TermMode::INSERT),
            auto_wrap: modes.contains(TermMode::LINE_WRAP),
            width: self.last_printed.and_then(|c| c.width()),
            wide_below: modes.contains(TermMode::INSERT) && self.engine.wide_below_cursor(),
        }
    }

    fn change_tabs(&mut self, change: TabChange) {
        self.engine.settle();
        let col = usize::from(self.engine.cursor().1);
        match change {
            TabChange::SetAtCursor | TabChange::ClearAtCursor => {
                if let Some(stop) = self.tab_stops.get_mut(col) {
                    *stop = change == TabChange::SetAtCursor;
                }
            }
            TabChange::ClearAll => self.tab_stops.fill(false),
            TabChange::Default => self.tab_stops = default_tab_stops(self.engine.cols()),
        }
    }

    /// Decides, at the end of a feed, whether the unfinished sequence (if any) is held back; returns
    /// the index from which the input is held (the input length when nothing is).
    fn hold_point(&mut self, input: &[u8], out: &mut Passthrough<'_>) -> usize {
        if !self.scanner.in_sequence() {
            return input.len();
        }
        let (kind, body) = self.scanner.partial();
        let holdable = self.answer_queries
            && may_be_query(kind, body)
            && self.scanner.sequence_len() <= HOLD_LIMIT;
        match self.scanner.origin() {
            Origin::Here(start) if holdable => start,
            Origin::Held if holdable => 0,
            Origin::Held => {
                out.emit_extra(&mut self.engine, self.scanner.held());
                self.scanner.clear_held();
                self.scanner.mark_passed();
                input.len()
            }
            _ => {
                self.scanner.mark_passed();
                input.len()
            }
        }
    }

    /// Releases the bytes of an unfinished sequence held back for the next feed (see [`Feed`]), for
    /// the end of the stream: a reader calls it at end of input so every byte reaches the viewers.
    pub fn flush(&mut self) -> Vec<u8> {
        let held = self.scanner.held().to_vec();
        if !held.is_empty() {
            self.repeat_run.clear();
            self.engine.advance(&held);
            self.scanner.clear_held();
            self.scanner.mark_passed();
        }
        held
    }

    /// The input modes (see [`TerminalModes`]); cheaper than [`screen`](Self::screen) when only
    /// they are needed, as for encoding a key.
    pub fn modes(&self) -> TerminalModes {
        TerminalModes::of(self.engine.mode())
    }

    /// Changes the size (clamped); the primary screen reflows, the scroll region resets.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = clamp_size(cols, rows);
        self.repeat_run.clear();
        self.engine.resize(cols, rows);
        self.scrollback_realigned = true;
        // As the emulator does: existing stops stay, new columns get the default ones.
        let old = self.tab_stops.len();
        self.tab_stops
            .extend((old..usize::from(cols)).map(|col| col % 8 == 0));
        self.tab_stops.truncate(usize::from(cols));
        self.scroll_region = None;
        self.engine.set_full_scroll_region(true);
        if !self.tracker.marks_seen() {
            self.prompt_at_cursor = self.check_prompt_at_cursor();
        }
    }

    /// How many bytes at the end of everything passed on so far (the feeds' passthrough) belong to
    /// a sequence still under way: a viewer that starts from [`snapshot`](Self::snapshot) must be
    /// given them before the next passthrough to parse it as this terminal does. 0 when the stream
    /// stands between sequences, or when the unfinished one is held back (it has not been passed
    /// on, and the emulator has not seen it either).
    pub fn open_sequence_len(&self) -> usize {
        if self.scanner.in_sequence() && self.scanner.origin() == Origin::Passed {
            self.scanner.sequence_len()
        } else {
            0
        }
    }

    /// (cols, rows).
    pub fn size(&self) -> (u16, u16) {
        (self.engine.cols(), self.engine.rows())
    }

    pub fn answers_queries(&self) -> bool {
        self.answer_queries
    }

    #[cfg(test)]
    pub(crate) fn deferred_bytes(&self) -> usize {
        self.engine.deferred_bytes()
    }

    /// Turns plain-text deferral off, to compare against parsing every byte as it comes.
    #[cfg(test)]
    pub(crate) fn parse_every_byte(&mut self) {
        self.engine.parse_every_byte();
    }

    /// The visible screen. Takes `&mut self` to parse deferred plain text first (see the engine).
    pub fn screen(&mut self) -> TerminalScreen {
        self.engine.settle();
        let grid = self.engine.grid();
        let rows = self.engine.rows();
        let lines = (0..i32::from(rows))
            .map(|line| row_text(grid, line))
            .collect();
        let (row, col) = self.engine.cursor();
        let modes = self.engine.mode();
        TerminalScreen {
            cols: self.engine.cols(),
            rows,
            lines,
            cursor: CursorState {
                row,
                col,
                visible: modes.contains(TermMode::SHOW_CURSOR),
            },
            title: self.engine.title(),
            alt_screen: modes.contains(TermMode::ALT_SCREEN),
            modes: TerminalModes::of(modes),
            bells: self.engine.bells(),
        }
    }

    /// Each visible row as runs of text in one style (see [`StyledRun`]).
    pub fn styled_lines(&mut self) -> Vec<Vec<StyledRun>> {
        self.engine.settle();
        let grid = self.engine.grid();
        (0..i32::from(self.engine.rows()))
            .map(|line| styles::styled_row(grid, line))
            .collect()
    }

    /// The visible rows (0-based, ascending) whose text or style differs from when this was last
    /// called; every row on the first call. Costs a [`styled_lines`](Self::styled_lines).
    pub fn changed_rows(&mut self) -> Vec<u16> {
        let now = self.styled_lines();
        self.damage.changed(now)
    }

    /// The primary screen's scrollback, oldest line first, trailing blanks trimmed.
    pub fn scrollback_lines(&mut self) -> Vec<String> {
        self.engine.with_primary_grid(|grid| {
            (-(grid.history_size() as i32)..0)
                .map(|line| row_text(grid, line))
                .collect()
        })
    }

    /// Self-contained ANSI that repaints scrollback, screen, cursor, title and modes.
    /// Takes `&mut self` only to reach the primary screen while the alternate one is active; the
    /// terminal's observable state does not change.
    pub fn snapshot(&mut self) -> String {
        self.snapshot_with_scrollback(usize::MAX)
    }

    /// [`snapshot`](Self::snapshot) with at most `rows` of the scrollback (the most recent): with
    /// 0 it repaints the screen alone, a screenful however long the history.
    pub fn snapshot_with_scrollback(&mut self, rows: usize) -> String {
        self.engine.settle();
        let title = self.engine.title();
        let size = self.engine.cols();
        let tabs = (self.tab_stops != default_tab_stops(size)).then_some(&self.tab_stops[..]);
        snapshot::snapshot(&mut self.engine, rows, self.scroll_region, tabs, &title)
    }

    /// Completed commands, oldest first (at most [`MAX_RECORDS`]).
    pub fn commands(&self) -> Vec<CommandRecord> {
        self.tracker.records().cloned().collect()
    }

    /// How many commands have completed since the start (keeps counting past [`MAX_RECORDS`]), so a
    /// caller can wait for "one more than before".
    pub fn completed_commands(&self) -> u64 {
        self.tracker.completed()
    }

    pub fn last_command(&self) -> Option<&CommandRecord> {
        self.tracker.last()
    }

    /// True when the shell waits at a prompt: after OSC 133 A/B and before C when the shell sends
    /// marks, otherwise when the cursor's row ends with a prompt character and a space.
    pub fn prompt_showing(&self) -> bool {
        if self.tracker.marks_seen() {
            self.tracker.marked_prompt_showing()
        } else {
            self.prompt_at_cursor
        }
    }

    /// True once the shell sent OSC 133/633 marks (records then carry exit codes).
    pub fn shell_integration(&self) -> bool {
        self.tracker.marks_seen()
    }

    /// The working directory last reported through OSC 7 or OSC 633;P;Cwd.
    pub fn cwd(&self) -> Option<&str> {
        self.tracker.cwd()
    }

    fn check_prompt_at_cursor(&mut self) -> bool {
        if self.engine.mode().contains(TermMode::ALT_SCREEN) {
            return false;
        }
        let (before, after_blank) = self.engine.cursor_line();
        looks_like_prompt(&before, after_blank)
    }
}

/// Whether `input` has no ESC, so that from the ground state it is text and controls only.
fn starts_no_sequence(input: &[u8]) -> bool {
    memchr::memchr(0x1b, input).is_none()
}

fn clamp_size(cols: u16, rows: u16) -> (u16, u16) {
    (
        cols.clamp(MIN_COLS, MAX_COLS),
        rows.clamp(MIN_ROWS, MAX_ROWS),
    )
}

/// Builds the passthrough for one feed, borrowing the input while it is passed on unchanged.
struct Passthrough<'a> {
    input: &'a [u8],
    /// Input bytes before this index have been passed on (or cut out).
    done: usize,
    /// Set once the output stops being a prefix of the input.
    owned: Option<Vec<u8>>,
}

impl<'a> Passthrough<'a> {
    fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            done: 0,
            owned: None,
        }
    }

    /// Passes on the input up to `end` (to the emulator and the viewers).
    fn emit_input(&mut self, engine: &mut Engine, end: usize) {
        if end <= self.done {
            return;
        }
        let bytes = &self.input[self.done..end];
        engine.advance(bytes);
        if let Some(owned) = &mut self.owned {
            owned.extend_from_slice(bytes);
        }
        self.done = end;
    }

    /// Passes on bytes held from an earlier feed; they precede everything of this input.
    fn emit_extra(&mut self, engine: &mut Engine, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        engine.advance(bytes);
        let owned = self.make_owned();
        owned.extend_from_slice(bytes);
    }

    /// Passes the input up to `end` on to the viewers only (the emulator got something else).
    fn pass_input(&mut self, end: usize) {
        if end <= self.done {
            return;
        }
        if let Some(owned) = &mut self.owned {
            owned.extend_from_slice(&self.input[self.done..end]);
        }
        self.done = end;
    }

    /// Passes bytes held from an earlier feed on to the viewers only.
    fn pass_extra(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.make_owned().extend_from_slice(bytes);
        }
    }

    /// Cuts the input up to `end` out of the output.
    fn skip_to(&mut self, end: usize) {
        self.make_owned();
        self.done = self.done.max(end);
    }

    fn make_owned(&mut self) -> &mut Vec<u8> {
        let (input, done) = (self.input, self.done);
        self.owned.get_or_insert_with(|| {
            let mut owned = Vec::with_capacity(input.len());
            owned.extend_from_slice(&input[..done]);
            owned
        })
    }

    fn finish(self) -> Cow<'a, [u8]> {
        match self.owned {
            Some(owned) => Cow::Owned(owned),
            None => Cow::Borrowed(&self.input[..self.done]),
        }
    }
}

#[cfg(test)]
mod tests;
