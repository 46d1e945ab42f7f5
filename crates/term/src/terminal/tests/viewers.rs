//! Viewers started from a snapshot at random cuts of a stream full of what xterm.js and this
//! emulator are most likely to disagree on — character sets, DECSC/DECRC, scroll regions, erases,
//! insertions and deletions cutting wide characters, the alternate screen entered with a coloured
//! pen — show the session's screen (text and cursor) after every piece of the stream that follows.
//!
//! This is the attach test's non-xterm workload without the pseudo-terminal. The seeds are ones
//! that found a cause of a viewer drifting from its session:
//! - a wide character half erased (`CSI 1 K`, ECH, DCH, ICH) left a spacer no sequence can paint,
//!   so the snapshot shifted that row by a column (the emulator now blanks both halves, as xterm);
//! - entering the alternate screen fills it with the pen's background, and a wrap at the bottom
//!   scrolls a row in filled with it (BCE), where the session had plain blanks;
//! - a blank row that a wrapping row leads into was skipped, and every row below rose by one;
//! - the cursor DECSC saved keeps a pending wrap, which `ESC 8` brings back.

use super::*;
use crate::testing::{Rng, workload};

const OPTIONS: TerminalOptions = TerminalOptions {
    cols: 60,
    rows: 16,
    scrollback: 1000,
    answer_queries: true,
};

/// Feeds the workload of `seed` to a session in random pieces, starts a viewer from a snapshot at
/// random cuts between whole sequences and characters, and gives every viewer what the session
/// passes on. Returns where a viewer first differs from the session, if one does.
fn first_drift(seed: u64) -> Option<String> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let stream = workload(&mut rng, 1500);
    let mut session = Terminal::new(OPTIONS);
    let mut viewers: Vec<(usize, Terminal)> = Vec::new();
    let (mut at, mut cuts) = (0, 0);
    while at < stream.len() {
        let end = (at + 1 + rng.below(300)).min(stream.len());
        let passed = session.feed(&stream[at..end]).passthrough.to_vec();
        let want = session.screen();
        for (cut, viewer) in &mut viewers {
            viewer.feed(&passed);
            let got = viewer.screen();
            if (&got.lines, got.cursor) != (&want.lines, want.cursor) {
                let rows = got.lines.iter().zip(&want.lines).enumerate();
                let diff: Vec<String> = rows
                    .filter(|(_, (got, want))| got != want)
                    .map(|(row, (got, want))| format!("row {row}: {got:?}, not {want:?}"))
                    .collect();
                return Some(format!(
                    "seed {seed}: viewer {cut} (bytes {at}..{end}) cursor {:?}, not {:?}\n{}",
                    got.cursor,
                    want.cursor,
                    diff.join("\n")
                ));
            }
        }
        at = end;
        if rng.below(6) == 0 {
            let snapshot = session.snapshot();
            if session.open_sequence_len() == 0 && std::str::from_utf8(&passed).is_ok() {
                let mut viewer = Terminal::new(TerminalOptions {
                    answer_queries: false,
                    ..OPTIONS
                });
                viewer.feed(snapshot.as_bytes());
                viewers.push((cuts, viewer));
            }
            cuts += 1;
        }
    }
    None
}

#[test]
fn viewers_started_at_any_cut_show_the_session_screen() {
    let drifts: Vec<String> = [1, 50, 59, 70, 78, 82, 113, 149, 182, 212, 237, 267]
        .into_iter()
        .filter_map(first_drift)
        .collect();
    assert!(drifts.is_empty(), "{}", drifts.join("\n\n"));
}
