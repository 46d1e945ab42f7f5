//! The built-in filters, one file per tool family, and the table that picks one from the
//! program and subcommand. Every filter takes the cleaned transcript and returns its rewrite,
//! or `None` when it is unsure; the caller's safety net checks the result.

mod build;
mod cargo;
mod diff;
mod git;
mod go;
mod js;
mod listing;
mod python;

use super::command::Invocation;
use super::text::{
    Output, Transcript, lines, shorten_rules, squeeze, squeeze_repeats, squeeze_transcript,
};

/// Programs whose output is a file's content the agent asked for: never rewritten.
const PRINTS_FILES: &[&str] = &[
    "cat", "head", "tail", "less", "more", "sed", "awk", "grep", "egrep", "rg", "ag", "jq", "yq",
    "bat", "nl", "od", "xxd", "hexdump", "base64", "echo", "printf", "diff", "cut", "sort", "wc",
    "column", "strings", "readlink", "realpath", "pwd", "which", "type", "stat",
];

/// Runs of more same-shaped lines than this are collapsed by the generic fallback.
const GENERIC_SIMILAR_RUN: usize = 20;

/// The filter's name and rewrite for `invocation` (unknown: the generic fallback).
pub fn run(invocation: Option<&Invocation>, cleaned: &Transcript) -> Option<(String, String)> {
    let Some(invocation) = invocation else {
        return Some(("generic".into(), generic(cleaned)));
    };
    let program = invocation.program.as_str();
    if PRINTS_FILES.contains(&program) {
        return None;
    }
    let sub = invocation.subcommand().unwrap_or("");
    let (name, text) = match program {
        "cargo" => ("cargo", Some(cargo::cargo(cleaned))),
        "rustc" | "rustdoc" => ("rustc", Some(cargo::cargo(cleaned))),
        "npm" | "pnpm" | "yarn" | "bun" => ("npm", js::package_manager(sub, cleaned)),
        "tsc" => ("tsc", Some(squeeze(cleaned, None))),
        "eslint" => ("eslint", Some(js::eslint(cleaned))),
        "vitest" | "jest" => (program, Some(js::test_runner(cleaned))),
        "node" | "deno" | "bun-test" if invocation.has_flag("--test") => {
            ("node-test", Some(js::node_test(cleaned)))
        }
        "pytest" | "py.test" => ("pytest", Some(python::pytest(cleaned))),
        "pip" | "pip3" | "uv" => ("pip", Some(python::pip(cleaned))),
        "go" => ("go", Some(go::go(cleaned))),
        "git" => ("git", git::git(invocation, cleaned)),
        "make" | "gmake" | "ninja" => ("make", Some(build::make(cleaned))),
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" => ("gcc", Some(squeeze(cleaned, None))),
        "docker" | "podman" if matches!(sub, "build" | "buildx") => {
            ("docker", Some(build::docker_build(cleaned)))
        }
        "ls" => ("ls", listing::ls(cleaned)),
        "find" | "fd" => ("find", listing::find(cleaned)),
        "tree" => ("tree", listing::tree(cleaned)),
        _ => ("generic", Some(generic(cleaned))),
    };
    let text = text?;
    // A diff's or a listing's lines are content, not decoration.
    let text = match name {
        "git" | "ls" | "find" | "tree" => text,
        _ => shorten_rules(&text),
    };
    Some((name.to_string(), text))
}

/// The fallback for any other program: repeats and long runs of same-shaped lines collapsed.
pub fn generic(cleaned: &Transcript) -> String {
    squeeze_transcript(cleaned, Some(GENERIC_SIMILAR_RUN))
}

/// Drops the lines `drop` selects (never an important one), replacing each run of two or more
/// with a count note naming `what` (a lone line goes without a note: the note would be longer);
/// then the generic squeeze of exact repeats.
pub fn drop_lines(cleaned: &Transcript, what: &str, drop: impl Fn(&str) -> bool) -> String {
    drop_kinds(cleaned, |line| drop(line).then_some(what))
}

/// [`drop_lines`] for several kinds of line in one pass: `kind` names what a line to drop is,
/// and each run of one kind gets its own note. Kinds that alternate line by line (a status line,
/// a passing test, a status line…) are runs of one and so leave no note, where passes one kind
/// at a time would have joined the leftovers under one count; no line that matters is lost, only
/// the count of what was dropped.
pub fn drop_kinds<'k>(cleaned: &Transcript, kind: impl Fn(&str) -> Option<&'k str>) -> String {
    let mut out = Output::with_capacity(cleaned.len());
    let mut run: Option<(&str, usize)> = None;
    let note = |out: &mut Output, run: Option<(&str, usize)>| {
        if let Some((what, dropped)) = run.filter(|(_, dropped)| *dropped > 1) {
            out.omitted(dropped, what);
        }
    };
    for line in lines(cleaned) {
        let dropped_as = kind(line).filter(|_| !cleaned.is_important(line));
        if let (Some(what), Some((current, dropped))) = (dropped_as, run.as_mut())
            && what == *current
        {
            *dropped += 1;
            continue;
        }
        note(&mut out, run.take());
        match dropped_as {
            Some(what) => run = Some((what, 1)),
            None => out.line(line),
        }
    }
    note(&mut out, run);
    squeeze_repeats(out.finish())
}
