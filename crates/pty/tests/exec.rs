//! Exec sessions with real programs: each step returns at the program's exit, at its input wait
//! or at the yield time, with the rendered text that is new since the step before; the table's
//! limit, unknown ids and its close.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::runtime;
use shellwright_proc::Outcome;
use shellwright_pty::TermSize;
use shellwright_pty::exec::{ExecSessionError, ExecSessions, ExecStart, Step};

/// A step with a yield that only a hang reaches: a test that passes never waits for it.
const LONG: Step = Step {
    yield_time: Duration::from_secs(20),
    max_output_bytes: 32 * 1024,
};

fn command(line: &str) -> ExecStart {
    ExecStart {
        command: line.to_string(),
        cwd: None,
        env: Vec::new(),
        inherit_env: true,
        size: TermSize::default(),
    }
}

#[test]
fn a_command_that_exits_returns_its_output_and_code_and_is_gone() {
    let rt = runtime();
    rt.block_on(async {
        let sessions = ExecSessions::new(4);
        let update = sessions
            .start(command("echo hi; exit 3"), LONG)
            .await
            .expect("runs");
        assert_eq!(update.output, "hi");
        assert_eq!(update.outcome, Some(Outcome::Exited(3)));
        assert_eq!(update.waiting, None);
        assert!(update.elapsed < LONG.yield_time);
        assert!(sessions.list().is_empty());
        let gone = sessions.write(update.id, "", LONG).await;
        assert!(
            matches!(gone, Err(ExecSessionError::UnknownSession { id, ref known }) if id == update.id && known.is_empty()),
            "{gone:?}"
        );
    });
}

#[test]
fn a_repl_is_stepped_through_its_prompts() {
    let rt = runtime();
    rt.block_on(async {
        let sessions = ExecSessions::new(4);
        let first = sessions
            .start(command("python3 -q"), LONG)
            .await
            .expect("starts");
        let waiting = first.waiting.expect("waits for input");
        assert_eq!(waiting.prompt.as_deref(), Some(">>> "));
        assert_eq!(first.output, ">>>");
        assert_eq!(first.outcome, None);
        let answer = sessions
            .write(first.id, "print(6*7)\r", LONG)
            .await
            .expect("answers");
        assert_eq!(answer.output, ">>> print(6*7)\n42\n>>>");
        assert!(answer.waiting.is_some());
        let end = sessions
            .write(first.id, "exit()\r", LONG)
            .await
            .expect("ends");
        assert_eq!(end.output, ">>> exit()");
        assert_eq!(end.outcome, Some(Outcome::Exited(0)));
    });
}

#[test]
fn a_busy_program_returns_at_the_yield_time_and_a_kill_ends_it() {
    let rt = runtime();
    rt.block_on(async {
        let sessions = ExecSessions::new(4);
        let step = Step {
            yield_time: Duration::from_millis(300),
            ..LONG
        };
        let update = sessions
            .start(command("echo started; sleep 30"), step)
            .await
            .expect("starts");
        assert_eq!(update.output, "started");
        assert_eq!((update.outcome, update.waiting), (None, None));
        assert!(update.elapsed >= step.yield_time, "{:?}", update.elapsed);
        let listed = sessions.list();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].running && listed[0].pid.is_some());
        let killed = sessions.kill(update.id, 1024).await.expect("kills");
        assert_eq!(killed.output, "");
        assert_eq!(
            killed.outcome,
            Some(Outcome::stopped(shellwright_proc::CancelReason::Aborted))
        );
        assert!(sessions.list().is_empty());
    });
}

#[test]
fn the_table_holds_at_most_its_limit_and_refuses_after_close() {
    let rt = runtime();
    rt.block_on(async {
        let sessions = ExecSessions::new(1);
        let step = Step {
            yield_time: Duration::ZERO,
            ..LONG
        };
        let first = sessions
            .start(command("sleep 30"), step)
            .await
            .expect("starts");
        let refused = sessions.start(command("true"), step).await;
        assert!(matches!(refused, Err(ExecSessionError::Limit(1))), "{refused:?}");
        let unknown = sessions.write(first.id + 1, "", step).await;
        assert!(
            matches!(unknown, Err(ExecSessionError::UnknownSession { ref known, .. }) if known == &[first.id]),
            "{unknown:?}"
        );
        sessions.close().await;
        assert!(sessions.list().is_empty());
        let closed = sessions.start(command("true"), step).await;
        assert!(matches!(closed, Err(ExecSessionError::Closed)), "{closed:?}");
    });
}

#[test]
fn a_command_that_cannot_start_leaves_no_session() {
    let rt = runtime();
    rt.block_on(async {
        let sessions = ExecSessions::new(1);
        let start = ExecStart {
            cwd: Some("/no/such/dir".into()),
            ..command("true")
        };
        let failed = sessions.start(start, LONG).await;
        assert!(
            matches!(failed, Err(ExecSessionError::Start(ref err)) if err.to_string().starts_with("Failed to set cwd: /no/such/dir")),
            "{failed:?}"
        );
        assert!(sessions.list().is_empty());
    });
}
