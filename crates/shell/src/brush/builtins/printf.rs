//! `printf`, whose numeric arguments we check first, as bash does.
//!
//! brush's `printf` hands numeric arguments to a formatting library that reports a bad one
//! (`printf '%d' abc`) on the *process's* stderr — the host's — under the host's program name, and
//! still succeeds. bash reports `printf: abc: invalid number` on the shell's stderr, uses the
//! number the argument starts with (0 if none) and returns 1. So before the stock builtin runs,
//! every argument a numeric conversion (or a `*` width or precision) will consume is read the way
//! bash reads it (`strtoimax`/`strtoumax`/`strtold` with bash's character constants `'c`), the
//! complaint bash would make goes to the run's stderr, and the argument is replaced by the value
//! bash would use, written so the library accepts it silently.
//!
//! The library pads through Rust's formatting, which panics on a field width or precision over
//! 65535 (a panic there would end the session). bash has no such limit; we refuse those with a
//! message and status 1 instead of printing anything.

use std::io::Write as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::{error_prefix, run_or_fail, stock};

/// How a conversion reads its argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Signed,
    Unsigned,
    Float,
    Text,
    /// A `*` width or precision: read as a signed number, and held to [`FIELD_LIMIT`].
    Field,
}

/// The widest field width or precision the formatting library can pad to without panicking.
const FIELD_LIMIT: u64 = u16::MAX as u64;

/// What one pass over a format consumes and asks for.
#[derive(Debug, PartialEq, Eq)]
struct Directives {
    /// The kinds of the arguments consumed, in order.
    kinds: Vec<Kind>,
    /// The largest field width or precision written in the format itself.
    widest: u64,
}

/// The arguments one pass over `format` consumes and its widest literal field; `None` when the
/// format has a conversion we do not know (the stock builtin reports it).
fn consumed(format: &str) -> Option<Directives> {
    let mut kinds = Vec::new();
    let mut widest = 0u64;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            continue;
        }
        while chars.next_if(|c| "-+ #0'".contains(*c)).is_some() {}
        for part in 0..2 {
            if part == 1 && chars.next_if_eq(&'.').is_none() {
                break;
            }
            if chars.next_if_eq(&'*').is_some() {
                kinds.push(Kind::Field);
            } else {
                let mut field = 0u64;
                while let Some(digit) = chars.next_if(char::is_ascii_digit) {
                    field = field
                        .saturating_mul(10)
                        .saturating_add(u64::from(digit) - 48);
                }
                widest = widest.max(field);
            }
        }
        while chars.next_if(|c| "hlLjzt".contains(*c)).is_some() {}
        let kind = match chars.next()? {
            'd' | 'i' => Kind::Signed,
            'o' | 'u' | 'x' | 'X' => Kind::Unsigned,
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'a' | 'A' => Kind::Float,
            's' | 'b' | 'q' | 'Q' | 'c' => Kind::Text,
            '(' => {
                // `%(datefmt)T` takes a number of seconds.
                while chars.next()? != ')' {}
                if chars.next()? != 'T' {
                    return None;
                }
                Kind::Signed
            }
            _ => return None,
        };
        kinds.push(kind);
    }
    Some(Directives { kinds, widest })
}

/// What bash says about an argument it read as a number.
#[derive(Debug, PartialEq, Eq)]
enum Complaint {
    /// `printf: ARG: invalid number`, status 1.
    Invalid,
    /// `printf: warning: ARG: Numerical result out of range`.
    OutOfRange,
}

/// The argument as the formatting library should see it, and bash's complaint if any.
fn read_number(arg: &str, kind: Kind) -> (String, Option<Complaint>) {
    if arg.is_empty() {
        return ("0".into(), None);
    }
    if let Some(rest) = arg.strip_prefix(['\'', '"']) {
        let code = rest.chars().next().map_or(0, u32::from);
        return (code.to_string(), None);
    }
    match kind {
        Kind::Float => read_float(arg),
        Kind::Unsigned | Kind::Signed | Kind::Field => read_integer(arg, kind),
        Kind::Text => (arg.to_string(), None),
    }
}

/// `strtoimax`/`strtoumax` with base 0, then bash's check that nothing is left over.
fn read_integer(arg: &str, kind: Kind) -> (String, Option<Complaint>) {
    let text = arg.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if hex.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, hex),
        _ if text.starts_with('0') => (8, text),
        _ => (10, text),
    };
    let length = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let mut complaint = (length == 0 || length < digits.len()).then_some(Complaint::Invalid);
    let magnitude = match u128::from_str_radix(&digits[..length], radix) {
        Ok(value) => Some(value),
        Err(_) if length == 0 => Some(0),
        Err(_) => None,
    };
    let value = match kind {
        Kind::Unsigned => {
            let fits = magnitude.and_then(|m| u64::try_from(m).ok());
            let value = fits.unwrap_or(u64::MAX);
            if fits.is_none() {
                complaint.get_or_insert(Complaint::OutOfRange);
            }
            if negative {
                value.wrapping_neg()
            } else {
                value
            }
            .to_string()
        }
        _ => {
            let signed = magnitude.and_then(|m| {
                let m = i128::try_from(m).ok()?;
                i64::try_from(if negative { -m } else { m }).ok()
            });
            if signed.is_none() {
                complaint.get_or_insert(Complaint::OutOfRange);
            }
            signed
                .unwrap_or(if negative { i64::MIN } else { i64::MAX })
                .to_string()
        }
    };
    (value, complaint)
}

/// `strtold`, then bash's check that nothing is left over: the longest prefix that is a number.
fn read_float(arg: &str) -> (String, Option<Complaint>) {
    let text = arg.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    if is_float(text) {
        return (text.to_string(), None);
    }
    // A decimal prefix is read in one pass; hex, `inf` and `nan` prefixes are short, and only
    // those are searched for by trying prefixes (one parse per prefix of a long argument hung).
    let decimal = &text[..decimal_prefix_len(text)];
    let short = (1..text.len().min(SHORT_PREFIX))
        .rev()
        .filter(|&end| text.is_char_boundary(end))
        .map(|end| &text[..end])
        .find(|prefix| is_float(prefix));
    let prefix = [short, Some(decimal).filter(|d| !d.is_empty())]
        .into_iter()
        .flatten()
        .max_by_key(|prefix| prefix.len());
    (prefix.unwrap_or("0").to_string(), Some(Complaint::Invalid))
}

/// Longest hex, `inf` or `nan` prefix looked for in a number that does not parse whole.
const SHORT_PREFIX: usize = 64;

/// The length of the longest decimal number at the start of `text`, as `strtold` reads it:
/// `[+-]digits[.digits][(e|E)[+-]digits]`, the exponent only when it has a digit.
fn decimal_prefix_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let digits_from = |at: usize| {
        at + bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut end = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let mantissa = end;
    end = digits_from(end);
    if bytes.get(end) == Some(&b'.') {
        end = digits_from(end + 1);
    }
    if end == mantissa || &text[mantissa..end] == "." {
        return 0;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        let exponent_end = digits_from(end + 1 + sign);
        if exponent_end > end + 1 + sign {
            end = exponent_end;
        }
    }
    end
}

/// Whether `strtold` reads all of `text`: a decimal number (Rust's syntax is the same, `inf`
/// and `nan` included) or a hexadecimal one (`0x1.8p3`).
fn is_float(text: &str) -> bool {
    text.parse::<f64>().is_ok() || is_hex_float(text)
}

/// `[+-]0x` hex digits, optionally `.` hex digits, optionally `p` and a decimal exponent; at
/// least one hex digit.
fn is_hex_float(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let Some(body) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    else {
        return false;
    };
    let (mantissa, exponent) = match body.split_once(['p', 'P']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (body, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let hex = |part: &str| part.bytes().all(|b| b.is_ascii_hexdigit());
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    });
    !(whole.is_empty() && fraction.is_empty()) && hex(whole) && hex(fraction) && exponent_ok
}

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let mut args = args;
        let mut format_at = 1;
        loop {
            match args.get(format_at).map(ToString::to_string).as_deref() {
                Some("-v") => format_at += 2,
                Some("--") => {
                    format_at += 1;
                    break;
                }
                _ => break,
            }
        }
        let Some(format) = args.get(format_at).map(ToString::to_string) else {
            if format_at == 1 {
                let _ = writeln!(
                    ctx.stderr(),
                    "printf: usage: printf [-v var] format [arguments]"
                );
                return Ok(ExecutionResult::new(2));
            }
            return run_or_fail(stock("printf"), ctx, args).await;
        };
        let Some(directives) = consumed(&format) else {
            return run_or_fail(stock("printf"), ctx, args).await;
        };
        let invalid = check_arguments(
            ctx.shell,
            &mut ctx.stderr(),
            &directives.kinds,
            &mut args[format_at + 1..],
        );
        let widest = widest_field(&directives, &args[format_at + 1..]);
        if widest > FIELD_LIMIT {
            let prefix = error_prefix(ctx.shell);
            let _ = writeln!(
                ctx.stderr(),
                "{prefix}printf: {widest}: field width or precision over {FIELD_LIMIT} is not supported"
            );
            return Ok(ExecutionResult::new(1));
        }
        let result = run_or_fail(stock("printf"), ctx, args).await?;
        if invalid && u8::from(result.exit_code) == 0 {
            return Ok(ExecutionResult::new(1));
        }
        Ok(result)
    })
}

/// The largest field width or precision a run of `printf` asks for: written in the format, or
/// given by a `*` argument (already read as a number; a negative width means the same width,
/// left-justified).
fn widest_field(directives: &Directives, args: &[CommandArg]) -> u64 {
    let from_args = args
        .iter()
        .zip(directives.kinds.iter().cycle())
        .filter(|(_, kind)| **kind == Kind::Field)
        .filter_map(|(arg, _)| arg.to_string().parse::<i64>().ok())
        .map(i64::unsigned_abs)
        .max();
    directives.widest.max(from_args.unwrap_or(0))
}

/// How bash names a number it could not read all of, from how the argument starts.
fn invalid_what(arg: &str) -> &'static str {
    match arg.as_bytes() {
        [b'0', next, ..] if next.is_ascii_digit() => "invalid octal number",
        [b'0', b'x', ..] => "invalid hex number",
        _ => "invalid number",
    }
}

/// Replaces each numeric argument by the value bash reads from it, writing bash's complaints to
/// `stderr`; returns whether any argument was invalid.
fn check_arguments(
    shell: &Shell,
    stderr: &mut impl std::io::Write,
    kinds: &[Kind],
    args: &mut [CommandArg],
) -> bool {
    if kinds.is_empty() {
        return false;
    }
    let prefix = error_prefix(shell);
    let mut invalid = false;
    // The format is reused while arguments remain, as bash does.
    for (arg, kind) in args.iter_mut().zip(kinds.iter().cycle()) {
        if *kind == Kind::Text {
            continue;
        }
        let text = arg.to_string();
        let (value, complaint) = read_number(&text, *kind);
        match complaint {
            Some(Complaint::Invalid) => {
                invalid = true;
                let _ = writeln!(stderr, "{prefix}printf: {text}: {}", invalid_what(&text));
            }
            Some(Complaint::OutOfRange) => {
                let _ = writeln!(
                    stderr,
                    "{prefix}printf: warning: {text}: Numerical result out of range"
                );
            }
            None => {}
        }
        *arg = CommandArg::from(value);
    }
    invalid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_arguments_each_conversion_consumes() {
        use Kind::*;
        let kinds = |format| consumed(format).map(|d| d.kinds);
        assert_eq!(kinds("%d|%s\n"), Some(vec![Signed, Text]));
        assert_eq!(kinds("100%% %5.2f %x"), Some(vec![Float, Unsigned]));
        assert_eq!(
            kinds("%*.*d %-08lu"),
            Some(vec![Field, Field, Signed, Unsigned])
        );
        assert_eq!(kinds("%(%H:%M)T %b %q"), Some(vec![Signed, Text, Text]));
        assert_eq!(kinds("plain"), Some(vec![]));
        assert_eq!(kinds("%z"), None);
        assert_eq!(kinds("%"), None);
    }

    #[test]
    fn finds_the_widest_field() {
        let widest = |format| consumed(format).map(|d| d.widest);
        assert_eq!(widest("%5.2f %-12s"), Some(12));
        assert_eq!(widest("%.70000f"), Some(70_000));
        assert_eq!(widest("%99999999999999999999999d"), Some(u64::MAX));
        assert_eq!(widest("%*d"), Some(0));
        let directives = consumed("%*d %s").expect("known");
        let args = ["-70000", "1", "x", "3", "2"].map(|a| CommandArg::from(a.to_string()));
        assert_eq!(widest_field(&directives, &args), 70_000);
    }

    #[test]
    fn reads_integers_as_bash_does() {
        let read = |s| read_number(s, Kind::Signed);
        assert_eq!(read("42"), ("42".into(), None));
        assert_eq!(read("  -12"), ("-12".into(), None));
        assert_eq!(read("+5"), ("5".into(), None));
        assert_eq!(read("0x1F"), ("31".into(), None));
        assert_eq!(read("010"), ("8".into(), None));
        assert_eq!(read(""), ("0".into(), None));
        assert_eq!(read("'A"), ("65".into(), None));
        assert_eq!(read("\""), ("0".into(), None));
        assert_eq!(read("abc"), ("0".into(), Some(Complaint::Invalid)));
        assert_eq!(read("12abc"), ("12".into(), Some(Complaint::Invalid)));
        assert_eq!(read("-"), ("0".into(), Some(Complaint::Invalid)));
        assert_eq!(
            read("99999999999999999999"),
            (i64::MAX.to_string(), Some(Complaint::OutOfRange))
        );
        assert_eq!(
            read_number("-1", Kind::Unsigned),
            (u64::MAX.to_string(), None)
        );
    }

    #[test]
    fn names_the_invalid_number_as_bash_does() {
        assert_eq!(invalid_what("08"), "invalid octal number");
        assert_eq!(invalid_what("0x1g"), "invalid hex number");
        assert_eq!(invalid_what("0X1g"), "invalid number");
        assert_eq!(invalid_what(" 08"), "invalid number");
        assert_eq!(invalid_what("abc"), "invalid number");
    }

    #[test]
    fn reads_floats_up_to_the_first_bad_character() {
        let read = |s| read_number(s, Kind::Float);
        assert_eq!(read("1.5"), ("1.5".into(), None));
        assert_eq!(read(" 2e3"), ("2e3".into(), None));
        assert_eq!(read("1.5x"), ("1.5".into(), Some(Complaint::Invalid)));
        assert_eq!(read("abc"), ("0".into(), Some(Complaint::Invalid)));
        assert_eq!(read(""), ("0".into(), None));
        assert_eq!(read("0x1p3"), ("0x1p3".into(), None));
        assert_eq!(read("-0X1.8P-1"), ("-0X1.8P-1".into(), None));
        assert_eq!(read("0x1.8g"), ("0x1.8".into(), Some(Complaint::Invalid)));
        assert_eq!(read("0xp3"), ("0".into(), Some(Complaint::Invalid)));
        assert_eq!(read("-1.5e+x"), ("-1.5".into(), Some(Complaint::Invalid)));
        assert_eq!(read("2E-3z"), ("2E-3".into(), Some(Complaint::Invalid)));
        assert_eq!(read("-.x"), ("0".into(), Some(Complaint::Invalid)));
        assert_eq!(read("infx"), ("inf".into(), Some(Complaint::Invalid)));
        // A long bad number is read in one pass (one parse per prefix took minutes).
        let long = format!("{}x", "1".repeat(200_000));
        assert_eq!(read(&long), ("1".repeat(200_000), Some(Complaint::Invalid)));
    }
}
