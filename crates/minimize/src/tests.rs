use super::*;

fn minimizer(options: MinimizerOptions) -> Minimizer {
    Minimizer::new(options).expect("valid options")
}

fn filter_of(command: &str, output: &str) -> Option<String> {
    minimizer(MinimizerOptions::default())
        .minimize(command, output)
        .map(|m| m.filter)
}

const CARGO_OUTPUT: &str = "   Compiling a v0.1.0\n   Compiling b v0.1.0\n   Compiling c v0.1.0\nerror[E0308]: mismatched types\n --> src/main.rs:2:18\n  |\n2 |     let x: u8 = \"a\";\n  |                 ^^^ expected `u8`\n\nerror: could not compile `c` (bin \"c\") due to 1 previous error\n";

#[test]
fn dispatch_picks_the_filter_of_the_producing_program() {
    assert_eq!(
        filter_of("cargo build", CARGO_OUTPUT).as_deref(),
        Some("cargo")
    );
    assert_eq!(
        filter_of(
            "cd x && env RUSTFLAGS=-g cargo check 2>&1 | tee log",
            CARGO_OUTPUT
        )
        .as_deref(),
        Some("cargo")
    );
    assert_eq!(
        filter_of("time cargo clippy", CARGO_OUTPUT).as_deref(),
        Some("cargo")
    );
    let repeated = "tick\n".repeat(30);
    assert_eq!(
        filter_of("./poll.sh", &repeated).as_deref(),
        Some("generic")
    );
    // Programs that print files are never rewritten, nor are unparsable commands' outputs
    // rewritten by anything but the generic fallback.
    assert_eq!(filter_of("cat log.txt", &repeated), None);
    assert_eq!(filter_of("cargo build | grep -v x", &repeated), None);
    assert_eq!(
        filter_of("echo 'unterminated", &repeated).as_deref(),
        Some("generic")
    );
}

#[test]
fn the_result_carries_both_texts_and_byte_counts() {
    let result = minimizer(MinimizerOptions::default())
        .minimize("cargo build", CARGO_OUTPUT)
        .expect("rewritten");
    assert_eq!(
        result.text,
        "[… 3 cargo progress lines omitted]\nerror[E0308]: mismatched types\n --> src/main.rs:2:18\n  |\n2 |     let x: u8 = \"a\";\n  |                 ^^^ expected `u8`\n\nerror: could not compile `c` (bin \"c\") due to 1 previous error\n"
    );
    assert_eq!(result.original_text, CARGO_OUTPUT);
    assert_eq!(result.input_bytes, CARGO_OUTPUT.len());
    assert_eq!(result.output_bytes, result.text.len());
}

#[test]
fn output_that_would_not_shrink_or_is_too_long_is_left_alone() {
    let m = minimizer(MinimizerOptions::default());
    assert_eq!(
        m.minimize("cargo build", "    Finished `dev` profile\n"),
        None
    );
    assert_eq!(m.minimize("cargo build", ""), None);
    let small = minimizer(MinimizerOptions {
        max_capture_bytes: Some(CARGO_OUTPUT.len() - 1),
        ..Default::default()
    });
    assert_eq!(small.minimize("cargo build", CARGO_OUTPUT), None);
    let capture = small.capture();
    capture.push(CARGO_OUTPUT);
    assert_eq!(
        small.minimize_capture("cargo build", Some(101), &capture),
        None
    );
    let capture = m.capture();
    capture.push(CARGO_OUTPUT);
    assert_eq!(
        m.minimize_capture("cargo build", None, &capture),
        None,
        "cancelled runs are kept"
    );
    assert!(
        m.minimize_capture("cargo build", Some(101), &capture)
            .is_some()
    );
}

#[test]
fn only_and_except_name_programs() {
    let only_git = minimizer(MinimizerOptions {
        only: vec!["git".into()],
        ..Default::default()
    });
    assert_eq!(only_git.minimize("cargo build", CARGO_OUTPUT), None);
    let except_cargo = minimizer(MinimizerOptions {
        except: vec!["cargo".into()],
        ..Default::default()
    });
    assert_eq!(
        except_cargo.minimize("sudo cargo build", CARGO_OUTPUT),
        None
    );
    let only_cargo = minimizer(MinimizerOptions {
        only: vec!["cargo".into()],
        ..Default::default()
    });
    assert!(only_cargo.minimize("cargo build", CARGO_OUTPUT).is_some());
}

#[test]
fn a_filter_losing_an_important_line_leaves_the_output_unchanged() {
    let cleaned = "a\nwarning: x\nb\n";
    assert!(keeps_important_lines(
        &Transcript::new(cleaned),
        "warning: x\n"
    ));
    assert!(!keeps_important_lines(&Transcript::new(cleaned), "a\nb\n"));
    assert!(!keeps_important_lines(
        &Transcript::new(cleaned),
        "warning: x (×2)\n"
    ));
}

/// The safety net skips the lines it sees kept in step; every other line is still tested, and
/// a line kept out of order still counts as kept.
#[test]
fn the_safety_net_tests_every_line_it_does_not_see_kept() {
    let cleaned = "a\nerror: one\nb\nc\nd\nerror: two\ne\n";
    let note = "[… 3 similar lines omitted]";
    assert!(keeps_important_lines(
        &Transcript::new(cleaned),
        &format!("a\nerror: one\n{note}\nerror: two\ne\n")
    ));
    assert!(!keeps_important_lines(
        &Transcript::new(cleaned),
        &format!("a\n{note}\ne\n")
    ));
    assert!(!keeps_important_lines(
        &Transcript::new(cleaned),
        &format!("a\nerror: one\n{note}\n{note}\n{note}\ne\n")
    ));
    assert!(keeps_important_lines(
        &Transcript::new(cleaned),
        "error: two\ne\nx\ny\nerror: one\n"
    ));
}

#[test]
fn a_panicking_filter_leaves_the_output_unchanged() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result: Option<String> = unless_it_panics(|| panic!("filter bug"));
    std::panic::set_hook(hook);
    assert_eq!(result, None);
    assert_eq!(unless_it_panics(|| Some(1)), Some(1));
}

#[test]
fn user_rules_win_over_built_in_filters() {
    let dir = std::env::temp_dir().join(format!("sw-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("rules.json");
    std::fs::write(
        &path,
        r#"{ "rules": [ { "name": "quiet-cargo", "match": "^cargo build", "keep": ["^error"],
            "examples": [ { "input": "   Compiling a\nerror: x\n", "expected": "error: x\n" } ] } ] }"#,
    )
    .expect("write rules");
    let m = minimizer(MinimizerOptions {
        filters_path: Some(path.clone()),
        ..Default::default()
    });
    let result = m
        .minimize("cargo build", "   Compiling a v1\nerror: boom\n")
        .expect("rewritten");
    assert_eq!(
        (result.filter.as_str(), result.text.as_str()),
        ("rule:quiet-cargo", "error: boom\n")
    );
    // The rule's output lost the diagnostic's location: the safety net keeps the original.
    assert_eq!(m.minimize("cargo build", CARGO_OUTPUT), None);
    assert_eq!(
        m.minimize("cargo test", CARGO_OUTPUT)
            .map(|r| r.filter)
            .as_deref(),
        Some("cargo")
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}
