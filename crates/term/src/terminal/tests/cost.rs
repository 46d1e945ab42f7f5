//! What a sequence may cost: counts cut to the screen give the same screen as the emulator
//! running them in full, and no chunk of input costs more than its length and the screen allow.

use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::super::engine::{Engine, row_text};
use super::*;

/// The screen lines, cursor and pending wrap of an emulator fed without any bounding.
fn reference(cols: u16, rows: u16, input: &[u8]) -> (Vec<String>, (u16, u16), bool) {
    let mut engine = Engine::new(cols, rows, 0);
    engine.advance(input);
    engine.settle();
    let lines = (0..i32::from(rows))
        .map(|l| row_text(engine.grid(), l))
        .collect();
    (lines, engine.cursor(), engine.pending_wrap())
}

fn bounded(cols: u16, rows: u16, input: &[u8]) -> (Vec<String>, (u16, u16), bool) {
    let mut term = Terminal::new(TerminalOptions {
        cols,
        rows,
        scrollback: 0,
        answer_queries: false,
    });
    term.feed(input);
    let screen = term.screen();
    let pending = term.engine.pending_wrap();
    (
        screen.lines,
        (screen.cursor.row, screen.cursor.col),
        pending,
    )
}

#[test]
fn bounded_counts_show_what_full_counts_show() {
    let cases: &[&[u8]] = &[
        b"x\x1b[65535b",
        b"ab\x1b[2;3Hx\x1b[1000b",
        "日\x1b[65535b".as_bytes(),
        b"\x1b[4habcdef\x1b[2;3Hx\x1b[5000b",
        b"\x1b[?7lx\x1b[5000b",
        b"\x1b[2;4rx\x1b[4000b",
        b"abc\x1b[2;2H\x1b[65535L",
        b"abc\x1b[65535M\x1b[65535@\x1b[65535P\x1b[65535X",
        b"\x1b[65535;65535H\x1b[65535A\x1b[65535C\x1b[65535e\x1b[65535a",
        b"\x1b[3g\x1b[10G\x1b[65535Z\x1b[65535I",
        b"abc\x1b[65535S\x1b[65535T",
    ];
    for case in cases {
        assert_eq!(
            bounded(12, 5, case),
            reference(12, 5, case),
            "{:?}",
            String::from_utf8_lossy(case)
        );
    }
}

#[test]
fn a_region_past_the_screen_is_ignored_as_xterm_does() {
    // The emulator alone would take `2;3` on two rows as the one-row region 2..2.
    let mut term = terminal(4, 2);
    feed(&mut term, b"\x1b[2;3r\x1b[2;1Ha\r\nb");
    assert_eq!(lines(&mut term), ["a", "b"]);
    assert_eq!(term.snapshot().matches("r").count(), 0);
}

#[test]
fn repeated_marks_pile_up_to_one_row_at_most() {
    // Zero-width characters all land on one cell: a row's worth of them is the bound.
    let (lines, cursor, _) = bounded(12, 5, "e\u{301}\x1b[300b".as_bytes());
    assert_eq!(lines[0], format!("e{}", "\u{301}".repeat(13)));
    assert_eq!(cursor, (0, 1));
}

/// A stream setting up some state (text, wide characters, cursor moves, insert and wrap modes,
/// scroll regions) before a REP.
fn before_repeat() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        "[a-z]{1,5}".prop_map(String::into_bytes),
        Just("日".as_bytes().to_vec()),
        Just("e\u{301}x".as_bytes().to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\x1b[4h".to_vec()),
        Just(b"\x1b[4l".to_vec()),
        Just(b"\x1b[?7l".to_vec()),
        Just(b"\x1b[?7h".to_vec()),
        Just(b"\x1b[2;3r".to_vec()),
        Just(b"\x1b[r".to_vec()),
        (1u8..8, 1u8..14).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn bounded_repeat_matches_the_full_repeat(
        setup in before_repeat(),
        count in 0u32..400,
        cols in 2u16..14,
        // At least 3 rows, so the `2;3` region is one the emulator and xterm both accept.
        rows in 3u16..6,
        after in "[A-Z]{0,3}",
    ) {
        let input = [setup, format!("\x1b[{count}b{after}").into_bytes()].concat();
        prop_assert_eq!(bounded(cols, rows, &input), reference(cols, rows, &input));
    }
}

/// Runs of one character — text and REPs of it, with now and then something else — as a stream.
fn repeat_runs() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => (0u32..400).prop_map(|count| format!("\x1b[{count}b").into_bytes()),
        3 => "x{1,3}".prop_map(String::into_bytes),
        1 => "[a-z]{1,3}".prop_map(String::into_bytes),
        1 => Just(b"\r\n".to_vec()),
        1 => (1u8..8, 1u8..14).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        1 => Just(b"\x1b[1m".to_vec()),
        1 => Just(b"\x1b[4h".to_vec()),
        1 => Just(b"\x1b[4l".to_vec()),
    ];
    prop::collection::vec(piece, 1..16).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn runs_of_repeats_match_the_full_repeats(
        input in repeat_runs(),
        cols in 2u16..14,
        rows in 3u16..6,
    ) {
        let input = [&b"x"[..], &input].concat();
        prop_assert_eq!(bounded(cols, rows, &input), reference(cols, rows, &input));
    }
}

fn time_feed(term: &mut Terminal, input: &[u8]) -> Duration {
    let start = Instant::now();
    term.feed(input);
    term.screen();
    start.elapsed()
}

/// Every count-taking function with its largest count costs about what it costs with a count the
/// size of the screen (a relative bound, so a loaded machine does not make it flaky).
#[test]
fn largest_counts_cost_about_what_small_ones_cost() {
    let amplifiers = [
        "x\x1b[{}b",
        "\x1b[4hx\x1b[{}b\x1b[4l",
        "\x1b[3g\x1b[20G\x1b[{}Z",
        "\x1b[{}I",
        "\x1b[{}L",
        "\x1b[{}M",
        "\x1b[{}S",
        "\x1b[{}T",
        "\x1b[{}@",
        "\x1b[{}P",
        "\x1b[{}X",
        "\x1b[{};{}H",
        "\x1b[{}e",
    ];
    for pattern in amplifiers {
        let stream = |count: &str| pattern.replace("{}", count).repeat(200).into_bytes();
        let mut small = terminal(20, 5);
        let mut large = terminal(20, 5);
        let small_cost = time_feed(&mut small, &stream("100"));
        let large_cost = time_feed(&mut large, &stream("65535"));
        assert!(
            large_cost <= small_cost * 4 + Duration::from_millis(30),
            "{pattern:?}: {large_cost:?} with 65535, {small_cost:?} with 100"
        );
    }
}

/// A REP that fits the screen runs in full, but once a screenful of its character is on the screen
/// more of it costs at most a row per sequence: 100 × `x CSI 65535 b` at 500×200 (65,535 cells
/// each, two thirds of the screen) costs about what the first two cost, not fifty times that.
#[test]
fn repeats_that_fit_the_screen_cost_a_screenful_in_all() {
    let pair = b"x\x1b[65535b";
    let two = time_feed(&mut terminal(500, 200), &pair.repeat(2));
    let hundred = time_feed(&mut terminal(500, 200), &pair.repeat(100));
    assert!(
        hundred <= two * 4 + Duration::from_millis(50),
        "100 pairs took {hundred:?}, 2 took {two:?}"
    );
    // The screen is what the emulator shows after running every count in full.
    let input = pair.repeat(100);
    assert_eq!(bounded(500, 200, &input), reference(500, 200, &input));
}

/// Chunks with every kind of sequence, counts of any size, text and controls.
fn hostile_chunk() -> impl Strategy<Value = Vec<u8>> {
    let finals = b"@ABCDEFGHIJKLMPSTXZ`abdefghlmnqrstu";
    let count = prop_oneof![
        0u32..10,
        0u32..300,
        Just(65535u32),
        any::<u16>().prop_map(u32::from)
    ];
    let csi = (
        prop::sample::select(vec![&b""[..], b"?", b">"]),
        prop::collection::vec(count, 0..3),
        prop::sample::select(finals.to_vec()),
    )
        .prop_map(|(private, counts, final_byte)| {
            let params: Vec<String> = counts.iter().map(u32::to_string).collect();
            let params = params.join(";");
            [b"\x1b[", private, params.as_bytes(), &[final_byte]].concat()
        });
    let piece = prop_oneof![
        4 => csi,
        3 => "[ -~]{1,40}".prop_map(String::into_bytes),
        1 => Just(b"\r\n".to_vec()),
        1 => Just("日本\t".as_bytes().to_vec()),
        1 => Just(b"\x1bH\x1b#8\x1b7\x1b8\x1bc".to_vec()),
        1 => Just(b"\x1b[?1049h\x1b[?1049l\x1b[4h\x1b[?7l".to_vec()),
        1 => Just(b"\x1b]133;A\x07\x1b]0;t\x07".to_vec()),
    ];
    prop::collection::vec(piece, 1..300).prop_map(|p| {
        let mut chunk = p.concat();
        chunk.truncate(4096);
        chunk
    })
}

/// Generous: a 4 KiB chunk of text costs ~20 ms in a debug build, one full-screen operation
/// ~5 ms on 200×50; before counts were bounded single sequences cost 40–700 ms.
const CHUNK_BUDGET: Duration = Duration::from_millis(800);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn no_chunk_costs_more_than_its_length_and_the_screen(chunks in prop::collection::vec(hostile_chunk(), 1..4)) {
        let mut term = terminal(200, 50);
        for chunk in &chunks {
            let cost = time_feed(&mut term, chunk);
            prop_assert!(cost < CHUNK_BUDGET, "{} bytes took {:?}", chunk.len(), cost);
        }
        let _ = term.snapshot();
    }
}

/// Prints the cost of count-heavy streams fed to the bare emulator (as before counts were
/// bounded) and to the terminal: `cargo test -p shellwright-term amplification -- --ignored
/// --nocapture`.
#[test]
#[ignore = "measurement, not a check"]
fn amplification_figures() {
    let streams: [(&str, u16, u16, Vec<u8>); 7] = [
        ("100 × x CSI 65535 b", 500, 200, b"x\x1b[65535b".repeat(100)),
        ("100 × x CSI 65535 b", 200, 50, b"x\x1b[65535b".repeat(100)),
        ("100 × x CSI 65535 b", 80, 24, b"x\x1b[65535b".repeat(100)),
        (
            "IRM, 100 × x CSI 65535 b",
            200,
            50,
            [&b"\x1b[4h"[..], &b"x\x1b[65535b".repeat(100)].concat(),
        ),
        ("500 × CSI 155;82 L", 200, 50, b"\x1b[155;82L".repeat(500)),
        ("500 × CSI 283;176 e", 200, 50, b"\x1b[283;176e".repeat(500)),
        (
            "TBC, 100 × CSI 65535 Z",
            200,
            50,
            [&b"\x1b[3g\x1b[200G"[..], &b"\x1b[65535Z".repeat(100)].concat(),
        ),
    ];
    for (name, cols, rows, input) in streams {
        let start = Instant::now();
        let mut engine = Engine::new(cols, rows, 10_000);
        engine.advance(&input);
        engine.settle();
        let bare = start.elapsed();
        let mut term = Terminal::new(TerminalOptions {
            cols,
            rows,
            ..TerminalOptions::default()
        });
        let bounded = time_feed(&mut term, &input);
        println!(
            "{cols}×{rows} {name} ({} bytes): bare emulator {bare:?}, bounded {bounded:?}",
            input.len()
        );
    }
}

#[test]
fn repeats_found_by_the_property_tests_match_the_full_repeat() {
    // Cases the property tests above once shrank to: insert mode with a wide character, a scroll
    // region set and reset, and REPs that follow each other.
    let cases: &[(&str, u16, u16)] = &[
        ("\x1b[4h\x1b[4;3H日\x1b[r\x1b[33b", 5, 4),
        ("\x1b[4h\x1b[2;3r日\x1b[4;2H\x1b[65b", 6, 4),
        ("x\x1b[29b\x1b[138b", 6, 3),
    ];
    for &(input, cols, rows) in cases {
        assert_eq!(
            bounded(cols, rows, input.as_bytes()),
            reference(cols, rows, input.as_bytes()),
            "{input:?}"
        );
    }
}
