//! Key ids: the text form of a key (`shift+ctrl+alt+super+<key>`), their parsing and normalisation.
//!
//! An id is a `+`-separated list of modifier words followed by a key. Modifier words and key names
//! are case-insensitive; a key that is a single character keeps its case only when it stands alone
//! (`A` is the text "A", `ctrl+A` is `ctrl+a`). Aliases: `esc` → `escape`, `return` → `enter`,
//! `plus` → `+`, and `ctrl++` is ctrl with the `+` key.

use std::fmt;
use std::ops::BitOr;

use super::tables::NAMED_KEYS;

/// The modifier keys a key id can name, with the bit values of the Kitty protocol (the wire value
/// minus one): shift 1, alt 2, ctrl 4, super 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Modifiers(u8);

impl Modifiers {
    pub const NONE: Modifiers = Modifiers(0);
    pub const SHIFT: Modifiers = Modifiers(1);
    pub const ALT: Modifiers = Modifiers(2);
    pub const CTRL: Modifiers = Modifiers(4);
    pub const SUPER: Modifiers = Modifiers(8);

    /// The modifiers of a Kitty/xterm bit set, or `None` when it holds bits an id cannot name
    /// (hyper, meta, or anything above them). Lock bits must be masked by the caller.
    pub const fn from_bits(bits: u32) -> Option<Modifiers> {
        if bits & !0b1111 == 0 {
            Some(Modifiers(bits as u8))
        } else {
            None
        }
    }

    pub const fn bits(self) -> u8 {
        self.0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn union(self, other: Modifiers) -> Modifiers {
        Modifiers(self.0 | other.0)
    }

    pub const fn contains(self, other: Modifiers) -> bool {
        self.0 & other.0 == other.0
    }

    /// The modifier words in id order.
    fn words(self) -> impl Iterator<Item = &'static str> {
        const ORDER: [(Modifiers, &str); 4] = [
            (Modifiers::SHIFT, "shift"),
            (Modifiers::CTRL, "ctrl"),
            (Modifiers::ALT, "alt"),
            (Modifiers::SUPER, "super"),
        ];
        ORDER
            .into_iter()
            .filter(move |(m, _)| self.contains(*m))
            .map(|(_, w)| w)
    }

    fn from_word(word: &str) -> Option<Modifiers> {
        [
            ("shift", Modifiers::SHIFT),
            ("ctrl", Modifiers::CTRL),
            ("alt", Modifiers::ALT),
            ("super", Modifiers::SUPER),
        ]
        .into_iter()
        .find(|(name, _)| word.eq_ignore_ascii_case(name))
        .map(|(_, modifier)| modifier)
    }
}

impl BitOr for Modifiers {
    type Output = Modifiers;
    fn bitor(self, rhs: Modifiers) -> Modifiers {
        self.union(rhs)
    }
}

/// A key that has a name rather than a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedKey {
    Escape,
    Tab,
    Enter,
    Space,
    Backspace,
    Insert,
    Delete,
    Home,
    End,
    PageUp,
    PageDown,
    Clear,
    Up,
    Down,
    Left,
    Right,
    F1,
    F2,
    F3,
    F4,
    F5,
    F6,
    F7,
    F8,
    F9,
    F10,
    F11,
    F12,
}

impl NamedKey {
    /// The name used in key ids.
    pub const fn name(self) -> &'static str {
        match self {
            NamedKey::Escape => "escape",
            NamedKey::Tab => "tab",
            NamedKey::Enter => "enter",
            NamedKey::Space => "space",
            NamedKey::Backspace => "backspace",
            NamedKey::Insert => "insert",
            NamedKey::Delete => "delete",
            NamedKey::Home => "home",
            NamedKey::End => "end",
            NamedKey::PageUp => "pageUp",
            NamedKey::PageDown => "pageDown",
            NamedKey::Clear => "clear",
            NamedKey::Up => "up",
            NamedKey::Down => "down",
            NamedKey::Left => "left",
            NamedKey::Right => "right",
            NamedKey::F1 => "f1",
            NamedKey::F2 => "f2",
            NamedKey::F3 => "f3",
            NamedKey::F4 => "f4",
            NamedKey::F5 => "f5",
            NamedKey::F6 => "f6",
            NamedKey::F7 => "f7",
            NamedKey::F8 => "f8",
            NamedKey::F9 => "f9",
            NamedKey::F10 => "f10",
            NamedKey::F11 => "f11",
            NamedKey::F12 => "f12",
        }
    }
}

/// A key: a named key or the character a printable key stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Named(NamedKey),
    Char(char),
}

/// A key with its modifiers: what a key id names and what a byte sequence decodes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId {
    pub modifiers: Modifiers,
    pub key: Key,
}

impl KeyId {
    pub const fn new(modifiers: Modifiers, key: Key) -> KeyId {
        KeyId { modifiers, key }
    }

    pub const fn named(modifiers: Modifiers, key: NamedKey) -> KeyId {
        KeyId::new(modifiers, Key::Named(key))
    }

    /// A key reported by a terminal with modifiers: an upper-case ASCII letter there means the
    /// letter with shift (`CSI 65;5u`, `CSI 27;6;65~` are ctrl+shift+a).
    pub(crate) fn shifted_letter_as_shift(self) -> KeyId {
        match self.key {
            Key::Char(c) if c.is_ascii_uppercase() && !self.modifiers.is_empty() => KeyId::new(
                self.modifiers | Modifiers::SHIFT,
                Key::Char(c.to_ascii_lowercase()),
            ),
            _ => self,
        }
    }

    /// The same key with `extra` modifiers added.
    pub(crate) fn with(self, extra: Modifiers) -> KeyId {
        KeyId::new(self.modifiers | extra, self.key)
    }

    /// The form two ids are compared in: an upper-case ASCII letter becomes shift + the letter,
    /// so the text `A` equals `shift+a`.
    pub(crate) fn canonical(self) -> KeyId {
        match self.key {
            Key::Char(c) if c.is_ascii_uppercase() => KeyId::new(
                self.modifiers | Modifiers::SHIFT,
                Key::Char(c.to_ascii_lowercase()),
            ),
            _ => self,
        }
    }

    /// Parses a key id such as `ctrl+shift+p`, ` Ctrl + C `, `pageUp`, `F1`, `ctrl++`.
    /// Returns `None` for an unknown key name, an unknown modifier word or an empty part.
    pub fn parse(id: &str) -> Option<KeyId> {
        let (modifier_part, key_part) = split_id(id.trim())?;
        let mut modifiers = Modifiers::NONE;
        if let Some(part) = modifier_part {
            for word in part.split('+') {
                modifiers = modifiers | Modifiers::from_word(word.trim())?;
            }
        }
        let key = parse_key_name(key_part.trim(), !modifiers.is_empty())?;
        Some(KeyId::new(modifiers, key))
    }
}

/// Splits a trimmed id into its modifier words (if any) and its key, treating a trailing `+`
/// after a separator as the plus key (`ctrl++`, `ctrl + +`, `+`).
fn split_id(id: &str) -> Option<(Option<&str>, &str)> {
    if id.is_empty() {
        return None;
    }
    if id == "+" {
        return Some((None, "+"));
    }
    if let Some(before) = id.strip_suffix('+') {
        let modifiers = before.trim_end().strip_suffix('+')?;
        return Some((Some(modifiers), "+"));
    }
    Some(match id.rfind('+') {
        Some(at) => (Some(&id[..at]), &id[at + 1..]),
        None => (None, id),
    })
}

fn parse_key_name(name: &str, has_modifiers: bool) -> Option<Key> {
    let mut chars = name.chars();
    let first = chars.next()?;
    if chars.next().is_none() {
        if first.is_control() {
            return None;
        }
        // A lone character keeps its case ("A" is the text A); with modifiers ids are
        // case-insensitive (`CTRL+C` is ctrl+c).
        let c = if has_modifiers {
            first.to_ascii_lowercase()
        } else {
            first
        };
        return Some(Key::Char(c));
    }
    if name.eq_ignore_ascii_case("plus") {
        return Some(Key::Char('+'));
    }
    // Names are short ASCII words: lower-case them on the stack, no allocation per lookup.
    let mut buffer = [0u8; LONGEST_NAME];
    let lower = buffer.get_mut(..name.len())?;
    lower.copy_from_slice(name.as_bytes());
    lower.make_ascii_lowercase();
    let lower = std::str::from_utf8(lower).ok()?;
    NAMED_KEYS.get(lower).map(|k| Key::Named(*k))
}

/// Longer than any key name (`backspace`, `pagedown`), so longer input is not a name.
const LONGEST_NAME: usize = 16;

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for word in self.modifiers.words() {
            f.write_str(word)?;
            f.write_str("+")?;
        }
        match self.key {
            Key::Named(k) => f.write_str(k.name()),
            Key::Char(c) => write!(f, "{c}"),
        }
    }
}

/// Normalises a key id to its canonical text (`" Ctrl + C "` → `"ctrl+c"`, `"alt+shift+x"` →
/// `"shift+alt+x"`, `"esc"` → `"escape"`), or `None` when it is not a valid id.
pub fn normalize_key_id(id: &str) -> Option<String> {
    KeyId::parse(id).map(|k| k.to_string())
}
