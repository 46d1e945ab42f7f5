//! Reading JS option objects field by field, so a wrong type fails with a `TypeError` that names
//! the field (`options.timeoutMs must be a non-negative number`) instead of a generic conversion
//! error.

use std::collections::HashMap;

use napi::bindgen_prelude::{Env, FromNapiValue, JsObjectValue, JsValue, Object, Result, Unknown};
use napi::{Error, JsTypeError, Status, ValueType};

/// Throws a `TypeError` (code `ERR_INVALID_ARG_TYPE`, as Node's own APIs use) with `message`
/// into `env` and returns the error to propagate with `?`.
pub fn type_error(env: &Env, message: impl Into<String>) -> Error {
    let message = message.into();
    let error = Error::new("ERR_INVALID_ARG_TYPE".to_string(), message.clone());
    // SAFETY: `env` is the live environment of the current call.
    unsafe { JsTypeError::from(error).throw_into(env.raw()) };
    Error::new(Status::PendingException, message)
}

/// Typed access to the fields of one options object; `name` prefixes field names in errors.
pub struct OptionReader<'a, 'env> {
    env: &'a Env,
    object: Option<Object<'env>>,
    name: &'static str,
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
        Ok(Self { env, object, name })
    }

    fn field(&self, field: &str) -> Result<Option<Unknown<'env>>> {
        let Some(object) = &self.object else {
            return Ok(None);
        };
        let value: Unknown = object.get_named_property(field)?;
        Ok(match value.get_type()? {
            ValueType::Undefined | ValueType::Null => None,
            _ => Some(value),
        })
    }

    fn fail(&self, field: &str, expected: &str) -> Error {
        type_error(
            self.env,
            format!("{}.{field} must be {expected}", self.name),
        )
    }

    /// The raw object, for fields read elsewhere (e.g. an AbortSignal).
    pub fn object(&self, field: &str, expected: &str) -> Result<Option<Object<'env>>> {
        match self.field(field)? {
            None => Ok(None),
            // SAFETY: checked to be an object.
            Some(v) if v.get_type()? == ValueType::Object => {
                Ok(Some(unsafe { v.cast::<Object>()? }))
            }
            Some(_) => Err(self.fail(field, expected)),
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
            Some(_) => Err(self.fail(field, "a string")),
        }
    }

    pub fn required_string(&self, field: &str) -> Result<String> {
        self.string(field)?
            .ok_or_else(|| self.fail(field, "a string"))
    }

    pub fn bool(&self, field: &str) -> Result<Option<bool>> {
        match self.field(field)? {
            None => Ok(None),
            // SAFETY: checked to be a boolean.
            Some(v) if v.get_type()? == ValueType::Boolean => Ok(Some(unsafe {
                bool::from_napi_value(self.env.raw(), v.raw())?
            })),
            Some(_) => Err(self.fail(field, "a boolean")),
        }
    }

    /// A finite number (any sign); callers clamp or validate ranges.
    pub fn number(&self, field: &str) -> Result<Option<f64>> {
        match self.field(field)? {
            None => Ok(None),
            Some(v) if v.get_type()? == ValueType::Number => {
                // SAFETY: checked to be a number.
                let n = unsafe { f64::from_napi_value(self.env.raw(), v.raw())? };
                if n.is_finite() {
                    Ok(Some(n))
                } else {
                    Err(self.fail(field, "a finite number"))
                }
            }
            Some(_) => Err(self.fail(field, "a number")),
        }
    }

    /// A duration in milliseconds: a finite number ≥ 0.
    pub fn duration_ms(&self, field: &str) -> Result<Option<std::time::Duration>> {
        match self.number(field)? {
            None => Ok(None),
            Some(ms) if ms >= 0.0 => Ok(Some(std::time::Duration::from_secs_f64(ms / 1000.0))),
            Some(_) => Err(self.fail(field, "a non-negative number")),
        }
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
                return Err(self.fail(&format!("{field}.{key}"), "a string"));
            }
            // SAFETY: checked to be a string.
            pairs.push((key, unsafe {
                String::from_napi_value(self.env.raw(), value.raw())?
            }));
        }
        pairs.sort();
        Ok(Some(pairs))
    }

    /// An `AbortSignal` (anything with `aborted` and `addEventListener`).
    pub fn signal(&self, field: &str) -> Result<Option<Object<'env>>> {
        let Some(object) = self.object(field, "an AbortSignal")? else {
            return Ok(None);
        };
        let looks_right = object.has_named_property("aborted")?
            && object
                .get_named_property::<Unknown>("addEventListener")?
                .get_type()?
                == ValueType::Function;
        if looks_right {
            Ok(Some(object))
        } else {
            Err(self.fail(field, "an AbortSignal"))
        }
    }
}
