//! [`ChunkSink`]: streams text from any thread to a JS `(chunk: string) => void` callback, and
//! knows when all of it has reached the callback.
//!
//! A run's promise must resolve only after the callback has seen every chunk. Node gives no
//! ordering between a threadsafe function's queue and a promise's resolution, so each call counts
//! itself complete on the JS thread once it has passed its text on, and [`ChunkSink::flush`] waits
//! until every issued call has completed.
//!
//! Text sent while a call is already queued joins that call's chunk instead of queueing another:
//! the chunk is taken on the JS thread, at the moment of the call. A fast producer then costs one
//! callback per JS turn rather than one per read, and a slow callback sees larger chunks instead
//! of a growing queue of small ones. Text is kept as sent ([`SharedText`], which a transcript may
//! share) and joined on the JS thread only when a call finds more than one chunk waiting.
//!
//! On the JS thread, [`ChunkSink::send_now`] passes text to the callback before it returns, with
//! no call queued: for a producer that runs on the JS thread itself (a terminal read from Node's
//! event loop).
//!
//! A callback that throws stops the run: the exception is caught, the run's [`CancelToken`] is
//! cancelled, no later chunk is delivered, and the run's promise rejects with exactly the value
//! thrown ([`ChunkThrows`] keeps it until then) — as `await` of a loop whose body threw would.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use std::borrow::Cow;
use std::cell::RefCell;
use std::ptr;
use std::rc::Rc;

use napi::bindgen_prelude::{
    Env, Function, FunctionRef, JsObjectValue, JsValue, Object, ObjectRef, Result, Unknown,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{JsString, ValueType, check_status, sys};
use shellwright_io::{SharedText, lock};
use shellwright_proc::{CancelReason, CancelToken};
use tokio::sync::Notify;

use crate::options::type_error;

/// The user's callback; only its raw value is used, to call it with exceptions caught.
type UserCallback = FunctionRef<String, Unknown<'static>>;
/// Calls carry no data: the chunk is whatever text is pending when the call reaches JS.
type ChunkTsfn = ThreadsafeFunction<(), (), (), napi::Status, false>;

/// The most UTF-8 bytes passed to the callback in one string. Pending text can grow to megabytes
/// while the JS thread is busy; handed over whole, each string would be allocated in V8's
/// large-object space, which costs more than the extra calls (Node's own streams read 64 KiB).
const MAX_JS_CHUNK: usize = 64 << 10;

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    issued: AtomicU64,
    completed: AtomicU64,
    progress: Notify,
}

#[derive(Default)]
struct Pending {
    chunks: Vec<SharedText>,
    /// A call is queued whose JS side has not taken `chunks` yet.
    queued: bool,
    /// [`ChunkSink::send_now`] is producing on the JS thread and delivers what it sent itself.
    direct: bool,
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        lock(&self.pending)
    }

    /// Runs on the JS thread when a queued call is made: hands over everything pending.
    fn take(&self) -> Vec<SharedText> {
        let mut pending = self.pending();
        pending.queued = false;
        std::mem::take(&mut pending.chunks)
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
    /// The function the threadsafe function calls, for [`send_now`](Self::send_now) to call
    /// itself.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    deliver: Option<Arc<FunctionRef<(), ()>>>,
    shared: Arc<Shared>,
}

impl ChunkSink {
    fn silent() -> Self {
        Self::default()
    }

    /// Wraps an optional JS argument named `name`: undefined/null give a silent sink; anything
    /// but a function is a `TypeError` naming the argument. A throw from the callback cancels
    /// `stop` (see the module doc). The PTY glue's, so unused in Windows builds.
    #[cfg_attr(windows, allow(dead_code))]
    pub fn from_arg(
        env: &Env,
        value: Option<Unknown<'_>>,
        name: &str,
        stop: &CancelToken,
    ) -> Result<(Self, ChunkThrows)> {
        Self::from_callback(env, callback_arg(env, value, name)?, stop)
    }

    /// [`from_arg`](Self::from_arg) for a callback already read with [`callback_arg`].
    pub fn from_callback(
        env: &Env,
        callback: Option<Function<'_, String, Unknown<'static>>>,
        stop: &CancelToken,
    ) -> Result<(Self, ChunkThrows)> {
        let throws = ChunkThrows::default();
        match callback {
            None => Ok((Self::silent(), throws)),
            Some(callback) => {
                let shared = Arc::new(Shared::default());
                let deliver = deliver_function(
                    env,
                    callback.create_ref()?,
                    Arc::clone(&shared),
                    &throws,
                    stop,
                )?;
                let tsfn = deliver
                    .build_threadsafe_function::<()>()
                    .build_callback(|_ctx| Ok(()))?;
                Ok((
                    Self {
                        tsfn: Some(Arc::new(tsfn)),
                        deliver: Some(Arc::new(deliver.create_ref()?)),
                        shared,
                    },
                    throws,
                ))
            }
        }
    }

    /// Lets Node exit while this sink lives, as an event listener does: for a callback that is not
    /// part of a pending operation (a mirror's view). Call it before cloning the sink.
    #[cfg_attr(windows, allow(dead_code))]
    pub fn unref(&mut self, env: &Env) -> Result<()> {
        if let Some(tsfn) = self.tsfn.as_mut().and_then(Arc::get_mut) {
            // `napi_unref_threadsafe_function` is exactly this. napi-rs deprecates its wrapper in
            // favour of building a weak function, which is a different type: one sink type for
            // both kinds of callback is worth the allowance.
            #[allow(deprecated)]
            tsfn.unref(env)?;
        }
        Ok(())
    }

    /// Hands `chunk` to the callback without blocking: it joins the pending call's chunk, or a
    /// new call is queued. Empty chunks are not sent.
    pub fn send(&self, chunk: SharedText) {
        let Some(tsfn) = &self.tsfn else { return };
        if chunk.is_empty() {
            return;
        }
        {
            let mut pending = self.shared.pending();
            pending.chunks.push(chunk);
            if pending.queued || pending.direct {
                return;
            }
            pending.queued = true;
        }
        self.shared.issued.fetch_add(1, Ordering::AcqRel);
        // A plain call: the deliver function counts it complete (no completion closure to
        // allocate and run per call).
        let status = tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        if status != napi::Status::Ok {
            // The environment is shutting down: nobody is left to deliver to.
            self.shared.take();
            self.shared.complete_one();
        }
    }

    /// On the JS thread: runs `produce`, and passes the text it sent (and any still pending) to the
    /// callback before returning, rather than a turn of the event loop later through the queue.
    /// Text sent meanwhile from other threads joins it. A throw from the callback is handled as
    /// for a queued call (see the module doc).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn send_now<T>(&self, env: &Env, produce: impl FnOnce() -> T) -> T {
        let Some(deliver) = &self.deliver else {
            return produce();
        };
        let producing = Producing::begin(&self.shared);
        let produced = produce();
        if producing.end() {
            // Counted as a call, which the deliver function completes.
            self.shared.issued.fetch_add(1, Ordering::AcqRel);
            let called = deliver
                .borrow_back(env)
                .and_then(|function| call_plain(env.raw(), function.raw(), &[]));
            if called.is_err() {
                // The environment is going away: nobody is left to deliver to.
                self.shared.take();
                self.shared.complete_one();
            }
        }
        produced
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

/// [`ChunkSink::send_now`]'s producer at work: sends only join the pending text until it ends,
/// and end it does, a panic in the producer included (else every later send would wait for a
/// delivery that never comes).
struct Producing<'a>(&'a Shared);

impl<'a> Producing<'a> {
    fn begin(shared: &'a Shared) -> Self {
        shared.pending().direct = true;
        Self(shared)
    }

    /// Ends production; returns whether text is pending. One lock for both: text sent after it
    /// queues a call of its own.
    fn end(self) -> bool {
        let mut pending = self.0.pending();
        pending.direct = false;
        !pending.chunks.is_empty()
    }
}

impl Drop for Producing<'_> {
    fn drop(&mut self) {
        // After `end`, a no-op; after a panic, the end.
        self.0.pending().direct = false;
    }
}

/// What a chunk callback threw, kept on the JS thread until the run settles.
#[derive(Clone, Default)]
pub struct ChunkThrows {
    /// A holder object whose `value` is the thrown value (a reference can only point at an
    /// object, and a callback may throw anything).
    thrown: Rc<RefCell<Option<ObjectRef<false>>>>,
}

impl ChunkThrows {
    fn record(&self, env: &Env, thrown: sys::napi_value) -> Result<()> {
        let mut holder = Object::new(env)?;
        // SAFETY: `thrown` is the live exception value just taken from `env`.
        holder.set_named_property("value", unsafe {
            Unknown::from_raw_unchecked(env.raw(), thrown)
        })?;
        *self.thrown.borrow_mut() = Some(holder.create_ref()?);
        Ok(())
    }

    fn has_thrown(&self) -> bool {
        self.thrown.borrow().is_some()
    }

    /// The value the callback threw, if it threw.
    pub fn take(&self) -> Option<ThrownValue> {
        self.thrown.borrow_mut().take().map(ThrownValue)
    }
}

/// A value thrown by a JS callback, to reject a promise with.
pub struct ThrownValue(ObjectRef<false>);

impl ThrownValue {
    /// The thrown value itself; releases the reference.
    pub fn into_value(self, env: &Env) -> Result<sys::napi_value> {
        let value = self
            .0
            .get_value(env)?
            .get_named_property::<Unknown>("value")?;
        self.0.unref(env)?;
        Ok(value.raw())
    }
}

/// An optional callback argument named `name`: undefined/null give `None`; anything but a
/// function is a `TypeError` naming the argument.
pub fn callback_arg<'env>(
    env: &Env,
    value: Option<Unknown<'env>>,
    name: &str,
) -> Result<Option<Function<'env, String, Unknown<'static>>>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        // SAFETY: checked to be a function.
        ValueType::Function => Ok(Some(unsafe { value.cast()? })),
        _ => Err(type_error(env, format!("{name} must be a function"))),
    }
}

/// `text` as a JS string. ASCII text, most of what programs print, is handed over as Latin-1,
/// which V8 copies as it is; V8's UTF-8 decoder would read it twice (to size it, then to copy).
/// Other text is converted to UTF-16 here, which copies its runs of ASCII a word at a time where
/// V8's decoder steps every byte after the first non-ASCII one through a state machine, twice;
/// from UTF-16, V8 still makes a one-byte string when every character fits in Latin-1.
pub fn js_string<'env>(env: &'env Env, text: &str) -> Result<JsString<'env>> {
    if text.is_ascii() {
        return env.create_string_latin1(text.as_bytes());
    }
    // No character takes more UTF-16 units than UTF-8 bytes, so this is room enough.
    let mut utf16 = vec![0; text.len()];
    let units = encoding_rs::mem::convert_str_to_utf16(text, &mut utf16);
    env.create_string_utf16(&utf16[..units])
}

/// Calls `callback` with `text`, in pieces of at most [`MAX_JS_CHUNK`] bytes cut between
/// characters, until one call throws; returns what it threw. Called from inside a JS function's
/// callback, whose handle scope ends with it: a text of one piece needs no scope of its own.
pub fn deliver_text(
    env: &Env,
    callback: sys::napi_value,
    text: &str,
) -> Result<Option<sys::napi_value>> {
    if text.len() <= MAX_JS_CHUNK {
        return js_string(env, text).map(|chunk| call_catching(env, callback, chunk.to_unknown()));
    }
    for piece in shellwright_io::utf8::pieces(text, MAX_JS_CHUNK) {
        if let Some(thrown) = deliver_piece(env, callback, piece)? {
            return Ok(Some(thrown));
        }
    }
    Ok(None)
}

/// Calls `callback` with one piece, in a handle scope of its own: once the call returns, the
/// piece's string is garbage, rather than held until every piece is delivered (where each
/// collection meanwhile would copy the strings it still holds).
fn deliver_piece(
    env: &Env,
    callback: sys::napi_value,
    piece: &str,
) -> Result<Option<sys::napi_value>> {
    let raw_env = env.raw();
    let mut scope = ptr::null_mut();
    // SAFETY: Node-API calls on the live environment; the scope is closed below on every path.
    check_status!(unsafe { sys::napi_open_escapable_handle_scope(raw_env, &mut scope) })?;
    let thrown =
        js_string(env, piece).map(|chunk| call_catching(env, callback, chunk.to_unknown()));
    let thrown = match thrown {
        Ok(Some(thrown)) => {
            let mut escaped = ptr::null_mut();
            // SAFETY: `thrown` is a value of this scope; escaping it keeps it for the caller.
            let status = unsafe { sys::napi_escape_handle(raw_env, scope, thrown, &mut escaped) };
            check_status!(status).map(|()| Some(escaped))
        }
        other => other,
    };
    // SAFETY: the scope opened above, closed once.
    check_status!(unsafe { sys::napi_close_escapable_handle_scope(raw_env, scope) })?;
    thrown
}

/// The JS function the threadsafe function calls: it takes the pending text and calls `callback`
/// with it, in pieces of at most [`MAX_JS_CHUNK`] bytes cut between characters, catching what it
/// throws, and then counts the call complete. After a throw it delivers nothing more.
fn deliver_function<'env>(
    env: &'env Env,
    callback: UserCallback,
    shared: Arc<Shared>,
    throws: &ChunkThrows,
    stop: &CancelToken,
) -> Result<Function<'env, (), ()>> {
    let throws = throws.clone();
    let stop = stop.clone();
    env.create_function_from_closure("deliverChunk", move |ctx| {
        let chunks = shared.take();
        let text = match chunks.as_slice() {
            // Taken already by a delivery on the JS thread (`send_now`).
            [] => Cow::Borrowed(""),
            [one] => Cow::Borrowed(&**one),
            many => Cow::Owned(many.iter().map(|chunk| &**chunk).collect::<String>()),
        };
        if !throws.has_thrown() && !text.is_empty() {
            // Dropped, not returned: an error here means the environment is going away, and
            // nobody is left to wait for this text. Returned, it would reach the threadsafe
            // function as a thrown exception, which napi-rs reports as uncaught.
            let _ = deliver_once(ctx.env, &callback, &text, &throws, &stop);
        }
        // Counted whatever happened.
        shared.complete_one();
        Ok(())
    })
}

/// Passes `text` to `callback`; a throw is recorded in `throws` and stops the run.
fn deliver_once(
    env: &Env,
    callback: &UserCallback,
    text: &str,
    throws: &ChunkThrows,
    stop: &CancelToken,
) -> Result<()> {
    let callback = callback.borrow_back(env)?;
    if let Some(thrown) = deliver_text(env, callback.raw(), text)? {
        throws.record(env, thrown)?;
        stop.cancel(CancelReason::Aborted);
    }
    Ok(())
}

/// Calls the JS function `function` with `args` and `undefined` as `this`; returns what it
/// returned. A throw is left pending, as an error of status `PendingException`.
pub fn call_plain(
    env: sys::napi_env,
    function: sys::napi_value,
    args: &[sys::napi_value],
) -> Result<sys::napi_value> {
    let mut undefined = ptr::null_mut();
    let mut returned = ptr::null_mut();
    // SAFETY: Node-API calls on the live environment; the values are values of it (the caller's
    // contract, as for every `sys::napi_value` in this crate).
    unsafe {
        check_status!(sys::napi_get_undefined(env, &mut undefined))?;
        check_status!(sys::napi_call_function(
            env,
            undefined,
            function,
            args.len(),
            args.as_ptr(),
            &mut returned
        ))?;
    }
    Ok(returned)
}

/// Calls `callback(arg)` with `undefined` as `this`, catching what it throws: returns the thrown
/// value, taken out of the environment, or `None` when it returned.
pub fn call_catching(
    env: &Env,
    callback: sys::napi_value,
    arg: Unknown<'_>,
) -> Option<sys::napi_value> {
    let raw_env = env.raw();
    match call_plain(raw_env, callback, &[arg.raw()]) {
        Err(error) if error.status == napi::Status::PendingException => {}
        _ => return None,
    }
    let mut thrown = ptr::null_mut();
    // SAFETY: an exception is pending; this takes it out of the environment.
    unsafe { sys::napi_get_and_clear_last_exception(raw_env, &mut thrown) };
    Some(thrown)
}
