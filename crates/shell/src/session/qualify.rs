//! Runs that can be done in place: commands made only of builtins that cannot block, spawn,
//! loop, touch the filesystem or run code of the user's, which a
//! [`PersistentShell`](crate::PersistentShell) runs on the caller's thread — Node's JS thread —
//! with its output collected in memory, instead of queueing them for the session's thread behind
//! a pipe and two thread hops.
//!
//! Nothing can stop a run in place once it started: the thread that would see a timer fire or a
//! signal abort is the one running it. So only work bounded by the command's own text qualifies —
//! no loop, no `read`, `wait` or `sleep`, nothing that waits on a file, a process or a clock — and
//! no system call that can hang: `test` and `[` stat paths, which on a stalled NFS or FUSE mount
//! would freeze the whole Node process, so they take the queued path, as does a run with a `cwd`
//! (see `Session::inline_program`). `pwd` alone prints the directory the shell keeps, touching no
//! file; `cd DIR` stats one path, so it qualifies only with a literal directory ([`cd_target`]),
//! and the session lets it run in place only when that lookup cannot reach a mount that may hang
//! ([`crate::path_walk`]). `printf` is left out too: a short format such as `%999999999d` prints
//! a gigabyte.
//!
//! What qualifies is decided twice. Here, from the command alone ([`qualifies_by_text`] and
//! [`builtin_names`], kept with the command's parse in the session's `ParseCache`): a flat
//! list of simple commands (`;`, `&&`, `||`, `!`), each named by a plain word from
//! [`INLINE_BUILTINS`], with no redirection, background job, pipeline, compound command,
//! function definition, command or process substitution, arithmetic, glob, brace expansion or
//! tilde, no braced expansion (`${…}` nests, and `${X//a/$X}` grows without bound) and no `$`
//! in an assignment (`X=$X$X`, repeated, doubles a value per step). Then by the session, from
//! its state: the name must still be the enabled builtin (no alias or function of that name),
//! no user trap or `set` option may run or print anything of its own, and a command with a word
//! that could still be a glob once expanded ([`may_glob`]: `echo a[b]`, or `echo $X` with
//! `X='*'`) runs in place only under `set -f`, since pathname expansion reads directories (see
//! `Session::inline_program`). Anything else takes the queued path, which behaves the same, only
//! slower.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use brush_core::openfiles::Stream;
use brush_parser::ast;
use shellwright_io::lock;

/// Builtins that only read or set the shell's own variables and write to stdout/stderr, in time
/// and bytes bounded by their arguments: no filesystem call, no wait, no loop.
pub(crate) const INLINE_BUILTINS: &[&str] = &[
    ":", "true", "false", "echo", "export", "unset", "declare", "typeset", "local", "readonly",
    "shift",
];

/// Builtins that qualify only in one form: `pwd` without arguments, `cd` with one literal
/// directory ([`cd_target`]), at most one `cd` per command (its target is checked against the
/// directory the run starts in).
const PATH_BUILTINS: &[&str] = &["cd", "pwd"];

/// Builtins that print nothing but their arguments or the working directory, if anything, and
/// read no option but `set -P`: a run made only of these cannot see the shell's options
/// (`declare -p SHELLOPTS` could).
const OPTION_BLIND: &[&str] = &[":", "true", "false", "echo", "cd", "pwd"];

/// Builtins that print nothing and read no option when they declare (`export X=1`, `declare Y`):
/// only listing (`export -p`, a bare `declare`) shows variables, `SHELLOPTS` among them.
const BLIND_WHEN_DECLARING: &[&str] = &["export", "declare", "typeset", "local", "readonly"];

/// A program to run in place.
pub(crate) struct InlineProgram {
    pub program: ast::Program,
    /// Pathname expansion has nothing to do in it ([`expands_no_pathnames`]).
    pub expands_no_pathnames: bool,
}

/// Whether no word of a command that qualifies by its text ([`qualifies_by_text`]) and shape
/// ([`builtin_names`]) can expand to a pathname, so that the run may skip pathname expansion
/// unseen: with no `$` nothing is substituted, so every field is the text of a word;
/// [`plain_text`] has refused `*`, `?` other than in `$?`, and the `(` of every extended pattern,
/// and there is no `[` — no field holds a glob character. The options are changed for the run
/// only, and are not seen by the builtins it calls ([`option_blind`]). A quoted `"$X"` cannot
/// glob either, but would see them: `$-`, `$SHELLOPTS` or a nameref to either would show the `f`
/// of noglob.
pub(crate) fn expands_no_pathnames(command: &str, program: &ast::Program) -> bool {
    !command.contains(['$', '[']) && simple_commands(program).all(option_blind)
}

/// Whether a simple command cannot see the shell's options: its builtin is [`OPTION_BLIND`], or
/// it is one of [`BLIND_WHEN_DECLARING`] given at least one operand and no option — each operand
/// starts with a letter or `_`, as a variable's name does, so none is an option even once its
/// quotes are removed.
fn option_blind(command: &ast::SimpleCommand) -> bool {
    let name = command
        .word_or_name
        .as_ref()
        .map_or(":", |w| w.value.as_str());
    if OPTION_BLIND.contains(&name) {
        return true;
    }
    let mut operands = command
        .suffix
        .iter()
        .flat_map(|s| &s.0)
        .map(|item| match item {
            ast::CommandPrefixOrSuffixItem::Word(word)
            | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word) => Some(word.value.as_str()),
            _ => None,
        });
    let declares = |word: Option<&str>| {
        word.and_then(|w| w.chars().next())
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    };
    BLIND_WHEN_DECLARING.contains(&name)
        && operands.next().is_some_and(declares)
        && operands.all(declares)
}

/// The simple commands of a program whose shape qualifies ([`builtin_names`]: each pipeline is
/// one simple command).
fn simple_commands(program: &ast::Program) -> impl Iterator<Item = &ast::SimpleCommand> {
    let commands = program.complete_commands.iter().flat_map(|list| &list.0);
    let pipelines = commands.flat_map(|ast::CompoundListItem(and_or, _)| and_or.iter());
    pipelines.filter_map(|(_, pipeline)| match pipeline.seq.as_slice() {
        [ast::Command::Simple(command)] => Some(command),
        _ => None,
    })
}

/// Whether a word of a [`plain_text`] command could undergo pathname expansion (unless noglob is
/// on): it has an unquoted `[` — [`plain_text`] refused `*`, `?` and the `(` of extended
/// patterns — or an unquoted parameter expansion, whose value may hold any glob character. `$?`,
/// `$#`, `$$`, `$!` and `$-` are the exceptions: they expand to digits or option letters.
/// Quotes are followed: nothing inside `'…'` or `"…"` globs. A `[` escaped by a backslash, which
/// cannot glob either, and a `[` or `$` in a comment are counted all the same, which only costs
/// speed.
pub(crate) fn may_glob(command: &str) -> bool {
    #[derive(Clone, Copy)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    let mut bytes = command.bytes().peekable();
    while let Some(byte) = bytes.next() {
        match (quote, byte) {
            (Quote::Single, b'\'') | (Quote::Double, b'"') => quote = Quote::None,
            (Quote::Double, b'\\') => {
                // `\"` does not end the quote; whatever else it escapes cannot glob in quotes.
                bytes.next();
            }
            (Quote::Single | Quote::Double, _) => {}
            (Quote::None, b'\'') => quote = Quote::Single,
            (Quote::None, b'"') => quote = Quote::Double,
            (Quote::None, b'[') => return true,
            (Quote::None, b'\\') => {
                if bytes.next() == Some(b'[') {
                    return true;
                }
            }
            (Quote::None, b'$') => match bytes.peek() {
                Some(b'?' | b'#' | b'$' | b'!' | b'-') => {
                    bytes.next();
                }
                _ => return true,
            },
            (Quote::None, _) => {}
        }
    }
    false
}

/// The longest command considered. With no braced expansion and no `$` in an assignment, a
/// run's work is bounded by the command's length times the values it reads.
pub(crate) const INLINE_MAX_LEN: usize = 4096;

/// Whether the command's text qualifies: short enough, [`plain_text`], and without `$!`, which
/// may wait for the last job to start its process (see `brush::jobs`).
pub(crate) fn qualifies_by_text(command: &str) -> bool {
    command.len() <= INLINE_MAX_LEN && !command.contains("$!") && plain_text(command)
}

/// The names of the builtins `program` calls, when its shape qualifies (for the session to check
/// that they are still those builtins); the text is checked with [`qualifies_by_text`].
pub(crate) fn builtin_names(program: &ast::Program) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for list in &program.complete_commands {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            if matches!(separator, ast::SeparatorOperator::Async) {
                return None;
            }
            for (_, pipeline) in and_or.iter() {
                names.push(simple_builtin(pipeline)?);
            }
        }
    }
    let cds = names.iter().filter(|name| *name == "cd").count();
    (cds == 0 || (cds == 1 && cd_target(program).is_some())).then_some(names)
}

/// The directory of the one `cd` of a program whose [`builtin_names`] qualify: its one argument,
/// a word that expands to itself (no `$`, quote, backslash or `[`; `~`, `*`, `?` and braces are
/// refused by [`plain_text`]) and is no option (`-`, `-P`).
pub(crate) fn cd_target(program: &ast::Program) -> Option<&str> {
    let cd = simple_commands(program).find(|command| {
        command
            .word_or_name
            .as_ref()
            .is_some_and(|w| w.value == "cd")
    })?;
    let [ast::CommandPrefixOrSuffixItem::Word(word)] = cd.suffix.as_ref()?.0.as_slice() else {
        return None;
    };
    let literal = !word.value.contains(['$', '\'', '"', '\\', '['])
        && !word.value.starts_with('-')
        && !word.value.is_empty();
    (cd.prefix.is_none() && literal).then_some(word.value.as_str())
}

/// The builtin a one-command pipeline calls, when it is a plain allow-listed simple command.
fn simple_builtin(pipeline: &ast::Pipeline) -> Option<String> {
    let [ast::Command::Simple(command)] = pipeline.seq.as_slice() else {
        return None;
    };
    if pipeline.timed.is_some() {
        return None;
    }
    let items = command.prefix.iter().flat_map(|p| &p.0);
    let items = items.chain(command.suffix.iter().flat_map(|s| &s.0));
    for item in items {
        match item {
            // `export X=$X$X` grows a value as the assignment `X=$X$X` does.
            ast::CommandPrefixOrSuffixItem::Word(word)
            | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word)
                if word.value.contains('=') && word.value.contains('$') =>
            {
                return None;
            }
            ast::CommandPrefixOrSuffixItem::Word(_)
            | ast::CommandPrefixOrSuffixItem::AssignmentWord(..) => {}
            ast::CommandPrefixOrSuffixItem::IoRedirect(_)
            | ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => return None,
        }
    }
    // Assignments alone (`X=1`) have no name: they are run as the builtin `:` would be.
    let name = command
        .word_or_name
        .as_ref()
        .map_or(":", |w| w.value.as_str());
    // `cd`'s one argument is checked by `cd_target`.
    let path_builtin_form = match name {
        "pwd" => command.prefix.is_none() && command.suffix.is_none(),
        _ => true,
    };
    (INLINE_BUILTINS.contains(&name) || (PATH_BUILTINS.contains(&name) && path_builtin_form))
        .then(|| name.to_string())
}

/// Whether the text is free of everything that could run other code, wait, touch the filesystem
/// in bulk or expand without bound: substitutions and arithmetic (`` ` ``, `$(`, `<(`, `>(`),
/// redirections (`<`, `>`), background jobs and pipelines (`&`, `|` alone), globs (`*`, `?`
/// other than `$?`), brace expansion and braced parameter expansion (`{`), and tildes (`~user`,
/// or `~` with `HOME` unset, is a password-database lookup, which may read files or the network).
/// Quoting is not interpreted: a quoted `*` is refused too, which only costs speed.
fn plain_text(command: &str) -> bool {
    let bytes = command.as_bytes();
    bytes.iter().enumerate().all(|(i, &b)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + 1).copied();
        match b {
            b'`' | b'(' | b')' | b'<' | b'>' | b'*' => false,
            b'{' => false,
            b'?' => before == Some(b'$'),
            b'&' | b'|' => before == Some(b) || after == Some(b),
            b'~' => false,
            _ => true,
        }
    })
}

/// stdout and stderr of an inline run: one buffer, so the transcript keeps the order of writes.
#[derive(Clone, Default)]
pub(crate) struct Transcript(Arc<Mutex<Vec<u8>>>);

impl Transcript {
    /// Everything written so far, taken out.
    pub fn take_written(&self) -> Vec<u8> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        lock(&self.0)
    }
}

impl Write for Transcript {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Read for Transcript {
    /// Write-only: reads see end of file, as reads of a pipe's write end would fail.
    fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(0)
    }
}

impl Stream for Transcript {
    fn clone_box(&self) -> Box<dyn Stream> {
        Box::new(self.clone())
    }

    // No builtin of the allow-list needs a file descriptor; nothing is spawned inline.
    #[cfg(unix)]
    fn try_clone_to_owned(&self) -> Result<std::os::fd::OwnedFd, brush_core::Error> {
        Err(brush_core::ErrorKind::Unimplemented("a file descriptor for an inline run").into())
    }

    #[cfg(unix)]
    fn try_borrow_as_fd(&self) -> Result<std::os::fd::BorrowedFd<'_>, brush_core::Error> {
        Err(brush_core::ErrorKind::Unimplemented("a file descriptor for an inline run").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brush_parser::ParserOptions;

    fn names(command: &str) -> Option<Vec<String>> {
        if !qualifies_by_text(command) {
            return None;
        }
        let program = crate::parse_cache::parse(command, &ParserOptions::default()).ok()?;
        builtin_names(&program)
    }

    #[test]
    fn flat_lists_of_allowed_builtins_qualify() {
        assert_eq!(names("echo hi"), Some(vec!["echo".to_string()]));
        assert_eq!(
            names("export X && unset Y || echo \"no $HOME\"; X=1; ! false"),
            Some(
                vec!["export", "unset", "echo", ":", "false"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(names("echo $? $X a=b"), Some(vec!["echo".to_string()]));
        assert_eq!(
            names("cd ../src && pwd"),
            Some(vec!["cd".to_string(), "pwd".to_string()])
        );
    }

    #[test]
    fn the_target_of_cd_is_its_literal_word() {
        let target = |command: &str| {
            let program =
                crate::parse_cache::parse(command, &ParserOptions::default()).expect("parse");
            cd_target(&program).map(str::to_string)
        };
        assert_eq!(target("cd /tmp"), Some("/tmp".to_string()));
        assert_eq!(target("echo a; cd ../x && pwd"), Some("../x".to_string()));
        assert_eq!(target("pwd"), None);
    }

    #[test]
    fn anything_that_could_spawn_block_or_explode_does_not() {
        for command in [
            "ls",
            "echo hi | cat",
            "echo hi > f",
            "echo hi 2>&1",
            "sleep 1 &",
            "echo $!",
            "kill \"$!\"",
            "echo $(date)",
            "echo `date`",
            "echo $((1+2))",
            "echo *",
            "echo a?",
            "echo {1..100000000}",
            "echo ~root",
            "echo ~ ~/a",
            "f() { :; }",
            "{ echo hi; }",
            "(echo hi)",
            "if true; then echo; fi",
            "while :; do :; done",
            "[[ -n x ]]",
            "time echo",
            "exit",
            "echo \"$X\" <<< x",
            "eval echo",
            "read x",
            "wait",
            "sleep 1",
            "printf '%999999999d' 1",
            // Builtins that touch the filesystem, which can hang on a stalled mount, and the forms
            // of `cd` and `pwd` whose path is not known from the text or that resolve links.
            "test -d /",
            "[ -n x ]",
            "cd",
            "cd -",
            "cd -P /",
            "cd $HOME",
            "cd '/a b'",
            "cd /a\\ b",
            "cd /a /b",
            "X=1 cd /",
            "cd /a; cd /b",
            "pwd -P",
            "X=1 pwd",
            // Expansions that nest or grow a value without bound.
            "echo ${X:-y}",
            "echo ${X//a/$X}",
            "X=$X$X$X$X",
            "X=a; X=$X$X",
            "export X=$X$X",
            "declare X=a$X",
        ] {
            assert_eq!(names(command), None, "{command}");
        }
        assert_eq!(names(&"echo x".repeat(INLINE_MAX_LEN)), None);
        assert_eq!(names("echo 'unterminated"), None);
    }

    #[test]
    fn pathname_expansion_is_skipped_only_where_no_word_can_glob() {
        let skips = |command: &str| {
            assert!(names(command).is_some(), "{command} qualifies");
            let program = crate::parse_cache::parse(command, &ParserOptions::default());
            expands_no_pathnames(command, &program.expect("parses"))
        };
        assert!(skips("echo hi 'a b' \\x; X=1; true && false || :"));
        assert!(skips("cd /tmp && pwd"));
        assert!(skips(
            "export X=1 _Y Z=2; declare A=b; readonly R; local L=1; typeset T"
        ));
        for command in [
            "echo [a]",
            "echo $X",
            "echo \"$X\"",
            "echo \"$-\"",
            "X=a[b]",
            // Builtins that could print SHELLOPTS.
            "declare -p",
            "export -p",
            "echo hi; readonly -p",
            "export",
            "declare",
            "export X=1 -p",
            "export '-p'",
            "export \\-p",
            "export +x",
            "export X=1 --",
        ] {
            assert!(!skips(command), "{command}");
        }
    }

    #[test]
    fn a_word_may_glob_where_a_bracket_or_an_expansion_is_unquoted() {
        for command in [
            "echo a[b]",
            "echo $X",
            "X=1; echo a $X",
            "echo \"$X\"$Y",
            "echo $1 $@",
            "echo $_",
            "echo \\[a]",
            "echo '[a]'[b]",
            "echo \"a\\\"[b]\"[c]",
            "X=[x]",
            "echo $'a'",
            "echo a$",
        ] {
            assert!(may_glob(command), "{command}");
        }
        for command in [
            "echo hi",
            "echo \"$X\" \"${X}\" \"[a]\" '[b]' '$Y'",
            "echo $? $# $$ $! $-",
            "echo \"a\\\"$\" \\$X",
            "export X; unset Y",
        ] {
            assert!(!may_glob(command), "{command}");
        }
    }

    #[test]
    fn the_transcript_keeps_writes_in_order() {
        let transcript = Transcript::default();
        let mut stdout = transcript.clone_box();
        let mut stderr = transcript.clone_box();
        stdout.write_all(b"out ").expect("write");
        stderr.write_all(b"err ").expect("write");
        stdout.write_all(b"out").expect("write");
        assert_eq!(transcript.take_written(), b"out err out");
        assert_eq!(transcript.take_written(), b"");
    }
}
