//! JS errors with a `code`: the only way this crate throws or rejects.
//!
//! Bad arguments are a `TypeError` with `ERR_INVALID_ARG_TYPE` (wrong type) or a `RangeError`
//! with `ERR_INVALID_ARG_VALUE` (right type, unusable value), as Node's own APIs do; failures of
//! an operation are an `Error` with the operation's code (`ERR_PTY_SPAWN`, `ERR_SHELL_CWD`, …).

use std::ptr;

use napi::bindgen_prelude::{Env, Result, ToNapiValue};
use napi::{Error, JsRangeError, JsTypeError, Status, sys};

/// Which JS constructor an error is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Error,
    TypeError,
    RangeError,
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
                ErrorClass::Error => napi::JsError::from(error).throw_into(env.raw()),
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
            }
        }
    }
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
    /// A value a JS callback threw, kept alive by a reference until now.
    Thrown(crate::delivery::ThrownValue),
}

impl<V: ToNapiValue> ToNapiValue for Settlement<V> {
    unsafe fn to_napi_value(env: sys::napi_env, settlement: Self) -> Result<sys::napi_value> {
        let reason = match settlement {
            // SAFETY: forwarded from the caller.
            Self::Value(value) => return unsafe { V::to_napi_value(env, value) },
            // SAFETY: forwarded from the caller.
            Self::Failed(failure) => unsafe { failure.into_value(env) },
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
