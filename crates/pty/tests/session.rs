//! The session state machine over real pseudo-terminals: one run at a time, the terminal that
//! outlives the run, resizes, kill, timeout and exec.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::{Collected, runtime};
use shellwright_proc::{CancelReason, CancelToken, Outcome};
use shellwright_pty::{ExecError, PtyCommand, PtyError, PtySession, RunOptions, TermSize};

const BOUND: Duration = Duration::from_secs(20);

fn ended(cancelled: bool, timed_out: bool) -> Outcome {
    match (cancelled, timed_out) {
        (true, false) => Outcome::Cancelled,
        (false, true) => Outcome::TimedOut,
        _ => unreachable!("a stopped run is cancelled or timed out"),
    }
}

#[test]
fn one_run_at_a_time_and_the_terminal_outlives_it() {
    let rt = runtime();
    let session = PtySession::new();
    assert_eq!(
        session.terminal().err().map(|e| e.to_string()),
        Some("PTY session is not running".into())
    );
    assert!(matches!(session.write(b"x"), Err(PtyError::NotRunning)));
    assert!(matches!(session.kill(), Err(PtyError::NotRunning)));

    let out = Collected::default();
    let (run, guard) = session
        .start(
            PtyCommand::new("read line; echo \"got:$line\""),
            RunOptions::default(),
            CancelToken::new(),
            out.output(),
        )
        .expect("starts");
    // Input written before the child exists is queued.
    session.write(b"hello\n").expect("live");
    let again = session.start(
        PtyCommand::new("true"),
        RunOptions::default(),
        CancelToken::new(),
        Collected::default().output(),
    );
    assert_eq!(
        again.err().map(|e| e.to_string()),
        Some("PTY session already running".into())
    );
    let exit = rt.block_on(async { tokio::time::timeout(BOUND, run).await.expect("ends") });
    assert_eq!(exit.expect("runs").exit_code(), Some(0));
    assert_eq!(out.text(), "hello\r\ngot:hello\r\n");
    // Live until the guard goes: input after the terminal closed is dropped, not an error.
    assert!(session.is_running());
    session.write(b"late").expect("dropped quietly");
    drop(guard);
    assert!(!session.is_running());
    assert!(matches!(session.write(b"x"), Err(PtyError::NotRunning)));
    let screen = session.terminal().expect("kept").lock().screen();
    assert_eq!(&screen.lines[..2], ["hello", "got:hello"]);
}

#[test]
fn a_stale_guard_does_not_end_a_newer_run() {
    let rt = runtime();
    let session = PtySession::new();
    let (first, first_guard) = session
        .start(
            PtyCommand::new("true"),
            RunOptions::default(),
            CancelToken::new(),
            Collected::default().output(),
        )
        .expect("starts");
    rt.block_on(first).expect("runs");
    // The guard is gone before the next start, so the next start is accepted.
    drop(first_guard);
    let (second, second_guard) = session
        .start(
            PtyCommand::new("sleep 5"),
            RunOptions::default(),
            CancelToken::new(),
            Collected::default().output(),
        )
        .expect("starts again");
    let stale = session.clone();
    assert!(stale.is_running());
    session.kill().expect("live");
    let exit = rt.block_on(async { tokio::time::timeout(BOUND, second).await.expect("ends") });
    assert_eq!(exit.expect("runs"), ended(true, false));
    drop(second_guard);
    assert!(!session.is_running());
}

#[test]
fn resizes_the_emulator_and_the_terminal_together() {
    let rt = runtime();
    let session = PtySession::new();
    let out = Collected::default();
    let (run, _guard) = session
        .start(
            PtyCommand::new("read _; stty size"),
            RunOptions::default(),
            CancelToken::new(),
            out.output(),
        )
        .expect("starts");
    session
        .resize(TermSize::clamped(50, 12))
        .expect("resizes while live");
    session.write(b"\n").expect("live");
    rt.block_on(async { tokio::time::timeout(BOUND, run).await.expect("ends") })
        .expect("runs");
    assert_eq!(out.text(), "\r\n12 50\r\n");
    let screen = session.terminal().expect("kept").lock().screen();
    assert_eq!((screen.cols, screen.rows), (50, 12));
}

#[test]
fn times_out_and_a_cancelled_token_starts_nothing() {
    let rt = runtime();
    let session = PtySession::new();
    let options = RunOptions {
        timeout: Some(Duration::from_millis(100)),
        ..RunOptions::default()
    };
    let (run, guard) = session
        .start(
            PtyCommand::new("sleep 30"),
            options,
            CancelToken::new(),
            Collected::default().output(),
        )
        .expect("starts");
    let exit = rt.block_on(async { tokio::time::timeout(BOUND, run).await.expect("ends") });
    assert_eq!(exit.expect("runs"), ended(false, true));
    drop(guard);

    let cancel = CancelToken::new();
    cancel.cancel(CancelReason::Aborted);
    let out = Collected::default();
    let (run, _guard) = session
        .start(
            PtyCommand::new("echo never"),
            RunOptions::default(),
            cancel,
            out.output(),
        )
        .expect("starts");
    assert_eq!(rt.block_on(run).expect("runs"), ended(true, false));
    assert_eq!(out.text(), "");
}

#[test]
fn a_spawn_failure_ends_the_run_and_pending_execs() {
    let rt = runtime();
    let session = PtySession::new();
    let command = PtyCommand {
        cwd: Some("/definitely/not/here".into()),
        ..PtyCommand::new("true")
    };
    let (run, _guard) = session
        .start(
            command,
            RunOptions::default(),
            CancelToken::new(),
            Collected::default().output(),
        )
        .expect("starts");
    let exec = session
        .exec("echo hi".into(), None, CancelToken::new())
        .expect("live");
    let err = rt.block_on(run).expect_err("cwd refused");
    assert_eq!(
        err.to_string(),
        "Failed to set cwd: /definitely/not/here: No such file or directory"
    );
    let outcome = rt.block_on(async { tokio::time::timeout(BOUND, exec).await.expect("ends") });
    assert_eq!(outcome.err(), Some(ExecError::Ended));
}

#[test]
fn exec_types_into_an_interactive_bash_and_times_out() {
    let rt = runtime();
    let session = PtySession::new();
    let command = PtyCommand {
        shell: "bash".into(),
        interactive: true,
        env: vec![("PS1".into(), "$ ".into())],
        ..PtyCommand::new("")
    };
    let (run, _guard) = session
        .start(
            command,
            RunOptions::default(),
            CancelToken::new(),
            Collected::default().output(),
        )
        .expect("starts");
    let run = rt.spawn(run);
    let record = rt.block_on(async {
        let exec = session
            .exec("echo exec-ok".into(), None, CancelToken::new())
            .expect("live");
        tokio::time::timeout(BOUND, exec).await.expect("ends")
    });
    let record = record.expect("completes");
    assert_eq!(
        (
            record.command.as_str(),
            record.output.as_str(),
            record.exit_code
        ),
        ("echo exec-ok", "exec-ok", Some(0))
    );
    let slow = rt.block_on(async {
        let exec = session
            .exec(
                "sleep 30".into(),
                Some(Duration::from_millis(100)),
                CancelToken::new(),
            )
            .expect("live");
        tokio::time::timeout(BOUND, exec).await.expect("ends")
    });
    assert_eq!(slow.err(), Some(ExecError::TimedOut));
    session.kill().expect("live");
    let exit = rt.block_on(async { tokio::time::timeout(BOUND, run).await.expect("ends") });
    assert_eq!(exit.expect("joins").expect("runs"), ended(true, false));
}
