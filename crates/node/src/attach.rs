//! `PtySession.attach` and `TerminalAttachment`: a viewer of a session's terminal for JS, over
//! `shellwright_pty::Viewer`, which owns the cut, the queue bound and resyncs.
//!
//! The viewer's sink queues one call of a threadsafe function (non-blocking) whenever something
//! waits; that call takes everything queued, on the JS thread, and hands it to `onData` — so a slow
//! callback gets larger chunks rather than a growing queue of calls, and the PTY's read loop never
//! waits for JS. The threadsafe function is released once the stream has ended (the run ended and
//! its last chunk was delivered) or the viewer detached, so an attachment keeps Node alive only
//! while it has something to deliver. A throw from `onData` is caught: the viewer is detached and
//! the error goes to `process.emitWarning`, never crashing the host. `onEnd` is called by the same
//! function, after the last `onData`, so it always comes last.

use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use napi::bindgen_prelude::{
    Env, Function, FunctionRef, JsObjectValue, JsValue, Object, Result, ToNapiValue, Unknown,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{ValueType, sys};
use napi_derive::napi;
use shellwright_io::lock;
use shellwright_pty::{RunEnd, Viewer, ViewerSink};

use crate::delivery::call_catching;
use crate::options::{is_absent, type_error};

type DataTsfn = ThreadsafeFunction<(), (), String, napi::Status, false>;
type CallbackRef = FunctionRef<Unknown<'static>, Unknown<'static>>;

/// What the attachment, its sink and its threadsafe function share.
#[derive(Default)]
struct Shared {
    /// Present until the stream ends or the viewer detaches.
    tsfn: Mutex<Option<Arc<DataTsfn>>>,
    /// Set right after attaching; the first call reaches JS only after that.
    viewer: OnceLock<Viewer>,
    /// The size the stream is drawn for: the attachment's, then each resync's.
    size: Mutex<(u16, u16)>,
    /// How the run ended, taken with the stream's last piece, until `onEnd` is called with it.
    end: Mutex<Option<RunEnd>>,
}

impl Shared {
    fn tsfn(&self) -> MutexGuard<'_, Option<Arc<DataTsfn>>> {
        lock(&self.tsfn)
    }

    fn size(&self) -> MutexGuard<'_, (u16, u16)> {
        lock(&self.size)
    }

    /// Ends deliveries: detaches the viewer and lets go of the threadsafe function.
    fn stop(&self) {
        if let Some(viewer) = self.viewer.get() {
            viewer.detach();
        }
        self.tsfn().take();
    }

    /// On the JS thread, as a queued call reaches JS: everything the viewer has, as one chunk.
    fn take(&self) -> String {
        let Some(viewer) = self.viewer.get() else {
            return String::new();
        };
        let delivery = viewer.take();
        if let Some(size) = delivery.resync {
            *self.size() = size;
        }
        if delivery.ended {
            self.tsfn().take();
            *lock(&self.end) = delivery.run_end;
        }
        delivery.chunk
    }
}

/// How the run an attachment followed ended: `PtyResult`'s fields, or the error that ended it.
#[napi(object, object_from_js = false)]
pub struct AttachmentEnd {
    /// Absent when cancelled, timed out, or failed; 128+N for a death by signal N.
    pub exit_code: Option<i32>,
    /// E.g. "SIGKILL" when the child died by a signal.
    pub signal: Option<String>,
    pub cancelled: bool,
    pub timed_out: bool,
    /// Why the run failed (the message `start`'s promise rejected with, e.g. a missing `cwd`).
    pub error: Option<String>,
}

impl From<RunEnd> for AttachmentEnd {
    fn from(end: RunEnd) -> Self {
        match end {
            Ok(outcome) => Self {
                exit_code: outcome.exit_code(),
                signal: outcome.signal_name(),
                cancelled: outcome.cancelled(),
                timed_out: outcome.timed_out(),
                error: None,
            },
            Err(error) => Self {
                exit_code: None,
                signal: None,
                cancelled: false,
                timed_out: false,
                error: Some(error),
            },
        }
    }
}

thread_local! {
    /// How many times a viewer was told on this thread that it has something to take: a read on
    /// the JS thread that told one pauses so the viewer gets its turn first (see `loop_reader`).
    static VIEWERS_TOLD: Cell<u64> = const { Cell::new(0) };
}

/// The count of [`VIEWERS_TOLD`] on this thread.
#[cfg(target_os = "linux")]
pub(crate) fn viewers_told() -> u64 {
    VIEWERS_TOLD.with(Cell::get)
}

/// Queues a call (never blocks) when the viewer has something waiting.
struct Ready(Arc<Shared>);

impl ViewerSink for Ready {
    fn ready(&self) {
        VIEWERS_TOLD.with(|told| told.set(told.get().wrapping_add(1)));
        let tsfn = self.0.tsfn().clone();
        if let Some(tsfn) = tsfn {
            // Fails only while the environment shuts down, when nobody is left to deliver to.
            let _ = tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// A viewer of a `PtySession`'s terminal (see `PtySession.attach`).
#[napi]
pub struct TerminalAttachment {
    snapshot: String,
    screen_snapshot: String,
    shared: Arc<Shared>,
}

#[napi]
impl TerminalAttachment {
    /// Repaints a fresh terminal of `cols` × `rows` (scrollback, screen, cursor, modes, title)
    /// up to the point where `onData`'s stream starts.
    #[napi(getter)]
    pub fn snapshot(&self) -> String {
        self.snapshot.clone()
    }

    /// `snapshot` without the scrollback, at the same point of the stream: the screen (cursor,
    /// modes, title) alone, a screenful however long the history. A viewer on a slow link paints
    /// it first and `snapshot` after.
    #[napi(getter)]
    pub fn screen_snapshot(&self) -> String {
        self.screen_snapshot.clone()
    }

    /// Columns the stream is drawn for: the session's at `attach`, updated just before `onData`
    /// receives a resync chunk.
    #[napi(getter)]
    pub fn cols(&self) -> u32 {
        self.shared.size().0.into()
    }

    /// Rows the stream is drawn for (see `cols`).
    #[napi(getter)]
    pub fn rows(&self) -> u32 {
        self.shared.size().1.into()
    }

    /// Stops the stream: `onData` is not called again, even for chunks already queued.
    /// Idempotent.
    #[napi(catch_unwind)]
    pub fn detach(&self) {
        self.shared.stop();
    }
}

/// Attaches a viewer calling `on_data` (and `on_end` at the end) to `session` (see
/// `PtySession.attach`).
pub fn attach(
    env: &Env,
    session: &shellwright_pty::PtySession,
    on_data: Unknown<'_>,
    on_end: Option<Unknown<'_>>,
) -> Result<std::result::Result<TerminalAttachment, shellwright_pty::PtyError>> {
    let callbacks = Callbacks {
        data: function_arg(env, on_data, "onData")?.create_ref()?,
        end: match on_end {
            Some(on_end) if !is_absent(Some(&on_end))? => {
                Some(function_arg(env, on_end, "onEnd")?.create_ref()?)
            }
            _ => None,
        },
    };
    let shared = Arc::new(Shared::default());
    let deliver = deliver_function(env, callbacks, &shared)?;
    let source = Arc::clone(&shared);
    let tsfn = deliver
        .build_threadsafe_function::<()>()
        .build_callback(move |_ctx| Ok(source.take()))?;
    *shared.tsfn() = Some(Arc::new(tsfn));
    let attachment = match session.attach(Ready(Arc::clone(&shared))) {
        Ok(attachment) => attachment,
        Err(err) => {
            shared.stop();
            return Ok(Err(err));
        }
    };
    *shared.size() = (attachment.cols, attachment.rows);
    // Calls queued by `attach` run on this thread, after this returns: the viewer is set by then.
    let _ = shared.viewer.set(attachment.viewer);
    Ok(Ok(TerminalAttachment {
        snapshot: attachment.snapshot,
        screen_snapshot: attachment.screen_snapshot,
        shared,
    }))
}

/// `value` as a function, or the TypeError naming `name`.
fn function_arg<'env>(
    env: &Env,
    value: Unknown<'env>,
    name: &str,
) -> Result<Function<'env, Unknown<'static>, Unknown<'static>>> {
    if value.get_type()? != ValueType::Function {
        return Err(type_error(env, format!("{name} must be a function")));
    }
    // SAFETY: checked to be a function.
    unsafe { value.cast() }
}

/// The viewer's JS callbacks.
struct Callbacks {
    data: CallbackRef,
    end: Option<CallbackRef>,
}

/// The JS function the threadsafe function calls: passes a non-empty chunk to `onData`, then,
/// once the stream has ended with the run's end known, that end to `onEnd`; a throw from either
/// detaches the viewer and becomes a process warning.
fn deliver_function<'env>(
    env: &'env Env,
    callbacks: Callbacks,
    shared: &Arc<Shared>,
) -> Result<Function<'env, String, ()>> {
    let shared = Arc::clone(shared);
    env.create_function_from_closure("deliverTerminalData", move |ctx| {
        let chunk: String = ctx.get(0)?;
        if !chunk.is_empty() {
            let callback = callbacks.data.borrow_back(ctx.env)?;
            let arg = ctx.get::<Unknown>(0)?;
            if let Some(thrown) = call_catching(ctx.env, callback.raw(), arg) {
                shared.stop();
                return warn(ctx.env, thrown);
            }
        }
        let end = lock(&shared.end).take();
        if let (Some(end), Some(callback)) = (end, &callbacks.end) {
            let callback = callback.borrow_back(ctx.env)?;
            // SAFETY: a value converted in this call's environment.
            let arg = unsafe {
                let raw = AttachmentEnd::to_napi_value(ctx.env.raw(), end.into())?;
                Unknown::from_raw_unchecked(ctx.env.raw(), raw)
            };
            if let Some(thrown) = call_catching(ctx.env, callback.raw(), arg) {
                warn(ctx.env, thrown)?;
            }
        }
        Ok(())
    })
}

/// `process.emitWarning(thrown)`: what `onData` threw is reported, not lost and not fatal.
fn warn(env: &Env, thrown: sys::napi_value) -> Result<()> {
    let process: Object = env.get_global()?.get_named_property("process")?;
    let emit: Function<Unknown, Unknown> = process.get_named_property("emitWarning")?;
    // SAFETY: `thrown` is the live exception value just taken from `env`.
    let thrown = unsafe { Unknown::from_raw_unchecked(env.raw(), thrown) };
    // A warning that cannot be emitted (say, a thrown number) is dropped, never rethrown.
    let _ = call_catching(env, emit.raw(), thrown);
    Ok(())
}
