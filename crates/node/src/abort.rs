//! AbortSignal → [`CancelToken`]: the bridge between a standard `AbortSignal` and a run.
//!
//! An already-aborted signal cancels the token at once (so nothing starts). Otherwise an `abort`
//! listener is added, and [`AbortWatch::detach`] removes it when the run ends, so a long-lived
//! signal shared by many runs does not collect listeners.

use napi::bindgen_prelude::{
    Env, FnArgs, Function, FunctionRef, JsObjectValue, Object, ObjectRef, Result, Unknown,
};
use shellwright_proc::{CancelReason, CancelToken};

/// `addEventListener` / `removeEventListener` as napi sees them.
type ListenerMethod<'env> =
    Function<'env, FnArgs<(&'static str, Function<'env, Unknown<'static>, ()>)>, Unknown<'env>>;

/// A listener registered on an AbortSignal; call [`detach`](Self::detach) on the JS thread when done.
pub struct AbortWatch {
    signal: ObjectRef<false>,
    listener: FunctionRef<Unknown<'static>, ()>,
}

impl AbortWatch {
    /// Ties `signal` to `token`. Returns `None` when there is nothing to detach later (no signal,
    /// or a signal that was already aborted — the token is then cancelled already).
    pub fn attach(env: &Env, signal: Option<&Object>, token: &CancelToken) -> Result<Option<Self>> {
        let Some(signal) = signal else {
            return Ok(None);
        };
        if signal.get::<bool>("aborted")?.unwrap_or(false) {
            token.cancel(CancelReason::Aborted);
            return Ok(None);
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
            listener: listener.create_ref()?,
        }))
    }

    /// Removes the listener. Must run on the JS thread.
    pub fn detach(self, env: &Env) -> Result<()> {
        let signal = self.signal.get_value(env)?;
        let listener = self.listener.borrow_back(env)?;
        let remove: ListenerMethod = signal.get_named_property("removeEventListener")?;
        remove.apply(signal, FnArgs::from(("abort", listener)))?;
        self.signal.unref(env)?;
        Ok(())
    }
}
