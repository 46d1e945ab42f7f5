//! Decimal parameters of control sequences (ECMA-48 §5.4.2): runs of digits separated by `;`
//! (parameters) and `:` (sub-parameters).
//!
//! The one digit parser of the crate, shared by the key parser, the query responder and the
//! terminal's own handling of sequences. It saturates instead of failing on long digit runs, so
//! each caller states its own range rule when it narrows the value (the key parser rejects what
//! does not fit a `u32`; the terminal saturates at `u16::MAX` as the emulator's parser does).

/// The value of a run of ASCII digits; `None` when the run is empty or holds anything else.
/// Values past `u64::MAX` saturate.
pub(crate) fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |value, &byte| {
        byte.is_ascii_digit().then(|| {
            value
                .saturating_mul(10)
                .saturating_add(u64::from(byte - b'0'))
        })
    })
}

/// A parameter as a terminal reads it: `None` when empty or not a number, saturated at `u16::MAX`.
pub(crate) fn terminal_param(digits: &[u8]) -> Option<u16> {
    decimal(digits).map(|value| u16::try_from(value).unwrap_or(u16::MAX))
}

/// The `;`-separated parameters of a parameter string, each with its `:` sub-parameters; an empty
/// string has no parameters.
pub(crate) fn fields(params: &[u8]) -> impl Iterator<Item = &[u8]> {
    params
        .split(|&b| b == b';')
        .take(if params.is_empty() { 0 } else { usize::MAX })
}

/// The first sub-parameter of a parameter (`5` of `5:2`), the only one most functions read.
pub(crate) fn leading(field: &[u8]) -> &[u8] {
    field.split(|&b| b == b':').next().unwrap_or(field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_runs() {
        assert_eq!(decimal(b"0"), Some(0));
        assert_eq!(decimal(b"0042"), Some(42));
        assert_eq!(decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(decimal(b"99999999999999999999999"), Some(u64::MAX));
        assert_eq!(decimal(b""), None);
        assert_eq!(decimal(b"1;2"), None);
        assert_eq!(decimal(b"-1"), None);
        assert_eq!(decimal(b" 1"), None);
    }

    #[test]
    fn terminal_params_saturate_at_u16() {
        assert_eq!(terminal_param(b"65535"), Some(65535));
        assert_eq!(terminal_param(b"65536"), Some(u16::MAX));
        assert_eq!(terminal_param(b"99999999999999999999999"), Some(u16::MAX));
        assert_eq!(terminal_param(b""), None);
        assert_eq!(terminal_param(b"?1"), None);
    }

    #[test]
    fn fields_and_leading_sub_parameters() {
        let split: Vec<&[u8]> = fields(b"1;;38:2:1").collect();
        assert_eq!(split, [&b"1"[..], b"", b"38:2:1"]);
        assert_eq!(fields(b"").count(), 0);
        assert_eq!(fields(b";").count(), 2);
        assert_eq!(leading(b"38:2:1"), b"38");
        assert_eq!(leading(b""), b"");
    }
}
