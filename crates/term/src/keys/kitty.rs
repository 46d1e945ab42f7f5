//! The Kitty keyboard protocol's key events (<https://sw.kovidgoyal.net/kitty/keyboard-protocol/>):
//!
//! ```text
//! CSI code[:shifted[:base]] [; modifiers[:event] [; text]] u
//! CSI number [; modifiers[:event]] ~
//! CSI [1 ; modifiers[:event]] {A B C D E F H P Q R S}
//! ```
//!
//! Modifiers travel as `1 + bits` (shift 1, alt 2, ctrl 4, super 8, hyper 16, meta 32,
//! caps-lock 64, num-lock 128); the lock bits never change which key was meant and are masked.

use super::csi::{Params, parse_params, split_csi};
use super::id::{Key, KeyId, Modifiers, NamedKey};
use super::tables::{KITTY_FUNCTIONAL, LETTER_KEYS, TILDE_KEYS};

/// Caps-lock and num-lock: state, not part of the chord.
const LOCK_BITS: u32 = 64 | 128;
/// The largest modifier bit set the protocol defines (all eight bits).
const MAX_MODIFIER_BITS: u32 = 255;

/// The type of a key event, reported by Kitty's "report event types" enhancement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum KeyEventType {
    Press = 1,
    Repeat = 2,
    Release = 3,
}

impl KeyEventType {
    fn from_wire(value: u32) -> Option<KeyEventType> {
        match value {
            1 => Some(KeyEventType::Press),
            2 => Some(KeyEventType::Repeat),
            3 => Some(KeyEventType::Release),
            _ => None,
        }
    }
}

/// The raw fields of one Kitty key event.
///
/// Keys that Kitty sends in legacy form (`CSI 1;5A`, `CSI 3~`, …) carry no code point on the
/// wire; they get Kitty's own Private Use Area numbers for those keys (see [`functional_code`]),
/// e.g. up is 57352 and F1 is 57364, so every event has one number to match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KittyKey {
    pub codepoint: u32,
    pub shifted_key: Option<u32>,
    pub base_layout_key: Option<u32>,
    /// Modifier bits (the wire value minus one) with caps-lock and num-lock removed.
    pub modifier: u32,
    /// The event type when the sequence carried one.
    pub event_type: Option<KeyEventType>,
}

/// Kitty's number for a key it sends in legacy form.
pub const fn functional_code(key: NamedKey) -> u32 {
    match key {
        NamedKey::Escape => 27,
        NamedKey::Enter => 13,
        NamedKey::Tab => 9,
        NamedKey::Backspace => 127,
        NamedKey::Space => 32,
        NamedKey::Insert => 57348,
        NamedKey::Delete => 57349,
        NamedKey::Left => 57350,
        NamedKey::Right => 57351,
        NamedKey::Up => 57352,
        NamedKey::Down => 57353,
        NamedKey::PageUp => 57354,
        NamedKey::PageDown => 57355,
        NamedKey::Home => 57356,
        NamedKey::End => 57357,
        NamedKey::Clear => 57427,
        NamedKey::F1 => 57364,
        NamedKey::F2 => 57365,
        NamedKey::F3 => 57366,
        NamedKey::F4 => 57367,
        NamedKey::F5 => 57368,
        NamedKey::F6 => 57369,
        NamedKey::F7 => 57370,
        NamedKey::F8 => 57371,
        NamedKey::F9 => 57372,
        NamedKey::F10 => 57373,
        NamedKey::F11 => 57374,
        NamedKey::F12 => 57375,
    }
}

/// Parses one Kitty key event; `None` when `data` is not exactly one such sequence.
pub fn parse_kitty_sequence(data: &str) -> Option<KittyKey> {
    let (params, final_byte) = split_csi(data)?;
    from_parts(&parse_params(params)?, final_byte)
}

/// Builds the event from a parsed control sequence's parameters and final byte.
pub(crate) fn from_parts(params: &Params, final_byte: u8) -> Option<KittyKey> {
    match final_byte {
        b'u' => csi_u(params),
        b'~' => tilde(params),
        _ => letter(params, final_byte),
    }
}

/// `CSI code[:shifted[:base]] [; modifiers[:event] [; text]] u`
fn csi_u(params: &Params) -> Option<KittyKey> {
    if params.subfields(0) > 3 {
        return None;
    }
    let codepoint = unicode_scalar(params.get(0, 0)?)?;
    let shifted_key = optional(params.get(0, 1), unicode_scalar)?;
    let base_layout_key = optional(params.get(0, 2), unicode_scalar)?;
    let (modifier, event_type) = modifiers_field(params)?;
    Some(KittyKey {
        codepoint,
        shifted_key,
        base_layout_key,
        modifier,
        event_type,
    })
}

/// `CSI number [; modifiers[:event]] ~`
fn tilde(params: &Params) -> Option<KittyKey> {
    if params.len() > 2 || params.subfields(0) != 1 {
        return None;
    }
    let key = *TILDE_KEYS.get(&params.get(0, 0)?)?;
    legacy_form(key, params)
}

/// `CSI final` or `CSI 1 ; modifiers[:event] final` for the arrow, home/end, clear and F1–F4 keys.
fn letter(params: &Params, final_byte: u8) -> Option<KittyKey> {
    let key = *LETTER_KEYS.get(&final_byte)?;
    match params.len() {
        0 => {}
        2 if params.subfields(0) == 1 && params.get(0, 0) == Some(1) => {}
        _ => return None,
    }
    legacy_form(key, params)
}

fn legacy_form(key: NamedKey, params: &Params) -> Option<KittyKey> {
    let (modifier, event_type) = modifiers_field(params)?;
    Some(KittyKey {
        codepoint: functional_code(key),
        shifted_key: None,
        base_layout_key: None,
        modifier,
        event_type,
    })
}

/// The second field, `modifiers[:event]`: absent or empty means no modifiers and no event type.
fn modifiers_field(params: &Params) -> Option<(u32, Option<KeyEventType>)> {
    if params.subfields(1) > 2 {
        return None;
    }
    let bits = match params.get(1, 0) {
        None => 0,
        Some(wire) => wire.checked_sub(1).filter(|b| *b <= MAX_MODIFIER_BITS)?,
    };
    let event_type = optional(params.get(1, 1), KeyEventType::from_wire)?;
    Some((bits & !LOCK_BITS, event_type))
}

/// An optional field that must be valid when present: `Some(None)` when absent, `None` when invalid.
fn optional<T>(value: Option<u32>, convert: impl FnOnce(u32) -> Option<T>) -> Option<Option<T>> {
    match value {
        None => Some(None),
        Some(value) => convert(value).map(Some),
    }
}

fn unicode_scalar(value: u32) -> Option<u32> {
    char::from_u32(value).map(u32::from)
}

/// The key id of a Kitty event; `None` for releases, keys an id cannot name (media keys,
/// modifier keys, F13+) and hyper/meta chords.
pub(crate) fn to_key_id(event: &KittyKey) -> Option<KeyId> {
    if event.event_type == Some(KeyEventType::Release) {
        return None;
    }
    let modifiers = Modifiers::from_bits(event.modifier)?;
    let key = match key_for_codepoint(event.codepoint) {
        Some(key) if is_latin(key) => key,
        // A non-Latin layout (`CSI 1089::99;5u`, ctrl+С) resolves through its base-layout key.
        primary => match event.base_layout_key.and_then(key_for_codepoint) {
            Some(base) if is_latin(base) => base,
            _ => primary?,
        },
    };
    Some(KeyId::new(modifiers, key).shifted_letter_as_shift())
}

/// Named keys and ASCII characters: the keys a shortcut is written with.
fn is_latin(key: Key) -> bool {
    match key {
        Key::Named(_) => true,
        Key::Char(c) => c.is_ascii(),
    }
}

/// The key a Kitty key number or an xterm modifyOtherKeys code stands for.
pub(crate) fn key_for_codepoint(code: u32) -> Option<Key> {
    match code {
        8 | 127 => Some(Key::Named(NamedKey::Backspace)),
        9 => Some(Key::Named(NamedKey::Tab)),
        13 => Some(Key::Named(NamedKey::Enter)),
        27 => Some(Key::Named(NamedKey::Escape)),
        32 => Some(Key::Named(NamedKey::Space)),
        0xe000..=0xf8ff => KITTY_FUNCTIONAL.get(&code).copied(),
        _ => char::from_u32(code)
            .filter(|c| !c.is_control() && !c.is_whitespace())
            .map(Key::Char),
    }
}

/// True when `data` is a Kitty key event (press or repeat) for `codepoint` with exactly the
/// modifier bits `modifier` (lock bits ignored on both sides). A non-Latin key also matches
/// through its base-layout key.
pub fn matches_kitty_sequence(data: &str, codepoint: u32, modifier: u32) -> bool {
    let Some(event) = parse_kitty_sequence(data) else {
        return false;
    };
    if event.event_type == Some(KeyEventType::Release) || event.modifier != modifier & !LOCK_BITS {
        return false;
    }
    event.codepoint == codepoint
        || (event.codepoint > 0x7f && event.base_layout_key == Some(codepoint))
}
