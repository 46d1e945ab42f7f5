//! The measurement itself (Unix: it needs a pseudo-terminal pair and `poll`).

use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use shellwright_io::{PollFd, poll, set_nonblocking, wake_pipe};

const ROUND_TRIPS: usize = 100;

pub fn main() {
    let blocks: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(20);
    let pinned = std::env::args().nth(2).as_deref() == Some("pinned");
    let pair = native_pty_system()
        .openpty(PtySize::default())
        .expect("openpty");
    let mut command = CommandBuilder::new("sh");
    command.args(["-c", "stty -echo; echo ready; exec cat"]);
    let mut child = pair.slave.spawn_command(command).expect("spawn");
    drop(pair.slave);
    if pinned {
        let pid = child.process_id().expect("child pid");
        pin(pid as libc::pid_t, 1);
        pin(0, 0);
    }
    let fd = pair.master.as_raw_fd().expect("master fd");
    set_nonblocking(master(fd)).expect("nonblocking");
    read_until(fd, &mut Vec::new(), b"ready\r\n");

    let mut direct = Vec::new();
    let mut hop = Vec::new();
    let mut hop_far = Vec::new();
    for _ in 0..blocks {
        direct.extend(round_trips(fd, Direct));
        hop.extend(round_trips(fd, Hop::start(fd, pinned.then_some(0))));
        if pinned {
            hop_far.extend(round_trips(fd, Hop::start(fd, Some(1))));
        }
    }
    println!(
        "direct (poll the master on the waiting thread): {}",
        summary(&mut direct)
    );
    println!(
        "hop (reader thread, wake pipe to the waiter):   {}",
        summary(&mut hop)
    );
    if pinned {
        println!(
            "hop, the reader on cat's CPU:                   {}",
            summary(&mut hop_far)
        );
    }
    child.kill().ok();
    child.wait().ok();
}

/// How the waiting thread learns that the echo arrived.
trait Receive {
    /// Waits until `line` has been received.
    fn receive(&mut self, fd: RawFd, line: &[u8]);
}

struct Direct;

impl Receive for Direct {
    fn receive(&mut self, fd: RawFd, line: &[u8]) {
        read_until(fd, &mut Vec::new(), line);
    }
}

/// A reader thread that reads the master into `received` and wakes the waiter per read.
struct Hop {
    received: Arc<Mutex<Vec<u8>>>,
    wake: shellwright_io::WakeReceiver,
    stop: Option<shellwright_io::Waker>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hop {
    /// Starts the reader, on CPU `cpu` if given.
    fn start(fd: RawFd, cpu: Option<usize>) -> Self {
        let received = Arc::new(Mutex::new(Vec::new()));
        let (waker, wake) = wake_pipe().expect("wake pipe");
        let (stop, stopped) = wake_pipe().expect("stop pipe");
        let shared = Arc::clone(&received);
        let thread = std::thread::spawn(move || {
            if let Some(cpu) = cpu {
                pin(0, cpu);
            }
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                let mut fds = [
                    PollFd::readable(Some(master(fd))),
                    PollFd::readable(Some(stopped.as_fd())),
                ];
                poll(&mut fds, None).expect("poll");
                if fds[1].is_readable() {
                    return;
                }
                // SAFETY: reading into a valid buffer of its length from the open master.
                let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
                if n > 0 {
                    shared
                        .lock()
                        .unwrap()
                        .extend_from_slice(&buffer[..n as usize]);
                    waker.wake();
                    continue;
                }
                let error = std::io::Error::last_os_error().raw_os_error();
                if n == 0 || !matches!(error, Some(libc::EINTR | libc::EAGAIN)) {
                    // cat ended (a hang-up): stop, and `receive` times out with a message.
                    return;
                }
            }
        });
        Self {
            received,
            wake,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Receive for Hop {
    fn receive(&mut self, _fd: RawFd, line: &[u8]) {
        loop {
            {
                let mut received = self.received.lock().unwrap();
                if received.windows(line.len()).any(|w| w == line) {
                    received.clear();
                    return;
                }
            }
            let mut fds = [PollFd::readable(Some(self.wake.as_fd()))];
            let ready = poll(&mut fds, Some(Duration::from_secs(5))).expect("poll");
            assert!(ready > 0, "no echo within 5 s: is cat still running?");
            self.wake.drain();
        }
    }
}

impl Drop for Hop {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.wake();
        }
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
    }
}

/// A block of warm-up and timed round trips; the samples in microseconds.
fn round_trips(fd: RawFd, mut receive: impl Receive) -> Vec<f64> {
    let mut samples = Vec::with_capacity(ROUND_TRIPS);
    for n in 0..ROUND_TRIPS + 10 {
        let line = format!("ping {n}\r\n");
        let start = Instant::now();
        write_all(fd, format!("ping {n}\n").as_bytes());
        receive.receive(fd, line.as_bytes());
        if n >= 10 {
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    samples
}

fn summary(samples: &mut [f64]) -> String {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    format!(
        "p10 {:.1} µs, p50 {:.1} µs, p90 {:.1} µs (n = {})",
        at(0.1),
        at(0.5),
        at(0.9),
        samples.len()
    )
}

/// Restricts thread or process `tid` (0: the calling thread) to CPU `cpu`.
#[cfg(target_os = "linux")]
fn pin(tid: libc::pid_t, cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled and passed by reference.
    let status = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(status, 0, "sched_setaffinity to CPU {cpu} failed");
}

/// Only Linux can pin a thread to a CPU: elsewhere the measurement runs unpinned.
#[cfg(not(target_os = "linux"))]
fn pin(_tid: libc::pid_t, _cpu: usize) {}

fn master(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: the master stays open until main returns.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

fn write_all(fd: RawFd, mut data: &[u8]) {
    while !data.is_empty() {
        // SAFETY: writing a valid buffer of its length to the open master.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        assert!(n > 0, "write to the master failed");
        data = &data[n as usize..];
    }
}

/// Reads the master on this thread until `received` contains `line`.
fn read_until(fd: RawFd, received: &mut Vec<u8>, line: &[u8]) {
    let mut buffer = [0u8; 4096];
    while !received.windows(line.len()).any(|w| w == line) {
        let mut fds = [PollFd::readable(Some(master(fd)))];
        let ready = poll(&mut fds, Some(Duration::from_secs(5))).expect("poll");
        assert!(ready > 0, "no echo within 5 s: is cat still running?");
        // SAFETY: reading into a valid buffer of its length from the open master.
        let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
        // A readable master that reads nothing has hung up (cat ended): waiting would spin.
        assert!(
            n > 0,
            "reading the master failed: {}",
            std::io::Error::last_os_error()
        );
        received.extend_from_slice(&buffer[..n as usize]);
    }
}
