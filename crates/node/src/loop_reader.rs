//! [`LoopReader`]: reads a PTY run's terminal on Node's event loop, through a libuv poll handle on
//! the master, so the thread the kernel wakes for the terminal's output is the JS thread that
//! passes it to `onChunk`. Read by the run's I/O thread, each chunk would cross to the JS thread
//! through a threadsafe call: one more thread wake-up, which is a fifth of an echo's round trip
//! on a 2-core machine (bench/pty.bench.mjs measures it).
//!
//! The run hands the reader over once the child is spawned ([`ReadDriver::start`], a threadsafe
//! call). From then on a read, the emulator's work on what was read, and the `onChunk` call all
//! happen in one libuv callback, inside a callback scope (so `onChunk` runs in the async context
//! of `start`, and the microtasks it queues run right after it, as after any Node callback). The
//! handle is closed when a read reports the end, or when the run ends the read itself
//! ([`ReadDriver::stop`]). Until the JS thread takes the reader, and whenever it is too busy to
//! read, the run's I/O thread reads behind it; so nothing here has to succeed for the run to.
//!
//! A read that told a viewer of the session (`PtySession.attach`) it has something to take gives
//! the viewer its turn before the next read: the viewer is told through a threadsafe call, which
//! Node runs when the event loop looks for events again — behind the next read, if the terminal is
//! already readable then, so a viewer attached to a fast stream would first hear from it two or
//! three reads (that many milliseconds of parsing) later. The watch stops polling and asks to be
//! resumed through a threadsafe call of its own, queued behind the viewer's.
//!
//! Node exports libuv to addons; the few functions used here are declared below. Linux only,
//! where libuv polls with epoll, which takes a pseudo-terminal; elsewhere the I/O thread reads.

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use napi::bindgen_prelude::{Env, Function, JsValue, Object, Result};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{check_status, sys};
use shellwright_pty::{MasterReader, ReadDriver, ReadState};

use crate::delivery::ChunkSink;

/// The name async hooks see for the reads.
const ASYNC_NAME: &str = "PtySessionRead";

/// libuv's `UV_POLL` handle type (`uv_handle_type`) and `UV_READABLE` event.
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

/// The start of every libuv handle: the public `data` field comes first.
#[repr(C)]
struct UvHandle {
    data: *mut c_void,
}

type PollCallback = unsafe extern "C" fn(handle: *mut UvHandle, status: c_int, events: c_int);
type CloseCallback = unsafe extern "C" fn(handle: *mut UvHandle);

unsafe extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(event_loop: *mut sys::uv_loop_s, handle: *mut UvHandle, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut UvHandle, events: c_int, callback: PollCallback) -> c_int;
    fn uv_poll_stop(handle: *mut UvHandle) -> c_int;
    fn uv_close(handle: *mut UvHandle, callback: Option<CloseCallback>);
}

/// What the run asks of the JS thread.
enum Request {
    /// Watch the reader's fd.
    Start(MasterReader),
    /// Stop watching (the run ended the read).
    Stop,
    /// Watch again after a pause for the viewers (see the module doc).
    Resume,
}

type RequestTsfn = ThreadsafeFunction<Request, (), (), napi::Status, false>;

/// A [`ReadDriver`] that reads on the JS thread's event loop (see the module doc).
pub struct LoopReader {
    requests: Arc<RequestTsfn>,
}

impl LoopReader {
    /// A reader for one run whose output goes to `sink`; on the JS thread.
    pub fn new(env: &Env, sink: ChunkSink) -> Result<Self> {
        // The watch in progress, if any; only the JS thread touches it.
        let current: Arc<AtomicPtr<Watch>> = Arc::default();
        // The watch's way back to this threadsafe function; weak, since the function's callback
        // holds it (a strong one would keep the function, and so Node, alive for ever).
        let resumer: Arc<OnceLock<Weak<RequestTsfn>>> = Arc::default();
        let watch_resumer = Arc::clone(&resumer);
        let noop: Function<(), ()> = env.create_function_from_closure("ptyRead", |_| Ok(()))?;
        let requests = noop
            .build_threadsafe_function::<Request>()
            .build_callback(move |ctx| {
                match ctx.value {
                    // A watch that cannot start leaves the reading to the I/O thread.
                    Request::Start(reader) => {
                        let resumer = watch_resumer.get().cloned().unwrap_or_default();
                        let _ = Watch::start(&ctx.env, reader, sink.clone(), resumer, &current);
                    }
                    Request::Stop => Watch::close(current.swap(ptr::null_mut(), Ordering::AcqRel)),
                    Request::Resume => Watch::resume(current.load(Ordering::Acquire)),
                }
                Ok(())
            })?;
        let requests = Arc::new(requests);
        let _ = resumer.set(Arc::downgrade(&requests));
        Ok(Self { requests })
    }
}

impl ReadDriver for LoopReader {
    fn start(&self, reader: MasterReader) -> std::result::Result<(), MasterReader> {
        let request = Request::Start(reader.clone());
        match self
            .requests
            .call(request, ThreadsafeFunctionCallMode::NonBlocking)
        {
            napi::Status::Ok => Ok(()),
            // The environment is going away.
            _ => Err(reader),
        }
    }

    fn stop(&self) {
        let _ = self
            .requests
            .call(Request::Stop, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// One watched reader: the poll handle's memory (its `data` points back here), the reader and
/// where its text goes. Lives from [`Watch::start`] until libuv has closed the handle.
struct Watch {
    /// A `uv_poll_t`, sized by libuv; `u64`s for its alignment.
    handle: Box<[u64]>,
    reader: MasterReader,
    sink: ChunkSink,
    env: sys::napi_env,
    context: sys::napi_async_context,
    /// The loop reader's slot, cleared when this watch closes.
    current: Arc<AtomicPtr<Watch>>,
    /// Closes the watch if the environment is torn down first (a worker terminated): Node
    /// refuses to close a loop with a handle still open.
    teardown: sys::napi_async_cleanup_hook_handle,
    /// Asks for [`Watch::resume`] after a pause for the viewers.
    resumer: Weak<RequestTsfn>,
    /// Polling is stopped until a resume request comes.
    paused: bool,
}

impl Watch {
    /// Starts watching `reader`'s fd; on the JS thread.
    fn start(
        env: &Env,
        reader: MasterReader,
        sink: ChunkSink,
        resumer: Weak<RequestTsfn>,
        current: &Arc<AtomicPtr<Watch>>,
    ) -> Result<()> {
        let raw_env = env.raw();
        let mut event_loop = ptr::null_mut();
        // SAFETY: a Node-API call on the live environment with a valid out-pointer.
        check_status!(unsafe { sys::napi_get_uv_event_loop(raw_env, &mut event_loop) })?;
        let context = async_context(env)?;
        // SAFETY: asks libuv for the size of a handle type it defines.
        let size = unsafe { uv_handle_size(UV_POLL) };
        let watch = Box::into_raw(Box::new(Watch {
            handle: vec![0; size.div_ceil(8)].into_boxed_slice(),
            reader,
            sink,
            env: raw_env,
            context,
            current: Arc::clone(current),
            teardown: ptr::null_mut(),
            resumer,
            paused: false,
        }));
        // SAFETY: `watch` is a live allocation owned here until the handle closes; the handle's
        // memory is as large as libuv asked for and stays put inside it. Once initialised, the
        // handle is freed with the watch by `on_closed`.
        unsafe {
            let handle = (*watch).handle_ptr();
            let status = uv_poll_init(event_loop.cast(), handle, (*watch).reader.fd());
            if status != 0 {
                sys::napi_async_destroy(raw_env, context);
                drop(Box::from_raw(watch));
                return Err(poll_failure(status));
            }
            (*handle).data = watch.cast();
            let status = uv_poll_start(handle, UV_READABLE, on_readable);
            if status != 0 {
                uv_close(handle, Some(on_closed));
                return Err(poll_failure(status));
            }
            // Without the hook a teardown would abort the process: better not to watch at all.
            let hooked = sys::napi_add_async_cleanup_hook(
                raw_env,
                Some(on_teardown),
                watch.cast(),
                &mut (*watch).teardown,
            );
            if hooked != sys::Status::napi_ok {
                uv_close(handle, Some(on_closed));
                return Err(napi::Error::from_reason("cannot add a teardown hook"));
            }
        }
        Watch::close(current.swap(watch, Ordering::AcqRel));
        Ok(())
    }

    fn handle_ptr(&mut self) -> *mut UvHandle {
        self.handle.as_mut_ptr().cast()
    }

    /// Reads what the terminal has ready and passes it on, in a handle scope and a callback
    /// scope of its own; returns whether the read goes on.
    fn read(&mut self) -> Result<ReadState> {
        // Called from libuv on the JS thread of `self.env`.
        let env = Env::from_raw(self.env);
        let mut handles = ptr::null_mut();
        // SAFETY: a Node-API call on the live environment; the scope is closed below.
        check_status!(unsafe { sys::napi_open_handle_scope(self.env, &mut handles) })?;
        let state = self.read_in_callback_scope(&env);
        // SAFETY: the scope opened above, closed once.
        unsafe { sys::napi_close_handle_scope(self.env, handles) };
        state
    }

    fn read_in_callback_scope(&mut self, env: &Env) -> Result<ReadState> {
        let resource = Object::new(env)?;
        let mut scope = ptr::null_mut();
        // SAFETY: Node-API calls on the live environment with its own values; the scope is
        // closed once, after the read.
        check_status!(unsafe {
            sys::napi_open_callback_scope(self.env, resource.raw(), self.context, &mut scope)
        })?;
        let reader = &self.reader;
        let state = self.sink.send_now(env, || reader.read());
        // SAFETY: as above. Closing runs the ticks and microtasks `onChunk` queued.
        unsafe { sys::napi_close_callback_scope(self.env, scope) };
        Ok(state)
    }

    /// Stops polling until the viewers told during the last read had their turn: the resume
    /// request is queued behind their calls. Polling goes on at once when it cannot be queued.
    fn pause_for_viewers(&mut self) {
        let Some(resumer) = self.resumer.upgrade() else {
            return;
        };
        let handle = self.handle_ptr();
        // SAFETY: the handle was started and is not closing (the read left it open).
        unsafe { uv_poll_stop(handle) };
        self.paused = true;
        if resumer.call(Request::Resume, ThreadsafeFunctionCallMode::NonBlocking)
            != napi::Status::Ok
        {
            Watch::resume(std::ptr::from_mut(self));
        }
    }

    /// Polls again after [`pause_for_viewers`](Self::pause_for_viewers); nothing for a watch
    /// that is not paused (or is gone: `watch` null).
    fn resume(watch: *mut Watch) {
        if watch.is_null() {
            return;
        }
        // SAFETY: `watch` is the current watch, alive until its handle is closed, and closing
        // clears the slot first; only the JS thread touches it.
        unsafe {
            if !(*watch).paused {
                return;
            }
            (*watch).paused = false;
            let handle = (*watch).handle_ptr();
            if uv_poll_start(handle, UV_READABLE, on_readable) != 0 {
                Watch::close_if_current(watch);
            }
        }
    }

    /// Closes `watch` unless it has been closed already (it is then no longer the current one).
    fn close_if_current(watch: *mut Watch) {
        // SAFETY: the watch lives until libuv has closed its handle, which this may only begin.
        let current = unsafe { &(*watch).current };
        if current
            .compare_exchange(watch, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            Watch::close(watch);
        }
    }

    /// Stops and closes the watch at `watch` (if not null); it is freed once libuv is done.
    fn close(watch: *mut Watch) {
        if watch.is_null() {
            return;
        }
        // SAFETY: `watch` came from `start` and its handle was started; `on_closed` frees it, and
        // the slot no longer points to it, so this runs once per watch.
        unsafe {
            let handle = (*watch).handle_ptr();
            uv_poll_stop(handle);
            uv_close(handle, Some(on_closed));
        }
    }
}

fn poll_failure(status: c_int) -> napi::Error {
    napi::Error::from_reason(format!("cannot poll the terminal (libuv error {status})"))
}

/// An async context for the callback scopes of one watch, as Node's own handles have.
fn async_context(env: &Env) -> Result<sys::napi_async_context> {
    let resource = Object::new(env)?;
    let name = env.create_string(ASYNC_NAME)?;
    let mut context = ptr::null_mut();
    // SAFETY: a Node-API call on the live environment with its own values and a valid out-pointer.
    check_status!(unsafe {
        sys::napi_async_init(env.raw(), resource.raw(), name.raw(), &mut context)
    })?;
    Ok(context)
}

unsafe extern "C" fn on_readable(handle: *mut UvHandle, _status: c_int, _events: c_int) {
    // SAFETY: `data` was set to the live watch before the handle started, and the watch lives
    // until the handle is closed. An error status is read like readability: the read reports it.
    let watch = unsafe { (*handle).data.cast::<Watch>() };
    let told = crate::attach::viewers_told();
    // SAFETY: the same live watch; only this callback, on the JS thread, uses it meanwhile.
    let read = catch_unwind(AssertUnwindSafe(|| unsafe { (*watch).read() }));
    if !matches!(read, Ok(Ok(ReadState::Open))) {
        Watch::close_if_current(watch);
    } else if crate::attach::viewers_told() != told {
        // SAFETY: the same live watch, on the JS thread.
        unsafe { (*watch).pause_for_viewers() };
    }
}

unsafe extern "C" fn on_teardown(_hook: sys::napi_async_cleanup_hook_handle, watch: *mut c_void) {
    // The hook is removed when the handle has closed (`on_closed`), which Node waits for.
    Watch::close_if_current(watch.cast());
}

unsafe extern "C" fn on_closed(handle: *mut UvHandle) {
    // SAFETY: libuv is done with the handle; the watch it points to was leaked by `start`.
    let watch = unsafe { Box::from_raw((*handle).data.cast::<Watch>()) };
    // SAFETY: the context and the hook were made for this environment, and go once.
    unsafe {
        sys::napi_async_destroy(watch.env, watch.context);
        if !watch.teardown.is_null() {
            sys::napi_remove_async_cleanup_hook(watch.teardown);
        }
    }
}
