//! The emulator engine: `alacritty_terminal`'s `Term` driven by its `vte` processor, wrapped so the
//! rest of the crate sees plain rows, a cursor, modes and a title.
//!
//! Chosen by measurement when the crate was written: it parsed the benchmark stream ~1.7× faster
//! than `vt100` and `avt`, keeps scrollback itself, reflows on resize, and tracks every mode we must
//! report. Its gaps are covered here: synchronized updates (mode 2026) are disabled so the screen
//! always reflects every byte fed, the title is captured from its events, and the primary screen is
//! reachable while the alternate screen is active (see [`Engine::with_primary_grid`]).
//!
//! Plain text (printable ASCII, CR, LF) is not parsed as it arrives but kept in a backlog that is
//! parsed when the screen is next looked at ([`Engine::settle`]) or other bytes arrive. Only the
//! backlog's last `scrollback + 2 × rows` lines can still be seen afterwards, so the lines before
//! them are dropped unparsed — the result is identical, and a program that streams megabytes of
//! text costs a memchr over it instead of a full emulation of every line (see [`PlainBacklog`]).
//! That holds for raw-mode output too (bare line feeds, which keep the column): the cursor's
//! column at the cut is worked out by arithmetic ([`TextColumn`]).
//!
//! Drawing on the alternate screen (text, SGR, cursor moves, erases) waits the same way and is
//! dropped unparsed when the program leaves that screen before anyone looks (see [`alternate`]).
//!
//! What is parsed goes around `vte`'s byte-at-a-time parser where it can ([`direct`]: text, C0
//! controls and the common control sequences, each handed to the emulator as the parser would),
//! and through [`PrintRuns`], which writes runs of characters one cell wide into the grid a
//! row-slice at a time instead of one `input` call per character.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alacritty_terminal::Grid;
use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::{Cursor, Dimensions};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{Color, NamedColor, Processor, Rgb, Timeout};
use shellwright_io::Utf8Decoder;

use super::alternate::{self, Stop};
use super::direct::{self, Step};
use super::print_runs::PrintRuns;

/// Captures the events of the engine the crate reports: the title (its own title field is
/// private) and the bells it rang.
#[derive(Clone, Default)]
pub(crate) struct EngineEvents {
    title: Arc<Mutex<String>>,
    bells: Arc<AtomicU64>,
}

impl EventListener for EngineEvents {
    fn send_event(&self, event: Event) {
        let title = match event {
            Event::Title(title) => title,
            Event::ResetTitle => String::new(),
            Event::Bell => {
                self.bells.fetch_add(1, Ordering::Relaxed);
                return;
            }
            // Replies the engine would write itself are ignored: the query responder answers.
            _ => return,
        };
        if let Ok(mut slot) = self.title.lock() {
            *slot = title;
        }
    }
}

/// A synchronized-update timer that never runs, so `CSI ? 2026 h` never buffers output: a headless
/// model must show every byte it was given, and answers to queries must see the state at their point.
#[derive(Default)]
pub(crate) struct NoSyncUpdates;

impl Timeout for NoSyncUpdates {
    fn set_timeout(&mut self, _: Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

struct Size {
    cols: usize,
    rows: usize,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

pub(crate) struct Engine {
    term: Term<EngineEvents>,
    processor: Processor<NoSyncUpdates>,
    listener: EngineEvents,
    /// Follows the UTF-8 character the parser was left inside, if any.
    utf8: Utf8Decoder,
    backlog: PlainBacklog,
    scrollback: usize,
    /// No scroll region is set (the crate tracks it; alacritty keeps it private).
    full_scroll_region: bool,
    /// Off only in tests, to compare against parsing every byte as it comes.
    defer_plain_text: bool,
    /// The buffer of [`PrintRuns`], kept between parses.
    print_run: Vec<char>,
    /// Whether the parser may be inside a sequence (plain text is then no text at all).
    open_sequence: OpenSequence,
    /// Off only in tests, to compare against giving every byte to the parser.
    direct: bool,
    /// The last character printed without the parser since it last ran (it repeats the last
    /// character it printed for REP, so it must learn of this one before it next runs).
    unseen_print: Option<char>,
    /// Drawing on the alternate screen not yet parsed (see [`alternate`]).
    alternate: alternate::Backlog,
    /// Off only in tests, to compare against parsing every byte as it comes.
    defer_alternate: bool,
}

/// The parser with what is known of its state, for feeding it the pieces [`direct`] leaves.
struct Parser<'a> {
    processor: &'a mut Processor<NoSyncUpdates>,
    /// Follows the UTF-8 character the parser is inside, if any (see [`Parser::feed`]).
    utf8: &'a mut Utf8Decoder,
    open_sequence: &'a mut OpenSequence,
    unseen_print: &'a mut Option<char>,
}

/// A handler that does nothing: printing to it teaches the parser its last character.
struct Unseen;

impl alacritty_terminal::vte::ansi::Handler for Unseen {}

impl Parser<'_> {
    /// Whether the parser is in its ground state with no partial character (so [`direct`] may
    /// go around it).
    fn at_rest(&self) -> bool {
        self.utf8.pending_len() == 0 && self.open_sequence.is_empty()
    }

    fn feed(&mut self, handler: &mut PrintRuns<'_, EngineEvents>, mut bytes: &[u8]) {
        if let Some(c) = self.unseen_print.take() {
            self.processor
                .advance(&mut Unseen, c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        self.open_sequence.follow(bytes);
        // vte 0.15 drops the byte after a UTF-8 character completed across two `advance` calls
        // when the new call also ends inside a character ("é" split as C3 | A9 20 E6 loses the
        // space). Feeding the bytes that complete (or break) the character on their own keeps its
        // buffer exact. The parser keeps a character cut off by the end of its input exactly as
        // a decoder of the same bytes carries it over (both decide with `str::from_utf8`), so the
        // shared decoder tells where that character ends.
        let mut completing = 0;
        while self.utf8.pending_len() > 0 && completing < bytes.len() {
            self.utf8.skip(&bytes[completing..=completing]);
            completing += 1;
        }
        if completing > 0 {
            self.processor.advance(handler, &bytes[..completing]);
            bytes = &bytes[completing..];
        }
        if !bytes.is_empty() {
            self.processor.advance(handler, bytes);
            self.utf8.skip(bytes);
        }
    }
}

/// Plain text not yet parsed. Plain text cannot change modes, colours, the pen or the title, only
/// the grid and the cursor, so everything else may be read while text waits here.
///
/// Why dropping is exact: with no scroll region, the primary screen, and no insert or newline
/// mode, `rows` line feeds bring the cursor to the bottom row, and every line feed there pushes one
/// row into the scrollback. After `scrollback + 2 × rows` line feeds every visible row and every
/// scrollback row therefore holds text of the kept part only, whatever row the cursor started it
/// on. Only its column matters, as a bare line feed keeps it: that is computed for the cut point
/// ([`TextColumn`]) and given to the engine before the kept part is parsed.
#[derive(Default)]
struct PlainBacklog {
    bytes: Vec<u8>,
    line_feeds: usize,
    /// How the cursor moves along its row while this backlog waits (set by [`Self::start`]).
    column: TextColumn,
    /// Where the cursor stands along its row before the first byte kept (`None`: unknown, see
    /// [`TextColumn::start`]).
    start: Option<usize>,
    /// Whether a prefix was dropped, so the engine's cursor must be moved to `start`.
    dropped: bool,
    /// The cursor's position along its row after the last line feed, and after the last byte.
    last_line_start: Option<usize>,
    end: Option<usize>,
}

impl PlainBacklog {
    /// Begins an empty backlog with the cursor where the engine has it.
    fn start(&mut self, column: TextColumn) {
        self.column = column;
        self.start = column.start;
        self.end = column.start;
        self.last_line_start = None;
        self.dropped = false;
    }

    /// Adds plain text. Returns false when the backlog should be parsed now: it holds more than
    /// [`MAX_BACKLOG_BYTES`] (very long lines), or it grew past twice what is kept and no prefix
    /// could be dropped.
    #[must_use]
    fn push(&mut self, bytes: &[u8], keep_lines: usize) -> bool {
        self.bytes.extend_from_slice(bytes);
        self.line_feeds += memchr::memchr_iter(b'\n', bytes).count();
        let (from, tail) = match memchr::memrchr(b'\n', bytes) {
            Some(newline) => {
                self.last_line_start = self.column.after(self.end, &bytes[..newline]);
                (self.last_line_start, &bytes[newline + 1..])
            }
            None => (self.end, bytes),
        };
        self.end = self.column.after(from, tail);
        // Trimming moves the kept part, so only trim once the backlog is twice what is kept.
        let stuck =
            self.line_feeds > keep_lines.saturating_mul(2) && !self.drop_unseen_lines(keep_lines);
        !stuck && self.bytes.len() <= MAX_BACKLOG_BYTES
    }

    /// Drops the longest prefix ending in a line feed that leaves at least `keep_lines` line
    /// feeds; returns whether anything was dropped.
    fn drop_unseen_lines(&mut self, keep_lines: usize) -> bool {
        let droppable = self.line_feeds.saturating_sub(keep_lines);
        let Some(at) = droppable
            .checked_sub(1)
            .and_then(|last| memchr::memchr_iter(b'\n', &self.bytes).nth(last))
        else {
            return false;
        };
        let Some(start) = self.column.after(self.start, &self.bytes[..at]) else {
            return false;
        };
        self.bytes.drain(..=at);
        self.line_feeds -= droppable;
        self.start = Some(start);
        self.dropped = true;
        true
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Takes the text to parse, with the cursor's position along its row to start it from when a
    /// prefix was dropped (see [`TextColumn`]).
    fn take(&mut self) -> (Vec<u8>, Option<usize>) {
        self.line_feeds = 0;
        let start = self.start.filter(|_| std::mem::take(&mut self.dropped));
        (std::mem::take(&mut self.bytes), start)
    }

    /// The text the cursor's row holds before the cursor, when the backlog alone tells: its last
    /// line is on a fresh row (at least `rows` line feeds before it, so the last one scrolled a
    /// blank row in; a row it wraps to is fresh too), holds no CR, and leaves the cursor short of
    /// pending wrap. A bare line feed keeps the column, so the row may start with blanks.
    fn cursor_line(&self, rows: usize) -> Option<String> {
        if self.line_feeds < rows {
            return None;
        }
        let newline = memchr::memrchr(b'\n', &self.bytes)?;
        let line = &self.bytes[newline + 1..];
        let (start, end, cols) = (self.last_line_start?, self.end?, self.column.cols);
        if end >= cols || line.contains(&b'\r') {
            return None;
        }
        let indent = if start >= cols { 0 } else { start };
        let text = if indent + line.len() < cols {
            let mut text = " ".repeat(indent);
            text.push_str(std::str::from_utf8(line).ok()?);
            text
        } else if self.column.auto_wrap {
            // Wrapped: the cursor's row holds the last `end` characters.
            std::str::from_utf8(&line[line.len() - end..])
                .ok()?
                .to_owned()
        } else {
            return None;
        };
        Some(text)
    }
}

/// The cursor's travel along its row under plain text, as a position from 0 to `cols`: a column,
/// or `cols` when the cursor stands on the last column with the next character wrapping first
/// (pending wrap). A carriage return brings it to 0, a line feed leaves it alone (newline mode
/// forbids deferral), and each printed character moves it as the emulator does: with auto-wrap,
/// a character at `cols` wraps to column 0 first; without, it overwrites the last column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TextColumn {
    cols: usize,
    auto_wrap: bool,
    /// Where the engine's cursor stood when the backlog began; `None` when its state is not one
    /// plain text could produce (pending wrap off the last column), so only text after a
    /// carriage return can be followed.
    start: Option<usize>,
}

impl TextColumn {
    /// The position after `text` from `start` (`None`: unknown; known again after a CR).
    fn after(self, start: Option<usize>, text: &[u8]) -> Option<usize> {
        let (position, rest) = match memchr::memrchr(b'\r', text) {
            Some(cr) => (0, &text[cr + 1..]),
            None => (start?, text),
        };
        let printed = rest.len() - memchr::memchr_iter(b'\n', rest).count();
        Some(self.advance(position, printed))
    }

    fn advance(self, position: usize, printed: usize) -> usize {
        if printed == 0 || self.cols == 0 {
            position
        } else if self.auto_wrap {
            let from = if position >= self.cols { 0 } else { position };
            (from + printed - 1) % self.cols + 1
        } else {
            position.saturating_add(printed).min(self.cols)
        }
    }
}

/// Follows whether the parser may have been left inside an escape sequence, from the bytes it
/// was given (the DEC ANSI parser model, as `vte` implements it): the bytes from the last ESC on
/// while that sequence may be unfinished. Bytes that would end the sequence ("l" of a split
/// `CSI ? 7 l`) must reach the parser in order and can never be deferred or dropped as text.
#[derive(Default)]
struct OpenSequence {
    /// The unfinished sequence (its first [`OPEN_SEQUENCE_LIMIT`] bytes).
    bytes: Vec<u8>,
}

/// How much of an unfinished sequence is kept and checked for its end.
const OPEN_SEQUENCE_LIMIT: usize = 256;

impl OpenSequence {
    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Takes note of bytes just given to the parser.
    fn follow(&mut self, parsed: &[u8]) {
        let tail = match memchr::memrchr(0x1b, parsed) {
            Some(esc) => {
                self.bytes.clear();
                &parsed[esc..]
            }
            None if self.bytes.is_empty() => return,
            None => parsed,
        };
        // Bounded work per parse: an end further on is missed, which only keeps the sequence
        // counted as open (deferral paused) until the next ESC.
        self.bytes
            .extend_from_slice(&tail[..tail.len().min(OPEN_SEQUENCE_LIMIT)]);
        if sequence_ended(&self.bytes) {
            self.bytes.clear();
        } else {
            self.bytes.truncate(OPEN_SEQUENCE_LIMIT);
        }
    }
}

/// Whether `sequence` (starting with ESC, holding no other ESC) has ended: CAN or SUB abort it;
/// a CSI ends at its final byte, an OSC at BEL (ST would be a new ESC), DCS, SOS, PM and APC only
/// at ST; other escapes at their final byte after any intermediates.
pub(super) fn sequence_ended(sequence: &[u8]) -> bool {
    const CAN: u8 = 0x18;
    const SUB: u8 = 0x1a;
    let body = &sequence[1.min(sequence.len())..];
    if body.iter().any(|&b| b == CAN || b == SUB) {
        return true;
    }
    match body.split_first() {
        None => false,
        Some((b'[', rest)) => rest.iter().any(|b| (0x40..=0x7e).contains(b)),
        Some((b']', rest)) => rest.contains(&0x07),
        Some((b'P' | b'X' | b'^' | b'_', _)) => false,
        Some(_) => body
            .iter()
            .find(|b| !(0x20..=0x2f).contains(*b))
            .is_some_and(|b| (0x30..=0x7e).contains(b)),
    }
}

/// The most plain text held unparsed, whatever its line count.
const MAX_BACKLOG_BYTES: usize = 8 << 20;

fn is_plain(bytes: &[u8]) -> bool {
    // Without short-circuiting inside a block the check vectorises; megabytes of text pass here.
    bytes.chunks(64).all(|block| {
        block.iter().fold(true, |plain, &b| {
            plain & (b.wrapping_sub(0x20) < 0x5f || b == b'\r' || b == b'\n')
        })
    })
}

impl Engine {
    pub(crate) fn new(cols: u16, rows: u16, scrollback: usize) -> Self {
        let listener = EngineEvents::default();
        let config = Config {
            scrolling_history: scrollback,
            ..Config::default()
        };
        let size = Size {
            cols: cols.into(),
            rows: rows.into(),
        };
        Self {
            term: Term::new(config, &size, listener.clone()),
            processor: Processor::new(),
            listener,
            utf8: Utf8Decoder::new(),
            backlog: PlainBacklog::default(),
            scrollback,
            full_scroll_region: true,
            defer_plain_text: true,
            print_run: Vec::new(),
            open_sequence: OpenSequence::default(),
            direct: true,
            unseen_print: None,
            alternate: alternate::Backlog::default(),
            defer_alternate: true,
        }
    }

    /// Bytes waiting to be parsed: plain text, or drawing on the alternate screen.
    #[cfg(test)]
    pub(crate) fn deferred_bytes(&self) -> usize {
        self.backlog.bytes.len() + self.alternate.len()
    }

    #[cfg(test)]
    pub(crate) fn deferred_line_feeds(&self) -> usize {
        self.backlog.line_feeds
    }

    #[cfg(test)]
    pub(crate) fn parse_every_byte(&mut self) {
        self.settle();
        self.defer_plain_text = false;
        self.defer_alternate = false;
    }

    /// Turns the deferral of drawing on the alternate screen back on after
    /// [`parse_every_byte`](Self::parse_every_byte), to compare it alone against the parser.
    #[cfg(test)]
    pub(crate) fn defer_alternate_screen(&mut self) {
        self.defer_alternate = true;
    }

    /// Gives every byte to the parser (nothing goes around it through [`direct`]).
    #[cfg(test)]
    pub(crate) fn parse_through_parser(&mut self) {
        self.settle();
        self.direct = false;
    }

    /// Whether the parser may have been left inside an escape sequence or control string by the
    /// bytes given so far (see [`OpenSequence`]).
    pub(crate) fn inside_sequence(&self) -> bool {
        !self.open_sequence.is_empty()
    }

    /// Tells the engine whether a scroll region is set (plain text is only deferred without one).
    pub(crate) fn set_full_scroll_region(&mut self, full: bool) {
        if !full {
            self.settle();
        }
        self.full_scroll_region = full;
    }

    fn may_defer(&self, bytes: &[u8]) -> bool {
        let modes = self.term.mode();
        self.defer_plain_text
            && self.utf8.pending_len() == 0
            && self.open_sequence.is_empty()
            && self.full_scroll_region
            && !modes
                .intersects(TermMode::ALT_SCREEN | TermMode::INSERT | TermMode::LINE_FEED_NEW_LINE)
            && is_plain(bytes)
    }

    /// How plain text fed now would move the cursor along its row (see [`TextColumn`]).
    fn text_column(&self) -> TextColumn {
        let cols = self.term.columns();
        let cursor = &self.term.grid().cursor;
        let column = cursor.point.column.0;
        let start = match cursor.input_needs_wrap {
            false => Some(column),
            true => (column + 1 == cols).then_some(cols),
        };
        TextColumn {
            cols,
            auto_wrap: self.term.mode().contains(TermMode::LINE_WRAP),
            start,
        }
    }

    /// Parses everything deferred, so the grid and the cursor are current. Drawing deferred on the
    /// alternate screen was looked at: deferring stops until that screen is left (whoever looks once
    /// may look again, and then reading the drawing twice only costs).
    pub(crate) fn settle(&mut self) {
        self.settle_plain_text();
        if !self.alternate.is_empty() {
            self.alternate.pause();
            let drawing = self.alternate.take_bytes();
            self.parse_now(&drawing);
            self.alternate.reuse(drawing);
        }
    }

    /// Parses the deferred plain text (drawing deferred on the alternate screen may wait on:
    /// parsing more continues it).
    fn settle_plain_text(&mut self) {
        if !self.backlog.is_empty() {
            let (text, start) = self.backlog.take();
            if let Some(position) = start {
                let cols = self.term.columns();
                let cursor = &mut self.term.grid_mut().cursor;
                cursor.point.column = Column(position.min(cols - 1));
                cursor.input_needs_wrap = position >= cols;
            }
            self.parse_now(&text);
        }
    }

    /// The text before the cursor on its row, and whether the row is blank after it; from the
    /// backlog when it can tell, so checking for a prompt does not force parsing.
    pub(crate) fn cursor_line(&mut self) -> (String, bool) {
        if let Some(line) = self.backlog.cursor_line(self.term.screen_lines()) {
            return (line, true);
        }
        self.settle();
        let grid = self.term.grid();
        let (row, col) = self.cursor();
        let row = &grid[Line(i32::from(row))];
        let col = usize::from(col).min(grid.columns());
        let after_blank = (col..grid.columns()).all(|c| row[Column(c)].c == ' ');
        ((0..col).map(|c| row[Column(c)].c).collect(), after_blank)
    }

    pub(crate) fn advance(&mut self, bytes: &[u8]) {
        if self.may_defer(bytes) {
            let keep_lines = self.scrollback + 2 * self.term.screen_lines() + 1;
            if self.backlog.is_empty() {
                self.backlog.start(self.text_column());
            }
            if !self.backlog.push(bytes, keep_lines) {
                self.settle();
            }
            return;
        }
        self.settle_plain_text();
        self.parse(bytes, self.defer_alternate);
    }

    /// Runs `bytes` through the emulator now, nothing deferred.
    fn parse_now(&mut self, bytes: &[u8]) {
        self.parse(bytes, false);
    }

    /// Runs `bytes` through the emulator (see [`run`]), deferring drawing on the alternate
    /// screen when `defer_alternate`.
    fn parse(&mut self, bytes: &[u8], defer_alternate: bool) {
        let alternate = defer_alternate.then_some(&mut self.alternate);
        let mut parser = Parser {
            processor: &mut self.processor,
            utf8: &mut self.utf8,
            open_sequence: &mut self.open_sequence,
            unseen_print: &mut self.unseen_print,
        };
        let mut handler = PrintRuns::new(&mut self.term, &mut self.print_run);
        if !self.direct {
            parser.feed(&mut handler, bytes);
        } else {
            run(bytes, &mut parser, &mut handler, alternate);
        }
        handler.flush();
    }

    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        self.settle();
        self.term.resize(Size {
            cols: cols.into(),
            rows: rows.into(),
        });
    }

    pub(crate) fn cols(&self) -> u16 {
        u16::try_from(self.term.columns()).unwrap_or(u16::MAX)
    }

    pub(crate) fn rows(&self) -> u16 {
        u16::try_from(self.term.screen_lines()).unwrap_or(u16::MAX)
    }

    pub(crate) fn mode(&self) -> TermMode {
        *self.term.mode()
    }

    /// BEL characters the emulator executed (a BEL that ends an OSC string is no bell).
    pub(crate) fn bells(&self) -> u64 {
        self.listener.bells.load(Ordering::Relaxed)
    }

    pub(crate) fn title(&self) -> String {
        self.listener
            .title
            .lock()
            .map(|t| t.clone())
            .unwrap_or_default()
    }

    /// 0-based cursor (row, col) on the visible screen. Call [`settle`](Self::settle) first.
    pub(crate) fn cursor(&self) -> (u16, u16) {
        debug_assert!(self.settled(), "cursor read before settle");
        let point = self.term.grid().cursor.point;
        let row = u16::try_from(point.line.0.max(0)).unwrap_or(u16::MAX);
        let col = u16::try_from(point.column.0).unwrap_or(u16::MAX);
        (row, col)
    }

    /// The cursor stands past the last column: the next printed character wraps first. Call
    /// [`settle`](Self::settle) first.
    pub(crate) fn pending_wrap(&self) -> bool {
        debug_assert!(self.settled(), "cursor read before settle");
        self.term.grid().cursor.input_needs_wrap
    }

    /// True when a row below the cursor's holds a wide character. Call [`settle`](Self::settle)
    /// first.
    pub(crate) fn wide_below_cursor(&self) -> bool {
        let grid = self.term.grid();
        let below = grid.cursor.point.line.0 + 1;
        (below..self.term.screen_lines() as i32).any(|line| {
            let row = &grid[Line(line)];
            (0..grid.columns()).any(|col| row[Column(col)].flags.contains(Flags::WIDE_CHAR))
        })
    }

    /// Nothing waits to be parsed.
    fn settled(&self) -> bool {
        self.backlog.is_empty() && self.alternate.is_empty()
    }

    /// The pen. Call [`settle`](Self::settle) first.
    pub(crate) fn cursor_template(&self) -> &Cell {
        debug_assert!(self.settled(), "pen read before settle");
        &self.term.grid().cursor.template
    }

    /// A dynamic colour (OSC 10/11/12) as set by the program, if it set one.
    pub(crate) fn dynamic_color(&self, color: NamedColor) -> Option<Rgb> {
        self.term.colors()[color]
    }

    /// The active grid (the alternate one while the alternate screen is on). Call
    /// [`settle`](Self::settle) first.
    pub(crate) fn grid(&self) -> &Grid<Cell> {
        debug_assert!(self.settled(), "grid read before settle");
        self.term.grid()
    }

    /// Runs `f` on the primary grid (with its scrollback), even while the alternate screen is on.
    ///
    /// alacritty keeps the inactive grid private but exposes `swap_alt`. Swapping to the primary grid
    /// is side-effect free; swapping back re-enters the alternate screen, which resets the alternate
    /// grid and overwrites the primary's saved cursor with its cursor. The alternate grid (no
    /// scrollback, so cheap) is cloned and put back, and the primary's saved cursor already equals its
    /// cursor since entering the alternate screen did the same, so nothing observable changes.
    pub(crate) fn with_primary_grid<R>(&mut self, f: impl FnOnce(&Grid<Cell>) -> R) -> R {
        self.settle();
        if !self.term.mode().contains(TermMode::ALT_SCREEN) {
            return f(self.term.grid());
        }
        let alternate = self.term.grid().clone();
        self.term.swap_alt();
        let result = f(self.term.grid());
        self.term.swap_alt();
        *self.term.grid_mut() = alternate;
        result
    }

    /// Lines of scrollback the primary screen keeps.
    pub(crate) fn scrollback_limit(&self) -> usize {
        self.scrollback
    }

    /// The primary screen's scrollback, oldest row first, each row made by `row`, taken out of
    /// the grid. Call it with the primary screen on, after [`settle`](Self::settle).
    pub(crate) fn take_history<R>(&mut self, row: impl Fn(&Grid<Cell>, i32) -> R) -> Vec<R> {
        debug_assert!(self.settled(), "history taken before settle");
        let grid = self.term.grid();
        let rows = (-(grid.history_size() as i32)..0)
            .map(|line| row(grid, line))
            .collect();
        self.term.grid_mut().clear_history();
        rows
    }

    /// The cursor DECSC saved on the alternate screen, while the primary one is on: alacritty keeps
    /// it across visits (entering resets that screen's cells and cursor, not its saved cursor), so
    /// `ESC 8` on the next visit, before any `ESC 7`, restores it. `None` on the alternate screen
    /// (its saved cursor is the active one's).
    ///
    /// Read by swapping to the alternate grid and back. Entering through `swap_alt` gives the
    /// alternate grid the primary cursor and blank cells, both of which the next entry does again,
    /// and saves the primary cursor over the primary's saved one, which is put back.
    pub(crate) fn alternate_saved_cursor(&mut self) -> Option<Cursor<Cell>> {
        self.settle();
        if self.term.mode().contains(TermMode::ALT_SCREEN) {
            return None;
        }
        let primary_saved = self.term.grid().saved_cursor.clone();
        self.term.swap_alt();
        let saved = self.term.grid().saved_cursor.clone();
        self.term.swap_alt();
        self.term.grid_mut().saved_cursor = primary_saved;
        Some(saved)
    }
}

/// Runs `bytes` through the emulator: the common elements directly ([`direct`]), the rest through
/// the parser, with runs of printable characters written in one step; drawing on the alternate
/// screen goes into `alternate` when given (see [`alternate`]).
fn run(
    bytes: &[u8],
    parser: &mut Parser<'_>,
    handler: &mut PrintRuns<'_, EngineEvents>,
    mut alternate: Option<&mut alternate::Backlog>,
) {
    let mut at = 0;
    while at < bytes.len() {
        if parser.at_rest()
            && let Some(backlog) = alternate.as_deref_mut()
            && backlog.deferring(handler.mode().contains(TermMode::ALT_SCREEN))
        {
            let (taken, stop) = backlog.take(&bytes[at..]);
            at += taken;
            match stop {
                Stop::End => break,
                Stop::Modes(len) => {
                    // They change nothing the waiting drawing does: set them now.
                    run(&bytes[at..at + len], parser, handler, None);
                    at += len;
                    continue;
                }
                Stop::Leave => {
                    // What was drawn can no longer be seen; the parser must still learn of the
                    // last character printed.
                    let last = backlog.drop_all();
                    *parser.unseen_print = last.or(*parser.unseen_print);
                }
                Stop::Other | Stop::Parse => {
                    let drawing = backlog.take_bytes();
                    run(&drawing, parser, handler, None);
                    backlog.reuse(drawing);
                }
            }
        }
        let rest = &bytes[at..];
        let len = if parser.at_rest() {
            match direct::step(rest, handler) {
                Step::Handled(len, printed) => {
                    *parser.unseen_print = printed.or(*parser.unseen_print);
                    at += len;
                    continue;
                }
                Step::Parser(len) => len,
            }
        } else {
            // Inside a sequence or a character: an ESC starts a new sequence whatever the
            // parser's state, so everything before the next one is the parser's.
            memchr::memchr(0x1b, &rest[1..]).map_or(rest.len(), |offset| offset + 1)
        };
        parser.feed(handler, &rest[..len]);
        at += len;
    }
}

/// The text of one grid row: wide-character spacers skipped, combining marks kept, trailing blanks
/// trimmed.
pub(crate) fn row_text(grid: &Grid<Cell>, line: i32) -> String {
    let mut text = String::new();
    let row = &grid[Line(line)];
    for col in 0..grid.columns() {
        let cell = &row[Column(col)];
        if cell.flags.intersects(Flags::WIDE_CHAR_SPACER) {
            continue;
        }
        if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
            text.push(' ');
            continue;
        }
        text.push(shown_char(cell));
        if let Some(marks) = cell.zerowidth() {
            text.extend(marks);
        }
    }
    let trimmed = text.trim_end_matches(' ').len();
    text.truncate(trimmed);
    text
}

/// The character a cell shows. A tab leaves its `\t` in the cell it started from (so copying
/// text can keep it), but what a person sees there is a blank.
pub(crate) fn shown_char(cell: &Cell) -> char {
    if cell.c == '\t' { ' ' } else { cell.c }
}

/// A blank that looks like the default background: it shows nothing, so it can be left out at the
/// end of a row.
pub(crate) fn is_plain_blank(cell: &Cell) -> bool {
    shown_char(cell) == ' '
        && matches!(cell.bg, Color::Named(NamedColor::Background))
        && !cell
            .flags
            .intersects(Flags::INVERSE | Flags::ALL_UNDERLINES | Flags::STRIKEOUT)
}

/// True when the row continues on the next one (it was filled and wrapped).
pub(crate) fn row_wraps(grid: &Grid<Cell>, line: i32) -> bool {
    let cols = grid.columns();
    cols > 0
        && grid[Line(line)][Column(cols - 1)]
            .flags
            .contains(Flags::WRAPLINE)
}
