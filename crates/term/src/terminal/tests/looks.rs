//! What a viewer reads beyond the text: bells, styled runs, the rows that changed, and snapshots
//! that leave most of the scrollback out.

use super::*;

fn bells(term: &mut Terminal) -> u64 {
    term.screen().bells
}

#[test]
fn a_bel_rings_but_one_that_ends_an_osc_does_not() {
    let mut term = terminal(20, 4);
    term.feed(b"a\x07b\x1b]2;title\x07c");
    assert_eq!(bells(&mut term), 1);
    // Split: the BEL that ends the string comes in a later feed.
    term.feed(b"\x1b]0;ti");
    term.feed(b"tle\x07\x07");
    assert_eq!(bells(&mut term), 2);
    // Executed inside a control sequence, as the parser does; a DCS or APC string swallows it.
    term.feed(b"\x1b[1\x07m\x1bPq\x07\x1b\\\x1b_x\x07\x1b\\");
    assert_eq!(bells(&mut term), 3);
    // Plain text around it is still deferred and shown.
    term.feed(b"\r\nline\x07\r\n");
    assert_eq!(bells(&mut term), 4);
    assert_eq!(term.screen().lines[1], "line");
}

#[test]
fn bells_on_the_alternate_screen_count_even_when_its_drawing_is_dropped() {
    let mut term = terminal(20, 4);
    term.feed(b"\x1b[?1049h\x1b[Hdrawing\x07more drawing\x1b[2;1H\x07\x1b[?1049l");
    assert_eq!(bells(&mut term), 2);
    let chunks = [
        b"\x1b[?1049h".to_vec(),
        b"\x1b[Hframe\x07\x1b[31mred\x07".to_vec(),
        b"\x1b[2;3Hx\x1b[?1049l after".to_vec(),
    ];
    assert_deferral_is_invisible(20, 4, 10, &chunks);
}

#[test]
fn bells_count_from_the_start_and_survive_a_reset() {
    let mut term = terminal(20, 4);
    term.feed(b"\x07\x07\x1bc\x07");
    assert_eq!(bells(&mut term), 3);
    assert_eq!(terminal(20, 4).screen().bells, 0);
}

fn plain(text: &str) -> StyledRun {
    StyledRun {
        text: text.to_string(),
        style: Style::default(),
    }
}

fn run(text: &str, style: Style) -> StyledRun {
    StyledRun {
        text: text.to_string(),
        style,
    }
}

#[test]
fn styled_lines_split_rows_where_the_look_changes() {
    let mut term = terminal(30, 6);
    term.feed(b"ok \x1b[1;31merror\x1b[0m done\r\n");
    term.feed(b"\x1b[38;5;200;48;2;1;2;3mx\x1b[39;49;2;3;4:3;9my\x1b[0m\r\n");
    term.feed(b"\x1b[7m > item  \x1b[0m\r\n");
    term.feed(b"\x1b[44m\x1b[K\x1b[0m\r\n");
    term.feed("日本 e\u{301}\x1b[92mZ\x1b[31m \x1b[0m".as_bytes());
    let red = Style {
        fg: Some(RunColor::Palette(1)),
        bold: true,
        ..Style::default()
    };
    let blue_bar = Style {
        bg: Some(RunColor::Palette(4)),
        ..Style::default()
    };
    let lines = term.styled_lines();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0], [plain("ok "), run("error", red), plain(" done")]);
    assert_eq!(
        lines[1],
        [
            run(
                "x",
                Style {
                    fg: Some(RunColor::Palette(200)),
                    bg: Some(RunColor::Rgb(1, 2, 3)),
                    ..Style::default()
                }
            ),
            run(
                "y",
                Style {
                    dim: true,
                    italic: true,
                    underline: true,
                    strikethrough: true,
                    ..Style::default()
                }
            ),
        ]
    );
    // Reverse video reaches its last blank: the highlight shows there.
    let inverse = Style {
        inverse: true,
        ..Style::default()
    };
    assert_eq!(lines[2], [run(" > item  ", inverse)]);
    assert_eq!(lines[3], [run(&" ".repeat(30), blue_bar)]);
    // A wide character is one character; the mark stays on its base; a coloured blank at the
    // end shows nothing and is left out.
    let bright_green = Style {
        fg: Some(RunColor::Palette(10)),
        ..Style::default()
    };
    assert_eq!(lines[4], [plain("日本 e\u{301}"), run("Z", bright_green)]);
    assert_eq!(lines[5], []);
}

#[test]
fn styled_lines_read_the_alternate_screen_and_deferred_text() {
    let mut term = terminal(20, 3);
    term.feed(b"\x1b[?1049h\x1b[2;3H\x1b[7mmenu\x1b[m");
    let lines = term.styled_lines();
    assert_eq!(lines[0], []);
    assert_eq!(
        lines[1],
        [
            plain("  "),
            run(
                "menu",
                Style {
                    inverse: true,
                    ..Style::default()
                }
            )
        ]
    );
    term.feed(b"\x1b[?1049l");
    for i in 0..100 {
        term.feed(format!("line {i}\r\n").as_bytes());
    }
    assert_eq!(term.styled_lines()[1], [plain("line 99")]);
}

#[test]
fn changed_rows_reports_exactly_what_changed_since_the_last_call() {
    let mut term = terminal(20, 4);
    assert_eq!(term.changed_rows(), [0, 1, 2, 3]);
    assert_eq!(term.changed_rows(), [] as [u16; 0]);
    term.feed(b"\x1b[3;1Hthird");
    assert_eq!(term.changed_rows(), [2]);
    // The same text in another colour is a change; written again the same, it is none.
    term.feed(b"\x1b[3;1H\x1b[32mthird\x1b[0m");
    assert_eq!(term.changed_rows(), [2]);
    term.feed(b"\x1b[3;1H\x1b[32mthird\x1b[0m");
    assert_eq!(term.changed_rows(), [] as [u16; 0]);
    // Changed and changed back between two calls: nothing to redraw.
    term.feed(b"\x1b[1;1Hx\x1b[1;1H\x1b[K");
    assert_eq!(term.changed_rows(), [] as [u16; 0]);
    // A colour set on blanks past the text shows nothing.
    term.feed(b"\x1b[4;1H\x1b[31m   \x1b[0m");
    assert_eq!(term.changed_rows(), [] as [u16; 0]);
    // Scrolling changes the rows whose content moved, not the blank ones that stay blank.
    term.feed(b"\x1b[4;1Hlast\r\n");
    assert_eq!(term.changed_rows(), [1, 2]);
    term.feed(b"\x1b[?1049h");
    assert_eq!(term.changed_rows(), [1, 2]);
    term.feed(b"\x1b[?1049l");
    assert_eq!(term.changed_rows(), [1, 2]);
    // Two more rows: the row that scrolled off comes back from the scrollback at the top, so
    // the rows below it move down, and the new rows count as changed.
    term.resize(20, 6);
    assert_eq!(lines(&mut term), ["", "", "third", "last", "", ""]);
    assert_eq!(term.changed_rows(), [1, 2, 3, 4, 5]);
}

#[test]
fn changed_rows_matches_a_comparison_of_styled_lines() {
    let mut term = terminal(80, 16);
    let mut rng = crate::testing::Rng(0x5eed);
    let mut before = term.styled_lines();
    term.changed_rows();
    for step in 0..200 {
        term.feed(&crate::testing::workload(&mut rng, 20));
        let now = term.styled_lines();
        let expected: Vec<u16> = (0..now.len())
            .filter(|&row| before.get(row) != Some(&now[row]))
            .map(|row| row as u16)
            .collect();
        assert_eq!(term.changed_rows(), expected, "step {step}");
        before = now;
    }
}

#[test]
fn styled_runs_joined_are_the_row_text_up_to_blanks_that_show() {
    let mut rng = crate::testing::Rng(7);
    let mut term = terminal(80, 16);
    for _ in 0..100 {
        term.feed(&crate::testing::workload(&mut rng, 20));
        let lines = term.screen().lines;
        for (row, runs) in term.styled_lines().iter().enumerate() {
            let joined: String = runs.iter().map(|run| run.text.as_str()).collect();
            assert_eq!(joined.trim_end_matches(' '), lines[row]);
            assert!(runs.windows(2).all(|pair| pair[0].style != pair[1].style));
        }
    }
}

fn numbered(term: &mut Terminal, count: usize) {
    for i in 0..count {
        term.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
    }
}

#[test]
fn a_snapshot_with_less_scrollback_repaints_the_same_screen() {
    let mut term = terminal(20, 5);
    numbered(&mut term, 100);
    term.feed(b"\x1b]2;t\x07\x1b[?2004h\x1b[1mbold pen");
    let all = term.scrollback_lines();
    assert_eq!(term.snapshot_with_scrollback(usize::MAX), term.snapshot());
    for keep in [0, 1, 10, 95, 96, 1000] {
        let snapshot = term.snapshot_with_scrollback(keep);
        let mut copy = terminal(20, 5);
        copy.feed(snapshot.as_bytes());
        assert_eq!(copy.screen(), term.screen(), "keeping {keep}");
        let kept = keep.min(all.len());
        assert_eq!(
            copy.scrollback_lines(),
            all[all.len() - kept..],
            "keeping {keep}"
        );
    }
    // The same on the alternate screen: the primary's scrollback is cut, the screen is whole.
    term.feed(b"\x1b[?1049h\x1b[3;3Hfull screen");
    let mut copy = terminal(20, 5);
    copy.feed(term.snapshot_with_scrollback(3).as_bytes());
    assert_eq!(copy.screen(), term.screen());
    assert_eq!(copy.scrollback_lines(), all[all.len() - 3..]);
}

#[test]
fn a_screen_only_snapshot_stays_small_whatever_the_scrollback() {
    let mut term = Terminal::new(TerminalOptions {
        cols: 120,
        rows: 40,
        ..TerminalOptions::default()
    });
    for i in 0..20_000 {
        term.feed(format!("{i} {}\r\n", "x".repeat(60)).as_bytes());
    }
    let full = term.snapshot().len();
    let screen = term.snapshot_with_scrollback(0).len();
    assert!(full > 600_000, "{full}");
    assert!(screen < 4_000, "{screen}");
}
