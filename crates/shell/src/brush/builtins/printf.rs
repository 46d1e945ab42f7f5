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
//!
//! The stock builtin reuses the format while arguments remain, but never runs out of them when the
//! format consumes none (`printf "\n" 4.4 BSD` printed newlines forever), and a `\c` in a `%b`
//! argument ends only the current pass over the format (one in the format itself too, where bash
//! prints it as it stands). bash applies a format that consumes no argument once, and `\c` ends all
//! output; so the arguments bash would not use are dropped first, and the format's `\c` escaped.
//! And one call formatting millions of arguments would reach no cancellation point: the stock
//! builtin is called a few passes at a time instead (about [`CHUNK_TIME`] each), with one between
//! calls, so a timeout stops it (except with `-v`, whose variable one call must set).

use std::io::Write as _;
use std::time::{Duration, Instant};

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::{STOPPED_STATUS, cancellation_point, error_prefix, run_or_fail, stock};

/// How a conversion reads its argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Signed,
    Unsigned,
    Float,
    Text,
    /// `%b`: text whose backslash escapes are expanded, `\c` ending all output.
    Escaped,
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
    /// For each of them, where its conversion ends in the format (a byte offset).
    ends: Vec<usize>,
    /// The largest field width or precision written in the format itself.
    widest: u64,
}

/// The arguments one pass over `format` consumes and its widest literal field; `None` when the
/// format has a conversion we do not know (the stock builtin reports it).
fn consumed(format: &str) -> Option<Directives> {
    let mut kinds = Vec::new();
    let mut ends = Vec::new();
    let mut widest = 0u64;
    let mut chars = format.char_indices().peekable();
    let is = |wanted: char| move |&(_, c): &(usize, char)| c == wanted;
    let among = |set: &'static str| move |&(_, c): &(usize, char)| set.contains(c);
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.next_if(is('%')).is_some() {
            continue;
        }
        while chars.next_if(among("-+ #0'")).is_some() {}
        for part in 0..2 {
            if part == 1 && chars.next_if(is('.')).is_none() {
                break;
            }
            if chars.next_if(is('*')).is_some() {
                kinds.push(Kind::Field);
            } else {
                let mut field = 0u64;
                while let Some((_, digit)) = chars.next_if(among("0123456789")) {
                    field = field
                        .saturating_mul(10)
                        .saturating_add(u64::from(digit) - 48);
                }
                widest = widest.max(field);
            }
        }
        while chars.next_if(among("hlLjzt")).is_some() {}
        let (mut at, conversion) = chars.next()?;
        let kind = match conversion {
            'd' | 'i' => Kind::Signed,
            'o' | 'u' | 'x' | 'X' => Kind::Unsigned,
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'a' | 'A' => Kind::Float,
            's' | 'q' | 'Q' | 'c' => Kind::Text,
            'b' => Kind::Escaped,
            '(' => {
                // `%(datefmt)T` takes a number of seconds.
                while chars.next()?.1 != ')' {}
                let (t_at, t) = chars.next()?;
                if t != 'T' {
                    return None;
                }
                at = t_at;
                Kind::Signed
            }
            _ => return None,
        };
        kinds.push(kind);
        // `at` is an ASCII character's.
        ends.resize(kinds.len(), at + 1);
    }
    Some(Directives {
        kinds,
        ends,
        widest,
    })
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
        Kind::Text | Kind::Escaped => (arg.to_string(), None),
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
        let mut to_variable = false;
        loop {
            match args.get(format_at).map(ToString::to_string).as_deref() {
                Some("-v") => {
                    format_at += 2;
                    to_variable = true;
                }
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
        let operands_at = format_at + 1;
        let (used, cut) = used_operands(&directives, &args[operands_at..]);
        args.truncate(operands_at + used);
        let invalid = check_arguments(
            ctx.shell,
            &mut ctx.stderr(),
            &directives.kinds,
            &mut args[operands_at..],
        );
        let widest = widest_field(&directives, &args[operands_at..]);
        if widest > FIELD_LIMIT {
            let prefix = error_prefix(ctx.shell);
            let _ = writeln!(
                ctx.stderr(),
                "{prefix}printf: {widest}: field width or precision over {FIELD_LIMIT} is not supported"
            );
            return Ok(ExecutionResult::new(1));
        }
        let one_call = to_variable || STOCK_SPECIAL_CASES.contains(&format.as_str());
        let calls = Calls::new(args, format_at, &format, &directives, cut, one_call);
        let result = calls.run(ctx).await?;
        if invalid && u8::from(result.exit_code) == 0 {
            return Ok(ExecutionResult::new(1));
        }
        Ok(result)
    })
}

/// Where a `%b` argument's `\c` ends all output.
#[derive(Debug, PartialEq, Eq)]
struct Cut {
    /// The argument's index among the operands.
    arg: usize,
    /// Where its conversion ends in the format.
    format_end: usize,
}

/// How many of `args` bash's `printf` uses, and where a `%b` argument's `\c` ends its output:
/// none when the format consumes none (it is applied once), none after that argument.
fn used_operands(directives: &Directives, args: &[CommandArg]) -> (usize, Option<Cut>) {
    if directives.kinds.is_empty() {
        return (0, None);
    }
    match output_cut(directives, args) {
        Some(cut) => (cut.arg + 1, Some(cut)),
        None => (args.len(), None),
    }
}

/// The first `%b` argument whose `\c` ends the output, if any.
fn output_cut(directives: &Directives, args: &[CommandArg]) -> Option<Cut> {
    let per_pass = directives.kinds.len();
    let arg = args
        .iter()
        .zip(directives.kinds.iter().cycle())
        .position(|(arg, kind)| *kind == Kind::Escaped && ends_output(&arg.to_string()))?;
    Some(Cut {
        arg,
        format_end: directives.ends[arg % per_pass],
    })
}

/// Whether `text` holds the escape `\c`, which in a `%b` argument ends `printf`'s output.
fn ends_output(text: &str) -> bool {
    let mut bytes = text.bytes();
    while let Some(byte) = bytes.next() {
        if byte == b'\\' && bytes.next() == Some(b'c') {
            return true;
        }
    }
    false
}

/// `format` with each `\c` escaped, so the library prints it as it stands, as bash does (the
/// library would end the pass over the format there).
fn literal_c(format: &str) -> String {
    let mut literal = String::with_capacity(format.len() + 2);
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        literal.push(c);
        if c == '\\' {
            match chars.next() {
                Some('c') => literal.push_str("\\c"),
                Some(next) => literal.push(next),
                None => {}
            }
        }
    }
    literal
}

/// Formats that the stock builtin treats specially when given one argument (bash-completion's
/// backslash quoting): never split into calls that could each get one argument.
const STOCK_SPECIAL_CASES: [&str; 2] = ["%q", "~%q"];

/// The time one call of the stock builtin should take at most, between two cancellation points.
const CHUNK_TIME: Duration = Duration::from_millis(20);
/// The most passes over the format one call makes.
const MAX_CHUNK: usize = 1 << 16;

/// The calls of the stock builtin that print what bash's `printf` prints.
struct Calls {
    /// `printf`, its options and the format.
    head: Vec<CommandArg>,
    /// The arguments of whole passes over the format: `per_pass` each, a few passes per call, or
    /// all in one call when `per_pass` is 0.
    operands: Vec<CommandArg>,
    per_pass: usize,
    /// A call after those, whose format and arguments end where a `%b` argument's `\c` ends the
    /// output.
    last: Option<Vec<CommandArg>>,
}

impl Calls {
    /// The calls for `args` (the command line, with `format` at `format_at` and only the operands
    /// bash uses), ended at `cut`; `one_call` when there must be one (`-v` sets its variable once).
    fn new(
        mut args: Vec<CommandArg>,
        format_at: usize,
        format: &str,
        directives: &Directives,
        cut: Option<Cut>,
        one_call: bool,
    ) -> Self {
        let per_pass = if one_call { 0 } else { directives.kinds.len() };
        let mut operands = args.split_off(format_at + 1);
        let mut head = args;
        head[format_at] = CommandArg::from(literal_c(format));
        let last = cut.map(|cut| {
            // The cut's pass, and with one call the passes before it, are spelled out in the
            // last call's format.
            let passes = cut.arg / directives.kinds.len();
            let chunked = if one_call { 0 } else { passes };
            let spelled_out = format.repeat(passes - chunked) + &format[..cut.format_end];
            let mut last = head.clone();
            last[format_at] = CommandArg::from(literal_c(&spelled_out));
            last.extend(operands.split_off(chunked * directives.kinds.len()));
            last
        });
        Self {
            head,
            operands,
            per_pass,
            last,
        }
    }

    /// Makes the calls, with a cancellation point between two; stops at the first that fails.
    async fn run(
        self,
        ctx: ExecutionContext<'_, DefaultShellExtensions>,
    ) -> Result<ExecutionResult, brush_core::Error> {
        let ExecutionContext {
            shell,
            command_name,
            params,
        } = ctx;
        let mut argvs = self.argvs();
        let mut pending = argvs.next();
        while let Some(argv) = pending {
            let context = ExecutionContext {
                shell: &mut *shell,
                command_name: command_name.clone(),
                params: params.clone(),
            };
            let started = Instant::now();
            let result = run_or_fail(stock("printf"), context, argv).await?;
            if !result.is_success() {
                return Ok(result);
            }
            argvs.took(started.elapsed());
            pending = argvs.next();
            if pending.is_some() && cancellation_point(shell).await {
                return Ok(ExecutionResult::new(STOPPED_STATUS));
            }
        }
        Ok(ExecutionResult::success())
    }

    fn argvs(self) -> Argvs {
        Argvs {
            first: self.last.is_none() || !self.operands.is_empty(),
            calls: self,
            from: 0,
            passes: 1,
        }
    }
}

/// The command lines of [`Calls`], one per call, each chunk sized by how long the last took.
struct Argvs {
    calls: Calls,
    /// Whether the operands' first call is still to come: made even with no operands (the format
    /// is applied once), unless the call of a cut takes its place.
    first: bool,
    /// The first operand the next call formats.
    from: usize,
    /// How many passes the next call makes.
    passes: usize,
}

impl Argvs {
    fn took(&mut self, took: Duration) {
        self.passes = next_chunk(self.passes, took);
    }

    fn next(&mut self) -> Option<Vec<CommandArg>> {
        let operands = &self.calls.operands;
        if self.first || self.from < operands.len() {
            self.first = false;
            let size = match self.calls.per_pass {
                0 => operands.len(),
                per_pass => self.passes.saturating_mul(per_pass),
            };
            let to = self.from.saturating_add(size).min(operands.len());
            let argv = self.calls.head.iter().chain(&operands[self.from..to]);
            self.from = to;
            return Some(argv.cloned().collect());
        }
        self.calls.last.take()
    }
}

/// How many passes the next call makes, after `passes` took `took`: as many as fit in
/// [`CHUNK_TIME`] at that pace, at most four times as many as before and [`MAX_CHUNK`], at least one.
fn next_chunk(passes: usize, took: Duration) -> usize {
    let per_pass = (took.as_nanos() / passes.max(1) as u128).max(1);
    let fitting = usize::try_from(CHUNK_TIME.as_nanos() / per_pass).unwrap_or(usize::MAX);
    fitting.min(passes.saturating_mul(4)).clamp(1, MAX_CHUNK)
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
        if matches!(kind, Kind::Text | Kind::Escaped) {
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
        assert_eq!(kinds("%(%H:%M)T %b %q"), Some(vec![Signed, Escaped, Text]));
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
    fn uses_the_arguments_bash_uses() {
        let applied = |format: &str, args: &[&str]| {
            let directives = consumed(format).expect("known");
            used_operands(&directives, &command_args(args)).0
        };
        // A format that consumes nothing is applied once.
        assert_eq!(applied("\\n", &["4.4", "BSD"]), 0);
        assert_eq!(applied("%%\\n", &["a"]), 0);
        assert_eq!(applied("%s|%s", &["a", "b", "c"]), 3);
        // `\c` in the format is no escape.
        assert_eq!(applied("%s\\c", &["a", "b", "c"]), 3);
        // `\c` in a `%b` argument ends it after that argument's batch.
        assert_eq!(applied("%b|", &["a\\cb", "c"]), 1);
        assert_eq!(applied("%s%b", &["x", "y", "z", "\\c", "u", "v"]), 4);
        assert_eq!(applied("%s%b", &["x", "y", "z", "w\\c"]), 4);
        // Only in `%b`, and only as an escape.
        assert_eq!(applied("%s|", &["a\\cb", "c"]), 2);
        assert_eq!(applied("%b|", &["a\\\\cb", "c"]), 2);
    }

    fn command_args(list: &[&str]) -> Vec<CommandArg> {
        list.iter()
            .map(|a| CommandArg::from(a.to_string()))
            .collect()
    }

    /// The command lines `printf` runs the stock builtin with for `args`, each call taking `took`.
    fn call_lines(args: &[&str], one_call: bool, took: Duration) -> Vec<Vec<String>> {
        let format_at = if args[1] == "-v" { 3 } else { 1 };
        let directives = consumed(args[format_at]).expect("known");
        let mut args = command_args(args);
        let (used, cut) = used_operands(&directives, &args[format_at + 1..]);
        args.truncate(format_at + 1 + used);
        let format = args[format_at].to_string();
        let calls = Calls::new(args, format_at, &format, &directives, cut, one_call);
        let mut argvs = calls.argvs();
        let mut lines = Vec::new();
        while let Some(argv) = argvs.next() {
            lines.push(argv.iter().map(ToString::to_string).collect());
            argvs.took(took);
        }
        lines
    }

    #[test]
    fn calls_a_few_passes_at_a_time_then_up_to_the_cut() {
        let slow = Duration::from_secs(1);
        let fast = Duration::ZERO;
        let args: Vec<String> = ["printf", "%s%d"]
            .into_iter()
            .map(String::from)
            .chain((1..=5).map(|n| n.to_string()))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(
            call_lines(&args, false, slow),
            [
                vec!["printf", "%s%d", "1", "2"],
                vec!["printf", "%s%d", "3", "4"],
                vec!["printf", "%s%d", "5"],
            ]
        );
        assert_eq!(
            call_lines(&args, false, fast),
            [
                vec!["printf", "%s%d", "1", "2"],
                vec!["printf", "%s%d", "3", "4", "5"]
            ]
        );
        assert_eq!(call_lines(&args, true, slow), std::slice::from_ref(&args));
        // No operands, or none used: one call.
        assert_eq!(
            call_lines(&["printf", "%s\\n"], false, slow),
            [["printf", "%s\\n"]]
        );
        assert_eq!(
            call_lines(&["printf", "x\\c", "a"], false, slow),
            [["printf", "x\\\\c"]]
        );
        // A `%b` argument's `\c`: the passes before it, then its own pass up to its conversion.
        assert_eq!(
            call_lines(
                &["printf", "<%s|%b>", "a", "b", "c", "d\\ce", "f", "g"],
                false,
                slow
            ),
            [
                vec!["printf", "<%s|%b>", "a", "b"],
                vec!["printf", "<%s|%b", "c", "d\\ce"],
            ]
        );
        assert_eq!(
            call_lines(&["printf", "%b|", "a\\cb", "c"], false, slow),
            [["printf", "%b", "a\\cb"]]
        );
        // With `-v`, one call spells the passes out.
        assert_eq!(
            call_lines(
                &["printf", "-v", "v", "<%s|%b>\\c", "a", "b", "c", "d\\ce"],
                true,
                slow
            ),
            [[
                "printf",
                "-v",
                "v",
                "<%s|%b>\\\\c<%s|%b",
                "a",
                "b",
                "c",
                "d\\ce"
            ]]
        );
    }

    #[test]
    fn keeps_a_backslash_c_in_the_format_as_it_stands() {
        assert_eq!(literal_c("%s\\c|"), "%s\\\\c|");
        assert_eq!(literal_c("a\\\\cb\\n"), "a\\\\cb\\n");
        assert_eq!(literal_c("a\\\\\\c"), "a\\\\\\\\c");
        assert_eq!(literal_c("end\\"), "end\\");
    }

    #[test]
    fn chunks_take_about_the_chunk_time() {
        let ms = Duration::from_millis;
        // Fast calls grow the chunk fourfold at most, up to the cap.
        assert_eq!(next_chunk(1, Duration::ZERO), 4);
        assert_eq!(next_chunk(100, ms(1)), 400);
        assert_eq!(next_chunk(MAX_CHUNK, Duration::ZERO), MAX_CHUNK);
        // Slow calls shrink it to what fits in the chunk time, one batch at least.
        assert_eq!(next_chunk(100, ms(40)), 50);
        assert_eq!(next_chunk(8, ms(500)), 1);
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
