//! Tests of `applyBashFixups`: tables of inputs and their rewrites, and properties.

use super::*;
use proptest::prelude::*;

/// (input, rewritten command, stripped pieces in removal order).
const STRIPPED: &[(&str, &str, &[&str])] = &[
    // The documented examples.
    (
        "cargo build 2>&1 | head -50",
        "cargo build",
        &["| head -50", "2>&1"],
    ),
    ("ls | head -n 5", "ls", &["| head -n 5"]),
    ("ls | head -5", "ls", &["| head -5"]),
    ("ls | head --lines=5", "ls", &["| head --lines=5"]),
    ("ls | head -q", "ls", &["| head -q"]),
    ("make 2>&1", "make", &["2>&1"]),
    // Count and flag forms.
    ("ls | head", "ls", &["| head"]),
    ("ls | tail", "ls", &["| tail"]),
    ("ls | head -n5", "ls", &["| head -n5"]),
    ("ls | head --lines 5", "ls", &["| head --lines 5"]),
    ("ls | tail -n 3", "ls", &["| tail -n 3"]),
    ("ls | tail -3", "ls", &["| tail -3"]),
    ("ls | tail -n3", "ls", &["| tail -n3"]),
    ("ls | tail --lines=3", "ls", &["| tail --lines=3"]),
    ("ls | tail -q -n 3", "ls", &["| tail -q -n 3"]),
    ("ls | tail -n 3 -q", "ls", &["| tail -n 3 -q"]),
    ("ls | head --quiet -n 5", "ls", &["| head --quiet -n 5"]),
    ("ls | head --silent", "ls", &["| head --silent"]),
    ("ls | head -n 5 -n 7", "ls", &["| head -n 5 -n 7"]),
    ("ls | head -n 007", "ls", &["| head -n 007"]),
    (
        "ls | head -n 100000000000000000000",
        "ls",
        &["| head -n 100000000000000000000"],
    ),
    // Spacing: only the whitespace before a removed piece goes with it.
    ("ls|head -5", "ls", &["| head -5"]),
    ("ls   |   head    -n   5", "ls", &["| head -n 5"]),
    ("ls\t|\thead -5", "ls", &["| head -5"]),
    ("ls | head -5   ", "ls   ", &["| head -5"]),
    ("ls | head -5\n", "ls\n", &["| head -5"]),
    ("  ls | head -5", "  ls", &["| head -5"]),
    (
        "ls | head -5 # first five",
        "ls # first five",
        &["| head -5"],
    ),
    ("ls | head -5;", "ls;", &["| head -5"]),
    ("ls | head -5 ;", "ls ;", &["| head -5"]),
    ("make 2>&1;", "make;", &["2>&1"]),
    ("make   2>&1  ", "make  ", &["2>&1"]),
    // Pipelines with more stages, `|&`, time.
    (
        "git log --oneline | grep fix | head -20",
        "git log --oneline | grep fix",
        &["| head -20"],
    ),
    ("make |& tail -30", "make", &["|& tail -30"]),
    ("time make | tail -5", "time make", &["| tail -5"]),
    (
        "time -p make 2>&1 | tail -5",
        "time -p make",
        &["| tail -5", "2>&1"],
    ),
    ("time make 2>&1", "time make", &["2>&1"]),
    ("FOO=1 make | head -5", "FOO=1 make", &["| head -5"]),
    (
        "tail -n 100 app.log | grep ERROR | head -5",
        "tail -n 100 app.log | grep ERROR",
        &["| head -5"],
    ),
    (
        "grep -r 'a | b' src | head -5",
        "grep -r 'a | b' src",
        &["| head -5"],
    ),
    (
        "echo \"$(date)\" | head -1",
        "echo \"$(date)\"",
        &["| head -1"],
    ),
    ("cat < in.txt | head -3", "cat < in.txt", &["| head -3"]),
    (
        "./run.sh > out.log | head -3",
        "./run.sh > out.log",
        &["| head -3"],
    ),
    // Lists: only the last pipeline loses its filter; every single command its `2>&1`.
    ("a | head -5; b | tail -3", "a | head -5; b", &["| tail -3"]),
    ("a | head -5;b|tail -3;", "a | head -5;b;", &["| tail -3"]),
    (
        "a 2>&1; b 2>&1 | head -5",
        "a; b",
        &["2>&1", "| head -5", "2>&1"],
    ),
    ("make 2>&1|head -5", "make", &["| head -5", "2>&1"]),
    (
        "a | head -5 && b | tail -3",
        "a | head -5 && b",
        &["| tail -3"],
    ),
    ("a || b | head -5", "a || b", &["| head -5"]),
    ("a 2>&1 && b 2>&1", "a && b", &["2>&1", "2>&1"]),
    (
        "cd src && cargo test 2>&1 | tail -40",
        "cd src && cargo test",
        &["| tail -40", "2>&1"],
    ),
    ("a 2>&1 & b | head -5", "a & b", &["2>&1", "| head -5"]),
    ("! make 2>&1", "! make", &["2>&1"]),
    // Unicode before, inside and after the cut.
    (
        "echo héllo wörld | head -n 1",
        "echo héllo wörld",
        &["| head -n 1"],
    ),
    (
        "echo 日本語 2>&1 | head -2 # ✓",
        "echo 日本語 # ✓",
        &["| head -2", "2>&1"],
    ),
    (
        "echo ok; echo '🦀' | tail -1",
        "echo ok; echo '🦀'",
        &["| tail -1"],
    ),
];

/// Inputs that must come back byte-for-byte with nothing stripped.
const KEPT: &[&str] = &[
    // Following, offsets, negative or zero counts, other flags.
    "tail -f log | head -5",
    "tail -f log | grep x | head -5",
    "tail -Fn 100 log | grep x | head -5",
    "tail -n 100 log | head -5 | tail -2",
    "cat log | tail -f",
    "cat log | tail -F",
    "cat log | tail --follow=name",
    "cat log | tail -fn 5",
    "cat log | tail -n 5 -f",
    "ls | tail -n +2",
    "ls | tail +2",
    "ls | head -n -5",
    "ls | tail -n -5",
    "ls | head -0",
    "ls | head -n 0",
    "ls | head -n 5K",
    "ls | head -c 100",
    "ls | head -v",
    "ls | head -z -n 5",
    "ls | head -5 -q",
    "ls | head -n",
    "ls | head --lines",
    "ls | head -- -5",
    "ls | head -qn5",
    // File operands and redirections on the head/tail.
    "ls | head -5 file.txt",
    "head -5 file.txt",
    "ls | head -5 > out",
    "ls | head -5 2>/dev/null",
    "ls | head -5 2>&1",
    // Not the last stage, or a window of two filters.
    "ls | head -5 | sort",
    "ls | head -20 | tail -5",
    "ls | tail -20 | head -5",
    // Quoted, escaped or substituted text.
    "echo \"| head -5\"",
    "echo '| head -5'",
    "echo $(ls | head -5)",
    "echo `ls | head -5`",
    "diff <(ls | head -5) b",
    "ls | \"head\" -5",
    "ls | head \"-5\"",
    "ls | head -n \"$N\"",
    "ls | head -$N",
    "ls | h\\ead -5",
    "ls | \\head -5",
    // Multi-line input.
    "ls | head -5\necho done",
    "ls \\\n | head -5",
    "cat <<EOF | head -5\nx\nEOF",
    // Redirections that make 2>&1 meaningful, and pipes it feeds.
    "cmd > f 2>&1",
    "cmd 2>&1 > f",
    "cmd >> f 2>&1",
    "cmd 2>err 2>&1",
    "cmd < in 2>&1",
    "cmd 2>&1 | grep x",
    "cmd 2>&1 | head -5 | grep x",
    "cmd 2>& 1",
    "cmd 2 >&1",
    "cmd2>&1",
    "cmd 1>&2",
    "cmd 2>&1 >&2",
    "2>&1",
    "exec 2>/dev/null; cmd 2>&1",
    // Status steers something: `&&`/`||`, `!`, background.
    "make | tail -5 && echo ok",
    "make | tail -5 || echo failed",
    "! grep x f | head -1",
    "make | tail -5 &",
    "echo '🦀' | tail -1; echo ok",
    "make | tail -5; echo $?",
    "set -e; make | tail -5; echo built",
    "make | tail -5 & wait",
    // Compound commands, at top level or as the producer.
    "(ls | head -5)",
    "{ ls | head -5; }",
    "(make 2>&1)",
    "{ make; } 2>&1",
    "(cd src && make) | tail -5",
    "for f in *; do echo $f; done | head -5",
    "while true; do date; done | head -5",
    "if true; then ls | head -5; fi",
    "f() { ls | head -5; }",
    // Producers that may never end.
    "yes | head -5",
    "ping example.com | head -3",
    "kubectl logs -f pod | head -20",
    "journalctl --follow | tail -5",
    "tr -dc a-z < /dev/urandom | head -5",
    "cat /dev/zero | head -5",
    // Unparseable or degenerate.
    "",
    "   ",
    "|",
    "| head -5",
    "ls |",
    "ls | head -5 |",
    "ls && | head -5",
    "echo 'unterminated | head -5",
    "echo $(ls | head -5",
    "ls | head -5 )",
    "# ls | head -5",
    "ls # | head -5",
];

#[test]
fn strips_trailing_filters_and_redundant_stderr_duplication() {
    for &(input, command, stripped) in STRIPPED {
        let expected = Fixups {
            command: command.to_string(),
            stripped: stripped.iter().map(ToString::to_string).collect(),
        };
        assert_eq!(apply_bash_fixups(input), expected, "input: {input:?}");
    }
}

#[test]
fn keeps_anything_that_would_change_meaning() {
    for &input in KEPT {
        let expected = Fixups {
            command: input.to_string(),
            stripped: Vec::new(),
        };
        assert_eq!(apply_bash_fixups(input), expected, "input: {input:?}");
    }
}

#[test]
fn keeps_input_over_the_size_limit() {
    let long = format!("echo {} | head -5", "x".repeat(MAX_INPUT_BYTES));
    assert_eq!(apply_bash_fixups(&long).command, long);
    assert!(apply_bash_fixups(&long).stripped.is_empty());
}

#[test]
fn survives_deep_nesting_at_the_size_limit() {
    let openers = [
        "(",
        "((",
        "( ((",
        "case a in a) ",
        "$(",
        "{ ",
        "\"$(",
        "`",
        "[[ ( ",
        "$((",
        "${",
        "$[",
        "\"${",
        "${a:-",
    ];
    for open in openers {
        let depth = MAX_INPUT_BYTES / open.len();
        let nested = open.repeat(depth);
        let fixups = apply_bash_fixups(&nested);
        assert_eq!(fixups.command, nested, "opener {open:?}");
    }
}

#[test]
fn parses_quickly_at_the_backtracking_limit() {
    let worst = ["(", "((", "( ((", "case a in a) ", "( case a in a) "];
    for open in worst {
        let input = format!("{} ls | head -5", open.repeat(MAX_BACKTRACKING_OPENERS));
        let started = std::time::Instant::now();
        let fixups = apply_bash_fixups(&input);
        assert_eq!(fixups.command, input, "opener {open:?}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "opener {open:?}"
        );
    }
}

#[test]
fn is_idempotent_on_the_stripped_table() {
    for &(input, _, _) in STRIPPED {
        let once = apply_bash_fixups(input).command;
        let twice = apply_bash_fixups(&once);
        assert_eq!(twice.command, once, "input: {input:?}");
        assert!(twice.stripped.is_empty(), "input: {input:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_on_arbitrary_text(input in "\\PC*") {
        let fixups = apply_bash_fixups(&input);
        if fixups.stripped.is_empty() {
            prop_assert_eq!(fixups.command, input);
        } else {
            prop_assert!(fixups.command.len() < input.len());
        }
    }

    #[test]
    fn strips_generated_filters_exactly(
        // Words starting with `x` are never keywords, `exec` or never-ending markers.
        words in proptest::collection::vec("x[a-z0-9._/=-]{0,8}", 0..6),
        filter in "head|tail",
        count in 1u32..100_000,
        form in 0usize..4,
        duplicate_stderr in any::<bool>(),
    ) {
        let producer = std::iter::once("run".to_string()).chain(words).collect::<Vec<_>>();
        let producer = producer.join(" ");
        let args = [format!("-{count}"), format!("-n {count}"), format!("-n{count}"),
            format!("--lines={count}")];
        let removed = format!("| {filter} {}", args[form]);
        let redirect = if duplicate_stderr { " 2>&1" } else { "" };
        let input = format!("{producer}{redirect} {removed}");
        let mut stripped = vec![removed];
        stripped.extend(duplicate_stderr.then(|| "2>&1".to_string()));
        prop_assert_eq!(apply_bash_fixups(&input), Fixups { command: producer, stripped });
    }

    #[test]
    fn never_panics_on_shell_shaped_text(
        input in "([a-z0-9 ]|[|&;<>()'\"$`{}#\\\\\n-]|head|tail|2>&1| -n | -5 ){0,40}"
    ) {
        let fixups = apply_bash_fixups(&input);
        if fixups.stripped.is_empty() {
            prop_assert_eq!(fixups.command, input);
        }
    }
}
