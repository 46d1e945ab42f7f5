//! How deeply a piece of shell text nests, measured before brush parses it.
//!
//! brush's parser descends once per nesting level — a `{ … }`, an `if … fi`, a `( … )`, a `$( … )`,
//! an arithmetic parenthesis — and text of a few megabytes can nest a million levels deep, more
//! than any stack holds. So text is scanned first: one pass, no recursion, counting openers
//! against closers, and text that nests deeper than [`PARSER_NESTING_LIMIT`] is refused with a
//! syntax error instead of being parsed.
//!
//! The count is an estimate, on purpose on the high side: parentheses inside double quotes count
//! (they nest when they belong to `$( … )`), single-quoted text, backslash-escaped characters and
//! comments do not. Keywords count only as whole words: `if`, `case`, `while`, `until`, `for`,
//! `select` open; `fi`, `esac`, `done` close. The limit leaves the parser's stack (sized in
//! [`worker`](crate::worker)) several times the room it needs, so the odd underestimate (a `case`
//! pattern's `)` closes nothing) cannot overflow it.

/// The deepest nesting accepted in one piece of text: well beyond what people write (bash code
/// in the wild rarely passes a few dozen), and what the session's stack holds with a wide margin.
pub const PARSER_NESTING_LIMIT: usize = 1_000;

/// The deepest nesting in `text`, as estimated above. Stops counting at `cap + 1`.
pub fn nesting_depth(text: &str, cap: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth: usize = 0;
    let mut deepest: usize = 0;
    let mut in_double_quotes = false;
    let mut in_backticks = false;
    // Keywords are keywords only where a command may start.
    let mut command_position = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' => {}
            b';' | b'&' | b'|' | b'\n' if !in_double_quotes => command_position = true,
            b'\\' => {
                i += 1;
                command_position = false;
            }
            b'\'' if !in_double_quotes => {
                i = find(bytes, i + 1, b'\'');
                command_position = false;
            }
            b'#' if !in_double_quotes && (i == 0 || bytes[i - 1].is_ascii_whitespace()) => {
                i = find(bytes, i + 1, b'\n');
                command_position = true;
            }
            b'"' => {
                in_double_quotes = !in_double_quotes;
                command_position = false;
            }
            b'`' => {
                in_backticks = !in_backticks;
                depth = if in_backticks {
                    depth + 1
                } else {
                    depth.saturating_sub(1)
                };
                command_position = in_backticks;
            }
            b'(' | b'{' => {
                depth += 1;
                command_position = true;
            }
            b')' | b'}' => {
                depth = depth.saturating_sub(1);
                command_position = b == b')';
            }
            b'[' if bytes.get(i + 1) == Some(&b'[') => {
                depth += 1;
                i += 1;
                command_position = false;
            }
            b']' if bytes.get(i + 1) == Some(&b']') => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'a'..=b'z' if !in_double_quotes && command_position => {
                let end = bytes[i..]
                    .iter()
                    .position(|c| !c.is_ascii_alphanumeric() && *c != b'_')
                    .map_or(bytes.len(), |n| i + n);
                let word = &bytes[i..end];
                match word {
                    b"if" | b"case" | b"while" | b"until" | b"for" | b"select" => depth += 1,
                    b"fi" | b"esac" | b"done" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                command_position = matches!(
                    word,
                    b"if" | b"then" | b"else" | b"elif" | b"do" | b"while" | b"until" | b"time"
                );
                i = end - 1;
            }
            _ => command_position = false,
        }
        deepest = deepest.max(depth);
        if deepest > cap {
            return deepest;
        }
        i += 1;
    }
    deepest
}

/// The index of the next `needle` at or after `from`, or the end of `bytes`.
fn find(bytes: &[u8], from: usize, needle: u8) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == needle))
        .map_or(bytes.len(), |n| from + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        nesting_depth(text, usize::MAX)
    }

    #[test]
    fn counts_groups_subshells_substitutions_and_keywords() {
        assert_eq!(depth("echo hi"), 0);
        assert_eq!(depth("{ { echo; }; }"), 2);
        assert_eq!(depth("( ( echo ) )"), 2);
        assert_eq!(depth("echo $(echo $(echo x))"), 2);
        assert_eq!(depth("echo $(( (1 + 2) * 3 ))"), 3);
        assert_eq!(depth("if true; then if true; then :; fi; fi"), 2);
        assert_eq!(depth("while :; do for i in 1; do :; done; done"), 2);
        assert_eq!(depth("case x in x) ;; esac"), 1);
        assert_eq!(depth("[[ -n x ]]"), 1);
    }

    #[test]
    fn sequential_constructs_do_not_add_up() {
        let text = "if true; then :; fi\n".repeat(5_000);
        assert_eq!(depth(&text), 1);
        assert_eq!(depth(&"{ echo; }; ".repeat(5_000)), 1);
    }

    #[test]
    fn quoted_escaped_and_commented_text_does_not_count() {
        assert_eq!(depth("echo '(((((' \\( \\{"), 0);
        assert_eq!(depth("echo x # if while (((("), 0);
        assert_eq!(depth("echo \"if while for\""), 0);
        assert_eq!(depth("echo \"it's $(echo 'a')\""), 1);
        assert_eq!(depth("echo $# ${#x}"), 1);
        assert_eq!(depth("diff iffy done_x"), 0);
        assert_eq!(depth(&"echo for if while\n".repeat(5_000)), 0);
    }

    #[test]
    fn deep_text_is_measured_without_recursion_and_capped() {
        let n = 1_000_000;
        let text = format!("{}echo{}", "{ ".repeat(n), "; }".repeat(n));
        assert_eq!(nesting_depth(&text, 10), 11);
        assert_eq!(depth(&text), n);
        let subst = format!("{}x{}", "$(echo ".repeat(2_000), ")".repeat(2_000));
        assert_eq!(depth(&subst), 2_000);
    }
}
