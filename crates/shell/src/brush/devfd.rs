//! Redirections to the process's own descriptors by path, made duplications of the run's.
//!
//! `echo hi > /dev/stderr`, `cat < /dev/fd/7`, `exec 3< /proc/self/fd/0`: brush opens such a path
//! like any file, and in a session the process is the host. `/dev/stdin`, `/dev/stdout` and
//! `/dev/stderr` are the host's stdio (the message went to the host's stderr, and `> /dev/stdout`
//! truncated the file the host's stdout was); `/dev/fd/N` is the run's descriptor only when the run
//! has N open, else the host's own (`cat < /dev/fd/7` read one of Node's pipes and hung). The
//! walk over each run's command ([`stages`](super::stages)) turns a redirection whose target is
//! such a path, written as it stands, into the duplication it means (`> /dev/stderr` is `>&2`,
//! `< /dev/fd/7` is `<&7`, `&> /dev/stdout` is `>&1 2>&1`), which reads the run's descriptor table
//! and fails at once on a descriptor the run has not open. A path that comes from an expansion
//! (`> "$out"`) is not known before the command runs and is opened as before.

use brush_core::parser::ast;

use super::common::descriptor_path;

/// `redirect` with a target naming one of the process's own descriptors made a duplication of
/// it: one redirection, or two for `&>`.
pub(crate) fn own_descriptors(redirect: ast::IoRedirect) -> Vec<ast::IoRedirect> {
    use ast::IoFileRedirectKind as Kind;
    use ast::IoFileRedirectTarget as Target;
    match redirect {
        ast::IoRedirect::File(fd, kind, Target::Filename(word)) => {
            let duplication = match kind {
                Kind::Read => Some(Kind::DuplicateInput),
                Kind::Write | Kind::Append | Kind::Clobber => Some(Kind::DuplicateOutput),
                _ => None,
            };
            match (duplication, literal_descriptor(&word)) {
                (Some(kind), Some(target)) => {
                    vec![ast::IoRedirect::File(fd, kind, Target::Fd(target))]
                }
                _ => vec![ast::IoRedirect::File(fd, kind, Target::Filename(word))],
            }
        }
        ast::IoRedirect::OutputAndError(word, append) => match literal_descriptor(&word) {
            Some(target) => vec![
                ast::IoRedirect::File(Some(1), Kind::DuplicateOutput, Target::Fd(target)),
                ast::IoRedirect::File(Some(2), Kind::DuplicateOutput, Target::Fd(1)),
            ],
            None => vec![ast::IoRedirect::OutputAndError(word, append)],
        },
        other => vec![other],
    }
}

/// [`own_descriptors`] over the redirections among a simple command's words.
pub(crate) fn in_words(items: &mut Vec<ast::CommandPrefixOrSuffixItem>) {
    if !items
        .iter()
        .any(|item| matches!(item, ast::CommandPrefixOrSuffixItem::IoRedirect(_)))
    {
        return;
    }
    *items = std::mem::take(items)
        .into_iter()
        .flat_map(|item| match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => own_descriptors(redirect)
                .into_iter()
                .map(ast::CommandPrefixOrSuffixItem::IoRedirect)
                .collect(),
            other => vec![other],
        })
        .collect();
}

/// [`own_descriptors`] over a compound command's redirections.
pub(crate) fn in_list(redirects: &mut Vec<ast::IoRedirect>) {
    *redirects = std::mem::take(redirects)
        .into_iter()
        .flat_map(own_descriptors)
        .collect();
}

/// The descriptor `word` names, written as it stands (quoted or not, without expansions).
fn literal_descriptor(word: &ast::Word) -> Option<ast::IoFd> {
    let text = word.value.as_str();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| text.strip_prefix(*q)?.strip_suffix(*q))
        .unwrap_or(text);
    descriptor_path(unquoted)
}

#[cfg(test)]
mod tests {
    use brush_parser::{Parser, ParserOptions};

    use super::*;

    /// The redirections of the one simple command in `text`, rewritten, as text.
    fn rewritten(text: &str) -> String {
        let program = Parser::new(text.as_bytes(), &ParserOptions::default())
            .parse_program()
            .expect("parses");
        let list = program.complete_commands.into_iter().next().expect("one");
        let item = list.0.into_iter().next().expect("one item");
        let Some(ast::Command::Simple(command)) = item.0.first.seq.into_iter().next() else {
            panic!("not a simple command");
        };
        command
            .suffix
            .into_iter()
            .flat_map(|suffix| suffix.0)
            .filter_map(|item| match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => Some(redirect),
                _ => None,
            })
            .flat_map(own_descriptors)
            .map(|redirect| redirect.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn makes_paths_of_own_descriptors_duplications() {
        assert_eq!(rewritten("echo hi > /dev/stderr"), ">& 2");
        assert_eq!(rewritten("cat < /dev/fd/7"), "<& 7");
        assert_eq!(rewritten("cat 3< /proc/self/fd/0"), "3<& 0");
        assert_eq!(
            rewritten("echo >> /dev/stdout 2>| '/dev/stdout'"),
            ">& 1 2>& 1"
        );
        assert_eq!(rewritten("cat < \"/dev/stdin\""), "<& 0");
        assert_eq!(rewritten("echo &> /dev/stdout"), "1>& 1 2>& 1");
    }

    #[test]
    fn leaves_other_targets() {
        assert_eq!(rewritten("echo > /dev/null"), "> /dev/null");
        assert_eq!(rewritten("echo > /dev/fd/x"), "> /dev/fd/x");
        assert_eq!(rewritten("echo > /dev/fd/"), "> /dev/fd/");
        assert_eq!(rewritten("echo > \"$out\""), "> \"$out\"");
        assert_eq!(rewritten("echo > /dev/fd/$n"), "> /dev/fd/$n");
        assert_eq!(rewritten("cat <> /dev/fd/3"), "<> /dev/fd/3");
        assert_eq!(rewritten("echo &> /tmp/x"), "&> /tmp/x");
    }
}
