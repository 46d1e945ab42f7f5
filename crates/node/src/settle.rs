//! [`spawn_settled`]: the one way an async export runs its work and settles its promise.
//!
//! The work runs on the Tokio runtime; back on the JS thread the promise settles — rejected with
//! what `onChunk` threw if it threw, else with the work's result mapped by the caller (an abort
//! rejection gets the signal's `reason` as its `cause`) — and the AbortSignal listener is removed,
//! whatever the outcome. A panic in the work or in the
//! settling is caught and becomes a rejection with `ERR_INTERNAL_ASSERTION` — never an abort of
//! the host process.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use napi::bindgen_prelude::{Env, PromiseRaw, Result, ToNapiValue};

use crate::abort::AbortWatch;
use crate::delivery::ChunkThrows;
use crate::error::{JsFailure, Settlement};

/// The JS-side handles of one call, released when it settles.
#[derive(Default)]
pub struct CallScope {
    pub watch: Option<AbortWatch>,
    pub throws: Option<ChunkThrows>,
}

/// Runs `work` and settles the returned promise with `finish(output)` (see the module doc).
pub fn spawn_settled<'env, T, V, F, M>(
    env: &'env Env,
    scope: CallScope,
    work: F,
    finish: M,
) -> Result<PromiseRaw<'env, Settlement<V>>>
where
    T: Send + 'static,
    V: ToNapiValue + 'static,
    F: Future<Output = T> + Send + 'static,
    M: FnOnce(T) -> std::result::Result<V, JsFailure> + 'static,
{
    let work = CatchPanic(Box::pin(work));
    env.spawn_future_with_callback(async move { Ok(work.await) }, move |env, outcome| {
        let settle = || {
            let settlement = if let Some(thrown) = scope.throws.as_ref().and_then(ChunkThrows::take)
            {
                Settlement::Thrown(thrown)
            } else {
                match outcome
                    .map_err(|panic| JsFailure::panic(&panic))
                    .and_then(finish)
                {
                    Ok(value) => Settlement::Value(value),
                    Err(failure) if failure.is_abort() => {
                        // Like Node's own APIs: the signal's reason is the rejection's cause.
                        match scope.watch.as_ref().and_then(|watch| watch.reason(env)) {
                            Some(reason) => Settlement::Aborted(failure, reason),
                            None => Settlement::Failed(failure),
                        }
                    }
                    Err(failure) => Settlement::Failed(failure),
                }
            };
            if let Some(watch) = scope.watch {
                watch.detach(env);
            }
            settlement
        };
        Ok(catch_unwind(AssertUnwindSafe(settle))
            .unwrap_or_else(|panic| Settlement::Failed(JsFailure::panic(&panic_message(&*panic)))))
    })
}

/// A future whose panics become `Err(message)`.
struct CatchPanic<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchPanic<F> {
    type Output = std::result::Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic_message(&*panic))),
        }
    }
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}
