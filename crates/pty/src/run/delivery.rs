//! [`Delivery`]: a run's output as the thread that reads it and the thread that ends the run share
//! it, for a terminal whose output does not end by itself when the child exits (a Windows pseudo
//! console stays open until it is closed). The ending thread waits for the output to go quiet
//! before it closes the terminal, then for the read to reach the end.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use shellwright_io::lock;

use super::output::PtyOutput;

/// The run's output, shared by the thread that reads it and the thread that ends the run.
pub(super) struct Delivery {
    state: Mutex<DeliveryState>,
    changed: Condvar,
}

struct DeliveryState {
    output: Box<dyn PtyOutput>,
    ended: bool,
    /// When the last chunk came.
    last: Instant,
}

impl Delivery {
    pub(super) fn new(output: Box<dyn PtyOutput>) -> Self {
        Self {
            state: Mutex::new(DeliveryState {
                output,
                ended: false,
                last: Instant::now(),
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, DeliveryState> {
        lock(&self.state)
    }

    /// Hands a chunk to the output; false once the run has ended its read.
    pub(super) fn deliver(&self, chunk: &[u8]) -> bool {
        let mut state = self.lock();
        if state.ended {
            return false;
        }
        state.output.bytes(chunk);
        state.last = Instant::now();
        self.changed.notify_all();
        true
    }

    /// Finishes the output (once).
    pub(super) fn end(&self) {
        let mut state = self.lock();
        if !state.ended {
            state.ended = true;
            state.output.finish();
        }
        self.changed.notify_all();
    }

    /// Returns once no output has come for `quiet` since `since` or the last chunk, the output
    /// has ended, or `deadline` has passed.
    pub(super) fn wait_quiet(&self, since: Instant, quiet: Duration, deadline: Instant) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            let quiet_at = state.last.max(since) + quiet;
            if state.ended || now >= quiet_at || now >= deadline {
                return;
            }
            let wait = quiet_at.min(deadline) - now;
            state = match self.changed.wait_timeout(state, wait) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Returns once the output has ended or `deadline` has passed.
    pub(super) fn wait_end(&self, deadline: Instant) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            if state.ended || now >= deadline {
                return;
            }
            state = match self.changed.wait_timeout(state, deadline - now) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// What a recorder got, and how many times it was finished.
    type Seen = Arc<Mutex<(Vec<u8>, usize)>>;

    /// An output that records what it got.
    fn recorder() -> (Seen, Box<dyn PtyOutput>) {
        struct Recorder(Seen);
        impl PtyOutput for Recorder {
            fn bytes(&mut self, chunk: &[u8]) {
                lock(&self.0).0.extend_from_slice(chunk);
            }
            fn finish(&mut self) {
                lock(&self.0).1 += 1;
            }
        }
        let seen = Arc::new(Mutex::new((Vec::new(), 0)));
        (seen.clone(), Box::new(Recorder(seen)))
    }

    #[test]
    fn output_is_finished_once_and_nothing_reaches_it_after_the_end() {
        let (seen, output) = recorder();
        let delivery = Delivery::new(output);
        assert!(delivery.deliver(b"one "));
        assert!(delivery.deliver(b"two"));
        delivery.end();
        delivery.end();
        assert!(!delivery.deliver(b" three"));
        assert_eq!(*lock(&seen), (b"one two".to_vec(), 1));
    }

    #[test]
    fn a_quiet_output_is_waited_for_from_the_exit_not_from_its_last_chunk() {
        let (_, output) = recorder();
        let delivery = Delivery::new(output);
        delivery.deliver(b"long ago");
        std::thread::sleep(Duration::from_millis(30));
        let exited = Instant::now();
        delivery.wait_quiet(
            exited,
            Duration::from_millis(40),
            exited + Duration::from_secs(5),
        );
        assert!(exited.elapsed() >= Duration::from_millis(40));
        assert!(exited.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn output_that_keeps_coming_holds_the_wait_until_it_stops() {
        let (seen, output) = recorder();
        let delivery = Arc::new(Delivery::new(output));
        let writer = Arc::clone(&delivery);
        let exited = Instant::now();
        let chunks = std::thread::spawn(move || {
            for _ in 0..10 {
                std::thread::sleep(Duration::from_millis(10));
                writer.deliver(b".");
            }
            Instant::now()
        });
        // Far longer than the gaps, however loaded the machine: the wait ends after the last.
        let quiet = Duration::from_millis(500);
        delivery.wait_quiet(exited, quiet, exited + Duration::from_secs(10));
        let returned = Instant::now();
        let last = chunks.join().unwrap();
        assert_eq!(lock(&seen).0.len(), 10);
        assert!(returned >= last + quiet);
    }

    #[test]
    fn output_that_never_stops_holds_the_wait_until_the_deadline() {
        let (_, output) = recorder();
        let delivery = Arc::new(Delivery::new(output));
        let busy = Arc::clone(&delivery);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop_busy = Arc::clone(&stop);
        let stream = std::thread::spawn(move || {
            while !stop_busy.load(std::sync::atomic::Ordering::Relaxed) {
                busy.deliver(b".");
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let started = Instant::now();
        let deadline = Duration::from_secs(1);
        delivery.wait_quiet(started, Duration::from_millis(300), started + deadline);
        let waited = started.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        stream.join().unwrap();
        assert!(waited >= deadline, "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
    }

    #[test]
    fn the_end_wakes_both_waits_at_once() {
        let (_, output) = recorder();
        let delivery = Arc::new(Delivery::new(output));
        let ender = Arc::clone(&delivery);
        let started = Instant::now();
        let end = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            ender.end();
        });
        delivery.wait_end(started + Duration::from_secs(5));
        delivery.wait_quiet(
            started,
            Duration::from_secs(5),
            started + Duration::from_secs(5),
        );
        end.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn waiting_for_the_end_gives_up_at_the_deadline() {
        let (_, output) = recorder();
        let delivery = Delivery::new(output);
        let started = Instant::now();
        delivery.wait_end(started + Duration::from_millis(30));
        assert!(started.elapsed() >= Duration::from_millis(30));
    }
}
