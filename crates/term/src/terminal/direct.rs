//! The common part of a stream handed to the emulator without `vte`'s byte-at-a-time parser:
//! text, C0 controls and the control sequences every full-screen program sends (SGR, cursor
//! position and moves, erase, scroll region, set and reset mode).
//!
//! Each step reads one element at the start of the input while the parser rests in its ground
//! state and calls the emulator's `Handler` exactly as `vte` 0.15's `Processor` would for it: the
//! same parameter rules (ECMA-48 §5.4.2: `;`-separated decimals saturating at 65535, an empty or
//! zero parameter taking the function's default, at most 32 parameters), the same mapping of
//! parameters to handler calls, the same characters printed. What it does not read exactly as the
//! parser does (sub-parameters, intermediates, other private markers, overlong parameter lists,
//! other functions, other escapes, malformed UTF-8, C1 controls) it leaves to the parser: a whole
//! CSI (its parameters read by [`crate::params`]), a run of text, or the bytes up to the next ESC
//! (where the parser starts a new sequence whatever its state; the engine follows whether it is
//! back in its ground state).

use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, Color, Handler, LineClearMode, Mode, NamedColor, NamedMode,
    NamedPrivateMode, PrivateMode, Rgb,
};

use shellwright_io::utf8::decode_char;

use super::print_runs::PrintAscii;
use super::scanner::span_within;
use crate::params;

const ESC: u8 = 0x1b;

/// Most parameters read here; the parser takes longer lists.
const MAX_PARAMS: usize = 32;

/// What one step over the input did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// This many bytes were handled; `Some` is the last character printed among them.
    Handled(usize, Option<char>),
    /// The next this many bytes must go to the parser (it ends them in its ground state, unless
    /// they are cut off by the end of the input).
    Parser(usize),
}

/// Handles the element at the start of `bytes` (not empty), the parser being in its ground
/// state with no partial character.
#[inline]
pub(super) fn step<H: Handler + PrintAscii>(bytes: &[u8], handler: &mut H) -> Step {
    match bytes[0] {
        b' '..=b'~' => {
            let len = printable_len(bytes);
            handler.print_ascii(&bytes[..len]);
            Step::Handled(len, Some(char::from(bytes[len - 1])))
        }
        ESC => escape(bytes, handler),
        0x7f => {
            // DEL in the ground state is printed, not executed.
            handler.input('\x7f');
            Step::Handled(1, Some('\x7f'))
        }
        control @ 0..=0x1f => {
            execute(control, handler);
            Step::Handled(1, None)
        }
        _ => text(bytes, handler),
    }
}

/// The length of the run of printable ASCII (0x20–0x7e) that `bytes` starts with.
fn printable_len(bytes: &[u8]) -> usize {
    span_within::<b' ', b'~'>(bytes)
}

/// Characters outside ASCII, printed while they are whole UTF-8 and not C1 controls (which the
/// parser executes rather than prints); from the first that is not, the parser's. Words of a few
/// such characters sit between ASCII, so they are decoded one at a time ([`decode_char`] agrees
/// with the `str::from_utf8` the parser decides with).
fn text<H: Handler>(bytes: &[u8], handler: &mut H) -> Step {
    let mut at = 0;
    let mut last = None;
    while let Some((c, len)) = decode_char(&bytes[at..]) {
        if ('\u{80}'..='\u{9f}').contains(&c) {
            break;
        }
        handler.input(c);
        last = Some(c);
        at += len;
    }
    if at > 0 {
        return Step::Handled(at, last);
    }
    let run = bytes
        .iter()
        .position(|b| b.is_ascii())
        .unwrap_or(bytes.len());
    Step::Parser(run)
}

/// A C0 control, as the parser executes it.
fn execute<H: Handler>(byte: u8, handler: &mut H) {
    match byte {
        0x09 => handler.put_tab(1),
        0x08 => handler.backspace(),
        0x0d => handler.carriage_return(),
        0x0a..=0x0c => handler.linefeed(),
        0x07 => handler.bell(),
        0x1a => handler.substitute(),
        0x0f => handler.set_active_charset(CharsetIndex::G0),
        0x0e => handler.set_active_charset(CharsetIndex::G1),
        _ => {}
    }
}

/// An escape sequence: a CSI read here, or the bytes up to the next ESC for the parser.
fn escape<H: Handler>(bytes: &[u8], handler: &mut H) -> Step {
    let to_next_escape =
        || memchr::memchr(ESC, &bytes[1..]).map_or(bytes.len(), |offset| offset + 1);
    if bytes.get(1) != Some(&b'[') {
        return Step::Parser(to_next_escape());
    }
    match Csi::parse(&bytes[2..]) {
        Some((csi, len)) if csi.dispatch(handler) => Step::Handled(len + 2, None),
        // Complete: the parser dispatches it and is back in its ground state.
        Some((_, len)) => Step::Parser(len + 2),
        None => Step::Parser(to_next_escape()),
    }
}

/// A control sequence of the form `ESC [ ?? digits-and-semicolons final`, its parameters read.
struct Csi {
    private: bool,
    params: [u16; MAX_PARAMS],
    count: usize,
    final_byte: u8,
}

impl Csi {
    /// Reads the sequence after `ESC [`; returns it and its length, or `None` when it has another
    /// form (sub-parameters, intermediates, another private marker), more than [`MAX_PARAMS`]
    /// parameters, or is cut off.
    ///
    /// Inlined into its one caller, so the parameters stay where they were written: returned by
    /// value, the array was copied out right after its 16-bit stores (a fifth of the samples
    /// taken here; ~2 M instructions of the benchmark stream).
    #[inline(always)]
    fn parse(bytes: &[u8]) -> Option<(Self, usize)> {
        let private = bytes.first() == Some(&b'?');
        let start = usize::from(private);
        let mut csi = Csi {
            private,
            params: [0; MAX_PARAMS],
            count: 0,
            final_byte: 0,
        };
        let mut params = params::params(&bytes[start..]);
        let mut count = 0;
        for param in &mut params {
            if param.sub_params || count == MAX_PARAMS {
                return None;
            }
            // Empty reads as 0, which each function below takes as its default.
            csi.params[count] = param.value.unwrap_or(0);
            count += 1;
        }
        // As the parser counts: no parameter at all reads as one, empty.
        csi.count = count.max(1);
        let final_at = start + params.end();
        csi.final_byte = *bytes.get(final_at).filter(|b| (0x40..=0x7e).contains(*b))?;
        Some((csi, final_at + 1))
    }

    fn params(&self) -> &[u16] {
        &self.params[..self.count]
    }

    /// The parameter at `index`, or `default` when it is absent or 0.
    fn param_or(&self, index: usize, default: u16) -> u16 {
        match self.params().get(index) {
            Some(&param) if param != 0 => param,
            _ => default,
        }
    }

    /// Calls the handler as the parser would; false (having called nothing) for a function not
    /// read here.
    fn dispatch<H: Handler>(&self, handler: &mut H) -> bool {
        if self.private {
            return match self.final_byte {
                b'h' | b'l' => self.private_modes(handler),
                _ => false,
            };
        }
        let count = |index| usize::from(self.param_or(index, 1));
        match self.final_byte {
            b'm' => sgr(self.params(), handler),
            b'H' | b'f' => handler.goto(i32::from(self.param_or(0, 1)) - 1, count(1) - 1),
            b'A' => handler.move_up(count(0)),
            b'B' | b'e' => handler.move_down(count(0)),
            b'C' | b'a' => handler.move_forward(count(0)),
            b'D' => handler.move_backward(count(0)),
            b'G' | b'`' => handler.goto_col(count(0) - 1),
            b'd' => handler.goto_line(i32::from(self.param_or(0, 1)) - 1),
            b'J' => match self.param_or(0, 0) {
                0 => handler.clear_screen(ClearMode::Below),
                1 => handler.clear_screen(ClearMode::Above),
                2 => handler.clear_screen(ClearMode::All),
                3 => handler.clear_screen(ClearMode::Saved),
                _ => {}
            },
            b'K' => match self.param_or(0, 0) {
                0 => handler.clear_line(LineClearMode::Right),
                1 => handler.clear_line(LineClearMode::Left),
                2 => handler.clear_line(LineClearMode::All),
                _ => {}
            },
            b'r' => {
                let bottom = self.params().get(1).copied().filter(|&bottom| bottom != 0);
                handler.set_scrolling_region(count(0), bottom.map(usize::from));
            }
            b'h' | b'l' => {
                for &param in self.params() {
                    let mode = match param {
                        4 => Mode::Named(NamedMode::Insert),
                        20 => Mode::Named(NamedMode::LineFeedNewLine),
                        other => Mode::Unknown(other),
                    };
                    if self.final_byte == b'h' {
                        handler.set_mode(mode);
                    } else {
                        handler.unset_mode(mode);
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// DECSET and DECRST of the modes the parser knows by name; any other mode (and synchronized
    /// updates, which the parser also acts on itself) is left to it.
    fn private_modes<H: Handler>(&self, handler: &mut H) -> bool {
        let modes = self.params().iter().map(|&param| named_private_mode(param));
        if modes.clone().any(|mode| mode.is_none()) {
            return false;
        }
        for mode in modes.flatten() {
            if self.final_byte == b'h' {
                handler.set_private_mode(PrivateMode::Named(mode));
            } else {
                handler.unset_private_mode(PrivateMode::Named(mode));
            }
        }
        true
    }
}

fn named_private_mode(param: u16) -> Option<NamedPrivateMode> {
    use NamedPrivateMode::*;
    Some(match param {
        1 => CursorKeys,
        3 => ColumnMode,
        6 => Origin,
        7 => LineWrap,
        12 => BlinkingCursor,
        25 => ShowCursor,
        1000 => ReportMouseClicks,
        1002 => ReportCellMouseMotion,
        1003 => ReportAllMouseMotion,
        1004 => ReportFocusInOut,
        1005 => Utf8Mouse,
        1006 => SgrMouse,
        1007 => AlternateScroll,
        1042 => UrgencyHints,
        1049 => SwapScreenAndSetRestoreCursor,
        2004 => BracketedPaste,
        _ => return None,
    })
}

/// SGR (ECMA-48 §8.3.117 with the xterm colour extensions) without sub-parameters: each
/// attribute in turn, unknown ones skipped, a colour taking the parameters after 38/48/58.
fn sgr<H: Handler>(params: &[u16], handler: &mut H) {
    let mut params = params.iter().copied();
    while let Some(param) = params.next() {
        let attr = match param {
            0 => Some(Attr::Reset),
            1 => Some(Attr::Bold),
            2 => Some(Attr::Dim),
            3 => Some(Attr::Italic),
            4 => Some(Attr::Underline),
            5 => Some(Attr::BlinkSlow),
            6 => Some(Attr::BlinkFast),
            7 => Some(Attr::Reverse),
            8 => Some(Attr::Hidden),
            9 => Some(Attr::Strike),
            21 => Some(Attr::CancelBold),
            22 => Some(Attr::CancelBoldDim),
            23 => Some(Attr::CancelItalic),
            24 => Some(Attr::CancelUnderline),
            25 => Some(Attr::CancelBlink),
            27 => Some(Attr::CancelReverse),
            28 => Some(Attr::CancelHidden),
            29 => Some(Attr::CancelStrike),
            30..=37 => Some(Attr::Foreground(Color::Named(ansi_color(
                param - 30,
                false,
            )))),
            38 => extended_color(&mut params).map(Attr::Foreground),
            39 => Some(Attr::Foreground(Color::Named(NamedColor::Foreground))),
            40..=47 => Some(Attr::Background(Color::Named(ansi_color(
                param - 40,
                false,
            )))),
            48 => extended_color(&mut params).map(Attr::Background),
            49 => Some(Attr::Background(Color::Named(NamedColor::Background))),
            58 => extended_color(&mut params).map(|color| Attr::UnderlineColor(Some(color))),
            59 => Some(Attr::UnderlineColor(None)),
            90..=97 => Some(Attr::Foreground(Color::Named(ansi_color(param - 90, true)))),
            100..=107 => Some(Attr::Background(Color::Named(ansi_color(
                param - 100,
                true,
            )))),
            _ => None,
        };
        if let Some(attr) = attr {
            handler.terminal_attribute(attr);
        }
    }
}

/// One of the eight ANSI colours (0–7), or its bright variant.
fn ansi_color(index: u16, bright: bool) -> NamedColor {
    use NamedColor::*;
    let normal = [Black, Red, Green, Yellow, Blue, Magenta, Cyan, White];
    let brights = [
        BrightBlack,
        BrightRed,
        BrightGreen,
        BrightYellow,
        BrightBlue,
        BrightMagenta,
        BrightCyan,
        BrightWhite,
    ];
    let colors = if bright { brights } else { normal };
    colors[usize::from(index) % 8]
}

/// The colour after 38, 48 or 58: `5;index` or `2;r;g;b`. The parameters read are used up even
/// when they do not make a colour (a value past 255, a missing one, another kind).
fn extended_color(params: &mut impl Iterator<Item = u16>) -> Option<Color> {
    let kind = params.next();
    let mut component = || params.next().and_then(|value| u8::try_from(value).ok());
    match kind {
        Some(2) => {
            let r = component()?;
            let g = component()?;
            let b = component()?;
            Some(Color::Spec(Rgb { r, g, b }))
        }
        Some(5) => component().map(Color::Indexed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use alacritty_terminal::Grid;
    use alacritty_terminal::grid::Dimensions;
    use alacritty_terminal::index::{Column, Line};
    use alacritty_terminal::term::cell::Cell;
    use proptest::prelude::*;

    use crate::terminal::engine::Engine;

    /// Every cell of scrollback and screen, with the cursor and the saved cursor.
    fn grid_state(grid: &Grid<Cell>) -> impl PartialEq + std::fmt::Debug + use<> {
        let history = grid.history_size() as i32;
        let cells: Vec<Cell> = (-history..grid.screen_lines() as i32)
            .flat_map(|line| {
                (0..grid.columns()).map(move |col| grid[Line(line)][Column(col)].clone())
            })
            .collect();
        (cells, grid.cursor.clone(), grid.saved_cursor.clone())
    }

    /// Both screens, the modes, the title and the pen.
    fn state(engine: &mut Engine) -> impl PartialEq + std::fmt::Debug + use<> {
        engine.settle();
        let active = grid_state(engine.grid());
        let primary = engine.with_primary_grid(grid_state);
        (active, primary, engine.mode(), engine.title())
    }

    /// An engine that parses every byte as it comes: around the parser where it can (drawing on
    /// the alternate screen deferred until it could show), or through it alone.
    fn engine(direct: bool) -> Engine {
        let mut engine = Engine::new(9, 4, 6);
        engine.parse_every_byte();
        if direct {
            engine.defer_alternate_screen();
        } else {
            engine.parse_through_parser();
        }
        engine
    }

    fn bytes(text: &str) -> BoxedStrategy<Vec<u8>> {
        Just(text.as_bytes().to_vec()).boxed()
    }

    /// Parameter strings: the values SGR and the cursor functions treat specially, values past a
    /// byte and past 16 bits, empty fields, and now and then a sub-parameter or too many fields.
    fn params() -> impl Strategy<Value = String> {
        let value = prop_oneof![
            3 => 0u32..4,
            1 => 4u32..10,
            2 => prop::sample::select(vec![
                21, 22, 23, 24, 25, 27, 28, 29, 30, 37, 38, 39, 40, 47, 48, 49, 58, 59, 90, 97, 100,
                107, 255, 256, 1049, 65535, 99999,
            ]),
        ]
        .prop_map(|v| v.to_string());
        let field = prop_oneof![4 => value, 1 => Just(String::new())];
        (
            prop::collection::vec(field, 0..6),
            prop::sample::select(vec![";", ";", ";", ":"]),
            0usize..3,
        )
            .prop_map(|(fields, separator, many)| {
                let joined = fields.join(separator);
                if many == 0 {
                    format!("{joined}{}", ";1".repeat(33))
                } else {
                    joined
                }
            })
    }

    fn piece() -> impl Strategy<Value = Vec<u8>> {
        let csi = (
            prop::sample::select(vec!["", "", "", "?", ">"]),
            params(),
            prop::sample::select(b"HfABCDGdeaJKrhlm`bXcn@".to_vec()),
        )
            .prop_map(|(private, params, final_byte)| {
                format!("\x1b[{private}{params}{}", char::from(final_byte)).into_bytes()
            });
        let modes = (
            prop::sample::select(vec![
                "1", "6", "7", "25", "1049", "2004", "2026", "1047", "1000", "9999", "1;1049",
                "25;7",
            ]),
            prop::sample::select(vec!["h", "l"]),
        )
            .prop_map(|(mode, set)| format!("\x1b[?{mode}{set}").into_bytes());
        // Colours after 38, 48 and 58, whole, cut short or out of range.
        let color = (
            prop::sample::select(vec![38, 48, 58]),
            prop::sample::select(vec![
                "5;3",
                "5;255",
                "5;256",
                "5",
                "2;1;2;3",
                "2;1;300;3",
                "2;1",
                "7;1",
                "",
            ]),
            prop::sample::select(vec!["", ";1", ";4"]),
        )
            .prop_map(|(kind, color, after)| format!("\x1b[{kind};{color}{after}m").into_bytes());
        // One of each function read here, with the parameters that pick its variants.
        let each = prop::sample::select(vec![
            "\x1b[K",
            "\x1b[1K",
            "\x1b[2K",
            "\x1b[3K",
            "\x1b[J",
            "\x1b[1J",
            "\x1b[2J",
            "\x1b[3J",
            "\x1b[4J",
            "\x1b[2;3r",
            "\x1b[2;0r",
            "\x1b[2r",
            "\x1b[r",
            "\x1b[3;5H",
            "\x1b[;2f",
            "\x1b[2d",
            "\x1b[3G",
            "\x1b[2`",
            "\x1b[2A",
            "\x1b[B",
            "\x1b[2e",
            "\x1b[2C",
            "\x1b[a",
            "\x1b[3D",
            "\x1b[?1m",
            "\x1b[?7m",
            "\x1b[>1m",
            "\x1b[?25H",
            "\x1b[1;7m",
        ])
        .prop_map(|sequence| sequence.as_bytes().to_vec());
        prop_oneof![
            6 => "[a-z ~!]{1,14}".prop_map(String::into_bytes),
            6 => csi,
            6 => each,
            2 => color,
            1 => bytes("\x1b[3b"),
            1 => Just(b"\xc2\x9b\x1b[b".to_vec()),
            3 => modes,
            1 => bytes("\r\n"),
            1 => bytes("\n"),
            1 => bytes("\r"),
            1 => bytes("\x0b\x0c"),
            1 => bytes("\t"),
            1 => bytes("\x08"),
            1 => bytes("\x07"),
            1 => bytes("\x7f"),
            1 => bytes("\x0e"),
            1 => bytes("\x0f"),
            1 => bytes("\x1b(0"),
            1 => bytes("\x1b(B"),
            1 => bytes("日本"),
            1 => bytes("→λé"),
            1 => bytes("e\u{301}"),
            1 => bytes("🙂"),
            1 => Just(b"\xc3".to_vec()),
            1 => Just(b"\xe6\x97".to_vec()),
            1 => Just(b"\xc2\x9b".to_vec()),
            1 => Just(b"\x9b".to_vec()),
            1 => Just(b"\xff".to_vec()),
            1 => Just(b"\xc0\x80".to_vec()),
            1 => Just(b"\xe0\x80\xaf".to_vec()),
            1 => Just(b"\xed\xa0\x80".to_vec()),
            1 => Just(b"\xf4\x90\x80\x80".to_vec()),
            1 => Just(b"\xf5\x80".to_vec()),
            1 => Just("\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}".as_bytes().to_vec()),
            1 => bytes("\x18"),
            1 => bytes("\x1a"),
            1 => bytes("\x1b"),
            1 => bytes("\x1b["),
            1 => bytes("\x1b[4h"),
            1 => bytes("\x1b[4l"),
            1 => bytes("\x1b[20h"),
            1 => bytes("\x1b[20l"),
            1 => bytes("\x1b[1\n5H"),
            1 => bytes("\x1b[2 q"),
            1 => bytes("\x1b7"),
            1 => bytes("\x1b8"),
            1 => bytes("\x1bM"),
            1 => bytes("\x1bc"),
            1 => bytes("\x1b]2;title\x07"),
            1 => bytes("\x1b]0;other\x1b\\"),
            1 => bytes("\x1bP+q544e\x1b\\"),
        ]
    }

    proptest! {
        /// Eight bytes at a time finds the end of printable ASCII where one at a time does.
        #[test]
        fn printable_runs_end_where_bytes_say(bytes in prop::collection::vec(any::<u8>(), 0..40)) {
            let by_byte = bytes
                .iter()
                .position(|b| !(b' '..=b'~').contains(b))
                .unwrap_or(bytes.len());
            prop_assert_eq!(super::printable_len(&bytes), by_byte);
        }

        #[test]
        fn printable_runs_of_mostly_text(
            text in "[ -~]{0,30}",
            stop in prop::sample::select(vec![0u8, 0x1f, 0x7f, 0x80, 0xff, 0x1b, b'\n']),
            tail in "[ -~]{0,10}",
        ) {
            let mut bytes = text.clone().into_bytes();
            bytes.push(stop);
            bytes.extend_from_slice(tail.as_bytes());
            prop_assert_eq!(super::printable_len(&bytes), text.len());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Going around the parser leaves exactly the state giving it every byte leaves after
        /// every piece, however the stream is cut.
        #[test]
        fn direct_dispatch_matches_the_parser(
            pieces in prop::collection::vec(piece(), 0..60),
            cut in prop_oneof![1usize..40, 40usize..400],
        ) {
            let stream = pieces.concat();
            let (mut direct, mut parser) = (engine(true), engine(false));
            for chunk in stream.chunks(cut) {
                direct.advance(chunk);
                parser.advance(chunk);
                prop_assert_eq!(state(&mut direct), state(&mut parser));
            }
        }

        /// Drawing on the alternate screen, deferred across chunks and dropped when the screen
        /// is left unseen, leaves the state giving the parser every byte leaves.
        #[test]
        fn deferred_alternate_screen_drawing_matches_the_parser(
            sessions in prop::collection::vec(
                (
                    prop::collection::vec(piece(), 0..30),
                    prop::sample::select(vec!["\x1b[?1049l", "\x1b[?1049;25l", "\x1b[6n", ""]),
                    // REP first, now and then: it repeats the last character drawn.
                    prop::sample::select(vec!["", "\x1b[2b"]),
                    prop::collection::vec(piece(), 0..4),
                ),
                0..6,
            ),
            cut in prop_oneof![1usize..40, 40usize..400],
        ) {
            let mut stream = Vec::new();
            for (drawing, leave, repeat, after) in sessions {
                stream.extend_from_slice(b"\x1b[?1049h");
                stream.extend(drawing.concat());
                stream.extend_from_slice(leave.as_bytes());
                stream.extend_from_slice(repeat.as_bytes());
                stream.extend(after.concat());
            }
            let (mut direct, mut parser) = (engine(true), engine(false));
            for chunk in stream.chunks(cut) {
                direct.advance(chunk);
                parser.advance(chunk);
                prop_assert_eq!(direct.mode(), parser.mode());
            }
            prop_assert_eq!(state(&mut direct), state(&mut parser));
        }
    }
}
