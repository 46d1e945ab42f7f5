//! JS errors with a `code`: the only way this crate throws or rejects.
//!
//! Bad arguments are a `TypeError` with `ERR_INVALID_ARG_TYPE` (wrong type) or a `RangeError`
//! with `ERR_INVALID_ARG_VALUE` (right type, unusable value), as Node's own APIs do; failures of
//! an operation are an `Error` with the operation's code (`ERR_PTY_SPAWN`, `ERR_SHELL_CWD`, …).

use std::ffi::CStr;
use std::ptr;

use napi::bindgen_prelude::{Env, Result, ToNapiValue};
use napi::{Error, JsRangeError, JsTypeError, Status, sys};

/// Which JS constructor an error is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Error,
    TypeError,
    RangeError,
    /// An `Error` named `AbortError` with code `ABORT_ERR`, as Node's own APIs reject on abort.
    Abort,
}

/// An error to throw or reject with, built into a JS object on the JS thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsFailure {
    pub class: ErrorClass,
    pub code: &'static str,
    pub message: String,
}

impl JsFailure {
    pub fn new(class: ErrorClass, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            class,
            code,
            message: message.into(),
        }
    }

    /// A failure of the operation itself (not of its arguments).
    pub fn operation(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Error, code, message)
    }

    /// The rejection of an operation its AbortSignal stopped (`cause` is added when settling).
    pub fn abort(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Abort, "ABORT_ERR", message)
    }

    /// A panic caught at the boundary: a bug, reported instead of aborting the process.
    pub fn panic(what: &str) -> Self {
        Self::operation(
            "ERR_INTERNAL_ASSERTION",
            format!("shellwright internal error (please report it): {what}"),
        )
    }

    fn into_napi(self) -> Error<String> {
        Error::new(self.code.to_string(), self.message)
    }

    /// Throws into `env`; returns the error to propagate with `?` from a `#[napi]` function.
    pub fn throw(self, env: &Env) -> Error {
        let message = self.message.clone();
        let class = self.class;
        let error = self.into_napi();
        // SAFETY: `env` is the live environment of the current call.
        unsafe {
            match class {
                ErrorClass::Error | ErrorClass::Abort => {
                    napi::JsError::from(error).throw_into(env.raw())
                }
                ErrorClass::TypeError => JsTypeError::from(error).throw_into(env.raw()),
                ErrorClass::RangeError => JsRangeError::from(error).throw_into(env.raw()),
            }
        }
        Error::new(Status::PendingException, message)
    }

    /// The JS error object.
    ///
    /// # Safety
    /// `env` must be the live environment of the current thread.
    pub unsafe fn into_value(self, env: sys::napi_env) -> sys::napi_value {
        let class = self.class;
        let error = self.into_napi();
        // SAFETY: forwarded from the caller.
        unsafe {
            match class {
                ErrorClass::Error => napi::JsError::from(error).into_value(env),
                ErrorClass::TypeError => JsTypeError::from(error).into_value(env),
                ErrorClass::RangeError => JsRangeError::from(error).into_value(env),
                ErrorClass::Abort => {
                    let value = napi::JsError::from(error).into_value(env);
                    set_property(env, value, c"name", "AbortError");
                    value
                }
            }
        }
    }

    pub fn is_abort(&self) -> bool {
        self.class == ErrorClass::Abort
    }
}

/// Sets a string property on a JS object; best effort (a failure leaves the object as it was).
///
/// # Safety
/// `env` must be the live environment of the current thread and `object` a value of it.
unsafe fn set_property(env: sys::napi_env, object: sys::napi_value, key: &CStr, text: &str) {
    let mut value = ptr::null_mut();
    // SAFETY: plain Node-API calls on the live environment with valid pointers.
    unsafe {
        if sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut value)
            == sys::Status::napi_ok
        {
            sys::napi_set_named_property(env, object, key.as_ptr(), value);
        }
    }
}

/// Sets `cause` on a JS error object; best effort.
///
/// # Safety
/// `env` must be the live environment of the current thread; both values must be of it.
unsafe fn set_cause(env: sys::napi_env, error: sys::napi_value, cause: sys::napi_value) {
    // SAFETY: forwarded from the caller.
    unsafe { sys::napi_set_named_property(env, error, c"cause".as_ptr(), cause) };
}

/// Throws a `TypeError` with `ERR_INVALID_ARG_TYPE`.
pub fn type_error(env: &Env, message: impl Into<String>) -> Error {
    JsFailure::new(ErrorClass::TypeError, "ERR_INVALID_ARG_TYPE", message).throw(env)
}

/// Throws a `RangeError` with `ERR_INVALID_ARG_VALUE`.
pub fn range_error(env: &Env, message: impl Into<String>) -> Error {
    JsFailure::new(ErrorClass::RangeError, "ERR_INVALID_ARG_VALUE", message).throw(env)
}

/// How an async operation settles: with a value, or rejected with a JS value built on the JS
/// thread (an error with a code, or exactly what a callback threw).
pub enum Settlement<V> {
    Value(V),
    Failed(JsFailure),
    /// An abort, with the signal's `reason` (a value of the current handle scope) as its cause.
    Aborted(JsFailure, sys::napi_value),
    /// A value a JS callback threw, kept alive by a reference until now.
    Thrown(crate::delivery::ThrownValue),
}

impl<V> From<std::result::Result<V, JsFailure>> for Settlement<V> {
    fn from(outcome: std::result::Result<V, JsFailure>) -> Self {
        match outcome {
            Ok(value) => Self::Value(value),
            Err(failure) => Self::Failed(failure),
        }
    }
}

impl<V: ToNapiValue> ToNapiValue for Settlement<V> {
    unsafe fn to_napi_value(env: sys::napi_env, settlement: Self) -> Result<sys::napi_value> {
        let reason = match settlement {
            // SAFETY: forwarded from the caller.
            Self::Value(value) => return unsafe { V::to_napi_value(env, value) },
            // SAFETY: forwarded from the caller.
            Self::Failed(failure) => unsafe { failure.into_value(env) },
            // SAFETY: forwarded from the caller; `cause` was read in this same callback.
            Self::Aborted(failure, cause) => unsafe {
                let error = failure.into_value(env);
                set_cause(env, error, cause);
                error
            },
            Self::Thrown(thrown) => thrown.into_value(&Env::from_raw(env))?,
        };
        // A promise resolved with a rejected promise rejects with the same reason, whatever it
        // is: this is how an arbitrary JS value (not only an Error) becomes the rejection.
        let mut deferred = ptr::null_mut();
        let mut promise = ptr::null_mut();
        // SAFETY: plain Node-API calls on the live environment with valid out-pointers.
        unsafe {
            napi::check_status!(sys::napi_create_promise(env, &mut deferred, &mut promise))?;
            napi::check_status!(sys::napi_reject_deferred(env, deferred, reason))?;
        }
        Ok(promise)
    }
}
