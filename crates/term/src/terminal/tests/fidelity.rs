//! Where the terminal must behave as real xterm does: tabs on screen and in snapshots, leaving
//! the alternate screen twice, and the pending wrap and the alternate screen's saved cursor
//! carried by a snapshot.

use super::*;

/// Replays `term`'s snapshot into a fresh terminal of the same size.
fn replay(term: &mut Terminal) -> Terminal {
    let (cols, rows) = term.size();
    let mut copy = terminal(cols, rows);
    copy.feed(term.snapshot().as_bytes());
    copy
}

#[test]
fn tabs_show_as_blanks_and_round_trip() {
    let mut term = terminal(40, 4);
    feed(&mut term, b"a\tb\r\nname\tsize\tdate\r\n\t\tx");
    assert_eq!(
        lines(&mut term),
        ["a       b", "name    size    date", "                x", ""]
    );
    let mut copy = replay(&mut term);
    assert_eq!(copy.screen(), term.screen());
    assert_eq!(copy.snapshot(), term.snapshot());
    assert!(!term.snapshot().contains('\t'));
}

#[test]
fn tab_stops_set_by_the_program_survive_a_snapshot() {
    let mut term = terminal(40, 4);
    // Clear every stop, set stops at columns 5 and 13 (1-based), then clear the one at 13.
    feed(
        &mut term,
        b"\x1b[3g\x1b[5G\x1bH\x1b[13G\x1bH\x1b[20G\x1bH\x1b[20G\x1b[g\r",
    );
    feed(&mut term, b"\tA\tB\tC");
    // No stop after column 13: the last tab goes to the last column.
    let want = format!("{}A{}B{}C", " ".repeat(4), " ".repeat(7), " ".repeat(26));
    assert_eq!(lines(&mut term)[0], want);
    let mut copy = replay(&mut term);
    assert_eq!(copy.screen(), term.screen());
    for t in [&mut term, &mut copy] {
        feed(t, b"\r\n\tx\ty");
    }
    assert_eq!(lines(&mut copy)[1], "    x       y");
    assert_eq!(copy.screen(), term.screen());
    // Back to the default stops (DECST8C): nothing extra in the snapshot.
    feed(&mut term, b"\x1b[?5W");
    assert!(!term.snapshot().contains("\x1b[3g"));
    feed(&mut term, b"\x1b[3g\x1bc");
    assert!(!term.snapshot().contains("\x1b[3g"));
}

#[test]
fn tab_stops_follow_a_resize_as_the_emulator_does() {
    let mut term = terminal(20, 3);
    feed(&mut term, b"\x1b[3g\x1b[3G\x1bH\r");
    term.resize(30, 3);
    feed(&mut term, b"\tA\tB");
    // The stop at column 3 stays; the new columns 20..30 get the default stop at 24.
    assert_eq!(lines(&mut term)[0], "  A                     B");
    let mut copy = replay(&mut term);
    for t in [&mut term, &mut copy] {
        feed(t, b"\r\n\tx\ty");
    }
    assert_eq!(copy.screen(), term.screen());
}

#[test]
fn leaving_the_alternate_screen_twice_restores_the_saved_cursor() {
    let mut term = terminal(20, 6);
    feed(
        &mut term,
        b"\x1b[?1049h\x1b[?1049l\x1b[4;1Hprompt\x1b[?1049l",
    );
    let screen = term.screen();
    assert_eq!((screen.cursor.row, screen.cursor.col), (0, 0));
    assert_eq!(screen.lines[3], "prompt");
    assert!(!screen.alt_screen);
    // DECSC then a stray ?1049l: back to the saved position, as DECRC would.
    let mut term = terminal(20, 6);
    feed(&mut term, b"\x1b[3;5H\x1b7\x1b[6;1Hx\x1b[?1049l");
    let cursor = term.screen().cursor;
    assert_eq!((cursor.row, cursor.col), (2, 4));
    // Split across feeds, and with the query hold: the same.
    let mut term = terminal(20, 6);
    feed(&mut term, b"\x1b[3;5H\x1b7\x1b[6;1Hx\x1b[?10");
    feed(&mut term, b"49l");
    let cursor = term.screen().cursor;
    assert_eq!((cursor.row, cursor.col), (2, 4));
    // Viewers get the sequence as sent, nothing added.
    let mut term = terminal(20, 6);
    assert_eq!(feed(&mut term, b"ab\x1b[?1049l").0, "ab\x1b[?1049l");
}

#[test]
fn snapshot_keeps_the_pending_wrap() {
    let cases: &[&[u8]] = &[
        b"0123456789",
        b"\x1b[1;31m0123456789",
        "01234567日".as_bytes(),
        b"\x1b[3;1Habcdefghij",
        b"\x1b[?7l0123456789abc",
    ];
    for case in cases {
        let mut term = terminal(10, 4);
        term.feed(case);
        let mut copy = replay(&mut term);
        assert_eq!(
            copy.screen(),
            term.screen(),
            "{:?}",
            String::from_utf8_lossy(case)
        );
        assert_eq!(copy.snapshot(), term.snapshot());
        for t in [&mut term, &mut copy] {
            feed(t, b"Z");
        }
        assert_eq!(
            copy.screen(),
            term.screen(),
            "{:?}",
            String::from_utf8_lossy(case)
        );
    }
    let mut term = terminal(10, 4);
    feed(&mut term, b"0123456789");
    let mut copy = replay(&mut term);
    feed(&mut copy, b"Z");
    assert_eq!(lines(&mut copy)[..2], ["0123456789", "Z"]);
    let cursor = copy.screen().cursor;
    assert_eq!((cursor.row, cursor.col), (1, 1));
}

/// The cursor saved on the alternate screen outlives the visit (entering resets that screen's
/// cells, not its saved cursor): a viewer started from a snapshot taken on the primary screen
/// restores it on the next visit as the terminal does.
#[test]
fn the_alternate_screens_saved_cursor_survives_a_snapshot_of_the_primary() {
    let mut term = terminal(20, 4);
    feed(
        &mut term,
        b"top\x1b[?1049h\x1b[3;5H\x1b[1m\x1b7\x1b[?1049l\x1b[0m",
    );
    let mut copy = replay(&mut term);
    assert_eq!(copy.screen(), term.screen());
    for t in [&mut term, &mut copy] {
        feed(t, b"\x1b[?1049h\x1b8x");
    }
    assert_eq!(lines(&mut term)[2], "    x");
    assert_eq!(copy.screen(), term.screen());
    assert_eq!(copy.snapshot(), term.snapshot());
}
