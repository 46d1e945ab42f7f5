//! Nothing a command does may crash the host, and a cancelled run stops everything it started
//! in-process: nesting limits, big-stack sessions, cancellable parsing and snapshot sourcing, and
//! in-process background jobs that end with their session.
mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use shellwright_proc::CancelToken;
use shellwright_shell::nesting::PARSER_NESTING_LIMIT;
use shellwright_shell::{PersistentShell, RunRequest, SessionOptions, ShellError};

// ---- parsing ----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_covers_parsing_a_huge_command() {
    let dir = scratch_dir("huge-parse");
    let command = format!("echo {}", "a ".repeat(1_500_000));
    let started = Instant::now();
    let (result, _) = once(timed(&command, &dir, 200), SessionOptions::default()).await;
    assert_eq!(result, timed_out());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_command_line_settles() {
    // A few seconds alone on a loaded 2-core machine; the bound leaves room for the other tests.
    let command = format!("x={}; echo ${{#x}}", "a".repeat(10 << 20));
    let started = Instant::now();
    let (result, out) = once(request(&command), SessionOptions::default()).await;
    assert_eq!(result, exited(0));
    assert_eq!(out, format!("{}\n", 10 << 20));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

// ---- in-process jobs --------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_run_stops_its_background_group_before_it_settles() {
    let dir = scratch_dir("bg-group");
    let (result, _) = once(
        timed("{ sleep 1; echo done > f; } & sleep 30", &dir, 300),
        SessionOptions::default(),
    )
    .await;
    assert_eq!(result, timed_out());
    assert_stays_unchanged(&dir.join("f"), Duration::from_millis(1_500)).await;
    assert!(!dir.join("f").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_run_stops_a_background_builtin_loop() {
    let dir = scratch_dir("bg-loop");
    let shell = PersistentShell::new(SessionOptions::default());
    let cancel = CancelToken::new();
    let request = RunRequest {
        cancel: cancel.clone(),
        ..timed("while :; do echo t >> log; done & sleep 30", &dir, 30_000)
    };
    let log = dir.join("log");
    let pending = tokio::spawn({
        let shell = shell.clone();
        async move { run_with(&shell, request).await }
    });
    let started = Instant::now();
    while size(&log) == 0 && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(size(&log) > 0, "the job never ran");
    shell.abort().await;
    let (result, _) = pending.await.expect("joined");
    assert!(matches!(&result, Ok(r) if r.cancelled()));
    assert_stays_unchanged(&log, Duration::from_millis(500)).await;
    let (result, out) = run(&shell, "echo next").await;
    assert_eq!((result, out.as_str()), (exited(0), "next\n"));
    assert_stays_unchanged(&log, Duration::from_millis(200)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs_outlive_a_normal_run_but_not_their_session() {
    let dir = scratch_dir("bg-session");
    let log = dir.join("log");
    let shell = PersistentShell::new(SessionOptions::default());
    let (result, _) = run_with(
        &shell,
        RunRequest {
            cwd: Some(dir.clone()),
            ..request("while :; do echo t >> log; sleep 0.02; done & echo started")
        },
    )
    .await;
    assert_eq!(result, exited(0));
    let grown = size(&log);
    let started = Instant::now();
    while size(&log) == grown && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(size(&log) > grown, "the job stopped with the run");
    drop(shell);
    // The session tears down on its own thread once the last handle is gone: wait (bounded) for
    // the log to stop growing, then check that it stays so.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let before = size(&log);
        tokio::time::sleep(Duration::from_millis(50)).await;
        if size(&log) == before || Instant::now() > deadline {
            break;
        }
    }
    assert_stays_unchanged(&log, Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_shell_ends_what_its_runs_left_running_and_refuses_later_runs() {
    let dir = scratch_dir("close");
    let pids = dir.join("pids");
    let shell = PersistentShell::new(SessionOptions::default());
    // Each job writes its own pid, then becomes the sleep (`$!` is empty for brush's jobs).
    let (result, _) = run_with(
        &shell,
        RunRequest {
            cwd: Some(dir.clone()),
            ..request(
                "sh -c 'echo $$ >> pids; exec sleep 301' & \
                 nohup setsid sh -c 'echo $$ >> pids; exec sleep 302' >/dev/null 2>&1 &",
            )
        },
    )
    .await;
    assert_eq!(result, exited(0));
    let pids = wait_for_lines(&pids, 2).await;
    assert!(
        pids.iter().all(|&pid| alive(pid)),
        "the jobs run on after their run"
    );
    shell.close().await;
    assert!(
        pids.iter().all(|&pid| !alive(pid)),
        "close() left {pids:?} running"
    );
    assert_eq!(run(&shell, "echo again").await.0, Err(ShellError::Closed));
    shell.close().await;
}

/// The pids in `file` once it has `count` lines (bounded wait).
async fn wait_for_lines(file: &Path, count: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let pids: Vec<u32> = text.lines().filter_map(|line| line.parse().ok()).collect();
        if pids.len() >= count || Instant::now() > deadline {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether `pid` is a live process (not a zombie waiting to be reaped).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_run_stops_its_jobs_when_it_returns() {
    let dir = scratch_dir("bg-once");
    let log = dir.join("log");
    let (result, out) = once(
        timed(
            "(while :; do echo t >> log; done) & echo started",
            &dir,
            30_000,
        ),
        SessionOptions::default(),
    )
    .await;
    assert_eq!((result, out.as_str()), (exited(0), "started\n"));
    assert_stays_unchanged(&log, Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn substitution_and_pipeline_loops_are_cancelled() {
    let dir = scratch_dir("subst-loops");
    for command in [
        "x=$(while :; do echo t >> log; done)",
        "cat <(while :; do echo t >> log; done)",
        "f(){ while :; do echo t >> log; done; }; f | cat",
        "echo x | (while :; do echo t >> log; done)",
    ] {
        assert_timed_out_loop_stops(&dir, command, 200).await;
    }
}

// ---- snapshots --------------------------------------------------------------------------------

fn snapshot(dir: &Path, text: &str) -> SessionOptions {
    let path = dir.join("snapshot.sh");
    std::fs::write(&path, text).expect("write snapshot");
    SessionOptions {
        snapshot_path: Some(path),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_snapshot_obeys_the_timeout_and_the_next_run_retries_it() {
    let dir = scratch_dir("snapshot-sleep");
    for text in ["sleep 30", "while :; do :; done"] {
        let shell = PersistentShell::new(snapshot(&dir, text));
        let started = Instant::now();
        let (result, _) = run_with(&shell, timed("echo never", &dir, 200)).await;
        assert_eq!(result, timed_out(), "{text}");
        assert!(started.elapsed() < Duration::from_secs(2), "{text}");
    }
    let shell = PersistentShell::new(snapshot(&dir, "greeting=hi"));
    assert_eq!(run(&shell, "echo $greeting").await.1, "hi\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_snapshot_stops_at_once() {
    let dir = scratch_dir("snapshot-abort");
    let script = format!("while :; do echo t >> {}; done", dir.join("log").display());
    let shell = PersistentShell::new(snapshot(&dir, &script));
    let cancel = CancelToken::new();
    let pending = tokio::spawn({
        let shell = shell.clone();
        let request = RunRequest {
            cancel: cancel.clone(),
            ..timed("echo never", &dir, 30_000)
        };
        async move { run_with(&shell, request).await }
    });
    let started = Instant::now();
    while size(&dir.join("log")) == 0 && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel(shellwright_proc::CancelReason::Aborted);
    let (result, out) = pending.await.expect("joined");
    assert!(matches!(&result, Ok(r) if r.cancelled()), "{result:?}");
    assert_eq!(out, "");
    assert_stays_unchanged(&dir.join("log"), Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_nested_too_deep_is_refused() {
    let dir = scratch_dir("snapshot-deep");
    let options = snapshot(&dir, &nested("{ ", ":", "; }", 100_000));
    let (result, _) = once(request("echo never"), options).await;
    let Err(ShellError::Snapshot(message)) = result else {
        panic!("{result:?}")
    };
    assert!(
        message.ends_with(&format!(
            "syntax error: nesting deeper than {PARSER_NESTING_LIMIT} levels"
        )),
        "{message}"
    );
}
