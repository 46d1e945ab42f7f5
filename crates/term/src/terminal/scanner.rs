//! The stream scanner: a small escape-sequence state machine that runs beside the emulator and
//! finds the sequences Shellwright itself acts on (queries to answer, OSC 133/633/7 marks, scroll
//! regions) together with their byte positions, so answered queries can be cut out of the stream.
//!
//! The states follow the DEC ANSI parser model (Paul Williams, <https://vt100.net/emu/dec_ansi_parser>)
//! as alacritty's `vte` does, reduced to what is needed to delimit sequences: ESC, CSI (ECMA-48 §5.4),
//! OSC/DCS/SOS/PM/APC control strings ended by ST (`ESC \`) or, for OSC, BEL (xterm ctlseqs). CAN and
//! SUB abort a sequence, ESC inside one starts a new one (inside a control string it first ends the
//! string, as in the emulator's parser: ST is that ESC followed by `\`), and 8-bit C1 bytes are left
//! to UTF-8 text.
//! Every stored body is bounded: a longer sequence is still delimited but reported as `overflowed`.

/// Longest CSI parameter string kept (`CSI ? 1049 ; … h` fits easily).
const CSI_PARAMS_LIMIT: usize = 64;
/// Longest OSC/DCS body kept; longer bodies (e.g. OSC 52 clipboard data) are delimited, not stored.
pub(crate) const STRING_LIMIT: usize = 16 * 1024;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// How a control string ended; OSC replies use the query's own terminator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminator {
    Bel,
    St,
}

impl Terminator {
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Terminator::Bel => b"\x07",
            Terminator::St => b"\x1b\\",
        }
    }
}

/// A complete sequence, borrowed from the scanner's body buffer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sequence<'a> {
    /// `ESC [ private? params intermediate? final`; `private` and `intermediate` are 0 when absent.
    Csi {
        private: u8,
        params: &'a [u8],
        intermediate: u8,
        final_byte: u8,
        overflowed: bool,
    },
    /// `ESC ] body (BEL | ST)`.
    Osc {
        body: &'a [u8],
        terminator: Terminator,
        overflowed: bool,
    },
    /// `ESC P body ST` (the body starts with the DCS parameters and intermediates, e.g. `+q…`).
    Dcs { body: &'a [u8], overflowed: bool },
    /// `ESC intermediate? final`.
    Esc { intermediate: u8, final_byte: u8 },
    /// SOS, PM and APC strings: delimited and otherwise ignored.
    Ignored,
}

/// What the scanner hands back for each step over the input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event<'a> {
    /// A run of ground-state bytes (printable text and C0 controls), borrowed from the input.
    Text(&'a [u8]),
    /// A sequence ended at the current position.
    Sequence(Sequence<'a>),
    /// A sequence that began in an earlier feed and was held back has been abandoned (CAN, SUB, a new
    /// ESC, or a byte no sequence allows); the held bytes must now go on to the emulator and viewers.
    Released,
}

/// Where the bytes of the sequence under way started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// At this index of the current input.
    Here(usize),
    /// In an earlier feed; those bytes are held back in the scanner (not yet passed on).
    Held,
    /// In an earlier feed; those bytes were already passed on, so the sequence cannot be removed.
    Passed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscIntermediate,
    Csi,
    Osc,
    OscEsc,
    Dcs,
    DcsEsc,
    Ignored,
    IgnoredEsc,
}

#[derive(Debug)]
pub(crate) struct Scanner {
    state: State,
    origin: Origin,
    /// Total bytes of the sequence under way, stored or not.
    seq_len: usize,
    body: Vec<u8>,
    overflowed: bool,
    private: u8,
    intermediate: u8,
    held: Vec<u8>,
    /// Where the ESC that ended a control string stands, while the string is being reported; the
    /// next call begins the escape there (see [`Scanner::end_string_at_escape`]).
    escape_after_string: Option<Origin>,
}

impl Default for Scanner {
    fn default() -> Self {
        Self {
            state: State::Ground,
            origin: Origin::Passed,
            seq_len: 0,
            body: Vec::new(),
            overflowed: false,
            private: 0,
            intermediate: 0,
            held: Vec::new(),
            escape_after_string: None,
        }
    }
}

impl Scanner {
    /// True while a sequence is under way (at the end of a feed: it was split).
    pub(crate) fn in_sequence(&self) -> bool {
        self.state != State::Ground
    }

    pub(crate) fn origin(&self) -> Origin {
        self.origin
    }

    /// Bytes of the sequence under way so far.
    pub(crate) fn sequence_len(&self) -> usize {
        self.seq_len
    }

    pub(crate) fn held(&self) -> &[u8] {
        &self.held
    }

    pub(crate) fn clear_held(&mut self) {
        self.held.clear();
    }

    /// Keeps the unfinished tail of this input (from the sequence start) back for the next feed.
    pub(crate) fn hold(&mut self, tail: &[u8]) {
        self.held.extend_from_slice(tail);
        self.origin = Origin::Held;
    }

    /// Marks the sequence under way as already passed on (its bytes can no longer be removed).
    pub(crate) fn mark_passed(&mut self) {
        self.origin = Origin::Passed;
    }

    /// Which sequence is under way, for deciding whether it is worth holding back: the kind
    /// (`[`, `]`, `P`, or 0 for others) and the body so far.
    pub(crate) fn partial(&self) -> (u8, &[u8]) {
        match self.state {
            State::Csi => (b'[', &self.body),
            State::Osc | State::OscEsc => (b']', &self.body),
            State::Dcs | State::DcsEsc => (b'P', &self.body),
            State::Escape => (ESC, &[]),
            _ => (0, &[]),
        }
    }

    /// Advances over `input` from `*pos` to the next event; `None` when the input is used up.
    #[inline]
    pub(crate) fn next<'s>(&'s mut self, input: &'s [u8], pos: &mut usize) -> Option<Event<'s>> {
        if let Some(origin) = self.escape_after_string.take() {
            self.begin_escape_at(origin);
        }
        while *pos < input.len() {
            if self.state == State::Ground {
                let start = *pos;
                // Sequences follow each other as often as text does: no search for those.
                let next_escape = match input[start] {
                    ESC => Some(0),
                    _ => memchr::memchr(ESC, &input[start..]),
                };
                match next_escape {
                    Some(0) => {
                        if let Some((sequence, len)) = whole_csi(&input[start..]) {
                            self.origin = Origin::Here(start);
                            self.seq_len = len;
                            *pos = start + len;
                            return Some(Event::Sequence(sequence));
                        }
                    }
                    Some(offset) => {
                        *pos = start + offset;
                        return Some(Event::Text(&input[start..*pos]));
                    }
                    None => {
                        *pos = input.len();
                        return Some(Event::Text(&input[start..]));
                    }
                }
            }
            if self.state == State::Csi {
                *pos += self.csi_params(&input[*pos..]);
                if *pos == input.len() {
                    break;
                }
            }
            let index = *pos;
            let byte = input[index];
            *pos += 1;
            match self.step(byte, index) {
                Step::Continue => {}
                Step::Done => return Some(Event::Sequence(self.sequence())),
                Step::DoneBeforeEscape => {
                    // This byte follows the escape the next call begins.
                    *pos = index;
                    return Some(Event::Sequence(self.sequence()));
                }
                Step::Released => return Some(Event::Released),
            }
        }
        None
    }

    /// A control string was ended by an ESC not followed by `\` (the byte at `index`): the string
    /// is over there, as the emulator's parser ends it, and that ESC begins a new escape once the
    /// string is reported. The ESC stands just before `index`, or, at the start of the input, at
    /// the end of the previous feed: passed on with the string, or held back with it (then it is
    /// held on its own, after the string's bytes are dealt with).
    fn end_string_at_escape(&mut self, index: usize) -> Step {
        let escape = match index.checked_sub(1) {
            Some(at) => Origin::Here(at),
            None if self.origin == Origin::Held => {
                self.held.pop();
                Origin::Held
            }
            None => Origin::Passed,
        };
        self.escape_after_string = Some(escape);
        // The string's length leaves that ESC out.
        self.seq_len = self.seq_len.saturating_sub(1);
        self.state = match self.state {
            State::OscEsc => State::OscEsc,
            State::DcsEsc => State::Dcs,
            _ => State::Ignored,
        };
        Step::DoneBeforeEscape
    }

    /// Begins the escape whose ESC ended a control string (see [`Self::end_string_at_escape`]).
    fn begin_escape_at(&mut self, origin: Origin) {
        self.state = State::Escape;
        self.origin = origin;
        self.seq_len = 1;
        self.body.clear();
        self.overflowed = false;
        self.private = 0;
        self.intermediate = 0;
        if origin == Origin::Held {
            self.held.clear();
            self.held.push(ESC);
        }
    }

    fn begin(&mut self, index: usize) -> Step {
        // A new ESC abandons whatever was under way; held bytes of it must be released first.
        let released = self.state != State::Ground && self.origin == Origin::Held;
        self.state = State::Escape;
        self.origin = Origin::Here(index);
        self.seq_len = 1;
        self.body.clear();
        self.overflowed = false;
        self.private = 0;
        self.intermediate = 0;
        if released {
            Step::Released
        } else {
            Step::Continue
        }
    }

    fn abort(&mut self) -> Step {
        let released = self.origin == Origin::Held;
        self.state = State::Ground;
        self.origin = Origin::Passed;
        if released {
            Step::Released
        } else {
            Step::Continue
        }
    }

    fn store(&mut self, byte: u8, limit: usize) {
        if self.body.len() < limit {
            self.body.push(byte);
        } else {
            self.overflowed = true;
        }
    }

    fn step(&mut self, byte: u8, index: usize) -> Step {
        if byte != b'\\'
            && matches!(
                self.state,
                State::OscEsc | State::DcsEsc | State::IgnoredEsc
            )
        {
            return self.end_string_at_escape(index);
        }
        if byte == ESC && !matches!(self.state, State::Osc | State::Dcs | State::Ignored) {
            return self.begin(index);
        }
        self.seq_len = self.seq_len.saturating_add(1);
        if byte == CAN || byte == SUB {
            return self.abort();
        }
        match self.state {
            State::Ground => self.begin(index),
            State::Escape => match byte {
                b'[' => self.enter(State::Csi),
                b']' => self.enter(State::Osc),
                b'P' => self.enter(State::Dcs),
                b'X' | b'^' | b'_' => self.enter(State::Ignored),
                0x20..=0x2f => {
                    self.intermediate = byte;
                    self.enter(State::EscIntermediate)
                }
                0x30..=0x7e => {
                    self.body.push(byte);
                    self.finish()
                }
                0x00..=0x1f => Step::Continue,
                _ => self.abort(),
            },
            State::EscIntermediate => match byte {
                0x20..=0x2f => Step::Continue,
                0x30..=0x7e => {
                    self.body.push(byte);
                    self.finish()
                }
                0x00..=0x1f => Step::Continue,
                _ => self.abort(),
            },
            State::Csi => self.csi_byte(byte),
            State::Osc => match byte {
                BEL => self.finish_string(Terminator::Bel),
                ESC => self.enter(State::OscEsc),
                0x00..=0x1f => Step::Continue,
                _ => {
                    self.store(byte, STRING_LIMIT);
                    Step::Continue
                }
            },
            // Only ST is left here (see the top of this function).
            State::OscEsc => self.finish_string(Terminator::St),
            State::Dcs => match byte {
                ESC => self.enter(State::DcsEsc),
                _ => {
                    self.store(byte, STRING_LIMIT);
                    Step::Continue
                }
            },
            State::DcsEsc | State::IgnoredEsc => self.finish(),
            State::Ignored => {
                if byte == ESC {
                    self.enter(State::IgnoredEsc)
                } else {
                    Step::Continue
                }
            }
        }
    }

    fn csi_byte(&mut self, byte: u8) -> Step {
        match byte {
            0x3c..=0x3f if self.body.is_empty() && self.private == 0 && self.intermediate == 0 => {
                self.private = byte;
                Step::Continue
            }
            0x30..=0x3f => {
                // Parameters after an intermediate, or a second private marker, make the sequence
                // malformed; it is still delimited, and marked so nobody acts on it.
                if self.intermediate != 0 || (0x3c..=0x3f).contains(&byte) {
                    self.overflowed = true;
                }
                self.store(byte, CSI_PARAMS_LIMIT);
                Step::Continue
            }
            0x20..=0x2f => {
                if self.intermediate == 0 {
                    self.intermediate = byte;
                } else {
                    self.overflowed = true;
                }
                Step::Continue
            }
            0x40..=0x7e => {
                self.body.push(byte);
                self.finish()
            }
            0x00..=0x1f => Step::Continue,
            _ => self.abort(),
        }
    }

    /// Takes the digits and separators (0x30–0x3b) at the start of `input` inside a CSI in one
    /// step, as [`Self::csi_byte`] would take them one by one; returns how many there were.
    fn csi_params(&mut self, input: &[u8]) -> usize {
        let count = span_within::<b'0', b';'>(input);
        if count == 0 {
            return 0;
        }
        let room = CSI_PARAMS_LIMIT.saturating_sub(self.body.len());
        self.body.extend_from_slice(&input[..count.min(room)]);
        if self.intermediate != 0 || count > room {
            self.overflowed = true;
        }
        self.seq_len = self.seq_len.saturating_add(count);
        count
    }

    fn enter(&mut self, state: State) -> Step {
        self.state = state;
        Step::Continue
    }

    fn finish(&mut self) -> Step {
        self.state = match self.state {
            State::Escape | State::EscIntermediate => State::Escape,
            State::Csi => State::Csi,
            State::DcsEsc => State::Dcs,
            _ => State::Ignored,
        };
        Step::Done
    }

    fn finish_string(&mut self, terminator: Terminator) -> Step {
        self.state = match terminator {
            Terminator::Bel => State::Osc,
            Terminator::St => State::OscEsc,
        };
        Step::Done
    }

    /// Builds the finished sequence (the state still names its kind) and returns to ground.
    fn sequence(&mut self) -> Sequence<'_> {
        let kind = self.state;
        self.state = State::Ground;
        match kind {
            State::Escape => Sequence::Esc {
                intermediate: self.intermediate,
                final_byte: self.body.last().copied().unwrap_or(0),
            },
            State::Csi => {
                let (final_byte, params) = match self.body.split_last() {
                    Some((last, rest)) => (*last, rest),
                    None => (0, &[][..]),
                };
                Sequence::Csi {
                    private: self.private,
                    params,
                    intermediate: self.intermediate,
                    final_byte,
                    overflowed: self.overflowed,
                }
            }
            State::Osc => Sequence::Osc {
                body: &self.body,
                terminator: Terminator::Bel,
                overflowed: self.overflowed,
            },
            State::OscEsc => Sequence::Osc {
                body: &self.body,
                terminator: Terminator::St,
                overflowed: self.overflowed,
            },
            State::Dcs => Sequence::Dcs {
                body: &self.body,
                overflowed: self.overflowed,
            },
            _ => Sequence::Ignored,
        }
    }
}

/// The common form of CSI read in one step when it lies whole at the start of `input`: `ESC [`, an
/// optional private marker, at most [`CSI_PARAMS_LIMIT`] parameter bytes and a final byte. Returns
/// the sequence [`Scanner::step`] would make of it byte by byte, and its length.
#[inline]
fn whole_csi(input: &[u8]) -> Option<(Sequence<'_>, usize)> {
    let body = input.strip_prefix(b"\x1b[")?;
    let private = match body.first() {
        Some(&marker @ 0x3c..=0x3f) => marker,
        _ => 0,
    };
    let params_start = usize::from(private != 0);
    let limit = body.len().min(params_start + CSI_PARAMS_LIMIT);
    let final_at = params_start + span_within::<b'0', b';'>(&body[params_start..limit]);
    let final_byte = *body.get(final_at)?;
    if !(0x40..=0x7e).contains(&final_byte) {
        return None;
    }
    let sequence = Sequence::Csi {
        private,
        params: &body[params_start..final_at],
        intermediate: 0,
        final_byte,
        overflowed: false,
    };
    Some((sequence, 2 + final_at + 1))
}

/// The length of the run of bytes from `LOW` to `HIGH` (both ASCII, `LOW` above 0) that `bytes`
/// starts with, eight bytes at a time: text runs and parameter strings are scanned here. Bit
/// tricks after Anderson's "Bit Twiddling Hacks": a byte below `LOW` borrows into its top bit
/// when `LOW` is taken from it, one above `HIGH` carries into it when `0x7f - HIGH` is added or
/// has it set already; a borrow or carry across bytes only follows a byte already found, so the
/// lowest top bit set is the first byte outside. The last word is padded with zeros (below
/// `LOW`), so most runs, shorter than a word or two, end without a loop over single bytes.
#[inline]
pub(super) fn span_within<const LOW: u8, const HIGH: u8>(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOPS: u64 = 0x8080_8080_8080_8080;
    const { assert!(LOW > 0 && LOW <= HIGH && HIGH < 0x80) };
    let mut len = 0;
    loop {
        let rest = &bytes[len..];
        let word = match (rest.first_chunk::<8>(), bytes.last_chunk::<8>()) {
            (Some(word), _) => u64::from_le_bytes(*word),
            _ if rest.is_empty() => return len,
            // The input's last word holds the rest in its top bytes; shifted down, zeros follow.
            (None, Some(last)) => u64::from_le_bytes(*last) >> (8 * (8 - rest.len())),
            (None, None) => {
                let mut array = [0; 8];
                array[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(array)
            }
        };
        let below = word.wrapping_sub(u64::from(LOW) * ONES) & !word;
        let above = word.wrapping_add(u64::from(0x7f - HIGH) * ONES) | word;
        let outside = (below | above) & TOPS;
        if outside != 0 {
            return len + (outside.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Step {
    Continue,
    Done,
    /// A control string ended at the ESC before the byte just read, which begins a new escape
    /// (see [`Scanner::end_string_at_escape`]).
    DoneBeforeEscape,
    Released,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scans `input` in one feed and lists the events in a compact printable form.
    fn events(input: &[u8]) -> Vec<String> {
        let mut scanner = Scanner::default();
        let mut pos = 0;
        let mut out = Vec::new();
        while let Some(event) = scanner.next(input, &mut pos) {
            out.push(match event {
                Event::Text(t) => format!("text {:?}", String::from_utf8_lossy(t)),
                Event::Sequence(s) => format!("{s:?}"),
                Event::Released => "released".to_string(),
            });
        }
        out
    }

    #[test]
    fn delimits_each_kind_of_sequence() {
        let cases: &[(&[u8], &[&str])] = &[
            (b"ab", &["text \"ab\""]),
            (
                b"a\x1b[1;2Hb",
                &[
                    "text \"a\"",
                    "Csi { private: 0, params: [49, 59, 50], intermediate: 0, final_byte: 72, overflowed: false }",
                    "text \"b\"",
                ],
            ),
            (
                b"\x1b[?1049h",
                &[
                    "Csi { private: 63, params: [49, 48, 52, 57], intermediate: 0, final_byte: 104, overflowed: false }",
                ],
            ),
            (
                b"\x1b[?1$p",
                &[
                    "Csi { private: 63, params: [49], intermediate: 36, final_byte: 112, overflowed: false }",
                ],
            ),
            (
                b"\x1b]0;hi\x07",
                &["Osc { body: [48, 59, 104, 105], terminator: Bel, overflowed: false }"],
            ),
            (
                b"\x1b]11;?\x1b\\",
                &["Osc { body: [49, 49, 59, 63], terminator: St, overflowed: false }"],
            ),
            (
                b"\x1bP+q544e\x1b\\",
                &["Dcs { body: [43, 113, 53, 52, 52, 101], overflowed: false }"],
            ),
            (b"\x1bc", &["Esc { intermediate: 0, final_byte: 99 }"]),
            (b"\x1b(B", &["Esc { intermediate: 40, final_byte: 66 }"]),
            (b"\x1b_apc\x1b\\x", &["Ignored", "text \"x\""]),
            // CAN aborts; the rest is text again.
            (b"\x1b[12\x18z", &["text \"z\""]),
            // ESC inside a control string ends it there, as the emulator's parser ends it.
            (
                b"\x1b]0;t\x1b[2J",
                &[
                    "Osc { body: [48, 59, 116], terminator: St, overflowed: false }",
                    "Csi { private: 0, params: [50], intermediate: 0, final_byte: 74, overflowed: false }",
                ],
            ),
            (
                b"\x1b^[[1;1R[6n\x1b[6nx",
                &[
                    "Ignored",
                    "Csi { private: 0, params: [54], intermediate: 0, final_byte: 110, overflowed: false }",
                    "text \"x\"",
                ],
            ),
            (
                b"\x1bPq\x1b\x1bc",
                &[
                    "Dcs { body: [113], overflowed: false }",
                    "Esc { intermediate: 0, final_byte: 99 }",
                ],
            ),
            // ESC inside CSI starts a new sequence.
            (
                b"\x1b[1\x1b[2J",
                &[
                    "Csi { private: 0, params: [50], intermediate: 0, final_byte: 74, overflowed: false }",
                ],
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                events(input),
                *expected,
                "input {:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn long_bodies_are_delimited_but_marked() {
        let mut input = b"\x1b]52;c;".to_vec();
        input.extend(std::iter::repeat_n(b'A', STRING_LIMIT + 10));
        input.extend_from_slice(b"\x07after");
        let got = events(&input);
        assert_eq!(got.len(), 2);
        assert!(got[0].ends_with("terminator: Bel, overflowed: true }"));
        assert_eq!(got[1], "text \"after\"");
    }

    #[test]
    fn origin_tracks_where_a_sequence_began() {
        let mut scanner = Scanner::default();
        let mut pos = 0;
        let input = b"ab\x1b[6";
        assert_eq!(scanner.next(input, &mut pos), Some(Event::Text(b"ab")));
        assert_eq!(scanner.next(input, &mut pos), None);
        assert!(scanner.in_sequence());
        assert_eq!(scanner.origin(), Origin::Here(2));
        assert_eq!(scanner.sequence_len(), 3);
        scanner.hold(&input[2..]);
        let mut pos = 0;
        let next = b"n";
        assert!(matches!(
            scanner.next(next, &mut pos),
            Some(Event::Sequence(Sequence::Csi {
                final_byte: b'n',
                ..
            }))
        ));
        assert_eq!(scanner.origin(), Origin::Held);
        assert_eq!(scanner.held(), b"\x1b[6");
    }

    #[test]
    fn abandoning_a_held_sequence_releases_it() {
        let mut scanner = Scanner::default();
        let mut pos = 0;
        assert_eq!(scanner.next(b"\x1b[6", &mut pos), None);
        scanner.hold(b"\x1b[6");
        let mut pos = 0;
        assert_eq!(scanner.next(b"\x18rest", &mut pos), Some(Event::Released));
        assert_eq!(scanner.held(), b"\x1b[6");
        scanner.clear_held();
        assert_eq!(
            scanner.next(b"\x18rest", &mut pos),
            Some(Event::Text(b"rest"))
        );
    }

    /// The sequences `chunks` hold, scanned as consecutive feeds.
    fn sequences<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        for chunk in chunks {
            let mut pos = 0;
            while let Some(event) = scanner.next(chunk, &mut pos) {
                if let Event::Sequence(sequence) = event {
                    out.push(format!("{sequence:?}"));
                }
            }
        }
        out
    }

    /// The sequences of `input` scanned in one feed, each with where it started and its length.
    fn placed_sequences(input: &[u8]) -> Vec<String> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(event) = scanner.next(input, &mut pos) {
            if let Event::Sequence(sequence) = event {
                let sequence = format!("{sequence:?}");
                let placed = (
                    scanner.origin(),
                    scanner.sequence_len(),
                    scanner.in_sequence(),
                );
                out.push(format!("{sequence} {placed:?}"));
            }
        }
        out
    }

    /// The sequences of `input` with every byte of a sequence through [`Scanner::step`], with
    /// where each started and its length when `placed`.
    fn sequences_by_step(input: &[u8], placed: bool) -> Vec<String> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        for (index, &byte) in input.iter().enumerate() {
            if scanner.state == State::Ground && byte != ESC {
                continue;
            }
            let mut step = scanner.step(byte, index);
            while matches!(step, Step::Done | Step::DoneBeforeEscape) {
                let sequence = format!("{:?}", scanner.sequence());
                if placed {
                    let placed = (
                        scanner.origin(),
                        scanner.sequence_len(),
                        scanner.in_sequence(),
                    );
                    out.push(format!("{sequence} {placed:?}"));
                } else {
                    out.push(sequence);
                }
                match scanner.escape_after_string.take() {
                    // The byte follows the ESC that ended the string.
                    Some(origin) => {
                        scanner.begin_escape_at(origin);
                        step = scanner.step(byte, index);
                    }
                    None => break,
                }
            }
        }
        out
    }

    proptest::proptest! {
        /// Eight bytes at a time finds the end of a run of parameter bytes where one at a time
        /// does, whatever the bytes around.
        #[test]
        fn parameter_runs_end_where_bytes_say(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![b'0'..=b';', proptest::num::u8::ANY],
                0..40,
            ),
        ) {
            let by_byte = bytes
                .iter()
                .position(|b| !(b'0'..=b';').contains(b))
                .unwrap_or(bytes.len());
            proptest::prop_assert_eq!(span_within::<b'0', b';'>(&bytes), by_byte);
        }

        /// CSI parameters taken in bulk, and whole sequences read in one step, make the sequences
        /// taking them one byte at a time makes (with the same start and length), overlong and
        /// malformed ones included, however the input is cut.
        #[test]
        fn bulk_csi_parameters_scan_as_single_bytes_do(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    "\\x1b\\[[?>]?[0-9;:]{0,70}[ !]?[0-9;]{0,3}[@-~]",
                    "[\\x1b\\[0-9;:?< $mHa\\x07\\x18\\x7f\\]P\\\\]{1,12}",
                    "\\x1b\\[[?]?[0-9;]{0,3}[\\x07\\x18\\x1b\\x7f\\u{80}-\\u{ff}]",
                ],
                0..20,
            ),
            cut in 1usize..16,
        ) {
            let input = pieces.concat().into_bytes();
            let expected = sequences_by_step(&input, false);
            proptest::prop_assert_eq!(sequences([&input[..]]), expected.clone());
            proptest::prop_assert_eq!(sequences(input.chunks(cut)), expected);
            proptest::prop_assert_eq!(placed_sequences(&input), sequences_by_step(&input, true));
        }
    }
}
