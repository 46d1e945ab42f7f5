//! Bounds on what one control sequence may cost the emulator.
//!
//! A few control functions take a count that the emulator turns into that many steps: REP
//! (ECMA-48 §8.3.103) prints the preceding character `n` times, CBT (§8.3.7) walks back `n` tab
//! stops even when there is none to find. With 16-bit parameters a five-byte sequence could cost
//! tens of thousands of cell writes, so a stream of them costs far more than its length. Here every
//! count is cut to what the screen can show before the sequence reaches the emulator, keeping the
//! visible result identical: moves, inserts, deletes and erases to the screen's width or height,
//! and REP to enough repetitions to repaint the whole screen, keeping the count modulo one row of
//! characters so the cursor and the last partial row end where they would have. Only the count of
//! rows pushed into scrollback by a huge REP changes.

use std::fmt::Write;

use crate::params::{self, Param};

/// What the emulator's state says about a REP at the point it arrives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RepeatContext {
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    /// The cursor's column (0-based).
    pub(crate) col: u16,
    /// The cursor sits past the last column: the next character wraps first.
    pub(crate) pending_wrap: bool,
    pub(crate) insert: bool,
    pub(crate) auto_wrap: bool,
    /// Display width of the character to repeat, `None` when no character was printed yet.
    pub(crate) width: Option<usize>,
    /// Some row below the cursor's holds a wide character.
    pub(crate) wide_below: bool,
}

/// The bound each counting function's parameters get, by final byte (no private marker, no
/// intermediate): `true` in a slot means the screen's height, `false` its width.
fn param_bounds(final_byte: u8) -> Option<&'static [bool]> {
    const HEIGHT: &[bool] = &[true];
    const WIDTH: &[bool] = &[false];
    match final_byte {
        // CUU, CUD, CNL, CPL, VPA, VPR; IL, DL, SU, SD.
        b'A' | b'B' | b'E' | b'F' | b'd' | b'e' | b'L' | b'M' | b'S' | b'T' => Some(HEIGHT),
        // CUF, CUB, CHA, HPA, HPR; ICH, DCH, ECH; CHT, CBT.
        b'C' | b'D' | b'G' | b'`' | b'a' | b'@' | b'P' | b'X' | b'I' | b'Z' => Some(WIDTH),
        // CUP, HVP: row then column.
        b'H' | b'f' => Some(&[true, false]),
        // DECSTBM: a bottom past the screen would make the emulator accept a region xterm rejects.
        b'r' => Some(&[true, true]),
        _ => None,
    }
}

/// True for the functions whose parameters are counts or positions (REP among them).
pub(crate) fn takes_count(final_byte: u8) -> bool {
    final_byte == b'b' || param_bounds(final_byte).is_some()
}

/// The sequence to give the emulator instead of `CSI params final_byte` when a count exceeds the
/// screen or has sub-parameters (which the function does not take), or `None` to pass it
/// unchanged. REP is handled by [`bound_repeat`]. Parameters past the function's last are dropped
/// from a rewrite, as the emulator ignores them.
pub(crate) fn bound_counts(params: &[u8], final_byte: u8, cols: u16, rows: u16) -> Option<Vec<u8>> {
    let bounds = param_bounds(final_byte)?;
    let bounded = |(param, &height): (Param, &bool)| {
        let limit = if height { rows } else { cols };
        let changed = param.value.is_some_and(|v| v > limit) || param.sub_params;
        (param.value.map(|v| v.min(limit)), changed)
    };
    // Nearly every sequence is within bounds: nothing is allocated for it.
    if !params::params(params)
        .zip(bounds)
        .any(|param| bounded(param).1)
    {
        return None;
    }
    let mut out = b"\x1b[".to_vec();
    for (i, param) in params::params(params).zip(bounds).enumerate() {
        if i > 0 {
            out.push(b';');
        }
        if let (Some(value), _) = bounded(param) {
            let _ = write!(ByteWriter(&mut out), "{value}");
        }
    }
    out.push(final_byte);
    Some(out)
}

/// REP's count: its first parameter, 1 when absent or 0.
fn repeat_count(params: &[u8]) -> usize {
    let count = params::params(params).next().and_then(|param| param.value);
    usize::from(count.unwrap_or(0).max(1))
}

/// Enough repetitions of a character of width 1 to repaint every row of the screen.
fn screenful(context: &RepeatContext) -> usize {
    (usize::from(context.rows) + 2) * usize::from(context.cols).max(1)
}

/// How many copies of one printable ASCII character the emulator was last given in a row, for REP.
///
/// [`bound_repeat`] cuts each REP to a screenful, but a REP that fits the screen is run in full,
/// so a stream of `x CSI 65535 b` on a large screen still costs tens of thousands of cell writes
/// per five-byte sequence. Once a screenful of the same character has been written in a row — in
/// replace mode, with auto-wrap, over the full screen, nothing else in between — the screen has
/// one shape: every row but the bottom one full of it, the bottom one holding it up to the cursor
/// and blank after (the row was scrolled in). Writing more of it keeps that shape; only the
/// cursor's column, found from the count modulo the row length, and the number of rows of the
/// character pushed into scrollback (which [`bound_repeat`] already changes) depend on how many.
/// So a REP is cut to what completes the screenful plus the remainder that places the cursor:
/// after the first screenful, each sequence costs at most one row.
#[derive(Debug, Default)]
pub(crate) struct RepeatRun {
    byte: Option<u8>,
    /// Copies of `byte` written in a row (saturating).
    len: usize,
}

impl RepeatRun {
    /// Text went to the emulator: copies of one character extend or start a run.
    pub(crate) fn text(&mut self, text: &[u8]) {
        let Some(&first) = text.first() else {
            return;
        };
        if !text.iter().all(|&b| b == first) || !(b' '..=b'~').contains(&first) {
            self.clear();
        } else if self.byte == Some(first) {
            self.len = self.len.saturating_add(text.len());
        } else {
            *self = Self {
                byte: Some(first),
                len: text.len(),
            };
        }
    }

    /// Something other than text or REP went to the emulator (or the screen changed size).
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// The sequences to give the emulator for `CSI params b` repeating `last`, or `None` to pass
    /// it unchanged; `full_region` is false under a scroll region.
    pub(crate) fn repeat(
        &mut self,
        params: &[u8],
        context: &RepeatContext,
        last: Option<char>,
        full_region: bool,
    ) -> Option<Vec<u8>> {
        let byte = last
            .and_then(|c| u8::try_from(c).ok())
            .filter(|c| (b' '..=b'~').contains(c));
        let plain = context.width == Some(1) && !context.insert && context.auto_wrap && full_region;
        let (Some(byte), true) = (byte, plain) else {
            self.clear();
            return bound_repeat(params, context);
        };
        if self.byte != Some(byte) {
            *self = Self {
                byte: Some(byte),
                len: 0,
            };
        }
        let count = repeat_count(params);
        let cols = usize::from(context.cols).max(1);
        let needed = screenful(context).saturating_sub(self.len);
        self.len = self.len.saturating_add(count);
        // The cut keeps the count modulo the row, and never cuts to 0 (which REP reads as 1).
        let extra = match (count - needed.min(count)) % cols {
            0 if needed == 0 => cols,
            extra => extra,
        };
        (count > needed + cols).then(|| repeat(needed + extra))
    }
}

/// The sequences to give the emulator for `CSI count b`, or `None` to pass it unchanged.
pub(crate) fn bound_repeat(params: &[u8], context: &RepeatContext) -> Option<Vec<u8>> {
    let count = repeat_count(params);
    let (cols, rows) = (usize::from(context.cols), usize::from(context.rows));
    let Some(width) = context.width else {
        // Nothing to repeat: the emulator ignores it whatever the count.
        return None;
    };
    let per_row = match width {
        1 | 2 => cols / width,
        // Zero-width marks pile up on one cell; more than a row of them shows nothing new.
        _ => return (count > cols).then(|| repeat(cols)),
    };
    if !context.auto_wrap {
        // Without wrapping, everything past the last column overwrites the last cell.
        return (count > cols).then(|| repeat(cols));
    }
    // Enough repetitions to repaint every row, plus the remainder that places the cursor. Insert
    // mode with wide characters settles later and repeats every two rows' worth: a wide character
    // that does not fit the rest of a row shifts what is there instead of replacing it.
    let insert_wide = context.insert && (width != 1 || context.wide_below);
    let (passes, period) = if insert_wide {
        (2 * rows + 2, 2 * per_row.max(1))
    } else {
        (rows + 2, per_row.max(1))
    };
    let floor = passes * per_row.max(1);
    let bounded = if count > floor + period {
        floor + (count - floor) % period
    } else {
        count
    };
    let first_row = if context.pending_wrap {
        0
    } else {
        cols.saturating_sub(usize::from(context.col)) / width
    };
    // In insert mode every character shifts the rest of its row. Rows below the cursor's that the
    // repetition fills completely with narrow characters end the same in replace mode, one write
    // per cell instead of a row shift, so only the cursor's row and the last one need insert mode.
    // (Insert mode shifts wide characters into shapes replace mode does not leave: rows holding
    // any keep it.)
    if !context.insert || width != 1 || context.wide_below || bounded <= first_row {
        return (bounded != count).then(|| repeat(bounded));
    }
    let rest = bounded - first_row;
    let last = match rest % per_row {
        0 => per_row,
        partial => partial,
    };
    let mut out = Vec::new();
    if first_row > 0 {
        out.extend_from_slice(&repeat(first_row));
    }
    out.extend_from_slice(b"\x1b[4l");
    if rest > last {
        out.extend_from_slice(&repeat(rest - last));
    }
    out.extend_from_slice(b"\x1b[4h");
    out.extend_from_slice(&repeat(last));
    Some(out)
}

fn repeat(count: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    let _ = write!(ByteWriter(&mut out), "\x1b[{count}b");
    out
}

/// `fmt::Write` into a byte vector (only ASCII is written).
struct ByteWriter<'a>(&'a mut Vec<u8>);

impl Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// The last character printed by a run of ground-state text, as the emulator remembers it for
/// REP: the last character that is not a C0 control or DEL (bytes that are not UTF-8 print as
/// U+FFFD, as in the emulator).
pub(crate) fn last_printed(text: &[u8]) -> Option<char> {
    let end = text
        .iter()
        .rposition(|&b| !matches!(b, 0x00..=0x1f | 0x7f))?
        + 1;
    if text[end - 1].is_ascii() {
        // Most text ends in ASCII: no decoding needed.
        return Some(char::from(text[end - 1]));
    }
    let tail = &text[end.saturating_sub(4)..end];
    String::from_utf8_lossy(tail).chars().next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: Option<Vec<u8>>) -> Option<String> {
        bytes.map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    #[test]
    fn counts_are_cut_to_the_screen() {
        let rows: &[(&[u8], u8, Option<&str>)] = &[
            (b"155", b'L', Some("\x1b[50L")),
            (b"50", b'L', None),
            (b"", b'L', None),
            (b"65535", b'C', Some("\x1b[200C")),
            (b"283;176", b'e', Some("\x1b[50e")),
            (b"999;999", b'H', Some("\x1b[50;200H")),
            (b";999", b'H', Some("\x1b[;200H")),
            (b"3;4", b'H', None),
            (b"65535", b'Z', Some("\x1b[200Z")),
            (b"70000:5", b'@', Some("\x1b[200@")),
            (b"2:5", b'@', Some("\x1b[2@")),
            (b"65535", b'm', None),
            (b"2;300", b'r', Some("\x1b[2;50r")),
            (b"2;30", b'r', None),
        ];
        for (params, final_byte, want) in rows {
            assert_eq!(
                text(bound_counts(params, *final_byte, 200, 50)).as_deref(),
                *want,
                "{:?}",
                String::from_utf8_lossy(params)
            );
        }
    }

    fn context(col: u16, width: usize) -> RepeatContext {
        RepeatContext {
            cols: 10,
            rows: 3,
            col,
            pending_wrap: false,
            insert: false,
            auto_wrap: true,
            width: Some(width),
            wide_below: false,
        }
    }

    #[test]
    fn repeats_keep_the_remainder_of_a_row() {
        // floor = (3 + 2) × 10 = 50; 65535 = 50 + 65485, 65485 mod 10 = 5.
        assert_eq!(
            text(bound_repeat(b"65535", &context(0, 1))).as_deref(),
            Some("\x1b[55b")
        );
        assert_eq!(text(bound_repeat(b"60", &context(0, 1))), None);
        // Wide characters: five per row.
        assert_eq!(
            text(bound_repeat(b"65535", &context(0, 2))).as_deref(),
            Some("\x1b[25b")
        );
        let no_wrap = RepeatContext {
            auto_wrap: false,
            ..context(3, 1)
        };
        assert_eq!(
            text(bound_repeat(b"500", &no_wrap)).as_deref(),
            Some("\x1b[10b")
        );
        let nothing = RepeatContext {
            width: None,
            ..context(0, 1)
        };
        assert_eq!(text(bound_repeat(b"65535", &nothing)), None);
        let insert = RepeatContext {
            insert: true,
            ..context(4, 1)
        };
        // 6 fill the first row, 65529 remain: the last row gets 65529 mod 10 = 9 → 6 + 40 + 9 = 55.
        assert_eq!(
            text(bound_repeat(b"65535", &insert)).as_deref(),
            Some("\x1b[6b\x1b[4l\x1b[40b\x1b[4h\x1b[9b")
        );
        let wide = RepeatContext {
            wide_below: true,
            ..insert
        };
        // Insert mode over wide characters: floor = (2 × 3 + 2) × 10 = 80, period 20;
        // 65455 mod 20 = 15.
        assert_eq!(
            text(bound_repeat(b"65535", &wide)).as_deref(),
            Some("\x1b[95b")
        );
        assert_eq!(text(bound_repeat(b"5", &insert)), None);
    }

    #[test]
    fn last_printed_character() {
        assert_eq!(last_printed(b"ab\r\n"), Some('b'));
        assert_eq!(last_printed("x日\x07".as_bytes()), Some('日'));
        assert_eq!(last_printed(b"\r\n"), None);
        assert_eq!(last_printed(b"a\xff"), Some('\u{fffd}'));
    }

    proptest::proptest! {
        /// The ASCII shortcut names the character decoding the whole text names.
        #[test]
        fn last_printed_is_the_last_decoded_character(
            text in proptest::collection::vec(proptest::prop_oneof![
                proptest::num::u8::ANY,
                proptest::prop_oneof![0x20u8..0x7f, 0u8..0x20],
            ], 0..12),
        ) {
            let decoded = String::from_utf8_lossy(&text)
                .chars()
                .rfind(|&c| !matches!(c, '\0'..='\x1f' | '\x7f'));
            proptest::prop_assert_eq!(last_printed(&text), decoded);
        }
    }
}
