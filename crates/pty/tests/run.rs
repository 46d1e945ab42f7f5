//! Runs real commands in real pseudo-terminals.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use common::{Collected, runtime};
use shellwright_proc::{CancelReason, CancelToken, Outcome, Process, ProcessStatus};
use shellwright_pty::{PtyCommand, PtyControl, PtyError, TermSize, run, spawn};

/// Runs `command` to its end and returns the result with what it printed.
fn run_to_end(command: PtyCommand) -> (Result<Outcome, PtyError>, Collected) {
    let collected = Collected::default();
    let control = PtyControl::new(command.size);
    let result = runtime().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(20),
            run(command, control, collected.output(), &CancelToken::new()),
        )
        .await
        .expect("run ends within 20 s")
    });
    (result, collected)
}

fn exited(code: i32) -> Outcome {
    Outcome::Exited(code)
}

#[test]
fn reports_output_and_exit_code() {
    let (result, out) = run_to_end(PtyCommand::new("printf hello; exit 3"));
    assert_eq!(result.expect("runs"), exited(3));
    assert_eq!(out.text(), "hello");
}

#[test]
fn death_by_signal_is_128_plus_n_with_its_name() {
    let (result, _) = run_to_end(PtyCommand::new("kill -KILL $$"));
    assert_eq!(result.expect("runs"), Outcome::Signaled(libc::SIGKILL));
}

#[test]
fn env_is_overlaid_on_the_host_environment_and_cwd_is_honoured() {
    let command = PtyCommand {
        env: vec![("SW_TEST_VALUE".into(), "overlay ok".into())],
        cwd: Some("/tmp".into()),
        ..PtyCommand::new("printf '%s|%s|%s' \"$SW_TEST_VALUE\" \"$PWD\" \"${PATH:+has-path}\"")
    };
    let (result, out) = run_to_end(command);
    assert_eq!(result.expect("runs"), exited(0));
    assert_eq!(out.text(), "overlay ok|/tmp|has-path");
}

#[test]
fn login_shell_and_explicit_shell() {
    let command = PtyCommand {
        shell: "bash".into(),
        login: true,
        ..PtyCommand::new("shopt -q login_shell && printf login")
    };
    let (result, out) = run_to_end(command);
    assert_eq!(result.expect("runs"), exited(0));
    assert!(out.text().ends_with("login"), "{:?}", out.text());
}

#[test]
fn a_bad_cwd_or_shell_fails_to_start() {
    let command = PtyCommand {
        cwd: Some("/no/such/dir".into()),
        ..PtyCommand::new("true")
    };
    let (result, _) = run_to_end(command);
    assert_eq!(
        result.map_err(|e| e.to_string()),
        Err("Failed to set cwd: /no/such/dir: No such file or directory".into())
    );
    let command = PtyCommand {
        shell: "no-such-shell-here".into(),
        ..PtyCommand::new("true")
    };
    let (result, _) = run_to_end(command);
    let message = result.map_err(|e| e.to_string()).expect_err("fails");
    assert!(
        message.starts_with("Failed to spawn no-such-shell-here: "),
        "{message}"
    );
}

#[test]
fn terminal_size_is_set_and_resized() {
    let command = PtyCommand {
        size: TermSize::clamped(1000, 1),
        ..PtyCommand::new("stty size; read _; stty size")
    };
    let control = PtyControl::new(command.size);
    let collected = Collected::default();
    let rt = runtime();
    let result = rt.block_on(async {
        let running = spawn(&command, &control, collected.output()).expect("spawns");
        wait_for(|| collected.text().contains("5 400"));
        control.resize(TermSize::clamped(80, 24)).expect("resizes");
        assert_eq!(control.size(), TermSize::clamped(80, 24));
        control.write(b"\n").expect("writes");
        running.wait(&CancelToken::new()).await
    });
    assert_eq!(result.expect("runs"), exited(0));
    assert_eq!(collected.text(), "5 400\r\n\r\n24 80\r\n");
    assert!(not_running(control.write(b"late")));
    assert!(not_running(control.resize(TermSize::default())));
}

fn not_running(result: Result<(), PtyError>) -> bool {
    matches!(result, Err(PtyError::NotRunning))
        && PtyError::NotRunning.to_string() == "PTY session is not running"
}

#[test]
fn input_written_before_and_during_the_run_arrives_in_order() {
    let command = PtyCommand::new("stty -echo; read a; read b; printf '%s+%s' \"$a\" \"$b\"");
    let control = PtyControl::new(command.size);
    // Written before the child exists: queued until the terminal is open.
    control.write(b"first\n").expect("queues");
    let collected = Collected::default();
    let rt = runtime();
    let result = rt.block_on(async {
        let running = spawn(&command, &control, collected.output()).expect("spawns");
        control.write(b"second\n").expect("writes");
        running.wait(&CancelToken::new()).await
    });
    assert_eq!(result.expect("runs"), exited(0));
    assert!(
        collected.text().ends_with("first+second"),
        "{:?}",
        collected.text()
    );
    assert!(not_running(control.write(b"x")));
}

#[test]
fn large_output_arrives_byte_exact() {
    // `stty raw` stops the line discipline from turning \n into \r\n.
    let (result, out) = run_to_end(PtyCommand::new("stty raw -echo; seq 1 400000"));
    assert_eq!(result.expect("runs"), exited(0));
    let want: String = (1..=400_000).map(|n| format!("{n}\n")).collect();
    let got = out.bytes();
    assert_eq!(got.len(), want.len());
    assert!(got == want.as_bytes(), "content differs");
}

#[test]
fn a_timeout_stops_a_disowned_background_job_promptly() {
    let command = PtyCommand {
        shell: "bash".into(),
        ..PtyCommand::new("set -m; sleep 30 & echo \"bg=$!\"; disown; sleep 30")
    };
    let control = PtyControl::new(command.size);
    let collected = Collected::default();
    let cancel = CancelToken::new();
    let started = Instant::now();
    let result = runtime().block_on(async {
        let _timer = cancel.cancel_after(Duration::from_millis(150));
        run(command, control, collected.output(), &cancel).await
    });
    let elapsed = started.elapsed();
    assert_eq!(result.expect("runs"), Outcome::TimedOut);
    assert!(elapsed < Duration::from_millis(1500), "took {elapsed:?}");
    let text = collected.text();
    let pid: u32 = text
        .split("bg=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no bg pid in {text:?}"));
    let background = Process::from_pid(pid);
    assert!(
        background
            .is_none_or(|p| p.status() == ProcessStatus::Exited || p.args() != ["sleep", "30"]),
        "the disowned job survived"
    );
}

#[test]
fn cancel_escalates_to_sigkill_for_a_child_that_ignores_sigterm() {
    let command = PtyCommand::new("trap '' TERM; echo ready; while :; do sleep 1; done");
    let control = PtyControl::new(command.size);
    let collected = Collected::default();
    let cancel = CancelToken::new();
    let rt = runtime();
    let started = Instant::now();
    let result = rt.block_on(async {
        let running = spawn(&command, &control, collected.output()).expect("spawns");
        wait_for(|| collected.text().contains("ready"));
        cancel.cancel(CancelReason::Aborted);
        running.wait(&cancel).await
    });
    assert_eq!(result.expect("runs"), Outcome::Cancelled);
    // 500 ms grace, then SIGKILL.
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn an_already_cancelled_token_starts_nothing() {
    let cancel = CancelToken::new();
    cancel.cancel(CancelReason::Aborted);
    let collected = Collected::default();
    let control = PtyControl::default();
    let result = runtime().block_on(run(
        PtyCommand::new("echo should-not-run"),
        control.clone(),
        collected.output(),
        &cancel,
    ));
    assert!(result.expect("result").cancelled());
    assert_eq!(collected.text(), "");
    assert!(control.is_finished());
}

#[test]
fn orphans_holding_the_terminal_get_one_second() {
    // On Linux the session leader's exit hangs up the terminal, which ends the read by itself.
    // Here the leader first gives up its controlling terminal (TIOCNOTTY, 0x5422), so the
    // background sleep keeps the slave open after the leader exits. SIGHUP (which TIOCNOTTY sends
    // to the foreground group) is ignored before the fork, so both inherit that.
    let command = PtyCommand::new(
        "trap '' HUP; sleep 8 & echo \"orphan=$!\"; exec perl -e 'ioctl(STDIN, 0x5422, 0) or die $!'",
    );
    let started = Instant::now();
    let (result, out) = run_to_end(command);
    let elapsed = started.elapsed();
    assert_eq!(result.expect("runs"), exited(0));
    assert!(elapsed >= Duration::from_millis(900), "took {elapsed:?}");
    assert!(elapsed < Duration::from_millis(2500), "took {elapsed:?}");
    let text = out.text();
    let pid: u32 = text
        .split("orphan=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no orphan pid in {text:?}"));
    if let Some(orphan) = Process::from_pid(pid) {
        orphan.kill_tree(libc::SIGKILL);
    }
}

/// Bounded poll for a condition set by the I/O thread.
fn wait_for(condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "condition not met within 10 s");
        std::thread::sleep(Duration::from_millis(2));
    }
}
