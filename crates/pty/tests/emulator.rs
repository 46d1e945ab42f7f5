//! The terminal model in the read loop: query answers through a real pseudo-terminal, the
//! passthrough stream, end-of-input flushing, interactive bash with shell-integration hooks, and
//! `exec` with marks and with the prompt fallback.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::path::PathBuf;

use std::time::Duration;

use common::{Collected, Scratch, runtime};
use shellwright_proc::CancelToken;
use shellwright_pty::{ExecError, PtyCommand, PtyControl, SessionTerminal, run, spawn};
use shellwright_term::TerminalOptions;

fn terminal_for(command: &PtyCommand, answer_queries: bool) -> SessionTerminal {
    SessionTerminal::new(TerminalOptions {
        cols: command.size.cols(),
        rows: command.size.rows(),
        answer_queries,
        ..TerminalOptions::default()
    })
}

/// Runs `script` with bash to its end through a terminal; returns what reached the viewer.
fn run_through_terminal(script: &str, answer_queries: bool) -> (Vec<u8>, SessionTerminal) {
    let command = PtyCommand {
        shell: "bash".into(),
        ..PtyCommand::new(script)
    };
    let terminal = terminal_for(&command, answer_queries);
    let collected = Collected::default();
    let control = PtyControl::new(command.size);
    let output = terminal.output(control.clone(), collected.output());
    let exit = runtime().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(20),
            run(command, control, output, &CancelToken::new()),
        )
        .await
        .expect("run ends within 20 s")
    });
    assert_eq!(exit.ok().and_then(|e| e.exit_code()), Some(0));
    (collected.bytes(), terminal)
}

#[test]
fn answers_the_cursor_position_and_cuts_the_query_from_the_stream() {
    let (bytes, terminal) = run_through_terminal(
        r#"stty raw -echo; printf 'ab\033[6n'; IFS= read -r -d R reply; stty sane; printf '%s|\n' "${reply#?}""#,
        true,
    );
    assert_eq!(String::from_utf8_lossy(&bytes), "ab[1;3|\r\n");
    assert_eq!(terminal.lock().screen().lines[0], "ab[1;3|");
}

#[test]
fn without_answer_queries_everything_passes_and_nothing_is_answered() {
    let (bytes, _) = run_through_terminal(
        r#"stty raw -echo; printf 'ab\033[6n'; if IFS= read -r -t 0.3 -d R reply; then r=answered; else r=silent; fi; stty sane; echo $r"#,
        false,
    );
    assert_eq!(String::from_utf8_lossy(&bytes), "ab\x1b[6nsilent\r\n");
}

#[test]
fn releases_a_held_back_sequence_at_end_of_input() {
    // `ESC [` may still become a query, so the terminal holds it until more comes — here, nothing.
    let (bytes, _) = run_through_terminal(r#"stty raw; printf 'x\033['"#, true);
    assert_eq!(bytes, b"x\x1b[");
}

#[test]
fn exec_in_interactive_bash_reports_command_output_exit_code_and_cwd() {
    let home = Scratch::new("emulator-bash");
    let home_path = home.0.display().to_string();
    let command = PtyCommand {
        shell: "bash".into(),
        interactive: true,
        cwd: Some(home.0.clone()),
        env: vec![("HOME".into(), home_path.clone())],
        ..PtyCommand::new("")
    };
    let terminal = terminal_for(&command, true);
    let control = PtyControl::new(command.size);
    let rt = runtime();
    rt.block_on(async {
        let pty = spawn(
            &command,
            &control,
            terminal.output(control.clone(), |_: &[u8]| {}),
        )
        .expect("spawn bash");
        let exec = |line: &'static str, timeout: Option<Duration>| {
            let terminal = terminal.clone();
            let control = control.clone();
            async move {
                let cancel = CancelToken::new();
                let _deadline = cancel.deadline(timeout);
                tokio::time::timeout(
                    Duration::from_secs(10),
                    terminal.exec(&control, line, &cancel),
                )
                .await
                .expect("exec settles")
            }
        };

        let first = exec("echo hi; false", None).await.expect("first exec");
        // Read once bash surely runs (right after the fork the child may not have exec'd yet).
        let rcfile = bash_rcfile(pty.pid());
        assert!(rcfile.exists(), "{rcfile:?} exists while bash runs");
        assert_eq!(
            (
                first.command.as_str(),
                first.output.as_str(),
                first.exit_code
            ),
            ("echo hi; false", "hi", Some(1))
        );
        assert_eq!(first.cwd.as_deref(), Some(home_path.as_str()));
        assert!(first.finished_at_ms >= Some(first.started_at_ms));

        let cd = exec("cd /tmp && pwd", None).await.expect("cd");
        assert_eq!((cd.output.as_str(), cd.exit_code), ("/tmp", Some(0)));
        assert_eq!(terminal.lock().cwd(), Some("/tmp"));

        let slow = exec("sleep 5", Some(Duration::from_millis(300))).await;
        assert_eq!(slow, Err(ExecError::TimedOut));
        let after = exec("echo back", None).await.expect("exec after Ctrl+C");
        assert_eq!((after.output.as_str(), after.exit_code), ("back", Some(0)));

        let commands: Vec<_> = terminal
            .lock()
            .commands()
            .into_iter()
            .map(|r| (r.command, r.exit_code))
            .collect();
        assert_eq!(
            commands,
            vec![
                ("echo hi; false".to_string(), Some(1)),
                ("cd /tmp && pwd".to_string(), Some(0)),
                ("sleep 5".to_string(), Some(130)),
                ("echo back".to_string(), Some(0)),
            ]
        );

        control.write(b"exit\r").expect("type exit");
        let exit = tokio::time::timeout(Duration::from_secs(10), pty.wait(&CancelToken::new()))
            .await
            .expect("bash exits")
            .expect("run result");
        assert_eq!(exit.exit_code(), Some(0));
        assert!(!rcfile.exists(), "the rcfile is removed with the run");
        let late = exec("echo late", None).await;
        assert_eq!(late, Err(ExecError::Ended));
    });
}

#[test]
fn exec_falls_back_to_prompt_detection_without_hooks() {
    let home = Scratch::new("emulator-sh");
    let command = PtyCommand {
        shell: "sh".into(),
        interactive: true,
        cwd: Some(home.0.clone()),
        env: vec![
            ("HOME".into(), home.0.display().to_string()),
            ("PS1".into(), "$ ".into()),
            ("ENV".into(), String::new()),
        ],
        ..PtyCommand::new("")
    };
    let terminal = terminal_for(&command, true);
    let control = PtyControl::new(command.size);
    runtime().block_on(async {
        let pty = spawn(
            &command,
            &control,
            terminal.output(control.clone(), |_: &[u8]| {}),
        )
        .expect("spawn sh");
        let cancel = CancelToken::new();
        let record = tokio::time::timeout(
            Duration::from_secs(10),
            terminal.exec(&control, "echo fallback", &cancel),
        )
        .await
        .expect("exec settles")
        .expect("exec");
        assert_eq!(
            (
                record.command.as_str(),
                record.output.as_str(),
                record.exit_code
            ),
            ("echo fallback", "fallback", None)
        );
        assert!(!terminal.lock().shell_integration());
        control.write(b"exit\r").expect("type exit");
        let exit = tokio::time::timeout(Duration::from_secs(10), pty.wait(&CancelToken::new()))
            .await
            .expect("sh exits")
            .expect("run result");
        assert_eq!(exit.exit_code(), Some(0));
    });
}

#[test]
fn exec_cancelled_before_a_prompt_types_nothing() {
    let command = PtyCommand::new("sleep 5");
    let terminal = terminal_for(&command, true);
    let control = PtyControl::new(command.size);
    runtime().block_on(async {
        let pty = spawn(
            &command,
            &control,
            terminal.output(control.clone(), |_: &[u8]| {}),
        )
        .expect("spawn");
        let cancel = CancelToken::new();
        cancel.cancel(shellwright_proc::CancelReason::Aborted);
        assert_eq!(
            terminal.exec(&control, "echo no", &cancel).await,
            Err(ExecError::Aborted)
        );
        let stop = CancelToken::new();
        stop.cancel(shellwright_proc::CancelReason::Aborted);
        let exit = pty.wait(&stop).await.expect("run result");
        assert!(exit.cancelled());
    });
}

/// The rcfile path from bash's command line (`bash --rcfile <file> -i`).
fn bash_rcfile(pid: u32) -> PathBuf {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline");
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    assert_eq!(args[1], b"--rcfile");
    PathBuf::from(String::from_utf8_lossy(args[2]).into_owned())
}
