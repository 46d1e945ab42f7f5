//! [`JsSender`]: hands work to the JS thread from any thread, through one threadsafe function
//! per Node environment.
//!
//! napi-rs settles a promise from another thread with a threadsafe function of its own per
//! promise: made when the call starts (an async resource, a libuv handle, two environment cleanup
//! hooks) and closed and finalized once it settled, which cost more of the JS thread than the
//! rest of a queued shell run's settling. Here each environment has one threadsafe function,
//! made on first use and kept per thread (Node runs one environment on a thread: the main one or
//! a worker's), which carries all its jobs. It keeps Node's event loop alive only while a job is
//! owed (it is referenced while [`JsSender`]s are outstanding, unreferenced otherwise), as a
//! pending promise of Node's own would.
//!
//! When the environment tears down, the threadsafe function is released and a job sent later, or
//! still queued, is dropped unrun without being freed: it holds handles of an environment that no
//! longer exists, which must not be touched from another thread, or at all.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{Env, Result};
use napi::{check_status, sys};
use shellwright_io::lock;

/// Work to be done on the JS thread, with its environment.
type JsJob = Box<dyn FnOnce(&Env) + Send>;

/// An environment's threadsafe function, shared with the threads that send through it; `None`
/// once the environment began tearing down.
struct Channel {
    tsfn: Mutex<Option<Tsfn>>,
}

#[derive(Clone, Copy)]
struct Tsfn(sys::napi_threadsafe_function);

// SAFETY: a threadsafe function is made to be called from any thread; the handle is only released
// on the JS thread, under the channel's lock, so no call races with its release.
unsafe impl Send for Tsfn {}

/// The JS thread's side of its environment's channel.
struct JsSide {
    env: sys::napi_env,
    channel: Arc<Channel>,
    /// The channel's function, for referencing and unreferencing it here without the lock (the
    /// channel lets go of it only on this thread, in the cleanup hook that also drops this).
    tsfn: Tsfn,
    /// Senders made and not yet run: while there are any, the channel keeps the event loop alive.
    owed: Cell<usize>,
}

thread_local! {
    /// The channel of the environment that runs on this thread (a Node thread runs one).
    static JS_SIDE: RefCell<Option<Rc<JsSide>>> = const { RefCell::new(None) };
}

/// One job owed to the JS thread: made there, sent from anywhere with [`send`](Self::send). Node's
/// event loop stays alive until it has run; one dropped unsent still releases the loop (nothing is
/// run for it).
pub struct JsSender {
    channel: Arc<Channel>,
    sent: bool,
}

impl JsSender {
    /// On the JS thread of `env`: a sender for one job.
    pub fn new(env: &Env) -> Result<Self> {
        let side = js_side(env)?;
        let owed = side.owed.get();
        if owed == 0 {
            // SAFETY: on the environment's own thread, with its live threadsafe function.
            check_status!(unsafe { sys::napi_ref_threadsafe_function(env.raw(), side.tsfn.0) })?;
        }
        side.owed.set(owed + 1);
        Ok(Self {
            channel: Arc::clone(&side.channel),
            sent: false,
        })
    }

    /// Runs `job` on the JS thread, soon (in the order sent).
    pub fn send(mut self, job: impl FnOnce(&Env) + Send + 'static) {
        self.sent = true;
        self.post(Box::new(job));
    }

    fn post(&self, job: JsJob) {
        let data = Box::into_raw(Box::new(job));
        let tsfn = lock(&self.channel.tsfn);
        let queued = tsfn.is_some_and(|tsfn| {
            // SAFETY: the handle is live while the lock holds it (see `Tsfn`); `data` is taken back
            // by `run_job`, or below when it was not queued.
            let status = unsafe {
                sys::napi_call_threadsafe_function(
                    tsfn.0,
                    data.cast(),
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                )
            };
            status == sys::Status::napi_ok
        });
        if !queued {
            // The environment is gone (see the module doc).
            // SAFETY: not queued, so still ours.
            std::mem::forget(unsafe { Box::from_raw(data) });
        }
    }
}

impl Drop for JsSender {
    fn drop(&mut self) {
        if !self.sent {
            // Runs nothing; what it owes the event loop is paid when it runs.
            self.post(Box::new(|_| {}));
        }
    }
}

/// This thread's channel for `env`, made on first use.
fn js_side(env: &Env) -> Result<Rc<JsSide>> {
    let current = JS_SIDE.with_borrow(|side| side.clone());
    if let Some(side) = current.filter(|side| side.env == env.raw()) {
        return Ok(side);
    }
    let side = Rc::new(open_channel(env)?);
    JS_SIDE.set(Some(Rc::clone(&side)));
    Ok(side)
}

/// Makes the environment's threadsafe function, unreferenced, and the cleanup hook that releases
/// it when the environment tears down.
fn open_channel(env: &Env) -> Result<JsSide> {
    let raw = env.raw();
    let mut name = ptr::null_mut();
    let mut tsfn = ptr::null_mut();
    // SAFETY: Node-API calls on the live environment with valid out-pointers; the function has no
    // JS callee (`run_job` does the work) and no finalizer (the cleanup hook owns the channel).
    unsafe {
        check_status!(sys::napi_create_string_utf8(
            raw,
            c"shellwright".as_ptr(),
            11,
            &mut name
        ))?;
        check_status!(sys::napi_create_threadsafe_function(
            raw,
            ptr::null_mut(),
            ptr::null_mut(),
            name,
            0,
            1,
            ptr::null_mut(),
            None,
            ptr::null_mut(),
            Some(run_job),
            &mut tsfn,
        ))?;
        check_status!(sys::napi_unref_threadsafe_function(raw, tsfn))?;
    }
    let channel = Arc::new(Channel {
        tsfn: Mutex::new(Some(Tsfn(tsfn))),
    });
    let hook_data = Arc::into_raw(Arc::clone(&channel))
        .cast_mut()
        .cast::<c_void>();
    // SAFETY: the hook gets back the reference leaked for it, once.
    let hooked = check_status!(unsafe {
        sys::napi_add_env_cleanup_hook(raw, Some(close_channel), hook_data)
    });
    if let Err(error) = hooked {
        // SAFETY: the hook was not added, so the reference is still ours; the function is
        // released at once, unused.
        unsafe {
            drop(Arc::from_raw(hook_data.cast::<Channel>()));
            sys::napi_release_threadsafe_function(tsfn, sys::ThreadsafeFunctionReleaseMode::abort);
        }
        return Err(error);
    }
    Ok(JsSide {
        env: raw,
        channel,
        tsfn: Tsfn(tsfn),
        owed: Cell::new(0),
    })
}

/// The environment's cleanup hook: no job is sent through its channel any more.
unsafe extern "C" fn close_channel(data: *mut c_void) {
    // SAFETY: `data` is the reference `open_channel` leaked for this hook, which runs once.
    let channel = unsafe { Arc::from_raw(data.cast::<Channel>()) };
    if let Some(tsfn) = lock(&channel.tsfn).take() {
        // SAFETY: released once, under the lock that every call through it holds.
        unsafe {
            sys::napi_release_threadsafe_function(tsfn.0, sys::ThreadsafeFunctionReleaseMode::abort)
        };
    }
    // The thread may run another environment later: it gets a channel of its own.
    let _ = JS_SIDE.try_with(|side| {
        let mut side = side.borrow_mut();
        if side
            .as_ref()
            .is_some_and(|side| Arc::ptr_eq(&side.channel, &channel))
        {
            *side = None;
        }
    });
}

/// The threadsafe function's callback, on the JS thread: runs one job, then lets the event loop
/// go when no more are owed.
unsafe extern "C" fn run_job(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    _context: *mut c_void,
    data: *mut c_void,
) {
    // SAFETY: every item was queued by `JsSender::post`, as a boxed job.
    let job = unsafe { Box::from_raw(data.cast::<JsJob>()) };
    if env.is_null() {
        // Drained while the environment tears down (see the module doc).
        std::mem::forget(job);
        return;
    }
    let env = Env::from_raw(env);
    // A panic must not unwind into Node; the jobs catch their own, this is the backstop.
    let _ = catch_unwind(AssertUnwindSafe(|| job(&env)));
    let Some(side) = JS_SIDE.with_borrow(|side| side.clone()) else {
        return;
    };
    if side.env != env.raw() {
        return;
    }
    let owed = side.owed.get().saturating_sub(1);
    side.owed.set(owed);
    if owed == 0 {
        // SAFETY: on the environment's own thread, with its live threadsafe function.
        unsafe { sys::napi_unref_threadsafe_function(env.raw(), side.tsfn.0) };
    }
}
