//! AbortSignal → [`CancelToken`]: the bridge between a standard `AbortSignal` and a run.
//!
//! An already-aborted signal cancels the token at once (so nothing starts). Otherwise an `abort`
//! listener is added, and [`AbortWatch::detach`] removes it when the run ends, so a long-lived
//! signal shared by many runs does not collect listeners.
//!
//! The signal is user code: `aborted` is read as JS truthiness, and an exception from its getter
//! or from `addEventListener` is thrown at the call, before anything starts. An exception from
//! `removeEventListener` when the run ends is dropped — the run's result is settled regardless,
//! since the listener only ever cancels a token that is no longer watched.

use napi::bindgen_prelude::{
    Env, FnArgs, Function, FunctionRef, JsObjectValue, JsValue, Object, ObjectRef, Result, Unknown,
};
use napi::sys;
use shellwright_proc::{CancelReason, CancelToken};

/// `addEventListener` / `removeEventListener` as napi sees them.
type ListenerMethod<'env> =
    Function<'env, FnArgs<(&'static str, Function<'env, Unknown<'static>, ()>)>, Unknown<'env>>;

/// A listener registered on an AbortSignal; call [`detach`](Self::detach) on the JS thread when done.
/// It also keeps the signal, so that an abort rejection can carry the signal's `reason` as its
/// `cause`.
pub struct AbortWatch {
    signal: ObjectRef<false>,
    /// `None` when the signal was already aborted at the call: nothing was added.
    listener: Option<FunctionRef<Unknown<'static>, ()>>,
}

impl AbortWatch {
    /// Ties `signal` to `token`. Returns `None` when there is no signal; a signal that was already
    /// aborted cancels the token at once and adds no listener.
    pub fn attach(env: &Env, signal: Option<&Object>, token: &CancelToken) -> Result<Option<Self>> {
        let Some(signal) = signal else {
            return Ok(None);
        };
        if is_aborted(signal)? {
            token.cancel(CancelReason::Aborted);
            return Ok(Some(Self {
                signal: signal.create_ref()?,
                listener: None,
            }));
        }
        let token = token.clone();
        let listener: Function<Unknown<'static>, ()> =
            env.create_function_from_closure("onAbort", move |_ctx| {
                token.cancel(CancelReason::Aborted);
                Ok(())
            })?;
        let add: ListenerMethod = signal.get_named_property("addEventListener")?;
        add.apply(signal, FnArgs::from(("abort", listener)))?;
        Ok(Some(Self {
            signal: signal.create_ref()?,
            listener: Some(listener.create_ref()?),
        }))
    }

    /// The signal's `reason` (what `abort(reason)` was given, or the default `AbortError`), read
    /// on the JS thread; `None` if reading it threw.
    pub fn reason(&self, env: &Env) -> Option<sys::napi_value> {
        let reason = self
            .signal
            .get_value(env)
            .and_then(|signal| signal.get_named_property::<Unknown>("reason"));
        match reason {
            Ok(value) => Some(value.raw()),
            Err(_) => {
                clear_pending_exception(env);
                None
            }
        }
    }

    /// Removes the listener, on the JS thread. Never fails: see the module doc.
    pub fn detach(self, env: &Env) {
        if self.remove(env).is_err() {
            clear_pending_exception(env);
        }
        // Only fails when the environment is going away, and with it the reference.
        let _ = self.signal.unref(env);
    }

    fn remove(&self, env: &Env) -> Result<()> {
        let Some(listener) = &self.listener else {
            return Ok(());
        };
        let signal = self.signal.get_value(env)?;
        let listener = listener.borrow_back(env)?;
        let remove: ListenerMethod = signal.get_named_property("removeEventListener")?;
        remove.apply(signal, FnArgs::from(("abort", listener)))?;
        Ok(())
    }
}

/// Whether `signal` is aborted already (its `aborted` getter's own exception propagates).
pub fn is_aborted(signal: &Object) -> Result<bool> {
    signal
        .get_named_property::<Unknown>("aborted")?
        .coerce_to_bool()
}

/// Drops the exception a failed call into JS left pending, if any.
pub fn clear_pending_exception(env: &Env) {
    let mut exception = std::ptr::null_mut();
    // SAFETY: a Node-API call on the live environment with a valid out-pointer; it succeeds
    // (leaving `exception` undefined) when nothing is pending.
    unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut exception) };
}
