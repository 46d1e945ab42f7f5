//! JavaScript tooling: npm / pnpm / yarn (install, ci, run, test), vitest and jest, the node
//! test runner (TAP and spec reporters), and eslint.
//!
//! - **install / ci**: funding notices and progress go; `added N packages`, audit results and
//!   every `npm warn` / `npm ERR!` stay.
//! - **run / test**: the `> pkg@1.0.0 test` / `> vitest run` banner goes, and the script's output
//!   is filtered by what it is recognised to be (vitest, jest, tsc, node's TAP), else generically.
//! - **vitest / jest**: passing tests (`✓`, `√`, `PASS file`) become counts; failing tests, their
//!   assertion, diff and code frame, and the `Test Files` / `Tests` summary stay.
//! - **node --test**: a passing test's TAP block (`# Subtest`, `ok N`, its YAML) becomes a count;
//!   `not ok` blocks and the `# tests/pass/fail` summary stay.

use std::sync::LazyLock;

use regex::Regex;

use super::common::{drop_kinds, drop_lines, generic};
use crate::text::{Output, Transcript, is_important, lines, squeeze};

static NPM_NOISE: LazyLock<Regex> = pattern!(
    r"^(\d+ packages? (is|are) looking for funding|\s*run `npm fund` for details|npm (notice|http fetch|timing|sill|verb)\b|Progress: resolved|Packages: \+|\+{5,}|Done in [\d.]+m?s|\[\d/\d\] )"
);

static SCRIPT_BANNER: LazyLock<Regex> = pattern!(r"^> \S");

static PASSED: LazyLock<Regex> = pattern!(r"^\s*(✓|√|✔)\s|^\s*PASS\s+\S");

/// A stack frame inside node itself (`at … (node:internal/…)`, or TAP's `Test.run (node:…)`).
static NODE_INTERNAL_FRAME: LazyLock<Regex> =
    pattern!(r"^\s+(at )?(async )?\S*\s*\(node:(internal/|async_hooks)[^)]*\)$");

static SEPARATOR: LazyLock<Regex> = pattern!(r"^\s*⎯+(\[\d+/\d+\]⎯*)?\s*$");

pub fn package_manager(subcommand: &str, cleaned: &Transcript) -> Option<String> {
    match subcommand {
        "install" | "i" | "ci" | "add" | "update" | "up" | "remove" | "rm" | "uninstall" => {
            Some(drop_lines(cleaned, "package manager notice line", |line| {
                NPM_NOISE.is_match(line)
            }))
        }
        "run" | "run-script" | "test" | "t" | "tst" | "exec" | "x" => Some(script_output(cleaned)),
        _ => Some(generic(cleaned)),
    }
}

/// A script's output without npm's banner, filtered by what produced it.
fn script_output(cleaned: &Transcript) -> String {
    let body = drop_lines(cleaned, "script banner line", |line| {
        SCRIPT_BANNER.is_match(line)
    });
    let body = Transcript::new(&body);
    if body.contains("Test Files") || body.contains("Test Suites:") {
        test_runner(&body)
    } else if body.contains("TAP version") || body.contains("\n# pass ") {
        node_test(&body)
    } else if body.contains("\n   Compiling ") || body.contains("test result:") {
        super::cargo::cargo(&body)
    } else {
        generic(&body)
    }
}

/// vitest and jest (default and verbose reporters).
pub fn test_runner(cleaned: &Transcript) -> String {
    drop_kinds(cleaned, |line| {
        if PASSED.is_match(line) {
            Some("passing test")
        } else if SEPARATOR.is_match(line) {
            Some("separator line")
        } else if NODE_INTERNAL_FRAME.is_match(line) {
            Some("node internal stack frame")
        } else {
            None
        }
    })
}

/// eslint's stylish output is already one line per problem: only repeats are collapsed.
pub fn eslint(cleaned: &Transcript) -> String {
    squeeze(cleaned, None)
}

/// The node test runner: TAP (the default when not on a terminal) or the spec reporter.
pub fn node_test(cleaned: &Transcript) -> String {
    let lines: Vec<&str> = lines(cleaned).collect();
    let mut out = Output::default();
    let mut passed = 0;
    let mut i = 0;
    while i < lines.len() {
        let block = passing_tap_block(&lines[i..]);
        if block > 0 {
            passed += 1;
            i += block;
            continue;
        }
        let line = lines[i];
        if PASSED.is_match(line) && !is_important(line) {
            passed += 1;
            i += 1;
            continue;
        }
        out.omitted(passed, "passing test");
        passed = 0;
        out.line(line);
        i += 1;
    }
    out.omitted(passed, "passing test");
    drop_lines(
        &Transcript::new(&out.finish()),
        "node internal stack frame",
        |line| NODE_INTERNAL_FRAME.is_match(line),
    )
}

/// The length of a passing test's TAP block at the start of `lines` (0 if there is none):
/// an optional `# Subtest:` line, `ok N - name`, and an indented YAML block `---` … `...`.
fn passing_tap_block(lines: &[&str]) -> usize {
    let mut i = 0;
    if lines
        .first()
        .is_some_and(|l| l.trim_start().starts_with("# Subtest: "))
    {
        i += 1;
    }
    let Some(result) = lines.get(i) else { return 0 };
    let result = result.trim_start();
    if !result.starts_with("ok ") || is_important(result) {
        return 0;
    }
    i += 1;
    if lines.get(i).is_some_and(|l| l.trim() == "---") {
        let end = lines[i..].iter().position(|l| l.trim() == "...");
        let Some(end) = end else { return 0 };
        if lines[i..=i + end].iter().any(|l| is_important(l)) {
            return 0;
        }
        i += end + 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_install_keeps_the_result_and_warnings() {
        let text = "npm warn deprecated request@2.88.2: request has been deprecated\n\nadded 116 packages in 6s\n\n14 packages are looking for funding\n  run `npm fund` for details\n";
        assert_eq!(
            package_manager("install", &Transcript::new(text)).as_deref(),
            Some(
                "npm warn deprecated request@2.88.2: request has been deprecated\n\nadded 116 packages in 6s\n\n[… 2 package manager notice lines omitted]\n"
            )
        );
    }

    #[test]
    fn vitest_and_jest_keep_failures_and_summary() {
        let vitest = " ❯ a.test.js (3 tests | 1 failed) 5ms\n     ✓ one 1ms\n     ✓ two 0ms\n     × three 2ms\n ⎯⎯⎯⎯⎯⎯⎯[1/1]⎯\n Test Files  1 failed (1)\n      Tests  1 failed | 2 passed (3)\n";
        assert_eq!(
            test_runner(&Transcript::new(vitest)),
            " ❯ a.test.js (3 tests | 1 failed) 5ms\n[… 2 passing tests omitted]\n     × three 2ms\n Test Files  1 failed (1)\n      Tests  1 failed | 2 passed (3)\n"
        );
        let jest = "PASS src/a.test.js\nFAIL src/b.test.js\n  ● b › fails\n\n    expect(received).toBe(expected)\n\nTests:       1 failed, 4 passed, 5 total\n";
        assert_eq!(
            test_runner(&Transcript::new(jest)),
            "FAIL src/b.test.js\n  ● b › fails\n\n    expect(received).toBe(expected)\n\nTests:       1 failed, 4 passed, 5 total\n"
        );
    }

    #[test]
    fn npm_test_drops_the_banner_and_filters_the_runner() {
        let text =
            "\n> proj@1.0.0 test\n> vitest run\n\n     ✓ one 1ms\n Test Files  1 passed (1)\n";
        assert_eq!(
            package_manager("test", &Transcript::new(text)).as_deref(),
            Some("\n[… 2 script banner lines omitted]\n\n Test Files  1 passed (1)\n")
        );
    }

    #[test]
    fn node_tap_keeps_failing_blocks() {
        let text = "TAP version 13\n# Subtest: a\nok 1 - a\n  ---\n  duration_ms: 0.8\n  ...\n# Subtest: b\nnot ok 2 - b\n  ---\n  error: |-\n    Expected 1\n  ...\n1..2\n# pass 1\n# fail 1\n";
        assert_eq!(
            node_test(&Transcript::new(text)),
            "TAP version 13\n[… 1 passing test omitted]\n# Subtest: b\nnot ok 2 - b\n  ---\n  error: |-\n    Expected 1\n  ...\n1..2\n# pass 1\n# fail 1\n"
        );
        let spec = "✔ a (0.5ms)\n✔ b (0.1ms)\n✖ c (1ms)\nℹ tests 3\nℹ fail 1\n";
        assert_eq!(
            node_test(&Transcript::new(spec)),
            "[… 2 passing tests omitted]\n✖ c (1ms)\nℹ tests 3\nℹ fail 1\n"
        );
    }
}
