//! [`Names`]: the property names of a run's result, made once per Node environment and kept as
//! JS strings.
//!
//! Defining a property by a Rust name (a `#[napi(object)]`'s fields) makes V8 create the string
//! and intern it on every object, which cost more than the object itself. These are made once,
//! held by a reference to an array in the environment's instance data (napi-rs's typed
//! `set_instance_data`), and interned by V8 the first time they are used as keys.
//!
//! Reading them back costs a `napi_get_element` each, which is about what naming a property
//! costs when *reading* it (`napi_get_named_property`): the options objects are read by name.

use std::ptr;

use napi::bindgen_prelude::{Env, Result};
use napi::{check_status, sys};

/// The names kept, in the order of their index in the array.
const NAMES: [&str; 4] = ["cancelled", "timedOut", "exitCode", "minimized"];

/// The kept names, readable in the current call (their array is a value of its handle scope).
#[derive(Clone, Copy)]
pub struct Names {
    env: sys::napi_env,
    array: sys::napi_value,
}

/// What the instance data holds: the reference to the array of names. The reference is not
/// deleted when the environment ends: the environment frees its references itself then.
struct Kept(sys::napi_ref);

impl Names {
    /// The environment's names, made on its first call.
    pub fn of(env: &Env) -> Result<Self> {
        let kept = match env.get_instance_data::<Kept>()? {
            Some(kept) => kept.0,
            None => keep(env)?,
        };
        let env = env.raw();
        let mut array = ptr::null_mut();
        // SAFETY: `kept` is a live reference of this environment.
        check_status!(unsafe { sys::napi_get_reference_value(env, kept, &mut array) })?;
        Ok(Self { env, array })
    }

    /// The JS string for `name`, when it is one of those kept.
    pub fn get(&self, name: &str) -> Result<Option<sys::napi_value>> {
        let Some(index) = NAMES.iter().position(|kept| *kept == name) else {
            return Ok(None);
        };
        let mut key = ptr::null_mut();
        // SAFETY: `array` is a live array of this call's environment; `index` is within it.
        check_status!(unsafe {
            sys::napi_get_element(self.env, self.array, index as u32, &mut key)
        })?;
        Ok(Some(key))
    }
}

/// Makes the array of names and keeps a reference to it in the environment's instance data.
fn keep(env: &Env) -> Result<sys::napi_ref> {
    let raw = env.raw();
    let mut array = ptr::null_mut();
    // SAFETY (all calls below): Node-API calls on the live environment with valid pointers.
    check_status!(unsafe { sys::napi_create_array_with_length(raw, NAMES.len(), &mut array) })?;
    for (index, name) in NAMES.iter().enumerate() {
        let mut key = ptr::null_mut();
        check_status!(unsafe {
            sys::napi_create_string_latin1(raw, name.as_ptr().cast(), name.len() as isize, &mut key)
        })?;
        check_status!(unsafe { sys::napi_set_element(raw, array, index as u32, key) })?;
    }
    let mut kept = ptr::null_mut();
    check_status!(unsafe { sys::napi_create_reference(raw, array, 1, &mut kept) })?;
    env.set_instance_data(Kept(kept), (), |_| {})?;
    Ok(kept)
}
