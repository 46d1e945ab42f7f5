//! [`ChunkSink`]: streams text from any thread to a JS `(chunk: string) => void` callback, and
//! knows when all of it has reached the callback.
//!
//! A run's promise must resolve only after the callback has seen every chunk (DESIGN §1). Node
//! gives no ordering between a threadsafe function's queue and a promise's resolution, so each
//! call carries a completion callback that counts it, and [`ChunkSink::flush`] waits until every
//! issued call has completed.
//!
//! Text sent while a call is already queued joins that call's chunk instead of queueing another:
//! the chunk is taken on the JS thread, at the moment of the call. A fast producer then costs one
//! callback per JS turn rather than one per read, and a slow callback sees larger chunks instead
//! of a growing queue of small ones.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use napi::ValueType;
use napi::bindgen_prelude::{Env, Function, Result, Unknown};
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use tokio::sync::Notify;

use crate::options::type_error;

/// The JS callback as napi sees it: one string argument, return value ignored, errors thrown by
/// the callback surface as uncaught exceptions (CalleeHandled = false).
pub type ChunkCallback<'env> = Function<'env, String, UnknownReturnValue>;
/// Calls carry no data: the chunk is whatever text is pending when the call reaches JS.
type ChunkTsfn = ThreadsafeFunction<(), UnknownReturnValue, String, napi::Status, false>;

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    issued: AtomicU64,
    completed: AtomicU64,
    progress: Notify,
}

#[derive(Default)]
struct Pending {
    text: String,
    /// A call is queued whose JS side has not taken `text` yet.
    queued: bool,
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs on the JS thread when a queued call is made: hands over everything pending.
    fn take(&self) -> String {
        let mut pending = self.pending();
        pending.queued = false;
        std::mem::take(&mut pending.text)
    }

    fn complete_one(&self) {
        self.completed.fetch_add(1, Ordering::AcqRel);
        self.progress.notify_waiters();
    }
}

/// A cloneable handle that delivers text to an optional JS callback.
#[derive(Clone, Default)]
pub struct ChunkSink {
    tsfn: Option<Arc<ChunkTsfn>>,
    shared: Arc<Shared>,
}

impl ChunkSink {
    /// Wraps `callback`; `None` gives a sink that drops everything.
    pub fn new(callback: Option<ChunkCallback<'_>>) -> Result<Self> {
        let shared = Arc::new(Shared::default());
        let tsfn = match callback {
            Some(callback) => {
                let source = Arc::clone(&shared);
                let tsfn = callback
                    .build_threadsafe_function::<()>()
                    .build_callback(move |_ctx| Ok(source.take()))?;
                Some(Arc::new(tsfn))
            }
            None => None,
        };
        Ok(Self { tsfn, shared })
    }

    /// Wraps an optional JS argument named `name`: undefined/null give a silent sink; anything
    /// but a function is a `TypeError` naming the argument.
    pub fn from_arg(env: &Env, value: Option<Unknown<'_>>, name: &str) -> Result<Self> {
        match value {
            None => Self::new(None),
            Some(v) => match v.get_type()? {
                ValueType::Undefined | ValueType::Null => Self::new(None),
                // SAFETY: checked to be a function.
                ValueType::Function => Self::new(Some(unsafe { v.cast::<ChunkCallback>()? })),
                _ => Err(type_error(env, format!("{name} must be a function"))),
            },
        }
    }

    /// Hands `chunk` to the callback without blocking: it joins the pending call's chunk, or a
    /// new call is queued. Empty chunks are not sent.
    pub fn send(&self, chunk: String) {
        let Some(tsfn) = &self.tsfn else { return };
        if chunk.is_empty() {
            return;
        }
        {
            let mut pending = self.shared.pending();
            pending.text.push_str(&chunk);
            if pending.queued {
                return;
            }
            pending.queued = true;
        }
        self.shared.issued.fetch_add(1, Ordering::AcqRel);
        let shared = Arc::clone(&self.shared);
        let status = tsfn.call_with_return_value(
            (),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |ret, _env| {
                shared.complete_one();
                // A throwing callback becomes an uncaught exception, as a throwing event listener does.
                ret.map(|_| ())
            },
        );
        if status != napi::Status::Ok {
            // The environment is shutting down: nobody is left to deliver to.
            self.shared.take();
            self.shared.complete_one();
        }
    }

    /// Resolves once everything sent so far has been passed to the callback.
    pub async fn flush(&self) {
        loop {
            let progressed = self.shared.progress.notified();
            if self.shared.completed.load(Ordering::Acquire)
                >= self.shared.issued.load(Ordering::Acquire)
            {
                return;
            }
            progressed.await;
        }
    }
}
