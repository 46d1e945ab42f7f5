//! [`ChunkSink`]: streams text chunks from any thread to a JS `(chunk: string) => void` callback,
//! and knows when every chunk has reached it.
//!
//! A run's promise must resolve only after the callback has seen every chunk (DESIGN §1). Node
//! gives no ordering between a threadsafe function's queue and a promise's resolution, so each
//! chunk is sent with a completion callback that counts it as delivered, and [`ChunkSink::flush`]
//! waits until the delivered count catches up with the sent count.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
type ChunkTsfn = ThreadsafeFunction<String, UnknownReturnValue, String, napi::Status, false>;

#[derive(Default)]
struct Counters {
    sent: AtomicU64,
    delivered: AtomicU64,
    progress: Notify,
}

/// A cloneable handle that delivers chunks to an optional JS callback.
#[derive(Clone, Default)]
pub struct ChunkSink {
    tsfn: Option<Arc<ChunkTsfn>>,
    counters: Arc<Counters>,
}

impl ChunkSink {
    /// Wraps `callback`; `None` gives a sink that drops every chunk.
    pub fn new(callback: Option<ChunkCallback<'_>>) -> Result<Self> {
        let tsfn = match callback {
            Some(callback) => Some(Arc::new(
                callback.build_threadsafe_function::<String>().build()?,
            )),
            None => None,
        };
        Ok(Self {
            tsfn,
            counters: Arc::default(),
        })
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

    /// Queues `chunk` for the callback without blocking. Empty chunks are not sent.
    pub fn send(&self, chunk: String) {
        let Some(tsfn) = &self.tsfn else { return };
        if chunk.is_empty() {
            return;
        }
        self.counters.sent.fetch_add(1, Ordering::AcqRel);
        let counters = Arc::clone(&self.counters);
        let status = tsfn.call_with_return_value(
            chunk,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |ret, _env| {
                counters.delivered.fetch_add(1, Ordering::AcqRel);
                counters.progress.notify_waiters();
                // A throwing callback becomes an uncaught exception, as a throwing event listener does.
                ret.map(|_| ())
            },
        );
        if status != napi::Status::Ok {
            // The environment is shutting down: nobody is left to deliver to.
            self.counters.delivered.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Resolves once every chunk sent so far has been passed to the callback.
    pub async fn flush(&self) {
        loop {
            let progressed = self.counters.progress.notified();
            if self.counters.delivered.load(Ordering::Acquire)
                >= self.counters.sent.load(Ordering::Acquire)
            {
                return;
            }
            progressed.await;
        }
    }
}
