//! The shape of a control sequence as a key parser needs it (ECMA-48 §5.4): `ESC [`, a parameter
//! string of decimal numbers separated by `;` (fields) and `:` (sub-fields), one final byte.
//!
//! Private markers (`<=>?`), intermediates and any other byte make the input "not a key": replies
//! such as `CSI ? 1 u` or mouse reports must never parse as keys.

use crate::params::{decimal, fields};

/// Fields a key sequence may carry: Kitty's `key ; modifiers ; text`, xterm's `27 ; mod ; code`.
const MAX_FIELDS: usize = 3;
/// Sub-fields kept per field: Kitty's `code:shifted:base`. Further ones (the text field may list
/// several code points) are validated and counted but not kept.
const MAX_SUBFIELDS: usize = 3;

/// The parsed parameters of a control sequence: up to three `;` fields of up to three `:`
/// sub-fields, each a number or empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Params {
    values: [[Option<u32>; MAX_SUBFIELDS]; MAX_FIELDS],
    subfields: [usize; MAX_FIELDS],
    fields: usize,
}

impl Params {
    /// The number of `;`-separated fields (an empty parameter string has none).
    pub(crate) fn len(&self) -> usize {
        self.fields
    }

    /// The number of `:`-separated sub-fields of field `field` (0 when absent).
    pub(crate) fn subfields(&self, field: usize) -> usize {
        self.subfields.get(field).copied().unwrap_or(0)
    }

    /// Sub-field `sub` of field `field`, `None` when absent or empty.
    pub(crate) fn get(&self, field: usize, sub: usize) -> Option<u32> {
        self.values.get(field)?.get(sub).copied().flatten()
    }
}

/// Splits `ESC [ params final` into its parameter string and final byte. The final byte must be
/// in 0x40–0x7E and the parameter string may only hold digits, `;` and `:`.
pub(crate) fn split_csi(data: &str) -> Option<(&str, u8)> {
    let body = data.strip_prefix("\x1b[")?;
    let (&last, params) = body.as_bytes().split_last()?;
    if !(0x40..=0x7e).contains(&last) {
        return None;
    }
    // `last` is ASCII, so slicing it off keeps a char boundary.
    let params = &body[..params.len()];
    Some((params, last))
}

/// Parses a parameter string: `;` separates fields, `:` sub-fields, each a decimal number or
/// empty. Any other byte, more than three fields, or a number above `u32::MAX` is not a key
/// sequence.
pub(crate) fn parse_params(params: &str) -> Option<Params> {
    let mut out = Params::default();
    for (field, text) in fields(params.as_bytes()).enumerate() {
        if field >= MAX_FIELDS {
            return None;
        }
        let mut count = 0;
        for (sub, digits) in text.split(|&b| b == b':').enumerate() {
            let value = match digits {
                [] => None,
                _ => Some(u32::try_from(decimal(digits)?).ok()?),
            };
            if let Some(slot) = out.values[field].get_mut(sub) {
                *slot = value;
            }
            count = sub + 1;
        }
        out.subfields[field] = count;
        out.fields = field + 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_control_sequences() {
        let rows: &[(&str, Option<(&str, u8)>)] = &[
            ("\x1b[A", Some(("", b'A'))),
            ("\x1b[1;5A", Some(("1;5", b'A'))),
            ("\x1b[97:65;2u", Some(("97:65;2", b'u'))),
            ("\x1b[", None),
            ("\x1b", None),
            ("", None),
            ("\x1bOA", None),
            ("\x1b[1;5\x7f", None),
            ("\x1b[1;5é", None),
            ("\x1b[é", None),
        ];
        for (input, want) in rows {
            assert_eq!(split_csi(input), *want, "{input:?}");
        }
    }

    #[test]
    fn parses_fields_and_subfields() {
        let p = parse_params("1089::99;5:2;97:98:99:100").expect("valid");
        assert_eq!(p.len(), 3);
        assert_eq!(p.subfields(0), 3);
        assert_eq!(
            (p.get(0, 0), p.get(0, 1), p.get(0, 2)),
            (Some(1089), None, Some(99))
        );
        assert_eq!((p.get(1, 0), p.get(1, 1)), (Some(5), Some(2)));
        assert_eq!(p.subfields(2), 4);
        assert_eq!(p.get(2, 0), Some(97));
        assert_eq!(p.get(5, 0), None);
        assert_eq!(p.subfields(7), 0);

        let empty = parse_params("").expect("valid");
        assert_eq!((empty.len(), empty.get(0, 0)), (0, None));

        let rows: &[&str] = &[
            "1;2;3;4",
            "?1",
            ">1",
            "1 ;2",
            "4294967296",
            "99999999999999999999",
            "1;-2",
        ];
        for input in rows {
            assert_eq!(parse_params(input), None, "{input:?}");
        }
        assert_eq!(
            parse_params("4294967295").and_then(|p| p.get(0, 0)),
            Some(u32::MAX)
        );
    }
}
