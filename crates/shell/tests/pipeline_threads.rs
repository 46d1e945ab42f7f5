//! A cancelled pipeline of builtin stages stops every stage and leaves no thread behind. In a
//! binary of its own: it counts the threads of the whole test process, which tests running beside
//! it would change.

#![cfg(target_os = "linux")]

mod common;

use std::time::{Duration, Instant};

use common::*;
use shellwright_shell::SessionOptions;

/// The threads of this test process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_pipelines_stop_every_stage_and_leave_no_thread() {
    let dir = scratch_dir("pipelines-cancel");
    // One warm-up so that the runtime's own threads exist before the baseline.
    let _ = once(timed("echo | cat", &dir, 5_000), SessionOptions::default()).await;
    let baseline = threads();
    for command in [
        "while :; do echo t; done | while read -r l; do echo \"$l\" >> log; done",
        "eval 'while :; do echo t >> log; done' | cat",
        "while :; do echo t >> log; done | while read -r l; do :; done",
        "while :; do echo t; done | { while :; do echo u >> log; done; }",
        "f(){ while :; do echo t >> log; done; }; f | g | cat",
    ] {
        assert_timed_out_loop_stops(&dir, command, 300).await;
    }
    // Stage threads return to the blocking pool, which lets them go when idle (bounded poll).
    let deadline = Instant::now() + Duration::from_secs(15);
    while threads() > baseline && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        threads() <= baseline,
        "{} threads, {baseline} before",
        threads()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
