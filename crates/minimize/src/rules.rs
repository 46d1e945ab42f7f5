//! User rules: a declarative JSON file (`filtersPath`) of filters that win over the built-in
//! ones. The format is documented in `docs/minimizer.md`:
//!
//! ```json
//! { "rules": [ {
//!     "name": "make",
//!     "match": "^make\\b",
//!     "strip": ["^make\\[\\d+\\]: (Entering|Leaving) directory"],
//!     "keep": ["..."],
//!     "collapse": ["^gcc "],
//!     "head": 40, "tail": 10,
//!     "onEmpty": "make: nothing printed",
//!     "examples": [ { "input": "…", "expected": "…" } ]
//! } ] }
//! ```
//!
//! A rule applies, in this order: `strip` (drop lines matching any pattern), `keep` (if given,
//! drop lines matching none), `collapse` (a run of two or more consecutive lines matching the
//! same pattern becomes its first line and a count), `head`/`tail` (keep the first and last
//! lines around a count), `onEmpty` (the text when nothing is left). Important lines are never
//! dropped: as for built-in filters, a result missing one leaves the output unchanged.
//!
//! Loading checks everything and runs every example through the same path a real transcript
//! takes, so a file that loads is a file whose examples pass.

use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;

use super::text::{Output, clean, omitted_note};

/// Why a rules file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct RuleError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RuleSpec {
    name: String,
    #[serde(rename = "match")]
    command: String,
    #[serde(default)]
    strip: Vec<String>,
    keep: Option<Vec<String>>,
    #[serde(default)]
    collapse: Vec<String>,
    head: Option<usize>,
    tail: Option<usize>,
    on_empty: Option<String>,
    examples: Vec<Example>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Example {
    input: String,
    expected: String,
}

/// One loaded rule.
#[derive(Debug)]
pub struct Rule {
    pub name: String,
    command: Regex,
    strip: Vec<Regex>,
    keep: Option<Vec<Regex>>,
    collapse: Vec<Regex>,
    head: Option<usize>,
    tail: Option<usize>,
    on_empty: Option<String>,
}

/// The rules of one file, in file order.
#[derive(Debug, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// Reads, compiles and checks `path` (see the module documentation).
    pub fn load(path: &Path) -> Result<Self, RuleError> {
        let fail = |message: String| RuleError {
            path: path.to_path_buf(),
            message,
        };
        let source = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        Self::parse(&source).map_err(fail)
    }

    /// Compiles and checks rules from JSON text; the error says which rule and why.
    pub fn parse(source: &str) -> Result<Self, String> {
        let file: File = serde_json::from_str(source).map_err(|e| format!("invalid JSON: {e}"))?;
        let mut rules = Vec::with_capacity(file.rules.len());
        for (index, spec) in file.rules.into_iter().enumerate() {
            let label = format!("rule {} ({:?})", index + 1, spec.name);
            let (rule, examples) = Rule::compile(spec).map_err(|e| format!("{label}: {e}"))?;
            rule.check_examples(&examples)
                .map_err(|e| format!("{label}: {e}"))?;
            rules.push(rule);
        }
        Ok(Self { rules })
    }

    /// The first rule whose pattern matches the command line.
    pub fn matching(&self, command: &str) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|rule| rule.command.is_match(command.trim()))
    }
}

fn compile_all(patterns: &[String], field: &str) -> Result<Vec<Regex>, String> {
    patterns
        .iter()
        .map(|p| Regex::new(p).map_err(|e| format!("{field}: {e}")))
        .collect()
}

impl Rule {
    fn compile(spec: RuleSpec) -> Result<(Self, Vec<Example>), String> {
        if spec.name.trim().is_empty() {
            return Err("name must not be empty".into());
        }
        let rule = Self {
            command: Regex::new(&spec.command).map_err(|e| format!("match: {e}"))?,
            strip: compile_all(&spec.strip, "strip")?,
            keep: spec
                .keep
                .as_deref()
                .map(|keep| compile_all(keep, "keep"))
                .transpose()?,
            collapse: compile_all(&spec.collapse, "collapse")?,
            head: spec.head,
            tail: spec.tail,
            on_empty: spec.on_empty,
            name: spec.name,
        };
        if spec.examples.is_empty() {
            return Err("examples must hold at least one example".into());
        }
        Ok((rule, spec.examples))
    }

    /// Each example's input, minimized as a transcript would be, must equal its expected text.
    fn check_examples(&self, examples: &[Example]) -> Result<(), String> {
        for (index, example) in examples.iter().enumerate() {
            let cleaned = clean(&example.input);
            let text = self.apply(&cleaned);
            let actual = if super::keeps_important_lines(&super::Transcript::new(&cleaned), &text) {
                text
            } else {
                example.input.clone()
            };
            if actual != example.expected {
                return Err(format!(
                    "example {} does not pass: expected {:?}, got {:?}",
                    index + 1,
                    example.expected,
                    actual
                ));
            }
        }
        Ok(())
    }

    /// The rule's output for a cleaned transcript.
    pub fn apply(&self, cleaned: &str) -> String {
        let lines: Vec<&str> = cleaned
            .lines()
            .filter(|line| !self.strip.iter().any(|p| p.is_match(line)))
            .filter(|line| {
                self.keep
                    .as_ref()
                    .is_none_or(|keep| keep.iter().any(|p| p.is_match(line)))
            })
            .collect();
        let lines = self.collapse_runs(lines);
        let text = self.head_and_tail(lines);
        match &self.on_empty {
            Some(empty) if text.trim().is_empty() => format!("{empty}\n"),
            _ => text,
        }
    }

    fn collapse_runs(&self, lines: Vec<&str>) -> Vec<String> {
        let mut out = Vec::with_capacity(lines.len());
        let mut i = 0;
        while i < lines.len() {
            let pattern = self.collapse.iter().find(|p| p.is_match(lines[i]));
            let run = pattern.map_or(1, |p| {
                lines[i..].iter().take_while(|l| p.is_match(l)).count()
            });
            out.push(lines[i].to_string());
            if run > 1 {
                out.push(omitted_note(run - 1, "similar line"));
            }
            i += run;
        }
        out
    }

    fn head_and_tail(&self, lines: Vec<String>) -> String {
        let (head, tail) = (self.head.unwrap_or(usize::MAX), self.tail.unwrap_or(0));
        let mut out = Output::default();
        if self.head.is_none() && self.tail.is_none() || lines.len() <= head.saturating_add(tail) {
            lines.iter().for_each(|line| out.line(line));
            return out.finish();
        }
        let head = head.min(lines.len());
        lines[..head].iter().for_each(|line| out.line(line));
        out.omitted(lines.len() - head - tail, "more line");
        lines[lines.len() - tail..]
            .iter()
            .for_each(|line| out.line(line));
        out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAKE_RULES: &str = r#"{ "rules": [ {
        "name": "make",
        "match": "^make\\b",
        "strip": ["^make\\[\\d+\\]: (Entering|Leaving) directory"],
        "collapse": ["^gcc "],
        "onEmpty": "(make printed nothing)",
        "examples": [
            { "input": "make[1]: Entering directory '/a'\ngcc -c a.c\ngcc -c b.c\ngcc -c c.c\nmake[1]: Leaving directory '/a'\n",
              "expected": "gcc -c a.c\n[… 2 similar lines omitted]\n" },
            { "input": "make[1]: Entering directory '/a'\n", "expected": "(make printed nothing)\n" },
            { "input": "gcc -c a.c\na.c:1:1: error: bad\ngcc -c b.c\n",
              "expected": "gcc -c a.c\na.c:1:1: error: bad\ngcc -c b.c\n" }
        ]
    } ] }"#;

    #[test]
    fn a_rule_file_loads_when_its_examples_pass() {
        let rules = RuleSet::parse(MAKE_RULES).expect("examples pass");
        let rule = rules.matching("make -j2").expect("matches make");
        assert_eq!(rule.name, "make");
        assert!(rules.matching("cmake .").is_none());
    }

    #[test]
    fn the_documented_example_file_loads() {
        let doc = include_str!("../../../docs/minimizer.md");
        let json = doc
            .split("```json\n")
            .nth(1)
            .and_then(|rest| rest.split("\n```").next())
            .expect("docs/minimizer.md has a json block");
        let rules = RuleSet::parse(json).expect("the documented rules load");
        assert_eq!(
            rules.matching("make -k").map(|r| r.name.as_str()),
            Some("make")
        );
    }

    #[test]
    fn keep_head_and_tail() {
        let source = r#"{ "rules": [ { "name": "log", "match": "^tail", "keep": ["^\\d"],
            "head": 2, "tail": 1,
            "examples": [ { "input": "1\nx\n2\n3\n4\n5\n", "expected": "1\n2\n[… 2 more lines omitted]\n5\n" } ] } ] }"#;
        RuleSet::parse(source).expect("examples pass");
    }

    #[test]
    fn a_failing_example_or_bad_field_is_a_clear_error() {
        let wrong = MAKE_RULES.replace(
            "\"expected\": \"(make printed nothing)\\n\"",
            "\"expected\": \"x\"",
        );
        assert_eq!(
            RuleSet::parse(&wrong).unwrap_err(),
            "rule 1 (\"make\"): example 2 does not pass: expected \"x\", got \"(make printed nothing)\\n\""
        );
        let dropping_errors = r#"{ "rules": [ { "name": "e", "match": "x", "strip": ["error"],
            "examples": [ { "input": "error: x\n", "expected": "" } ] } ] }"#;
        assert_eq!(
            RuleSet::parse(dropping_errors).unwrap_err(),
            "rule 1 (\"e\"): example 1 does not pass: expected \"\", got \"error: x\\n\""
        );
        let bad_regex = r#"{ "rules": [ { "name": "r", "match": "(", "examples": [] } ] }"#;
        assert!(
            RuleSet::parse(bad_regex)
                .unwrap_err()
                .starts_with("rule 1 (\"r\"): match: regex parse error")
        );
        let no_examples = r#"{ "rules": [ { "name": "r", "match": "x", "examples": [] } ] }"#;
        assert_eq!(
            RuleSet::parse(no_examples).unwrap_err(),
            "rule 1 (\"r\"): examples must hold at least one example"
        );
        let unknown = r#"{ "rules": [ { "name": "r", "match": "x", "examples": [], "hed": 2 } ] }"#;
        assert!(
            RuleSet::parse(unknown)
                .unwrap_err()
                .starts_with("invalid JSON: unknown field `hed`")
        );
        let missing = RuleSet::load(Path::new("/nonexistent/rules.json")).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "/nonexistent/rules.json: No such file or directory (os error 2)"
        );
    }
}
