//! Sequential runs leave no file descriptors, threads or child processes behind. Alone in its
//! test binary so that no concurrent test disturbs the counts.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

use std::time::Duration;

use shellwright_proc::{CancelToken, Process};
use shellwright_pty::{PtyCommand, PtyControl, run};

fn count_entries(dir: &str) -> usize {
    std::fs::read_dir(dir).map_or(0, Iterator::count)
}

/// Polls (bounded) until `dir` holds at most `limit` entries: a run's I/O thread may still be
/// finishing its exit when the next count is taken. A leak of one per run never settles.
fn settles_to(dir: &str, limit: usize) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while count_entries(dir) > limit {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

fn children() -> usize {
    Process::from_pid(std::process::id()).map_or(0, |me| me.children().len())
}

#[test]
fn fifty_runs_leak_nothing() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let run_once = |i: usize| {
        let cancel = CancelToken::new();
        rt.block_on(async {
            // Every fifth run times out, to cover the kill path too.
            let (command, _timer) = if i.is_multiple_of(5) {
                let timer = cancel.cancel_after(Duration::from_millis(20));
                (PtyCommand::new("sleep 5"), Some(timer))
            } else {
                (PtyCommand::new("printf x"), None)
            };
            let control = PtyControl::new(command.size);
            let exit = run(command, control, |_: &[u8]| {}, &cancel).await;
            assert_eq!(
                exit.as_ref().map(|e| e.timed_out()).ok(),
                Some(i.is_multiple_of(5))
            );
            exit
        })
        .expect("runs");
    };
    run_once(1); // warm up the runtime's blocking thread
    let fds = count_entries("/proc/self/fd");
    let threads = count_entries("/proc/self/task");
    let kids = children();
    for i in 0..50 {
        run_once(i);
    }
    // The runtime's blocking-pool thread was created by the warm-up run and is reused.
    assert!(
        settles_to("/proc/self/fd", fds),
        "fds: {} > {fds}",
        count_entries("/proc/self/fd")
    );
    assert!(
        settles_to("/proc/self/task", threads),
        "threads: {} > {threads}",
        count_entries("/proc/self/task")
    );
    assert_eq!(children(), kids);
}
