//! Classes are only made with `new`: a call without it would wrap whatever `this` happens to be
//! (the module object, for `sw.Shell()`), so it is a `TypeError`, as for a JS class.

use napi::ValueType;
use napi::bindgen_prelude::{Env, JavaScriptClassExt, Result, This, Unknown};

use crate::error::{ErrorClass, JsFailure};

/// Fails unless the constructor of `T` (named `name` in JS) was called with `new`, i.e. `this`
/// is an object built from its prototype.
pub fn require_new<T: JavaScriptClassExt>(
    env: &Env,
    this: &This<Unknown>,
    name: &str,
) -> Result<()> {
    let this = &this.object;
    if this.get_type()? == ValueType::Object && T::instance_of(env, this)? {
        return Ok(());
    }
    Err(JsFailure::new(
        ErrorClass::TypeError,
        "ERR_CONSTRUCT_CALL_REQUIRED",
        format!("Class constructor {name} cannot be invoked without 'new'"),
    )
    .throw(env))
}
