//! `parseKey`, `matchesKey`, `parseKittySequence`, `matchesKittySequence`,
//! `matchesLegacySequence` and `KeyEventType` (DESIGN §2.4) over `shellwright_term::keys`.
//!
//! Parsing never throws: unknown or malformed input is `null`/`false`. Only a wrong argument
//! type is an error: a `TypeError` naming the argument.

// `#[napi]` registers these functions only in the cdylib, so a test build sees them unused.

use napi::ValueType;
use napi::bindgen_prelude::{Env, FromNapiValue, JsValue, Object, Result, Unknown};
use napi_derive::napi;
use shellwright_term::keys;

use crate::options::type_error;

/// The type of a key event, reported by the Kitty protocol's "report event types" enhancement.
#[napi]
pub enum KeyEventType {
    Press = 1,
    Repeat = 2,
    Release = 3,
}

/// The key id of one key sequence (`"\x1b[1;5A"` → `"ctrl+up"`), or null.
#[napi(ts_args_type = "data: string, kittyProtocolActive: boolean")]
pub fn parse_key(
    env: &Env,
    data: Unknown,
    kitty_protocol_active: Unknown,
) -> Result<Option<String>> {
    let data = string_arg(env, data, "data")?;
    let kitty_active = bool_arg(env, kitty_protocol_active, "kittyProtocolActive")?;
    Ok(keys::parse_key(&data, kitty_active))
}

/// True when `data` is the key named by `keyId` (ids are trimmed and case-insensitive).
#[napi(ts_args_type = "data: string, keyId: string, kittyProtocolActive: boolean")]
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
#[napi(ts_args_type = "data: string", ts_return_type = "KittyKeyEvent | null")]
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
#[napi(ts_args_type = "data: string, expectedCodepoint: number, expectedModifier: number")]
pub fn matches_kitty_sequence(
    env: &Env,
    data: Unknown,
    expected_codepoint: Unknown,
    expected_modifier: Unknown,
) -> Result<bool> {
    let data = string_arg(env, data, "data")?;
    let codepoint = number_arg(env, expected_codepoint, "expectedCodepoint")?;
    let modifier = number_arg(env, expected_modifier, "expectedModifier")?;
    let (Some(codepoint), Some(modifier)) = (as_u32(codepoint), as_u32(modifier)) else {
        return Ok(false);
    };
    Ok(keys::matches_kitty_sequence(&data, codepoint, modifier))
}

/// True when `data` is one of the fixed legacy sequences of `keyName`.
#[napi(ts_args_type = "data: string, keyName: string")]
pub fn matches_legacy_sequence(env: &Env, data: Unknown, key_name: Unknown) -> Result<bool> {
    let data = string_arg(env, data, "data")?;
    let key_name = string_arg(env, key_name, "keyName")?;
    Ok(keys::matches_legacy_sequence(&data, &key_name))
}

/// A JS number that is a whole number in `u32` range; anything else matches no key.
fn as_u32(value: f64) -> Option<u32> {
    let in_range = value.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&value);
    in_range.then_some(value as u32)
}

fn string_arg(env: &Env, value: Unknown, name: &str) -> Result<String> {
    if value.get_type()? != ValueType::String {
        return Err(type_error(env, format!("{name} must be a string")));
    }
    // SAFETY: checked to be a string.
    unsafe { String::from_napi_value(env.raw(), value.raw()) }
}

fn bool_arg(env: &Env, value: Unknown, name: &str) -> Result<bool> {
    if value.get_type()? != ValueType::Boolean {
        return Err(type_error(env, format!("{name} must be a boolean")));
    }
    // SAFETY: checked to be a boolean.
    unsafe { bool::from_napi_value(env.raw(), value.raw()) }
}

fn number_arg(env: &Env, value: Unknown, name: &str) -> Result<f64> {
    if value.get_type()? != ValueType::Number {
        return Err(type_error(env, format!("{name} must be a number")));
    }
    // SAFETY: checked to be a number.
    unsafe { f64::from_napi_value(env.raw(), value.raw()) }
}
