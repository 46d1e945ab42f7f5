//! [`spawn_settled`]: the way an async export runs its work and settles its promise;
//! [`drive_settled`], the same for work that mostly waits on other threads (a queued shell run),
//! polled by the threads that wake it instead of a runtime worker; and [`DonePromises`] for work
//! already done on the JS thread (a run in place).
//!
//! The work runs on the Tokio runtime (or where it is woken); back on the JS thread (through the
//! environment's one threadsafe function, [`js_queue`](crate::js_queue)) the promise settles —
//! rejected with what `onChunk` threw if it threw, else with the work's result mapped by the
//! caller (an abort rejection gets the signal's `reason` as its `cause`) — and the AbortSignal
//! listener is removed, whatever the outcome. A panic in the work or in the settling is caught
//! and becomes a rejection with `ERR_INTERNAL_ASSERTION` — never an abort of the host process.

use std::any::Any;
use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use napi::bindgen_prelude::{
    Env, Function, FunctionRef, JsValue, PromiseRaw, Result, ToNapiValue, Unknown,
};
use napi::{JsError, check_status, sys};
use shellwright_io::{SharedText, lock};

use crate::abort::AbortWatch;
use crate::delivery::{ChunkThrows, call_plain, deliver_text};
use crate::error::{JsFailure, Settlement};
use crate::js_queue::JsSender;
use crate::names::Names;

/// The JS-side handles of one call, released when it settles.
#[derive(Default)]
pub struct CallScope {
    pub watch: Option<AbortWatch>,
    pub throws: Option<ChunkThrows>,
    pub in_flight: Option<InFlight>,
}

/// How many of an object's calls have not settled yet (counted and settled on the JS thread).
#[derive(Clone, Default)]
pub struct Unsettled(Arc<AtomicUsize>);

impl Unsettled {
    pub fn none(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }

    /// Counts one more call, until the returned handle is dropped (when the call settles).
    pub fn enter(&self) -> InFlight {
        self.0.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(&self.0))
    }
}

/// One unsettled call of an [`Unsettled`] count.
pub struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Promises for work already done on the JS thread (a run in place), each settled with its
/// outcome after its output was passed to its callback (when there is both) in a microtask — so
/// the callback is never called from inside the call that made the promise, and always before the
/// promise settles. A throw from the callback rejects the promise with the value thrown.
///
/// The microtask is V8's own: such a promise is resolved at once with a thenable, whose `then`
/// V8 calls in a microtask with the functions that settle the promise. The thenable is made once,
/// with its queue of deliveries — a function made per call (and the finalizer that frees its
/// closure) cost more than the rest of a builtin's run, and `queueMicrotask` wraps each callback
/// in an async resource. The microtasks run in the order they were queued, so each takes the
/// oldest delivery.
pub struct DonePromises<V> {
    /// Only the JS thread touches it, but a `Mutex` (not a `RefCell`): the `Shell` that holds
    /// this must be `Sync`, for its async methods.
    queue: Arc<Mutex<VecDeque<Delivery<V>>>>,
    /// `deliverOutput(resolve, reject)`, which settles the promise of the oldest delivery; it is
    /// its own thenable (its `then` is itself), so that one reference keeps it.
    thenable: FunctionRef<(), ()>,
}

/// One promise's output, callback and outcome, waiting for its microtask.
struct Delivery<V> {
    callback: FunctionRef<String, Unknown<'static>>,
    text: SharedText,
    outcome: std::result::Result<V, JsFailure>,
}

impl<V: ToNapiValue + Send + 'static> DonePromises<V> {
    pub fn new(env: &Env) -> Result<Self> {
        let queue: Arc<Mutex<VecDeque<Delivery<V>>>> = Arc::default();
        let pending = Arc::clone(&queue);
        let deliver = env.create_function_from_closure("deliverOutput", move |ctx| {
            let delivery = lock(&pending).pop_front();
            match delivery {
                Some(delivery) => {
                    let resolve = ctx.get::<Unknown>(0)?.raw();
                    let reject = ctx.get::<Unknown>(1)?.raw();
                    delivery.settle(ctx.env, resolve, reject)
                }
                None => Ok(()),
            }
        })?;
        // SAFETY: a Node-API call on the live environment; the function is a value of it.
        check_status!(unsafe {
            sys::napi_set_named_property(env.raw(), deliver.raw(), c"then".as_ptr(), deliver.raw())
        })?;
        Ok(Self {
            queue,
            thenable: deliver.create_ref()?,
        })
    }

    /// A promise settled with `outcome`, after `text` (when there is some) was passed to
    /// `callback` (see the type's doc).
    pub fn promise<'env>(
        &self,
        env: &'env Env,
        callback: Option<Function<'env, String, Unknown<'static>>>,
        text: Option<SharedText>,
        outcome: std::result::Result<V, JsFailure>,
    ) -> Result<PromiseRaw<'env, Settlement<V>>> {
        let (Some(callback), Some(text)) = (callback, text.filter(|text| !text.is_empty())) else {
            return already_settled(env, Settlement::from(outcome));
        };
        let (deferred, promise) = create_promise(env)?;
        lock(&self.queue).push_back(Delivery {
            callback: callback.create_ref()?,
            text,
            outcome,
        });
        let resolved = self.thenable.borrow_back(env).and_then(|thenable| {
            // SAFETY: `deferred` is settled exactly once, here; the thenable is a value of the
            // live environment.
            check_status!(unsafe {
                sys::napi_resolve_deferred(env.raw(), deferred, thenable.raw())
            })
        });
        if let Err(error) = resolved {
            // Not queued, so never to be taken: the promise is left pending, as the call throws.
            lock(&self.queue).pop_back();
            return Err(error);
        }
        Ok(PromiseRaw::new(env.raw(), promise))
    }
}

impl<V: ToNapiValue> Delivery<V> {
    /// Passes the text to the callback, then settles the promise with `resolve` or `reject` (the
    /// functions V8 passed to the thenable); whatever happens, it settles: a failure or a panic
    /// rejects it.
    fn settle(self, env: &Env, resolve: sys::napi_value, reject: sys::napi_value) -> Result<()> {
        let Self {
            callback,
            text,
            outcome,
        } = self;
        let delivered = catch_unwind(AssertUnwindSafe(|| {
            let function = callback.borrow_back(env)?;
            deliver_text(env, function.raw(), &text)
        }));
        drop(callback);
        let settlement = match delivered {
            Ok(Ok(Some(thrown))) => return call_plain(env.raw(), reject, &[thrown]).map(drop),
            Ok(Ok(None)) => Settlement::from(outcome),
            Ok(Err(error)) => Settlement::Failed(JsFailure::panic(&format!(
                "delivering the output failed: {error}"
            ))),
            Err(panic) => Settlement::Failed(JsFailure::panic(&panic_message(&*panic))),
        };
        // SAFETY: the settlement converts in the live environment of this call. A failure is a
        // rejected promise, which the promise resolved with it follows.
        let value = unsafe { Settlement::to_napi_value(env.raw(), settlement)? };
        call_plain(env.raw(), resolve, &[value]).map(drop)
    }
}

/// A promise settled with `settlement` (a failure converts to a rejected promise, which
/// `Promise.resolve` hands back as it is).
fn already_settled<'env, V: ToNapiValue>(
    env: &'env Env,
    settlement: Settlement<V>,
) -> Result<PromiseRaw<'env, Settlement<V>>> {
    let resolve = Names::of(env)?.promise_resolve()?;
    // SAFETY: the settlement converts in the live environment of this call.
    let value = unsafe { Settlement::to_napi_value(env.raw(), settlement)? };
    let promise = call_plain(env.raw(), resolve, &[value])?;
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// A new promise and the deferred that settles it.
fn create_promise(env: &Env) -> Result<(sys::napi_deferred, sys::napi_value)> {
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    // SAFETY: a Node-API call on the live environment with valid out-pointers.
    check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
    Ok((deferred, promise))
}

/// Settles `deferred` with `settlement` (a failure converts to a rejected promise, which the
/// deferred then follows); should the conversion itself fail, the promise rejects with that error.
fn settle_deferred<V: ToNapiValue>(
    env: &Env,
    deferred: sys::napi_deferred,
    settlement: Settlement<V>,
) {
    // SAFETY: the settlement converts in the live environment; `deferred` is settled only here,
    // once: resolved with the value, or rejected when there is none.
    unsafe {
        match Settlement::to_napi_value(env.raw(), settlement) {
            Ok(value) => sys::napi_resolve_deferred(env.raw(), deferred, value),
            Err(error) => {
                let reason = JsError::from(error).into_value(env.raw());
                sys::napi_reject_deferred(env.raw(), deferred, reason)
            }
        };
    }
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
    let (pending, promise) = PendingPromise::new(env, scope, finish)?;
    let work = CatchPanic(Box::pin(work));
    // Detached: the task settles the promise itself. Should the runtime drop it unfinished (as
    // the environment ends), the promise's sender lets the event loop go.
    drop(napi::bindgen_prelude::spawn(async move {
        pending.settle(work.await);
    }));
    Ok(promise)
}

/// [`spawn_settled`] for work that mostly waits on other threads (a queued shell run): instead
/// of a runtime worker, the thread that wakes the work polls it ([`driven`]), and the one that
/// finishes it asks the JS thread to settle the promise — one thread hand-off fewer between the
/// end of the work and its promise.
///
/// [`driven`]: crate::driven
pub fn drive_settled<'env, T, V, F, M>(
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
    let (pending, promise) = PendingPromise::new(env, scope, finish)?;
    crate::driven::drive(work, move |outcome| pending.settle(outcome));
    Ok(promise)
}

/// A promise made on the JS thread, and what settles it there once its work gave an outcome,
/// from whichever thread that happens on. Dropped unsettled (its work was dropped unfinished, as
/// when the environment ends), it leaves the promise pending and lets the JS thread release what
/// it held.
struct PendingPromise<M: 'static> {
    /// Taken when the promise is settled; what is left is released by `drop`.
    parts: Option<(JsSender, OnJsThread<SettleParts<M>>)>,
}

/// The call's JS-side handles, what maps its work's output, and the promise's deferred.
type SettleParts<M> = (CallScope, M, sys::napi_deferred);

impl<M: 'static> PendingPromise<M> {
    fn new<'env, V>(
        env: &'env Env,
        scope: CallScope,
        finish: M,
    ) -> Result<(Self, PromiseRaw<'env, Settlement<V>>)> {
        let sender = JsSender::new(env)?;
        let (deferred, promise) = create_promise(env)?;
        let pending = Self {
            parts: Some((sender, OnJsThread((scope, finish, deferred)))),
        };
        Ok((pending, PromiseRaw::new(env.raw(), promise)))
    }

    /// Settles the promise on the JS thread (see [`settlement`]).
    fn settle<T, V>(mut self, outcome: std::result::Result<T, String>)
    where
        T: Send + 'static,
        V: ToNapiValue,
        M: FnOnce(T) -> std::result::Result<V, JsFailure>,
    {
        let Some((sender, parts)) = self.parts.take() else {
            return;
        };
        sender.send(move |env| {
            let (scope, finish, deferred) = parts.open();
            settle_deferred(env, deferred, settlement(env, scope, outcome, finish));
        });
    }
}

impl<M: 'static> Drop for PendingPromise<M> {
    fn drop(&mut self) {
        if let Some((sender, parts)) = self.parts.take() {
            sender.send(move |_| drop(parts.open()));
        }
    }
}

/// What settles a promise, carried to the JS thread by the thread that finished the work; it is
/// opened only in the job [`PendingPromise::settle`] sends, which runs on the JS thread.
struct OnJsThread<S>(S);

// SAFETY: the value is only moved on other threads, never used or dropped there: it is opened in
// a job of `JsSender`, which the environment's threadsafe function runs on the JS thread (a job
// that cannot run is forgotten, not dropped: see `js_queue`), whether the promise settles or its
// `PendingPromise` is dropped. napi-rs carries the callbacks of its own futures' promises to the
// JS thread the same way (`SendableResolver`).
unsafe impl<S> Send for OnJsThread<S> {}

impl<S> OnJsThread<S> {
    /// The value, on the JS thread. A method, not a pattern: a closure that destructured the
    /// wrapper would capture its fields one by one, each without the wrapper's `Send`.
    fn open(self) -> S {
        self.0
    }
}

/// How a call settles, once its work gave `outcome` (a panic in the work is `Err`): rejected with
/// what `onChunk` threw if it threw, else with `finish(output)` (an abort gets the signal's
/// reason as its cause); the AbortSignal listener is removed either way. A panic here rejects
/// too.
fn settlement<T, V, M>(
    env: &Env,
    scope: CallScope,
    outcome: std::result::Result<T, String>,
    finish: M,
) -> Settlement<V>
where
    M: FnOnce(T) -> std::result::Result<V, JsFailure>,
{
    let settle = || {
        let settlement = if let Some(thrown) = scope.throws.as_ref().and_then(ChunkThrows::take) {
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
    catch_unwind(AssertUnwindSafe(settle))
        .unwrap_or_else(|panic| Settlement::Failed(JsFailure::panic(&panic_message(&*panic))))
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
