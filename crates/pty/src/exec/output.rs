//! What an exec session's update shows of its terminal: the text that is new since the previous
//! update, rendered by the terminal model (what a person would read, no escape sequences).
//!
//! How "new" is decided, on the primary screen: the session's terminal is read only by these
//! updates, so each update takes the rows that scrolled off the top since the previous one out of
//! the scrollback ([`Terminal::take_scrolled`]). Those rows followed by the screen's rows form the
//! transcript since the previous update, and row `i` of it is the row that was row `i` of the
//! screen the previous update saw (it moved up by exactly as many rows as scrolled off). The
//! update returns the transcript from the first row that differs from what that row showed then
//! (or that the previous update did not reach) to the last row that holds text. So a line printed
//! once is returned once, even when it scrolled by unseen; a line rewritten in place (a progress
//! bar's `\r`, a prompt that got typed into) is returned again with its new text, and so is
//! everything below it; blank rows at the end wait until something follows them. A row wrapped
//! from the row before it starts with that row, so a long line always comes whole (wrapped rows
//! are joined back into one line).
//!
//! When the program cleared the scrollback or reset the terminal since (`clear` does), the
//! previous screen no longer lines up: everything the terminal shows is new. When more rows
//! scrolled off than the scrollback keeps, the oldest are gone before any update saw them.
//!
//! On the alternate screen (a full-screen program: vim, less, htop) there is no transcript, only
//! a screen: the update returns the whole screen (trailing blank rows dropped) when any of it
//! changed since the previous update, and nothing when it is the same. The primary screen waits
//! meanwhile, as it does in a terminal, and is followed again once the program leaves.

use shellwright_term::{ShownRow, Terminal};

/// Where the previous update left the terminal (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct OutputCursor {
    /// The primary screen's rows as the previous update saw them, up to its last row with text.
    shown: Vec<ShownRow>,
    /// The alternate screen's text the previous update returned, while that screen is on.
    alternate: Option<Vec<String>>,
}

impl OutputCursor {
    /// The text that is new since the previous call, lines joined by `\n` (see the module doc).
    pub(crate) fn next(&mut self, terminal: &mut Terminal) -> String {
        if terminal.modes().alt_screen {
            return self.next_screen(terminal);
        }
        self.alternate = None;
        let scrolled = terminal.take_scrolled();
        let screen = terminal.shown_rows();
        if scrolled.realigned || scrolled.overflowed {
            self.shown.clear();
        }
        let offscreen = scrolled.rows.len();
        let transcript: Vec<ShownRow> = scrolled.rows.into_iter().chain(screen).collect();
        let end = transcript
            .iter()
            .rposition(|row| !row.text.is_empty())
            .map_or(0, |last| last + 1);
        let mut first = (0..end)
            .find(|&i| self.shown.get(i) != Some(&transcript[i]))
            .unwrap_or(end);
        while first > 0 && first < end && transcript[first - 1].wraps {
            first -= 1;
        }
        let text = joined(&transcript[first..end]);
        self.shown = transcript
            .into_iter()
            .skip(offscreen)
            .take(end.saturating_sub(offscreen))
            .collect();
        text
    }

    fn next_screen(&mut self, terminal: &mut Terminal) -> String {
        let mut lines = terminal.screen().lines;
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        if self.alternate.as_ref() == Some(&lines) {
            return String::new();
        }
        let text = lines.join("\n");
        self.alternate = Some(lines);
        text
    }
}

/// Rows as lines: a row that wraps continues on the next without a line break.
fn joined(rows: &[ShownRow]) -> String {
    let mut text = String::with_capacity(rows.iter().map(|row| row.text.len() + 1).sum());
    for (i, row) in rows.iter().enumerate() {
        text.push_str(&row.text);
        if i + 1 < rows.len() && !row.wraps {
            text.push('\n');
        }
    }
    text
}

/// `text` cut to its last `max_bytes` bytes (at a character boundary, so possibly fewer), and how
/// many bytes were dropped from its front.
pub(crate) fn keep_tail(mut text: String, max_bytes: usize) -> (String, usize) {
    if text.len() <= max_bytes {
        return (text, 0);
    }
    let mut cut = text.len() - max_bytes;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text.drain(..cut);
    (text, cut)
}

#[cfg(test)]
mod tests {
    use shellwright_term::TerminalOptions;

    use super::*;

    fn terminal(cols: u16, rows: u16, scrollback: usize) -> Terminal {
        Terminal::new(TerminalOptions {
            cols,
            rows,
            scrollback,
            answer_queries: true,
        })
    }

    /// Feeds `bytes`, then takes the next update's text.
    fn after(cursor: &mut OutputCursor, term: &mut Terminal, bytes: &str) -> String {
        term.feed(bytes.as_bytes());
        cursor.next(term)
    }

    #[test]
    fn lines_come_once_each_whether_seen_on_the_screen_or_scrolled_by_unseen() {
        let (mut term, mut cursor) = (terminal(20, 4, 100), OutputCursor::default());
        let mut seen = Vec::new();
        let mut next = 0;
        // Updates after 1, 2, 3, … 7 more lines: some while the screen fills, some that scroll
        // the screen by more than its height between two updates.
        for batch in 1..=7 {
            let lines: String = (next..next + batch)
                .map(|i| format!("line {i}\r\n"))
                .collect();
            next += batch;
            let text = after(&mut cursor, &mut term, &lines);
            seen.extend(text.lines().map(str::to_string));
        }
        let expected: Vec<String> = (0..next).map(|i| format!("line {i}")).collect();
        assert_eq!(seen, expected);
        assert_eq!(cursor.next(&mut term), "");
    }

    #[test]
    fn a_line_being_written_comes_again_with_what_was_added() {
        let (mut term, mut cursor) = (terminal(20, 4, 100), OutputCursor::default());
        assert_eq!(after(&mut cursor, &mut term, "a\r\n>>> "), "a\n>>>");
        assert_eq!(
            after(&mut cursor, &mut term, "print(1)\r\n1\r\n>>> "),
            ">>> print(1)\n1\n>>>"
        );
        assert_eq!(after(&mut cursor, &mut term, ""), "");
    }

    #[test]
    fn a_progress_bar_rewritten_with_carriage_returns_shows_its_latest_state() {
        let (mut term, mut cursor) = (terminal(30, 4, 100), OutputCursor::default());
        assert_eq!(
            after(&mut cursor, &mut term, "fetching\r\n 10%"),
            "fetching\n 10%"
        );
        assert_eq!(after(&mut cursor, &mut term, "\r 40%\r 70%"), " 70%");
        assert_eq!(after(&mut cursor, &mut term, "\r 70%"), "");
        assert_eq!(
            after(&mut cursor, &mut term, "\r100%\r\ndone\r\n"),
            "100%\ndone"
        );
    }

    #[test]
    fn after_a_clear_only_what_follows_it_is_new() {
        let (mut term, mut cursor) = (terminal(20, 4, 100), OutputCursor::default());
        assert_eq!(after(&mut cursor, &mut term, "one\r\ntwo\r\n"), "one\ntwo");
        // `clear` with E3: home, erase the screen (into the scrollback), erase the scrollback.
        assert_eq!(
            after(&mut cursor, &mut term, "\x1b[H\x1b[2J\x1b[3Jone\r\n"),
            "one"
        );
        // Without E3 the erased rows scroll into the scrollback, and line up all the same.
        assert_eq!(
            after(&mut cursor, &mut term, "\x1b[H\x1b[2Jthree\r\n"),
            "three"
        );
        // Erasing in place from home: the row that changed and what follows it.
        assert_eq!(
            after(&mut cursor, &mut term, "\x1b[H\x1b[Jfour\r\n"),
            "four"
        );
    }

    #[test]
    fn a_long_line_comes_whole_even_when_only_its_end_changed() {
        let (mut term, mut cursor) = (terminal(10, 4, 100), OutputCursor::default());
        let long = "0123456789abcdefghij-xyz";
        assert_eq!(after(&mut cursor, &mut term, long), long);
        assert_eq!(after(&mut cursor, &mut term, "!"), format!("{long}!"));
    }

    #[test]
    fn the_alternate_screen_comes_whole_when_it_changed_and_the_primary_waits() {
        let (mut term, mut cursor) = (terminal(20, 4, 100), OutputCursor::default());
        assert_eq!(after(&mut cursor, &mut term, "$ vim\r\n"), "$ vim");
        assert_eq!(
            after(&mut cursor, &mut term, "\x1b[?1049h\x1b[Hfile\r\n~"),
            "file\n~"
        );
        assert_eq!(after(&mut cursor, &mut term, "\x1b[2;1H~"), "");
        assert_eq!(
            after(&mut cursor, &mut term, "\x1b[3;1H-- INSERT --"),
            "file\n~\n-- INSERT --"
        );
        assert_eq!(
            after(&mut cursor, &mut term, "\x1b[?1049l$ done\r\n"),
            "$ done"
        );
    }

    #[test]
    fn rows_lost_past_the_scrollback_leave_what_was_kept_as_new() {
        let (mut term, mut cursor) = (terminal(20, 2, 3), OutputCursor::default());
        assert_eq!(after(&mut cursor, &mut term, "a\r\n"), "a");
        let lines: String = (0..10).map(|i| format!("{i}\r\n")).collect();
        // 3 rows of scrollback and 2 of screen (the second the empty row under the cursor):
        // 6..9 are what is left of 0..9, and all of it is new.
        assert_eq!(after(&mut cursor, &mut term, &lines), "6\n7\n8\n9");
    }

    #[test]
    fn the_tail_is_kept_at_a_character_boundary() {
        assert_eq!(keep_tail("hello".into(), 10), ("hello".into(), 0));
        assert_eq!(keep_tail("hello".into(), 3), ("llo".into(), 2));
        // "é" is two bytes: cutting inside it drops it whole.
        assert_eq!(keep_tail("aéb".into(), 2), ("b".into(), 3));
        assert_eq!(keep_tail("abc".into(), 0), (String::new(), 3));
    }
}
