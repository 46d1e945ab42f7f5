//! `applyBashFixups`: strip output plumbing that only fights Shellwright's own
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
    Pipeline, Program, SeparatorOperator, SimpleCommand, Word,
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

/// Tokenizes and parses a one-line command within the bounds of the module documentation;
/// `None` for anything outside them or that brush-parser rejects. The caller catches panics.
pub(crate) fn parse_one_line(command: &str) -> Option<(Vec<Token>, Program)> {
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
    Some((tokens, program))
}

fn plan_cuts(command: &str) -> Option<Vec<Cut>> {
    let (tokens, program) = parse_one_line(command)?;
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
mod tests;
