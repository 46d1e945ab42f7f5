//! [`ParseCache`]: the parses of a session's recent commands, so that a command an agent repeats
//! is parsed once, with whether it may be run in place ([`inline`]) decided once too.
//!
//! A parse depends on the command's text and the parser's options alone — brush expands aliases
//! when it runs a simple command, not when it parses one, and caches its own parses of strings by
//! the same key — so the two together are the key: turning `extglob`, `posix` or `sh` mode on or
//! off gives another key, and the command is parsed anew. Parse errors are not kept: such a run ends
//! with its syntax error, and a caller fixes the text rather than repeating it.

use std::collections::VecDeque;

use brush_core::parser::{ParseError, ast};
use brush_parser::{Parser, ParserOptions};

use crate::session::qualify as inline;

/// How many parses are kept, the most recently used first.
const CAPACITY: usize = 32;

/// The longest command whose parse is kept: every command that may run in place, so that one is
/// never parsed twice. Longer ones are rarely repeated, and the cache's memory stays bounded by
/// `CAPACITY` times this.
pub(crate) const MAX_CACHED_LEN: usize = inline::INLINE_MAX_LEN;

/// One command's parse.
pub(crate) struct Parsed {
    text: String,
    options: ParserOptions,
    pub program: ast::Program,
    /// The builtins it calls, when its text and shape let it run in place (see [`inline`]).
    pub inline_builtins: Option<Vec<String>>,
    /// Run in place, it may skip pathname expansion ([`inline::expands_no_pathnames`]).
    pub expands_no_pathnames: bool,
    /// A word of it could be a glob once expanded ([`inline::may_glob`]); known when it may run
    /// in place.
    pub may_glob: bool,
}

#[derive(Default)]
pub(crate) struct ParseCache {
    recent: VecDeque<Parsed>,
}

impl ParseCache {
    /// The parse of `text` (of at most [`MAX_CACHED_LEN`] bytes) under `options`: the kept one,
    /// or a new one, which is kept in place of the least recently used.
    pub fn get(&mut self, text: &str, options: &ParserOptions) -> Result<&Parsed, ParseError> {
        debug_assert!(
            text.len() <= MAX_CACHED_LEN,
            "callers keep long commands out"
        );
        let kept = self
            .recent
            .iter()
            .position(|p| p.text == text && p.options == *options);
        let parsed = match kept.and_then(|i| self.recent.remove(i)) {
            Some(parsed) => parsed,
            None => {
                let program = parse(text, options)?;
                let inline_builtins = inline::qualifies_by_text(text)
                    .then(|| inline::builtin_names(&program))
                    .flatten();
                let expands_no_pathnames =
                    inline_builtins.is_some() && inline::expands_no_pathnames(text, &program);
                let may_glob = inline_builtins.is_some() && inline::may_glob(text);
                self.recent.truncate(CAPACITY - 1);
                Parsed {
                    text: text.to_owned(),
                    options: options.clone(),
                    program,
                    inline_builtins,
                    expands_no_pathnames,
                    may_glob,
                }
            }
        };
        self.recent.push_front(parsed);
        Ok(&self.recent[0])
    }
}

/// Parses `text` as brush's `-c` would.
pub(crate) fn parse(text: &str, options: &ParserOptions) -> Result<ast::Program, ParseError> {
    Parser::new(std::io::BufReader::new(text.as_bytes()), options).parse_program()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extglob(on: bool) -> ParserOptions {
        ParserOptions {
            enable_extended_globbing: on,
            ..ParserOptions::default()
        }
    }

    #[test]
    fn a_repeated_command_is_the_same_parse() {
        let mut cache = ParseCache::default();
        let options = ParserOptions::default();
        let first = cache
            .get("echo hi", &options)
            .expect("parses")
            .program
            .clone();
        assert_eq!(cache.recent.len(), 1);
        let again = &cache.get("echo hi", &options).expect("parses").program;
        assert_eq!(format!("{again:?}"), format!("{first:?}"));
        assert_eq!(cache.recent.len(), 1);
    }

    #[test]
    fn the_options_are_part_of_the_key() {
        let mut cache = ParseCache::default();
        // `@(a|b)` is a pattern under extglob and a syntax error without it.
        let command = "echo @(a|b)";
        assert!(cache.get(command, &extglob(true)).is_ok());
        assert!(cache.get(command, &extglob(false)).is_err());
        assert!(cache.get(command, &extglob(true)).is_ok());
        assert_eq!(cache.recent.len(), 1, "errors are not kept");
    }

    #[test]
    fn the_verdict_on_running_in_place_is_kept_with_the_parse() {
        let mut cache = ParseCache::default();
        let options = ParserOptions::default();
        let builtins = |cache: &mut ParseCache, text: &str| {
            cache
                .get(text, &options)
                .expect("parses")
                .inline_builtins
                .clone()
        };
        assert_eq!(
            builtins(&mut cache, "echo a; X=1"),
            Some(vec!["echo".to_string(), ":".to_string()])
        );
        assert_eq!(builtins(&mut cache, "ls"), None);
        assert_eq!(builtins(&mut cache, "echo *"), None, "refused by its text");
    }

    #[test]
    fn the_least_recently_used_parse_goes_first() {
        let mut cache = ParseCache::default();
        let options = ParserOptions::default();
        for i in 0..CAPACITY {
            cache.get(&format!("echo {i}"), &options).expect("parses");
        }
        // `echo 0` is used again, so `echo 1` is now the oldest.
        cache.get("echo 0", &options).expect("parses");
        cache.get("echo new", &options).expect("parses");
        let texts: Vec<&str> = cache.recent.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts.len(), CAPACITY);
        assert_eq!(texts[..2], ["echo new", "echo 0"]);
        assert!(!texts.contains(&"echo 1"));
        assert!(texts.contains(&"echo 2"));
    }
}
