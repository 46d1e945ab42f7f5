//! `RunScope::stop` against real processes. It lives in a test binary of its own: stopping a run
//! whose roots are the host's untagged children would also stop the children that tests running
//! alongside it in the same process start.
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shellwright_proc::{Process, ProcessTable, RUN_TAG_VARIABLE, RunRoots, RunScope, process_info};

/// Pids of running processes whose command line is exactly `sleep <marker>`.
fn sleeping(marker: &str) -> Vec<u32> {
    ProcessTable::snapshot()
        .iter()
        .filter(|p| !p.zombie)
        .filter_map(|p| Process::from_pid(p.pid()))
        .filter(|p| p.args() == ["sleep", marker])
        .map(|p| p.pid())
        .collect()
}

fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "{what} within 10 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

#[test]
fn stops_setsid_and_env_cleared_processes_but_not_older_ones() {
    // Started before the run: a host child without a tag, which the run must leave alone.
    let mut older = Command::new("sleep").arg("31.801").spawn().expect("spawn");
    let scope = RunScope::begin();
    // The run's shell: a tagged `setsid -f` whose session keeps an env-cleared sleep whose
    // parent has exited, and a tagged child that execs an env-cleared sleep.
    let mut shell = Command::new("sh")
        .args([
            "-c",
            "setsid -f sh -c '(env -i sleep 31.802 &); exec sleep 31.803'; \
             env -i sleep 31.804 & wait",
        ])
        .env(RUN_TAG_VARIABLE, scope.tag())
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn");
    // And a host child started during the run whose environment was cleared.
    let mut cleared = Command::new("sleep")
        .arg("31.805")
        .env_clear()
        .spawn()
        .expect("spawn");
    let markers = ["31.802", "31.803", "31.804", "31.805"];
    wait_until("every sleep started", || {
        markers.iter().all(|m| sleeping(m).len() == 1)
    });
    let root = process_info(shell.id()).expect("shell").id;
    let found = scope.find(RunRoots::Child(root));
    for marker in ["31.802", "31.803", "31.804"] {
        assert!(
            found
                .processes
                .iter()
                .any(|id| id.pid == sleeping(marker)[0]),
            "{marker} found"
        );
    }
    assert!(found.processes.iter().all(|id| id.pid != older.id()));
    assert!(found.processes.iter().all(|id| id.pid != cleared.id()));
    assert!(
        scope
            .find(RunRoots::HostChildren)
            .processes
            .iter()
            .any(|id| id.pid == cleared.id())
    );

    runtime().block_on(scope.stop(RunRoots::HostChildren, &[], Duration::from_millis(200)));
    wait_until("the run's sleeps are gone", || {
        markers.iter().all(|m| sleeping(m).is_empty())
    });
    assert!(shell.wait().is_ok());
    assert!(cleared.wait().is_ok());
    assert_eq!(
        sleeping("31.801"),
        vec![older.id()],
        "the older process lives"
    );
    older.kill().expect("kill");
    older.wait().expect("reap");
}
