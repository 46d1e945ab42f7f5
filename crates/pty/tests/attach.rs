//! Viewers of a session's terminal (`SessionTerminal::attach`): the seam between a viewer's
//! snapshot and its stream, proved by replaying every viewer into a fresh terminal and comparing it
//! with the session's own; many viewers; attaching after the end; detaching; the queue bound;
//! resizes; answered queries; the same through a real pseudo-terminal at full speed; the screen
//! alone at the same cut; and how the run ended, told with a stream's last piece.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::{Scratch, runtime};
use shellwright_proc::CancelToken;
use shellwright_pty::{
    Attachment, Delivery, OPEN_SEQUENCE_LIMIT, PtyCommand, PtyControl, PtyOutput, PtySession,
    RunOptions, SessionTerminal, TermSize, VIEWER_QUEUE_LIMIT, Viewer,
};
use shellwright_term::testing::{Rng, workload};
use shellwright_term::{Terminal, TerminalOptions, TerminalScreen};

const COLS: u16 = 60;
const ROWS: u16 = 16;

/// Counts how often a viewer's sink was told.
#[derive(Clone, Default)]
struct Told(Arc<AtomicUsize>);

impl Told {
    fn sink(&self) -> impl Fn() + Send + Sync + 'static {
        let told = Arc::clone(&self.0);
        move || {
            told.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Replays one viewer: its snapshot, then every delivery, into a fresh terminal.
struct Replay {
    viewer: Viewer,
    terminal: Terminal,
    resyncs: usize,
    ended: bool,
}

fn fresh(cols: u16, rows: u16) -> Terminal {
    Terminal::new(TerminalOptions {
        cols,
        rows,
        answer_queries: false,
        ..TerminalOptions::default()
    })
}

impl Replay {
    fn new(attachment: Attachment) -> Self {
        let mut terminal = fresh(attachment.cols, attachment.rows);
        let _ = terminal.feed(attachment.snapshot.as_bytes());
        Self {
            viewer: attachment.viewer,
            terminal,
            resyncs: 0,
            ended: false,
        }
    }

    fn apply(&mut self, delivery: Delivery) {
        assert!(!self.ended, "nothing is delivered after the end");
        if let Some((cols, rows)) = delivery.resync {
            assert!(
                delivery.chunk.starts_with("\x1bc"),
                "a resync starts with RIS"
            );
            self.terminal = fresh(cols, rows);
            self.resyncs += 1;
        }
        let _ = self.terminal.feed(delivery.chunk.as_bytes());
        self.ended = delivery.ended;
    }

    /// Takes and applies what waits; returns the chunk.
    fn take(&mut self) -> String {
        let delivery = self.viewer.take();
        let chunk = delivery.chunk.clone();
        self.apply(delivery);
        chunk
    }
}

fn same_screen(viewer: &mut Terminal, session: &mut Terminal, what: &str) {
    let (want, got): (TerminalScreen, TerminalScreen) = (session.screen(), viewer.screen());
    for (i, (g, w)) in got.lines.iter().zip(&want.lines).enumerate() {
        assert_eq!(g, w, "{what}: line {i}");
    }
    assert_eq!(got.cursor, want.cursor, "{what}: cursor");
    assert_eq!(got.alt_screen, want.alt_screen, "{what}: alternate screen");
    assert_eq!(got.title, want.title, "{what}: title");
    assert_eq!(
        viewer.scrollback_lines(),
        session.scrollback_lines(),
        "{what}: scrollback"
    );
}

/// A terminal fed by hand through the same output the read loop uses.
fn session_terminal() -> (SessionTerminal, impl PtyOutput) {
    let terminal = SessionTerminal::new(TerminalOptions {
        cols: COLS,
        rows: ROWS,
        ..TerminalOptions::default()
    });
    let output = terminal.output(
        PtyControl::new(TermSize::clamped(COLS.into(), ROWS.into())),
        |_: &[u8]| {},
    );
    (terminal, output)
}

#[test]
fn snapshot_and_stream_meet_exactly_wherever_the_cut_falls() {
    for seed in 1..=6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let stream = workload(&mut rng, 3000);
        let (terminal, mut output) = session_terminal();
        let mut replays: Vec<Replay> = Vec::new();
        let mut at = 0;
        let mut attached = 0;
        while at < stream.len() {
            // Reads of 1 to 300 bytes: cuts fall inside sequences and characters.
            let end = (at + 1 + rng.below(300)).min(stream.len());
            output.bytes(&stream[at..end]);
            at = end;
            match rng.below(10) {
                0 | 1 => {
                    replays.push(Replay::new(terminal.attach(|| {})));
                    attached += 1;
                }
                2 if !replays.is_empty() => {
                    let gone = replays.swap_remove(rng.below(replays.len()));
                    gone.viewer.detach();
                    assert_eq!(
                        gone.viewer.take(),
                        Delivery {
                            ended: true,
                            ..Delivery::default()
                        }
                    );
                }
                _ => {}
            }
            for replay in &mut replays {
                if rng.below(3) == 0 {
                    let _ = replay.take();
                }
            }
        }
        output.finish();
        assert!(attached > 40, "seed {seed}: {attached} attaches");
        let mut session = terminal.lock();
        let mut check = fresh(COLS, ROWS);
        let _ = check.feed(session.snapshot().as_bytes());
        same_screen(&mut check, &mut session, &format!("seed {seed} snapshot"));
        for (index, replay) in replays.iter_mut().enumerate() {
            let _ = replay.take();
            assert!(replay.ended, "the end reaches every viewer");
            assert_eq!(replay.resyncs, 0);
            same_screen(
                &mut replay.terminal,
                &mut session,
                &format!("seed {seed} viewer {index}"),
            );
        }
    }
}

#[test]
fn viewer_chunks_carry_no_answered_query() {
    let (terminal, mut output) = session_terminal();
    let mut replay = Replay::new(terminal.attach(|| {}));
    output.bytes(b"a\x1b[6");
    output.bytes(b"nb\x1b[c\x1b[31mc");
    let delivery = replay.viewer.take();
    assert_eq!(delivery.chunk, "ab\x1b[31mc");
    replay.apply(delivery);
    output.finish();
    let _ = replay.take();
    assert!(replay.ended);
    same_screen(&mut replay.terminal, &mut terminal.lock(), "queries");
}

#[test]
fn a_character_split_across_reads_reaches_a_new_viewer_whole() {
    let (terminal, mut output) = session_terminal();
    let bytes = "x😀y".as_bytes();
    output.bytes(&bytes[..3]);
    let mut replay = Replay::new(terminal.attach(|| {}));
    output.bytes(&bytes[3..]);
    let delivery = replay.viewer.take();
    assert_eq!(delivery.chunk, "😀y");
    replay.apply(delivery);
    output.finish();
    let _ = replay.take();
    same_screen(
        &mut replay.terminal,
        &mut terminal.lock(),
        "split character",
    );
}

#[test]
fn a_cut_inside_a_sequence_starts_the_stream_with_its_beginning() {
    let (terminal, mut output) = session_terminal();
    // A title is no query, so its beginning is passed on before its end arrives.
    output.bytes(b"ab\x1b]2;t\xc3");
    let told = Told::default();
    let mut first = Replay::new(terminal.attach(told.sink()));
    assert_eq!(told.count(), 1, "the beginning waits to be taken");
    output.bytes(b"\xa9tle\x07\x1b[38;5;1");
    // A possible query is held back from everyone (and the emulator) until it is complete.
    let mut second = Replay::new(terminal.attach(|| {}));
    output.bytes(b"0mred");
    assert_eq!(first.take(), "\x1b]2;t\u{e9}tle\x07\x1b[38;5;10mred");
    assert_eq!(second.take(), "\x1b[38;5;10mred");
    output.bytes(b"\x1b]2;x");
    let mut third = Replay::new(terminal.attach(|| {}));
    output.bytes(b"y\x1b\\!");
    assert_eq!(third.take(), "\x1b]2;xy\x1b\\!");
    output.finish();
    for replay in [&mut first, &mut second, &mut third] {
        let _ = replay.take();
        same_screen(&mut replay.terminal, &mut terminal.lock(), "open sequence");
    }
}

#[test]
fn a_cut_inside_an_overlong_sequence_resyncs_once_it_ends() {
    let (terminal, mut output) = session_terminal();
    output.bytes(b"before\x1b]52;c;");
    output.bytes(&vec![b'A'; OPEN_SEQUENCE_LIMIT + 10]);
    let mut replay = Replay::new(terminal.attach(|| {}));
    output.bytes(b"AAAA");
    assert_eq!(
        replay.viewer.take(),
        Delivery::default(),
        "nothing until the sequence ends"
    );
    output.bytes(b"\x07after");
    let delivery = replay.viewer.take();
    assert_eq!(delivery.resync, Some((COLS, ROWS)));
    replay.apply(delivery);
    output.bytes(b" more");
    output.finish();
    let _ = replay.take();
    same_screen(
        &mut replay.terminal,
        &mut terminal.lock(),
        "overlong sequence",
    );
    assert_eq!(terminal.lock().screen().lines[0], "beforeafter more");
}

#[test]
fn a_viewer_past_the_queue_bound_is_resynchronised_not_buffered() {
    let (terminal, mut output) = session_terminal();
    let told = Told::default();
    let mut slow = Replay::new(terminal.attach(told.sink()));
    let line = b"0123456789 the slow viewer never keeps up with this stream\r\n";
    let mut sent = 0;
    while sent < VIEWER_QUEUE_LIMIT + 64 * 1024 {
        output.bytes(line);
        sent += line.len();
    }
    assert_eq!(told.count(), 1, "told once until it takes");
    let delivery = slow.viewer.take();
    assert_eq!(delivery.resync, Some((COLS, ROWS)));
    assert!(
        delivery.chunk.len() < VIEWER_QUEUE_LIMIT / 4,
        "a snapshot, not the backlog"
    );
    slow.apply(delivery);
    output.bytes(b"tail");
    output.finish();
    let _ = slow.take();
    assert!(slow.ended);
    same_screen(&mut slow.terminal, &mut terminal.lock(), "resync");
}

#[test]
fn a_resize_resyncs_every_viewer_at_the_new_size() {
    let (terminal, mut output) = session_terminal();
    let mut replay = Replay::new(terminal.attach(|| {}));
    output.bytes(b"hello world, a line that will reflow\r\nsecond");
    terminal.resize(30, 8);
    let delivery = replay.viewer.take();
    assert_eq!(delivery.resync, Some((30, 8)));
    replay.apply(delivery);
    output.bytes(b" more");
    output.finish();
    let _ = replay.take();
    same_screen(&mut replay.terminal, &mut terminal.lock(), "resize");
}

#[test]
fn attaching_after_the_end_gives_the_snapshot_only() {
    let (terminal, mut output) = session_terminal();
    output.bytes(b"done\r\n");
    output.finish();
    let told = Told::default();
    let mut replay = Replay::new(terminal.attach(told.sink()));
    assert_eq!(told.count(), 1);
    assert_eq!(
        replay.viewer.take(),
        Delivery {
            ended: true,
            ..Delivery::default()
        }
    );
    same_screen(&mut replay.terminal, &mut terminal.lock(), "after the end");
}

#[test]
fn a_detached_viewer_gets_nothing_and_is_forgotten() {
    let (terminal, mut output) = session_terminal();
    let told = Told::default();
    let attachment = terminal.attach(told.sink());
    output.bytes(b"one");
    assert_eq!(told.count(), 1);
    attachment.viewer.detach();
    attachment.viewer.detach();
    output.bytes(b"two");
    output.finish();
    assert_eq!(told.count(), 1, "not told after detaching");
    assert_eq!(
        attachment.viewer.take(),
        Delivery {
            ended: true,
            ..Delivery::default()
        }
    );
}

/// Attaches a viewer followed by its own thread, which takes whenever the viewer's sink is told;
/// the thread returns the replay once the stream has ended.
fn follow(session: &PtySession) -> (Viewer, std::thread::JoinHandle<Replay>) {
    let signal = Arc::new((Mutex::new(false), Condvar::new()));
    let raise = Arc::clone(&signal);
    let attachment = session
        .attach(move || {
            let (flag, condvar) = &*raise;
            *flag.lock().expect("flag") = true;
            condvar.notify_one();
        })
        .expect("attach");
    let viewer = attachment.viewer.clone();
    let mut replay = Replay::new(attachment);
    let handle = std::thread::spawn(move || {
        let (flag, condvar) = &*signal;
        loop {
            let _ = replay.take();
            if replay.ended {
                return replay;
            }
            let raised = flag.lock().expect("flag");
            // A detach from another thread tells nobody: look again now and then.
            let (mut raised, _) = condvar
                .wait_timeout_while(raised, Duration::from_millis(50), |raised| !*raised)
                .expect("flag");
            *raised = false;
        }
    });
    (viewer, handle)
}

/// Viewers attached (at random moments) before the stream is allowed to end.
const ENOUGH_VIEWERS: usize = 60;

#[test]
fn viewers_of_a_real_pseudo_terminal_streaming_at_full_speed() {
    let mut rng = Rng(0x5eed);
    let scratch = Scratch::new("attach");
    let dir = &scratch.0;
    let file = dir.join("workload");
    let mut stream = workload(&mut rng, 4000);
    // A four-byte character two cells wide, which the workload has none of: reads cut it too.
    stream.extend_from_slice("😀 wide 😀\r\n".as_bytes());
    // Each round leaves the normal screen; rounds repeat until the test has attached enough
    // viewers and says so with `done` (a fast machine would otherwise finish the stream first).
    stream.extend_from_slice(b"\x1b[?1049l\x1b[r");
    std::fs::write(&file, stream.repeat(5)).expect("workload");
    let done = dir.join("done");
    let session = PtySession::new();
    let command = PtyCommand {
        size: TermSize::clamped(COLS.into(), ROWS.into()),
        ..PtyCommand::new(format!(
            "while :; do cat '{}'; [ -e '{}' ] && break; done",
            file.display(),
            done.display()
        ))
    };
    let runtime = runtime();
    let (run, guard) = session
        .start(
            command,
            RunOptions::default(),
            CancelToken::new(),
            |_: &[u8]| {},
        )
        .expect("start");
    let run = runtime.spawn(run);
    let mut followers = Vec::new();
    while !run.is_finished() && followers.len() < 150 {
        let (viewer, handle) = follow(&session);
        followers.push((viewer, handle, false));
        if rng.below(5) == 0 {
            let index = rng.below(followers.len());
            followers[index].0.detach();
            followers[index].2 = true;
        }
        std::thread::sleep(Duration::from_micros(200 + rng.below(1000) as u64));
        if followers.len() == ENOUGH_VIEWERS {
            std::fs::write(&done, "").expect("done");
        }
    }
    std::fs::write(&done, "").expect("done");
    let exit = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(30), run).await })
        .expect("the run ends within 30 s")
        .expect("join")
        .expect("run");
    assert_eq!(exit.exit_code(), Some(0));
    drop(guard);
    // Every follower is joined before the terminal is locked: a follower that must resync takes
    // that lock to paint its snapshot.
    let replays: Vec<_> = followers
        .into_iter()
        .map(|(_, handle, detached)| (handle.join().expect("follower"), detached))
        .collect();
    let terminal = session.terminal().expect("terminal");
    let mut session_terminal = terminal.lock();
    let mut compared = 0;
    for (index, (mut replay, detached)) in replays.into_iter().enumerate() {
        if !detached {
            same_screen(
                &mut replay.terminal,
                &mut session_terminal,
                &format!("viewer {index}"),
            );
            compared += 1;
        }
    }
    assert!(
        compared >= 10,
        "{compared} viewers attached while the stream flowed"
    );
}

#[test]
fn a_screen_snapshot_repaints_the_screen_at_the_same_cut_without_the_history() {
    let (terminal, mut output) = session_terminal();
    for i in 0..500 {
        output.bytes(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
    }
    output.bytes(b"\x1b[1mprompt$ ");
    let attachment = terminal.attach(|| {});
    assert!(attachment.snapshot.len() > 10 * attachment.screen_snapshot.len());
    let mut screen_only = fresh(attachment.cols, attachment.rows);
    let _ = screen_only.feed(attachment.screen_snapshot.as_bytes());
    assert!(screen_only.scrollback_lines().is_empty());
    let mut replay = Replay::new(attachment);
    output.bytes(b"typed\r\nmore");
    output.finish();
    let chunk = replay.take();
    let _ = screen_only.feed(chunk.as_bytes());
    let mut session = terminal.lock();
    assert_eq!(screen_only.screen(), session.screen());
    same_screen(&mut replay.terminal, &mut session, "the full snapshot");
}

/// Attaches to `session` with a sink that signals `told`.
fn attach_told(session: &PtySession) -> (Viewer, std::sync::mpsc::Receiver<()>) {
    let (tell, told) = std::sync::mpsc::channel();
    let attachment = session
        .attach(move || {
            let _ = tell.send(());
        })
        .expect("attach");
    (attachment.viewer, told)
}

/// Takes from `viewer` each time its sink is told until its stream ends; returns the last
/// delivery.
fn last_delivery(viewer: &Viewer, told: &std::sync::mpsc::Receiver<()>) -> Delivery {
    loop {
        let delivery = viewer.take();
        if delivery.ended {
            return delivery;
        }
        told.recv_timeout(Duration::from_secs(10))
            .expect("told within 10 s");
    }
}

#[test]
fn viewers_of_a_session_learn_how_the_run_ended_with_their_last_piece() {
    let session = PtySession::new();
    let runtime = runtime();
    let start = |command: &str| {
        session
            .start(
                PtyCommand::new(command.to_string()),
                RunOptions::default(),
                CancelToken::new(),
                |_: &[u8]| {},
            )
            .expect("start")
    };
    let (run, guard) = start("read line; echo \"got $line\"; exit 3");
    let run = runtime.spawn(run);
    let (viewer, told) = attach_told(&session);
    let (detached, detached_told) = attach_told(&session);
    detached.detach();
    session.write(b"x\r").expect("write");
    let end = last_delivery(&viewer, &told);
    assert_eq!(end.run_end, Some(Ok(shellwright_proc::Outcome::Exited(3))));
    assert_eq!(last_delivery(&detached, &detached_told).run_end, None);
    // Told once: later takes give nothing more.
    assert_eq!(
        viewer.take(),
        Delivery {
            ended: true,
            ..Delivery::default()
        }
    );
    runtime.block_on(run).expect("join").expect("run");
    drop(guard);
    // A viewer attached after the end is told too.
    let late = session.attach(|| {}).expect("attach");
    assert_eq!(
        late.viewer.take().run_end,
        Some(Ok(shellwright_proc::Outcome::Exited(3)))
    );

    // A run that is cancelled, and one that cannot start.
    let (run, guard) = start("exec sleep 30");
    let run = runtime.spawn(run);
    let (viewer, told) = attach_told(&session);
    session.kill().expect("kill");
    let end = last_delivery(&viewer, &told);
    assert_eq!(end.run_end, Some(Ok(shellwright_proc::Outcome::Cancelled)));
    runtime.block_on(run).expect("join").expect("run");
    drop(guard);
    let (run, guard) = session
        .start(
            PtyCommand {
                cwd: Some("/nonexistent/shellwright".into()),
                ..PtyCommand::new("true".to_string())
            },
            RunOptions::default(),
            CancelToken::new(),
            |_: &[u8]| {},
        )
        .expect("start");
    let failed = runtime.block_on(run);
    drop(guard);
    let message = failed.expect_err("a missing cwd fails the run").to_string();
    let late = session.attach(|| {}).expect("attach");
    assert_eq!(late.viewer.take().run_end, Some(Err(message)));
}
