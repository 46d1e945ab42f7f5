//! Pipelines whose stages are builtins, compound commands or functions: the stages run at the
//! same time (as bash's processes do), a stage whose reader went away ends, and a cancelled run
//! stops every stage — leaving no thread behind.

mod common;

use std::time::{Duration, Instant};

use common::*;
use shellwright_shell::{PersistentShell, SessionOptions};

/// More than a pipe buffer (64 KiB) of lines, written by a compound first stage.
const BIG_PRODUCER: &str = "for i in {1..8000}; do echo xxxxxxxx; done";

/// Before stages ran concurrently this never returned (and no timeout could stop it); the bound
/// only keeps a regression from hanging the test binary.
const HANG: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compound_stage_that_fills_the_pipe_completes() {
    let command = format!(
        "{BIG_PRODUCER} | while read -r l; do n=$((n+1)); done; echo \"${{PIPESTATUS[*]}} [$n]\""
    );
    let run = once(request(&command), SessionOptions::default());
    let (result, out) = tokio::time::timeout(HANG, run)
        .await
        .expect("the pipeline completes");
    // The consumer ran in a stage's subshell: `n` is not set afterwards, as in bash.
    assert_eq!((result, out.as_str()), (exited(0), "0 0 []\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_and_middle_stages_run_concurrently() {
    let command = format!(
        "p() {{ {BIG_PRODUCER}; }}; \
         p | while read -r l; do echo \"$l\"; done | {{ c=0; while read -r l; do c=$((c+1)); done; echo $c; }}"
    );
    let run = once(request(&command), SessionOptions::default());
    let (result, out) = tokio::time::timeout(HANG, run)
        .await
        .expect("the pipeline completes");
    assert_eq!((result, out.as_str()), (exited(0), "8000\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stages_keep_their_statuses_output_and_subshell_scope() {
    let (result, out) = once(
        request(
            "x=1; { x=2; echo a; exit 3; } | cat; echo \"${PIPESTATUS[*]} $x\"; \
             f() { return 4; }; f | true; echo \"${PIPESTATUS[*]}\"; \
             ( echo err >&2 ) 2>&1 | tr a-z A-Z; \
             set -o pipefail; false | true; echo $?",
        ),
        SessionOptions::default(),
    )
    .await;
    assert_eq!(
        (result, out.as_str()),
        (exited(0), "a\n3 0 1\n4 0\nERR\n1\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stage_reports_its_errors_on_its_stderr() {
    // Worded as stock brush words it (bash: `bash: line 1: no match: *.nomatch`).
    let (result, out) = once(
        request("shopt -s failglob; echo *.nomatch | cat; echo after"),
        SessionOptions::default(),
    )
    .await;
    assert_eq!(
        (result, out.as_str()),
        (exited(0), "error: no match: *.nomatch\nafter\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stage_call_is_not_traced() {
    let (result, out) = once(
        request("set -x; for i in 1; do echo $i; done | cat"),
        SessionOptions::default(),
    )
    .await;
    assert_eq!(result, exited(0));
    assert!(!out.contains("__shellwright"), "{out}");
    // brush traces a pipeline's stages one level deeper than bash (`++`), as stock brush does.
    // The stages run at the same time and brush writes a trace line's prefix, text and newline
    // separately, so the lines of the two stages may come in any order and even interleave:
    // compare the prefixes and the characters of the rest.
    assert_eq!(out.matches("++ ").count(), 3, "{out}");
    let mut rest: Vec<char> = out.replace("++ ", "").replace('\n', "").chars().collect();
    let mut expected: Vec<char> = "for i in 1echo 1cat1".chars().collect();
    rest.sort_unstable();
    expected.sort_unstable();
    assert_eq!(rest, expected, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_builtin_producer_ends_when_its_reader_does() {
    let started = Instant::now();
    let (result, out) = once(
        request("while :; do echo y; done | head -n 2; echo \"${PIPESTATUS[*]}\""),
        SessionOptions::default(),
    )
    .await;
    assert_eq!((result, out.as_str()), (exited(0), "y\ny\n141 0\n"));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persistent_session_reuses_a_stage_run_again() {
    let shell = PersistentShell::new(SessionOptions::default());
    for _ in 0..3 {
        let (result, out) = run(&shell, "for w in a b; do echo $w; done | tr a-z A-Z").await;
        assert_eq!((result, out.as_str()), (exited(0), "A\nB\n"));
    }
}
