//! The built-in filters, one file per tool family, and the table that picks one from the
//! program and subcommand. Every filter takes the cleaned transcript and returns its rewrite,
//! or `None` when it is unsure; the caller's safety net checks the result. A new filter is a
//! file here with a row in [`run`]'s table; what several filters share is in `common`.

mod build;
mod cargo;
mod common;
mod diff;
mod git;
mod go;
mod js;
mod listing;
mod python;

use super::command::Invocation;
use super::text::{Transcript, shorten_rules, squeeze};
use common::generic;

/// Programs whose output is a file's content the agent asked for: never rewritten.
const PRINTS_FILES: &[&str] = &[
    "cat", "head", "tail", "less", "more", "sed", "awk", "grep", "egrep", "rg", "ag", "jq", "yq",
    "bat", "nl", "od", "xxd", "hexdump", "base64", "echo", "printf", "diff", "cut", "sort", "wc",
    "column", "strings", "readlink", "realpath", "pwd", "which", "type", "stat",
];

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
