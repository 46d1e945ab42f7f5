//! The inverse of the parser: the bytes a terminal sends for a key id, as xterm sends them.
//!
//! Named keys come from the same tables the parser reads: the final byte of `CSI 1 ; m X` and
//! `SS3 X` for arrows, Home/End, Clear and F1–F4, the `CSI n ~` number for the editing keys and
//! F5–F12, with modifiers as xterm encodes them (`CSI 1;5A`, `CSI 15;2~`). Arrows, Home and End
//! follow the cursor-key mode (DECCKM): SS3 in application mode. Characters are sent as themselves,
//! shift + a letter as the capital, ctrl + a letter or `\ ] ^ _` as its C0 control, alt as an ESC
//! prefix. Chords the legacy bytes cannot tell apart (ctrl+i is tab, ctrl+m enter, ctrl+shift+a,
//! ctrl+enter) use xterm's modifyOtherKeys form `CSI 27 ; m ; code ~`, which the parser reads back.

use super::id::{Key, KeyId, Modifiers, NamedKey};
use super::tables::{LETTER_KEYS, TILDE_KEYS};

/// The input modes of the terminal the bytes are for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// DECCKM is set: unmodified arrows, Home and End are sent as SS3.
    pub application_cursor_keys: bool,
}

const ESC: char = '\x1b';

/// The bytes for `key`, which the parser decodes back to the same key; `None` only for a chord
/// on a Private Use Area character (those numbers name Kitty's functional keys on the wire).
pub fn encode_key(key: KeyId, options: EncodeOptions) -> Option<String> {
    let KeyId { modifiers, key } = key.canonical();
    match key {
        Key::Named(named) => Some(encode_named(named, modifiers, options)),
        Key::Char(c) => encode_char(c, modifiers),
    }
}

/// [`encode_key`] for a key id in text form; `None` when it is not a valid id or has no bytes.
pub fn encode_key_id(id: &str, options: EncodeOptions) -> Option<String> {
    KeyId::parse(id).and_then(|key| encode_key(key, options))
}

/// The xterm modifier parameter: 1 + the modifier bits.
fn wire(modifiers: Modifiers) -> u8 {
    modifiers.bits() + 1
}

fn encode_named(key: NamedKey, modifiers: Modifiers, options: EncodeOptions) -> String {
    if let Some(final_byte) = table_key(LETTER_KEYS.entries(), key) {
        let final_byte = char::from(final_byte);
        if !modifiers.is_empty() {
            return format!("{ESC}[1;{}{final_byte}", wire(modifiers));
        }
        let function_key = matches!(
            key,
            NamedKey::F1 | NamedKey::F2 | NamedKey::F3 | NamedKey::F4
        );
        let cursor_key = !function_key && key != NamedKey::Clear;
        return if function_key || (cursor_key && options.application_cursor_keys) {
            format!("{ESC}O{final_byte}")
        } else {
            format!("{ESC}[{final_byte}")
        };
    }
    if let Some(number) = table_key(TILDE_KEYS.entries(), key) {
        return if modifiers.is_empty() {
            format!("{ESC}[{number}~")
        } else {
            format!("{ESC}[{number};{}~", wire(modifiers))
        };
    }
    let (byte, code) = match key {
        NamedKey::Enter => ('\r', 13),
        NamedKey::Tab => ('\t', 9),
        NamedKey::Backspace => ('\x7f', 127),
        NamedKey::Escape => (ESC, 27),
        _ => (' ', 32),
    };
    let without_alt = modifiers_without(modifiers, Modifiers::ALT);
    match (key, without_alt.bits()) {
        (_, 0) if modifiers.is_empty() => byte.to_string(),
        (NamedKey::Tab, 1) => with_alt(modifiers, format!("{ESC}[Z")),
        (NamedKey::Space, 4) => with_alt(modifiers, "\0".to_string()),
        (_, 0) => with_alt(modifiers, byte.to_string()),
        _ => modify_other_keys(modifiers, code),
    }
}

/// ESC + `bytes` when `modifiers` holds alt (the rest of the chord is already in `bytes`).
fn with_alt(modifiers: Modifiers, bytes: String) -> String {
    if modifiers.contains(Modifiers::ALT) {
        format!("{ESC}{bytes}")
    } else {
        bytes
    }
}

fn modifiers_without(modifiers: Modifiers, removed: Modifiers) -> Modifiers {
    Modifiers::from_bits(u32::from(modifiers.bits() & !removed.bits())).unwrap_or(Modifiers::NONE)
}

fn encode_char(c: char, modifiers: Modifiers) -> Option<String> {
    let without_alt = modifiers_without(modifiers, Modifiers::ALT);
    let single = if without_alt.is_empty() {
        Some(c)
    } else if without_alt == Modifiers::SHIFT && c.is_ascii_lowercase() {
        Some(c.to_ascii_uppercase())
    } else if without_alt == Modifiers::CTRL {
        ctrl_byte(c)
    } else {
        None
    };
    match single {
        Some(byte) => Some(with_alt(modifiers, byte.to_string())),
        None if is_private_use(c) => None,
        None => Some(modify_other_keys(modifiers, u32::from(c))),
    }
}

fn is_private_use(c: char) -> bool {
    ('\u{e000}'..='\u{f8ff}').contains(&c)
}

/// The C0 control ctrl + `c` sends, unless that byte belongs to another key (`\x08` backspace,
/// `\t` tab, `\n` and `\r` enter, `\x1b` escape, `\0` ctrl+space).
fn ctrl_byte(c: char) -> Option<char> {
    match c {
        'a'..='z' if !matches!(c, 'h' | 'i' | 'j' | 'm') => Some(char::from(c as u8 - b'a' + 1)),
        '\\' => Some('\x1c'),
        ']' => Some('\x1d'),
        '^' => Some('\x1e'),
        '_' => Some('\x1f'),
        _ => None,
    }
}

fn modify_other_keys(modifiers: Modifiers, code: u32) -> String {
    format!("{ESC}[27;{};{code}~", wire(modifiers))
}

/// The smallest table entry that stands for `key` (the tables map several sequences to one key).
fn table_key<'a, T: Ord + Copy + 'a>(
    entries: impl Iterator<Item = (&'a T, &'a NamedKey)>,
    key: NamedKey,
) -> Option<T> {
    entries.filter(|(_, k)| **k == key).map(|(t, _)| *t).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{decode_key, parse_key};

    fn encode(id: &str, application_cursor_keys: bool) -> Option<String> {
        encode_key_id(
            id,
            EncodeOptions {
                application_cursor_keys,
            },
        )
    }

    #[test]
    fn exact_bytes() {
        let rows: &[(&str, bool, &str)] = &[
            ("up", false, "\x1b[A"),
            ("up", true, "\x1bOA"),
            ("home", true, "\x1bOH"),
            ("end", false, "\x1b[F"),
            ("clear", true, "\x1b[E"),
            ("ctrl+up", true, "\x1b[1;5A"),
            ("shift+alt+left", false, "\x1b[1;4D"),
            ("f1", false, "\x1bOP"),
            ("f1", true, "\x1bOP"),
            ("shift+f4", false, "\x1b[1;2S"),
            ("f5", false, "\x1b[15~"),
            ("ctrl+f12", false, "\x1b[24;5~"),
            ("pageDown", false, "\x1b[6~"),
            ("delete", false, "\x1b[3~"),
            ("insert", false, "\x1b[2~"),
            ("alt+pageUp", false, "\x1b[5;3~"),
            ("enter", false, "\r"),
            ("alt+enter", false, "\x1b\r"),
            ("ctrl+enter", false, "\x1b[27;5;13~"),
            ("tab", false, "\t"),
            ("shift+tab", false, "\x1b[Z"),
            ("shift+alt+tab", false, "\x1b\x1b[Z"),
            ("ctrl+tab", false, "\x1b[27;5;9~"),
            ("backspace", false, "\x7f"),
            ("ctrl+backspace", false, "\x1b[27;5;127~"),
            ("escape", false, "\x1b"),
            ("esc", false, "\x1b"),
            ("alt+escape", false, "\x1b\x1b"),
            ("space", false, " "),
            ("ctrl+space", false, "\0"),
            ("ctrl+alt+space", false, "\x1b\0"),
            ("shift+space", false, "\x1b[27;2;32~"),
            ("a", false, "a"),
            ("A", false, "A"),
            ("shift+a", false, "A"),
            ("ctrl+c", false, "\x03"),
            ("CTRL+C", false, "\x03"),
            ("ctrl+\\", false, "\x1c"),
            ("ctrl+_", false, "\x1f"),
            ("ctrl+h", false, "\x1b[27;5;104~"),
            ("ctrl+m", false, "\x1b[27;5;109~"),
            ("ctrl+[", false, "\x1b[27;5;91~"),
            ("ctrl+shift+a", false, "\x1b[27;6;97~"),
            ("alt+x", false, "\x1bx"),
            ("alt+X", false, "\x1bx"),
            ("shift+alt+x", false, "\x1bX"),
            ("ctrl+alt+c", false, "\x1b\x03"),
            ("super+x", false, "\x1b[27;9;120~"),
            ("ctrl+é", false, "\x1b[27;5;233~"),
            ("é", false, "é"),
            ("plus", false, "+"),
            ("ctrl++", false, "\x1b[27;5;43~"),
        ];
        for (id, app, want) in rows {
            assert_eq!(encode(id, *app).as_deref(), Some(*want), "{id} (app {app})");
        }
        assert_eq!(encode("nope", false), None);
        assert_eq!(encode("ctrl+", false), None);
        assert_eq!(encode("", false), None);
        // Kitty's functional key numbers: a chord on such a character cannot be told apart.
        assert_eq!(encode("ctrl+\u{e017}", false), None);
        assert_eq!(encode("\u{e017}", false).as_deref(), Some("\u{e017}"));
    }

    const NAMED: [NamedKey; 28] = [
        NamedKey::Escape,
        NamedKey::Tab,
        NamedKey::Enter,
        NamedKey::Space,
        NamedKey::Backspace,
        NamedKey::Insert,
        NamedKey::Delete,
        NamedKey::Home,
        NamedKey::End,
        NamedKey::PageUp,
        NamedKey::PageDown,
        NamedKey::Clear,
        NamedKey::Up,
        NamedKey::Down,
        NamedKey::Left,
        NamedKey::Right,
        NamedKey::F1,
        NamedKey::F2,
        NamedKey::F3,
        NamedKey::F4,
        NamedKey::F5,
        NamedKey::F6,
        NamedKey::F7,
        NamedKey::F8,
        NamedKey::F9,
        NamedKey::F10,
        NamedKey::F11,
        NamedKey::F12,
    ];

    fn round_trips(key: KeyId) {
        for application_cursor_keys in [false, true] {
            let bytes = encode_key(
                key,
                EncodeOptions {
                    application_cursor_keys,
                },
            )
            .unwrap_or_else(|| panic!("no bytes for {key}"));
            assert_eq!(
                decode_key(&bytes, false).map(KeyId::canonical),
                Some(key.canonical()),
                "{key} → {bytes:?} → {:?}",
                parse_key(&bytes, false)
            );
        }
    }

    #[test]
    fn every_named_key_with_every_modifier_set_round_trips() {
        for bits in 0..16 {
            let modifiers = Modifiers::from_bits(bits).unwrap_or(Modifiers::NONE);
            for key in NAMED {
                round_trips(KeyId::named(modifiers, key));
            }
            for c in (' '..='~').chain("éÉ日ß€".chars()) {
                if c != ' ' {
                    round_trips(KeyId::new(modifiers, Key::Char(c)));
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_character_chord_round_trips(c in proptest::char::any(), bits in 0u32..16) {
            let modifiers = Modifiers::from_bits(bits).unwrap_or(Modifiers::NONE);
            let key = KeyId::new(modifiers, Key::Char(c));
            // Only what an id can name: a character that is neither a control nor whitespace.
            let nameable = !c.is_control() && !c.is_whitespace() && c != char::REPLACEMENT_CHARACTER;
            if nameable && !(is_private_use(c) && bits != 0) {
                round_trips(key);
            }
        }
    }
}
