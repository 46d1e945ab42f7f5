//! The query responder: which sequences are questions a terminal must answer, and the answers,
//! computed from the emulator's state at the question's point in the stream.
//!
//! Replies follow xterm's control sequences (<https://invisible-island.net/xterm/ctlseqs/ctlseqs.html>):
//! DA1/DA2/DA3, DSR 5 and 6 (CPR) and DECXCPR, XTVERSION, DECRQM (ANSI and DEC private modes),
//! OSC 10/11/12 colour queries, XTGETTCAP and DECRQSS ("not supported"), window-size report
//! `CSI 18 t`; and the Kitty keyboard protocol's `CSI ? u`
//! (<https://sw.kovidgoyal.net/kitty/keyboard-protocol/>).

use std::io::Write;

use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::{NamedColor, Rgb};

use super::engine::Engine;
use super::scanner::{Sequence, Terminator};
use crate::params::terminal_param;

/// The DA1 reply: a VT220-class terminal ("62") with ANSI colour ("22").
pub const PRIMARY_ATTRIBUTES: &[u8] = b"\x1b[?62;22c";
/// The DA2 reply: terminal type 1 (VT220), firmware version 10, no ROM cartridge.
pub const SECONDARY_ATTRIBUTES: &[u8] = b"\x1b[>1;10;0c";
/// The DA3 reply: a unit id of zeros.
pub const TERTIARY_ATTRIBUTES: &[u8] = b"\x1bP!|00000000\x1b\\";

/// Colours reported for OSC 10/11/12 when the program has not set them (a light-on-dark terminal).
const DEFAULT_FOREGROUND: Rgb = Rgb {
    r: 0xe5,
    g: 0xe5,
    b: 0xe5,
};
const DEFAULT_BACKGROUND: Rgb = Rgb {
    r: 0x00,
    g: 0x00,
    b: 0x00,
};
const DEFAULT_CURSOR: Rgb = DEFAULT_FOREGROUND;

/// A question found in the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Query {
    PrimaryAttributes,
    SecondaryAttributes,
    TertiaryAttributes,
    Status,
    CursorPosition {
        extended: bool,
    },
    Version,
    Mode {
        private: bool,
        mode: u16,
    },
    KittyKeyboard,
    /// OSC 10/11/12 with one `?` per colour, starting at `first`.
    DynamicColors {
        first: u8,
        count: u8,
        terminator: Terminator,
    },
    TermCap {
        names: Vec<u8>,
    },
    StatusString,
    WindowSize,
}

/// Parses a CSI parameter string with at most one parameter; `None` for anything else.
fn single_param(params: &[u8]) -> Option<Option<u16>> {
    if params.is_empty() {
        return Some(None);
    }
    terminal_param(params).map(Some)
}

/// Recognises the queries the responder answers (DA1/2/3, DSR, CPR, DECXCPR, XTVERSION, DECRQM, Kitty keyboard, OSC 10/11/12, XTGETTCAP, DECRQSS, window size); everything else is `None`.
pub(crate) fn classify(sequence: &Sequence<'_>) -> Option<Query> {
    match *sequence {
        Sequence::Csi {
            overflowed: true, ..
        } => None,
        Sequence::Csi {
            private,
            params,
            intermediate,
            final_byte,
            ..
        } => {
            // Most sequences are not queries; the final byte tells without reading parameters.
            if !matches!(final_byte, b'c' | b'n' | b'q' | b'p' | b'u' | b't') {
                return None;
            }
            let param = single_param(params)?;
            match (private, intermediate, final_byte, param) {
                (0, 0, b'c', None | Some(0)) => Some(Query::PrimaryAttributes),
                (b'>', 0, b'c', None | Some(0)) => Some(Query::SecondaryAttributes),
                (b'=', 0, b'c', None | Some(0)) => Some(Query::TertiaryAttributes),
                (0, 0, b'n', Some(5)) => Some(Query::Status),
                (0, 0, b'n', Some(6)) => Some(Query::CursorPosition { extended: false }),
                (b'?', 0, b'n', Some(6)) => Some(Query::CursorPosition { extended: true }),
                (b'>', 0, b'q', None | Some(0)) => Some(Query::Version),
                (0, b'$', b'p', Some(mode)) => Some(Query::Mode {
                    private: false,
                    mode,
                }),
                (b'?', b'$', b'p', Some(mode)) => Some(Query::Mode {
                    private: true,
                    mode,
                }),
                (b'?', 0, b'u', None) => Some(Query::KittyKeyboard),
                (0, 0, b't', Some(18)) => Some(Query::WindowSize),
                _ => None,
            }
        }
        Sequence::Osc {
            body,
            terminator,
            overflowed: false,
        } => dynamic_color_query(body, terminator),
        Sequence::Dcs {
            body,
            overflowed: false,
        } => {
            if let Some(names) = body.strip_prefix(b"+q") {
                Some(Query::TermCap {
                    names: names.to_vec(),
                })
            } else if body.starts_with(b"$q") {
                Some(Query::StatusString)
            } else {
                None
            }
        }
        _ => None,
    }
}

fn dynamic_color_query(body: &[u8], terminator: Terminator) -> Option<Query> {
    let mut fields = body.split(|&b| b == b';');
    let first = match fields.next()? {
        b"10" => 10,
        b"11" => 11,
        b"12" => 12,
        _ => return None,
    };
    let mut count = 0u8;
    for field in fields {
        if field != b"?" || first + count > 12 {
            return None;
        }
        count += 1;
    }
    (count > 0).then_some(Query::DynamicColors {
        first,
        count,
        terminator,
    })
}

/// True while an unfinished sequence could still turn out to be a query worth holding back:
/// `kind` and `body` are what the scanner has seen so far (see `Scanner::partial`).
pub(crate) fn may_be_query(kind: u8, body: &[u8]) -> bool {
    match kind {
        0x1b | b'[' => true,
        b']' => {
            let number = body.split(|&b| b == b';').next().unwrap_or(b"");
            let complete = body.contains(&b';');
            match number {
                b"10" | b"11" | b"12" => true,
                b"" | b"1" => !complete,
                _ => false,
            }
        }
        b'P' => {
            body.is_empty()
                || body == b"+"
                || body == b"$"
                || body.starts_with(b"+q")
                || body.starts_with(b"$q")
        }
        _ => false,
    }
}

/// The state a reply is computed from, read from the engine at the query's point in the stream.
pub(crate) struct ReplyContext<'a> {
    pub(crate) engine: &'a Engine,
    /// The scroll region (1-based top and bottom rows) when one is set.
    pub(crate) scroll_region: Option<(u16, u16)>,
}

/// Appends the reply to `query` to `out`.
pub(crate) fn reply(query: &Query, context: &ReplyContext<'_>, out: &mut Vec<u8>) {
    let engine = context.engine;
    // Writing into a Vec cannot fail; the results are ignored for that reason.
    match query {
        Query::PrimaryAttributes => out.extend_from_slice(PRIMARY_ATTRIBUTES),
        Query::SecondaryAttributes => out.extend_from_slice(SECONDARY_ATTRIBUTES),
        Query::TertiaryAttributes => out.extend_from_slice(TERTIARY_ATTRIBUTES),
        Query::Status => out.extend_from_slice(b"\x1b[0n"),
        Query::CursorPosition { extended } => {
            let (row, col) = engine.cursor();
            let mut row = u32::from(row) + 1;
            // With origin mode on, positions are relative to the scroll region (DEC STD 070).
            if engine.mode().contains(TermMode::ORIGIN)
                && let Some((top, _)) = context.scroll_region
            {
                row = row.saturating_sub(u32::from(top) - 1).max(1);
            }
            let col = u32::from(col) + 1;
            let _ = if *extended {
                write!(out, "\x1b[?{row};{col};1R")
            } else {
                write!(out, "\x1b[{row};{col}R")
            };
        }
        Query::Version => {
            let _ = write!(
                out,
                "\x1bP>|shellwright({})\x1b\\",
                env!("CARGO_PKG_VERSION")
            );
        }
        Query::Mode { private, mode } => {
            let state = if *private {
                private_mode_state(engine.mode(), *mode)
            } else {
                ansi_mode_state(engine.mode(), *mode)
            };
            let marker = if *private { "?" } else { "" };
            let _ = write!(out, "\x1b[{marker}{mode};{state}$y");
        }
        Query::KittyKeyboard => out.extend_from_slice(b"\x1b[?0u"),
        Query::DynamicColors {
            first,
            count,
            terminator,
        } => {
            for number in *first..first.saturating_add(*count) {
                let (named, fallback) = match number {
                    10 => (NamedColor::Foreground, DEFAULT_FOREGROUND),
                    11 => (NamedColor::Background, DEFAULT_BACKGROUND),
                    _ => (NamedColor::Cursor, DEFAULT_CURSOR),
                };
                let Rgb { r, g, b } = engine.dynamic_color(named).unwrap_or(fallback);
                let _ = write!(
                    out,
                    "\x1b]{number};rgb:{r:02x}{r:02x}/{g:02x}{g:02x}/{b:02x}{b:02x}"
                );
                out.extend_from_slice(terminator.bytes());
            }
        }
        Query::TermCap { names } => {
            out.extend_from_slice(b"\x1bP0+r");
            out.extend_from_slice(names);
            out.extend_from_slice(b"\x1b\\");
        }
        Query::StatusString => out.extend_from_slice(b"\x1bP0$r\x1b\\"),
        Query::WindowSize => {
            let _ = write!(out, "\x1b[8;{};{}t", engine.rows(), engine.cols());
        }
    }
}

/// DECRPM values: 1 set, 2 reset, 0 not recognised.
fn flag(modes: TermMode, bit: TermMode) -> u8 {
    if modes.contains(bit) { 1 } else { 2 }
}

fn private_mode_state(modes: TermMode, mode: u16) -> u8 {
    match mode {
        1 => flag(modes, TermMode::APP_CURSOR),
        6 => flag(modes, TermMode::ORIGIN),
        7 => flag(modes, TermMode::LINE_WRAP),
        25 => flag(modes, TermMode::SHOW_CURSOR),
        47 | 1047 | 1049 => flag(modes, TermMode::ALT_SCREEN),
        1000 => flag(modes, TermMode::MOUSE_REPORT_CLICK),
        1002 => flag(modes, TermMode::MOUSE_DRAG),
        1003 => flag(modes, TermMode::MOUSE_MOTION),
        1004 => flag(modes, TermMode::FOCUS_IN_OUT),
        1005 => flag(modes, TermMode::UTF8_MOUSE),
        1006 => flag(modes, TermMode::SGR_MOUSE),
        1007 => flag(modes, TermMode::ALTERNATE_SCROLL),
        2004 => flag(modes, TermMode::BRACKETED_PASTE),
        // Synchronized output is accepted and applied at once (never buffered): recognised, reset.
        2026 => 2,
        _ => 0,
    }
}

fn ansi_mode_state(modes: TermMode, mode: u16) -> u8 {
    match mode {
        4 => flag(modes, TermMode::INSERT),
        20 => flag(modes, TermMode::LINE_FEED_NEW_LINE),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csi(private: u8, params: &[u8], intermediate: u8, final_byte: u8) -> Option<Query> {
        classify(&Sequence::Csi {
            private,
            params,
            intermediate,
            final_byte,
            overflowed: false,
        })
    }

    #[test]
    fn classifies_csi_queries_and_not_their_lookalikes() {
        assert_eq!(csi(0, b"", 0, b'c'), Some(Query::PrimaryAttributes));
        assert_eq!(csi(0, b"0", 0, b'c'), Some(Query::PrimaryAttributes));
        assert_eq!(csi(b'>', b"", 0, b'c'), Some(Query::SecondaryAttributes));
        assert_eq!(csi(b'=', b"", 0, b'c'), Some(Query::TertiaryAttributes));
        assert_eq!(csi(0, b"1", 0, b'c'), None);
        assert_eq!(csi(b'>', b"0", 0, b'q'), Some(Query::Version));
        // DECSCUSR `CSI 2 SP q` is not XTVERSION.
        assert_eq!(csi(0, b"2", b' ', b'q'), None);
        assert_eq!(
            csi(b'?', b"2004", b'$', b'p'),
            Some(Query::Mode {
                private: true,
                mode: 2004
            })
        );
        assert_eq!(
            csi(0, b"4", b'$', b'p'),
            Some(Query::Mode {
                private: false,
                mode: 4
            })
        );
        assert_eq!(csi(b'?', b"", 0, b'u'), Some(Query::KittyKeyboard));
        assert_eq!(csi(b'>', b"1", 0, b'u'), None);
        assert_eq!(csi(0, b"18", 0, b't'), Some(Query::WindowSize));
        assert_eq!(csi(0, b"14", 0, b't'), None);
        assert_eq!(csi(0, b"6;1", 0, b'n'), None);
    }

    #[test]
    fn classifies_string_queries() {
        let osc = |body: &[u8], terminator| {
            classify(&Sequence::Osc {
                body,
                terminator,
                overflowed: false,
            })
        };
        assert_eq!(
            osc(b"11;?", Terminator::Bel),
            Some(Query::DynamicColors {
                first: 11,
                count: 1,
                terminator: Terminator::Bel
            })
        );
        assert_eq!(
            osc(b"10;?;?", Terminator::St),
            Some(Query::DynamicColors {
                first: 10,
                count: 2,
                terminator: Terminator::St
            })
        );
        assert_eq!(osc(b"10;?;?;?;?", Terminator::St), None);
        assert_eq!(osc(b"11;#000000", Terminator::St), None);
        assert_eq!(osc(b"4;1;?", Terminator::St), None);
        let dcs = |body: &[u8]| {
            classify(&Sequence::Dcs {
                body,
                overflowed: false,
            })
        };
        assert_eq!(
            dcs(b"+q544e"),
            Some(Query::TermCap {
                names: b"544e".to_vec()
            })
        );
        assert_eq!(dcs(b"$qm"), Some(Query::StatusString));
        assert_eq!(dcs(b"1;2|"), None);
    }

    #[test]
    fn partial_sequences_worth_holding() {
        assert!(may_be_query(b'[', b"?6"));
        assert!(may_be_query(b']', b"1"));
        assert!(may_be_query(b']', b"11;"));
        assert!(!may_be_query(b']', b"133;A"));
        assert!(!may_be_query(b']', b"0;title"));
        assert!(may_be_query(b'P', b"+q"));
        assert!(!may_be_query(b'P', b"1000p"));
        assert!(!may_be_query(0, b""));
    }
}
