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
use crate::testing::{Rng, workload};

const COLS: u16 = 60;
const ROWS: u16 = 16;

/// The shared workload ([`workload`]), back on the main screen at the end; then the echo of
/// replies, anywhere.
fn stream(rng: &mut Rng, pieces: usize) -> Vec<u8> {
    let mut bytes = workload(rng, pieces);
    bytes.extend_from_slice(b"\x1b[?1049l\x1b[0m");
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
