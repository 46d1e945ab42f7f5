//! Deterministic terminal workloads for tests, shared by this crate's tests and, through the
//! `testing` feature, by the tests of crates that drive a terminal (`shellwright-pty`'s attach
//! tests). Not part of the API a program uses.
//!
//! A workload is what an interactive program writes: text (wide, combining, multi-byte), SGR
//! colours, cursor moves, erases, scroll regions, the alternate screen, titles, a cursor-position
//! query, DECSC/DECRC and line-drawing character sets — what a viewer replaying a session is most
//! likely to get wrong. Every piece comes from a seeded generator, so a failure is replayed from
//! its seed.
//!
//! Some tests pin seeds that once found a bug (`terminal/tests/viewers.rs`): they depend on this
//! generator's output byte for byte, so a new kind of piece goes in as a new function, not as a
//! change to the pieces below.

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
}

/// Piece `kind` (0 to 5) of a stream that draws: a cursor move (past the edge of a 16 × 80 screen
/// too), an SGR attribute, 256-colour and direct colours, wide text, combining and two- to
/// four-byte UTF-8, line breaks.
fn drawing(rng: &mut Rng, kind: usize) -> String {
    match kind {
        0 => format!("\x1b[{};{}H", 1 + rng.below(16), 1 + rng.below(80)),
        1 => format!("\x1b[{}m", [1, 4, 7, 31, 42, 0, 22][rng.below(7)]),
        2 => format!(
            "\x1b[38;5;{}m\x1b[48;2;{};20;30m",
            rng.below(256),
            rng.below(256)
        ),
        3 => "日本語の文字𝐀 wide ".into(),
        4 => "cafe\u{301} naïve €uro ".into(),
        _ => "\r\n".repeat(1 + rng.below(3)),
    }
}

/// `CSI ? 1049 h` or `l`: enters the alternate screen or leaves it, as `alternate` says it is off
/// or on, and records the switch.
fn switch_screen(alternate: &mut bool) -> String {
    *alternate = !*alternate;
    if *alternate {
        "\x1b[?1049h"
    } else {
        "\x1b[?1049l"
    }
    .into()
}

/// A title (OSC 0) with a wide character.
fn title(rng: &mut Rng) -> String {
    format!("\x1b]0;title {} 題\x07", rng.below(100))
}

/// A program's output of `pieces` random pieces: the drawing pieces, scroll regions set and
/// reset, the alternate screen on and off, titles, a cursor-position query, moves, erases in line
/// and display, insertions and deletions of lines, DECSC/DECRC, character sets, wrapping lines.
pub fn workload(rng: &mut Rng, pieces: usize) -> Vec<u8> {
    let mut out = String::new();
    let mut alternate = false;
    for _ in 0..pieces {
        let piece = match rng.below(17) {
            kind @ 0..=5 => drawing(rng, kind),
            6 => format!("\x1b[{};{}r", 1 + rng.below(5), 8 + rng.below(8)),
            7 => "\x1b[r".into(),
            8 => switch_screen(&mut alternate),
            9 => title(rng),
            10 => "\x1b[6n".into(),
            11 => format!(
                "\x1b[{}{}",
                1 + rng.below(5),
                b"ABCDKJLM"[rng.below(8)] as char
            ),
            14 => "\x1b7".into(),
            15 => "\x1b8".into(),
            16 => ["\x1b(0lqqk", "\x1b(B", "\x1b)0"][rng.below(3)].into(),
            _ => format!(
                "line {} of the stream with some words to wrap around\r\n",
                rng.below(1000)
            ),
        };
        out.push_str(&piece);
    }
    out.into_bytes()
}
