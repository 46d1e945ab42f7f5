//! Rows as text for a reader that follows a program's output a piece at a time, as an agent does
//! between two looks at a command: the rows the screen shows ([`Terminal::shown_rows`]) and the
//! rows that scrolled off its top since the reader last looked ([`Terminal::take_scrolled`]).
//!
//! Taking the scrolled rows empties the primary screen's scrollback, so the next take holds
//! exactly the rows that scrolled off since this one, in order: the screen a reader saw last
//! lines up with what it sees next, row `i` of that screen being row `i` of the taken rows
//! followed by the new screen. Only a reader that owns the terminal may take them (nothing else
//! reads that scrollback afterwards). What breaks the line-up is said: the program cleared the
//! scrollback or reset the terminal, the terminal was resized (rows reflow), or more rows
//! scrolled off than the scrollback keeps.

use alacritty_terminal::term::TermMode;

use super::Terminal;
use super::engine::{row_text, row_wraps};

/// One row as the terminal shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShownRow {
    /// Its text, trailing blanks trimmed.
    pub text: String,
    /// It was filled and continues on the next row (one long line wrapped).
    pub wraps: bool,
}

/// The rows [`Terminal::take_scrolled`] took out of the scrollback.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scrolled {
    /// The rows that scrolled off the top of the primary screen since the last take, oldest first.
    pub rows: Vec<ShownRow>,
    /// The scrollback was full: rows that scrolled off before these may be gone.
    pub overflowed: bool,
    /// Since the last take the program cleared the scrollback (ED 3) or reset the terminal (RIS),
    /// or the terminal was resized: the rows do not line up with the screen seen then.
    pub realigned: bool,
}

impl Terminal {
    /// The rows of the active screen, top to bottom.
    pub fn shown_rows(&mut self) -> Vec<ShownRow> {
        self.engine.settle();
        let grid = self.engine.grid();
        (0..i32::from(self.engine.rows()))
            .map(|line| ShownRow {
                text: row_text(grid, line),
                wraps: row_wraps(grid, line),
            })
            .collect()
    }

    /// Takes the rows that scrolled off the top of the primary screen since the last take (see
    /// the module doc). While the alternate screen is on nothing can scroll off the primary
    /// screen, and nothing is taken.
    pub fn take_scrolled(&mut self) -> Scrolled {
        self.engine.settle();
        if self.engine.mode().contains(TermMode::ALT_SCREEN) {
            return Scrolled::default();
        }
        let limit = self.engine.scrollback_limit();
        let rows = self.engine.take_history(|grid, line| ShownRow {
            text: row_text(grid, line),
            wraps: row_wraps(grid, line),
        });
        Scrolled {
            overflowed: limit > 0 && rows.len() >= limit,
            realigned: std::mem::take(&mut self.scrollback_realigned),
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TerminalOptions;

    fn terminal(cols: u16, rows: u16, scrollback: usize) -> Terminal {
        Terminal::new(TerminalOptions {
            cols,
            rows,
            scrollback,
            answer_queries: true,
        })
    }

    fn texts(rows: &[ShownRow]) -> Vec<&str> {
        rows.iter().map(|row| row.text.as_str()).collect()
    }

    #[test]
    fn each_take_holds_the_rows_that_scrolled_off_since_the_last() {
        let mut term = terminal(10, 3, 100);
        term.feed(b"1\r\n2\r\n3\r\n4\r\n5");
        let scrolled = term.take_scrolled();
        assert_eq!(texts(&scrolled.rows), ["1", "2"]);
        assert!(!scrolled.overflowed && !scrolled.realigned);
        assert_eq!(texts(&term.shown_rows()), ["3", "4", "5"]);
        assert_eq!(term.take_scrolled(), Scrolled::default());
        term.feed(b"\r\n6");
        assert_eq!(texts(&term.take_scrolled().rows), ["3"]);
        // Taken rows are out of the scrollback, and so out of snapshots.
        assert_eq!(term.scrollback_lines(), Vec::<String>::new());
    }

    #[test]
    fn a_wrapped_row_says_so() {
        let mut term = terminal(5, 3, 100);
        term.feed(b"abcdefgh\r\nij");
        let rows = term.shown_rows();
        assert_eq!(texts(&rows), ["abcde", "fgh", "ij"]);
        assert_eq!(
            rows.iter().map(|row| row.wraps).collect::<Vec<_>>(),
            [true, false, false]
        );
    }

    #[test]
    fn a_full_scrollback_is_an_overflow() {
        let mut term = terminal(10, 2, 3);
        term.feed(b"1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n");
        let scrolled = term.take_scrolled();
        assert_eq!(texts(&scrolled.rows), ["3", "4", "5"]);
        assert!(scrolled.overflowed);
    }

    #[test]
    fn clearing_the_scrollback_resetting_or_resizing_realigns() {
        for (input, resize) in [(&b"\x1b[3J"[..], false), (b"\x1bc", false), (b"", true)] {
            let mut term = terminal(10, 3, 100);
            term.feed(b"1\r\n2\r\n3\r\n4");
            term.take_scrolled();
            term.feed(input);
            if resize {
                term.resize(12, 3);
            }
            assert!(term.take_scrolled().realigned, "{input:?}");
            assert!(!term.take_scrolled().realigned, "{input:?}");
        }
    }

    #[test]
    fn nothing_is_taken_on_the_alternate_screen() {
        let mut term = terminal(10, 3, 100);
        term.feed(b"1\r\n2\r\n3\r\n4\x1b[3J\x1b[?1049h");
        assert_eq!(term.take_scrolled(), Scrolled::default());
        term.feed(b"\x1b[?1049l");
        let scrolled = term.take_scrolled();
        assert!(scrolled.realigned);
    }
}
