//! Table-driven tests of the key parser: one row per input, grouped by the branch it exercises.

use proptest::prelude::*;

use super::*;

const LEGACY: bool = false;
const KITTY: bool = true;

/// Rows of (input, expected id) checked in both modes unless a table says otherwise.
fn check_parse(rows: &[(&str, Option<&str>)], kitty_active: bool) {
    for (input, want) in rows {
        assert_eq!(
            parse_key(input, kitty_active).as_deref(),
            *want,
            "parse_key({input:?}, kitty={kitty_active})"
        );
    }
}

fn check_both(rows: &[(&str, Option<&str>)]) {
    check_parse(rows, LEGACY);
    check_parse(rows, KITTY);
}

#[test]
fn single_control_bytes() {
    check_both(&[
        ("\r", Some("enter")),
        ("\n", Some("enter")),
        ("\t", Some("tab")),
        ("\x7f", Some("backspace")),
        ("\x08", Some("backspace")),
        ("\x1b", Some("escape")),
        ("\x00", Some("ctrl+space")),
        ("\x01", Some("ctrl+a")),
        ("\x02", Some("ctrl+b")),
        ("\x03", Some("ctrl+c")),
        ("\x04", Some("ctrl+d")),
        ("\x05", Some("ctrl+e")),
        ("\x06", Some("ctrl+f")),
        ("\x07", Some("ctrl+g")),
        ("\x0b", Some("ctrl+k")),
        ("\x0c", Some("ctrl+l")),
        ("\x0e", Some("ctrl+n")),
        ("\x0f", Some("ctrl+o")),
        ("\x10", Some("ctrl+p")),
        ("\x11", Some("ctrl+q")),
        ("\x12", Some("ctrl+r")),
        ("\x13", Some("ctrl+s")),
        ("\x14", Some("ctrl+t")),
        ("\x15", Some("ctrl+u")),
        ("\x16", Some("ctrl+v")),
        ("\x17", Some("ctrl+w")),
        ("\x18", Some("ctrl+x")),
        ("\x19", Some("ctrl+y")),
        ("\x1a", Some("ctrl+z")),
        ("\x1c", Some("ctrl+\\")),
        ("\x1d", Some("ctrl+]")),
        ("\x1e", Some("ctrl+^")),
        ("\x1f", Some("ctrl+_")),
        // C1 controls are not keys.
        ("\u{80}", None),
        ("\u{9b}", None),
        ("\u{9f}", None),
    ]);
}

#[test]
fn every_ctrl_letter_byte() {
    for byte in 1u8..=26 {
        let letter = char::from(b'a' + byte - 1);
        let input = char::from(byte).to_string();
        let want = match letter {
            'h' => "backspace".to_string(),
            'i' => "tab".to_string(),
            'j' | 'm' => "enter".to_string(),
            _ => format!("ctrl+{letter}"),
        };
        assert_eq!(
            parse_key(&input, LEGACY).as_deref(),
            Some(want.as_str()),
            "{input:?}"
        );
    }
}

#[test]
fn printable_text() {
    for byte in 0x21u8..=0x7e {
        let c = char::from(byte).to_string();
        assert_eq!(parse_key(&c, LEGACY).as_deref(), Some(c.as_str()));
        assert_eq!(parse_key(&c, KITTY).as_deref(), Some(c.as_str()));
    }
    check_both(&[
        (" ", Some("space")),
        ("a", Some("a")),
        ("A", Some("A")),
        ("+", Some("+")),
        ("é", Some("é")),
        ("с", Some("с")),
        ("€", Some("€")),
        ("😀", Some("😀")),
        ("\u{a0}", None),
        ("\u{2000}", None),
        ("\u{3000}", None),
        ("\u{fffd}", None),
        // More than one key is not a key.
        ("ab", None),
        ("aa", None),
        ("\r\r", None),
        ("a\x1b", None),
        ("", None),
    ]);
}

#[test]
fn legacy_table() {
    check_both(&[
        ("\x1b[A", Some("up")),
        ("\x1b[B", Some("down")),
        ("\x1b[C", Some("right")),
        ("\x1b[D", Some("left")),
        ("\x1b[H", Some("home")),
        ("\x1b[F", Some("end")),
        ("\x1b[E", Some("clear")),
        ("\x1b[G", Some("clear")),
        ("\x1bOA", Some("up")),
        ("\x1bOB", Some("down")),
        ("\x1bOC", Some("right")),
        ("\x1bOD", Some("left")),
        ("\x1bOH", Some("home")),
        ("\x1bOF", Some("end")),
        ("\x1bOE", Some("clear")),
        ("\x1bOP", Some("f1")),
        ("\x1bOQ", Some("f2")),
        ("\x1bOR", Some("f3")),
        ("\x1bOS", Some("f4")),
        ("\x1b[P", Some("f1")),
        ("\x1b[Q", Some("f2")),
        ("\x1b[R", Some("f3")),
        ("\x1b[S", Some("f4")),
        ("\x1b[1~", Some("home")),
        ("\x1b[2~", Some("insert")),
        ("\x1b[3~", Some("delete")),
        ("\x1b[4~", Some("end")),
        ("\x1b[5~", Some("pageUp")),
        ("\x1b[6~", Some("pageDown")),
        ("\x1b[7~", Some("home")),
        ("\x1b[8~", Some("end")),
        ("\x1b[11~", Some("f1")),
        ("\x1b[12~", Some("f2")),
        ("\x1b[13~", Some("f3")),
        ("\x1b[14~", Some("f4")),
        ("\x1b[15~", Some("f5")),
        ("\x1b[17~", Some("f6")),
        ("\x1b[18~", Some("f7")),
        ("\x1b[19~", Some("f8")),
        ("\x1b[20~", Some("f9")),
        ("\x1b[21~", Some("f10")),
        ("\x1b[23~", Some("f11")),
        ("\x1b[24~", Some("f12")),
        ("\x1b[Z", Some("shift+tab")),
        // Linux console.
        ("\x1b[[A", Some("f1")),
        ("\x1b[[B", Some("f2")),
        ("\x1b[[C", Some("f3")),
        ("\x1b[[D", Some("f4")),
        ("\x1b[[E", Some("f5")),
        ("\x1b[[F", None),
        // rxvt shift ($) and ctrl (^) and ctrl+shift (@).
        ("\x1b[a", Some("shift+up")),
        ("\x1b[b", Some("shift+down")),
        ("\x1b[c", Some("shift+right")),
        ("\x1b[d", Some("shift+left")),
        ("\x1b[2$", Some("shift+insert")),
        ("\x1b[3$", Some("shift+delete")),
        ("\x1b[5$", Some("shift+pageUp")),
        ("\x1b[6$", Some("shift+pageDown")),
        ("\x1b[7$", Some("shift+home")),
        ("\x1b[8$", Some("shift+end")),
        ("\x1b[23$", Some("shift+f11")),
        ("\x1b[24$", Some("shift+f12")),
        ("\x1bOa", Some("ctrl+up")),
        ("\x1bOb", Some("ctrl+down")),
        ("\x1bOc", Some("ctrl+right")),
        ("\x1bOd", Some("ctrl+left")),
        ("\x1b[2^", Some("ctrl+insert")),
        ("\x1b[3^", Some("ctrl+delete")),
        ("\x1b[5^", Some("ctrl+pageUp")),
        ("\x1b[6^", Some("ctrl+pageDown")),
        ("\x1b[7^", Some("ctrl+home")),
        ("\x1b[8^", Some("ctrl+end")),
        ("\x1b[11^", Some("ctrl+f1")),
        ("\x1b[12^", Some("ctrl+f2")),
        ("\x1b[13^", Some("ctrl+f3")),
        ("\x1b[14^", Some("ctrl+f4")),
        ("\x1b[15^", Some("ctrl+f5")),
        ("\x1b[17^", Some("ctrl+f6")),
        ("\x1b[18^", Some("ctrl+f7")),
        ("\x1b[19^", Some("ctrl+f8")),
        ("\x1b[20^", Some("ctrl+f9")),
        ("\x1b[21^", Some("ctrl+f10")),
        ("\x1b[23^", Some("ctrl+f11")),
        ("\x1b[24^", Some("ctrl+f12")),
        ("\x1b[2@", Some("shift+ctrl+insert")),
        ("\x1b[3@", Some("shift+ctrl+delete")),
        ("\x1b[5@", Some("shift+ctrl+pageUp")),
        ("\x1b[6@", Some("shift+ctrl+pageDown")),
        ("\x1b[7@", Some("shift+ctrl+home")),
        ("\x1b[8@", Some("shift+ctrl+end")),
        ("\x1b[23@", Some("shift+ctrl+f11")),
        ("\x1b[24@", Some("shift+ctrl+f12")),
        // Application keypad.
        ("\x1bOM", Some("enter")),
        ("\x1bOj", Some("*")),
        ("\x1bOk", Some("+")),
        ("\x1bOl", Some(",")),
        ("\x1bOm", Some("-")),
        ("\x1bOn", Some(".")),
        ("\x1bOo", Some("/")),
        ("\x1bOX", Some("=")),
        ("\x1bOp", Some("0")),
        ("\x1bOq", Some("1")),
        ("\x1bOr", Some("2")),
        ("\x1bOs", Some("3")),
        ("\x1bOt", Some("4")),
        ("\x1bOu", Some("5")),
        ("\x1bOv", Some("6")),
        ("\x1bOw", Some("7")),
        ("\x1bOx", Some("8")),
        ("\x1bOy", Some("9")),
        // Unknown fixed sequences.
        ("\x1b[9~", None),
        ("\x1b[16~", None),
        ("\x1b[22~", None),
        ("\x1b[25~", None),
        ("\x1b[200~", None),
        ("\x1b[201~", None),
        ("\x1b[I", None),
        ("\x1b[O", None),
        ("\x1bOz", None),
        ("\x1b[4$", None),
    ]);
}

#[test]
fn modified_letter_keys() {
    check_both(&[
        ("\x1b[1;2A", Some("shift+up")),
        ("\x1b[1;3A", Some("alt+up")),
        ("\x1b[1;4A", Some("shift+alt+up")),
        ("\x1b[1;5A", Some("ctrl+up")),
        ("\x1b[1;6A", Some("shift+ctrl+up")),
        ("\x1b[1;7A", Some("ctrl+alt+up")),
        ("\x1b[1;8A", Some("shift+ctrl+alt+up")),
        ("\x1b[1;9A", Some("super+up")),
        ("\x1b[1;16A", Some("shift+ctrl+alt+super+up")),
        ("\x1b[1;5B", Some("ctrl+down")),
        ("\x1b[1;5C", Some("ctrl+right")),
        ("\x1b[1;5D", Some("ctrl+left")),
        ("\x1b[1;5E", Some("ctrl+clear")),
        ("\x1b[1;5F", Some("ctrl+end")),
        ("\x1b[1;5H", Some("ctrl+home")),
        ("\x1b[1;5P", Some("ctrl+f1")),
        ("\x1b[1;5Q", Some("ctrl+f2")),
        ("\x1b[1;5R", Some("ctrl+f3")),
        ("\x1b[1;5S", Some("ctrl+f4")),
        ("\x1b[1;2P", Some("shift+f1")),
        ("\x1b[1;1A", Some("up")),
        // Event types (Kitty) and lock bits.
        ("\x1b[1;1:1A", Some("up")),
        ("\x1b[1;1:2A", Some("up")),
        ("\x1b[1;1:3A", None),
        ("\x1b[1;5:3C", None),
        ("\x1b[1;65A", Some("up")),
        ("\x1b[1;133A", Some("ctrl+up")),
        ("\x1b[1;197A", Some("ctrl+up")),
        // Hyper and meta cannot be named by an id.
        ("\x1b[1;17A", None),
        ("\x1b[1;33A", None),
        // Malformed.
        ("\x1b[2;5A", None),
        ("\x1b[1A", None),
        ("\x1b[;5A", None),
        ("\x1b[1;0A", None),
        ("\x1b[1;257A", None),
        ("\x1b[1;5;1A", None),
        ("\x1b[1;5:4A", None),
        ("\x1b[1;5:0A", None),
        ("\x1b[1;5:1:1A", None),
        ("\x1b[1:2;5A", None),
        ("\x1b[1;5G", None),
        ("\x1b[1;5Z", None),
        ("\x1b[?1;5A", None),
        // SS3 with a modifier (old xterm).
        ("\x1bO5P", Some("ctrl+f1")),
        ("\x1bO2A", Some("shift+up")),
        ("\x1bO3D", Some("alt+left")),
        ("\x1bO0A", None),
        ("\x1bO99A", None),
        ("\x1bO5Z", None),
        ("\x1bO;5A", None),
    ]);
}

#[test]
fn modified_letter_keys_every_modifier() {
    let finals = [
        ('A', "up"),
        ('B', "down"),
        ('C', "right"),
        ('D', "left"),
        ('E', "clear"),
        ('F', "end"),
        ('H', "home"),
        ('P', "f1"),
        ('Q', "f2"),
        ('R', "f3"),
        ('S', "f4"),
    ];
    let prefixes = [
        "",
        "shift+",
        "alt+",
        "shift+alt+",
        "ctrl+",
        "shift+ctrl+",
        "ctrl+alt+",
        "shift+ctrl+alt+",
        "super+",
        "shift+super+",
        "alt+super+",
        "shift+alt+super+",
        "ctrl+super+",
        "shift+ctrl+super+",
        "ctrl+alt+super+",
        "shift+ctrl+alt+super+",
    ];
    for (final_byte, name) in finals {
        for (bits, prefix) in prefixes.iter().enumerate() {
            let input = format!("\x1b[1;{}{final_byte}", bits + 1);
            let want = format!("{prefix}{name}");
            assert_eq!(parse_key(&input, LEGACY), Some(want.clone()), "{input:?}");
            assert!(matches_key(&input, &want, KITTY), "{input:?} vs {want}");
        }
    }
}

#[test]
fn modified_tilde_keys() {
    check_both(&[
        ("\x1b[2;5~", Some("ctrl+insert")),
        ("\x1b[3;2~", Some("shift+delete")),
        ("\x1b[3;3~", Some("alt+delete")),
        ("\x1b[5;5~", Some("ctrl+pageUp")),
        ("\x1b[6;5~", Some("ctrl+pageDown")),
        ("\x1b[7;5~", Some("ctrl+home")),
        ("\x1b[8;5~", Some("ctrl+end")),
        ("\x1b[11;5~", Some("ctrl+f1")),
        ("\x1b[12;5~", Some("ctrl+f2")),
        ("\x1b[13;5~", Some("ctrl+f3")),
        ("\x1b[14;5~", Some("ctrl+f4")),
        ("\x1b[15;5~", Some("ctrl+f5")),
        ("\x1b[17;5~", Some("ctrl+f6")),
        ("\x1b[18;5~", Some("ctrl+f7")),
        ("\x1b[19;5~", Some("ctrl+f8")),
        ("\x1b[20;5~", Some("ctrl+f9")),
        ("\x1b[21;5~", Some("ctrl+f10")),
        ("\x1b[23;5~", Some("ctrl+f11")),
        ("\x1b[24;5~", Some("ctrl+f12")),
        ("\x1b[15;2~", Some("shift+f5")),
        ("\x1b[24;8~", Some("shift+ctrl+alt+f12")),
        ("\x1b[57427~", Some("clear")),
        ("\x1b[57427;5~", Some("ctrl+clear")),
        ("\x1b[3;1:2~", Some("delete")),
        ("\x1b[3;1:3~", None),
        ("\x1b[3;129~", Some("delete")),
        ("\x1b[3;;~", None),
        ("\x1b[3:1;5~", None),
        ("\x1b[16;5~", None),
        ("\x1b[0;5~", None),
        ("\x1b[;5~", None),
        ("\x1b[~", None),
    ]);
}

#[test]
fn xterm_modify_other_keys() {
    check_both(&[
        ("\x1b[27;5;99~", Some("ctrl+c")),
        ("\x1b[27;5;109~", Some("ctrl+m")),
        ("\x1b[27;5;106~", Some("ctrl+j")),
        ("\x1b[27;5;105~", Some("ctrl+i")),
        ("\x1b[27;5;104~", Some("ctrl+h")),
        ("\x1b[27;5;91~", Some("ctrl+[")),
        ("\x1b[27;2;13~", Some("shift+enter")),
        ("\x1b[27;5;13~", Some("ctrl+enter")),
        ("\x1b[27;5;9~", Some("ctrl+tab")),
        ("\x1b[27;6;9~", Some("shift+ctrl+tab")),
        ("\x1b[27;3;127~", Some("alt+backspace")),
        ("\x1b[27;5;8~", Some("ctrl+backspace")),
        ("\x1b[27;5;27~", Some("ctrl+escape")),
        ("\x1b[27;5;32~", Some("ctrl+space")),
        ("\x1b[27;2;65~", Some("shift+a")),
        ("\x1b[27;6;65~", Some("shift+ctrl+a")),
        ("\x1b[27;6;97~", Some("shift+ctrl+a")),
        ("\x1b[27;7;97~", Some("ctrl+alt+a")),
        ("\x1b[27;9;97~", Some("super+a")),
        ("\x1b[27;5;49~", Some("ctrl+1")),
        ("\x1b[27;5;43~", Some("ctrl++")),
        ("\x1b[27;1;97~", Some("a")),
        ("\x1b[27;17;97~", None),
        ("\x1b[27;0;97~", None),
        ("\x1b[27;5;0~", None),
        ("\x1b[27;5;1~", None),
        ("\x1b[27;5;55296~", None),
        ("\x1b[27;5;1114112~", None),
        ("\x1b[27;5~", None),
        ("\x1b[27;5;;~", None),
        ("\x1b[27;;99~", None),
        ("\x1b[27;5:1;99~", None),
        ("\x1b[27;5;99:1~", None),
        ("\x1b[27~", None),
    ]);
}

#[test]
fn kitty_csi_u() {
    check_both(&[
        ("\x1b[97u", Some("a")),
        ("\x1b[97;1u", Some("a")),
        ("\x1b[97;5u", Some("ctrl+a")),
        ("\x1b[99;5u", Some("ctrl+c")),
        ("\x1b[97;2u", Some("shift+a")),
        ("\x1b[97:65;2u", Some("shift+a")),
        ("\x1b[97;6u", Some("shift+ctrl+a")),
        ("\x1b[97;3u", Some("alt+a")),
        ("\x1b[97;4u", Some("shift+alt+a")),
        ("\x1b[97;7u", Some("ctrl+alt+a")),
        ("\x1b[97;9u", Some("super+a")),
        ("\x1b[97;13u", Some("ctrl+super+a")),
        ("\x1b[97;16u", Some("shift+ctrl+alt+super+a")),
        ("\x1b[65;2u", Some("shift+a")),
        ("\x1b[65;5u", Some("shift+ctrl+a")),
        ("\x1b[65u", Some("A")),
        ("\x1b[109;5u", Some("ctrl+m")),
        ("\x1b[106;5u", Some("ctrl+j")),
        ("\x1b[105;5u", Some("ctrl+i")),
        ("\x1b[104;5u", Some("ctrl+h")),
        ("\x1b[91;5u", Some("ctrl+[")),
        ("\x1b[92;5u", Some("ctrl+\\")),
        ("\x1b[49;5u", Some("ctrl+1")),
        ("\x1b[49:33;2u", Some("shift+1")),
        ("\x1b[43;5u", Some("ctrl++")),
        ("\x1b[61:43;6u", Some("shift+ctrl+=")),
        ("\x1b[27u", Some("escape")),
        ("\x1b[27;5u", Some("ctrl+escape")),
        ("\x1b[13u", Some("enter")),
        ("\x1b[13;2u", Some("shift+enter")),
        ("\x1b[13;3u", Some("alt+enter")),
        ("\x1b[9u", Some("tab")),
        ("\x1b[9;2u", Some("shift+tab")),
        ("\x1b[9;5u", Some("ctrl+tab")),
        ("\x1b[127u", Some("backspace")),
        ("\x1b[127;3u", Some("alt+backspace")),
        ("\x1b[127;5u", Some("ctrl+backspace")),
        ("\x1b[32u", Some("space")),
        ("\x1b[32;5u", Some("ctrl+space")),
        // Event types: press and repeat count, release is not a key.
        ("\x1b[97;1:1u", Some("a")),
        ("\x1b[97;1:2u", Some("a")),
        ("\x1b[97;5:2u", Some("ctrl+a")),
        ("\x1b[97;1:3u", None),
        ("\x1b[99;5:3u", None),
        ("\x1b[97;:2u", Some("a")),
        ("\x1b[97;5:0u", None),
        ("\x1b[97;5:4u", None),
        // Lock bits are masked.
        ("\x1b[97;65u", Some("a")),
        ("\x1b[97;69u", Some("ctrl+a")),
        ("\x1b[97;129u", Some("a")),
        ("\x1b[97;133u", Some("ctrl+a")),
        ("\x1b[97;197u", Some("ctrl+a")),
        ("\x1b[97;66u", Some("shift+a")),
        // Hyper, meta and impossible modifier values.
        ("\x1b[97;17u", None),
        ("\x1b[97;33u", None),
        ("\x1b[97;0u", None),
        ("\x1b[97;257u", None),
        ("\x1b[97;4294967295u", None),
        // Text as code points.
        ("\x1b[97;2;65u", Some("shift+a")),
        ("\x1b[97;;97u", Some("a")),
        ("\x1b[97;3;229u", Some("alt+a")),
        ("\x1b[97;1;104:105u", Some("a")),
        ("\x1b[0;;229u", None),
        // Base-layout key resolves non-Latin layouts.
        ("\x1b[1089::99;5u", Some("ctrl+c")),
        ("\x1b[1089:1057:99;6u", Some("shift+ctrl+c")),
        ("\x1b[1072::102;3u", Some("alt+f")),
        ("\x1b[1089;5u", Some("ctrl+с")),
        ("\x1b[1089u", Some("с")),
        ("\x1b[99::105;5u", Some("ctrl+c")),
        ("\x1b[1089::57399;5u", Some("ctrl+0")),
        // Keypad: digits stay digits whatever num-lock says.
        ("\x1b[57399u", Some("0")),
        ("\x1b[57399;129u", Some("0")),
        ("\x1b[57400;129u", Some("1")),
        ("\x1b[57408;129u", Some("9")),
        ("\x1b[57403;133u", Some("ctrl+4")),
        ("\x1b[57409u", Some(".")),
        ("\x1b[57410u", Some("/")),
        ("\x1b[57411u", Some("*")),
        ("\x1b[57412u", Some("-")),
        ("\x1b[57413u", Some("+")),
        ("\x1b[57413;5u", Some("ctrl++")),
        ("\x1b[57414u", Some("enter")),
        ("\x1b[57414;2u", Some("shift+enter")),
        ("\x1b[57415u", Some("=")),
        ("\x1b[57416u", Some(",")),
        ("\x1b[57417u", Some("left")),
        ("\x1b[57418u", Some("right")),
        ("\x1b[57419u", Some("up")),
        ("\x1b[57420u", Some("down")),
        ("\x1b[57421u", Some("pageUp")),
        ("\x1b[57422u", Some("pageDown")),
        ("\x1b[57423u", Some("home")),
        ("\x1b[57424u", Some("end")),
        ("\x1b[57425u", Some("insert")),
        ("\x1b[57426u", Some("delete")),
        ("\x1b[57427u", Some("clear")),
        // Kitty's numbers for keys it sends in legacy form, and F1–F12.
        ("\x1b[57352;5u", Some("ctrl+up")),
        ("\x1b[57364u", Some("f1")),
        ("\x1b[57366;2u", Some("shift+f3")),
        ("\x1b[57375;5u", Some("ctrl+f12")),
        // Keys an id cannot name.
        ("\x1b[57358u", None),
        ("\x1b[57376u", None),
        ("\x1b[57428u", None),
        ("\x1b[57441;2u", None),
        ("\x1b[57442;5u", None),
        ("\x1b[63743u", None),
        ("\x1b[1u", None),
        ("\x1b[0u", None),
        ("\x1b[155u", None),
        ("\x1b[8192u", None),
        ("\x1b[55296u", None),
        ("\x1b[1114112u", None),
        ("\x1b[4294967296u", None),
        // Malformed.
        ("\x1b[u", None),
        ("\x1b[;5u", None),
        ("\x1b[:65;2u", None),
        ("\x1b[97:65:99:1;2u", None),
        ("\x1b[97:55296;2u", None),
        ("\x1b[97;5:1:1u", None),
        ("\x1b[97;5;97;1u", None),
        ("\x1b[97a", None),
        ("\x1b[9 7u", None),
        ("\x1b[97;5u\x1b[97;5u", None),
        ("\x1b[97;5uX", None),
        // Replies and private sequences are not keys.
        ("\x1b[?1u", None),
        ("\x1b[?0u", None),
        ("\x1b[>1u", None),
        ("\x1b[=1u", None),
        ("\x1b[<u", None),
        ("\x1b[?62;22c", None),
        ("\x1b[12;40R", None),
        ("\x1b[<0;10;5M", None),
        ("\x1b[M !!", None),
    ]);
}

#[test]
fn alt_prefix_in_legacy_mode() {
    check_parse(
        &[
            ("\x1ba", Some("alt+a")),
            ("\x1bz", Some("alt+z")),
            ("\x1bA", Some("shift+alt+a")),
            ("\x1bB", Some("shift+alt+b")),
            ("\x1bF", Some("shift+alt+f")),
            ("\x1bb", Some("alt+b")),
            ("\x1bf", Some("alt+f")),
            ("\x1b1", Some("alt+1")),
            ("\x1b.", Some("alt+.")),
            ("\x1b+", Some("alt++")),
            ("\x1b[", Some("alt+[")),
            ("\x1bO", Some("shift+alt+o")),
            ("\x1b ", Some("alt+space")),
            ("\x1bé", Some("alt+é")),
            ("\x1b\x01", Some("ctrl+alt+a")),
            ("\x1b\x03", Some("ctrl+alt+c")),
            ("\x1b\x1a", Some("ctrl+alt+z")),
            ("\x1b\x00", Some("ctrl+alt+space")),
            ("\x1b\x1c", Some("ctrl+alt+\\")),
            ("\x1b\r", Some("alt+enter")),
            ("\x1b\n", Some("alt+enter")),
            ("\x1b\t", Some("alt+tab")),
            ("\x1b\x7f", Some("alt+backspace")),
            ("\x1b\x08", Some("alt+backspace")),
            ("\x1b\x1b", Some("alt+escape")),
            ("\x1b\u{9b}", None),
            // ESC ESC + sequence: alt with that key.
            ("\x1b\x1b[A", Some("alt+up")),
            ("\x1b\x1bOB", Some("alt+down")),
            ("\x1b\x1b[1;5C", Some("ctrl+alt+right")),
            ("\x1b\x1b[3~", Some("alt+delete")),
            ("\x1b\x1b[Z", Some("shift+alt+tab")),
            ("\x1b\x1b[[A", Some("alt+f1")),
            ("\x1b\x1b[5^", Some("ctrl+alt+pageUp")),
            ("\x1b\x1b[97;5u", Some("ctrl+alt+a")),
            ("\x1b\x1b[1;3A", Some("alt+up")),
            // A Kitty upper-case letter behind the alt prefix is shift + the letter.
            ("\x1b\x1b[82u", Some("shift+alt+r")),
            ("\x1b\x1b[65;5u", Some("shift+ctrl+alt+a")),
            ("\x1b\x1b[27;1;90~", Some("shift+alt+z")),
            ("\x1b\x1ba", None),
            ("\x1b\x1b\x1b", None),
            ("\x1b\x1b\x1b[A", None),
            ("\x1b\x1b[", None),
            ("\x1b\x1b[9~", None),
            ("\x1bab", None),
            ("\x1b\x01\x01", None),
        ],
        LEGACY,
    );
}

#[test]
fn alt_prefix_with_kitty_active() {
    check_parse(
        &[
            // Ambiguous with typing after escape: not keys.
            ("\x1ba", None),
            ("\x1bA", None),
            ("\x1bB", None),
            ("\x1bF", None),
            ("\x1bb", None),
            ("\x1bf", None),
            ("\x1b ", None),
            ("\x1b1", None),
            ("\x1b[", None),
            ("\x1bé", None),
            // Control keys after ESC stay alt chords.
            ("\x1b\r", Some("alt+enter")),
            ("\x1b\x7f", Some("alt+backspace")),
            ("\x1b\x1b", Some("alt+escape")),
            ("\x1b\x03", Some("ctrl+alt+c")),
            ("\x1b\x1b[A", Some("alt+up")),
            // The Kitty forms of the same chords.
            ("\x1b[97;3u", Some("alt+a")),
            ("\x1b[98;4u", Some("shift+alt+b")),
            ("\x1b[32;3u", Some("alt+space")),
        ],
        KITTY,
    );
}

#[test]
fn matches_key_rows() {
    let rows: &[(&str, &str, bool, bool)] = &[
        // Id normalisation: trimmed, case-insensitive, aliases, any modifier order.
        ("\x03", "ctrl+c", LEGACY, true),
        ("\x03", "CTRL+C", LEGACY, true),
        ("\x03", " ctrl + c ", LEGACY, true),
        ("\x03", "Ctrl+c", LEGACY, true),
        ("\x03", "ctrl+d", LEGACY, false),
        ("\x1b[99;5u", "ctrl+c", KITTY, true),
        ("\x1b[99;5u", "CTRL+C", KITTY, true),
        ("\x1b[99;6u", "ctrl+c", KITTY, false),
        ("\x1b[99;6u", "ctrl+shift+c", KITTY, true),
        ("\x1b[99;6u", "shift+ctrl+c", KITTY, true),
        ("\x1b", "escape", LEGACY, true),
        ("\x1b", "esc", LEGACY, true),
        ("\x1b", "ESC", LEGACY, true),
        ("\x1b[27u", "esc", KITTY, true),
        ("\r", "enter", LEGACY, true),
        ("\r", "return", LEGACY, true),
        ("\n", "Return", LEGACY, true),
        ("+", "plus", LEGACY, true),
        ("+", "+", LEGACY, true),
        ("\x1b[43;5u", "ctrl++", KITTY, true),
        ("\x1b[43;5u", "ctrl+plus", KITTY, true),
        ("\x1b[43;5u", "ctrl + +", KITTY, true),
        ("\x1b[43;5u", "CTRL+PLUS", KITTY, true),
        ("\x1b[57413;5u", "ctrl+plus", KITTY, true),
        ("\x1bOP", "F1", LEGACY, true),
        ("\x1bOP", "f1", LEGACY, true),
        ("\x1b[5~", "pageUp", LEGACY, true),
        ("\x1b[5~", "pageup", LEGACY, true),
        ("\x1b[5~", "PAGEUP", LEGACY, true),
        ("\x1b[6~", "PageDown", LEGACY, true),
        ("\x1b[1;4A", "alt+shift+up", LEGACY, true),
        ("\x1b[1;8A", "super+alt+ctrl+shift+up", LEGACY, false),
        ("\x1b[1;16A", "super+alt+ctrl+shift+up", LEGACY, true),
        // Single characters keep their case; upper case is shift.
        ("a", "a", LEGACY, true),
        ("a", "A", LEGACY, false),
        ("A", "A", LEGACY, true),
        ("A", "a", LEGACY, false),
        ("A", "shift+a", LEGACY, true),
        ("A", "shift+A", LEGACY, true),
        ("\x1b[97;2u", "A", KITTY, true),
        ("\x1b[97;2u", "shift+a", KITTY, true),
        ("\x1bA", "alt+shift+a", LEGACY, true),
        ("\x1bA", "shift+alt+a", LEGACY, true),
        ("\x1bA", "alt+a", LEGACY, false),
        ("\x1ba", "alt+a", LEGACY, true),
        ("\x1ba", "alt+a", KITTY, false),
        ("\x1b ", "alt+space", LEGACY, true),
        ("\x1b ", "alt+space", KITTY, false),
        ("\x1bB", "alt+shift+b", KITTY, false),
        ("\x1b\x01", "ctrl+alt+a", LEGACY, true),
        // Legacy bytes belong to enter/tab/backspace/escape only.
        ("\r", "ctrl+m", LEGACY, false),
        ("\n", "ctrl+j", LEGACY, false),
        ("\t", "ctrl+i", LEGACY, false),
        ("\x08", "ctrl+h", LEGACY, false),
        ("\x1b", "ctrl+[", LEGACY, false),
        ("\x7f", "ctrl+?", LEGACY, false),
        ("\r", "ctrl+m", KITTY, false),
        ("\t", "tab", LEGACY, true),
        ("\x08", "backspace", LEGACY, true),
        ("\x7f", "backspace", LEGACY, true),
        ("\x1b[109;5u", "ctrl+m", KITTY, true),
        ("\x1b[106;5u", "ctrl+j", KITTY, true),
        ("\x1b[105;5u", "ctrl+i", KITTY, true),
        ("\x1b[104;5u", "ctrl+h", KITTY, true),
        ("\x1b[91;5u", "ctrl+[", KITTY, true),
        ("\x1b[27;5;109~", "ctrl+m", LEGACY, true),
        ("\x1b[27;5;105~", "ctrl+i", LEGACY, true),
        ("\x1b[109;5u", "enter", KITTY, false),
        // ctrl+f1…f12 match every encoding.
        ("\x1b[1;5P", "ctrl+f1", LEGACY, true),
        ("\x1b[11;5~", "ctrl+f1", LEGACY, true),
        ("\x1b[11^", "ctrl+f1", LEGACY, true),
        ("\x1bO5P", "ctrl+f1", LEGACY, true),
        ("\x1b[57364;5u", "ctrl+f1", KITTY, true),
        ("\x1b[1;5Q", "ctrl+f2", LEGACY, true),
        ("\x1b[12;5~", "ctrl+f2", LEGACY, true),
        ("\x1b[1;5R", "ctrl+f3", LEGACY, true),
        ("\x1b[13;5~", "ctrl+f3", LEGACY, true),
        ("\x1b[1;5S", "ctrl+f4", LEGACY, true),
        ("\x1b[14;5~", "ctrl+f4", LEGACY, true),
        ("\x1b[15;5~", "ctrl+f5", LEGACY, true),
        ("\x1b[15^", "ctrl+f5", LEGACY, true),
        ("\x1b[17;5~", "ctrl+f6", LEGACY, true),
        ("\x1b[18;5~", "ctrl+f7", LEGACY, true),
        ("\x1b[19;5~", "ctrl+f8", LEGACY, true),
        ("\x1b[20;5~", "ctrl+f9", LEGACY, true),
        ("\x1b[21;5~", "ctrl+f10", LEGACY, true),
        ("\x1b[23;5~", "ctrl+f11", LEGACY, true),
        ("\x1b[24;5~", "ctrl+f12", LEGACY, true),
        ("\x1b[24;5~", "CTRL+F12", KITTY, true),
        ("\x1b[1;5E", "ctrl+f5", LEGACY, false),
        ("\x1b[1;5E", "ctrl+clear", LEGACY, true),
        ("\x1b[15;5~", "ctrl+clear", LEGACY, false),
        ("\x1b[15;5~", "f5", LEGACY, false),
        ("\x1b[15~", "ctrl+f5", LEGACY, false),
        // A modifier the input lacks, or one it has that the id lacks.
        ("a", "super+a", LEGACY, false),
        ("a", "ctrl+a", LEGACY, false),
        ("\x1b[97;9u", "super+a", KITTY, true),
        ("\x1b[97;9u", "a", KITTY, false),
        ("\x1b[1;3A", "up", LEGACY, false),
        ("\x1b[A", "alt+up", LEGACY, false),
        // Unknown modifier words and names are not keys.
        ("\x03", "control+c", LEGACY, false),
        ("\x1b[97;9u", "cmd+a", KITTY, false),
        ("\x1b[97;9u", "meta+a", KITTY, false),
        ("\x1b[1;3A", "option+up", LEGACY, false),
        ("\x1b[A", "upp", LEGACY, false),
        ("\x1b[A", "", LEGACY, false),
        ("\x1b[A", "+up", LEGACY, false),
        ("\x03", "ctrl+", LEGACY, false),
        ("\x03", "ctrl++c", LEGACY, false),
        ("\x03", "ctrl+c+", LEGACY, false),
        ("a", " ", LEGACY, false),
        ("", "a", LEGACY, false),
        ("", "", LEGACY, false),
        ("\x1b[200~", "f9", LEGACY, false),
        // Releases never match; repeats do.
        ("\x1b[99;5:3u", "ctrl+c", KITTY, false),
        ("\x1b[99;5:2u", "ctrl+c", KITTY, true),
        ("\x1b[99;133u", "ctrl+c", KITTY, true),
        ("\x1b[1089::99;5u", "ctrl+c", KITTY, true),
        ("\x1b[57399;129u", "0", KITTY, true),
        // Named keys with modifiers.
        ("\x00", "ctrl+space", LEGACY, true),
        (" ", "space", LEGACY, true),
        (" ", "SPACE", LEGACY, true),
        ("\x1b[Z", "shift+tab", LEGACY, true),
        ("\x1b[9;2u", "shift+tab", KITTY, true),
        ("\x1b[13;2u", "shift+enter", KITTY, true),
        ("\x1b[27;2;13~", "shift+return", LEGACY, true),
        ("\x1b[3;5~", "ctrl+delete", LEGACY, true),
        ("\x1b\x1b[A", "alt+up", LEGACY, true),
    ];
    for (data, id, kitty, want) in rows {
        assert_eq!(
            matches_key(data, id, *kitty),
            *want,
            "matches_key({data:?}, {id:?}, kitty={kitty})"
        );
    }
}

#[test]
fn normalizes_ids() {
    let rows: &[(&str, Option<&str>)] = &[
        ("ctrl+c", Some("ctrl+c")),
        ("CTRL+C", Some("ctrl+c")),
        (" ctrl + c ", Some("ctrl+c")),
        ("alt+shift+x", Some("shift+alt+x")),
        ("super+alt+ctrl+shift+up", Some("shift+ctrl+alt+super+up")),
        ("ctrl+ctrl+a", Some("ctrl+a")),
        ("esc", Some("escape")),
        ("Return", Some("enter")),
        ("plus", Some("+")),
        ("ctrl+plus", Some("ctrl++")),
        ("ctrl++", Some("ctrl++")),
        ("ctrl + +", Some("ctrl++")),
        ("+", Some("+")),
        ("F1", Some("f1")),
        ("f12", Some("f12")),
        ("PAGEUP", Some("pageUp")),
        ("pagedown", Some("pageDown")),
        ("A", Some("A")),
        ("shift+A", Some("shift+a")),
        ("é", Some("é")),
        ("ctrl+É", Some("ctrl+É")),
        ("f13", None),
        ("hyper+a", None),
        ("ctrl", None),
        ("ctrl+", None),
        ("", None),
        ("   ", None),
        ("a+", None),
        ("++", None),
        ("ctrl+\u{1}", None),
    ];
    for (id, want) in rows {
        assert_eq!(normalize_key_id(id).as_deref(), *want, "{id:?}");
    }
}

#[test]
fn matches_legacy_sequence_rows() {
    let rows: &[(&str, &str, bool)] = &[
        ("\x1b[A", "up", true),
        ("\x1bOA", "up", true),
        ("\x1bOA", "UP", true),
        ("\x1b[A", "down", false),
        ("\x1b[1;5A", "ctrl+up", false),
        ("\x1bOa", "ctrl+up", true),
        ("\x1b[a", "shift+up", true),
        ("\x1b[5$", "shift+pageUp", true),
        ("\x1b[5^", "ctrl+pageUp", true),
        ("\x1b[[A", "f1", true),
        ("\x1bOP", "f1", true),
        ("\x1b[11~", "f1", true),
        ("\x1b[Z", "shift+tab", true),
        ("\x1b[E", "clear", true),
        ("\x1bOM", "enter", true),
        ("\r", "enter", true),
        ("\n", "return", true),
        ("\t", "tab", true),
        ("\x7f", "backspace", true),
        ("\x08", "backspace", true),
        ("\x1b", "esc", true),
        ("\x03", "ctrl+c", true),
        ("\r", "ctrl+m", false),
        ("a", "a", false),
        ("\x1b[97;5u", "ctrl+a", false),
        ("\x1b[A", "nope", false),
        ("\x1b[A", "", false),
        ("", "up", false),
    ];
    for (data, name, want) in rows {
        assert_eq!(
            matches_legacy_sequence(data, name),
            *want,
            "matches_legacy_sequence({data:?}, {name:?})"
        );
    }
}

fn kitty_key(
    codepoint: u32,
    shifted_key: Option<u32>,
    base_layout_key: Option<u32>,
    modifier: u32,
    event_type: Option<KeyEventType>,
) -> Option<KittyKey> {
    Some(KittyKey {
        codepoint,
        shifted_key,
        base_layout_key,
        modifier,
        event_type,
    })
}

#[test]
fn parse_kitty_sequence_rows() {
    use KeyEventType::*;
    let rows: &[(&str, Option<KittyKey>)] = &[
        ("\x1b[97u", kitty_key(97, None, None, 0, None)),
        ("\x1b[97;5u", kitty_key(97, None, None, 4, None)),
        ("\x1b[97:65;2u", kitty_key(97, Some(65), None, 1, None)),
        ("\x1b[1089::99;5u", kitty_key(1089, None, Some(99), 4, None)),
        (
            "\x1b[1089:1057:99;6u",
            kitty_key(1089, Some(1057), Some(99), 5, None),
        ),
        ("\x1b[97;1:1u", kitty_key(97, None, None, 0, Some(Press))),
        ("\x1b[97;1:2u", kitty_key(97, None, None, 0, Some(Repeat))),
        ("\x1b[97;1:3u", kitty_key(97, None, None, 0, Some(Release))),
        ("\x1b[97;:3u", kitty_key(97, None, None, 0, Some(Release))),
        ("\x1b[97;69u", kitty_key(97, None, None, 4, None)),
        ("\x1b[97;133u", kitty_key(97, None, None, 4, None)),
        ("\x1b[97;256u", kitty_key(97, None, None, 63, None)),
        ("\x1b[97;17u", kitty_key(97, None, None, 16, None)),
        ("\x1b[97;2;65u", kitty_key(97, None, None, 1, None)),
        ("\x1b[57399;129u", kitty_key(57399, None, None, 0, None)),
        (
            "\x1b[57441;2:3u",
            kitty_key(57441, None, None, 1, Some(Release)),
        ),
        ("\x1b[A", kitty_key(57352, None, None, 0, None)),
        ("\x1b[1;5A", kitty_key(57352, None, None, 4, None)),
        ("\x1b[1;5B", kitty_key(57353, None, None, 4, None)),
        ("\x1b[1;2C", kitty_key(57351, None, None, 1, None)),
        ("\x1b[1;3D", kitty_key(57350, None, None, 2, None)),
        (
            "\x1b[1;1:3D",
            kitty_key(57350, None, None, 0, Some(Release)),
        ),
        ("\x1b[H", kitty_key(57356, None, None, 0, None)),
        ("\x1b[F", kitty_key(57357, None, None, 0, None)),
        ("\x1b[E", kitty_key(57427, None, None, 0, None)),
        ("\x1b[1;5P", kitty_key(57364, None, None, 4, None)),
        ("\x1b[13~", kitty_key(57366, None, None, 0, None)),
        ("\x1b[1;5S", kitty_key(57367, None, None, 4, None)),
        ("\x1b[2~", kitty_key(57348, None, None, 0, None)),
        ("\x1b[3;5~", kitty_key(57349, None, None, 4, None)),
        ("\x1b[5;1:2~", kitty_key(57354, None, None, 0, Some(Repeat))),
        ("\x1b[6~", kitty_key(57355, None, None, 0, None)),
        ("\x1b[7~", kitty_key(57356, None, None, 0, None)),
        ("\x1b[8~", kitty_key(57357, None, None, 0, None)),
        ("\x1b[24;5~", kitty_key(57375, None, None, 4, None)),
        ("\x1b[57427~", kitty_key(57427, None, None, 0, None)),
        ("\x1b[0u", kitty_key(0, None, None, 0, None)),
        // Not Kitty key events.
        ("\x1b[27;5;99~", None),
        ("\x1bOA", None),
        ("\x1b[a", None),
        ("\x03", None),
        ("a", None),
        ("", None),
        ("\x1b[?1u", None),
        ("\x1b[u", None),
        ("\x1b[97;0u", None),
        ("\x1b[97;257u", None),
        ("\x1b[97;5:4u", None),
        ("\x1b[55296u", None),
        ("\x1b[97:1114112;2u", None),
        ("\x1b[97:65:99:1;2u", None),
        ("\x1b[2;5A", None),
        ("\x1b[16~", None),
        ("\x1b[97;5", None),
    ];
    for (data, want) in rows {
        assert_eq!(
            parse_kitty_sequence(data),
            *want,
            "parse_kitty_sequence({data:?})"
        );
    }
}

#[test]
fn matches_kitty_sequence_rows() {
    let rows: &[(&str, u32, u32, bool)] = &[
        ("\x1b[99;5u", 99, 4, true),
        ("\x1b[99;5u", 99, 0, false),
        ("\x1b[99;5u", 100, 4, false),
        ("\x1b[99;133u", 99, 4, true),
        ("\x1b[99;5u", 99, 4 | 64, true),
        ("\x1b[99;5:2u", 99, 4, true),
        ("\x1b[99;5:3u", 99, 4, false),
        ("\x1b[1089::99;5u", 99, 4, true),
        ("\x1b[1089::99;5u", 1089, 4, true),
        ("\x1b[99::105;5u", 105, 4, false),
        ("\x1b[97:65;2u", 97, 1, true),
        ("\x1b[1;5A", 57352, 4, true),
        ("\x1b[A", 57352, 0, true),
        ("\x1b[3;2~", 57349, 1, true),
        ("\x1b[27u", 27, 0, true),
        ("\x1b[13;2u", 13, 1, true),
        ("\r", 13, 0, false),
        ("\x03", 99, 4, false),
        ("garbage", 99, 4, false),
    ];
    for (data, codepoint, modifier, want) in rows {
        assert_eq!(
            matches_kitty_sequence(data, *codepoint, *modifier),
            *want,
            "matches_kitty_sequence({data:?}, {codepoint}, {modifier})"
        );
    }
}

#[test]
fn functional_codes_round_trip() {
    use NamedKey::*;
    let keys = [
        Escape, Tab, Enter, Space, Backspace, Insert, Delete, Home, End, PageUp, PageDown, Clear,
        Up, Down, Left, Right, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12,
    ];
    for key in keys {
        let input = format!("\x1b[{};5u", functional_code(key));
        assert_eq!(
            parse_key(&input, KITTY),
            Some(format!("ctrl+{}", key.name())),
            "{key:?}"
        );
    }
}

/// Inputs built from the pieces key sequences are made of, so the fuzzer reaches deep branches.
fn sequence_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\x1b".to_string()),
        Just("\x1b[".to_string()),
        Just("\x1b\x1b[".to_string()),
        Just("\x1bO".to_string()),
        Just(";".to_string()),
        Just(":".to_string()),
        Just("~".to_string()),
        Just("u".to_string()),
        Just("$".to_string()),
        Just("^".to_string()),
        Just("27".to_string()),
        Just("1".to_string()),
        "[0-9]{1,12}",
        "[A-Za-z@\\[\\]^_`{|}~?<=>]",
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

fn exercise(data: &str) {
    for kitty in [LEGACY, KITTY] {
        if let Some(id) = parse_key(data, kitty) {
            // Every id the parser produces is a valid id that matches its own input.
            assert_eq!(
                normalize_key_id(&id).as_deref(),
                Some(id.as_str()),
                "{data:?} → {id}"
            );
            assert!(
                matches_key(data, &id, kitty),
                "{data:?} does not match its id {id}"
            );
        }
        let _ = matches_key(data, data, kitty);
    }
    if let Some(event) = parse_kitty_sequence(data) {
        let modifier = event.modifier;
        let released = event.event_type == Some(KeyEventType::Release);
        assert_eq!(
            matches_kitty_sequence(data, event.codepoint, modifier),
            !released
        );
    }
    let _ = matches_legacy_sequence(data, data);
    let _ = normalize_key_id(data);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn arbitrary_strings_never_panic(data in any::<String>()) {
        exercise(&data);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn sequence_like_inputs_never_panic(data in sequence_like()) {
        exercise(&data);
    }

    #[test]
    fn every_parsed_id_matches_its_input(data in key_like()) {
        exercise(&data);
    }
}

/// Well-formed key sequences with arbitrary numbers: the alt prefix, CSI with one to three
/// fields and sub-fields, every final byte a key sequence may end in, SS3 with a modifier.
fn key_like() -> impl Strategy<Value = String> {
    let number = prop_oneof![0u32..200, 57340u32..57430, any::<u32>()].prop_map(|n| n.to_string());
    let field = proptest::collection::vec(proptest::option::of(number), 1..4).prop_map(|subs| {
        subs.into_iter()
            .map(Option::unwrap_or_default)
            .collect::<Vec<_>>()
            .join(":")
    });
    let params = proptest::collection::vec(field, 0..4).prop_map(|fields| fields.join(";"));
    let final_byte = prop_oneof![
        Just('u'),
        Just('~'),
        Just('$'),
        Just('^'),
        Just('@'),
        proptest::char::range('A', 'Z'),
        proptest::char::range('a', 'z'),
    ];
    let csi = (params, final_byte).prop_map(|(p, f)| format!("\x1b[{p}{f}"));
    let ss3 = (0u32..20, proptest::char::range('A', 'z')).prop_map(|(m, f)| format!("\x1bO{m}{f}"));
    let body = prop_oneof![
        4 => csi,
        1 => ss3,
        1 => any::<char>().prop_map(String::from),
    ];
    (any::<bool>(), body).prop_map(|(alt, body)| if alt { format!("\x1b{body}") } else { body })
}
