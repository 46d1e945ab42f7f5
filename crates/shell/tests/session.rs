//! The session runtime driven from Rust, without Node.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shellwright_proc::{CancelToken, Outcome};
use shellwright_shell::{HistoryLimits, PersistentShell, RunRequest, SessionOptions, ShellError};

async fn run(shell: &PersistentShell, command: &str) -> (Result<Outcome, ShellError>, String) {
    run_with(
        shell,
        RunRequest {
            command: command.into(),
            ..Default::default()
        },
    )
    .await
}

async fn run_with(
    shell: &PersistentShell,
    request: RunRequest,
) -> (Result<Outcome, ShellError>, String) {
    let out = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&out);
    let result = shell
        .run(
            request,
            Box::new(move |c| sink.lock().expect("lock").push_str(&c)),
        )
        .await
        .map(|r| r.outcome);
    let text = out.lock().expect("lock").clone();
    (result, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_and_env_is_scoped_to_one_run() {
    let shell = PersistentShell::new(SessionOptions {
        session_env: vec![("FROM_SESSION".into(), "s".into())],
        snapshot_path: None,
    });
    let request = RunRequest {
        command: "f() { echo \"f $1\"; }; v=1; echo \"$ONCE $FROM_SESSION\"".into(),
        env: vec![("ONCE".into(), "o".into())],
        ..Default::default()
    };
    let (result, out) = run_with(&shell, request).await;
    assert_eq!(result, Ok(Outcome::Exited(0)));
    assert_eq!(out, "o s\n");
    let (_, out) = run(&shell, "f $v; echo \"[$ONCE]\"").await;
    assert_eq!(out, "f 1\n[]\n");
}

/// `shopt` is ours (bash's column padding) wrapped by the hooks (the user's functrace, not the one
/// they force on): this fails when the builtins are installed in the wrong order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shopt_shows_the_users_functrace_with_bash_padding() {
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, out) = run(&shell, "shopt -o functrace; set -T; shopt -o functrace").await;
    assert_eq!(result.map(|r| r.exit_code()), Ok(Some(0)));
    assert_eq!(out, "functrace      \toff\nfunctrace      \ton\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_stops_a_builtin_loop_and_keeps_the_session_without_its_frames() {
    let shell = PersistentShell::new(SessionOptions::default());
    run(&shell, "kept=1; cd /tmp").await.0.expect("runs");
    let started = Instant::now();
    let request = RunRequest {
        command: "spin() { local inside=1; while :; do :; done; }; changed=2; spin".into(),
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let (result, _) = run_with(&shell, request).await;
    assert_eq!(result, Ok(Outcome::TimedOut));
    assert!(started.elapsed() < Duration::from_secs(2));
    // What the stopped run changed stays; its function frame and local scope are gone.
    let (result, out) = run(
        &shell,
        "echo \"[$kept $changed ${inside-unset} ${#FUNCNAME[@]}]\"; pwd; local x 2>/dev/null || echo not-in-a-function",
    )
    .await;
    assert_eq!(result, Ok(Outcome::Exited(0)));
    assert_eq!(out, "[1 2 unset 0]\n/tmp\nnot-in-a-function\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_are_listed_as_written_and_a_stopped_runs_jobs_are_forgotten() {
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, out) = run(&shell, "sleep 30 & sleep 31 && true & jobs").await;
    assert_eq!(result, Ok(Outcome::Exited(0)));
    assert_eq!(
        out,
        "[1]-  Running                 sleep 30 &\n[2]+  Running                 sleep 31 && true &\n"
    );
    let request = RunRequest {
        command: "sleep 30 & sleep 32 & sleep 5".into(),
        timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    assert_eq!(run_with(&shell, request).await.0, Ok(Outcome::TimedOut));
    let (result, out) = run(&shell, "jobs").await;
    assert_eq!(result, Ok(Outcome::Exited(0)));
    assert_eq!(
        out,
        "[1]-  Running                 sleep 30 &\n[2]+  Running                 sleep 31 && true &\n"
    );
    shell.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_output_before_the_run_goes_on_comes_first_and_is_never_lost() {
    let shell = PersistentShell::new(SessionOptions::default());
    // A job of a builtin and one of a process, each waited for: their output comes before what
    // the run writes next, every time.
    for round in 0..30 {
        let (result, out) = run(&shell, "(echo a) & wait %1; /bin/echo b & wait; echo c").await;
        assert_eq!(
            (result, out.as_str()),
            (Ok(Outcome::Exited(0)), "a\nb\nc\n"),
            "round {round}"
        );
    }
    // A job that ended before its run did: all of its output is the run's, none the job's.
    let (result, out) = run(&shell, "seq 1 20000 & sleep 0.5").await;
    assert_eq!(result, Ok(Outcome::Exited(0)));
    assert_eq!(out.lines().count(), 20000);
    let job = shell.jobs().into_iter().last().expect("the seq job");
    assert_eq!((job.output.as_str(), job.truncated_bytes), ("", 0));
    shell.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_already_cancelled_token_runs_nothing() {
    let shell = PersistentShell::new(SessionOptions::default());
    let cancel = CancelToken::new();
    cancel.cancel(shellwright_proc::CancelReason::Aborted);
    let (result, out) = run_with(
        &shell,
        RunRequest {
            command: "echo ran".into(),
            cancel,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(result, Ok(Outcome::Cancelled));
    assert_eq!(out, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_sees_their_own_debug_trap_and_functrace() {
    let shell = PersistentShell::new(SessionOptions::default());
    let (_, out) = run(
        &shell,
        "trap -p DEBUG; echo \"[$(set -o | grep functrace)]\"",
    )
    .await;
    assert_eq!(out, "[functrace      \toff]\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_their_design_prefix() {
    let shell = PersistentShell::new(SessionOptions::default());
    let request = RunRequest {
        command: "pwd".into(),
        cwd: Some("/definitely/missing".into()),
        ..Default::default()
    };
    let (result, _) = run_with(&shell, request).await;
    assert!(
        matches!(result, Err(ShellError::Cwd(ref m)) if m.starts_with("/definitely/missing")),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_recorded_where_they_ran_and_mirrored_live() {
    use shellwright_shell::Mirror;
    let shell = PersistentShell::with_history_limits(
        SessionOptions::default(),
        HistoryLimits {
            entries: 2,
            ..HistoryLimits::default()
        },
    );
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&seen);
    let (mut mirror, opening) = Mirror::open(
        &shell,
        1000,
        Box::new(move |data| sink.lock().expect("lock").push_str(&data)),
    );
    assert_eq!(
        opening,
        format!(
            "\x1b]633;P;Cwd={}\x07\x1b]633;P;HasRichCommandDetection=True\x07\x1b]633;A\x07$ \x1b]633;B\x07",
            std::env::current_dir().expect("cwd").display()
        )
    );
    let request = RunRequest {
        command: "echo one; cd /".into(),
        cwd: Some("/tmp".into()),
        ..Default::default()
    };
    let _ = run_with(&shell, request).await;
    let _ = run(&shell, "echo two >&2; false").await;
    let _ = run(&shell, "echo three").await;
    mirror.close();
    let _ = run(&shell, "echo unseen").await;

    let entries = shell.history_entries();
    let summary: Vec<_> = entries
        .iter()
        .map(|e| {
            let code = e.outcome.and_then(Outcome::exit_code);
            (
                e.id,
                e.command.as_str(),
                e.cwd.to_str(),
                e.output.as_str(),
                code,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (3, "echo three", Some("/"), "three\n", Some(0)),
            (4, "echo unseen", Some("/"), "unseen\n", Some(0)),
        ]
    );
    let seen = seen.lock().expect("lock").clone();
    for expected in [
        "\x1b]633;P;Cwd=/tmp\x07\x1b]633;E;echo one\\x3b cd /\x07echo one; cd /\r\n\x1b]633;C\x07one\r\n\x1b]633;D;0\x07",
        "\x1b]633;P;Cwd=/\x07\x1b]633;E;echo two >&2\\x3b false\x07echo two >&2; false\r\n\x1b]633;C\x07two\r\n\x1b]633;D;1\x07",
        "three\r\n\x1b]633;D;0\x07\x1b]633;A\x07$ \x1b]633;B\x07",
    ] {
        assert!(seen.contains(expected), "{expected:?} not in {seen:?}");
    }
    assert!(seen.ends_with("\x1b]633;A\x07$ \x1b]633;B\x07"));
    assert!(!seen.contains("unseen"));
}

/// `try_run_inline` from a thread with the stack a run in place needs (a test thread has 2 MiB).
fn run_inline(shell: &PersistentShell, command: &str) -> Option<(Outcome, String)> {
    let request = RunRequest {
        command: command.to_string(),
        ..Default::default()
    };
    run_inline_with(shell, request)
}

fn run_inline_with(shell: &PersistentShell, request: RunRequest) -> Option<(Outcome, String)> {
    let shell = shell.clone();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let out = Arc::new(Mutex::new(String::new()));
            let sink = Arc::clone(&out);
            let on_chunk = Box::new(move |c: shellwright_io::SharedText| {
                sink.lock().expect("lock").push_str(&c)
            });
            let result = shell.try_run_inline(request, on_chunk).ok()?;
            let text = out.lock().expect("lock").clone();
            Some((result.expect("run in place").outcome, text))
        })
        .expect("thread")
        .join()
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_driving_a_runtime_is_declined_and_the_session_left_as_it_was() {
    let shell = PersistentShell::new(SessionOptions::default());
    assert_eq!(
        run(&shell, "x=1").await.0.expect("run").exit_code(),
        Some(0)
    );
    // This test's own thread drives a runtime: blocking on the session's would panic.
    let request = RunRequest {
        command: "x=2".into(),
        ..Default::default()
    };
    assert!(shell.try_run_inline(request, Box::new(|_| {})).is_err());
    assert_eq!(run(&shell, "echo $x").await.1, "1\n");
    assert_eq!(
        run_inline(&shell, "echo \"$x\"")
            .map(|(_, out)| out)
            .as_deref(),
        Some("1\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_only_commands_run_in_place_with_the_effects_of_a_queued_run() {
    let shell = PersistentShell::new(SessionOptions::default());
    // No session yet: the first run creates it, queued.
    assert!(run_inline(&shell, "echo hi").is_none());
    assert_eq!(run(&shell, ":").await.0.expect("run").exit_code(), Some(0));

    // The same commands queued, on a shell of their own, give the same results.
    let queued = PersistentShell::new(SessionOptions::default());
    for command in [
        "export INLINE_X=1 && echo \"$INLINE_X\"; INLINE=1; false",
        "declare -p INLINE_Y; echo $? \"$INLINE\"",
    ] {
        let (result, text) = run_inline(&shell, command).expect("in place");
        let (want, want_text) = run(&queued, command).await;
        assert_eq!((result, text), (want.expect("run"), want_text), "{command}");
    }
    let (_, text) = run_inline(&shell, "unset INLINE; echo \"[$INLINE]\"").expect("in place");
    assert_eq!(text, "[]\n");
    // `cd` to a local directory reached without a link, and `pwd`, touch no mount that may hang.
    let (_, text) = run_inline(&shell, "cd /usr/../tmp && pwd").expect("in place");
    assert_eq!(text, "/tmp\n");
    // An external command sees what the runs in place did.
    let (result, text) = run(&shell, "printenv INLINE_X; echo \"[$INLINE]\"").await;
    assert_eq!(
        (result.expect("run").exit_code(), text.as_str()),
        (Some(0), "1\n[]\n")
    );

    for queued in [
        "ls /",
        "echo hi | cat",
        "echo hi >/dev/null",
        "sleep 0",
        "f() { :; }",
        // They stat paths, which can hang on a stalled mount; so does `cd` behind a link.
        "cd /proc/self/cwd",
        "pwd -P",
        "test -d /",
        "[ -d / ]",
        // Words that could glob once expanded: pathname expansion reads the directory.
        "echo $INLINE_X",
        "echo a[b]",
    ] {
        assert!(run_inline(&shell, queued).is_none(), "{queued}");
    }
    let with_cwd = RunRequest {
        command: "echo hi".into(),
        cwd: Some("/tmp".into()),
        ..Default::default()
    };
    assert!(run_inline_with(&shell, with_cwd).is_none(), "a cwd");
    run(&shell, "echo() { printf 'fn:%s\\n' \"$1\"; }")
        .await
        .0
        .expect("run");
    assert!(
        run_inline(&shell, "echo hi").is_none(),
        "a function shadows the builtin"
    );

    let commands: Vec<_> = shell
        .history_entries()
        .into_iter()
        .map(|e| (e.command, e.outcome.and_then(Outcome::exit_code)))
        .collect();
    assert_eq!(
        commands[1..4].to_vec(),
        vec![
            (
                "export INLINE_X=1 && echo \"$INLINE_X\"; INLINE=1; false".to_string(),
                Some(1)
            ),
            (
                "declare -p INLINE_Y; echo $? \"$INLINE\"".to_string(),
                Some(0)
            ),
            ("unset INLINE; echo \"[$INLINE]\"".to_string(), Some(0)),
        ]
    );
}

/// What a program started from the shell would get: the cwd and the exported variables as the
/// runs before left them, read after those runs; unexported and unset ones are not in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_is_the_cwd_and_exports_runs_left() {
    let shell = PersistentShell::new(SessionOptions {
        session_env: vec![("FROM_SESSION".into(), "s".into())],
        snapshot_path: None,
    });
    let fresh = shell
        .environment()
        .await
        .expect("a fresh session's environment");
    assert!(
        fresh
            .exported
            .contains(&("FROM_SESSION".into(), "s".into()))
    );
    // Not awaited before asking: the environment is read after the run queued before it.
    let queued = shell.run(
        RunRequest {
            command: "cd /tmp && export EXPORTED='a b' && local_only=1 && unset FROM_SESSION"
                .into(),
            ..Default::default()
        },
        Box::new(|_| {}),
    );
    let environment = shell.environment();
    assert_eq!(queued.await.map(|r| r.outcome), Ok(Outcome::Exited(0)));
    let environment = environment.await.expect("an environment");
    assert_eq!(environment.cwd, std::path::Path::new("/tmp"));
    let names: Vec<&str> = environment
        .exported
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        environment
            .exported
            .contains(&("EXPORTED".into(), "a b".into()))
    );
    assert!(
        !names.contains(&"local_only") && !names.contains(&"FROM_SESSION"),
        "{names:?}"
    );
    assert!(
        names.windows(2).all(|pair| pair[0] < pair[1]),
        "sorted by name"
    );
}
