//! `parseKey`, `matchesKey`, `parseKittySequence`, `matchesKittySequence`,
//! `matchesLegacySequence`, `encodeKey` and `KeyEventType` over `shellwright_term::keys`.
//!
//! Parsing never throws: unknown or malformed input is `null`/`false`. Only a bad argument is an
//! error: a `TypeError` naming it for a wrong type, a `RangeError` for a number that is `NaN` or
//! infinite (a finite number that is no code point or modifier simply matches nothing);
//! `encodeKey` given an id that names no key is a `RangeError`.

// `#[napi]` registers these functions only in the cdylib, so a test build sees them unused.

use std::borrow::Cow;
use std::fmt::{self, Write};

use napi::JsString;
use napi::bindgen_prelude::{Env, Object, Result, Unknown};
use napi_derive::napi;
use shellwright_term::keys;

use crate::error::range_error;
use crate::options::{
    OptionReader, SHORT_STRING, bool_arg, finite_arg, short_string_arg, string_arg,
};

/// The type of a key event, reported by the Kitty protocol's "report event types" enhancement.
#[napi]
pub enum KeyEventType {
    Press = 1,
    Repeat = 2,
    Release = 3,
}

/// The key id of one key sequence (`"\x1b[1;5A"` → `"ctrl+up"`), or null.
///
/// Called per keystroke, so it allocates nothing for a short sequence: the argument is read into
/// a buffer on the stack and the id written into another, from which the JS string is made.
#[napi(
    catch_unwind,
    ts_args_type = "data: string, kittyProtocolActive: boolean",
    ts_return_type = "string | null"
)]
pub fn parse_key<'env>(
    env: &'env Env,
    data: Unknown<'env>,
    kitty_protocol_active: Unknown<'env>,
) -> Result<Option<JsString<'env>>> {
    let mut buffer = [0u8; SHORT_STRING];
    let data = short_string_arg(env, data, "data", &mut buffer)?;
    let kitty_active = bool_arg(env, kitty_protocol_active, "kittyProtocolActive")?;
    keys::decode_key(&data, kitty_active)
        .map(|key| key_id_string(env, &key))
        .transpose()
}

/// The JS string of `key`'s id, formatted on the stack (an id longer than the buffer, which no
/// key has, on the heap).
fn key_id_string<'env>(env: &'env Env, key: &keys::KeyId) -> Result<JsString<'env>> {
    let mut id = StackText {
        bytes: [0; SHORT_STRING],
        len: 0,
    };
    let text: Cow<str> = match write!(id, "{key}") {
        Ok(()) => Cow::Borrowed(id.as_str()),
        Err(_) => Cow::Owned(key.to_string()),
    };
    env.create_string(&text)
}

/// A short text written on the stack; a write past its end fails.
struct StackText {
    bytes: [u8; SHORT_STRING],
    len: usize,
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `&str`s are written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let end = self.len + text.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(text.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// True when `data` is the key named by `keyId` (ids are trimmed and case-insensitive).
#[napi(
    catch_unwind,
    ts_args_type = "data: string, keyId: string, kittyProtocolActive: boolean"
)]
pub fn matches_key(
    env: &Env,
    data: Unknown,
    key_id: Unknown,
    kitty_protocol_active: Unknown,
) -> Result<bool> {
    let data = string_arg(env, data, "data")?;
    let key_id = string_arg(env, key_id, "keyId")?;
    let kitty_active = bool_arg(env, kitty_protocol_active, "kittyProtocolActive")?;
    Ok(keys::matches_key(&data, &key_id, kitty_active))
}

/// The raw fields of one Kitty key event, or null.
#[napi(
    catch_unwind,
    ts_args_type = "data: string",
    ts_return_type = "KittyKeyEvent | null"
)]
pub fn parse_kitty_sequence<'env>(env: &'env Env, data: Unknown) -> Result<Option<Object<'env>>> {
    let data = string_arg(env, data, "data")?;
    let Some(event) = keys::parse_kitty_sequence(&data) else {
        return Ok(None);
    };
    let mut object = Object::new(env)?;
    object.set("codepoint", event.codepoint)?;
    if let Some(shifted) = event.shifted_key {
        object.set("shiftedKey", shifted)?;
    }
    if let Some(base) = event.base_layout_key {
        object.set("baseLayoutKey", base)?;
    }
    object.set("modifier", event.modifier)?;
    if let Some(event_type) = event.event_type {
        object.set("eventType", event_type as u32)?;
    }
    Ok(Some(object))
}

/// True when `data` is a Kitty press/repeat of `expectedCodepoint` with exactly
/// `expectedModifier` (lock bits ignored).
#[napi(
    catch_unwind,
    ts_args_type = "data: string, expectedCodepoint: number, expectedModifier: number"
)]
pub fn matches_kitty_sequence(
    env: &Env,
    data: Unknown,
    expected_codepoint: Unknown,
    expected_modifier: Unknown,
) -> Result<bool> {
    let data = string_arg(env, data, "data")?;
    let codepoint = finite_arg(env, expected_codepoint, "expectedCodepoint")?;
    let modifier = finite_arg(env, expected_modifier, "expectedModifier")?;
    let (Some(codepoint), Some(modifier)) = (as_u32(codepoint), as_u32(modifier)) else {
        return Ok(false);
    };
    Ok(keys::matches_kitty_sequence(&data, codepoint, modifier))
}

/// True when `data` is one of the fixed legacy sequences of `keyName`.
#[napi(catch_unwind, ts_args_type = "data: string, keyName: string")]
pub fn matches_legacy_sequence(env: &Env, data: Unknown, key_name: Unknown) -> Result<bool> {
    let data = string_arg(env, data, "data")?;
    let key_name = string_arg(env, key_name, "keyName")?;
    Ok(keys::matches_legacy_sequence(&data, &key_name))
}

/// The bytes a terminal sends for the key `keyId` (`"ctrl+c"` → `"\x03"`, `"up"` → `"\x1b[A"`,
/// or `"\x1bOA"` with `applicationCursorKeys`), as xterm sends them; `parseKey` reads them back.
#[napi(
    ts_args_type = "keyId: string, options?: { applicationCursorKeys?: boolean }",
    ts_return_type = "string"
)]
pub fn encode_key(env: &Env, key_id: Unknown, options: Option<Unknown>) -> Result<String> {
    let key_id = string_arg(env, key_id, "keyId")?;
    let reader = OptionReader::new(env, options, "options", true)?;
    let options = keys::EncodeOptions {
        application_cursor_keys: reader.bool("applicationCursorKeys")?.unwrap_or(false),
    };
    keys::encode_key_id(&key_id, options).ok_or_else(|| {
        range_error(
            env,
            format!("keyId must name a key a terminal can send, got {key_id:?}"),
        )
    })
}

/// A JS number that is a whole number in `u32` range; anything else matches no key.
fn as_u32(value: f64) -> Option<u32> {
    let in_range = value.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&value);
    in_range.then_some(value as u32)
}
