//! Input waits read from the kernel, with real programs: a prompt is seen as soon as the program
//! sleeps in a read of its terminal, never while it computes, sleeps on a timer or has input left
//! to read, and the termios say how it reads.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use common::runtime;
use shellwright_proc::CancelToken;
use shellwright_pty::{InputMode, InputState, PtyCommand, PtySession, RunOptions};

const BOUND: Duration = Duration::from_secs(20);

/// Starts `command` (through `bash -c`) in `session` on `rt` and returns the handle of its end.
fn start(
    rt: &tokio::runtime::Runtime,
    session: &PtySession,
    command: &str,
) -> tokio::task::JoinHandle<()> {
    // The terminal model is what these tests read; the chunks themselves go nowhere.
    // bash, for `read -s`.
    let command = PtyCommand {
        shell: "bash".into(),
        ..PtyCommand::new(command)
    };
    let (run, guard) = session
        .start(
            command,
            RunOptions::default(),
            CancelToken::new(),
            |_: &[u8]| {},
        )
        .expect("starts");
    rt.spawn(async move {
        let _ = tokio::time::timeout(BOUND, run)
            .await
            .expect("ends in time");
        drop(guard);
    })
}

/// Waits for input with the test's bound.
async fn waiting(session: &PtySession) -> InputState {
    session
        .wait_for_input(Some(BOUND), CancelToken::new())
        .await
        .expect("waits within the bound")
}

#[test]
fn a_read_prompt_is_a_line_read_with_echo_and_its_prompt() {
    let rt = runtime();
    let session = PtySession::new();
    let done = start(&rt, &session, "read -r -p 'name? ' x; echo \"hi $x\"");
    rt.block_on(async {
        let state = waiting(&session).await;
        assert!(state.waiting && state.known, "{state:?}");
        assert_eq!(state.mode, Some(InputMode::Line));
        assert_eq!(state.echo, Some(true));
        assert_eq!(state.prompt.as_deref(), Some("name? "));
        let foreground = state.foreground.expect("a reader");
        assert_eq!(Some(foreground.pid), session.pid());
        session.write(b"bob\r").expect("live");
        let after = waiting(&session).await;
        assert!(!after.waiting, "the program exited: {after:?}");
        done.await.expect("the run's task");
    });
    assert_eq!(session.pid(), None);
    assert!(!session.input_state().waiting);
}

#[test]
fn a_silent_prompt_is_not_echoed() {
    let rt = runtime();
    let session = PtySession::new();
    let done = start(
        &rt,
        &session,
        "read -r -s -p 'Password: ' x; echo \"len ${#x}\"",
    );
    rt.block_on(async {
        let state = waiting(&session).await;
        assert_eq!(
            (state.waiting, state.mode, state.echo),
            (true, Some(InputMode::Line), Some(false)),
            "{state:?}"
        );
        assert_eq!(state.prompt.as_deref(), Some("Password: "));
        session.write(b"secret\r").expect("live");
        done.await.expect("the run's task");
    });
}

#[test]
fn a_program_asleep_on_a_timer_or_computing_is_not_waiting_until_it_reads() {
    let rt = runtime();
    let session = PtySession::new();
    // The shell waits for its child (ignored), the child sleeps (busy), then the shell reads; then
    // Python computes silently for 0.6 s before the shell reads again.
    let done = start(
        &rt,
        &session,
        "sleep 0.5; read -r a; python3 -c 'import time; t = time.time() + 0.6\nwhile time.time() < t: pass'; read -r b",
    );
    rt.block_on(async {
        let started = Instant::now();
        let state = waiting(&session).await;
        assert!(state.waiting, "{state:?}");
        assert!(
            started.elapsed() >= Duration::from_millis(450),
            "seen waiting during the sleep, after {:?}",
            started.elapsed()
        );
        session.write(b"one\r").expect("live");
        let typed = Instant::now();
        let state = waiting(&session).await;
        assert!(state.waiting, "{state:?}");
        assert!(
            typed.elapsed() >= Duration::from_millis(550),
            "seen waiting while it computed, after {:?}",
            typed.elapsed()
        );
        session.write(b"two\r").expect("live");
        done.await.expect("the run's task");
    });
}

#[test]
fn a_cancelled_wait_fails_and_an_idle_session_does_not_wait() {
    let rt = runtime();
    let session = PtySession::new();
    assert_eq!(session.input_state(), InputState::default());
    let done = start(&rt, &session, "sleep 5");
    rt.block_on(async {
        let result = session
            .wait_for_input(Some(Duration::from_millis(200)), CancelToken::new())
            .await;
        assert_eq!(result, Err(shellwright_pty::ExecError::TimedOut));
        session.kill().expect("live");
        done.await.expect("the run's task");
    });
}
