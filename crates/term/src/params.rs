//! Decimal parameters of control sequences (ECMA-48 §5.4.2): runs of digits separated by `;`
//! (parameters) and `:` (sub-parameters).
//!
//! The crate's two readers of them, both here: [`decimal`] and [`fields`] for a parameter string
//! taken whole (the key parser, the query responder), and [`params`], one pass over the bytes for
//! the terminal's hot path (the fast path around the emulator's parser, the bounds on counts,
//! scroll regions and modes). Both saturate instead of failing on long digit runs, so each caller
//! states its own range rule when it narrows the value (the key parser rejects what does not fit
//! a `u32`; the terminal saturates at `u16::MAX` as the emulator's parser does).

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

/// A parameter string read whole as one terminal parameter: `None` when empty or not a number,
/// saturated at `u16::MAX`.
pub(crate) fn terminal_param(digits: &[u8]) -> Option<u16> {
    decimal(digits).map(saturate)
}

fn saturate(value: u64) -> u16 {
    u16::try_from(value).unwrap_or(u16::MAX)
}

/// The `;`-separated parameters of a parameter string, each with its `:` sub-parameters; an empty
/// string has no parameters.
pub(crate) fn fields(params: &[u8]) -> impl Iterator<Item = &[u8]> {
    params
        .split(|&b| b == b';')
        .take(if params.is_empty() { 0 } else { usize::MAX })
}

/// One parameter of a control sequence as the terminal reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Param {
    /// The value of its first sub-parameter (`5` of `5:2`), saturated at `u16::MAX`; `None` when
    /// that is empty (the function's default applies).
    pub(crate) value: Option<u16>,
    /// Sub-parameters follow the first one (`:`-separated, as in `38:2::1:2:3`).
    pub(crate) sub_params: bool,
}

/// The parameters at the start of `bytes`, in order, as the terminal's handling of sequences
/// reads them. They end at the first byte that is not a digit, `:` or `;` (the
/// final byte of a sequence, say), where [`Params::end`] then points.
///
/// ECMA-48 §5.4.2: a parameter string is a list of parameter sub-strings separated by `;`, each a
/// decimal number whose empty form means the function's default; `:` separates the parts of a
/// sub-string (used by xterm and others for sub-parameters, as in `38:2::r:g:b`). An empty string
/// holds no parameter; `;` alone holds two empty ones. How many parameters a function takes, and
/// what 0 means, is the caller's to decide.
#[inline]
pub(crate) fn params(bytes: &[u8]) -> Params<'_> {
    Params {
        rest: bytes,
        len: bytes.len(),
        done: !bytes.first().is_some_and(|&b| matches!(b, b'0'..=b';')),
    }
}

/// The iterator of [`params`]. It runs for nearly every sequence a program sends, so it reads each
/// byte once, in one loop.
pub(crate) struct Params<'a> {
    /// From the next parameter on, or (once done) from where the parameters ended.
    rest: &'a [u8],
    /// The length of the whole string.
    len: usize,
    done: bool,
}

impl Params<'_> {
    /// How many bytes the parameters take, once the iterator has returned `None`.
    pub(crate) fn end(&self) -> usize {
        self.len - self.rest.len()
    }
}

impl Iterator for Params<'_> {
    type Item = Param;

    #[inline]
    fn next(&mut self) -> Option<Param> {
        if self.done {
            return None;
        }
        let mut rest = self.rest;
        // Saturating as it goes: 65535 × 10 + 9 still fits.
        let mut value = 0u32;
        while let [byte @ b'0'..=b'9', tail @ ..] = rest {
            value = (value * 10 + u32::from(byte - b'0')).min(u32::from(u16::MAX));
            rest = tail;
        }
        let digits = rest.len() < self.rest.len();
        let sub_params = rest.first() == Some(&b':');
        while let [b'0'..=b':', tail @ ..] = rest
            && sub_params
        {
            rest = tail;
        }
        match rest {
            [b';', tail @ ..] => self.rest = tail,
            _ => {
                self.rest = rest;
                self.done = true;
            }
        }
        Some(Param {
            value: digits.then(|| u16::try_from(value).unwrap_or(u16::MAX)),
            sub_params,
        })
    }
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
    fn fields_split_at_semicolons() {
        let split: Vec<&[u8]> = fields(b"1;;38:2:1").collect();
        assert_eq!(split, [&b"1"[..], b"", b"38:2:1"]);
        assert_eq!(fields(b"").count(), 0);
        assert_eq!(fields(b";").count(), 2);
    }

    #[test]
    fn params_read_the_first_sub_parameter() {
        let param = |value, sub_params| Param { value, sub_params };
        let read: Vec<Param> = params(b"1;;38:2:1;99999;:5;0").collect();
        assert_eq!(
            read,
            [
                param(Some(1), false),
                param(None, false),
                param(Some(38), true),
                param(Some(u16::MAX), false),
                param(None, true),
                param(Some(0), false),
            ]
        );
        assert_eq!(params(b"").count(), 0);
        assert_eq!(params(b";").collect::<Vec<_>>(), [param(None, false); 2]);
        assert_eq!(params(b"?1").next(), None);
        let mut until_final = params(b"1;;2:5m;3");
        let read: Vec<Param> = until_final.by_ref().collect();
        assert_eq!(
            read,
            [
                param(Some(1), false),
                param(None, false),
                param(Some(2), true)
            ]
        );
        assert_eq!(until_final.end(), 6);
        let mut trailing = params(b"4;");
        assert_eq!(trailing.by_ref().count(), 2);
        assert_eq!(trailing.end(), 2);
    }
}
