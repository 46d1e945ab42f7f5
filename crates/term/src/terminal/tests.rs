//! Tests of the terminal model through its public API.

use super::*;

fn terminal(cols: u16, rows: u16) -> Terminal {
    Terminal::new(TerminalOptions {
        cols,
        rows,
        ..TerminalOptions::default()
    })
}

/// Feeds `input` in one piece; returns (passthrough, replies) as lossy strings.
fn feed(term: &mut Terminal, input: &[u8]) -> (String, String) {
    let fed = term.feed(input);
    (
        String::from_utf8_lossy(&fed.passthrough).into_owned(),
        String::from_utf8_lossy(&fed.replies).into_owned(),
    )
}

fn lines(term: &mut Terminal) -> Vec<String> {
    term.screen().lines
}

#[test]
fn screen_shows_text_cursor_and_title() {
    let mut term = terminal(20, 5);
    feed(&mut term, b"hello   \r\nworld\x1b]2;my title\x07");
    let screen = term.screen();
    assert_eq!(screen.cols, 20);
    assert_eq!(screen.rows, 5);
    assert_eq!(screen.lines, vec!["hello", "world", "", "", ""]);
    assert_eq!(
        screen.cursor,
        CursorState {
            row: 1,
            col: 5,
            visible: true
        }
    );
    assert_eq!(screen.title, "my title");
    assert!(!screen.alt_screen);
    assert_eq!(
        screen.modes,
        TerminalModes {
            application_cursor_keys: false,
            application_keypad: false,
            bracketed_paste: false,
            alt_screen: false,
            mouse_tracking: MouseTracking::None,
            sgr_mouse: false,
            focus_events: false,
            insert: false,
            auto_wrap: true,
        }
    );
    feed(&mut term, b"\x1b[?1h\x1b=\x1b[?2004h\x1b[?1049h\x1b[?1000h\x1b[?1002h\x1b[?1006h\x1b[?1004h\x1b[4h\x1b[?7l");
    assert_eq!(
        term.modes(),
        TerminalModes {
            application_cursor_keys: true,
            application_keypad: true,
            bracketed_paste: true,
            alt_screen: true,
            mouse_tracking: MouseTracking::Drag,
            sgr_mouse: true,
            focus_events: true,
            insert: true,
            auto_wrap: false,
        }
    );
    assert_eq!(term.screen().modes, term.modes());
    feed(&mut term, b"\x1bc");
    feed(&mut term, b"\x1b[?25l");
    assert!(!term.screen().cursor.visible);
}

#[test]
fn sizes_are_clamped() {
    let term = Terminal::new(TerminalOptions {
        cols: 0,
        rows: 0,
        scrollback: usize::MAX,
        answer_queries: true,
    });
    assert_eq!(term.size(), (MIN_COLS, MIN_ROWS));
    let mut term = terminal(5000, 5000);
    assert_eq!(term.size(), (MAX_COLS, MAX_ROWS));
    term.resize(0, 3);
    assert_eq!(term.size(), (MIN_COLS, 3));
    assert_eq!(term.screen().lines.len(), 3);
}

#[test]
fn wide_characters_take_two_cells() {
    let mut term = terminal(10, 3);
    feed(&mut term, "日本語ab\r\n".as_bytes());
    assert_eq!(lines(&mut term)[0], "日本語ab");
    feed(&mut term, "\x1b[2;1Hxx日本語日本".as_bytes());
    // 2 + 6 columns, then 日 and 本 do not fit: 日 fills columns 9-10 and 本 wraps.
    assert_eq!(lines(&mut term)[1], "xx日本語日");
    assert_eq!(lines(&mut term)[2], "本");
}

#[test]
fn a_wide_character_cut_in_two_leaves_two_blanks() {
    // As xterm: erasing, inserting or deleting cells through half of a wide character blanks the
    // other half too, rather than leaving a half no sequence can paint again.
    let cases = [
        // Erase to the left, ending on 日's first half.
        ("日本語", "\x1b[1;1H\x1b[1K", "  本語"),
        // Erase 本's second half.
        ("日本語", "\x1b[1;4H\x1b[X", "日  語"),
        // Delete 日's first half.
        ("日本語", "\x1b[1;1H\x1b[P", " 本語"),
        // Insert a blank: the last 日 is pushed to the edge without its second half.
        ("ab日本語日", "\x1b[1;1H\x1b[@", " ab日本語"),
    ];
    for (text, cut, want) in cases {
        let mut term = terminal(10, 2);
        feed(&mut term, format!("{text}{cut}").as_bytes());
        assert_eq!(lines(&mut term)[0], want, "{cut:?}");
    }
}

#[test]
fn alternate_screen_keeps_primary_and_scrollback() {
    let mut term = terminal(10, 3);
    feed(&mut term, b"one\r\ntwo\r\nthree\r\nfour");
    assert_eq!(term.scrollback_lines(), vec!["one"]);
    feed(&mut term, b"\x1b[?1049h\x1b[Hvim");
    let screen = term.screen();
    assert!(screen.alt_screen);
    assert_eq!(screen.lines, vec!["vim", "", ""]);
    assert_eq!(term.scrollback_lines(), vec!["one"]);
    // Reading the primary screen did not disturb the alternate one.
    assert_eq!(term.screen(), screen);
    feed(&mut term, b"!\x1b[?1049l");
    assert_eq!(lines(&mut term), vec!["two", "three", "four"]);
    assert_eq!(
        term.screen().cursor,
        CursorState {
            row: 2,
            col: 4,
            visible: true
        }
    );
}

#[test]
fn scroll_regions_and_scrollback_ring() {
    let mut term = terminal(10, 4);
    feed(&mut term, b"a\r\nb\r\nc\r\nd\x1b[2;3r\x1b[3;1H\nX\x1b[r");
    assert_eq!(lines(&mut term), vec!["a", "c", "X", "d"]);
    assert!(term.scrollback_lines().is_empty());
    let mut term = Terminal::new(TerminalOptions {
        cols: 10,
        rows: 2,
        scrollback: 3,
        answer_queries: true,
    });
    for i in 0..10 {
        feed(&mut term, format!("{i}\r\n").as_bytes());
    }
    assert_eq!(term.scrollback_lines(), vec!["6", "7", "8"]);
    assert_eq!(lines(&mut term), vec!["9", ""]);
}

#[test]
fn sgr_colours_are_accepted() {
    let mut term = terminal(30, 2);
    feed(
        &mut term,
        b"\x1b[1;38;5;200mA\x1b[38;2;1;2;3;48;2;4;5;6mB\x1b[0mC",
    );
    assert_eq!(lines(&mut term)[0], "ABC");
    let snapshot = term.snapshot();
    assert!(snapshot.contains("\x1b[0;1;38;5;200mA"), "{snapshot:?}");
    assert!(
        snapshot.contains("\x1b[0;1;38;2;1;2;3;48;2;4;5;6mB"),
        "{snapshot:?}"
    );
}

/// (query, reply) for every query the responder answers, asked after `a` on a 80×24 terminal whose cursor
/// was put at row 3, column 5, with bracketed paste on (so CPR reports column 6).
const QUERIES: &[(&str, &str)] = &[
    ("\x1b[c", "\x1b[?62;22c"),
    ("\x1b[0c", "\x1b[?62;22c"),
    ("\x1b[>c", "\x1b[>1;10;0c"),
    ("\x1b[>0c", "\x1b[>1;10;0c"),
    ("\x1b[=c", "\x1bP!|00000000\x1b\\"),
    ("\x1b[5n", "\x1b[0n"),
    ("\x1b[6n", "\x1b[3;6R"),
    ("\x1b[?6n", "\x1b[?3;6;1R"),
    ("\x1b[>0q", "\x1bP>|shellwright(0.1.0)\x1b\\"),
    ("\x1b[>q", "\x1bP>|shellwright(0.1.0)\x1b\\"),
    ("\x1b[?2004$p", "\x1b[?2004;1$y"),
    ("\x1b[?1$p", "\x1b[?1;2$y"),
    ("\x1b[?25$p", "\x1b[?25;1$y"),
    ("\x1b[?1049$p", "\x1b[?1049;2$y"),
    ("\x1b[?1000$p", "\x1b[?1000;2$y"),
    ("\x1b[?9999$p", "\x1b[?9999;0$y"),
    ("\x1b[4$p", "\x1b[4;2$y"),
    ("\x1b[?u", "\x1b[?0u"),
    ("\x1b]10;?\x07", "\x1b]10;rgb:e5e5/e5e5/e5e5\x07"),
    ("\x1b]11;?\x1b\\", "\x1b]11;rgb:0000/0000/0000\x1b\\"),
    ("\x1b]12;?\x07", "\x1b]12;rgb:e5e5/e5e5/e5e5\x07"),
    (
        "\x1b]10;?;?\x07",
        "\x1b]10;rgb:e5e5/e5e5/e5e5\x07\x1b]11;rgb:0000/0000/0000\x07",
    ),
    ("\x1bP+q544e\x1b\\", "\x1bP0+r544e\x1b\\"),
    ("\x1bP$qm\x1b\\", "\x1bP0$r\x1b\\"),
    ("\x1b[18t", "\x1b[8;24;80t"),
];

fn query_terminal(answer_queries: bool) -> Terminal {
    let mut term = Terminal::new(TerminalOptions {
        answer_queries,
        ..TerminalOptions::default()
    });
    term.feed(b"\x1b[?2004h\x1b[3;5H");
    term
}

#[test]
fn every_query_is_answered_and_cut_from_the_stream() {
    for (query, reply) in QUERIES {
        let mut term = query_terminal(true);
        let input = format!("a{query}b");
        let (passthrough, replies) = feed(&mut term, input.as_bytes());
        assert_eq!(replies, *reply, "query {query:?}");
        assert_eq!(passthrough, "ab", "query {query:?}");
    }
}

#[test]
fn without_answer_queries_everything_passes() {
    for (query, _) in QUERIES {
        let mut term = query_terminal(false);
        let input = format!("a{query}b");
        let fed = term.feed(input.as_bytes());
        assert!(
            matches!(fed.passthrough, Cow::Borrowed(_)),
            "query {query:?}"
        );
        assert_eq!(fed.passthrough.as_ref(), input.as_bytes());
        assert!(fed.replies.is_empty(), "query {query:?}");
    }
}

#[test]
fn plain_output_is_passed_without_copying() {
    let mut term = terminal(80, 24);
    let input = b"\x1b[1mbold\x1b[0m text\r\n\x1b]133;A\x07$ ";
    let fed = term.feed(input);
    assert!(matches!(fed.passthrough, Cow::Borrowed(_)));
    assert_eq!(fed.passthrough.as_ref(), input);
}

#[test]
fn replies_reflect_the_state_at_the_query() {
    let mut term = terminal(80, 24);
    let (passthrough, replies) = feed(
        &mut term,
        b"\x1b[6n\x1b[5;10H\x1b[6nxy\x1b[6n\x1b[?1h\x1b[?1$p\x1b[?1l\x1b[?1$p",
    );
    assert_eq!(
        replies,
        "\x1b[1;1R\x1b[5;10R\x1b[5;12R\x1b[?1;1$y\x1b[?1;2$y"
    );
    assert_eq!(passthrough, "\x1b[5;10Hxy\x1b[?1h\x1b[?1l");
    // Origin mode reports positions relative to the scroll region.
    let (_, replies) = feed(&mut term, b"\x1b[5;20r\x1b[?6h\x1b[2;3H\x1b[6n");
    assert_eq!(replies, "\x1b[2;3R");
    // The window size follows resizes.
    term.resize(100, 30);
    assert_eq!(feed(&mut term, b"\x1b[18t").1, "\x1b[8;30;100t");
    // Colours set by the program are reported back.
    assert_eq!(
        feed(&mut term, b"\x1b]11;rgb:12/34/56\x07\x1b]11;?\x07").1,
        "\x1b]11;rgb:1212/3434/5656\x07"
    );
}

#[test]
fn secondary_attributes_never_mistaken_for_primary() {
    let mut term = terminal(80, 24);
    assert_eq!(feed(&mut term, b"\x1b[>c").1, "\x1b[>1;10;0c");
    assert_eq!(feed(&mut term, b"\x1b[>").1, "");
    assert_eq!(feed(&mut term, b"c").1, "\x1b[>1;10;0c");
    // Unknown CSI c variants are not answered and pass through.
    assert_eq!(
        feed(&mut term, b"\x1b[1c"),
        ("\x1b[1c".to_string(), String::new())
    );
}

/// A stream with text, colours, queries, marks and a title, to be split at every byte boundary.
const SESSION: &[u8] = b"\x1b]7;file://host/tmp\x07\x1b]133;A;aid=1\x07user$ \x1b]133;B\x07ls\r\n\x1b]133;C\x07\x1b[31ma\x1b[0m\x1b[6n\r\nb\xc3\xa9\r\n\x1b]11;?\x1b\\\x1b]133;D;0;aid=1\x07\x1b]2;t\x1b\\\x1b]133;A\x07user$ \x1b]133;B\x07\x1b[>c\x1bP+q544e\x1b\\\x1b[?2004$p";

#[derive(Debug, PartialEq)]
struct Outcome {
    passthrough: Vec<u8>,
    replies: Vec<u8>,
    screen: TerminalScreen,
    commands: Vec<(String, String, Option<i32>, Option<String>)>,
    prompt: bool,
}

fn run_chunks(chunks: &[&[u8]]) -> Outcome {
    let mut term = terminal(40, 6);
    let mut passthrough = Vec::new();
    let mut replies = Vec::new();
    for chunk in chunks {
        let fed = term.feed(chunk);
        passthrough.extend_from_slice(&fed.passthrough);
        replies.extend_from_slice(&fed.replies);
    }
    let commands = term
        .commands()
        .into_iter()
        .map(|c| (c.command, c.output, c.exit_code, c.cwd))
        .collect();
    Outcome {
        passthrough,
        replies,
        screen: term.screen(),
        commands,
        prompt: term.prompt_showing(),
    }
}

#[test]
fn session_in_one_piece() {
    let outcome = run_chunks(&[SESSION]);
    assert_eq!(
        String::from_utf8_lossy(&outcome.replies),
        "\x1b[2;2R\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[>1;10;0c\x1bP0+r544e\x1b\\\x1b[?2004;2$y"
    );
    assert_eq!(
        outcome.commands,
        vec![(
            "ls".to_string(),
            "a\nbé".to_string(),
            Some(0),
            Some("/tmp".to_string())
        )]
    );
    assert_eq!(
        outcome.screen.lines[..5],
        ["user$ ls", "a", "bé", "user$", ""]
    );
    assert_eq!(outcome.screen.title, "t");
    assert!(outcome.prompt);
}

#[test]
fn session_split_at_every_byte_boundary() {
    let whole = run_chunks(&[SESSION]);
    for split in 1..SESSION.len() {
        let (a, b) = SESSION.split_at(split);
        assert_eq!(run_chunks(&[a, b]), whole, "split at {split}");
    }
    let bytes: Vec<&[u8]> = SESSION.chunks(1).collect();
    assert_eq!(run_chunks(&bytes), whole);
}

#[test]
fn held_sequences_are_bounded() {
    let mut term = terminal(80, 24);
    let (passthrough, _) = feed(&mut term, b"x\x1b]11;");
    assert_eq!(passthrough, "x");
    let filler = vec![b'a'; HOLD_LIMIT];
    let (passthrough, _) = feed(&mut term, &filler);
    // Past the limit the held bytes are released and the sequence is no longer a candidate.
    assert_eq!(passthrough.len(), 5 + HOLD_LIMIT);
    assert!(passthrough.starts_with("\x1b]11;aaa"));
    let (passthrough, replies) = feed(&mut term, b"\x07z");
    assert_eq!((passthrough.as_str(), replies.as_str()), ("\x07z", ""));
    // Sequences that cannot be queries are never held.
    assert_eq!(feed(&mut term, b"\x1b]0;tit").0, "\x1b]0;tit");
    assert_eq!(feed(&mut term, b"\x1b]133;A").0, "\x1b]133;A");
    assert_eq!(feed(&mut term, b"\x07").0, "\x07");
}

#[test]
fn cancelled_held_sequence_is_released_in_order() {
    let mut term = terminal(80, 24);
    assert_eq!(
        feed(&mut term, b"a\x1b[6"),
        ("a".to_string(), String::new())
    );
    assert_eq!(
        feed(&mut term, b"\x18b"),
        ("\x1b[6\x18b".to_string(), String::new())
    );
    assert_eq!(feed(&mut term, b"\x1b[1"), (String::new(), String::new()));
    assert_eq!(
        feed(&mut term, b"mX"),
        ("\x1b[1mX".to_string(), String::new())
    );
    assert_eq!(lines(&mut term)[0], "abX");
}

fn round_trip(term: &mut Terminal) {
    let snapshot = term.snapshot();
    let (cols, rows) = term.size();
    let mut copy = terminal(cols, rows);
    let fed = copy.feed(snapshot.as_bytes());
    assert!(fed.replies.is_empty());
    assert_eq!(copy.screen(), term.screen(), "snapshot {snapshot:?}");
    assert_eq!(copy.scrollback_lines(), term.scrollback_lines());
    // The copy's own snapshot is the same string: attributes and modes survived too.
    assert_eq!(copy.snapshot(), snapshot);
}

#[test]
fn snapshot_round_trips() {
    let cases: &[&[u8]] = &[
        b"",
        b"plain\r\ntext",
        b"\x1b[1;3;4;38;5;100;48;2;9;8;7mstyled\x1b[0m  \x1b[7minverse\x1b[0m\r\n\x1b[41m   \x1b[0m<red blanks",
        "wide 日本語 and e\u{301} combining\r\n".as_bytes(),
        b"0123456789012345678901234567890123456789wrapped-line\r\nnext",
        b"\x1b[?1h\x1b=\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?25l\x1b]2;title here\x07\x1b[3;7H",
        b"\x1b[5;10r\x1b[?6h\x1b[2;2Hin region",
        b"\x1b[?7l\x1b[4h\x1b[32mpen stays green",
    ];
    for case in cases {
        let mut term = terminal(40, 12);
        term.feed(case);
        round_trip(&mut term);
    }
}

/// The snapshot carries what later bytes depend on: a stream continued after it in a copy gives
/// the same screen as in the original.
#[test]
fn snapshot_carries_the_saved_cursor_and_character_sets() {
    let cases: &[(&[u8], &[u8])] = &[
        // DECSC with a pen and line drawing; DECRC after the cut.
        (
            b"\x1b[3;5H\x1b[31m\x1b(0\x1b7\x1b(B\x1b[m\x1b[1;1Hab",
            b"\x1b8qq x",
        ),
        // Line drawing designated when the cut falls.
        (b"\x1b(0lqk", b"x\x1b(Bq"),
        (b"\x1b)0text", b"\x0eq\x0fq"),
        // The primary cursor's pen and charset, saved by CSI ? 1049 h, come back on leaving.
        (
            b"\x1b[2;3H\x1b[32m\x1b(0\x1b[?1049h\x1b(B\x1b[mfull screen",
            b"\x1b[?1049lqq",
        ),
    ];
    for (before, after) in cases {
        let mut term = terminal(20, 6);
        term.feed(before);
        let mut copy = terminal(20, 6);
        copy.feed(term.snapshot().as_bytes());
        term.feed(after);
        copy.feed(after);
        assert_eq!(copy.screen(), term.screen(), "{before:?} then {after:?}");
        round_trip(&mut term);
    }
}

#[test]
fn snapshot_round_trips_scrollback_and_alternate_screen() {
    let mut term = terminal(30, 8);
    for i in 0..200 {
        term.feed(format!("\x1b[3{}mline {i}\x1b[0m {}\r\n", i % 8, "x".repeat(i % 50)).as_bytes());
    }
    // Each line takes ceil(len / 30) rows; one empty row follows the last; 8 rows stay on screen.
    let rows: usize = (0..200)
        .map(|i| (format!("line {i} ").len() + i % 50).div_ceil(30))
        .sum();
    assert_eq!(term.scrollback_lines().len(), rows + 1 - 8);
    round_trip(&mut term);
    term.feed(b"\x1b[?1049h\x1b[2J\x1b[Hfull screen app\x1b[5;5Hhere");
    round_trip(&mut term);
    term.feed(b"\x1b[?1049l");
    round_trip(&mut term);
}

#[test]
fn commands_from_osc_633_and_unfinished_marks() {
    let mut term = terminal(80, 24);
    term.feed(b"\x1b]633;P;Cwd=/home/me\x07\x1b]633;A\x07$ \x1b]633;B\x07");
    assert!(term.prompt_showing());
    assert!(term.shell_integration());
    term.feed(b"echo hi\r\n\x1b]633;E;echo hi\\x3b true\x07\x1b]633;C\x07hi\r\n");
    assert!(!term.prompt_showing());
    assert_eq!(term.completed_commands(), 0);
    // A new prompt without D closes the command with an unknown exit code.
    term.feed(b"\x1b]633;A\x07$ ");
    let record = term
        .last_command()
        .cloned()
        .unwrap_or_else(|| panic!("no record"));
    assert_eq!(
        (
            record.command.as_str(),
            record.output.as_str(),
            record.exit_code,
            record.cwd.as_deref()
        ),
        ("echo hi; true", "hi", None, Some("/home/me"))
    );
    assert_eq!(term.completed_commands(), 1);
}

#[test]
fn commands_from_prompt_fallback() {
    let mut term = terminal(40, 10);
    term.feed(b"welcome\r\nuser@host:~$ ");
    assert!(term.prompt_showing());
    term.feed(b"l");
    assert!(!term.prompt_showing());
    term.feed(b"s -1\r\n");
    term.feed(b"a.txt\r\nb.txt\r\nuser@host:~$ ");
    assert!(term.prompt_showing());
    // Enter on an empty prompt makes no record.
    term.feed(b"\r\nuser@host:~$ ");
    term.feed(b"false\r\nuser@host:~$ ");
    let commands: Vec<(String, String, Option<i32>)> = term
        .commands()
        .into_iter()
        .map(|c| (c.command, c.output, c.exit_code))
        .collect();
    assert_eq!(
        commands,
        vec![
            ("ls -1".to_string(), "a.txt\nb.txt".to_string(), None),
            ("false".to_string(), String::new(), None)
        ]
    );
    assert!(!term.shell_integration());
}

#[test]
fn osc_marks_pass_through_to_viewers() {
    let mut term = terminal(80, 24);
    let input = b"\x1b]133;A\x07\x1b]133;B\x07\x1b]633;E;x\x07\x1b]133;C\x07\x1b]133;D;1\x07";
    assert_eq!(term.feed(input).passthrough.as_ref(), input);
    assert_eq!(term.commands().len(), 1);
    assert_eq!(term.commands()[0].exit_code, Some(1));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn interesting_bytes() -> impl Strategy<Value = Vec<u8>> {
        // Bias towards escape-sequence material so the fuzzer reaches deep states.
        let pieces = prop_oneof![
            any::<u8>().prop_map(|b| vec![b]),
            Just(b"\x1b[".to_vec()),
            Just(b"\x1b]".to_vec()),
            Just(b"\x1bP".to_vec()),
            Just(b"\x1b\\".to_vec()),
            Just(b"133;".to_vec()),
            Just(b"?6n".to_vec()),
            Just(b"\x07".to_vec()),
            Just(b"\x1b[?1049h".to_vec()),
            Just(b"\r\n".to_vec()),
            Just("日".as_bytes().to_vec()),
        ];
        prop::collection::vec(pieces, 0..200).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..2000), split in any::<prop::sample::Index>(), answer in any::<bool>(), alternate in any::<bool>()) {
            let mut term = Terminal::new(TerminalOptions { cols: 20, rows: 5, scrollback: 50, answer_queries: answer });
            // The same bytes on the alternate screen, whose grid and cursor are its own.
            if alternate {
                let _ = term.feed(b"\x1b[?1049h");
            }
            let at = split.index(data.len() + 1);
            let _ = term.feed(&data[..at]);
            term.resize(7, 3);
            let _ = term.feed(&data[at..]);
            let _ = term.screen();
            let _ = term.snapshot();
            let _ = term.commands();
        }

        #[test]
        fn sequences_never_panic_and_passthrough_is_complete_without_answers(data in interesting_bytes(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..5)) {
            let mut answering = Terminal::new(TerminalOptions { cols: 30, rows: 6, scrollback: 20, answer_queries: true });
            let mut silent = Terminal::new(TerminalOptions { cols: 30, rows: 6, scrollback: 20, answer_queries: false });
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
            points.push(0);
            points.push(data.len());
            points.sort_unstable();
            let mut passed = Vec::new();
            for pair in points.windows(2) {
                let chunk = &data[pair[0]..pair[1]];
                let _ = answering.feed(chunk);
                let fed = silent.feed(chunk);
                prop_assert!(fed.replies.is_empty());
                passed.extend_from_slice(&fed.passthrough);
            }
            prop_assert_eq!(passed, data);
            let _ = answering.snapshot();
            let _ = silent.snapshot();
        }

        /// Through `check` and `feed_checked`, as the PTY reader feeds.
        #[test]
        fn what_passes_unchanged_is_passed_on_as_it_is(data in interesting_bytes(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..5)) {
            let mut term = Terminal::new(TerminalOptions { cols: 30, rows: 6, scrollback: 20, answer_queries: true });
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
            points.push(0);
            points.push(data.len());
            points.sort_unstable();
            for pair in points.windows(2) {
                let chunk = &data[pair[0]..pair[1]];
                let checked = term.check(chunk);
                let unchanged = checked.passes_unchanged();
                let fed = term.feed_checked(checked);
                if unchanged {
                    prop_assert_eq!(fed.passthrough.as_ref(), chunk);
                    prop_assert!(fed.replies.is_empty());
                }
            }
        }
    }
}

#[test]
fn plain_text_passes_unchanged_but_not_a_sequence_or_the_rest_of_an_open_one() {
    let mut term = terminal(20, 3);
    assert!(term.check(b"ping 0\r\n").passes_unchanged());
    assert!(term.check("café\u{9b}".as_bytes()).passes_unchanged());
    assert!(!term.check(b"a\x1b[6n").passes_unchanged());
    let fed = term.feed(b"x\x1b[");
    assert_eq!(fed.passthrough.as_ref(), b"x");
    // The rest of the held-back query: it is answered and cut out, not passed on.
    assert!(!term.check(b"6n").passes_unchanged());
    let fed = term.feed(b"6n");
    assert_eq!(
        (fed.passthrough.as_ref(), fed.replies.as_slice()),
        (&b""[..], &b"\x1b[1;2R"[..])
    );
    assert!(term.check(b"ok").passes_unchanged());
}

#[test]
fn utf8_split_across_feeds() {
    let mut term = terminal(20, 3);
    let bytes = "café 日本".as_bytes();
    for split in 1..bytes.len() {
        let mut term2 = terminal(20, 3);
        term2.feed(&bytes[..split]);
        term2.feed(&bytes[split..]);
        assert_eq!(lines(&mut term2)[0], "café 日本", "split at {split}");
    }
    term.feed(bytes);
    assert_eq!(lines(&mut term)[0], "café 日本");
}

#[test]
fn flush_releases_a_held_tail_at_end_of_input() {
    let mut term = terminal(80, 24);
    assert_eq!(
        feed(&mut term, b"x\x1b[?6"),
        ("x".to_string(), String::new())
    );
    assert_eq!(term.flush(), b"\x1b[?6");
    assert!(term.flush().is_empty());
    // The sequence now continues as passed-through bytes and is no longer answered or cut.
    assert_eq!(
        feed(&mut term, b"n"),
        ("n".to_string(), "\x1b[?1;2;1R".to_string())
    );
}

/// A control string ends at the next ESC, as the emulator's parser ends it, wherever that ESC
/// falls: a query after a PM left unterminated (what a terminal's echo of `^[[1;1R` right after
/// an ESC makes) is answered, the string still ends there once the query is cut out, and a viewer
/// cut inside the next sequence resumes from that sequence only.
#[test]
fn an_escape_ends_a_control_string_as_the_emulator_does() {
    let mut term = terminal(20, 4);
    assert_eq!(
        feed(&mut term, b"a\x1b^[[1;1R[6nb\x1b[6nc"),
        (
            "a\x1b^[[1;1R[6nb\x1b\\c".to_string(),
            "\x1b[1;2R".to_string()
        )
    );
    // Cut out, the query's ESC still ends the string (ST in its place): "c" shows.
    assert_eq!(lines(&mut term)[0], "ac");
    // The string was passed on; the escape that ends it starts in the next feed.
    assert_eq!(
        feed(&mut term, b"\x1b]0;tit\x1b"),
        ("\x1b]0;tit\x1b".to_string(), String::new())
    );
    assert_eq!(
        feed(&mut term, b"]2;le"),
        ("]2;le".to_string(), String::new())
    );
    assert_eq!(term.open_sequence_len(), 6);
    assert_eq!(
        feed(&mut term, b"\x07"),
        ("\x07".to_string(), String::new())
    );
    assert_eq!(term.screen().title, "le");
    // A query held back with the ESC that ends it, then a query begun by that ESC: both are
    // answered and cut, each from its own bytes.
    assert_eq!(
        feed(&mut term, b"d\x1b]11;?\x1b"),
        ("d".to_string(), String::new())
    );
    let (passed, replies) = feed(&mut term, b"[6ne");
    assert_eq!(passed, "e");
    assert!(replies.starts_with("\x1b]11;rgb:"), "{replies:?}");
    assert!(replies.ends_with("\x1b\\\x1b[1;4R"), "{replies:?}");
    assert_eq!(lines(&mut term)[0], "acde");
}

/// Everything a viewer can observe about a terminal.
fn observe(term: &mut Terminal) -> (TerminalScreen, Vec<String>, String) {
    (term.screen(), term.scrollback_lines(), term.snapshot())
}

/// Feeds `chunks` twice: once as a program would (plain text deferred and trimmed), once parsing
/// every byte as it comes; both must end identical.
fn assert_deferral_is_invisible(cols: u16, rows: u16, scrollback: usize, chunks: &[Vec<u8>]) {
    let options = TerminalOptions {
        cols,
        rows,
        scrollback,
        answer_queries: true,
    };
    let mut lazy = Terminal::new(options);
    let mut eager = Terminal::new(options);
    eager.parse_every_byte();
    for chunk in chunks {
        lazy.feed(chunk);
        eager.feed(chunk);
    }
    assert_eq!(observe(&mut lazy), observe(&mut eager));
    assert_eq!(lazy.prompt_showing(), eager.prompt_showing());
}

fn numbered_lines(count: usize, width: usize, ending: &str) -> Vec<u8> {
    (0..count)
        .map(|i| format!("{i:0width$}{ending}"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn deferred_plain_text_matches_parsing_every_byte() {
    let mut chunks = vec![b"\x1b[1;31mred start\x1b[0m partial".to_vec()];
    // Long enough to be trimmed many times over; some lines wrap, some overwrite with CR.
    chunks.push(numbered_lines(500, 7, "\r\n"));
    chunks.push(numbered_lines(300, 33, "\r\n"));
    chunks.push(b"abcdef\rXY\r\n".repeat(200));
    chunks.push(b"no carriage return\nnext\n".repeat(100));
    chunks.push(numbered_lines(400, 5, "\r\n"));
    chunks.push(b"$ ".to_vec());
    assert_deferral_is_invisible(20, 5, 30, &chunks);
    assert_deferral_is_invisible(20, 5, 0, &chunks);
}

#[test]
fn plain_text_after_modes_that_forbid_deferral_matches() {
    let cases: [&[u8]; 4] = [
        b"\x1b[2;4r",   // scroll region
        b"\x1b[?1049h", // alternate screen
        b"\x1b[4h",     // insert mode
        b"\x1b[20h",    // newline mode
    ];
    for setup in cases {
        let chunks = vec![
            setup.to_vec(),
            numbered_lines(300, 6, "\r\n"),
            b"tail".to_vec(),
        ];
        assert_deferral_is_invisible(20, 6, 25, &chunks);
    }
}

#[test]
fn queries_after_deferred_text_see_the_real_cursor() {
    let mut term = terminal(20, 5);
    term.feed(&numbered_lines(100, 3, "\r\n"));
    term.feed(b"ab");
    let (_, replies) = feed(&mut term, b"\x1b[6n");
    assert_eq!(replies, "\x1b[5;3R");
}

proptest::proptest! {
    #[test]
    fn deferral_never_shows(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                "[a-z ]{0,30}\r\n",
                "[a-z]{0,45}\n",
                "[a-z]{0,10}\r",
                proptest::strategy::Just("\x1b[7m".to_string()),
                proptest::strategy::Just("\x1b[0m".to_string()),
                proptest::strategy::Just("\x1b[2;3r".to_string()),
                proptest::strategy::Just("\x1b[r".to_string()),
                proptest::strategy::Just("\x1b[?1049h".to_string()),
                proptest::strategy::Just("\x1b[?1049l".to_string()),
                proptest::strategy::Just("é".to_string()),
            ],
            0..120,
        ),
        cut in 1usize..64,
    ) {
        let stream: Vec<u8> = pieces.concat().into_bytes();
        let chunks: Vec<Vec<u8>> = stream.chunks(cut).map(<[u8]>::to_vec).collect();
        assert_deferral_is_invisible(12, 4, 8, &chunks);
    }
}

#[test]
fn raw_mode_text_without_carriage_returns_matches_and_stays_bounded() {
    // Bare line feeds keep the column: the output staircases, and no prefix may be dropped.
    let mut chunks: Vec<Vec<u8>> = (0..40).map(|_| numbered_lines(50, 7, "\n")).collect();
    chunks.push(b"$ ".to_vec());
    assert_deferral_is_invisible(20, 5, 30, &chunks);

    let mut term = Terminal::new(TerminalOptions {
        cols: 20,
        rows: 5,
        scrollback: 30,
        answer_queries: true,
    });
    for chunk in &chunks {
        term.feed(chunk);
        assert!(
            term.deferred_bytes() <= 4 * 1024,
            "backlog {} bytes",
            term.deferred_bytes()
        );
    }
}

/// 20×5 with 30 lines of scrollback: small enough that the backlog is cut often.
fn small_terminal() -> Terminal {
    Terminal::new(TerminalOptions {
        cols: 20,
        rows: 5,
        scrollback: 30,
        answer_queries: true,
    })
}

#[test]
fn raw_mode_text_is_dropped_unparsed_at_the_right_column() {
    // Lines of every length against the width: exact fits (pending wrap), wraps, and rows that
    // start mid-way because a bare line feed keeps the column.
    let widths = [3usize, 19, 20, 21, 39, 40, 41, 7];
    let text: Vec<u8> = (0..600)
        .flat_map(|i| {
            let mut line = vec![b'a' + (i % 26) as u8; widths[i % widths.len()]];
            line.push(b'\n');
            line
        })
        .collect();
    for setup in [&b""[..], b"\x1b[?7l", b"12345678901234567890", b"abc\r"] {
        let chunks = vec![setup.to_vec(), text.clone(), b"$ ".to_vec()];
        assert_deferral_is_invisible(20, 5, 30, &chunks);
    }

    // And nothing of it is parsed before the screen is read: the backlog keeps only what shows.
    let mut term = small_terminal();
    term.feed(&text);
    let kept_lines = term.engine.deferred_line_feeds();
    assert!(
        kept_lines > 0 && kept_lines <= 2 * (30 + 2 * 5 + 1),
        "{kept_lines}"
    );
}

#[test]
fn a_sequence_split_before_its_final_byte_is_finished_before_text_is_deferred() {
    // "CSI ? 7" may be a query (DECRQM), so it is held back; "l" arrives with text after it. The
    // parser is mid-sequence then: the text must not be deferred, nor dropped with its "l".
    for ending in ["\n", "\r\n"] {
        let lines = numbered_lines(200, 30, ending);
        let chunks = vec![
            b"start".to_vec(),
            b"\x1b[?7".to_vec(),
            [&b"l"[..], &lines].concat(),
            b"$ ".to_vec(),
        ];
        assert_deferral_is_invisible(20, 5, 30, &chunks);
        let mut term = small_terminal();
        for chunk in &chunks {
            term.feed(chunk);
        }
        assert!(!term.screen().modes.auto_wrap);
    }

    // A control string split across reads: text in the read after its end is deferred again.
    let chunks = vec![
        b"\x1b]0;tit".to_vec(),
        b"le\x07".to_vec(),
        // 190 lines of 7 leave the cursor short of pending wrap, so the prompt check needs no parse.
        numbered_lines(190, 7, "\n"),
    ];
    assert_deferral_is_invisible(20, 5, 30, &chunks);
    let mut term = small_terminal();
    for chunk in &chunks {
        term.feed(chunk);
    }
    assert!(
        term.deferred_bytes() > 0,
        "text after the string was not deferred"
    );
    assert_eq!(term.screen().title, "title");
}

#[test]
fn an_echoed_line_stays_deferred_and_the_prompt_check_agrees() {
    let mut term = terminal(40, 10);
    term.feed(b"ping 0\r\n");
    assert!(
        term.deferred_bytes() > 0,
        "the echoed line was parsed for the prompt check"
    );
    assert!(!term.prompt_showing());
    term.feed(b"user@host:~$ ");
    assert!(term.prompt_showing());
    let chunks: Vec<Vec<u8>> = [
        &b"user@host:~$ "[..],
        b"ls\r\n",
        b"a.txt\r\n",
        b"user@host:~$ ",
        b"\r",
        b"$ \r\n",
        b"x\r\n$ ",
        b"abc\n$ ",
        b"\r\n",
    ]
    .iter()
    .map(|chunk| chunk.to_vec())
    .collect();
    for end in 1..=chunks.len() {
        assert_deferral_is_invisible(20, 5, 30, &chunks[..end]);
    }
}

/// Letters, then a bare line feed, a CR, a prompt, nothing, or a change of auto-wrap or pen.
fn raw_piece(letters: usize, ending: u8) -> Vec<u8> {
    let mut piece: Vec<u8> = (b'a'..=b'z').cycle().take(letters).collect();
    // Mostly line feeds: a mode or pen change parses the backlog, and a cut needs many lines.
    let ending: &[u8] = match ending {
        0 => b"\x1b[?7l",
        1 => b"\x1b[?7h",
        2 => b"\x1b[7m",
        3..=5 => b"\r",
        6..=8 => b"$ ",
        9..=12 => b"",
        _ => b"\n",
    };
    piece.extend_from_slice(ending);
    piece
}

proptest::proptest! {
    #[test]
    fn raw_mode_deferral_never_shows(
        pieces in proptest::collection::vec((0usize..30, 0u8..64), 0..200),
        cut in 1usize..64,
    ) {
        let stream: Vec<u8> = pieces
            .iter()
            .flat_map(|&(letters, ending)| raw_piece(letters, ending))
            .collect();
        let chunks: Vec<Vec<u8>> = stream.chunks(cut).map(<[u8]>::to_vec).collect();
        assert_deferral_is_invisible(12, 4, 3, &chunks);
    }
}

#[test]
fn prompt_after_bare_line_feed_is_judged_from_the_real_cursor() {
    // "abc\n$ " leaves "$ " at column 3, after "abc"'s column; the prompt check must see that.
    let chunks = vec![numbered_lines(60, 4, "\r\n"), b"abc\n$ ".to_vec()];
    assert_deferral_is_invisible(20, 5, 10, &chunks);
}

/// A full-screen redraw on the alternate screen, as top does it: home, rows of coloured text.
fn redraw(frame: usize) -> Vec<u8> {
    let mut screen = String::from("\x1b[H\x1b[2J");
    for row in 1..=5 {
        screen.push_str(&format!(
            "\x1b[{row};1H\x1b[3{}mframe {frame} row {row}\x1b[0m",
            row % 8
        ));
    }
    screen.into_bytes()
}

#[test]
fn alternate_screen_drawing_is_dropped_unseen_when_left() {
    let mut chunks = vec![b"before\r\n\x1b[?1049h\x1b[?25l".to_vec()];
    chunks.extend((0..50).map(redraw));
    chunks.push(b"\x1b[?25h\x1b[?1049l\x1b[2bafter".to_vec());
    assert_deferral_is_invisible(20, 5, 30, &chunks);

    let mut term = small_terminal();
    for chunk in &chunks[..chunks.len() - 1] {
        term.feed(chunk);
    }
    assert!(term.deferred_bytes() > 0, "drawing was parsed");
    assert!(term.modes().alt_screen);
    let last = chunks.last().map_or(&[][..], Vec::as_slice);
    term.feed(last);
    assert_eq!(term.deferred_bytes(), 0);
    // REP after the leave repeats the last character drawn on the alternate screen.
    assert_eq!(term.screen().lines[1], "55after");
}

#[test]
fn alternate_screen_drawing_read_before_the_leave_shows() {
    let mut term = small_terminal();
    term.feed(b"\x1b[?1049h");
    term.feed(&redraw(7));
    assert_eq!(term.screen().lines[4], "frame 7 row 5");
    let (_, replies) = feed(&mut term, b"\x1b[6n");
    assert_eq!(replies, "\x1b[5;14R");
}

#[test]
fn a_look_at_the_alternate_screen_stops_deferring_until_it_is_left() {
    let mut term = small_terminal();
    term.feed(b"\x1b[?1049h");
    term.feed(&redraw(1));
    assert!(term.deferred_bytes() > 0);
    assert_eq!(term.screen().lines[0], "frame 1 row 1");
    term.feed(&redraw(2));
    assert_eq!(term.deferred_bytes(), 0, "drawing deferred after a look");
    term.feed(b"\x1b[?1049l\x1b[?1049h");
    term.feed(&redraw(3));
    assert!(
        term.deferred_bytes() > 0,
        "drawing not deferred on a new visit"
    );
    assert_eq!(term.screen().lines[0], "frame 3 row 1");
}

#[test]
fn alternate_screen_drawing_stays_bounded() {
    let mut term = small_terminal();
    term.feed(b"\x1b[?1049h");
    for frame in 0..10_000 {
        term.feed(&redraw(frame));
        assert!(term.deferred_bytes() <= (1 << 20) + 256);
    }
    assert_eq!(term.screen().lines[0], "frame 9999 row 1");
}

mod cost;
mod fidelity;
mod looks;
mod seams;
mod viewers;
