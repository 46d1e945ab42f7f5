//! What each visible row looks like, not only what it says: runs of text that share colours and
//! attributes ([`StyledRun`]), so a viewer or an agent can tell a red error line or a menu entry
//! highlighted only by its colour from plain text; and the rows whose text or look changed since
//! they were last looked at ([`Damage`]).
//!
//! Colours are those the program chose, not those a theme would render: a palette index (SGR
//! 30–37, 90–97 and `38;5;n` all name palette entries, as in xterm) or a direct colour (`38;2`).
//! The default foreground and background are no colour at all. Bold is not turned into a bright
//! colour, nor dim into a darker one: that is the renderer's business.

use alacritty_terminal::Grid;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, NamedColor};

use super::engine::{is_plain_blank, shown_char};

/// A colour as the program set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunColor {
    /// An entry of the 256-colour palette (0–15 are the 16 ANSI colours).
    Palette(u8),
    /// A direct colour.
    Rgb(u8, u8, u8),
}

impl RunColor {
    /// The colour of a cell, `None` for the default one.
    fn of(color: Color) -> Option<Self> {
        match color {
            Color::Indexed(index) => Some(Self::Palette(index)),
            Color::Spec(rgb) => Some(Self::Rgb(rgb.r, rgb.g, rgb.b)),
            Color::Named(named) => {
                let index = named as usize;
                // The 16 ANSI colours, and the dim forms of the first 8, which are the colour with
                // `dim` set (the flag carries the dimness).
                let dim_black = NamedColor::DimBlack as usize;
                let palette = match index {
                    0..=15 => index,
                    _ if (dim_black..dim_black + 8).contains(&index) => index - dim_black,
                    _ => return None,
                };
                u8::try_from(palette).ok().map(Self::Palette)
            }
        }
    }
}

/// How a run of cells is drawn; `Default` is plain text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub fg: Option<RunColor>,
    pub bg: Option<RunColor>,
    pub bold: bool,
    pub italic: bool,
    /// Any underline: single, double, curly, dotted or dashed.
    pub underline: bool,
    /// Reverse video (SGR 7): foreground and background swapped when drawn.
    pub inverse: bool,
    pub dim: bool,
    pub strikethrough: bool,
}

impl Style {
    fn of(cell: &Cell) -> Self {
        let flags = cell.flags;
        Self {
            fg: RunColor::of(cell.fg),
            bg: RunColor::of(cell.bg),
            bold: flags.contains(Flags::BOLD),
            italic: flags.contains(Flags::ITALIC),
            underline: flags.intersects(Flags::ALL_UNDERLINES),
            inverse: flags.contains(Flags::INVERSE),
            dim: flags.contains(Flags::DIM),
            strikethrough: flags.contains(Flags::STRIKEOUT),
        }
    }
}

/// Text drawn in one style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StyledRun {
    pub text: String,
    pub style: Style,
}

/// The runs of one grid row, left to right. They end at the row's last cell that is not a plain
/// blank (a blank on the default background, neither reversed, underlined nor struck through),
/// so their texts joined give the row's text as `screen().lines` has it, plus any trailing blanks
/// that show (a highlighted bar drawn to the edge). Wide characters take one character of text,
/// combining marks stay with their base.
pub(crate) fn styled_row(grid: &Grid<Cell>, line: i32) -> Vec<StyledRun> {
    let row = &grid[Line(line)];
    let end = (0..grid.columns())
        .rev()
        .find(|&col| !is_plain_blank(&row[Column(col)]))
        .map_or(0, |col| col + 1);
    let mut runs = Vec::new();
    let mut current: Option<StyledRun> = None;
    for col in 0..end {
        let cell = &row[Column(col)];
        if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
            continue;
        }
        let style = Style::of(cell);
        if current.as_ref().is_some_and(|run| run.style != style) {
            runs.extend(current.take());
        }
        let run = current.get_or_insert_with(|| StyledRun {
            text: String::new(),
            style,
        });
        if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
            run.text.push(' ');
            continue;
        }
        run.text.push(shown_char(cell));
        if let Some(marks) = cell.zerowidth() {
            run.text.extend(marks);
        }
    }
    runs.extend(current);
    runs
}

/// The visible rows as they were when [`Damage::changed`] was last called, to tell which changed.
/// Kept as runs rather than cells: rows compare by what they show, so a change that shows nothing
/// (a colour set on trailing blanks) is no change, and the comparison is exact, with no hash that
/// could collide.
#[derive(Default)]
pub(crate) struct Damage {
    seen: Option<Vec<Vec<StyledRun>>>,
}

impl Damage {
    /// The rows of `now` that differ from the rows last seen, in order (every row the first time,
    /// and rows a resize added); `now` is kept for the next call.
    pub(crate) fn changed(&mut self, now: Vec<Vec<StyledRun>>) -> Vec<u16> {
        let changed = (0..now.len())
            .filter(|&row| {
                self.seen
                    .as_ref()
                    .and_then(|seen| seen.get(row))
                    .is_none_or(|before| *before != now[row])
            })
            .map(|row| u16::try_from(row).unwrap_or(u16::MAX))
            .collect();
        self.seen = Some(now);
        changed
    }
}
