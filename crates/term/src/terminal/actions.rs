//! What the terminal does about one recognised sequence besides feeding it to the emulator:
//! answer a query, record a shell-integration mark, track the scroll region and tab stops, or
//! hand the emulator a rewritten sequence whose counts are cut to the screen.

use super::bounds;
use super::commands::{Mark, parse_mark};
use super::queries::{Query, classify};
use super::scanner::Sequence;
use crate::params;

/// A change of tab stops (HTS, TBC, DECST8C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TabChange {
    SetAtCursor,
    ClearAtCursor,
    ClearAll,
    Default,
}

pub(super) fn default_tab_stops(cols: u16) -> Vec<bool> {
    (0..cols).map(|col| col % 8 == 0).collect()
}

/// What to do about one sequence, decided while the scanner still borrows it.
pub(super) enum Action {
    Nothing,
    Answer(Query),
    Mark(Mark),
    /// DECSTBM, with what the emulator gets instead when its bottom is past the screen.
    ScrollRegion(u16, Option<u16>, Option<Vec<u8>>),
    Reset,
    /// ED 3: the program clears the scrollback.
    ClearScrollback,
    /// Give the emulator these bytes instead of the sequence (counts cut to the screen).
    Rewrite(Vec<u8>),
    /// REP with these parameters: bounded once the emulator's state at that point is known.
    Repeat(Vec<u8>),
    /// `CSI ? 1049 l`: xterm restores the saved cursor even when already on the normal screen.
    LeaveAlternateScreen,
    Tabs(TabChange),
}

/// Decides what to do about a sequence (queries only count when they are answered); `size` is
/// the screen's (cols, rows).
pub(super) fn action(sequence: &Sequence<'_>, answer_queries: bool, size: (u16, u16)) -> Action {
    if let Sequence::Csi {
        private: 0,
        intermediate: 0,
        final_byte: b'm',
        ..
    } = sequence
    {
        // SGR, most of what programs send, is neither a query nor a count: the rules below
        // conclude the same (see the tests), but answering here saves ~3% of the instructions of
        // the terminal benchmark's stream.
        return Action::Nothing;
    }
    any_action(sequence, answer_queries, size)
}

/// [`action`] without its shortcut for SGR.
fn any_action(sequence: &Sequence<'_>, answer_queries: bool, size: (u16, u16)) -> Action {
    if answer_queries && let Some(query) = classify(sequence) {
        return Action::Answer(query);
    }
    match *sequence {
        Sequence::Osc {
            body,
            overflowed: false,
            ..
        } => parse_mark(body).map_or(Action::Nothing, Action::Mark),
        Sequence::Csi {
            private: 0,
            intermediate: 0,
            final_byte,
            params,
            overflowed,
        } => plain_csi_action(params, final_byte, overflowed, size),
        Sequence::Csi {
            private: b'?',
            intermediate: 0,
            final_byte,
            params,
            overflowed: false,
        } => match final_byte {
            b'l' if params::params(params).any(|param| param.value == Some(1049)) => {
                Action::LeaveAlternateScreen
            }
            b'W' if params == b"5" => Action::Tabs(TabChange::Default),
            _ => Action::Nothing,
        },
        Sequence::Esc {
            intermediate: 0,
            final_byte: b'c',
        } => Action::Reset,
        Sequence::Esc {
            intermediate: 0,
            final_byte: b'H',
        } => Action::Tabs(TabChange::SetAtCursor),
        _ => Action::Nothing,
    }
}

/// A CSI without private marker or intermediate: scroll regions, tab clears and counts.
fn plain_csi_action(params: &[u8], final_byte: u8, overflowed: bool, size: (u16, u16)) -> Action {
    let (cols, rows) = size;
    if overflowed {
        // Parameters too long to keep (or malformed) on a counting function: the count cannot
        // be bounded, so the emulator does not get it.
        let counting = bounds::takes_count(final_byte);
        return if counting {
            Action::Rewrite(Vec::new())
        } else {
            Action::Nothing
        };
    }
    match final_byte {
        b'r' => {
            let mut values = params::params(params).map(|param| param.value);
            let top = values.next().flatten().unwrap_or(1).max(1);
            let bottom = values.next().flatten().filter(|&b| b > 0);
            Action::ScrollRegion(top, bottom, bounds::bound_counts(params, b'r', cols, rows))
        }
        b'g' => match params {
            b"" | b"0" => Action::Tabs(TabChange::ClearAtCursor),
            b"3" => Action::Tabs(TabChange::ClearAll),
            _ => Action::Nothing,
        },
        b'b' => Action::Repeat(params.to_vec()),
        b'J' if params == b"3" => Action::ClearScrollback,
        _ => bounds::bound_counts(params, final_byte, cols, rows)
            .map_or(Action::Nothing, Action::Rewrite),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut for SGR answers what the rules for every sequence answer: it is neither a
    /// query nor a count, overlong or not.
    #[test]
    fn sgr_is_nothing_to_act_on() {
        for (params, overflowed) in [
            (&b""[..], false),
            (b"0", false),
            (b"1;38;5;200", false),
            (b"65535;65535", false),
            (b"38:2::1:2:3", false),
            (b"1;2;3", true),
        ] {
            let sgr = Sequence::Csi {
                private: 0,
                params,
                intermediate: 0,
                final_byte: b'm',
                overflowed,
            };
            for answer_queries in [true, false] {
                assert!(
                    matches!(any_action(&sgr, answer_queries, (2, 1)), Action::Nothing),
                    "{:?}",
                    String::from_utf8_lossy(params)
                );
            }
        }
    }
}
