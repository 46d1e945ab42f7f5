//! Special parameters brush expands differently from bash, replaced in a run's words before it
//! runs: `$-` and `${-}` by the user's flags (see [`flags`]), `$!` and `${!}` by the last job's
//! process (see [`jobs`]).
//!
//! The walk that rewrites pipeline stages (see `stages`) passes each word of a simple command
//! here, as written. A parameter is replaced where it expands: bare or inside double quotes, not
//! inside single quotes or `$'…'`, nor escaped. Other forms of the same parameter (`${#-}`,
//! `${-:0:1}`, `${!name}`) are left alone, as are words brush parses itself (`eval` strings,
//! sourced files, traps).
//!
//! [`flags`]: super::flags
//! [`jobs`]: super::jobs

use super::{flags, jobs};

/// Each parameter form we replace, and what replaces it.
const REPLACEMENTS: [(&str, &str); 4] = [
    ("${-}", flags::REPLACEMENT),
    ("$-", flags::REPLACEMENT),
    ("${!}", jobs::LAST_JOB_PID),
    ("$!", jobs::LAST_JOB_PID),
];

/// `word` (the raw text of a word) with each parameter of [`REPLACEMENTS`] replaced where it
/// expands; `None` when it has none.
pub(crate) fn rewrite(word: &str) -> Option<String> {
    if !word.contains("$-")
        && !word.contains("${-}")
        && !word.contains("$!")
        && !word.contains("${!}")
    {
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
                None => 1,
            },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced(word: &str) -> String {
        rewrite(word)
            .unwrap_or_else(|| word.to_string())
            .replace(flags::REPLACEMENT, "<F>")
            .replace(jobs::LAST_JOB_PID, "<P>")
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
}
