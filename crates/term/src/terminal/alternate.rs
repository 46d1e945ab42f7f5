//! Drawing on the alternate screen kept unparsed until it could show, and dropped when the program
//! leaves that screen first.
//!
//! A full-screen program (top, vim, less) redraws the alternate screen again and again, and once it
//! leaves it (`CSI ? 1049 l`) nothing it drew there can be seen again: entering it anew copies the
//! primary screen's cursor to it and resets every one of its cells (alacritty's `Term::swap_alt`),
//! whatever they held. So while the alternate screen is on, elements that only draw — printed
//! text, SGR, cursor moves, erases, and the C0 controls that move the cursor — wait in a
//! [`Backlog`]; a leave drops them, and anything else (another sequence, a query, a read of the
//! screen) parses them first, in order.
//!
//! Why dropping is exact: alacritty's handlers for those elements change only the active grid, its
//! cursor (position, pending wrap, pen) and what a renderer keeps (damage, selection, the vi-mode
//! cursor), none of which this crate shows. Leaving swaps the primary grid back and restores its
//! saved cursor, so the alternate cursor's pen and position go with the grid. Modes that change
//! nothing about drawing (cursor visibility and blinking, mouse and focus reports, bracketed
//! paste, cursor keys, urgency hints) are set at once, ahead of drawing they cannot affect, so
//! the modes read while drawing waits are the ones parsing every byte gives. The last character
//! printed is kept too: REP repeats it after the leave as it would have.

use alacritty_terminal::vte::ansi::{Handler, NamedPrivateMode, PrivateMode};

use super::direct::{self, Step};
use super::engine::sequence_ended;
use super::print_runs::PrintAscii;
use super::scanner::span_within;
use shellwright_io::utf8::decode_char;

/// The most drawing kept unparsed: a program that redraws for hours without leaving or being
/// looked at must not hold it all.
const MAX_BYTES: usize = 1 << 20;

/// Drawing on the alternate screen not yet parsed (see the module doc).
#[derive(Default)]
pub(super) struct Backlog {
    bytes: Vec<u8>,
    /// The last character printed among `bytes`.
    last_printed: Option<char>,
    /// Deferring stopped on this visit of the alternate screen (see [`Stop::Other`] and
    /// [`Engine::settle`](super::engine::Engine::settle)).
    paused: bool,
}

/// What ended a run of drawing taken by [`Backlog::take`].
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// The input is used up.
    End,
    /// The next element leaves the alternate screen: the backlog is to be dropped.
    Leave,
    /// The next this many bytes set or reset modes that do not affect drawing.
    Modes(usize),
    /// The next element must be parsed after the backlog: the program does more than draw, so
    /// deferring stops until it leaves the alternate screen (a program that keeps doing so,
    /// as an editor setting scroll regions, would pay for reading its drawing twice).
    Other,
    /// The backlog must be parsed (it is full, or the input ends inside an element), and
    /// deferring goes on.
    Parse,
}

impl Backlog {
    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether drawing is to be deferred now, `alternate` telling whether the alternate screen is
    /// on (off, a pause ends).
    #[inline]
    pub(super) fn deferring(&mut self, alternate: bool) -> bool {
        if !alternate {
            self.paused = false;
        }
        alternate && !self.paused
    }

    /// Stops deferring until the alternate screen is left.
    pub(super) fn pause(&mut self) {
        self.paused = true;
    }

    /// Takes the drawing at the start of `input` (the parser resting in its ground state); returns
    /// how many bytes were taken and what follows them. Past [`MAX_BYTES`] the next element is
    /// [`Stop::Parse`].
    pub(super) fn take(&mut self, input: &[u8]) -> (usize, Stop) {
        let room = MAX_BYTES.saturating_sub(self.bytes.len());
        let mut at = 0;
        let stop = loop {
            let Some(rest) = input.get(at..).filter(|rest| !rest.is_empty()) else {
                break Stop::End;
            };
            if at >= room {
                break Stop::Parse;
            }
            if let Some((len, printed)) = drawing(rest) {
                self.last_printed = printed.or(self.last_printed);
                at += len;
                continue;
            }
            let mut element = Element::default();
            match direct::step(rest, &mut element) {
                Step::Handled(len, printed) if element.kind == Kind::Drawing => {
                    self.last_printed = printed.or(self.last_printed);
                    at += len;
                }
                Step::Handled(len, _) if element.kind == Kind::Modes => break Stop::Modes(len),
                Step::Handled(_, _) if element.kind == Kind::Leave => break Stop::Leave,
                Step::Parser(len) if len == rest.len() && cut_off(rest) => break Stop::Parse,
                _ => {
                    self.pause();
                    break Stop::Other;
                }
            }
        };
        self.bytes.extend_from_slice(&input[..at]);
        (at, stop)
    }

    /// Empties the backlog for a leave; returns the last character it printed.
    pub(super) fn drop_all(&mut self) -> Option<char> {
        self.bytes.clear();
        self.keep_small();
        self.last_printed.take()
    }

    /// Empties the backlog to parse it; the caller hands the buffer back through
    /// [`Self::reuse`].
    pub(super) fn take_bytes(&mut self) -> Vec<u8> {
        self.last_printed = None;
        std::mem::take(&mut self.bytes)
    }

    /// Keeps the (parsed) buffer's allocation for the next backlog.
    pub(super) fn reuse(&mut self, mut bytes: Vec<u8>) {
        if self.bytes.is_empty() {
            bytes.clear();
            self.bytes = bytes;
            self.keep_small();
        }
    }

    /// Lets go of a large buffer once it is empty: one long redraw must not hold a megabyte for
    /// the terminal's life.
    fn keep_small(&mut self) {
        const KEPT_CAPACITY: usize = 64 << 10;
        if self.bytes.is_empty() && self.bytes.capacity() > KEPT_CAPACITY {
            self.bytes = Vec::new();
        }
    }
}

/// The elements at the start of `bytes` when their bytes alone show that [`direct`] takes them as
/// drawing (text: printable ASCII and whole UTF-8 characters other than C1 controls; a C0 control
/// other than BEL, SO and SI; DEL; a CSI without private marker, intermediate or sub-parameter, of at
/// most 32 parameters, ending in a drawing function): their length and the last character they
/// print. `None` when that takes [`direct`] itself to tell.
#[inline]
fn drawing(bytes: &[u8]) -> Option<(usize, Option<char>)> {
    /// Most parameters [`direct`] reads.
    const MAX_SEPARATORS: usize = 31;
    match bytes[0] {
        b' '..=b'~' | 0x80.. => text(bytes),
        0x7f => Some((1, Some('\x7f'))),
        // A bell is no drawing: it is counted, so it must not be dropped with the drawing.
        0x07 | 0x0e | 0x0f => None,
        0x1b => {
            let body = bytes.strip_prefix(b"\x1b[")?;
            let params_len = span_within::<b'0', b';'>(body);
            let params = &body[..params_len];
            // Digits and `;` only (no sub-parameter), and not too many separators: fewer bytes
            // than the most allowed cannot hold too many, so only a long string is counted.
            let fits = !params.contains(&b':')
                && (params_len <= MAX_SEPARATORS
                    || params.iter().filter(|&&b| b == b';').count() <= MAX_SEPARATORS);
            // SGR, CUP, HVP, CUU, CUD, VPR, CUF, HPR, CUB, CHA, HPA, VPA, ED, EL.
            let drawing = matches!(
                body.get(params_len)?,
                b'm' | b'H'
                    | b'f'
                    | b'A'
                    | b'B'
                    | b'e'
                    | b'C'
                    | b'a'
                    | b'D'
                    | b'G'
                    | b'`'
                    | b'd'
                    | b'J'
                    | b'K'
            );
            (drawing && fits).then_some((2 + params_len + 1, None))
        }
        0x00..=0x1f => Some((1, None)),
    }
}

/// The text at the start of `bytes`, as [`direct`] prints it (see [`drawing`]).
fn text(bytes: &[u8]) -> Option<(usize, Option<char>)> {
    let mut at = 0;
    // The last character outside ASCII, and where it ends.
    let mut non_ascii = None;
    loop {
        at += span_within::<b' ', b'~'>(&bytes[at..]);
        match decode_char(&bytes[at..]) {
            Some((c, len)) if !('\u{80}'..='\u{9f}').contains(&c) => {
                at += len;
                non_ascii = Some((c, at));
            }
            _ => break,
        }
    }
    let last = match non_ascii {
        Some((c, end)) if end == at => c,
        _ => char::from(*bytes[..at].last()?),
    };
    Some((at, Some(last)))
}

/// Whether `rest`, all left of the input, is an element the end of the input cut short: an
/// unfinished escape sequence or the start of a UTF-8 character.
fn cut_off(rest: &[u8]) -> bool {
    match rest.first() {
        Some(0x1b) => !sequence_ended(rest),
        Some(_) => std::str::from_utf8(rest).is_err_and(|error| error.error_len().is_none()),
        None => false,
    }
}

/// What one element does, as [`direct`] reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    /// It only draws (or does nothing at all).
    #[default]
    Drawing,
    /// It only sets or resets modes that do not affect drawing.
    Modes,
    /// It is exactly a leave of the alternate screen.
    Leave,
    /// Anything else.
    Other,
}

/// A handler that calls nothing but notes what kind of element [`direct::step`] handed it.
#[derive(Default)]
struct Element {
    kind: Kind,
}

impl Element {
    fn note(&mut self, kind: Kind) {
        self.kind = match (self.kind, kind) {
            (Kind::Drawing, kind) => kind,
            (current, kind) if current == kind && kind == Kind::Modes => kind,
            _ => Kind::Other,
        };
    }

    fn private_mode(&mut self, mode: PrivateMode, set: bool) {
        use NamedPrivateMode::*;
        let kind = match mode {
            PrivateMode::Named(SwapScreenAndSetRestoreCursor) if !set => Kind::Leave,
            PrivateMode::Named(
                ShowCursor
                | BlinkingCursor
                | CursorKeys
                | ReportMouseClicks
                | ReportCellMouseMotion
                | ReportAllMouseMotion
                | ReportFocusInOut
                | Utf8Mouse
                | SgrMouse
                | AlternateScroll
                | UrgencyHints
                | BracketedPaste,
            ) => Kind::Modes,
            _ => Kind::Other,
        };
        self.note(kind);
    }
}

impl PrintAscii for Element {
    fn print_ascii(&mut self, _: &[u8]) {}
}

/// Every other handler call makes the element one to parse.
macro_rules! other {
    ($(fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*);)*) => {
        $(
            fn $name(&mut self $(, _: $ty)*) {
                self.note(Kind::Other);
            }
        )*
    };
}

/// Drawing calls leave the element drawing.
macro_rules! drawing {
    ($(fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*);)*) => {
        $(
            fn $name(&mut self $(, _: $ty)*) {}
        )*
    };
}

impl Handler for Element {
    // `input` (printing) is drawing too: the handler's own no-op stands for it.
    drawing_calls!(drawing);

    fn set_private_mode(&mut self, mode: PrivateMode) {
        self.private_mode(mode, true);
    }

    fn unset_private_mode(&mut self, mode: PrivateMode) {
        self.private_mode(mode, false);
    }

    other_calls!(other);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(input: &[u8]) -> (usize, Stop, Vec<u8>) {
        let mut backlog = Backlog::default();
        let (len, stop) = backlog.take(input);
        (len, stop, backlog.bytes)
    }

    #[test]
    fn drawing_is_taken_up_to_what_is_not() {
        let drawing = b"\x1b[3;1H\x1b[1;38;5;9mtop \xe6\x97\xa5\x1b[K\r\n\x08\t\x1b[2J";
        let mut input = drawing.to_vec();
        input.extend_from_slice(b"\x1b[?1049l");
        assert_eq!(take(&input), (drawing.len(), Stop::Leave, drawing.to_vec()));
        for (after, stop) in [
            (&b"\x1b[?25l"[..], Stop::Modes(6)),
            (b"\x1b[?25;2004h", Stop::Modes(11)),
            (b"\x1b[?25;7h", Stop::Other),
            (b"\x1b[?1049;25l", Stop::Other),
            (b"\x1b[2;5r", Stop::Other),
            (b"\x1b[4h", Stop::Other),
            (b"\x1b]0;title\x07", Stop::Other),
            (b"\x1b7", Stop::Other),
            (b"\x0e", Stop::Other),
            (b"\x1b[5n", Stop::Other),
            (b"\xc2\x9b", Stop::Other),
            (b"\x1b[2", Stop::Parse),
            (b"\x1b]0;tit", Stop::Parse),
            (b"\xe6\x97", Stop::Parse),
            (b"", Stop::End),
        ] {
            let mut input = drawing.to_vec();
            input.extend_from_slice(after);
            assert_eq!(take(&input).1, stop, "{:?}", String::from_utf8_lossy(after));
        }
    }

    proptest::proptest! {
        /// What the bytes alone call drawing, the emulator's handler calls call drawing too, with
        /// the same length and last character.
        #[test]
        fn drawing_by_bytes_is_drawing_by_calls(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(b"\x1b[0123456789;:?> mHfABeCaDG`dJKhlrn\x0e\x07\x7f".to_vec()),
                    proptest::sample::select(vec![0xc2, 0x80, 0x9f, 0xa0, 0xe6, 0x97, 0xa5, 0xf0]),
                    proptest::num::u8::ANY,
                ],
                1..20,
            ),
        ) {
            if let Some((len, printed)) = drawing(&bytes) {
                let (mut at, mut last) = (0, None);
                while at < len {
                    let mut element = Element::default();
                    let step = direct::step(&bytes[at..], &mut element);
                    proptest::prop_assert_eq!(element.kind, Kind::Drawing);
                    let Step::Handled(taken, step_printed) = step else {
                        return Err(proptest::test_runner::TestCaseError::fail("left to the parser"));
                    };
                    at += taken;
                    last = step_printed.or(last);
                }
                proptest::prop_assert_eq!((at, last), (len, printed));
            }
        }
    }

    #[test]
    fn drawing_by_bytes_covers_the_common_sequences() {
        for sequence in [
            "\x1b[m",
            "\x1b[1;38;5;200m",
            "\x1b[12;80H",
            "\x1b[K",
            "\x1b[2J",
            "\x1b[3A",
        ] {
            assert!(drawing(sequence.as_bytes()).is_some(), "{sequence:?}");
        }
        let many = format!("\x1b[{}m", "1;".repeat(32));
        assert_eq!(drawing(many.as_bytes()), None);
        // Long, but with few parameters.
        let long = format!("\x1b[{}m", "00000001;".repeat(31));
        assert_eq!(drawing(long.as_bytes()), Some((long.len(), None)));
        let sub = format!("\x1b[{}:1m", "00000001;".repeat(4));
        assert_eq!(drawing(sub.as_bytes()), None);
    }

    #[test]
    fn a_backlog_past_its_limit_is_parsed() {
        let mut backlog = Backlog::default();
        let line = b"\x1b[1;1Hsome drawing\x1b[K";
        while backlog.take(line).1 == Stop::End {}
        assert!(backlog.len() >= MAX_BYTES && backlog.len() < MAX_BYTES + line.len());
        let parsed = backlog.take_bytes();
        backlog.reuse(parsed);
        assert_eq!(backlog.bytes.capacity(), 0, "a megabyte kept");
        assert_eq!(backlog.take(line), (line.len(), Stop::End));
    }

    #[test]
    fn more_than_drawing_pauses_deferring_until_the_alternate_screen_is_left() {
        let mut backlog = Backlog::default();
        assert!(!backlog.deferring(false));
        assert!(backlog.deferring(true));
        assert_eq!(backlog.take(b"ab\x1b[2"), (2, Stop::Parse));
        assert!(backlog.deferring(true));
        assert_eq!(backlog.take(b"ab\x1b[2;3r"), (2, Stop::Other));
        assert!(!backlog.deferring(true));
        assert!(!backlog.deferring(false));
        assert!(backlog.deferring(true));
    }

    #[test]
    fn the_last_character_printed_survives_the_drop() {
        let mut backlog = Backlog::default();
        backlog.take(b"ab\x1b[1m");
        backlog.take("\x1b[Hé\r".as_bytes());
        assert_eq!(backlog.drop_all(), Some('é'));
        assert!(backlog.is_empty());
        assert_eq!(backlog.drop_all(), None);
    }
}
