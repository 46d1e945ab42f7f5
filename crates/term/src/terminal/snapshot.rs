//! The snapshot: one self-contained ANSI string that repaints a fresh terminal of the same size
//! with the same scrollback text, screen, attributes, cursor, title and input modes.
//!
//! Layout: RIS; on the primary screen, the cursor DECSC saved on the alternate one (kept across
//! visits), saved during a brief visit there; the primary screen's scrollback rows (all, or the
//! most recent up to a limit) then its visible rows, printed top to bottom so the rows past the
//! screen height scroll into the viewer's scrollback (rows that wrapped are printed to the last column and left to wrap, so reflow still
//! joins them; the row wrapped into gets at least its first cell, and is cleared past its text when
//! the wrap may have scrolled it in with a coloured background); then, when the alternate screen
//! is on, the primary cursor, `CSI ? 1049 h` (cleared when the pen it fills with is coloured) and
//! the alternate rows; then tab stops set by the program, the cursor saved by DECSC (when the
//! program saved one: position and pending wrap, pen and character sets, then `ESC 7`), the scroll
//! region, the cursor (with a pending wrap: the last character of the row is printed again so the
//! next one wraps), pen, character sets (G0–G3 designated as line
//! drawing), cursor visibility, input modes and title — everything the bytes that follow the
//! snapshot in a stream depend on. SGR per ECMA-48 §8.3.117 with xterm's 256-colour
//! and direct-colour forms.

use std::fmt::Write;

use alacritty_terminal::Grid;
use alacritty_terminal::grid::{Charsets, Cursor, Dimensions};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{CharsetIndex, Color, NamedColor, StandardCharset};

use super::engine::{Engine, is_plain_blank, row_wraps, shown_char};

/// Cell flags that change how a cell is drawn (and so go into SGR).
const STYLE: Flags = Flags::BOLD
    .union(Flags::DIM)
    .union(Flags::ITALIC)
    .union(Flags::ALL_UNDERLINES)
    .union(Flags::INVERSE)
    .union(Flags::HIDDEN)
    .union(Flags::STRIKEOUT);

/// The graphic rendition currently in effect in the output.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Pen {
    fg: Color,
    bg: Color,
    flags: Flags,
    underline: Option<Color>,
}

impl Default for Pen {
    fn default() -> Self {
        Self {
            fg: Color::Named(NamedColor::Foreground),
            bg: Color::Named(NamedColor::Background),
            flags: Flags::empty(),
            underline: None,
        }
    }
}

impl Pen {
    fn of(cell: &Cell) -> Self {
        Self {
            fg: cell.fg,
            bg: cell.bg,
            flags: cell.flags & STYLE,
            underline: cell.underline_color(),
        }
    }

    fn write(&self, out: &mut String) {
        out.push_str("\x1b[0");
        let flags = self.flags;
        let simple = [
            (Flags::BOLD, ";1"),
            (Flags::DIM, ";2"),
            (Flags::ITALIC, ";3"),
            (Flags::INVERSE, ";7"),
            (Flags::HIDDEN, ";8"),
            (Flags::STRIKEOUT, ";9"),
        ];
        for (flag, code) in simple {
            if flags.contains(flag) {
                out.push_str(code);
            }
        }
        let underline = [
            (Flags::UNDERLINE, ";4"),
            (Flags::DOUBLE_UNDERLINE, ";4:2"),
            (Flags::UNDERCURL, ";4:3"),
            (Flags::DOTTED_UNDERLINE, ";4:4"),
            (Flags::DASHED_UNDERLINE, ";4:5"),
        ];
        if let Some((_, code)) = underline.iter().find(|(flag, _)| flags.contains(*flag)) {
            out.push_str(code);
        }
        write_color(out, self.fg, 30, 90, 38);
        write_color(out, self.bg, 40, 100, 48);
        if let Some(color) = self.underline {
            write_color(out, color, 0, 0, 58);
        }
        out.push('m');
    }
}

/// Appends `;code` for a colour: `base+n` for the 8 colours, `bright+n` for their bright forms,
/// `extended;5;n` for the 256-colour palette and `extended;2;r;g;b` for direct colour.
fn write_color(out: &mut String, color: Color, base: u8, bright: u8, extended: u8) {
    let (base, bright) = (usize::from(base), usize::from(bright));
    match color {
        Color::Named(named) => {
            let index = named as usize;
            match index {
                0..=7 if base != 0 => push_param(out, base + index),
                8..=15 if base != 0 => push_param(out, bright + index - 8),
                0..=15 => push_params(out, &[extended.into(), 5, index]),
                // Dim variants of the 8 colours map back to the colour; SGR 2 carries the dimness.
                259..=266 if base != 0 => push_param(out, base + index - 259),
                _ => {}
            }
        }
        Color::Indexed(index) => push_params(out, &[extended.into(), 5, index.into()]),
        Color::Spec(rgb) => push_params(
            out,
            &[extended.into(), 2, rgb.r.into(), rgb.g.into(), rgb.b.into()],
        ),
    }
}

/// Appends `;value` for each value (SGR parameters are written for every coloured run, so this
/// avoids `fmt`'s machinery, which cost more than the rest of a snapshot's row).
fn push_params(out: &mut String, values: &[usize]) {
    for &value in values {
        push_param(out, value);
    }
}

fn push_param(out: &mut String, value: usize) {
    out.push(';');
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.extend(digits[at..].iter().map(|&digit| char::from(digit)));
}

/// Writes the rows `first..end` (grid line numbers, negative for scrollback) joined by `\r\n`,
/// except after rows that wrap.
fn write_rows(out: &mut String, grid: &Grid<Cell>, first: i32, end: i32, pen: &mut Pen) {
    let mut wrapped_into = false;
    for line in first..end {
        if line + 1 < end {
            prefetch_row(&grid[Line(line + 1)][..]);
        }
        let wraps = row_wraps(grid, line);
        let printed = write_row(out, grid, line, wraps, wrapped_into, pen);
        if wrapped_into
            && printed < grid.columns()
            && grid[Line(line)][Column(0)].bg != Color::Named(NamedColor::Background)
        {
            // The wrap into this row, made by printing its first cell, may have scrolled it in
            // filled with that cell's background (BCE); the blanks left out after its text are plain.
            out.push_str("\x1b[0m\x1b[K");
            *pen = Pen::default();
        }
        wrapped_into = wraps;
        if line + 1 < end && !wraps {
            if *pen != Pen::default() {
                // Reset before the line feed: a coloured pen would paint the new line (BCE).
                out.push_str("\x1b[0m");
                *pen = Pen::default();
            }
            out.push_str("\r\n");
        }
    }
}

/// Asks the CPU to load `cells` into its cache while the row before is written. Each row of the
/// grid is an allocation of its own, a few kilobytes away from the last: the hardware prefetcher
/// starts over at every row, and a snapshot of a full scrollback spent most of its time waiting
/// for the first cache lines of each.
fn prefetch_row(cells: &[Cell]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let bytes = std::mem::size_of_val(cells);
        let start = cells.as_ptr().cast::<i8>();
        for offset in (0..bytes).step_by(64) {
            // SAFETY: SSE is part of every x86_64 CPU; a prefetch only hints the cache and never
            // faults, and the address is inside the row anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cells;
}

/// Writes one row, leaving out its trailing plain blanks unless `full`, but not its first cell when
/// `wrapped_into` (the row before wrapped: only a character printed makes the cursor follow);
/// returns the columns written.
fn write_row(
    out: &mut String,
    grid: &Grid<Cell>,
    line: i32,
    full: bool,
    wrapped_into: bool,
    pen: &mut Pen,
) -> usize {
    let end = row_end(grid, line, full, wrapped_into);
    let cells = &grid[Line(line)][..Column(end)];
    let mut at = 0;
    while let Some(cell) = cells.get(at) {
        if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
            at += 1;
            continue;
        }
        let cell_pen = Pen::of(cell);
        if cell_pen != *pen {
            cell_pen.write(out);
            *pen = cell_pen;
        }
        // Most of a row is runs of printable ASCII in one pen: told from the cells' fields, which
        // costs less than making and comparing a pen per cell, and written in blocks.
        let run = cells[at..]
            .iter()
            .take_while(|next| is_plain_ascii(next) && same_style(cell, next))
            .count();
        if run > 0 {
            push_ascii(out, &cells[at..at + run]);
            at += run;
        } else {
            write_cell_text(out, cell);
            at += 1;
        }
    }
    end
}

/// The columns [`write_row`] writes: all when `full`, else up to the last cell that is not a plain
/// blank (at least the first when `wrapped_into`).
fn row_end(grid: &Grid<Cell>, line: i32, full: bool, wrapped_into: bool) -> usize {
    let row = &grid[Line(line)];
    let cols = grid.columns();
    if full {
        return cols;
    }
    (0..cols)
        .rev()
        .find(|&c| !is_plain_blank(&row[Column(c)]))
        .map_or(usize::from(wrapped_into), |c| c + 1)
}

/// A cell showing printable ASCII with nothing attached (no combining mark, no wide character).
#[inline]
fn is_plain_ascii(cell: &Cell) -> bool {
    matches!(cell.c, ' '..='~')
        && cell.extra.is_none()
        && !cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER)
}

/// Appends the characters of cells that are [`is_plain_ascii`]. They are gathered on the stack
/// first: pushed to the string one by one, every byte stored made the string's length and buffer
/// be read again.
fn push_ascii(out: &mut String, cells: &[Cell]) {
    const BLOCK: usize = 64;
    for block in cells.chunks(BLOCK) {
        let mut bytes = [0u8; BLOCK];
        for (byte, cell) in bytes.iter_mut().zip(block) {
            *byte = u8::try_from(cell.c).unwrap_or(b' ');
        }
        // Printable ASCII only, so always valid.
        out.push_str(std::str::from_utf8(&bytes[..block.len()]).unwrap_or_default());
    }
}

/// Whether two cells have the same pen, told from their fields without making one (`false` when a
/// cell has extras, which may hold an underline colour).
#[inline]
fn same_style(a: &Cell, b: &Cell) -> bool {
    a.extra.is_none()
        && b.extra.is_none()
        && (a.flags ^ b.flags).intersection(STYLE).is_empty()
        && same_color(a.fg, b.fg)
        && same_color(a.bg, b.bg)
}

/// `a == b`, matched variant by variant (the derived comparison costs several times more).
#[inline]
fn same_color(a: Color, b: Color) -> bool {
    match (a, b) {
        (Color::Named(a), Color::Named(b)) => a as usize == b as usize,
        (Color::Indexed(a), Color::Indexed(b)) => a == b,
        (Color::Spec(a), Color::Spec(b)) => (a.r, a.g, a.b) == (b.r, b.g, b.b),
        _ => false,
    }
}

/// A cell's character and combining marks; tabs and empty cells as blanks.
fn write_cell_text(out: &mut String, cell: &Cell) {
    if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) || cell.c == '\0' {
        out.push(' ');
        return;
    }
    out.push(shown_char(cell));
    if let Some(marks) = cell.zerowidth() {
        out.extend(marks);
    }
}

/// Writes the grid's screen, after its last `history` scrollback rows (fewer when it has fewer),
/// returning the pen left in effect.
fn write_grid(out: &mut String, grid: &Grid<Cell>, history: usize) -> Pen {
    let mut pen = Pen::default();
    let history = i32::try_from(history.min(grid.history_size())).unwrap_or(i32::MAX);
    let rows = grid.screen_lines() as i32;
    // Without scrollback, rows below the last non-blank one need not be printed (nothing to push up).
    let end = if history > 0 {
        rows
    } else {
        (0..rows)
            .rev()
            .find(|&l| !row_is_blank(grid, l))
            .map_or(0, |l| l + 1)
    };
    write_rows(out, grid, -history, end, &mut pen);
    if pen != Pen::default() {
        out.push_str("\x1b[0m");
        pen = Pen::default();
    }
    pen
}

fn row_is_blank(grid: &Grid<Cell>, line: i32) -> bool {
    let row = &grid[Line(line)];
    (0..grid.columns()).all(|c| is_plain_blank(&row[Column(c)]))
}

/// Positions the cursor. When it stands past the last column (the next character wraps first), the
/// last character of its row is printed again from the column before, which leaves a replaying
/// terminal in the same state; the pen is reset afterwards.
fn write_cursor(out: &mut String, grid: &Grid<Cell>, origin_top: u16) {
    write_position(out, grid, &grid.cursor, origin_top);
}

/// Puts the cursor where `cursor` stands in `grid`, as [`write_cursor`] does.
fn write_position(out: &mut String, grid: &Grid<Cell>, cursor: &Cursor<Cell>, origin_top: u16) {
    let row = (cursor.point.line.0.max(0) as u32 + 1)
        .saturating_sub(u32::from(origin_top.saturating_sub(1)))
        .max(1);
    let line = &grid[cursor.point.line];
    let mut col = cursor.point.column.0;
    let pending = cursor.input_needs_wrap && col + 1 == grid.columns();
    if pending && col > 0 && line[Column(col)].flags.contains(Flags::WIDE_CHAR_SPACER) {
        col -= 1;
    }
    let _ = write!(out, "\x1b[{};{}H", row, col + 1);
    if pending {
        let cell = &line[Column(col)];
        Pen::of(cell).write(out);
        write_cell_text(out, cell);
        out.push_str("\x1b[0m");
    }
}

/// Replaces the default tab stops by `stops` (one flag per column).
fn write_tab_stops(out: &mut String, stops: &[bool]) {
    out.push_str("\x1b[3g");
    for (col, _) in stops.iter().enumerate().filter(|(_, set)| **set) {
        let _ = write!(out, "\x1b[{}G\x1bH", col + 1);
    }
}

/// Builds the snapshot of `engine` with at most `history` scrollback rows (the most recent);
/// `scroll_region` is the DECSTBM region (1-based) when one is set.
pub(crate) fn snapshot(
    engine: &mut Engine,
    history: usize,
    scroll_region: Option<(u16, u16)>,
    tab_stops: Option<&[bool]>,
    title: &str,
) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str("\x1bc");
    if let Some(saved) = engine.alternate_saved_cursor()
        && saved != Cursor::default()
    {
        // A brief visit saves it there; leaving brings the fresh primary screen back as it was.
        out.push_str("\x1b[?1049h");
        // Its pending wrap is printed on the fresh alternate screen, which the next visit resets.
        write_saved_cursor(&mut out, engine.grid(), &saved);
        out.push_str("\x1b[?1049l");
    }
    let modes = engine.mode();
    let alternate = modes.contains(TermMode::ALT_SCREEN);
    let primary_cursor = engine.with_primary_grid(|grid| {
        let rows = history.min(grid.history_size()) + grid.screen_lines();
        out.reserve(rows * (grid.columns() + 2));
        write_grid(&mut out, grid, history);
        alternate.then(|| {
            // `CSI ? 1049 h` saves the primary cursor, which `CSI ? 1049 l` restores.
            write_cursor(&mut out, grid, 1);
            write_cursor_state(&mut out, &grid.cursor);
            grid.cursor.clone()
        })
    });
    if let Some(primary_cursor) = primary_cursor {
        out.push_str("\x1b[?1049h");
        reset_cursor_state(&mut out, &primary_cursor);
        if primary_cursor.template.bg != Color::Named(NamedColor::Background) {
            // Entering fills the alternate screen with the pen's background (alacritty's
            // `swap_alt` resets it to the cursor template); the rows below leave plain blanks out.
            out.push_str("\x1b[2J");
        }
        out.push_str("\x1b[H");
        write_grid(&mut out, engine.grid(), 0);
    }
    if let Some(stops) = tab_stops {
        write_tab_stops(&mut out, stops);
    }
    let saved = engine.grid().saved_cursor.clone();
    write_saved_cursor(&mut out, engine.grid(), &saved);
    if let Some((top, bottom)) = scroll_region {
        let _ = write!(out, "\x1b[{top};{bottom}r");
    }
    let mut origin_top = 1;
    if modes.contains(TermMode::ORIGIN) {
        out.push_str("\x1b[?6h");
        origin_top = scroll_region.map_or(1, |(top, _)| top);
    }
    write_cursor(&mut out, engine.grid(), origin_top);
    let pen = Pen::of(engine.cursor_template());
    if pen != Pen::default() {
        pen.write(&mut out);
    }
    write_charsets(
        &mut out,
        engine.grid().cursor.charsets,
        StandardCharset::Ascii,
    );
    write_modes(&mut out, modes);
    let title: String = title.chars().filter(|c| !c.is_control()).collect();
    if !title.is_empty() {
        let _ = write!(out, "\x1b]2;{title}\x1b\\");
    }
    out
}

const CHARSETS: [(CharsetIndex, char); 4] = [
    (CharsetIndex::G0, '('),
    (CharsetIndex::G1, ')'),
    (CharsetIndex::G2, '*'),
    (CharsetIndex::G3, '+'),
];

/// Designates every character set of `charsets` that is not `unless` (SCS: `ESC ( 0` for line
/// drawing, `ESC ( B` for ASCII, with `)`, `*`, `+` for G1–G3).
fn write_charsets(out: &mut String, charsets: Charsets, unless: StandardCharset) {
    for (index, designator) in CHARSETS {
        let charset = charsets[index];
        if charset != unless {
            let code = match charset {
                StandardCharset::Ascii => 'B',
                StandardCharset::SpecialCharacterAndLineDrawing => '0',
            };
            let _ = write!(out, "\x1b{designator}{code}");
        }
    }
}

/// Recreates the cursor DECSC saved (a later `ESC 8` restores it), unless it is the default one a
/// fresh terminal has anyway. A pending wrap is saved with it, so it is made as for the cursor.
fn write_saved_cursor(out: &mut String, grid: &Grid<Cell>, saved: &Cursor<Cell>) {
    if *saved == Cursor::default() {
        return;
    }
    write_position(out, grid, saved, 1);
    write_cursor_state(out, saved);
    out.push_str("\x1b7");
    reset_cursor_state(out, saved);
}

/// Takes on the pen and character sets of `cursor`, for a save (`ESC 7`, `CSI ? 1049 h`) to keep.
fn write_cursor_state(out: &mut String, cursor: &Cursor<Cell>) {
    let pen = Pen::of(&cursor.template);
    if pen != Pen::default() {
        pen.write(out);
    }
    write_charsets(out, cursor.charsets, StandardCharset::Ascii);
}

/// Back to the default pen and ASCII after [`write_cursor_state`].
fn reset_cursor_state(out: &mut String, cursor: &Cursor<Cell>) {
    out.push_str("\x1b[0m");
    for (index, designator) in CHARSETS {
        if cursor.charsets[index] != StandardCharset::Ascii {
            let _ = write!(out, "\x1b{designator}B");
        }
    }
}

fn write_modes(out: &mut String, modes: TermMode) {
    let private = [
        (TermMode::APP_CURSOR, 1),
        (TermMode::MOUSE_REPORT_CLICK, 1000),
        (TermMode::MOUSE_DRAG, 1002),
        (TermMode::MOUSE_MOTION, 1003),
        (TermMode::FOCUS_IN_OUT, 1004),
        (TermMode::UTF8_MOUSE, 1005),
        (TermMode::SGR_MOUSE, 1006),
        (TermMode::BRACKETED_PASTE, 2004),
    ];
    for (mode, number) in private {
        if modes.contains(mode) {
            let _ = write!(out, "\x1b[?{number}h");
        }
    }
    if !modes.contains(TermMode::LINE_WRAP) {
        out.push_str("\x1b[?7l");
    }
    if !modes.contains(TermMode::SHOW_CURSOR) {
        out.push_str("\x1b[?25l");
    }
    if modes.contains(TermMode::APP_KEYPAD) {
        out.push_str("\x1b=");
    }
    if modes.contains(TermMode::INSERT) {
        out.push_str("\x1b[4h");
    }
    if modes.contains(TermMode::LINE_FEED_NEW_LINE) {
        out.push_str("\x1b[20h");
    }
}

#[cfg(test)]
mod tests {
    use alacritty_terminal::grid::Dimensions;
    use proptest::prelude::*;

    use super::*;
    use crate::terminal::engine::Engine;

    /// [`write_row`] as it was before runs: a pen made and compared, and the text written, for
    /// every cell. Returns the row's text and the columns written.
    fn row_per_cell(
        grid: &Grid<Cell>,
        line: i32,
        edges: (bool, bool),
        pen: &mut Pen,
    ) -> (String, usize) {
        let (full, wrapped_into) = edges;
        let mut out = String::new();
        let row = &grid[Line(line)];
        let end = row_end(grid, line, full, wrapped_into);
        for col in 0..end {
            let cell = &row[Column(col)];
            if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
                continue;
            }
            let cell_pen = Pen::of(cell);
            if cell_pen != *pen {
                cell_pen.write(&mut out);
                *pen = cell_pen;
            }
            write_cell_text(&mut out, cell);
        }
        (out, end)
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[ -~]{1,30}",
            2 => prop::sample::select(vec![
                "\x1b[0m", "\x1b[1;31m", "\x1b[2;3;4;7;8;9m", "\x1b[38;5;200m", "\x1b[48;5;3m",
                "\x1b[38;2;1;2;3m", "\x1b[48;2;0;0;0m", "\x1b[58;5;9m", "\x1b[4:3m", "\x1b[39;49m",
                "\x1b[91m", "\x1b[100m",
            ])
            .prop_map(str::to_owned),
            1 => prop::sample::select(vec![
                "日本", "🙂", "e\u{301}", "\t", "\x1b[K", "\x1b[1K", "\x1b[3D", "\x1b[2G", "\r\n",
                "\n", "\r", "\x1b[5C", "\u{a0}λ→",
            ])
            .prop_map(str::to_owned),
        ]
    }

    proptest! {
        /// Rows written a run at a time read exactly as rows written a cell at a time, with the
        /// same pen left in effect, whatever the pen was before.
        #[test]
        fn rows_by_runs_match_rows_by_cells(
            pieces in prop::collection::vec(piece(), 0..80),
            full in any::<bool>(),
            wrapped_into in any::<bool>(),
        ) {
            let mut engine = Engine::new(17, 4, 20);
            engine.advance(pieces.concat().as_bytes());
            engine.settle();
            let grid = engine.grid();
            let (mut pen, mut slow_pen) = (Pen::default(), Pen::default());
            for line in -(grid.history_size() as i32)..grid.screen_lines() as i32 {
                let mut fast = String::new();
                let end = write_row(&mut fast, grid, line, full, wrapped_into, &mut pen);
                let slow = row_per_cell(grid, line, (full, wrapped_into), &mut slow_pen);
                prop_assert_eq!((fast, end), slow);
                prop_assert!(pen == slow_pen);
            }
        }
    }

    #[test]
    fn sgr_numbers_are_written_in_decimal() {
        let mut out = String::new();
        for color in [
            Color::Named(NamedColor::Red),
            Color::Named(NamedColor::BrightWhite),
            Color::Indexed(0),
            Color::Indexed(255),
            Color::Spec(alacritty_terminal::vte::ansi::Rgb {
                r: 0,
                g: 10,
                b: 255,
            }),
        ] {
            write_color(&mut out, color, 30, 90, 38);
        }
        assert_eq!(out, ";31;97;38;5;0;38;5;255;38;2;0;10;255");
    }
}
