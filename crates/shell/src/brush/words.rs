//! A run's words, rewritten where brush would expand them differently from bash.
//!
//! The walk that rewrites pipeline stages (see `stages`) passes each word of the run's commands
//! here, as written:
//!
//! - `$-` and `${-}` become the user's flags (see [`flags`]), and `$!` and `${!}` the last job's
//!   process (see [`jobs`]). A parameter is replaced where it expands: bare or inside double
//!   quotes, not inside single quotes or `$'…'`, nor escaped. Other forms of the same parameter
//!   (`${#-}`, `${-:0:1}`, `${!name}`) are left alone.
//! - A brace sequence (`{1..10}`, `{a..z..2}`) that brush cannot expand is kept as written, as
//!   bash keeps it: one with a number beyond 64 bits, on which brush's parser panics and the
//!   session ends, and one of more than [`MAX_SEQUENCE`] elements, which brush would build in
//!   memory, out of reach of the run's timeout (bash tries, and without the memory prints an
//!   error and keeps it as written). Its `{` is escaped.
//!
//! Words brush parses itself (`eval` strings, sourced files, traps) are left to brush.
//!
//! [`flags`]: super::flags
//! [`jobs`]: super::jobs

use super::flags;

/// What `$!` is replaced by: the builtin that prints the last job's process (see
/// `brush::jobs`). Its own `set -x` trace line goes to `/dev/null`, also when `BASH_XTRACEFD` is
/// set (set aside inside the substitution only).
const LAST_JOB_PID: &str =
    "$(__shellwright_last_job_pid ${BASH_XTRACEFD:+$((BASH_XTRACEFD=-1))} 2>/dev/null)";

/// Each parameter form we replace, and what replaces it.
const REPLACEMENTS: [(&str, &str); 4] = [
    ("${-}", flags::REPLACEMENT),
    ("$-", flags::REPLACEMENT),
    ("${!}", LAST_JOB_PID),
    ("$!", LAST_JOB_PID),
];

/// The most elements a brace sequence may have to be expanded (16 Mi: a few hundred MB of words).
pub(crate) const MAX_SEQUENCE: i128 = 1 << 24;

/// `word` (the raw text of a word) with each parameter of [`REPLACEMENTS`] replaced where it
/// expands and each brace sequence brush cannot expand escaped; `None` when nothing changed.
pub(crate) fn rewrite(word: &str) -> Option<String> {
    let has_parameter = ["$-", "${-}", "$!", "${!}"]
        .iter()
        .any(|form| word.contains(form));
    if !has_parameter && !word.contains("..") {
        return None;
    }
    let mut out = String::with_capacity(word.len() + 80);
    let mut rest = word;
    let mut in_double_quotes = false;
    let mut changed = false;
    while let Some(c) = rest.chars().next() {
        let taken = match c {
            '\\' => 1 + rest[1..].chars().next().map_or(0, char::len_utf8),
            '\'' if !in_double_quotes => quoted_length(rest, 1),
            '"' => {
                in_double_quotes = !in_double_quotes;
                1
            }
            '$' if rest.starts_with("$'") && !in_double_quotes => quoted_length(rest, 2),
            '$' if rest.starts_with("$$") => 2,
            '$' => match REPLACEMENTS.iter().find(|(form, _)| rest.starts_with(form)) {
                Some((form, replacement)) => {
                    out.push_str(replacement);
                    changed = true;
                    rest = &rest[form.len()..];
                    continue;
                }
                // Brace expansion skips a parameter expansion whole.
                None if rest.starts_with("${") => braced_length(rest),
                None => 1,
            },
            '{' if !in_double_quotes && !expandable_sequence(rest) => {
                out.push('\\');
                changed = true;
                1
            }
            other => other.len_utf8(),
        };
        let taken = taken.min(rest.len());
        out.push_str(&rest[..taken]);
        rest = &rest[taken..];
    }
    changed.then_some(out)
}

/// The length of the single-quoted string at the start of `text`, its opening quote `open`
/// bytes long (`'` or `$'`, in which a backslash escapes the next character), up to and with its
/// closing quote (all of `text` when there is none).
fn quoted_length(text: &str, open: usize) -> usize {
    let ansi = open == 2;
    let mut escaped = false;
    for (i, c) in text[open..].char_indices() {
        match c {
            '\\' if ansi && !escaped => escaped = true,
            '\'' if !escaped => return open + i + 1,
            _ => escaped = false,
        }
    }
    text.len()
}

/// The length of the `${…}` at the start of `text`, nested braces included (all of `text` when
/// it is not closed).
fn braced_length(text: &str) -> usize {
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// Whether the `{` at the start of `text` may go to brush: it opens no brace sequence, or one
/// brush can expand.
fn expandable_sequence(text: &str) -> bool {
    let Some(body) = text[1..].split_once('}').map(|(body, _)| body) else {
        return true;
    };
    let parts: Vec<&str> = body.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return true;
    }
    let increment = match parts.get(2).map(|part| number(part)) {
        Some(Some(Ok(n))) => i128::from(n).abs().max(1),
        Some(Some(Err(()))) => return false,
        Some(None) => return true,
        None => 1,
    };
    match (number(parts[0]), number(parts[1])) {
        (Some(Ok(start)), Some(Ok(end))) => {
            (i128::from(end) - i128::from(start)).abs() / increment < MAX_SEQUENCE
        }
        (Some(Err(())), Some(_)) | (Some(_), Some(Err(()))) => false,
        // A sequence of characters has at most a few hundred.
        _ => true,
    }
}

/// `Some(Ok(n))` for an integer brush reads as a sequence bound, `Some(Err(()))` for one beyond
/// 64 bits, `None` for anything else.
fn number(text: &str) -> Option<Result<i64, ()>> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sign = if text.starts_with('-') { -1 } else { 1 };
    Some(digits.parse::<i64>().map(|n| n * sign).map_err(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced(word: &str) -> String {
        rewrite(word)
            .unwrap_or_else(|| word.to_string())
            .replace(flags::REPLACEMENT, "<F>")
            .replace(LAST_JOB_PID, "<P>")
    }

    #[test]
    fn replaces_the_parameters_where_they_expand() {
        assert_eq!(replaced("$-"), "<F>");
        assert_eq!(replaced("\"options: $-\""), "\"options: <F>\"");
        assert_eq!(replaced("${-}x$-"), "<F>x<F>");
        assert_eq!(replaced("a\"'$-'\"b"), "a\"'<F>'\"b");
        assert_eq!(replaced("$!"), "<P>");
        assert_eq!(replaced("PID=$!"), "PID=<P>");
        assert_eq!(replaced("\"${!}.log\"$!x"), "\"<P>.log\"<P>x");
        assert_eq!(replaced("$-$!"), "<F><P>");
    }

    #[test]
    fn leaves_quoted_and_other_forms_alone() {
        for word in [
            "'$-'",
            "\\$-",
            "$'a\\'$-'",
            "$$-",
            "${#-}",
            "${-:0:1}",
            "plain",
            "é'$-",
            "'$!'",
            "\\$!",
            "$$!",
            "${!name}",
            "${!prefix*}",
            "${!array[@]}",
            "${#!}",
        ] {
            assert_eq!(rewrite(word), None, "{word}");
        }
        assert_eq!(replaced("'$-'$-"), "'$-'<F>");
        assert_eq!(replaced("'$!'$!"), "'$!'<P>");
    }

    #[test]
    fn keeps_the_brace_sequences_brush_cannot_expand_as_written() {
        for (word, want) in [
            ("{1..99999999999999999999}", "\\{1..99999999999999999999}"),
            (
                "x{-99999999999999999999..1}y",
                "x\\{-99999999999999999999..1}y",
            ),
            (
                "{1..5..99999999999999999999}",
                "\\{1..5..99999999999999999999}",
            ),
            (
                "{a..z..99999999999999999999}",
                "\\{a..z..99999999999999999999}",
            ),
            ("{1..100000000}", "\\{1..100000000}"),
            (
                "{-9223372036854775807..9223372036854775807}",
                "\\{-9223372036854775807..9223372036854775807}",
            ),
            (
                "{1..2}{1..99999999999999999999}",
                "{1..2}\\{1..99999999999999999999}",
            ),
        ] {
            assert_eq!(rewrite(word).as_deref(), Some(want), "{word}");
        }
        for word in [
            "{1..10}",
            "{1..16777216}",
            "{1..100000000..8}",
            "{a..z}",
            "{a,b}..{c,d}",
            "'{1..99999999999999999999}'",
            "\"{1..99999999999999999999}\"",
            "\\{1..99999999999999999999}",
            "${x:-{1..99999999999999999999}}",
            "{1..2..3..4}",
            "{1..}",
            "a..b",
        ] {
            assert_eq!(rewrite(word), None, "{word}");
        }
    }
}
