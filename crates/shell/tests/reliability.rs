//! Nothing a command does may crash the host, and a cancelled run stops everything it started
//! in-process: nesting limits, big-stack sessions, cancellable parsing and snapshot sourcing, and
//! in-process background jobs that end with their session.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shellwright_proc::CancelToken;
use shellwright_shell::nesting::PARSER_NESTING_LIMIT;
use shellwright_shell::{
    PersistentShell, RunRequest, RunResult, SessionOptions, ShellError, execute_once,
};

type Outcome = (Result<RunResult, ShellError>, String);

fn collector() -> (Arc<Mutex<String>>, shellwright_shell::output::ChunkHandler) {
    let out = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&out);
    (
        out,
        Box::new(move |c| sink.lock().expect("lock").push_str(&c)),
    )
}

async fn run_with(shell: &PersistentShell, request: RunRequest) -> Outcome {
    let (out, sink) = collector();
    let result = shell.run(request, sink).await;
    let text = out.lock().expect("lock").clone();
    (result, text)
}

async fn run(shell: &PersistentShell, command: &str) -> Outcome {
    run_with(shell, request(command)).await
}

async fn once(request: RunRequest, options: SessionOptions) -> Outcome {
    let (out, sink) = collector();
    let result = execute_once(options, request, sink).await;
    let text = out.lock().expect("lock").clone();
    (result, text)
}

fn request(command: &str) -> RunRequest {
    RunRequest {
        command: command.into(),
        ..Default::default()
    }
}

fn timed(command: &str, dir: &Path, ms: u64) -> RunRequest {
    RunRequest {
        command: command.into(),
        cwd: Some(dir.to_path_buf()),
        timeout: Some(Duration::from_millis(ms)),
        ..Default::default()
    }
}

fn exited(code: i32) -> Result<RunResult, ShellError> {
    Ok(RunResult {
        exit_code: Some(code),
        cancelled: false,
        timed_out: false,
    })
}

fn timed_out() -> Result<RunResult, ShellError> {
    Ok(RunResult {
        exit_code: None,
        cancelled: false,
        timed_out: true,
    })
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "shellwright-reliability-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Asserts that `path` does not change for `quiet` (it may not exist).
async fn assert_stays_unchanged(path: &Path, quiet: Duration) {
    let before = std::fs::read(path).ok();
    tokio::time::sleep(quiet).await;
    assert_eq!(
        std::fs::read(path).ok(),
        before,
        "{} changed after the run settled",
        path.display()
    );
}

/// Deep recursion holds about sixteen descriptors per level in brush: the tests that recurse deep
/// take turns, with the descriptor limit raised as far as the process may.
static DEEP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on this test process.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// The message of the first limit a runaway recursion meets: the function, stack or descriptor
/// limit, whichever this machine's descriptor limit lets it reach first.
fn is_limit_message(out: &str, function_limit: Option<usize>) -> bool {
    let function =
        function_limit.map(|n| format!("bash: f: maximum function nesting level exceeded ({n})\n"));
    Some(out) == function.as_deref()
        || out == "bash: maximum nesting depth exceeded (stack exhausted)\n"
        || out == "bash: maximum nesting depth exceeded (out of file descriptors)\n"
}

fn nested(open: &str, middle: &str, close: &str, n: usize) -> String {
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

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
    assert!(matches!(
        result,
        Ok(RunResult {
            cancelled: true,
            ..
        })
    ));
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
    // The session tears down on its own thread once the last handle is gone.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_stays_unchanged(&log, Duration::from_millis(300)).await;
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
        let started = Instant::now();
        let (result, _) = once(timed(command, &dir, 200), SessionOptions::default()).await;
        assert_eq!(result, timed_out(), "{command}");
        assert!(started.elapsed() < Duration::from_secs(3), "{command}");
        assert!(size(&dir.join("log")) > 0, "{command} never ran");
        assert_stays_unchanged(&dir.join("log"), Duration::from_millis(200)).await;
        std::fs::remove_file(dir.join("log")).expect("rm");
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
    assert!(
        matches!(
            result,
            Ok(RunResult {
                cancelled: true,
                ..
            })
        ),
        "{result:?}"
    );
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
