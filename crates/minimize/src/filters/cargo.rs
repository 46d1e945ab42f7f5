//! cargo (build, check, clippy, run, test, …) and rustc: cargo's status lines (`Compiling`,
//! `Checking`, `Downloaded`, `Locking`, …) and passing tests become counts, and a panic's stack
//! backtrace keeps only the frames of the user's code. Every diagnostic is kept whole with its
//! `-->` location, source excerpt and notes, as are `Finished`, `Running`, failures and
//! `test result:` summaries.

use std::sync::LazyLock;

use regex::Regex;

use super::common::drop_kinds;
use crate::text::{Output, Transcript, is_important, lines, squeeze_repeats};

static STATUS: LazyLock<Regex> = pattern!(
    r"^\s*(Compiling|Checking|Downloaded|Downloading|Locking|Adding|Updating|Fresh|Blocking|Documenting|Packaging|Verifying|Archiving|Installing|Installed|Replacing|Unpacking|Removing|Migrating|Vendoring) \S"
);

/// A backtrace frame's number, before its function (`  12: core::panicking::panic`).
static FRAME: LazyLock<Regex> = pattern!(r"^\s+\d+: ");

/// A frame's location line, before the path (`             at ./src/lib.rs:20:23`).
static FRAME_LOCATION: LazyLock<Regex> = pattern!(r"^\s+at ");

pub fn cargo(cleaned: &Transcript) -> String {
    let text = drop_kinds(cleaned, |line| {
        if passing_test(line) {
            Some("passing test")
        } else if is_status(line) {
            Some("cargo progress line")
        } else {
            None
        }
    });
    squeeze_repeats(trim_backtraces(text))
}

/// libtest's line for a test that passed or was ignored: `test <name> ... ok`. (By hand: a test
/// run is mostly such lines, and a regex per line cost more than the rest of the filter.)
fn passing_test(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("test ") else {
        return false;
    };
    let name = rest
        .strip_suffix(" ... ok")
        .or_else(|| rest.strip_suffix(" ... ignored"));
    name.and_then(|name| name.chars().next())
        .is_some_and(|first| !first.is_whitespace())
}

/// A cargo status line (`   Compiling foo v0.1.0`); the cheap first test spares most lines the
/// regex.
fn is_status(line: &str) -> bool {
    line.trim_start()
        .starts_with(|c: char| c.is_ascii_uppercase())
        && STATUS.is_match(line)
}

/// Keeps a backtrace's header and the frames outside the standard library and the test harness.
fn trim_backtraces(text: String) -> String {
    if memchr::memmem::find(text.as_bytes(), b"stack backtrace:").is_none() {
        return text;
    }
    let lines: Vec<&str> = lines(&text).collect();
    let mut out = Output::with_capacity(text.len());
    let mut i = 0;
    let mut in_backtrace = false;
    let mut hidden = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start() == "stack backtrace:" {
            in_backtrace = true;
            out.line(line);
            i += 1;
            continue;
        }
        let function = in_backtrace.then(|| after(&FRAME, line)).flatten();
        let Some(function) = function else {
            out.omitted(hidden, "library backtrace line");
            hidden = 0;
            in_backtrace = false;
            out.line(line);
            i += 1;
            continue;
        };
        let location = lines
            .get(i + 1)
            .and_then(|next| after(&FRAME_LOCATION, next));
        let span = 1 + usize::from(location.is_some());
        if is_library_frame(function, location) && !is_important(line) {
            hidden += span;
        } else {
            out.omitted(hidden, "library backtrace line");
            hidden = 0;
            lines[i..i + span].iter().for_each(|l| out.line(l));
        }
        i += span;
    }
    out.omitted(hidden, "library backtrace line");
    out.finish()
}

/// The rest of `line` after `prefix`, if it goes on with something other than whitespace. (A
/// search for the prefix and a look at what follows: captures cost several times more, on every
/// frame of every backtrace.)
fn after<'a>(prefix: &Regex, line: &'a str) -> Option<&'a str> {
    let rest = &line[prefix.find(line)?.end()..];
    rest.starts_with(|c: char| !c.is_whitespace())
        .then_some(rest)
}

fn is_library_frame(function: &str, location: Option<&str>) -> bool {
    const LIBRARY: &[&str] = &[
        "std::",
        "core::",
        "alloc::",
        "__rustc::",
        "test::",
        "<fn()",
        "<core::",
        "<alloc::",
        "<std::",
        "<usize as core::",
    ];
    let library_location = location.is_some_and(|l| {
        l.starts_with("/rustc/") || l.contains("/.cargo/registry/") || l.contains("/library/")
    });
    let library_function = LIBRARY.iter().any(|prefix| function.starts_with(prefix));
    library_function || library_location && !function.contains("::{{closure}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_and_passing_tests_become_counts() {
        let text = "   Compiling a v0.1.0\n   Compiling b v1.0.0 (/x)\nwarning: unused\n --> src/lib.rs:2:9\n  |\n2 |     let x = 3;\n  |         ^\n\n    Finished `dev` profile\nrunning 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed\n";
        assert_eq!(
            cargo(&Transcript::new(text)),
            ("[… 2 cargo progress lines omitted]\nwarning: unused\n --> src/lib.rs:2:9\n  |\n2 |     let x = 3;\n  |         ^\n\n    Finished `dev` profile\nrunning 3 tests\n[… 2 passing tests omitted]\ntest c ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed\n")
        );
    }

    #[test]
    fn backtraces_keep_user_frames() {
        let text = "stack backtrace:\n   0: __rustc::rust_begin_unwind\n             at /rustc/abc/library/std/src/panicking.rs:689:5\n   1: core::panicking::panic_fmt\n             at /rustc/abc/library/core/src/panicking.rs:80:14\n   2: mycrate::tests::adds\n             at ./src/lib.rs:20:23\n   3: core::ops::function::FnOnce::call_once\n             at /rustc/abc/library/core/src/ops/function.rs:250:5\nnote: Some details are omitted\n";
        assert_eq!(
            trim_backtraces(text.to_string()),
            "stack backtrace:\n[… 4 library backtrace lines omitted]\n   2: mycrate::tests::adds\n             at ./src/lib.rs:20:23\n[… 2 library backtrace lines omitted]\nnote: Some details are omitted\n"
        );
    }
}
