//! Helpers shared by the session test binaries: running commands and collecting transcripts,
//! scratch directories, file-growth checks, descriptor limits and nesting texts.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shellwright_proc::Outcome;
use shellwright_shell::{PersistentShell, RunRequest, SessionOptions, ShellError, execute_once};

/// How a run ended (its result without where the session is and how long it took), and its
/// transcript.
pub type Ran = (Result<Outcome, ShellError>, String);

pub fn collector() -> (Arc<Mutex<String>>, shellwright_shell::output::ChunkHandler) {
    let out = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&out);
    (
        out,
        Box::new(move |c| sink.lock().expect("lock").push_str(&c)),
    )
}

pub async fn run_with(shell: &PersistentShell, request: RunRequest) -> Ran {
    let (out, sink) = collector();
    let result = shell.run(request, sink).await.map(|r| r.outcome);
    let text = out.lock().expect("lock").clone();
    (result, text)
}

pub async fn run(shell: &PersistentShell, command: &str) -> Ran {
    run_with(shell, request(command)).await
}

pub async fn once(request: RunRequest, options: SessionOptions) -> Ran {
    let (out, sink) = collector();
    let result = execute_once(options, request, sink)
        .await
        .map(|r| r.outcome);
    let text = out.lock().expect("lock").clone();
    (result, text)
}

pub fn request(command: &str) -> RunRequest {
    RunRequest {
        command: command.into(),
        ..Default::default()
    }
}

pub fn timed(command: &str, dir: &Path, ms: u64) -> RunRequest {
    RunRequest {
        command: command.into(),
        cwd: Some(dir.to_path_buf()),
        timeout: Some(Duration::from_millis(ms)),
        ..Default::default()
    }
}

pub fn exited(code: i32) -> Result<Outcome, ShellError> {
    Ok(Outcome::Exited(code))
}

pub fn timed_out() -> Result<Outcome, ShellError> {
    Ok(Outcome::TimedOut)
}

pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "shellwright-reliability-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

pub fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Asserts that `path` does not change for `quiet` (it may not exist).
pub async fn assert_stays_unchanged(path: &Path, quiet: Duration) {
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
pub static DEEP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub fn raise_descriptor_limit() {
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

/// The message of a limit that stops a runaway recursion: the stack or descriptor limit,
/// whichever this machine's descriptor limit lets it reach first.
pub fn is_limit_message(out: &str) -> bool {
    out == "bash: maximum nesting depth exceeded (stack exhausted)\n"
        || out == "bash: maximum nesting depth exceeded (out of file descriptors)\n"
}

pub fn nested(open: &str, middle: &str, close: &str, n: usize) -> String {
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

/// Runs `command` (which appends to `dir/log`) in a fresh session timed out after `timeout_ms`, and
/// checks that it timed out promptly after writing, and that nothing writes to the log afterwards.
pub async fn assert_timed_out_loop_stops(dir: &Path, command: &str, timeout_ms: u64) {
    let log = dir.join("log");
    let started = std::time::Instant::now();
    let (result, _) = once(timed(command, dir, timeout_ms), SessionOptions::default()).await;
    assert_eq!(result, timed_out(), "{command}");
    assert!(started.elapsed() < Duration::from_secs(3), "{command}");
    assert!(size(&log) > 0, "{command} never ran");
    assert_stays_unchanged(&log, Duration::from_millis(200)).await;
    std::fs::remove_file(&log).expect("rm");
}
