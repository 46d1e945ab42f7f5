//! The fixed tables of the key parser, as compile-time `phf` maps.
//!
//! Sources: xterm ctlseqs ("PC-Style Function Keys", "VT220-Style Function Keys"), the rxvt-unicode
//! manual (shift `$`, ctrl `^`, ctrl+shift `@` variants), the Linux console keymap (`ESC [ [ A`…)
//! and the Kitty keyboard protocol's functional key table.

use phf::phf_map;

use super::id::{Key, KeyId, Modifiers, NamedKey};

const fn plain(key: NamedKey) -> KeyId {
    KeyId::named(Modifiers::NONE, key)
}
const fn shift(key: NamedKey) -> KeyId {
    KeyId::named(Modifiers::SHIFT, key)
}
const fn ctrl(key: NamedKey) -> KeyId {
    KeyId::named(Modifiers::CTRL, key)
}
const fn shift_ctrl(key: NamedKey) -> KeyId {
    KeyId::named(Modifiers::SHIFT.union(Modifiers::CTRL), key)
}
const fn text(c: char) -> KeyId {
    KeyId::new(Modifiers::NONE, Key::Char(c))
}

use NamedKey::*;

/// Complete legacy escape sequences (no parameters to parse) and the keys they stand for.
pub(crate) static LEGACY_SEQUENCES: phf::Map<&'static str, KeyId> = phf_map! {
    // xterm normal and application cursor keys (CSI and SS3 forms).
    "\x1b[A" => plain(Up),
    "\x1b[B" => plain(Down),
    "\x1b[C" => plain(Right),
    "\x1b[D" => plain(Left),
    "\x1b[H" => plain(Home),
    "\x1b[F" => plain(End),
    "\x1b[E" => plain(Clear),
    "\x1bOA" => plain(Up),
    "\x1bOB" => plain(Down),
    "\x1bOC" => plain(Right),
    "\x1bOD" => plain(Left),
    "\x1bOH" => plain(Home),
    "\x1bOF" => plain(End),
    "\x1bOE" => plain(Clear),
    // Keypad 5 with num-lock off on the Linux console.
    "\x1b[G" => plain(Clear),
    // F1–F4: SS3 (xterm), bare CSI (Kitty's disambiguate mode).
    "\x1bOP" => plain(F1),
    "\x1bOQ" => plain(F2),
    "\x1bOR" => plain(F3),
    "\x1bOS" => plain(F4),
    "\x1b[P" => plain(F1),
    "\x1b[Q" => plain(F2),
    "\x1b[R" => plain(F3),
    "\x1b[S" => plain(F4),
    // VT220-style editing and function keys.
    "\x1b[1~" => plain(Home),
    "\x1b[2~" => plain(Insert),
    "\x1b[3~" => plain(Delete),
    "\x1b[4~" => plain(End),
    "\x1b[5~" => plain(PageUp),
    "\x1b[6~" => plain(PageDown),
    "\x1b[7~" => plain(Home),
    "\x1b[8~" => plain(End),
    "\x1b[11~" => plain(F1),
    "\x1b[12~" => plain(F2),
    "\x1b[13~" => plain(F3),
    "\x1b[14~" => plain(F4),
    "\x1b[15~" => plain(F5),
    "\x1b[17~" => plain(F6),
    "\x1b[18~" => plain(F7),
    "\x1b[19~" => plain(F8),
    "\x1b[20~" => plain(F9),
    "\x1b[21~" => plain(F10),
    "\x1b[23~" => plain(F11),
    "\x1b[24~" => plain(F12),
    // Back-tab.
    "\x1b[Z" => shift(Tab),
    // Linux console F1–F5.
    "\x1b[[A" => plain(F1),
    "\x1b[[B" => plain(F2),
    "\x1b[[C" => plain(F3),
    "\x1b[[D" => plain(F4),
    "\x1b[[E" => plain(F5),
    // rxvt: shift.
    "\x1b[a" => shift(Up),
    "\x1b[b" => shift(Down),
    "\x1b[c" => shift(Right),
    "\x1b[d" => shift(Left),
    "\x1b[2$" => shift(Insert),
    "\x1b[3$" => shift(Delete),
    "\x1b[5$" => shift(PageUp),
    "\x1b[6$" => shift(PageDown),
    "\x1b[7$" => shift(Home),
    "\x1b[8$" => shift(End),
    "\x1b[23$" => shift(F11),
    "\x1b[24$" => shift(F12),
    // rxvt: ctrl.
    "\x1bOa" => ctrl(Up),
    "\x1bOb" => ctrl(Down),
    "\x1bOc" => ctrl(Right),
    "\x1bOd" => ctrl(Left),
    "\x1b[2^" => ctrl(Insert),
    "\x1b[3^" => ctrl(Delete),
    "\x1b[5^" => ctrl(PageUp),
    "\x1b[6^" => ctrl(PageDown),
    "\x1b[7^" => ctrl(Home),
    "\x1b[8^" => ctrl(End),
    "\x1b[11^" => ctrl(F1),
    "\x1b[12^" => ctrl(F2),
    "\x1b[13^" => ctrl(F3),
    "\x1b[14^" => ctrl(F4),
    "\x1b[15^" => ctrl(F5),
    "\x1b[17^" => ctrl(F6),
    "\x1b[18^" => ctrl(F7),
    "\x1b[19^" => ctrl(F8),
    "\x1b[20^" => ctrl(F9),
    "\x1b[21^" => ctrl(F10),
    "\x1b[23^" => ctrl(F11),
    "\x1b[24^" => ctrl(F12),
    // rxvt: ctrl+shift.
    "\x1b[2@" => shift_ctrl(Insert),
    "\x1b[3@" => shift_ctrl(Delete),
    "\x1b[5@" => shift_ctrl(PageUp),
    "\x1b[6@" => shift_ctrl(PageDown),
    "\x1b[7@" => shift_ctrl(Home),
    "\x1b[8@" => shift_ctrl(End),
    "\x1b[23@" => shift_ctrl(F11),
    "\x1b[24@" => shift_ctrl(F12),
    // VT100 application keypad (SS3 forms).
    "\x1bOM" => plain(Enter),
    "\x1bOj" => text('*'),
    "\x1bOk" => text('+'),
    "\x1bOl" => text(','),
    "\x1bOm" => text('-'),
    "\x1bOn" => text('.'),
    "\x1bOo" => text('/'),
    "\x1bOX" => text('='),
    "\x1bOp" => text('0'),
    "\x1bOq" => text('1'),
    "\x1bOr" => text('2'),
    "\x1bOs" => text('3'),
    "\x1bOt" => text('4'),
    "\x1bOu" => text('5'),
    "\x1bOv" => text('6'),
    "\x1bOw" => text('7'),
    "\x1bOx" => text('8'),
    "\x1bOy" => text('9'),
};

/// Key names accepted in ids (lower case), with the aliases `esc` and `return`.
pub(crate) static NAMED_KEYS: phf::Map<&'static str, NamedKey> = phf_map! {
    "escape" => Escape,
    "esc" => Escape,
    "tab" => Tab,
    "enter" => Enter,
    "return" => Enter,
    "space" => Space,
    "backspace" => Backspace,
    "insert" => Insert,
    "delete" => Delete,
    "home" => Home,
    "end" => End,
    "pageup" => PageUp,
    "pagedown" => PageDown,
    "clear" => Clear,
    "up" => Up,
    "down" => Down,
    "left" => Left,
    "right" => Right,
    "f1" => F1,
    "f2" => F2,
    "f3" => F3,
    "f4" => F4,
    "f5" => F5,
    "f6" => F6,
    "f7" => F7,
    "f8" => F8,
    "f9" => F9,
    "f10" => F10,
    "f11" => F11,
    "f12" => F12,
};

/// `CSI number [; modifiers] ~`: the number's key (VT220 numbering; 57427 is Kitty's KP_BEGIN).
pub(crate) static TILDE_KEYS: phf::Map<u32, NamedKey> = phf_map! {
    1u32 => Home,
    2u32 => Insert,
    3u32 => Delete,
    4u32 => End,
    5u32 => PageUp,
    6u32 => PageDown,
    7u32 => Home,
    8u32 => End,
    11u32 => F1,
    12u32 => F2,
    13u32 => F3,
    14u32 => F4,
    15u32 => F5,
    17u32 => F6,
    18u32 => F7,
    19u32 => F8,
    20u32 => F9,
    21u32 => F10,
    23u32 => F11,
    24u32 => F12,
    57427u32 => Clear,
};

/// `CSI 1 ; modifiers <final>` and `SS3 <final>`: the final byte's key.
pub(crate) static LETTER_KEYS: phf::Map<u8, NamedKey> = phf_map! {
    b'A' => Up,
    b'B' => Down,
    b'C' => Right,
    b'D' => Left,
    b'E' => Clear,
    b'F' => End,
    b'H' => Home,
    b'P' => F1,
    b'Q' => F2,
    b'R' => F3,
    b'S' => F4,
};

/// Kitty's Private Use Area key numbers that stand for keys an id can name. The keypad reports
/// its own numbers; they resolve to the keys they type (num-lock digits stay digits).
/// 57344–57357 and 57364–57375 are Kitty's numbers for the keys it sends in legacy form.
pub(crate) static KITTY_FUNCTIONAL: phf::Map<u32, Key> = phf_map! {
    57344u32 => Key::Named(Escape),
    57345u32 => Key::Named(Enter),
    57346u32 => Key::Named(Tab),
    57347u32 => Key::Named(Backspace),
    57348u32 => Key::Named(Insert),
    57349u32 => Key::Named(Delete),
    57350u32 => Key::Named(Left),
    57351u32 => Key::Named(Right),
    57352u32 => Key::Named(Up),
    57353u32 => Key::Named(Down),
    57354u32 => Key::Named(PageUp),
    57355u32 => Key::Named(PageDown),
    57356u32 => Key::Named(Home),
    57357u32 => Key::Named(End),
    57364u32 => Key::Named(F1),
    57365u32 => Key::Named(F2),
    57366u32 => Key::Named(F3),
    57367u32 => Key::Named(F4),
    57368u32 => Key::Named(F5),
    57369u32 => Key::Named(F6),
    57370u32 => Key::Named(F7),
    57371u32 => Key::Named(F8),
    57372u32 => Key::Named(F9),
    57373u32 => Key::Named(F10),
    57374u32 => Key::Named(F11),
    57375u32 => Key::Named(F12),
    57399u32 => Key::Char('0'),
    57400u32 => Key::Char('1'),
    57401u32 => Key::Char('2'),
    57402u32 => Key::Char('3'),
    57403u32 => Key::Char('4'),
    57404u32 => Key::Char('5'),
    57405u32 => Key::Char('6'),
    57406u32 => Key::Char('7'),
    57407u32 => Key::Char('8'),
    57408u32 => Key::Char('9'),
    57409u32 => Key::Char('.'),
    57410u32 => Key::Char('/'),
    57411u32 => Key::Char('*'),
    57412u32 => Key::Char('-'),
    57413u32 => Key::Char('+'),
    57414u32 => Key::Named(Enter),
    57415u32 => Key::Char('='),
    57416u32 => Key::Char(','),
    57417u32 => Key::Named(Left),
    57418u32 => Key::Named(Right),
    57419u32 => Key::Named(Up),
    57420u32 => Key::Named(Down),
    57421u32 => Key::Named(PageUp),
    57422u32 => Key::Named(PageDown),
    57423u32 => Key::Named(Home),
    57424u32 => Key::Named(End),
    57425u32 => Key::Named(Insert),
    57426u32 => Key::Named(Delete),
    57427u32 => Key::Named(Clear),
};
