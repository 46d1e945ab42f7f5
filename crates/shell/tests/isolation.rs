//! What a run starts is cut off from the host: every process leads a session and a process group
//! of its own, without the host's controlling terminal, whichever way it was started (spawned
//! directly, forked by brush in the foreground, in a pipeline stage, a job, a substitution); the
//! limits `ulimit` sets reach those processes and never the host; a redirection the shell itself
//! opens refuses the terminal. In a binary of its own: it reads the process's own limits.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use shellwright_shell::{PersistentShell, SessionOptions};

/// Fields 1, 5 and 6 of `/proc/<pid>/stat`: pid, process group and session.
fn identity(stat: &str) -> [u32; 3] {
    let after_name = &stat[stat.rfind(')').expect("name") + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    let pid = stat.split(' ').next().expect("pid").parse().expect("pid");
    [
        pid,
        fields[2].parse().expect("pgrp"),
        fields[3].parse().expect("session"),
    ]
}

/// This process's `Max open files` limits, soft and hard.
fn own_open_files_limit() -> String {
    open_files_line(&std::fs::read_to_string("/proc/self/limits").expect("limits"))
}

fn open_files_line(limits: &str) -> String {
    limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .expect("open files")
        .split_whitespace()
        .skip(3)
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_process_a_run_starts_leads_a_session_of_its_own() {
    // SAFETY: getsid(0) and getpgrp() read this process's own ids.
    let (host_session, host_group) = unsafe { (libc::getsid(0) as u32, libc::getpgrp() as u32) };
    let shell = PersistentShell::new(SessionOptions::default());
    let ways = [
        // One plain program: spawned by the session itself.
        "cat /proc/self/stat",
        // Forked by brush: in the foreground, as a pipeline stage, a job, in a substitution,
        // in a subshell, by `command` and `exec`, under `set -m`.
        "cat /proc/self/stat; :",
        "cat /proc/self/stat | cat",
        "cat /proc/self/stat & wait",
        "echo \"$(cat /proc/self/stat)\"",
        "(cat /proc/self/stat)",
        "true | command cat /proc/self/stat",
        "(exec cat /proc/self/stat)",
        "set -m; cat /proc/self/stat | cat; set +m",
    ];
    for command in ways {
        let (result, out) = run(&shell, command).await;
        assert_eq!(result, exited(0), "{command}: {out}");
        let [pid, group, session] = identity(&out);
        assert_eq!((group, session), (pid, pid), "{command}");
        assert_ne!(session, host_session, "{command}");
        assert_ne!(group, host_group, "{command}");
    }
    // A child's `kill 0` reaches its own group, never the host's.
    let (result, out) = run(&shell, "sh -c 'kill 0'; echo \"after $?\"").await;
    assert_eq!((result, out.as_str()), (exited(0), "after 143\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ulimit_limits_the_runs_processes_and_never_the_host() {
    let host = own_open_files_limit();
    let shell = PersistentShell::new(SessionOptions::default());
    let limits = "grep 'Max open files' /proc/self/limits";
    let (result, out) = run(
        &shell,
        &format!("ulimit -n 64; echo set; ulimit -n; {limits}"),
    )
    .await;
    assert_eq!(result, exited(0));
    let (printed, child) = out.split_at(out.find("Max").expect("limits line"));
    assert_eq!(printed, "set\n64\n");
    assert_eq!(open_files_line(child), "64 64");
    assert_eq!(own_open_files_limit(), host, "the host keeps its limit");

    // The next run of the session keeps it; a subshell's own stays in the subshell.
    let (_, out) = run(&shell, &format!("(ulimit -Sn 50; {limits}); {limits}")).await;
    let lines: Vec<String> = out.lines().map(open_files_line).collect();
    assert_eq!(lines, ["50 64", "64 64"]);
    let (_, out) = run(&shell, "(ulimit -Sn 50); ulimit -n; ulimit -Hn").await;
    assert_eq!(out, "64\n64\n");
    // Only the host's limits let a program be spawned directly; it would not get the session's.
    let (_, out) = run(&shell, "cat /proc/self/limits").await;
    assert_eq!(open_files_line(&out), "64 64");

    // Another session starts from the host's.
    let fresh = PersistentShell::new(SessionOptions::default());
    let (_, out) = run(&fresh, limits).await;
    assert_eq!(open_files_line(&out), host);
    assert_eq!(own_open_files_limit(), host);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirections_naming_the_terminal_fail_as_without_one() {
    let shell = PersistentShell::new(SessionOptions::default());
    for command in [
        "read -r x < /dev/tty",
        "exec 3</dev/tty",
        "echo hi > '/dev/tty'",
        "cat < \"/dev/tty\"",
        "echo hi &> /dev/tty",
        "f() { echo hi >&/dev/tty; }; f",
    ] {
        let (result, out) = run(&shell, &format!("{command}; echo \"status $?\"")).await;
        assert_eq!(result, exited(0), "{command}");
        let proc_fd = format!("/proc/{}/fd/", std::process::id());
        assert!(
            out.starts_with(&format!("error: failed to redirect to {proc_fd}"))
                && out.ends_with(": No such device or address (os error 6)\nstatus 1\n"),
            "{command}: {out}"
        );
    }
    // A program opening the terminal itself has none to open.
    let (_, out) = run(&shell, "sh -c 'exec 3</dev/tty'; echo \"status $?\"").await;
    assert_eq!(
        out,
        "sh: 1: cannot open /dev/tty: No such device or address\nstatus 2\n"
    );
}
