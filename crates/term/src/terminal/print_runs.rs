//! Printing runs of text in one step: the emulator's `Handler` as the parser sees it, with
//! printable ASCII collected into runs and written into the grid a row-slice at a time.
//!
//! `vte` hands every printed character to `Handler::input` on its own, and alacritty's `input`
//! then redoes per character what holds for a whole run (width, insert mode, charset, cursor cell
//! lookup, damage). [`PrintRuns`] sits between the two: characters one cell wide (printable ASCII,
//! and the rest of Unicode that is one column wide: `→`, `é`, `λ`) are collected, every other call
//! first writes the run out, then goes to the emulator unchanged. A run is written as
//! alacritty's `input` would write it, cell by cell with the cursor's template, while nothing makes
//! a character special: no insert mode, no charset other than ASCII designated, no wide character
//! or spacer under the cells written, no pending wrap. Otherwise that character goes through
//! `input` itself. Damage tracking (for renderers) is not kept up: nothing here reads it.

use alacritty_terminal::Term;
use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Column;
use alacritty_terminal::term::TermMode;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{CharsetIndex, Handler, StandardCharset};
use unicode_width::UnicodeWidthChar;

/// The emulator as the parser drives it, with printable ASCII batched. Call [`flush`](Self::flush)
/// after the parser returns: the last run may still be pending.
pub(crate) struct PrintRuns<'a, L: EventListener> {
    term: &'a mut Term<L>,
    /// The pending run (characters one cell wide); kept by the caller so its allocation is reused.
    run: &'a mut Vec<char>,
}

impl<'a, L: EventListener> PrintRuns<'a, L> {
    pub(crate) fn new(term: &'a mut Term<L>, run: &'a mut Vec<char>) -> Self {
        run.clear();
        Self { term, run }
    }

    /// The emulator's modes.
    #[inline]
    pub(crate) fn mode(&self) -> TermMode {
        *self.term.mode()
    }

    /// Writes the pending run into the grid.
    #[inline]
    pub(crate) fn flush(&mut self) {
        // Called before every other handler call, nearly always with nothing pending.
        if !self.run.is_empty() {
            self.write_pending();
        }
    }

    fn write_pending(&mut self) {
        let run = std::mem::take(self.run);
        self.print(&run);
        // Hand the allocation back (cleared) for the next run.
        *self.run = run;
        self.run.clear();
    }

    /// Prints characters one cell wide, in one step when they land in cells as themselves.
    fn print<C: Copy + Into<char>>(&mut self, run: &[C]) {
        if self.writes_plainly() {
            self.write(run);
        } else {
            for &c in run {
                input(self.term, c.into());
            }
        }
    }

    /// Whether the run lands in cells as itself: no insert mode, and every charset the program
    /// could shift to is ASCII (so which one is active does not matter; the DEC special graphics
    /// set would map ASCII, never other characters, but is left to the emulator all the same).
    fn writes_plainly(&self) -> bool {
        let charsets = &self.term.grid().cursor.charsets;
        !self.term.mode().contains(TermMode::INSERT)
            && [
                CharsetIndex::G0,
                CharsetIndex::G1,
                CharsetIndex::G2,
                CharsetIndex::G3,
            ]
            .into_iter()
            .all(|index| charsets[index] == StandardCharset::Ascii)
    }

    fn write<C: Copy + Into<char>>(&mut self, mut run: &[C]) {
        // `input` (taken below for a cell it must handle) leaves the template as it found it.
        let template = self.term.grid().cursor.template.clone();
        while let Some((&first, _)) = run.split_first() {
            let written = self
                .row_from_cursor(run.len())
                .map_or(0, |cells| write_cells(cells, run, &template));
            if written == 0 {
                // Wrapping or a wide character to clear: the emulator's own path.
                input(self.term, first.into());
                run = &run[1..];
                continue;
            }
            self.move_past(written);
            run = &run[written..];
        }
    }

    /// Writes a character two cells wide as the emulator does (the character, then a spacer) when
    /// it fits on the cursor's row over cells holding no wide character or spacer; false (having
    /// written nothing) otherwise.
    fn write_wide(&mut self, c: char) -> bool {
        let template = self.term.grid().cursor.template.clone();
        let Some([cell, spacer]) = self.row_from_cursor(2) else {
            return false;
        };
        if is_wide_part(cell) || is_wide_part(spacer) {
            return false;
        }
        write_cell(cell, c, template.flags | Flags::WIDE_CHAR, &template);
        write_cell(
            spacer,
            ' ',
            template.flags | Flags::WIDE_CHAR_SPACER,
            &template,
        );
        self.move_past(2);
        true
    }

    /// The cells of the cursor's row from the cursor on, at most `len` of them; `None` while the
    /// cursor waits to wrap (the next character goes to the next row: the emulator's own path).
    ///
    /// The range is bounded because the row counts the cells a mutable index reaches as occupied
    /// (an open range marks the whole row), and clearing or scrolling it later resets every
    /// occupied cell: marking only what is written keeps that reset as short as the emulator's
    /// own per-character writes leave it.
    fn row_from_cursor(&mut self, len: usize) -> Option<&mut [Cell]> {
        let cols = self.term.columns();
        let grid = self.term.grid_mut();
        let cursor = &grid.cursor;
        if cursor.input_needs_wrap {
            return None;
        }
        let (line, column) = (cursor.point.line, cursor.point.column);
        let end = Column(column.0.saturating_add(len).min(cols));
        Some(&mut grid[line][column..end])
    }

    /// Moves the cursor past `cells` cells just written from it, as the emulator does: onto the
    /// next cell, or, past the last column, onto the last one with the next character wrapping.
    fn move_past(&mut self, cells: usize) {
        let cols = self.term.columns();
        let cursor = &mut self.term.grid_mut().cursor;
        let end = cursor.point.column.0 + cells;
        if end < cols {
            cursor.point.column = Column(end);
        } else {
            cursor.point.column = Column(cols - 1);
            cursor.input_needs_wrap = true;
        }
    }
}

/// Whether the cell holds a wide character or its spacer: writing over either must clear the
/// other half, which takes the emulator's own path.
fn is_wide_part(cell: &Cell) -> bool {
    cell.flags
        .intersects(Flags::WIDE_CHAR | Flags::WIDE_CHAR_SPACER)
}

/// Writes `run` into `cells` as the emulator writes each character at the cursor, up to the first
/// cell that is part of a wide character. Returns how many cells were written.
fn write_cells<C: Copy + Into<char>>(cells: &mut [Cell], run: &[C], template: &Cell) -> usize {
    let mut written = 0;
    for (cell, &c) in cells.iter_mut().zip(run) {
        if is_wide_part(cell) {
            break;
        }
        write_cell(cell, c.into(), template.flags, template);
        written += 1;
    }
    written
}

/// Writes `c` into `cell` with the pen of `template` and `flags`, as the emulator writes a
/// character at the cursor.
#[inline]
fn write_cell(cell: &mut Cell, c: char, flags: Flags, template: &Cell) {
    cell.c = c;
    cell.fg = template.fg;
    cell.bg = template.bg;
    cell.flags = flags;
    // Most cells and pens have no extra; skip the reference counting then.
    if cell.extra.is_some() || template.extra.is_some() {
        cell.extra.clone_from(&template.extra);
    }
}

/// Printing a run of printable ASCII in one call (the parser's path prints one character at a
/// time).
pub(crate) trait PrintAscii {
    /// Prints `text`, every byte of which is printable ASCII (0x20–0x7e).
    fn print_ascii(&mut self, text: &[u8]);
}

impl<L: EventListener> PrintAscii for PrintRuns<'_, L> {
    fn print_ascii(&mut self, text: &[u8]) {
        if self.run.is_empty() {
            self.print(text);
        } else {
            // Joined to the pending run: one write instead of two.
            self.run.extend(text.iter().map(|&b| char::from(b)));
        }
    }
}

/// Forwards each `Handler` method to the emulator after writing out the pending run, so every
/// call sees the grid as if each character had gone through `input`.
macro_rules! forward {
    ($(fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*);)*) => {
        $(
            #[inline]
            fn $name(&mut self $(, $arg: $ty)*) {
                self.flush();
                self.term.$name($($arg),*);
                if const { cuts_cursor_row(stringify!($name)) } {
                    mend_wide_chars(self.term, const { cuts_at_cursor(stringify!($name)) });
                }
            }
        )*
    };
}

/// The `Handler` methods that erase, insert or delete cells in part of the cursor's row, and so
/// can cut a wide character from its spacer.
const CUTTING: [&str; 5] = [
    "clear_line",
    "clear_screen",
    "erase_chars",
    "delete_chars",
    "insert_blank",
];

/// The cutting methods that erase from the cursor's cell to the row's end or from its start to
/// the cursor (or the whole row): only a wide character across the cursor cell's left or right
/// edge can be cut, so only the cells around it need a look. The others move or erase cells
/// elsewhere in the row, which is looked at whole after them.
const CUTTING_AT_CURSOR: [&str; 2] = ["clear_line", "clear_screen"];

/// The names of the methods a list of `handler_calls` gives.
macro_rules! method_names {
    ($(fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*);)*) => {
        &[$(stringify!($name)),*]
    };
}

// Each name in `CUTTING` must be a method the wrappers forward: the match is by name, so a name
// the trait renamed or dropped would otherwise silently stop the mending. It fails the build.
const _: () = {
    const DRAWING: &[&str] = drawing_calls!(method_names);
    const OTHER: &[&str] = other_calls!(method_names);
    let mut i = 0;
    while i < CUTTING.len() {
        assert!(
            listed(CUTTING[i], DRAWING) || listed(CUTTING[i], OTHER),
            "a cutting method is not a forwarded Handler method"
        );
        i += 1;
    }
};

/// Whether the `Handler` method `name` is one of [`CUTTING`].
const fn cuts_cursor_row(name: &str) -> bool {
    listed(name, &CUTTING)
}

const fn cuts_at_cursor(name: &str) -> bool {
    listed(name, &CUTTING_AT_CURSOR)
}

/// Whether `name` is in `names`, in a const context.
const fn listed(name: &str, names: &[&str]) -> bool {
    let mut i = 0;
    while i < names.len() {
        if same_bytes(name.as_bytes(), names[i].as_bytes()) {
            return true;
        }
        i += 1;
    }
    false
}

/// `a == b`, in a const context.
const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The emulator's `input`, with the cursor's row mended in insert mode: shifting the row right
/// can take a spacer away from its wide character (alacritty mends what it overwrites, not what
/// it shifts).
fn input<L: EventListener>(term: &mut Term<L>, c: char) {
    term.input(c);
    if term.mode().contains(TermMode::INSERT) {
        mend_wide_chars(term, false);
    }
}

/// Blanks the half left of every wide character an erase, insertion or deletion cut in two in the
/// cursor's row, as xterm does: alacritty leaves it, and a spacer without its character (or a
/// character without its spacer) is a cell no sequence can paint again, so a viewer repainted from
/// a snapshot would show that row shifted by a column. With `near_cursor`, the cut can only be at
/// the cursor cell's edges (see [`CUTTING_AT_CURSOR`]), and only the cells around it are looked
/// at: erasing to the end of a line is common, and a look at the whole row cost a tenth of an
/// escape-heavy stream's parse.
fn mend_wide_chars<L: EventListener>(term: &mut Term<L>, near_cursor: bool) {
    let grid = term.grid_mut();
    let cols = grid.columns();
    let point = grid.cursor.point;
    let row = &mut grid[point.line];
    let columns = if near_cursor {
        point.column.0.saturating_sub(1)..(point.column.0 + 2).min(cols)
    } else {
        // Most rows hold no wide character: one pass over the flags tells.
        let wide = Flags::WIDE_CHAR | Flags::WIDE_CHAR_SPACER;
        if !row[..Column(cols)]
            .iter()
            .any(|cell| cell.flags.intersects(wide))
        {
            return;
        }
        0..cols
    };
    for col in columns {
        let flags = row[Column(col)].flags;
        let orphan = if flags.contains(Flags::WIDE_CHAR) {
            col + 1 == cols || !row[Column(col + 1)].flags.contains(Flags::WIDE_CHAR_SPACER)
        } else if flags.contains(Flags::WIDE_CHAR_SPACER) {
            col == 0 || !row[Column(col - 1)].flags.contains(Flags::WIDE_CHAR)
        } else {
            false
        };
        if orphan {
            let cell = &mut row[Column(col)];
            cell.clear_wide();
            cell.flags.remove(Flags::WIDE_CHAR_SPACER);
        }
    }
}

impl<L: EventListener> Handler for PrintRuns<'_, L> {
    #[inline]
    fn input(&mut self, c: char) {
        // The emulator writes a character one column wide as it writes printable ASCII.
        if matches!(c, ' '..='~') {
            self.run.push(c);
            return;
        }
        match c.width() {
            Some(1) if !c.is_ascii() => self.run.push(c),
            Some(2) => {
                self.flush();
                if !(self.writes_plainly() && self.write_wide(c)) {
                    input(self.term, c);
                }
            }
            _ => {
                self.flush();
                input(self.term, c);
            }
        }
    }

    drawing_calls!(forward);
    private_mode_calls!(forward);
    other_calls!(forward);
}

#[cfg(test)]
mod tests {
    use alacritty_terminal::grid::Dimensions;
    use alacritty_terminal::index::{Column, Line};
    use alacritty_terminal::term::{Config, Term};
    use alacritty_terminal::vte::ansi::{Handler, Processor};
    use proptest::prelude::*;

    use super::PrintRuns;
    use crate::terminal::engine::{EngineEvents, NoSyncUpdates};

    struct Size(usize, usize);

    impl Dimensions for Size {
        fn total_lines(&self) -> usize {
            self.1
        }
        fn screen_lines(&self) -> usize {
            self.1
        }
        fn columns(&self) -> usize {
            self.0
        }
    }

    fn term() -> Term<EngineEvents> {
        let config = Config {
            scrolling_history: 6,
            ..Config::default()
        };
        Term::new(config, &Size(9, 4), EngineEvents::default())
    }

    /// Every cell of scrollback and screen, the cursor (with its pen and charsets) and the modes.
    fn state(term: &Term<EngineEvents>) -> impl PartialEq + std::fmt::Debug {
        let grid = term.grid();
        let history = grid.history_size() as i32;
        let cells: Vec<_> = (-history..grid.screen_lines() as i32)
            .flat_map(|line| {
                (0..grid.columns()).map(move |col| grid[Line(line)][Column(col)].clone())
            })
            .collect();
        (cells, grid.cursor.clone(), *term.mode())
    }

    /// Alacritty driven character by character, with wide characters cut in two mended as
    /// [`PrintRuns`] mends them: what runs must match.
    struct Single<'a>(&'a mut Term<EngineEvents>);

    macro_rules! forward_single {
        ($(fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*);)*) => {
            $(
                fn $name(&mut self $(, $arg: $ty)*) {
                    self.0.$name($($arg),*);
                    // The whole row, always: the reference for the look near the cursor.
                    if super::cuts_cursor_row(stringify!($name)) {
                        super::mend_wide_chars(self.0, false);
                    }
                }
            )*
        };
    }

    impl Handler for Single<'_> {
        fn input(&mut self, c: char) {
            super::input(self.0, c);
        }

        drawing_calls!(forward_single);
        private_mode_calls!(forward_single);
        other_calls!(forward_single);
    }

    proptest! {
        /// Batched printing leaves exactly the state printing one character at a time leaves.
        #[test]
        fn runs_print_as_single_characters_do(
            pieces in prop::collection::vec(
                prop_oneof![
                    "[a-z ~!]{1,14}",
                    Just("日".to_string()),
                    Just("🙂本".to_string()),
                    Just("\x1b[8G".to_string()),
                    Just("\x1b[9G".to_string()),
                    Just("e\u{301}".to_string()),
                    Just("→λé".to_string()),
                    Just("\x7f".to_string()),
                    Just("\r\n".to_string()),
                    Just("\n".to_string()),
                    Just("\t".to_string()),
                    Just("\x08".to_string()),
                    Just("\x1b[4h".to_string()),
                    Just("\x1b[4l".to_string()),
                    Just("\x1b[?7l".to_string()),
                    Just("\x1b[?7h".to_string()),
                    Just("\x1b(0".to_string()),
                    Just("\x1b(B".to_string()),
                    Just("\x0e".to_string()),
                    Just("\x0f".to_string()),
                    Just("\x1b[1;31;4:3m".to_string()),
                    Just("\x1b[58:5:3m".to_string()),
                    Just("\x1b[0m".to_string()),
                    Just("\x1b[3b".to_string()),
                    Just("\x1b[2;3r".to_string()),
                    Just("\x1b[r".to_string()),
                    Just("\x1b7".to_string()),
                    Just("\x1b8".to_string()),
                    Just("\x1b[?1049h".to_string()),
                    Just("\x1b[?1049l".to_string()),
                    Just("\x1b[2@".to_string()),
                    Just("\x1b[K".to_string()),
                    Just("\x1b[1K".to_string()),
                    Just("\x1b[2K".to_string()),
                    Just("\x1b[J".to_string()),
                    Just("\x1b[1J".to_string()),
                    Just("\x1b[2X".to_string()),
                    Just("\x1b[2P".to_string()),
                    (1u8..6, 1u8..11).prop_map(|(r, c)| format!("\x1b[{r};{c}H")),
                ],
                0..60,
            ),
            cut in 1usize..40,
        ) {
            let stream = pieces.concat().into_bytes();
            let (mut batched, mut single) = (term(), term());
            let (mut batched_parser, mut single_parser) =
                (Processor::<NoSyncUpdates>::new(), Processor::<NoSyncUpdates>::new());
            let mut run = Vec::new();
            for chunk in stream.chunks(cut) {
                let mut handler = PrintRuns::new(&mut batched, &mut run);
                batched_parser.advance(&mut handler, chunk);
                handler.flush();
                single_parser.advance(&mut Single(&mut single), chunk);
            }
            prop_assert_eq!(state(&batched), state(&single));
        }
    }
}
