//! Runs whose terminal is read by a `ReadDriver`: one that reads on its own thread (as an event
//! loop would), one that stalls (the I/O thread must read behind it), and one that declines.
// They drive Unix shells and programs; the Windows run is covered by tests/windows.
#![cfg(unix)]

mod common;

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use common::{Collected, runtime};
use shellwright_io::{PollFd, poll};
use shellwright_proc::{CancelToken, Outcome};
use shellwright_pty::{
    MasterReader, PtyCommand, PtyControl, ReadDriver, ReadState, Reading, run_reading,
};

/// What a test driver was asked to do, and did.
#[derive(Default)]
struct Record {
    /// Reads the driver made.
    reads: AtomicUsize,
    /// Whether a read of the driver's reported the end.
    saw_end: AtomicBool,
    stops: AtomicUsize,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// How the test driver behaves once it has the reader.
#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    /// Reads whenever the fd is readable, on a thread of its own, until the end or a stop.
    Reads,
    /// Takes the reader and never reads.
    Stalls,
    /// Hands the reader back.
    Declines,
}

struct TestDriver {
    behaviour: Behaviour,
    record: Arc<Record>,
    stopped: Arc<AtomicBool>,
}

impl ReadDriver for TestDriver {
    fn start(&self, reader: MasterReader) -> Result<(), MasterReader> {
        match self.behaviour {
            Behaviour::Declines => return Err(reader),
            Behaviour::Stalls => return Ok(()),
            Behaviour::Reads => {}
        }
        let record = Arc::clone(&self.record);
        let stopped = Arc::clone(&self.stopped);
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Acquire) {
                // SAFETY: the reader keeps its fd open while it lives.
                let fd = unsafe { BorrowedFd::borrow_raw(reader.fd()) };
                let mut fds = [PollFd::readable(Some(fd))];
                if poll(&mut fds, Some(Duration::from_millis(20))).unwrap_or(0) == 0 {
                    continue;
                }
                record.reads.fetch_add(1, Ordering::Relaxed);
                if reader.read() == ReadState::Ended {
                    record.saw_end.store(true, Ordering::Release);
                    return;
                }
            }
        });
        *self.record.thread.lock().unwrap() = Some(thread);
        Ok(())
    }

    fn stop(&self) {
        self.record.stops.fetch_add(1, Ordering::Relaxed);
        self.stopped.store(true, Ordering::Release);
    }
}

/// Runs `command` with a driver that behaves as told; returns the exit, the output and what the
/// driver did.
fn run_driven(command: &str, behaviour: Behaviour) -> (Outcome, Collected, Arc<Record>) {
    let record = Arc::new(Record::default());
    let driver = TestDriver {
        behaviour,
        record: Arc::clone(&record),
        stopped: Arc::default(),
    };
    let collected = Collected::default();
    let command = PtyCommand::new(command);
    let control = PtyControl::new(command.size);
    let cancel = CancelToken::new();
    let exit = runtime().block_on(async {
        let run = run_reading(
            command,
            control,
            collected.output(),
            Reading::Driver(Box::new(driver)),
            &cancel,
        );
        tokio::time::timeout(Duration::from_secs(20), run)
            .await
            .expect("run ends within 20 s")
            .expect("runs")
    });
    if let Some(thread) = record.thread.lock().unwrap().take() {
        thread.join().expect("the driver's thread ends");
    }
    (exit, collected, record)
}

/// `seq 1 n` as a terminal shows it (cooked mode: each line ends in CR LF).
fn seq_output(n: usize) -> String {
    (1..=n).map(|i| format!("{i}\r\n")).collect()
}

#[test]
fn a_driver_reads_every_byte_to_the_end() {
    let (exit, out, record) = run_driven("seq 20000; exit 4", Behaviour::Reads);
    assert_eq!(exit.exit_code(), Some(4));
    assert_eq!(out.text(), seq_output(20000));
    // How many of the reads were the driver's depends on the machine's load: while its thread
    // waits to be scheduled, the I/O thread reads behind it (by design). The driver read at least
    // once, and a read of its own told it of the end.
    assert!(record.reads.load(Ordering::Relaxed) >= 1);
    assert!(record.saw_end.load(Ordering::Acquire));
    // The run stops the driver at its end, whether or not the driver saw it.
    assert_eq!(record.stops.load(Ordering::Relaxed), 1);
}

#[test]
fn the_io_thread_reads_behind_a_driver_that_stalls() {
    // 110 KB is far more than the terminal holds: the program finishes only if someone reads.
    let (exit, out, record) = run_driven("seq 20000", Behaviour::Stalls);
    assert_eq!(exit.exit_code(), Some(0));
    assert_eq!(out.text(), seq_output(20000));
    assert_eq!(record.reads.load(Ordering::Relaxed), 0);
    assert_eq!(record.stops.load(Ordering::Relaxed), 1);
}

#[test]
fn the_io_thread_reads_when_the_driver_declines() {
    let (exit, out, record) = run_driven("seq 20000", Behaviour::Declines);
    assert_eq!(exit.exit_code(), Some(0));
    assert_eq!(out.text(), seq_output(20000));
    // A driver that never took the reader is not stopped.
    assert_eq!(record.stops.load(Ordering::Relaxed), 0);
}
