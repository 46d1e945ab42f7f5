//! `$-` as the user set the options, without the `functrace` flag our hooks force on.
//!
//! The cancellation hook needs brush's functrace on (see [`hooks`](super::hooks)), and brush
//! builds `$-` straight from its options, so it would read `hBTc` where bash has `hBc`. We parse
//! each run's command ourselves, so the walk that rewrites pipeline stages ([`stages`]) also
//! replaces every `$-` and `${-}` of the run's words (outside single quotes) by `${-//T/…}`,
//! brush's flags with their `T` replaced by a command substitution of our builtin
//! `__shellwright_flags`, which prints `T` only when the user turned functrace on. The other
//! flags are expanded in the shell itself (a command substitution's subshell has errexit off).
//! The builtin's own `set -x` trace line goes to `/dev/null`, also when `BASH_XTRACEFD` is set
//! (the variable is set aside inside the substitution's subshell only).
//! Code brush parses itself (`eval` strings, sourced files, traps) and the other forms of the
//! parameter (`${#-}`, `${-:0:1}`, …) still show brush's own flags.
//!
//! [`stages`]: super::stages

use std::collections::HashMap;
use std::io::Write as _;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::builtins;
use super::common::FLAGS_BUILTIN;
use super::state;

/// What `$-` is replaced by.
const REPLACEMENT: &str =
    "${-//T/$(__shellwright_flags ${BASH_XTRACEFD:+$((BASH_XTRACEFD=-1))} 2>/dev/null)}";

/// `word` (the raw text of a word) with each `$-` and `${-}` outside single quotes replaced by
/// [`REPLACEMENT`]; `None` when it has none.
pub(crate) fn rewrite(word: &str) -> Option<String> {
    if !word.contains("$-") && !word.contains("${-}") {
        return None;
    }
    let mut out = String::with_capacity(word.len() + REPLACEMENT.len());
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
            '$' if rest.starts_with("$-") || rest.starts_with("${-}") => {
                out.push_str(REPLACEMENT);
                changed = true;
                rest = &rest[if rest.starts_with("$-") { 2 } else { 4 }..];
                continue;
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

/// Adds the flags builtin.
pub(crate) fn install_builtin(
    builtins: &mut HashMap<String, Registration<DefaultShellExtensions>>,
) {
    builtins::add_internal(builtins, FLAGS_BUILTIN, print_flags);
}

fn print_flags(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    _args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        if state::user_functrace(ctx.shell) {
            write!(ctx.stdout(), "T")?;
        }
        Ok(ExecutionResult::success())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced(word: &str) -> String {
        rewrite(word)
            .unwrap_or_else(|| word.to_string())
            .replace(REPLACEMENT, "<F>")
    }

    #[test]
    fn replaces_the_parameter_where_it_expands() {
        assert_eq!(replaced("$-"), "<F>");
        assert_eq!(replaced("\"options: $-\""), "\"options: <F>\"");
        assert_eq!(replaced("${-}x$-"), "<F>x<F>");
        assert_eq!(replaced("a\"'$-'\"b"), "a\"'<F>'\"b");
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
        ] {
            assert_eq!(rewrite(word), None, "{word}");
        }
        assert_eq!(replaced("'$-'$-"), "'$-'<F>");
    }
}
