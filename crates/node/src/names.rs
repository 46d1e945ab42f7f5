//! [`Names`]: the property names of a run's options and result, made once per Node environment
//! and kept as JS strings, with small JS functions that read and make those objects.
//!
//! Naming a property by a Rust string, to read it (`napi_get_named_property`) or to define it (a
//! `#[napi(object)]`'s fields), makes V8 decode the name and look it up in its table of interned
//! strings on every call; for a builtin's run, over in microseconds, that was a tenth of its
//! time. These are made once, held by a reference to an array in the environment's instance
//! data (napi-rs's typed `set_instance_data`), interned by V8 the first time they are used as
//! keys, and read back by index; each function is held by a reference of its own.

use std::ptr;

use napi::bindgen_prelude::{Env, Result};
use napi::{check_status, sys};

/// The names kept; a [`Name`] is an index into it.
const NAMES: [&str; 11] = [
    "cancelled",
    "timedOut",
    "exitCode",
    "minimized",
    "command",
    "cwd",
    "env",
    "timeoutMs",
    "signal",
    "durationMs",
    "sessionReset",
];

/// The source of [`Names::common_result`]'s function.
const COMMON_RESULT: &str = "(cancelled, timedOut, exitCode, cwd, durationMs) => \
     ({ cancelled, timedOut, exitCode, cwd, durationMs })";

/// The source of [`Names::run_options`]'s function: `Shell.run`'s fields, read in the order the
/// readers read them, each once. The common case, a string `command` alone, comes back as that
/// string; anything else as the array of the five (only `command` when it is no string: its
/// reader throws before reading on).
const RUN_OPTIONS: &str = "(o) => { const c = o.command; if (typeof c !== 'string') return [c]; \
     const w = o.cwd, e = o.env, t = o.timeoutMs, s = o.signal; \
     return w == null && e == null && t == null && s == null ? c : [c, w, e, t, s] }";

/// The source of [`Names::promise_resolve`]'s function: `Promise.resolve` as it was when made.
const PROMISE_RESOLVE: &str = "Promise.resolve.bind(Promise)";

/// The functions kept beside the names, each by a reference of its own.
const FUNCTIONS: [&str; 3] = [COMMON_RESULT, RUN_OPTIONS, PROMISE_RESOLVE];

/// The fields [`RUN_OPTIONS`] reads, in the order of its array.
const RUN_OPTION_NAMES: [Name; 5] = [Name(4), Name(5), Name(6), Name(7), Name(8)];

// The indices above name, in [`NAMES`], the fields [`RUN_OPTIONS`] returns, in its order: a
// reordered list fails the build instead of reading one option as another.
const _: () = {
    const fn at(i: usize) -> &'static [u8] {
        NAMES[RUN_OPTION_NAMES[i].0].as_bytes()
    }
    assert!(
        matches!(at(0), b"command")
            && matches!(at(1), b"cwd")
            && matches!(at(2), b"env")
            && matches!(at(3), b"timeoutMs")
            && matches!(at(4), b"signal"),
        "RUN_OPTION_NAMES does not match RUN_OPTIONS"
    );
};

/// One of the kept names.
#[derive(Clone, Copy)]
pub struct Name(usize);

impl Name {
    pub const CANCELLED: Name = Name(0);
    pub const TIMED_OUT: Name = Name(1);
    pub const EXIT_CODE: Name = Name(2);
    pub const MINIMIZED: Name = Name(3);
    pub const CWD: Name = Name(5);
    pub const DURATION_MS: Name = Name(9);
    pub const SESSION_RESET: Name = Name(10);

    /// The kept name spelled `text`, if it is one (options are read by their field's name).
    pub fn find(text: &str) -> Option<Name> {
        NAMES.iter().position(|name| *name == text).map(Name)
    }

    /// Where this name's value is in the array of [`RUN_OPTIONS`], if it reads it.
    pub fn run_option_index(self) -> Option<usize> {
        RUN_OPTION_NAMES.iter().position(|name| name.0 == self.0)
    }
}

/// The kept names and functions of the current call's environment.
#[derive(Clone, Copy)]
pub struct Names {
    env: sys::napi_env,
    kept: Kept,
}

/// What the instance data holds: a reference to the array of names (a reference to a string
/// needs Node-API 10; an array can be referenced everywhere) and one to each function, which is
/// read back without an element lookup. The references are not deleted when the environment
/// ends: the environment frees its references itself then.
#[derive(Clone, Copy)]
struct Kept {
    names: sys::napi_ref,
    functions: [sys::napi_ref; FUNCTIONS.len()],
}

impl Names {
    /// The environment's names, made on its first call.
    pub fn of(env: &Env) -> Result<Self> {
        let kept = match env.get_instance_data::<Kept>()? {
            Some(kept) => *kept,
            None => keep(env)?,
        };
        Ok(Self {
            env: env.raw(),
            kept,
        })
    }

    /// `(cancelled, timedOut, exitCode, cwd, durationMs) => ({ … })`, kept after the names: an
    /// object literal gets its final shape at once, where defining the properties from here
    /// walks V8's shape transitions one by one, which cost more than the call.
    pub fn common_result(&self) -> Result<sys::napi_value> {
        self.value(self.kept.functions[0])
    }

    /// The function that reads `Shell.run`'s options in one call (see [`RUN_OPTIONS`]).
    pub fn run_options(&self) -> Result<sys::napi_value> {
        self.value(self.kept.functions[1])
    }

    /// `Promise.resolve`: a promise settled with a value already at hand in one call, where
    /// making one through Node-API and resolving it takes two and a persistent handle.
    pub fn promise_resolve(&self) -> Result<sys::napi_value> {
        self.value(self.kept.functions[2])
    }

    /// The JS string for `name`.
    pub fn get(&self, name: Name) -> Result<sys::napi_value> {
        let array = self.value(self.kept.names)?;
        let mut key = ptr::null_mut();
        // SAFETY: `array` is a live array of this call's environment; `name` is an index within it.
        check_status!(unsafe { sys::napi_get_element(self.env, array, name.0 as u32, &mut key) })?;
        Ok(key)
    }

    fn value(&self, kept: sys::napi_ref) -> Result<sys::napi_value> {
        let mut value = ptr::null_mut();
        // SAFETY: `kept` is a live reference of this call's environment.
        check_status!(unsafe { sys::napi_get_reference_value(self.env, kept, &mut value) })?;
        Ok(value)
    }
}

/// Makes the array of names and the functions, and keeps references to them in the
/// environment's instance data.
fn keep(env: &Env) -> Result<Kept> {
    let raw = env.raw();
    let mut array = ptr::null_mut();
    // SAFETY: a Node-API call on the live environment; `array` is written by it.
    check_status!(unsafe { sys::napi_create_array_with_length(raw, NAMES.len(), &mut array) })?;
    for (index, name) in NAMES.iter().enumerate() {
        let key = latin1(raw, name)?;
        // SAFETY: `array` and `key` are values of this environment, `index` is within length.
        check_status!(unsafe { sys::napi_set_element(raw, array, index as u32, key) })?;
    }
    let mut functions = [ptr::null_mut(); FUNCTIONS.len()];
    for (kept, source) in functions.iter_mut().zip(FUNCTIONS) {
        let mut function = ptr::null_mut();
        // SAFETY: the script is a value of this environment; `function` is written by the call.
        check_status!(unsafe { sys::napi_run_script(raw, latin1(raw, source)?, &mut function) })?;
        *kept = reference(raw, function)?;
    }
    let kept = Kept {
        names: reference(raw, array)?,
        functions,
    };
    env.set_instance_data(kept, (), |_| {})?;
    Ok(kept)
}

/// A strong reference to `value`, a value of the live environment `raw`.
fn reference(raw: sys::napi_env, value: sys::napi_value) -> Result<sys::napi_ref> {
    let mut kept = ptr::null_mut();
    // SAFETY: `value` is a value of this environment; `kept` is written by the call.
    check_status!(unsafe { sys::napi_create_reference(raw, value, 1, &mut kept) })?;
    Ok(kept)
}

/// `text` (ASCII) as a JS string.
fn latin1(raw: sys::napi_env, text: &str) -> Result<sys::napi_value> {
    let mut string = ptr::null_mut();
    // SAFETY: a Node-API call on the live environment with a valid buffer and out-pointer.
    check_status!(unsafe {
        sys::napi_create_string_latin1(raw, text.as_ptr().cast(), text.len() as isize, &mut string)
    })?;
    Ok(string)
}
