//! `applyBashFixups` (DESIGN §3.1): strip output plumbing that only fights Shellwright's own
//! transcript handling, without ever changing what a command means.
//!
//! Two rewrites, both on **top-level pipelines only** (never inside `( )`, `{ }`, `$( )`, loops or
//! quotes):
//!
//! 1. A trailing `| head` / `| tail` (or `|& head`) whose arguments are only counts and flags.
//!    Accepted arguments, and nothing else: `-N` as the sole argument (the obsolete form), `-n N`,
//!    `-nN`, `--lines N`, `--lines=N`, `-q`, `--quiet`, `--silent`, where `N` is unsigned ASCII
//!    digits and not zero. So `+N` offsets, negative counts, `-0`, size suffixes (`5K`), byte
//!    counts (`-c`, often deliberate for binary output), `-v`, `-z`, `tail -f`/`-F`/`--follow`,
//!    file operands, quoting, expansions and any redirection on the head/tail keep the pipeline
//!    as written.
//! 2. A redundant trailing `2>&1` on a pipeline's only command (after rule 1 has run): stdout and
//!    stderr of a Shellwright run already share one pipe, so the duplication is a no-op. Only when
//!    it is the command's only redirection (`cmd > f 2>&1` sends stderr to `f`, not redundant), and
//!    never when the input mentions `exec` (which could have re-pointed fd 1 or 2 for the session).
//!
//! Conservative choices, each of which leaves the pipeline untouched:
//! - Removing a head/tail changes the pipeline's exit status (the producer's instead of head's),
//!   so rule 1 only applies to the input's last top-level pipeline, whose status is the run's exit
//!   code and steers nothing else. Earlier ones can steer `&&`/`||`, `$?` and `set -e`, and `!`
//!   or a background `&` make the last one keep its filter too: `a | head -5 && b | tail -3` and
//!   `a | head -5; b | tail -3` both lose only `| tail -3`.
//! - The producer must be plain simple commands that end on their own: no compound commands
//!   (loops), no head/tail right before the stripped one (`| head -20 | tail -5` is a window), and
//!   none of the coarse never-ending markers of `may_never_end` (`yes`, `ping`, `watch`, `top`,
//!   `/dev/zero`, `/dev/urandom`, `-f`, `--follow`, `--watch`, `tail -F`, …).
//! - Multi-line input, input over 4 KiB, bracket nesting deeper than 16 (brush-parser's tokenizer
//!   recurses per level), more than 8 `(` operators or `case` words (its PEG parser backtracks
//!   exponentially on them), and anything brush-parser cannot parse are returned byte-for-byte.
//!
//! The rewrite cuts the original text by the tokens' source spans; everything else is kept exactly
//! as written, and only the whitespace between a removed piece and the token before it goes with it.

use brush_parser::ast::{
    Command, CommandPrefixOrSuffixItem, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect,
    Pipeline, SeparatorOperator, SimpleCommand, Word,
};
use brush_parser::{ParserOptions, Token, parse_tokens, uncached_tokenize_str};

/// Longer input is left alone: a one-line command this long is not agent plumbing, and the
/// recursive parser must not be handed unbounded nesting.
const MAX_INPUT_BYTES: usize = 4096;

/// brush-parser's tokenizer recurses once per nested `$(`, `${`, `$[`, … and overflows a 2 MiB
/// stack at a few hundred levels; deeper bracket nesting than this is not tokenized.
const MAX_BRACKET_DEPTH: usize = 16;

/// brush-parser's PEG parser backtracks exponentially on nested or unclosed `(` / `((` and on
/// nested `case` (20 unclosed `(` take seconds), so input with more of these is not parsed.
const MAX_BACKTRACKING_OPENERS: usize = 8;

/// Operators that end a top-level pipeline; anything else after a candidate means "not trailing".
const PIPELINE_TERMINATORS: &[&str] = &[";", "&", "&&", "||", "\n"];

/// Commands that usually run until killed; seeing one in the producer keeps its head/tail.
const ENDLESS_COMMANDS: &[&str] = &["yes", "ping", "watch", "top", "htop"];

/// Devices that never reach end of file.
const ENDLESS_DEVICES: &[&str] = &["/dev/zero", "/dev/random", "/dev/urandom"];

/// The rewritten command and the pieces removed from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixups {
    /// The command with the removed pieces cut out, otherwise exactly as written.
    pub command: String,
    /// Normalised text of each removed piece (`"| head -n 5"`, `"2>&1"`), in removal order.
    pub stripped: Vec<String>,
}

/// Applies the fixups of the module documentation; never fails and never panics.
pub fn apply_bash_fixups(command: &str) -> Fixups {
    // brush-parser is third-party code that allows itself `unwrap`; a panic in it must degrade
    // to "leave the command alone", never cross N-API.
    let planned = std::panic::catch_unwind(|| plan_cuts(command));
    let cuts = planned.ok().flatten().unwrap_or_default();
    let rewritten = (!cuts.is_empty())
        .then(|| cut_out(command, &cuts))
        .flatten();
    match rewritten {
        Some(rewritten) => Fixups {
            command: rewritten,
            stripped: cuts.into_iter().map(|cut| cut.text).collect(),
        },
        None => Fixups {
            command: command.to_string(),
            stripped: Vec::new(),
        },
    }
}

/// A piece to remove, as a byte range of the input and its normalised text.
#[derive(Debug)]
struct Cut {
    bytes: std::ops::Range<usize>,
    text: String,
    /// Index of the first removed token, so a cut just before it still counts as trailing.
    first_token: usize,
}

/// The parsed input: its tokens and a map from character index to byte offset.
struct Source<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    /// `byte_offsets[i]` is the byte offset of character `i`; the last entry is `text.len()`.
    byte_offsets: Vec<usize>,
    mentions_exec: bool,
}

/// How a pipeline's exit status is used, and which rules may touch it.
struct PipelineContext {
    status_steers_something: bool,
    stderr_rule_allowed: bool,
}

fn plan_cuts(command: &str) -> Option<Vec<Cut>> {
    if command.len() > MAX_INPUT_BYTES
        || command.trim_end().contains('\n')
        || bracket_depth(command) > MAX_BRACKET_DEPTH
    {
        return None;
    }
    let options = ParserOptions::default();
    let tokens = uncached_tokenize_str(command, &options.tokenizer_options()).ok()?;
    if backtracking_openers(&tokens) > MAX_BACKTRACKING_OPENERS {
        return None;
    }
    let program = parse_tokens(&tokens, &options).ok()?;
    let source = Source::new(command, tokens);

    let items = program.complete_commands.iter().flat_map(|list| &list.0);
    let pipelines: Vec<(&Pipeline, bool)> = items
        .flat_map(|item| {
            let in_background = matches!(item.1, SeparatorOperator::Async);
            item.0
                .iter()
                .map(move |(_, pipeline)| (pipeline, in_background))
        })
        .collect();
    let mut cuts = Vec::new();
    for (position, &(pipeline, in_background)) in pipelines.iter().enumerate() {
        let is_last = position + 1 == pipelines.len();
        let context = PipelineContext {
            status_steers_something: !is_last || in_background || pipeline.bang,
            stderr_rule_allowed: !source.mentions_exec,
        };
        cuts.extend(fixup_pipeline(&source, pipeline, &context));
    }
    Some(cuts)
}

/// The deepest nesting of `(`, `{` and `[` in the raw text, quotes ignored (an upper bound
/// that needs no tokenizer: unclosed brackets count as open to the end).
fn bracket_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for byte in text.bytes() {
        match byte {
            b'(' | b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The tokens that make brush-parser's backtracking grow: each `(` of an operator, and `case`.
fn backtracking_openers(tokens: &[Token]) -> usize {
    let openers = |token: &Token| match token {
        Token::Operator(op, _) => op.matches('(').count(),
        Token::Word(word, _) => usize::from(word == "case"),
    };
    tokens.iter().map(openers).sum()
}

/// Rule 1 then rule 2 on one top-level pipeline; returns its cuts in removal order.
fn fixup_pipeline(source: &Source, pipeline: &Pipeline, context: &PipelineContext) -> Vec<Cut> {
    let mut cuts = Vec::new();
    let mut commands = pipeline.seq.as_slice();
    if !context.status_steers_something
        && let Some(cut) = trailing_head_or_tail(source, commands)
    {
        cuts.push(cut);
        commands = &commands[..commands.len() - 1];
    }
    if context.stderr_rule_allowed
        && let [Command::Simple(only)] = commands
        && let Some(cut) = redundant_stderr_duplication(source, only, cuts.first())
    {
        cuts.push(cut);
    }
    cuts
}

/// The cut for `| head …` / `|& tail …` ending `commands`, if rule 1 allows it.
fn trailing_head_or_tail(source: &Source, commands: &[Command]) -> Option<Cut> {
    let [producers @ .., Command::Simple(filter)] = commands else {
        return None;
    };
    let producer_is_plain = |command: &Command| match command {
        Command::Simple(simple) => !may_never_end(simple),
        _ => false,
    };
    let feeding = match producers.last()? {
        Command::Simple(simple) => filter_name(simple),
        _ => None,
    };
    if feeding.is_some() || !producers.iter().all(producer_is_plain) {
        return None;
    }
    let (name, args) = head_or_tail_words(filter)?;
    let arg_values: Vec<&str> = args.iter().map(|word| word.value.as_str()).collect();
    if !only_counts_and_flags(&arg_values) {
        return None;
    }

    let name_index = source.verified_token(name)?;
    let last_index = match args.last() {
        Some(last) => source.verified_token(last)?,
        None => name_index,
    };
    let pipe = source.tokens.get(name_index.checked_sub(1)?)?;
    if !matches!(pipe, Token::Operator(op, _) if op == "|" || op == "|&") {
        return None;
    }
    let text = std::iter::once(pipe.to_str())
        .chain(std::iter::once(name.value.as_str()))
        .chain(arg_values.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    source.cut_through(name_index - 1..=last_index, None, text)
}

/// The name and argument words of a `head`/`tail` with no assignments and no redirections.
fn head_or_tail_words(command: &SimpleCommand) -> Option<(&Word, Vec<&Word>)> {
    let name = filter_name(command)?;
    if command.prefix.is_some() {
        return None;
    }
    let items = command
        .suffix
        .as_ref()
        .map_or(&[][..], |suffix| suffix.0.as_slice());
    let args = items
        .iter()
        .map(|item| match item {
            CommandPrefixOrSuffixItem::Word(word) => Some(word),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((name, args))
}

/// The command's name word when it is literally `head` or `tail`.
fn filter_name(command: &SimpleCommand) -> Option<&Word> {
    command
        .word_or_name
        .as_ref()
        .filter(|name| name.value == "head" || name.value == "tail")
}

/// Whether `args` are only the counts and flags listed in the module documentation.
fn only_counts_and_flags(args: &[&str]) -> bool {
    if let [only] = args
        && let Some(count) = only.strip_prefix('-')
        && is_count(count)
    {
        return true;
    }
    let mut rest = args;
    while let Some((arg, tail)) = rest.split_first() {
        rest = match *arg {
            "-q" | "--quiet" | "--silent" => tail,
            "-n" | "--lines" => match tail.split_first() {
                Some((count, tail)) if is_count(count) => tail,
                _ => return false,
            },
            attached => {
                let count = attached
                    .strip_prefix("-n")
                    .or_else(|| attached.strip_prefix("--lines="));
                if !count.is_some_and(is_count) {
                    return false;
                }
                tail
            }
        };
    }
    true
}

/// An unsigned, non-zero decimal line count (no sign, no `+`, no size suffix).
fn is_count(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && text.bytes().any(|b| b != b'0')
}

/// A coarse "this producer may run until killed" check, so stripping a head never turns a
/// bounded command into one that runs until the timeout. False positives only keep a head/tail.
fn may_never_end(command: &SimpleCommand) -> bool {
    let rendered = command.to_string();
    let is_tail = command
        .word_or_name
        .as_ref()
        .is_some_and(|name| name.value == "tail");
    rendered.split_whitespace().any(|word| {
        let base = word.rsplit('/').next().unwrap_or(word);
        ENDLESS_COMMANDS.contains(&base)
            || ENDLESS_DEVICES.iter().any(|device| word.contains(device))
            || is_follow_flag(word, is_tail)
    })
}

/// `-f`, `--follow[=…]`, `--watch`, and for `tail` any short-flag cluster with `f`/`F`.
fn is_follow_flag(word: &str, is_tail: bool) -> bool {
    let short_cluster_with_follow =
        word.starts_with('-') && !word.starts_with("--") && word.contains(['f', 'F']);
    word == "-f"
        || word == "--follow"
        || word.starts_with("--follow=")
        || word == "--watch"
        || (is_tail && short_cluster_with_follow)
}

/// The cut for a literal trailing `2>&1` that is the command's only redirection.
fn redundant_stderr_duplication(
    source: &Source,
    command: &SimpleCommand,
    removed_after: Option<&Cut>,
) -> Option<Cut> {
    command.word_or_name.as_ref()?;
    let items = &command.suffix.as_ref()?.0;
    let (last, earlier) = items.split_last()?;
    let CommandPrefixOrSuffixItem::IoRedirect(IoRedirect::File(
        Some(2),
        IoFileRedirectKind::DuplicateOutput,
        IoFileRedirectTarget::Duplicate(target),
    )) = last
    else {
        return None;
    };
    let prefix_items = command
        .prefix
        .as_ref()
        .map_or(&[][..], |prefix| prefix.0.as_slice());
    let other_redirect = earlier
        .iter()
        .chain(prefix_items)
        .any(|item| matches!(item, CommandPrefixOrSuffixItem::IoRedirect(_)));
    if target.value != "1" || other_redirect {
        return None;
    }
    let target_index = source.verified_token(target)?;
    let fd_index = target_index.checked_sub(2)?;
    let (fd, target_token) = (
        source.tokens.get(fd_index)?,
        source.tokens.get(target_index)?,
    );
    let written = source.slice(fd.location().start.index, target_token.location().end.index)?;
    if written != "2>&1"
        || !matches!(
            source.tokens.get(fd_index.checked_sub(1)?)?,
            Token::Word(..)
        )
    {
        return None;
    }
    let removed_after = removed_after.map(|cut| cut.first_token);
    source.cut_through(fd_index..=target_index, removed_after, "2>&1".to_string())
}

impl<'a> Source<'a> {
    fn new(text: &'a str, tokens: Vec<Token>) -> Self {
        let byte_offsets = text
            .char_indices()
            .map(|(offset, _)| offset)
            .chain(std::iter::once(text.len()))
            .collect();
        let mentions_exec = tokens.iter().any(|token| token.to_str() == "exec");
        Self {
            text,
            tokens,
            byte_offsets,
            mentions_exec,
        }
    }

    /// The byte range of the characters `start..end` (brush-parser spans count characters).
    fn byte_range(&self, start: usize, end: usize) -> Option<std::ops::Range<usize>> {
        Some(*self.byte_offsets.get(start)?..*self.byte_offsets.get(end)?)
    }

    /// The text of the characters `start..end`.
    fn slice(&self, start: usize, end: usize) -> Option<&'a str> {
        self.text.get(self.byte_range(start, end)?)
    }

    /// The index of the token that `word` came from, checked against the source text so a
    /// span that does not match what is written never drives a cut.
    fn verified_token(&self, word: &Word) -> Option<usize> {
        let span = word.loc.as_ref()?;
        let index = self
            .tokens
            .iter()
            .position(|token| token.location().start.index == span.start.index)?;
        let token = &self.tokens[index];
        let written = self.slice(span.start.index, span.end.index)?;
        (token.location().end.index == span.end.index
            && token.to_str() == word.value
            && written == word.value)
            .then_some(index)
    }

    /// Cuts `tokens` plus the whitespace before them, if they end their pipeline (or are
    /// followed by the already removed token `removed_after`) and only whitespace separates
    /// them from the token before.
    fn cut_through(
        &self,
        tokens: std::ops::RangeInclusive<usize>,
        removed_after: Option<usize>,
        text: String,
    ) -> Option<Cut> {
        let (first, last) = tokens.into_inner();
        let before = self.tokens.get(first.checked_sub(1)?)?;
        if let Some(after) = self.tokens.get(last + 1)
            && !PIPELINE_TERMINATORS.contains(&after.to_str())
            && removed_after != Some(last + 1)
        {
            return None;
        }
        let start = before.location().end.index;
        let piece_start = self.tokens.get(first)?.location().start.index;
        let end = self.tokens.get(last)?.location().end.index;
        let gap = self.slice(start, piece_start)?;
        let bytes = self.byte_range(start, end)?;
        (gap.chars().all(char::is_whitespace) && !bytes.is_empty()).then_some(Cut {
            bytes,
            text,
            first_token: first,
        })
    }
}

/// The text with every cut removed; `None` when cuts overlap (then nothing is changed).
fn cut_out(text: &str, cuts: &[Cut]) -> Option<String> {
    let mut ordered: Vec<&std::ops::Range<usize>> = cuts.iter().map(|cut| &cut.bytes).collect();
    ordered.sort_by_key(|bytes| bytes.start);
    let mut kept = String::with_capacity(text.len());
    let mut position = 0;
    for bytes in ordered {
        kept.push_str(text.get(position..bytes.start)?);
        position = bytes.end;
    }
    kept.push_str(text.get(position..)?);
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (input, rewritten command, stripped pieces in removal order).
    const STRIPPED: &[(&str, &str, &[&str])] = &[
        // The DESIGN examples.
        (
            "cargo build 2>&1 | head -50",
            "cargo build",
            &["| head -50", "2>&1"],
        ),
        ("ls | head -n 5", "ls", &["| head -n 5"]),
        ("ls | head -5", "ls", &["| head -5"]),
        ("ls | head --lines=5", "ls", &["| head --lines=5"]),
        ("ls | head -q", "ls", &["| head -q"]),
        ("make 2>&1", "make", &["2>&1"]),
        // Count and flag forms.
        ("ls | head", "ls", &["| head"]),
        ("ls | tail", "ls", &["| tail"]),
        ("ls | head -n5", "ls", &["| head -n5"]),
        ("ls | head --lines 5", "ls", &["| head --lines 5"]),
        ("ls | tail -n 3", "ls", &["| tail -n 3"]),
        ("ls | tail -3", "ls", &["| tail -3"]),
        ("ls | tail -n3", "ls", &["| tail -n3"]),
        ("ls | tail --lines=3", "ls", &["| tail --lines=3"]),
        ("ls | tail -q -n 3", "ls", &["| tail -q -n 3"]),
        ("ls | tail -n 3 -q", "ls", &["| tail -n 3 -q"]),
        ("ls | head --quiet -n 5", "ls", &["| head --quiet -n 5"]),
        ("ls | head --silent", "ls", &["| head --silent"]),
        ("ls | head -n 5 -n 7", "ls", &["| head -n 5 -n 7"]),
        ("ls | head -n 007", "ls", &["| head -n 007"]),
        (
            "ls | head -n 100000000000000000000",
            "ls",
            &["| head -n 100000000000000000000"],
        ),
        // Spacing: only the whitespace before a removed piece goes with it.
        ("ls|head -5", "ls", &["| head -5"]),
        ("ls   |   head    -n   5", "ls", &["| head -n 5"]),
        ("ls\t|\thead -5", "ls", &["| head -5"]),
        ("ls | head -5   ", "ls   ", &["| head -5"]),
        ("ls | head -5\n", "ls\n", &["| head -5"]),
        ("  ls | head -5", "  ls", &["| head -5"]),
        (
            "ls | head -5 # first five",
            "ls # first five",
            &["| head -5"],
        ),
        ("ls | head -5;", "ls;", &["| head -5"]),
        ("ls | head -5 ;", "ls ;", &["| head -5"]),
        ("make 2>&1;", "make;", &["2>&1"]),
        ("make   2>&1  ", "make  ", &["2>&1"]),
        // Pipelines with more stages, `|&`, time.
        (
            "git log --oneline | grep fix | head -20",
            "git log --oneline | grep fix",
            &["| head -20"],
        ),
        ("make |& tail -30", "make", &["|& tail -30"]),
        ("time make | tail -5", "time make", &["| tail -5"]),
        (
            "time -p make 2>&1 | tail -5",
            "time -p make",
            &["| tail -5", "2>&1"],
        ),
        ("time make 2>&1", "time make", &["2>&1"]),
        ("FOO=1 make | head -5", "FOO=1 make", &["| head -5"]),
        (
            "tail -n 100 app.log | grep ERROR | head -5",
            "tail -n 100 app.log | grep ERROR",
            &["| head -5"],
        ),
        (
            "grep -r 'a | b' src | head -5",
            "grep -r 'a | b' src",
            &["| head -5"],
        ),
        (
            "echo \"$(date)\" | head -1",
            "echo \"$(date)\"",
            &["| head -1"],
        ),
        ("cat < in.txt | head -3", "cat < in.txt", &["| head -3"]),
        (
            "./run.sh > out.log | head -3",
            "./run.sh > out.log",
            &["| head -3"],
        ),
        // Lists: only the last pipeline loses its filter; every single command its `2>&1`.
        ("a | head -5; b | tail -3", "a | head -5; b", &["| tail -3"]),
        ("a | head -5;b|tail -3;", "a | head -5;b;", &["| tail -3"]),
        (
            "a 2>&1; b 2>&1 | head -5",
            "a; b",
            &["2>&1", "| head -5", "2>&1"],
        ),
        ("make 2>&1|head -5", "make", &["| head -5", "2>&1"]),
        (
            "a | head -5 && b | tail -3",
            "a | head -5 && b",
            &["| tail -3"],
        ),
        ("a || b | head -5", "a || b", &["| head -5"]),
        ("a 2>&1 && b 2>&1", "a && b", &["2>&1", "2>&1"]),
        (
            "cd src && cargo test 2>&1 | tail -40",
            "cd src && cargo test",
            &["| tail -40", "2>&1"],
        ),
        ("a 2>&1 & b | head -5", "a & b", &["2>&1", "| head -5"]),
        ("! make 2>&1", "! make", &["2>&1"]),
        // Unicode before, inside and after the cut.
        (
            "echo héllo wörld | head -n 1",
            "echo héllo wörld",
            &["| head -n 1"],
        ),
        (
            "echo 日本語 2>&1 | head -2 # ✓",
            "echo 日本語 # ✓",
            &["| head -2", "2>&1"],
        ),
        (
            "echo ok; echo '🦀' | tail -1",
            "echo ok; echo '🦀'",
            &["| tail -1"],
        ),
    ];

    /// Inputs that must come back byte-for-byte with nothing stripped.
    const KEPT: &[&str] = &[
        // Following, offsets, negative or zero counts, other flags.
        "tail -f log | head -5",
        "tail -f log | grep x | head -5",
        "tail -Fn 100 log | grep x | head -5",
        "tail -n 100 log | head -5 | tail -2",
        "cat log | tail -f",
        "cat log | tail -F",
        "cat log | tail --follow=name",
        "cat log | tail -fn 5",
        "cat log | tail -n 5 -f",
        "ls | tail -n +2",
        "ls | tail +2",
        "ls | head -n -5",
        "ls | tail -n -5",
        "ls | head -0",
        "ls | head -n 0",
        "ls | head -n 5K",
        "ls | head -c 100",
        "ls | head -v",
        "ls | head -z -n 5",
        "ls | head -5 -q",
        "ls | head -n",
        "ls | head --lines",
        "ls | head -- -5",
        "ls | head -qn5",
        // File operands and redirections on the head/tail.
        "ls | head -5 file.txt",
        "head -5 file.txt",
        "ls | head -5 > out",
        "ls | head -5 2>/dev/null",
        "ls | head -5 2>&1",
        // Not the last stage, or a window of two filters.
        "ls | head -5 | sort",
        "ls | head -20 | tail -5",
        "ls | tail -20 | head -5",
        // Quoted, escaped or substituted text.
        "echo \"| head -5\"",
        "echo '| head -5'",
        "echo $(ls | head -5)",
        "echo `ls | head -5`",
        "diff <(ls | head -5) b",
        "ls | \"head\" -5",
        "ls | head \"-5\"",
        "ls | head -n \"$N\"",
        "ls | head -$N",
        "ls | h\\ead -5",
        "ls | \\head -5",
        // Multi-line input.
        "ls | head -5\necho done",
        "ls \\\n | head -5",
        "cat <<EOF | head -5\nx\nEOF",
        // Redirections that make 2>&1 meaningful, and pipes it feeds.
        "cmd > f 2>&1",
        "cmd 2>&1 > f",
        "cmd >> f 2>&1",
        "cmd 2>err 2>&1",
        "cmd < in 2>&1",
        "cmd 2>&1 | grep x",
        "cmd 2>&1 | head -5 | grep x",
        "cmd 2>& 1",
        "cmd 2 >&1",
        "cmd2>&1",
        "cmd 1>&2",
        "cmd 2>&1 >&2",
        "2>&1",
        "exec 2>/dev/null; cmd 2>&1",
        // Status steers something: `&&`/`||`, `!`, background.
        "make | tail -5 && echo ok",
        "make | tail -5 || echo failed",
        "! grep x f | head -1",
        "make | tail -5 &",
        "echo '🦀' | tail -1; echo ok",
        "make | tail -5; echo $?",
        "set -e; make | tail -5; echo built",
        "make | tail -5 & wait",
        // Compound commands, at top level or as the producer.
        "(ls | head -5)",
        "{ ls | head -5; }",
        "(make 2>&1)",
        "{ make; } 2>&1",
        "(cd src && make) | tail -5",
        "for f in *; do echo $f; done | head -5",
        "while true; do date; done | head -5",
        "if true; then ls | head -5; fi",
        "f() { ls | head -5; }",
        // Producers that may never end.
        "yes | head -5",
        "ping example.com | head -3",
        "kubectl logs -f pod | head -20",
        "journalctl --follow | tail -5",
        "tr -dc a-z < /dev/urandom | head -5",
        "cat /dev/zero | head -5",
        // Unparseable or degenerate.
        "",
        "   ",
        "|",
        "| head -5",
        "ls |",
        "ls | head -5 |",
        "ls && | head -5",
        "echo 'unterminated | head -5",
        "echo $(ls | head -5",
        "ls | head -5 )",
        "# ls | head -5",
        "ls # | head -5",
    ];

    #[test]
    fn strips_trailing_filters_and_redundant_stderr_duplication() {
        for &(input, command, stripped) in STRIPPED {
            let expected = Fixups {
                command: command.to_string(),
                stripped: stripped.iter().map(ToString::to_string).collect(),
            };
            assert_eq!(apply_bash_fixups(input), expected, "input: {input:?}");
        }
    }

    #[test]
    fn keeps_anything_that_would_change_meaning() {
        for &input in KEPT {
            let expected = Fixups {
                command: input.to_string(),
                stripped: Vec::new(),
            };
            assert_eq!(apply_bash_fixups(input), expected, "input: {input:?}");
        }
    }

    #[test]
    fn keeps_input_over_the_size_limit() {
        let long = format!("echo {} | head -5", "x".repeat(MAX_INPUT_BYTES));
        assert_eq!(apply_bash_fixups(&long).command, long);
        assert!(apply_bash_fixups(&long).stripped.is_empty());
    }

    #[test]
    fn survives_deep_nesting_at_the_size_limit() {
        let openers = [
            "(",
            "((",
            "( ((",
            "case a in a) ",
            "$(",
            "{ ",
            "\"$(",
            "`",
            "[[ ( ",
            "$((",
            "${",
            "$[",
            "\"${",
            "${a:-",
        ];
        for open in openers {
            let depth = MAX_INPUT_BYTES / open.len();
            let nested = open.repeat(depth);
            let fixups = apply_bash_fixups(&nested);
            assert_eq!(fixups.command, nested, "opener {open:?}");
        }
    }

    #[test]
    fn parses_quickly_at_the_backtracking_limit() {
        let worst = ["(", "((", "( ((", "case a in a) ", "( case a in a) "];
        for open in worst {
            let input = format!("{} ls | head -5", open.repeat(MAX_BACKTRACKING_OPENERS));
            let started = std::time::Instant::now();
            let fixups = apply_bash_fixups(&input);
            assert_eq!(fixups.command, input, "opener {open:?}");
            assert!(
                started.elapsed() < std::time::Duration::from_secs(2),
                "opener {open:?}"
            );
        }
    }

    #[test]
    fn is_idempotent_on_the_stripped_table() {
        for &(input, _, _) in STRIPPED {
            let once = apply_bash_fixups(input).command;
            let twice = apply_bash_fixups(&once);
            assert_eq!(twice.command, once, "input: {input:?}");
            assert!(twice.stripped.is_empty(), "input: {input:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_on_arbitrary_text(input in "\\PC*") {
            let fixups = apply_bash_fixups(&input);
            if fixups.stripped.is_empty() {
                prop_assert_eq!(fixups.command, input);
            } else {
                prop_assert!(fixups.command.len() < input.len());
            }
        }

        #[test]
        fn strips_generated_filters_exactly(
            // Words starting with `x` are never keywords, `exec` or never-ending markers.
            words in proptest::collection::vec("x[a-z0-9._/=-]{0,8}", 0..6),
            filter in "head|tail",
            count in 1u32..100_000,
            form in 0usize..4,
            duplicate_stderr in any::<bool>(),
        ) {
            let producer = std::iter::once("run".to_string()).chain(words).collect::<Vec<_>>();
            let producer = producer.join(" ");
            let args = [format!("-{count}"), format!("-n {count}"), format!("-n{count}"),
                format!("--lines={count}")];
            let removed = format!("| {filter} {}", args[form]);
            let redirect = if duplicate_stderr { " 2>&1" } else { "" };
            let input = format!("{producer}{redirect} {removed}");
            let mut stripped = vec![removed];
            stripped.extend(duplicate_stderr.then(|| "2>&1".to_string()));
            prop_assert_eq!(apply_bash_fixups(&input), Fixups { command: producer, stripped });
        }

        #[test]
        fn never_panics_on_shell_shaped_text(
            input in "([a-z0-9 ]|[|&;<>()'\"$`{}#\\\\\n-]|head|tail|2>&1| -n | -5 ){0,40}"
        ) {
            let fixups = apply_bash_fixups(&input);
            if fixups.stripped.is_empty() {
                prop_assert_eq!(fixups.command, input);
            }
        }
    }
}
