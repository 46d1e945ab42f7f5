//! [`drive`]: runs a future on the threads that wake it, instead of handing it to a runtime.
//!
//! The future is polled first on the calling thread, then by whichever thread wakes it, right in
//! the wake — a session thread sending a run's answer, the JS thread that delivered a run's last
//! chunk — and what it returns is passed on from there. A runtime's task would be woken on a
//! worker first, one more thread hand-off between the end of the work and its promise, which
//! on a 2-core virtual machine costs tens of microseconds. This suits work that is mostly waiting
//! for answers from other threads and does little once it has them; a future woken on a thread
//! does its next stretch of work on that thread.
//!
//! Polls never overlap: a wake that finds the future being polled leaves a flag, and the poller
//! polls again before it lets go, so no wake is lost. Each poll runs in the Node-API runtime's
//! context, where Tokio timers and tasks the future makes are registered, and outside Tokio's
//! cooperative budget, which a poll inside another task's wake would otherwise share (an
//! exhausted budget answers `Pending` and wakes at once, for ever).

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::task::{Context, Poll, Wake, Waker};

use tokio::runtime::Handle;

use crate::settle::panic_message;

type Work<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Done<T> = Box<dyn FnOnce(Result<T, String>) + Send>;

/// Polls `work` until it is ready, on the threads that wake it (see the module doc), then calls
/// `done` with its output — or with the message of a panic in a poll, after which the future is
/// dropped.
pub fn drive<T: Send + 'static>(
    work: impl Future<Output = T> + Send + 'static,
    done: impl FnOnce(Result<T, String>) + Send + 'static,
) {
    let driven = Arc::new(Driven {
        slot: Mutex::new(Some((
            Box::pin(tokio::task::unconstrained(work)),
            Box::new(done),
        ))),
        woken: AtomicBool::new(true),
        runtime: napi::bindgen_prelude::within_runtime_if_available(Handle::try_current).ok(),
    });
    driven.run();
}

struct Driven<T> {
    /// The future and what its output goes to, until it is ready.
    slot: Mutex<Option<(Work<T>, Done<T>)>>,
    /// Woken since the last poll began: whoever holds `slot` polls again before it lets go.
    woken: AtomicBool,
    /// The Node-API runtime the work was started in, entered for every poll. Kept from the start:
    /// the work's timers are that runtime's, and the work may end after Node-API has shut its
    /// runtime down (the last environment using the addon ended, a worker's), when looking it up
    /// afresh would fail.
    runtime: Option<Handle>,
}

impl<T: Send + 'static> Driven<T> {
    /// Polls while there are wakes to answer, unless another thread is polling (it answers them).
    fn run(self: &Arc<Self>) {
        loop {
            let mut slot = match self.slot.try_lock() {
                Ok(slot) => slot,
                Err(TryLockError::WouldBlock) => return,
                // A panic is caught inside the poll, so this takes nothing half-done.
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            };
            if !self.woken.swap(false, Ordering::AcqRel) {
                drop(slot);
                // A wake that came after the swap but found the slot still held left it to us.
                if self.woken.load(Ordering::Acquire) {
                    continue;
                }
                return;
            }
            let Some((work, _)) = slot.as_mut() else {
                return;
            };
            let waker = Waker::from(Arc::clone(self));
            let outcome = match poll_in_runtime(self.runtime.as_ref(), work, &waker) {
                Ok(Poll::Pending) => continue,
                Ok(Poll::Ready(output)) => Ok(output),
                Err(panic) => Err(panic),
            };
            let Some((work, done)) = slot.take() else {
                return;
            };
            drop(slot);
            drop(work);
            // A panic in `done` must not unwind into whoever woke the future.
            let _ = catch_unwind(AssertUnwindSafe(|| done(outcome)));
            return;
        }
    }
}

impl<T: Send + 'static> Wake for Driven<T> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.run();
    }
}

/// One poll in `runtime`'s context; a panic (in the future, or in a timer of a runtime that has
/// shut down) becomes its message.
fn poll_in_runtime<T>(
    runtime: Option<&Handle>,
    work: &mut Work<T>,
    waker: &Waker,
) -> Result<Poll<T>, String> {
    let mut context = Context::from_waker(waker);
    catch_unwind(AssertUnwindSafe(|| {
        let _entered = runtime.map(Handle::enter);
        work.as_mut().poll(&mut context)
    }))
    .map_err(|panic| panic_message(&*panic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;
    use std::thread;

    /// The thread `done` ran on and what it got.
    type Record<T> = (thread::ThreadId, Result<T, String>);

    /// A `done` that records where it ran and what it got.
    fn recorder<T: Send + 'static>() -> (
        impl FnOnce(Result<T, String>) + Send + 'static,
        mpsc::Receiver<Record<T>>,
    ) {
        let (tx, rx) = mpsc::channel();
        let done = move |outcome| {
            let _ = tx.send((thread::current().id(), outcome));
        };
        (done, rx)
    }

    #[test]
    fn a_ready_future_is_done_on_the_calling_thread() {
        let (done, rx) = recorder();
        drive(async { 7 }, done);
        let (thread, outcome) = rx.try_recv().expect("done at once");
        assert_eq!((thread, outcome), (thread::current().id(), Ok(7)));
    }

    #[test]
    fn a_future_is_finished_by_the_thread_that_wakes_it() {
        let (answer_tx, answer) = tokio::sync::oneshot::channel::<&str>();
        let (done, rx) = recorder();
        drive(async move { answer.await.unwrap_or("dropped") }, done);
        assert!(
            rx.try_recv().is_err(),
            "nothing to finish before the answer"
        );
        let answering = thread::spawn(move || {
            let _ = answer_tx.send("answer");
            thread::current().id()
        });
        let answered_on = answering.join().expect("answering thread");
        let (thread, outcome) = rx.try_recv().expect("done within the wake");
        assert_eq!((thread, outcome), (answered_on, Ok("answer")));
    }

    #[test]
    fn a_panic_in_a_poll_becomes_its_message() {
        let (done, rx) = recorder::<()>();
        drive(async { panic!("broken future") }, done);
        let (_, outcome) = rx.try_recv().expect("done");
        assert_eq!(outcome, Err("broken future".to_string()));
    }

    /// Ready once `target` wakes were counted; each poll that is not ready waits for the next.
    struct Counted {
        wakes: Arc<AtomicUsize>,
        target: usize,
        wakers: Arc<Mutex<Vec<Waker>>>,
    }

    impl Future for Counted {
        type Output = usize;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            // Registered before the count is read, as a real future must.
            self.wakers.lock().expect("wakers").push(cx.waker().clone());
            if self.wakes.load(Ordering::SeqCst) >= self.target {
                Poll::Ready(self.target)
            } else {
                Poll::Pending
            }
        }
    }

    #[test]
    fn many_threads_waking_at_once_finish_the_future_exactly_once() {
        for round in 0..200 {
            let wakes = Arc::new(AtomicUsize::new(0));
            let wakers = Arc::new(Mutex::new(Vec::new()));
            let target = 4;
            let (done, rx) = recorder();
            drive(
                Counted {
                    wakes: Arc::clone(&wakes),
                    target,
                    wakers: Arc::clone(&wakers),
                },
                done,
            );
            let wakers_now: Vec<Waker> = wakers.lock().expect("wakers").clone();
            let threads: Vec<_> = (0..target)
                .map(|_| {
                    let wakes = Arc::clone(&wakes);
                    let waker = wakers_now[0].clone();
                    thread::spawn(move || {
                        wakes.fetch_add(1, Ordering::SeqCst);
                        waker.wake();
                    })
                })
                .collect();
            for thread in threads {
                thread.join().expect("waking thread");
            }
            let (_, outcome) = rx
                .try_recv()
                .unwrap_or_else(|_| panic!("round {round}: lost"));
            assert_eq!(outcome, Ok(target));
            assert!(rx.try_recv().is_err(), "round {round}: done twice");
        }
    }

    /// Wakes itself `times` times from inside its own poll before it is ready.
    struct SelfWaking {
        times: usize,
    }

    impl Future for SelfWaking {
        type Output = &'static str;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'static str> {
            if self.times == 0 {
                return Poll::Ready("done");
            }
            self.times -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn a_future_that_wakes_itself_in_its_poll_is_polled_again() {
        let (done, rx) = recorder();
        drive(SelfWaking { times: 3 }, done);
        let (thread, outcome) = rx.try_recv().expect("done");
        assert_eq!((thread, outcome), (thread::current().id(), Ok("done")));
    }
}
