//! A mixed stream cut at random points and looked at at random points: the terminal shows what
//! parsing every byte through the parser shows, and a viewer started from a snapshot at any cut
//! (with the unfinished sequence's bytes, as a session gives them) meets it at the end.
//!
//! The stream is what a session's pseudo-terminal delivers for the attach test's workload: the
//! program's output with the echo of answered queries (`^[[12;5R`) dropped in anywhere, inside
//! sequences and characters too. An echo right after an ESC makes `ESC ^` (a PM string); the
//! scanner must end it where the emulator's parser does, at the next ESC, or a viewer is given
//! bytes the emulator already acted on, and every query after it goes unanswered.

use super::*;

/// A small deterministic generator (xorshift64*), so a failure can be replayed from its seed.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
}

const COLS: u16 = 60;
const ROWS: u16 = 16;

/// Piece `kind` (0 to 5) of a stream that draws: a cursor move (past the edge too), an SGR
/// attribute, 256-colour and direct colours, wide text, combining and two- to three-byte UTF-8,
/// line breaks.
pub(super) fn drawing(rng: &mut Rng, kind: usize) -> String {
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
pub(super) fn switch_screen(alternate: &mut bool) -> String {
    *alternate = !*alternate;
    if *alternate {
        "\x1b[?1049h"
    } else {
        "\x1b[?1049l"
    }
    .into()
}

/// A title (OSC 0) with a wide character.
pub(super) fn title(rng: &mut Rng) -> String {
    format!("\x1b]0;title {} 題\x07", rng.below(100))
}

/// Text (wide, combining, two- to four-byte UTF-8), SGR colours, cursor moves, the alternate
/// screen on and off, titles and a cursor-position query; then the echo of replies, anywhere.
fn stream(rng: &mut Rng, pieces: usize) -> Vec<u8> {
    let mut out = String::new();
    let mut alternate = false;
    for _ in 0..pieces {
        let piece = match rng.below(12) {
            kind @ 0..=5 => drawing(rng, kind),
            6 => switch_screen(&mut alternate),
            7 => title(rng),
            8 => "\x1b[6n".into(),
            9 => format!(
                "\x1b[{}{}",
                1 + rng.below(5),
                ['A', 'B', 'C', 'D'][rng.below(4)]
            ),
            _ => format!(
                "line {} of the stream with words to wrap\r\n",
                rng.below(1000)
            ),
        };
        out.push_str(&piece);
    }
    out.push_str("\x1b[?1049l\x1b[0m");
    let mut bytes = out.into_bytes();
    for _ in 0..rng.below(40) {
        let at = rng.below(bytes.len());
        let echo = format!("^[[{};{}R", 1 + rng.below(16), 1 + rng.below(60));
        bytes.splice(at..at, echo.into_bytes());
    }
    bytes
}

/// How many bytes at the end of `bytes` begin a UTF-8 character they do not finish.
fn split_character(bytes: &[u8]) -> usize {
    (1..=3.min(bytes.len()))
        .find(|&back| {
            let needs = match bytes[bytes.len() - back] {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 0,
            };
            needs > back
        })
        .unwrap_or(0)
}

/// A viewer cut at some point: the snapshot, the unfinished sequence, where the stream resumes.
struct Cut {
    snapshot: String,
    open: Vec<u8>,
    from: usize,
}

#[test]
fn a_stream_cut_anywhere_shows_as_parsed_whole_and_viewers_meet_it() {
    let options = TerminalOptions {
        cols: COLS,
        rows: ROWS,
        scrollback: 1000,
        answer_queries: true,
    };
    for seed in 1..=24u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let stream = stream(&mut rng, 1500);
        let mut session = Terminal::new(options);
        let mut parsed = Terminal::new(options);
        parsed.parse_every_byte();
        parsed.engine.parse_through_parser();
        let (mut passed, mut replies, mut cuts) = (Vec::new(), Vec::new(), Vec::new());
        let mut at = 0;
        while at < stream.len() {
            let end = (at + 1 + rng.below(300)).min(stream.len());
            let fed = session.feed(&stream[at..end]);
            passed.extend_from_slice(&fed.passthrough);
            replies.extend_from_slice(&fed.replies);
            parsed.feed(&stream[at..end]);
            at = end;
            match rng.below(6) {
                0 => {
                    let snapshot = session.snapshot();
                    let open = session.open_sequence_len();
                    // As a session's decoder does, a character split at the cut comes whole after it.
                    let split = split_character(&passed);
                    let from = passed.len() - split;
                    cuts.push(Cut {
                        snapshot,
                        open: passed[(passed.len() - open).min(from)..from].to_vec(),
                        from,
                    });
                }
                1 => {
                    session.screen();
                }
                _ => {}
            }
        }
        passed.extend(session.flush());
        parsed.flush();
        let want = observe(&mut parsed);
        assert_eq!(observe(&mut session), want, "seed {seed}");
        assert!(!replies.is_empty(), "seed {seed}: no query answered");
        for (index, cut) in cuts.iter().enumerate() {
            let mut viewer = Terminal::new(TerminalOptions {
                answer_queries: false,
                ..options
            });
            viewer.feed(cut.snapshot.as_bytes());
            viewer.feed(&cut.open);
            viewer.feed(&passed[cut.from..]);
            viewer.flush();
            let (got, screen) = (viewer.screen(), &want.0);
            assert_eq!(
                (&got.lines, got.cursor, &got.title),
                (&screen.lines, screen.cursor, &screen.title),
                "seed {seed} viewer {index} from {}",
                cut.from
            );
        }
    }
}
