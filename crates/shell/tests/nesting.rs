//! Deep nesting ends a run with a message, never with a crash of the host. A binary of its own:
//! deep recursion holds many of the process's descriptors while it runs.
mod common;

use std::time::{Duration, Instant};

use common::*;
use shellwright_shell::limits::FUNCTION_NESTING_LIMIT;
use shellwright_shell::nesting::PARSER_NESTING_LIMIT;
use shellwright_shell::{PersistentShell, SessionOptions};

// ---- nesting ----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_nested_function_calls_work_like_bash() {
    let _turn = DEEP.lock().await;
    raise_descriptor_limit();
    let shell = PersistentShell::new(SessionOptions::default());
    // Each level holds ~20 descriptors in brush: 1,000 levels need a descriptor limit past
    // 20,000, which CI machines and Node (it raises its soft limit to the hard one) usually have.
    let left = shellwright_shell::limits::descriptors_left().unwrap_or(0);
    let levels = if left > 24_000 { 1_000 } else { 800 };
    let (result, out) = run(
        &shell,
        &format!("f(){{ [ $1 -lt {levels} ] && f $(($1+1)) || echo \"deepest $1 ${{#FUNCNAME[@]}}\"; }}; f 0"),
    )
    .await;
    assert_eq!(result, exited(0));
    assert_eq!(out, format!("deepest {levels} {}\n", levels + 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_recursion_is_refused_and_the_run_goes_on() {
    let _turn = DEEP.lock().await;
    raise_descriptor_limit();
    let shell = PersistentShell::new(SessionOptions::default());
    run(&shell, "kept=1").await.0.expect("runs");
    let (result, out) = run(&shell, "f(){ f; }; f; echo never\necho \"next line $?\"").await;
    let kept = if is_limit_message(&out) {
        // Without descriptors for 1,000 levels, that limit stops the run (and the session) first.
        assert_eq!(result, exited(1));
        "[]\n"
    } else {
        // The call was refused before its function was entered: the line is abandoned, and the
        // run and the session go on.
        assert_eq!(result, exited(0));
        assert_eq!(
            out,
            format!(
                "bash: line 1: f: maximum function nesting level exceeded ({FUNCTION_NESTING_LIMIT})\nnext line 1\n"
            )
        );
        "[1]\n"
    };
    let (result, out) = run(&shell, "echo \"[$kept]\"").await;
    assert_eq!(result, exited(0));
    assert_eq!(out, kept);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn funcnest_lowers_the_limit_as_in_bash() {
    let _turn = DEEP.lock().await;
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, out) = run(
        &shell,
        "FUNCNEST=3; f(){ echo $1; f $(($1+1)); }; f 1; echo never",
    )
    .await;
    assert_eq!(result, exited(1));
    assert_eq!(
        out,
        "1\n2\n3\nbash: line 1: f: maximum function nesting level exceeded (3)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recursion_through_command_substitution_is_bounded_too() {
    let _turn = DEEP.lock().await;
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, out) = run(&shell, "FUNCNEST=50; f(){ echo $(f); }; f; echo after").await;
    // bash prints the message from the innermost subshell and goes on in the outer ones.
    assert!(
        out.contains("bash: line 1: f: maximum function nesting level exceeded (50)\n"),
        "{out:?}"
    );
    assert!(
        matches!(&result, Ok(r) if r.exit_code().is_some()),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_compound_commands_and_substitutions_run() {
    let _turn = DEEP.lock().await;
    raise_descriptor_limit();
    let shell = PersistentShell::new(SessionOptions::default());
    let cases = [
        (nested("if true; then ", "echo if", "; fi", 500), "if\n"),
        (nested("{ ", "echo braces", "; }", 1_000), "braces\n"),
        (nested("( :; ", "echo subshells", " )", 200), "subshells\n"),
        (format!("echo $(( {} ))", nested("(", "1", ")", 140)), "1\n"),
        (format!("echo {}", nested("$(echo ", "x", ")", 158)), "x\n"),
    ];
    for (command, expected) in cases {
        let (result, out) = run(&shell, &command).await;
        assert_eq!(result, exited(0), "{}", &command[..40]);
        assert_eq!(out, expected, "{}", &command[..40]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_nested_past_the_parser_limit_is_a_syntax_error_and_keeps_the_session() {
    let _turn = DEEP.lock().await;
    let shell = PersistentShell::new(SessionOptions::default());
    run(&shell, "kept=1").await.0.expect("runs");
    let deep = nested("{ ", "echo x", "; }", 1_000_000);
    let started = Instant::now();
    let (result, out) = run(&shell, &deep).await;
    assert_eq!(result, exited(2));
    assert_eq!(
        out,
        format!("bash: syntax error: nesting deeper than {PARSER_NESTING_LIMIT} levels\n")
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(run(&shell, "echo $kept").await.1, "1\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_referencing_arithmetic_is_an_error_not_a_crash() {
    let _turn = DEEP.lock().await;
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, out) = run(&shell, "a=a; echo $((a)); echo after").await;
    assert!(
        out.contains("expression recursion level exceeded"),
        "{out:?}"
    );
    assert!(
        matches!(&result, Ok(r) if r.exit_code().is_some_and(|c| c != 0)),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_eval_recursion_stops_before_the_stack_runs_out() {
    let _turn = DEEP.lock().await;
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, out) = run(&shell, "x='eval \"$x\"'; eval \"$x\"").await;
    assert_eq!(result, exited(1));
    assert!(is_limit_message(&out), "{out:?}");
    assert_eq!(run(&shell, "echo ok").await.1, "ok\n");
}
