//! The key parser: which key a terminal's input bytes stand for.
//!
//! One call decodes one complete key sequence (the bytes of one read, as a TUI receives them)
//! into a key id such as `ctrl+c`, `shift+alt+up` or `f5`. Encodings understood:
//!
//! - single bytes: C0 controls (`\r`/`\n` enter, `\t` tab, `\x7f`/`\x08` backspace, `\x1b` escape,
//!   `\x00` ctrl+space, `\x01`–`\x1a` ctrl+letter, `\x1c`–`\x1f` ctrl+symbol) and printable text;
//! - the legacy tables ([xterm ctlseqs], "PC-Style Function Keys"; rxvt's `$`/`^`/`@` variants;
//!   the Linux console's `ESC [ [ A`…; SS3 forms), `ESC` + key as alt, `ESC ESC [ …` as alt + key;
//! - xterm modifyOtherKeys, `CSI 27 ; modifiers ; code ~`;
//! - the [Kitty keyboard protocol]: `CSI code[:shifted[:base]] [; mods[:event] [; text]] u`,
//!   `CSI n ; mods ~`, `CSI 1 ; mods {ABCDEFHPQRS}`, with event types, alternate keys and lock
//!   bits masked.
//!
//! Ids order their modifiers `shift+ctrl+alt+super+<key>`. The legacy bytes `\r \n \t \x08 \x1b
//! \x7f` are always enter/tab/backspace/escape; ctrl+m/j/i/h/[ only arrive through Kitty or
//! modifyOtherKeys. Nothing here panics: unknown or malformed input is `None`/`false`. Only
//! [`parse_key`] allocates (the id it returns).
//!
//! [`encode_key`] goes the other way, from a key id to the bytes xterm sends for it.
//!
//! [xterm ctlseqs]: https://invisible-island.net/xterm/ctlseqs/ctlseqs.html
//! [Kitty keyboard protocol]: https://sw.kovidgoyal.net/kitty/keyboard-protocol/

mod csi;
mod encode;
mod id;
mod kitty;
mod legacy;
mod tables;

pub use encode::{EncodeOptions, encode_key, encode_key_id};
pub use id::{Key, KeyId, Modifiers, NamedKey, normalize_key_id};
pub use kitty::{
    KeyEventType, KittyKey, functional_code, matches_kitty_sequence, parse_kitty_sequence,
};

/// Decodes one key sequence into its key, or `None` when it is not one key (unknown or
/// malformed bytes, a Kitty release event, several keys at once).
///
/// With `kitty_active` (the program enabled the Kitty protocol), `ESC` followed by a printable
/// character is not read as an alt chord: Kitty reports those as `CSI u`.
pub fn decode_key(data: &str, kitty_active: bool) -> Option<KeyId> {
    // A chord is named in one form only (`shift+alt+r`, never `alt+R`), so the id of any decoded
    // key reads back as the same key through `matches_key` and `normalize_key_id`.
    legacy::decode(data, kitty_active).map(KeyId::shifted_letter_as_shift)
}

/// The key id of one key sequence (`"\x1b[1;5A"` → `"ctrl+up"`), or `None`.
pub fn parse_key(data: &str, kitty_active: bool) -> Option<String> {
    decode_key(data, kitty_active).map(|key| key.to_string())
}

/// True when `data` is the key named by `key_id`. Ids are trimmed and case-insensitive (except a
/// lone character), accept the aliases `esc`, `return`, `plus`, and any modifier order; an
/// invalid id matches nothing. The text `A` matches `shift+a`.
pub fn matches_key(data: &str, key_id: &str, kitty_active: bool) -> bool {
    let Some(wanted) = KeyId::parse(key_id) else {
        return false;
    };
    decode_key(data, kitty_active).is_some_and(|got| got.canonical() == wanted.canonical())
}

/// True when `data` is exactly one of the fixed legacy sequences (a C0 control byte, or an
/// xterm/VT220/SS3/rxvt/Linux console escape sequence without parameters) for `key_name`.
pub fn matches_legacy_sequence(data: &str, key_name: &str) -> bool {
    let Some(wanted) = KeyId::parse(key_name) else {
        return false;
    };
    let mut chars = data.chars();
    let got = match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_control() => legacy::single_char(c),
        _ => tables::LEGACY_SEQUENCES.get(data).copied(),
    };
    got.is_some_and(|got| got.canonical() == wanted.canonical())
}

#[cfg(test)]
mod tests;
