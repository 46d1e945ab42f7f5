//! Reading JS arguments, positional or fields of an options object, with one rule per kind of
//! value, so a bad value fails the same way wherever it is passed:
//!
//! - **Wrong type**: a `TypeError` (`ERR_INVALID_ARG_TYPE`) naming the argument or field
//!   (`options.cols must be a number`). `undefined` and `null` fields count as absent.
//! - **Durations** (`timeoutMs`, `gracefulMs`): milliseconds, fractions allowed. `NaN` or a
//!   negative number is a `RangeError` (`ERR_INVALID_ARG_VALUE`, `options.timeoutMs must be a
//!   non-negative number`); anything longer than [`MAX_DURATION_MS`] (about 100 years), including
//!   `Infinity`, is clamped to it — it means "never" in practice and keeps timer arithmetic
//!   finite.
//! - **Sizes and counts** (`cols`, `rows`, `scrollback`): any finite number, truncated toward
//!   zero (as `Math.trunc`) and then clamped into the range of the class that takes it; `NaN` and
//!   `±Infinity` are a `RangeError` (`options.rows must be a finite number`).
//! - **Other numbers** are finite (a `RangeError` otherwise); integers with a fixed range (`pid`,
//!   a signal number) are a `RangeError` outside it.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::ptr;
use std::time::Duration;

use napi::bindgen_prelude::{Env, FromNapiValue, JsObjectValue, JsValue, Object, Result, Unknown};
use napi::{Error, ValueType, check_status, sys};

use crate::names::{Name, Names};

pub use crate::error::{range_error, type_error};

/// The longest duration a JS number is taken to mean: 100 years of milliseconds.
pub const MAX_DURATION_MS: f64 = 100.0 * 365.25 * 24.0 * 3600.0 * 1000.0;

/// A duration from a number of milliseconds already known to be ≥ 0 (or `+Infinity`).
fn clamped_duration(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.min(MAX_DURATION_MS) / 1000.0)
}

/// A finite number truncated toward zero; `as` saturates, so huge values land on the i64 limits.
pub fn truncate(n: f64) -> i64 {
    n.trunc() as i64
}

/// A size or count: truncated toward zero, then clamped into `low..=high`.
pub fn clamp_count(n: f64, low: i64, high: i64) -> i64 {
    truncate(n).clamp(low, high)
}

fn number_of(env: &Env, value: &Unknown) -> Result<Option<f64>> {
    if value.get_type()? != ValueType::Number {
        return Ok(None);
    }
    // SAFETY: checked to be a number.
    Ok(Some(unsafe {
        f64::from_napi_value(env.raw(), value.raw())?
    }))
}

/// A positional string argument.
pub fn string_arg(env: &Env, value: Unknown, name: &str) -> Result<String> {
    if value.get_type()? != ValueType::String {
        return Err(type_error(env, format!("{name} must be a string")));
    }
    // SAFETY: checked to be a string.
    unsafe { String::from_napi_value(env.raw(), value.raw()) }
}

/// Bytes a string argument may take to be read by [`short_string_arg`] without allocating.
pub const SHORT_STRING: usize = 64;

/// A positional string argument, copied into `buffer` by one call when it fits (a key sequence,
/// an id), else read as [`string_arg`] does. For calls made per keystroke: no type query and no
/// allocation.
pub fn short_string_arg<'b>(
    env: &Env,
    value: Unknown,
    name: &str,
    buffer: &'b mut [u8; SHORT_STRING],
) -> Result<Cow<'b, str>> {
    let mut len = 0usize;
    // SAFETY: `buffer` is writable for the length passed, `len` is a valid out-pointer and
    // `value` a handle of this call's scope.
    let status = unsafe {
        sys::napi_get_value_string_utf8(
            env.raw(),
            value.raw(),
            buffer.as_mut_ptr().cast(),
            SHORT_STRING,
            &mut len,
        )
    };
    match status {
        sys::Status::napi_ok => {}
        sys::Status::napi_string_expected => {
            return Err(type_error(env, format!("{name} must be a string")));
        }
        _ => return Err(napi::Error::from_status(napi::Status::from(status))),
    }
    // A string cut at the buffer's end fills it but for the NUL and at most a character (4
    // bytes) that did not fit: shorter means whole.
    if len + 4 < SHORT_STRING - 1
        && let Ok(text) = std::str::from_utf8(&buffer[..len])
    {
        return Ok(Cow::Borrowed(text));
    }
    string_arg(env, value, name).map(Cow::Owned)
}

/// A positional boolean argument.
pub fn bool_arg(env: &Env, value: Unknown, name: &str) -> Result<bool> {
    let mut flag = false;
    // SAFETY: `flag` is a valid out-pointer and `value` a handle of this call's scope; any
    // value but a boolean is refused with `napi_boolean_expected`.
    let status = unsafe { sys::napi_get_value_bool(env.raw(), value.raw(), &mut flag) };
    match status {
        sys::Status::napi_ok => Ok(flag),
        sys::Status::napi_boolean_expected => {
            Err(type_error(env, format!("{name} must be a boolean")))
        }
        _ => Err(napi::Error::from_status(napi::Status::from(status))),
    }
}

/// A positional finite number.
pub fn finite_arg(env: &Env, value: Unknown, name: &str) -> Result<f64> {
    match number_of(env, &value)? {
        None => Err(type_error(env, format!("{name} must be a number"))),
        Some(n) if n.is_finite() => Ok(n),
        Some(_) => Err(range_error(env, format!("{name} must be a finite number"))),
    }
}

/// A positional integer in `0..=max`; the message names the range for both errors.
pub fn integer_arg(env: &Env, value: Unknown, name: &str, max: u32) -> Result<u32> {
    let message = || format!("{name} must be an integer from 0 to {max}");
    match number_of(env, &value)? {
        None => Err(type_error(env, message())),
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(max)).contains(&n) => Ok(n as u32),
        Some(_) => Err(range_error(env, message())),
    }
}

/// Whether an optional positional argument was left out (absent, `undefined` or `null`).
pub fn is_absent(value: Option<&Unknown>) -> Result<bool> {
    Ok(match value {
        None => true,
        Some(value) => matches!(value.get_type()?, ValueType::Undefined | ValueType::Null),
    })
}

/// Typed access to the fields of one options object; `name` prefixes field names in errors.
pub struct OptionReader<'a, 'env> {
    env: &'a Env,
    object: Option<Object<'env>>,
    name: &'static str,
    /// The environment's kept [`Names`], fetched by the first field read that is one of them.
    names: Cell<Option<Names>>,
    /// `Shell.run`'s fields, once [`read_run_options`](Self::read_run_options) read them.
    prefetched: Option<[sys::napi_value; 5]>,
}

impl<'a, 'env> OptionReader<'a, 'env> {
    /// `value` must be an object, or undefined/null when `optional`.
    pub fn new(
        env: &'a Env,
        value: Option<Unknown<'env>>,
        name: &'static str,
        optional: bool,
    ) -> Result<Self> {
        let object = match value {
            Some(value) if value.get_type()? == ValueType::Object => {
                // SAFETY: the value was just checked to be an object.
                Some(unsafe { value.cast::<Object>()? })
            }
            Some(value) if !matches!(value.get_type()?, ValueType::Undefined | ValueType::Null) => {
                return Err(type_error(env, format!("{name} must be an object")));
            }
            _ if optional => None,
            _ => return Err(type_error(env, format!("{name} must be an object"))),
        };
        Ok(Self {
            env,
            object,
            name,
            names: Cell::new(None),
            prefetched: None,
        })
    }

    fn field(&self, field: &str) -> Result<Option<Unknown<'env>>> {
        let Some(object) = &self.object else {
            return Ok(None);
        };
        let value: Unknown = match Name::find(field) {
            Some(name) => match (&self.prefetched, name.run_option_index()) {
                // SAFETY: a value of this call's environment, read by `read_run_options`.
                (Some(values), Some(index)) => unsafe {
                    Unknown::from_raw_unchecked(self.env.raw(), values[index])
                },
                _ => self.kept_field(object, name)?,
            },
            None => object.get_named_property(field)?,
        };
        Ok(match value.get_type()? {
            ValueType::Undefined | ValueType::Null => None,
            _ => Some(value),
        })
    }

    /// The field named by a kept name: a run's options are read on every run, and naming a field
    /// anew (a C string, then a V8 string looked up among the interned ones) cost more than
    /// reading it.
    fn kept_field(&self, object: &Object<'env>, name: Name) -> Result<Unknown<'env>> {
        let key = self.names()?.get(name)?;
        let mut value = ptr::null_mut();
        // SAFETY: a Node-API call in the live environment; `object` and `key` are values of it.
        check_status!(unsafe {
            sys::napi_get_property(self.env.raw(), object.raw(), key, &mut value)
        })?;
        // SAFETY: `value` was just returned by the environment.
        Ok(unsafe { Unknown::from_raw_unchecked(self.env.raw(), value) })
    }

    fn names(&self) -> Result<Names> {
        if let Some(names) = self.names.get() {
            return Ok(names);
        }
        let names = Names::of(self.env)?;
        self.names.set(Some(names));
        Ok(names)
    }

    /// Reads `Shell.run`'s fields (`command`, `cwd`, `env`, `timeoutMs`, `signal`) in one call of
    /// a kept JS function, which reads each once, in the order the readers would; the readers
    /// then take them from here. A run reads its options on every call: five reads from native
    /// code, each a lookup by V8's runtime, cost more than one call of a JS function whose own
    /// reads are cached.
    pub fn read_run_options(&mut self) -> Result<()> {
        let Some(object) = &self.object else {
            return Ok(());
        };
        let reader = self.names()?.run_options()?;
        let raw = self.env.raw();
        let read = crate::delivery::call_plain(raw, reader, &[object.raw()])?;
        let mut undefined = ptr::null_mut();
        // SAFETY: a Node-API call in the live environment; `undefined` is written by it.
        check_status!(unsafe { sys::napi_get_undefined(raw, &mut undefined) })?;
        let mut values = [undefined; 5];
        // SAFETY: `read` is a value of this environment, returned by the reader just called.
        if unsafe { Unknown::from_raw_unchecked(raw, read) }.get_type()? == ValueType::String {
            values[0] = read;
        } else {
            let mut length = 0;
            // SAFETY: `read` is an array of this environment (the reader returns one).
            check_status!(unsafe { sys::napi_get_array_length(raw, read, &mut length) })?;
            for (index, value) in values.iter_mut().enumerate().take(length as usize) {
                // SAFETY: as above; `value` is a slot of `values`, written by the call.
                check_status!(unsafe { sys::napi_get_element(raw, read, index as u32, value) })?;
            }
        }
        self.prefetched = Some(values);
        Ok(())
    }

    fn wrong_type(&self, field: &str, expected: &str) -> Error {
        type_error(
            self.env,
            format!("{}.{field} must be {expected}", self.name),
        )
    }

    fn wrong_value(&self, field: &str, expected: &str) -> Error {
        range_error(
            self.env,
            format!("{}.{field} must be {expected}", self.name),
        )
    }

    /// The raw object, for fields read elsewhere.
    pub fn object(&self, field: &str, expected: &str) -> Result<Option<Object<'env>>> {
        match self.field(field)? {
            None => Ok(None),
            Some(v) if v.get_type()? == ValueType::Object => {
                // SAFETY: checked to be an object.
                Ok(Some(unsafe { v.cast::<Object>()? }))
            }
            Some(_) => Err(self.wrong_type(field, expected)),
        }
    }

    pub fn string(&self, field: &str) -> Result<Option<String>> {
        match self.field(field)? {
            None => Ok(None),
            Some(v) if v.get_type()? == ValueType::String => {
                // SAFETY: checked to be a string.
                Ok(Some(unsafe {
                    String::from_napi_value(self.env.raw(), v.raw())?
                }))
            }
            Some(_) => Err(self.wrong_type(field, "a string")),
        }
    }

    pub fn required_string(&self, field: &str) -> Result<String> {
        self.string(field)?
            .ok_or_else(|| self.wrong_type(field, "a string"))
    }

    pub fn bool(&self, field: &str) -> Result<Option<bool>> {
        match self.field(field)? {
            None => Ok(None),
            // SAFETY: checked to be a boolean.
            Some(v) if v.get_type()? == ValueType::Boolean => Ok(Some(unsafe {
                bool::from_napi_value(self.env.raw(), v.raw())?
            })),
            Some(_) => Err(self.wrong_type(field, "a boolean")),
        }
    }

    /// Any number, `NaN` and infinities included; the typed readers below apply the rules.
    fn number(&self, field: &str) -> Result<Option<f64>> {
        match self.field(field)? {
            None => Ok(None),
            Some(v) => match number_of(self.env, &v)? {
                Some(n) => Ok(Some(n)),
                None => Err(self.wrong_type(field, "a number")),
            },
        }
    }

    /// A duration in milliseconds (see the module doc).
    pub fn duration_ms(&self, field: &str) -> Result<Option<Duration>> {
        match self.number(field)? {
            None => Ok(None),
            Some(ms) if ms >= 0.0 => Ok(Some(clamped_duration(ms))),
            Some(_) => Err(self.wrong_value(field, "a non-negative number")),
        }
    }

    /// A duration in milliseconds where a negative number means "none" (`gracefulMs`); `NaN`
    /// is still a `RangeError`.
    pub fn optional_duration_ms(&self, field: &str) -> Result<Option<Option<Duration>>> {
        match self.number(field)? {
            None => Ok(None),
            Some(ms) if ms.is_nan() => Err(self.wrong_value(field, "a number")),
            Some(ms) if ms < 0.0 => Ok(Some(None)),
            Some(ms) => Ok(Some(Some(clamped_duration(ms)))),
        }
    }

    /// A size or count, truncated and clamped into `low..=high` (see the module doc).
    pub fn count(&self, field: &str, low: i64, high: i64) -> Result<Option<i64>> {
        match self.number(field)? {
            None => Ok(None),
            Some(n) if n.is_finite() => Ok(Some(clamp_count(n, low, high))),
            Some(_) => Err(self.wrong_value(field, "a finite number")),
        }
    }

    /// The reader of a nested options object (`options.minimizer`); reads nothing when the
    /// field is absent. `name` is the nested object's full name, for error messages.
    pub fn nested(&self, field: &str, name: &'static str) -> Result<OptionReader<'a, 'env>> {
        Ok(OptionReader {
            env: self.env,
            object: self.object(field, "an object")?,
            name,
            names: Cell::new(self.names.get()),
            prefetched: None,
        })
    }

    /// A `string[]`.
    pub fn string_array(&self, field: &str) -> Result<Option<Vec<String>>> {
        let Some(value) = self.field(field)? else {
            return Ok(None);
        };
        let wrong = || self.wrong_type(field, "an array of strings");
        if !value.is_array()? {
            return Err(wrong());
        }
        // SAFETY: checked to be an array, which is an object.
        let array: Object = unsafe { value.cast()? };
        let length: u32 = array.get_named_property("length")?;
        let mut strings = Vec::with_capacity(length as usize);
        for index in 0..length {
            let item: Unknown = array.get_element(index)?;
            if item.get_type()? != ValueType::String {
                return Err(wrong());
            }
            // SAFETY: checked to be a string.
            strings.push(unsafe { String::from_napi_value(self.env.raw(), item.raw())? });
        }
        Ok(Some(strings))
    }

    /// A `RangeError` for a field whose value could not be used, with the reason.
    pub fn unusable(&self, field: &str, reason: impl std::fmt::Display) -> Error {
        range_error(self.env, format!("{}.{field}: {reason}", self.name))
    }

    /// A `Record<string, string>`.
    pub fn string_record(&self, field: &str) -> Result<Option<Vec<(String, String)>>> {
        let Some(object) = self.object(field, "an object of strings")? else {
            return Ok(None);
        };
        // SAFETY: `object` is a live object value of this environment.
        let map: HashMap<String, Unknown> =
            unsafe { HashMap::from_napi_value(self.env.raw(), object.raw())? };
        let mut pairs = Vec::with_capacity(map.len());
        for (key, value) in map {
            if value.get_type()? != ValueType::String {
                return Err(self.wrong_type(&format!("{field}.{key}"), "a string"));
            }
            // SAFETY: checked to be a string.
            pairs.push((key, unsafe {
                String::from_napi_value(self.env.raw(), value.raw())?
            }));
        }
        pairs.sort();
        Ok(Some(pairs))
    }

    /// An `AbortSignal`: an object with an `aborted` property and `addEventListener` and
    /// `removeEventListener` methods. Anything else is a `TypeError`; a getter that throws
    /// propagates its own exception.
    pub fn signal(&self, field: &str) -> Result<Option<Object<'env>>> {
        let Some(object) = self.object(field, "an AbortSignal")? else {
            return Ok(None);
        };
        let is_method = |name: &str| -> Result<bool> {
            Ok(object.get_named_property::<Unknown>(name)?.get_type()? == ValueType::Function)
        };
        if object.has_named_property("aborted")?
            && is_method("addEventListener")?
            && is_method("removeEventListener")?
        {
            Ok(Some(object))
        } else {
            Err(self.wrong_type(field, "an AbortSignal"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_clamped_to_a_finite_maximum() {
        let table = [
            (0.0, Duration::ZERO),
            (1.5, Duration::from_micros(1500)),
            (1000.0, Duration::from_secs(1)),
            (f64::MAX, clamped_duration(MAX_DURATION_MS)),
            (1e300, clamped_duration(MAX_DURATION_MS)),
            (f64::INFINITY, clamped_duration(MAX_DURATION_MS)),
        ];
        for (ms, want) in table {
            assert_eq!(clamped_duration(ms), want, "{ms}");
        }
        // Deadlines built from the maximum stay representable.
        let longest = clamped_duration(MAX_DURATION_MS);
        assert!(std::time::Instant::now().checked_add(longest * 2).is_some());
    }

    #[test]
    fn counts_are_truncated_then_clamped() {
        let table = [
            (3.7, 3),
            (-3.7, 1),
            (80.0, 80),
            (1e300, 400),
            (-1e300, 1),
            (0.0, 1),
            (1.9, 1),
            (399.99, 399),
        ];
        for (n, want) in table {
            assert_eq!(clamp_count(n, 1, 400), want, "{n}");
        }
    }
}
