//! shellwright-minimize: what a coding agent should read of a command and its output.
//!
//! Owns two rewrites that need no process and no shell session, only brush-parser's view of a
//! command line: the output minimizer ([`Minimizer`]) and `applyBashFixups` ([`fixups`]). The shell
//! runtime (`shellwright-shell`) captures a run's transcript and calls the minimizer when the run
//! ends. Nothing here starts a process, reads a file descriptor or knows Node; the one thread it
//! starts prepares captured transcripts while runs stream ([`Capture`]).
//!
//! The minimizer rewrites a finished run's transcript: progress, download counters, passing tests
//! and redraws go; errors, warnings, failures, panics, tracebacks, test summaries and compiler
//! context stay. Options `only`, `except`, `max_capture_bytes`, `filters_path`; the result names
//! its `filter` and carries the `text`, the `original_text` and both byte counts:
//!
//! 1. The run's transcript is captured up to `max_capture_bytes` ([`Capture`]), and cleaned and
//!    searched for its important lines as it streams, so that what is left when the run ends is
//!    the filter. A longer one, a run that was cancelled or timed out, and a command whose
//!    producer cannot be told apart (see [`command`]) are left unchanged.
//! 2. The user's rules ([`rules`]) are tried first, in file order, by regex on the command line.
//! 3. Otherwise the built-in filter for the program and subcommand (`filters/`, one file per
//!    family of programs), or the generic fallback. Programs that print files (`cat`, `grep`,
//!    `sed`, …) are never touched.
//! 4. Safety net: the result must contain every [important](text::is_important) line of the
//!    cleaned transcript verbatim and be shorter than the original; otherwise the output is left
//!    unchanged. A filter that panics leaves it unchanged too.
//!
//! ```
//! use shellwright_minimize::{Minimizer, MinimizerOptions, apply_bash_fixups};
//!
//! let fixed = apply_bash_fixups("cargo build 2>&1 | head -50");
//! assert_eq!(fixed.command, "cargo build");
//!
//! let minimizer = Minimizer::new(MinimizerOptions::default()).expect("no rules file");
//! let transcript = "   Compiling a v0.1.0\n   Compiling b v0.1.0\nerror[E0425]: cannot find value `x`\n";
//! if let Ok(minimized) = minimizer.minimize_owned("cargo build", Some(101), transcript.into()) {
//!     assert!(minimized.text.contains("error[E0425]"));
//! }
//! ```

/// A regex compiled on first use, for a `static` (built-in patterns are constants: the unit
/// tests compile every one of them).
macro_rules! pattern {
    ($re:expr) => {
        std::sync::LazyLock::new(|| regex::Regex::new($re).expect("valid built-in pattern"))
    };
}

mod capture;
pub mod command;
mod filters;
pub mod fixups;
mod lines;
pub mod rules;
pub mod text;

use crate::text::lines;
use std::collections::HashSet;
use std::path::PathBuf;

pub use capture::Capture;
pub use fixups::{Fixups, apply_bash_fixups};
pub use rules::{RuleError, RuleSet};
pub use text::Transcript;

/// The default capture limit: above it the raw output is kept.
pub const DEFAULT_MAX_CAPTURE_BYTES: usize = 4 * 1024 * 1024;

/// What a caller chose (the `enabled` switch is the caller's: no [`Minimizer`] means off).
#[derive(Clone, Debug, Default)]
pub struct MinimizerOptions {
    /// Program names to minimize; empty means every program.
    pub only: Vec<String>,
    /// Program names never minimized.
    pub except: Vec<String>,
    /// `None` means [`DEFAULT_MAX_CAPTURE_BYTES`].
    pub max_capture_bytes: Option<usize>,
    /// A JSON file of user rules.
    pub filters_path: Option<PathBuf>,
}

/// A rewritten transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Minimized {
    /// The filter's name: `cargo`, `git`, `generic`, `rule:<name>`, …
    pub filter: String,
    pub text: String,
    pub original_text: String,
    pub input_bytes: usize,
    pub output_bytes: usize,
}

impl Minimized {
    fn new(filter: String, mut text: String, original_text: String) -> Self {
        // Filters write into room for their whole input.
        text.shrink_to_fit();
        Self {
            filter,
            input_bytes: original_text.len(),
            output_bytes: text.len(),
            text,
            original_text,
        }
    }
}

/// Options checked and user rules loaded, ready for any number of runs.
#[derive(Debug)]
pub struct Minimizer {
    only: Vec<String>,
    except: Vec<String>,
    max_capture_bytes: usize,
    rules: RuleSet,
}

impl Minimizer {
    /// Loads and checks the user rules (each rule's examples must pass).
    pub fn new(options: MinimizerOptions) -> Result<Self, RuleError> {
        let rules = match &options.filters_path {
            Some(path) => RuleSet::load(path)?,
            None => RuleSet::default(),
        };
        Ok(Self {
            only: options.only,
            except: options.except,
            max_capture_bytes: options
                .max_capture_bytes
                .unwrap_or(DEFAULT_MAX_CAPTURE_BYTES),
            rules,
        })
    }

    pub fn max_capture_bytes(&self) -> usize {
        self.max_capture_bytes
    }

    /// A capture sized for this minimizer.
    pub fn capture(&self) -> Capture {
        Capture::new(self.max_capture_bytes)
    }

    /// Minimizes what `capture` holds for `command`, which ended with `exit_code` (`None` when
    /// cancelled or timed out: then nothing is rewritten). Takes the text out of `capture`: the
    /// run is over, and the result keeps it as `original_text` without a copy.
    pub fn minimize_capture(
        &self,
        command: &str,
        exit_code: Option<i32>,
        capture: &Capture,
    ) -> Option<Minimized> {
        exit_code?;
        let captured = capture.take()?;
        let invocation = self.rewritable(command, &captured.original)?;
        let transcript = captured.transcript();
        let (filter, text) = self.rewrite(
            command,
            invocation.as_ref(),
            captured.original.len(),
            &transcript,
        )?;
        drop(transcript);
        Some(Minimized::new(filter, text, captured.original))
    }

    /// Minimizes `output`, the whole transcript of `command`, which ended with `exit_code` (as
    /// [`minimize_capture`](Self::minimize_capture) does), for a caller that collected the
    /// transcript itself: the result keeps `output` as `original_text` without a copy, and `Err`
    /// gives it back when it is left unchanged.
    pub fn minimize_owned(
        &self,
        command: &str,
        exit_code: Option<i32>,
        output: String,
    ) -> Result<Minimized, String> {
        match exit_code.and_then(|_| self.filter_and_text(command, &output)) {
            Some((filter, text)) => Ok(Minimized::new(filter, text, output)),
            None => Err(output),
        }
    }

    /// The rewritten transcript of `command`, or `None` to keep `output` as it is.
    pub fn minimize(&self, command: &str, output: &str) -> Option<Minimized> {
        let (filter, text) = self.filter_and_text(command, output)?;
        Some(Minimized::new(filter, text, output.to_string()))
    }

    fn filter_and_text(&self, command: &str, output: &str) -> Option<(String, String)> {
        let invocation = self.rewritable(command, output)?;
        let cleaned = text::clean(output);
        self.rewrite(
            command,
            invocation.as_ref(),
            output.len(),
            &Transcript::new(&cleaned),
        )
    }

    /// The invocation that printed `output`, when the options let the minimizer rewrite it.
    fn rewritable(&self, command: &str, output: &str) -> Option<Option<command::Invocation>> {
        if output.len() > self.max_capture_bytes || output.is_empty() {
            return None;
        }
        let invocation = command::producing_invocation(command);
        let program = invocation.as_ref().map(|inv| inv.program.as_str());
        self.allows(program).then_some(invocation)
    }

    fn allows(&self, program: Option<&str>) -> bool {
        let listed = |list: &[String]| program.is_some_and(|p| list.iter().any(|l| l == p));
        (self.only.is_empty() || listed(&self.only)) && !listed(&self.except)
    }

    /// The filter's name and output, once it passed the safety net; `None` (output unchanged)
    /// if the filter panicked. `cleaned` is the transcript of `original_len` bytes, cleaned.
    fn rewrite(
        &self,
        command: &str,
        invocation: Option<&command::Invocation>,
        original_len: usize,
        cleaned: &Transcript,
    ) -> Option<(String, String)> {
        unless_it_panics(|| {
            let (filter, text) = match self.rules.matching(command) {
                Some(rule) => (format!("rule:{}", rule.name), rule.apply(cleaned)),
                None => filters::run(invocation, cleaned)?,
            };
            (text.len() < original_len && keeps_important_lines(cleaned, &text))
                .then_some((filter, text))
        })
    }
}

/// `rewrite()`, or `None` (output unchanged) if it panicked.
fn unless_it_panics<T>(rewrite: impl FnOnce() -> Option<T>) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(rewrite))
        .ok()
        .flatten()
}

/// Whether every important line of `cleaned` appears verbatim (up to trailing blanks) in `text`.
pub fn keeps_important_lines(cleaned: &Transcript, text: &str) -> bool {
    let mut missing: HashSet<&str> = possibly_dropped(cleaned, text)
        .filter(|line| cleaned.is_important(line))
        .map(str::trim_end)
        .collect();
    // Only lines as long as a missing one can be it: most of `text` is never hashed.
    let lengths: HashSet<usize> = missing.iter().map(|line| line.len()).collect();
    for line in lines(text).map(str::trim_end) {
        if missing.is_empty() {
            break;
        }
        if lengths.contains(&line.len()) {
            missing.remove(line);
        }
    }
    missing.is_empty()
}

/// The lines of `cleaned` not seen kept in `text`, found by walking both in step: filters keep
/// lines in order and put a note or a rewritten line in place of what they leave out, so a line
/// equal to the next kept line (or to the one after it, past such a note) is in `text` and needs
/// no important-line test. Any other line is returned, so a line that is kept out of step is
/// only tested needlessly, never skipped.
fn possibly_dropped<'a>(cleaned: &'a str, text: &'a str) -> impl Iterator<Item = &'a str> {
    let mut kept = lines(text).map(str::trim_end);
    let mut ahead = (kept.next(), kept.next());
    lines(cleaned).filter(move |line| {
        let line = Some(line.trim_end());
        if ahead.0 == line {
            ahead = (ahead.1, kept.next());
        } else if ahead.1 == line {
            ahead = (kept.next(), kept.next());
        } else {
            return true;
        }
        false
    })
}

#[cfg(test)]
mod tests;
