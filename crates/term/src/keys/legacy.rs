//! Legacy key encodings: single bytes, the fixed escape sequences of xterm, rxvt and the Linux
//! console, `ESC`-prefixed alt chords, SS3 with a modifier, and xterm's modifyOtherKeys
//! (`CSI 27 ; modifiers ; code ~`).

use super::csi::{Params, parse_params, split_csi};
use super::id::{Key, KeyId, Modifiers, NamedKey};
use super::kitty;
use super::tables::{LEGACY_SEQUENCES, LETTER_KEYS};

const ESC: char = '\x1b';

/// Decodes one complete key sequence in any of the encodings this module and [`kitty`] know.
pub(crate) fn decode(data: &str, kitty_active: bool) -> Option<KeyId> {
    let mut chars = data.chars();
    let first = chars.next()?;
    let rest = chars.as_str();
    if rest.is_empty() {
        return single_char(first);
    }
    if first != ESC {
        return None;
    }
    let mut after_esc = rest.chars();
    let second = after_esc.next()?;
    if after_esc.as_str().is_empty() {
        return alt_char(second, kitty_active);
    }
    if second == ESC {
        // `ESC ESC [ A`: alt held with a key that sends an escape sequence.
        return escape_sequence(rest).map(|key| key.with(Modifiers::ALT));
    }
    escape_sequence(data)
}

/// A byte sequence that starts with ESC and names a key by itself (no alt prefix).
fn escape_sequence(data: &str) -> Option<KeyId> {
    if let Some(key) = LEGACY_SEQUENCES.get(data) {
        return Some(*key);
    }
    if let Some((params, final_byte)) = split_csi(data) {
        let params = parse_params(params)?;
        if final_byte == b'~' && params.get(0, 0) == Some(27) && params.len() == 3 {
            return modify_other_keys(&params);
        }
        return kitty::to_key_id(&kitty::from_parts(&params, final_byte)?);
    }
    ss3_with_modifier(data)
}

/// The key of a single character: the C0 controls as enter/tab/backspace/escape/ctrl+key,
/// space, and any other non-control character as itself.
pub(crate) fn single_char(c: char) -> Option<KeyId> {
    let named = |key| Some(KeyId::named(Modifiers::NONE, key));
    let ctrl = |c| Some(KeyId::new(Modifiers::CTRL, Key::Char(c)));
    match c {
        // These bytes belong to the keys that send them, never to ctrl+m/j/i/h/[.
        '\r' | '\n' => named(NamedKey::Enter),
        '\t' => named(NamedKey::Tab),
        '\x7f' | '\x08' => named(NamedKey::Backspace),
        '\x1b' => named(NamedKey::Escape),
        ' ' => named(NamedKey::Space),
        '\0' => Some(KeyId::named(Modifiers::CTRL, NamedKey::Space)),
        '\x01'..='\x1a' => ctrl(char::from(c as u8 + b'a' - 1)),
        '\x1c' => ctrl('\\'),
        '\x1d' => ctrl(']'),
        '\x1e' => ctrl('^'),
        '\x1f' => ctrl('_'),
        // Other whitespace (U+2000…) has no key id (ids are trimmed); U+FFFD stands for bytes
        // that were not UTF-8 (a lone surrogate from JS), not for a key.
        c if c.is_control() || c.is_whitespace() || c == char::REPLACEMENT_CHARACTER => None,
        c => Some(KeyId::new(Modifiers::NONE, Key::Char(c))),
    }
}

/// `ESC c`: alt with the key of `c` (`ESC A` is shift+alt+a, `ESC ^A` ctrl+alt+a). While the
/// Kitty protocol is active, alt chords arrive as `CSI u`, so `ESC` + a printable character is
/// an escape followed by typing, not a key.
fn alt_char(c: char, kitty_active: bool) -> Option<KeyId> {
    let key = single_char(c)?;
    let printable =
        matches!(key.key, Key::Char(_) | Key::Named(NamedKey::Space)) && key.modifiers.is_empty();
    if kitty_active && printable {
        return None;
    }
    Some(key.canonical().with(Modifiers::ALT))
}

/// `CSI 27 ; modifiers ; code ~` (xterm modifyOtherKeys).
fn modify_other_keys(params: &Params) -> Option<KeyId> {
    if (0..3).any(|field| params.subfields(field) != 1) {
        return None;
    }
    let bits = params.get(1, 0)?.checked_sub(1)?;
    let modifiers = Modifiers::from_bits(bits)?;
    let key = kitty::key_for_codepoint(params.get(2, 0)?)?;
    Some(KeyId::new(modifiers, key).shifted_letter_as_shift())
}

/// `SS3 modifiers final` (old xterm: `ESC O 5 P` is ctrl+F1).
fn ss3_with_modifier(data: &str) -> Option<KeyId> {
    let body = data.strip_prefix("\x1bO")?;
    let (&final_byte, digits) = body.as_bytes().split_last()?;
    let key = *LETTER_KEYS.get(&final_byte)?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let wire: u32 = body[..digits.len()].parse().ok()?;
    let modifiers = Modifiers::from_bits(wire.checked_sub(1)?)?;
    Some(KeyId::named(modifiers, key))
}
