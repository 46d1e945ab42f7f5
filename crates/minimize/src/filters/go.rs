//! go build / test / vet: module downloads and the verbose runner's `=== RUN` / `--- PASS`
//! lines become counts; compile errors, `--- FAIL`, panics, `FAIL` and `ok` package lines stay.

use crate::text::Transcript;
use std::sync::LazyLock;

use regex::Regex;

use super::common::drop_lines;

static GO_NOISE: LazyLock<Regex> = pattern!(
    r"^(go: downloading |go: finding |go: extracting |\s*=== (RUN|PAUSE|CONT|NAME) |\s*--- (PASS|SKIP): )"
);

pub fn go(cleaned: &Transcript) -> String {
    drop_lines(cleaned, "download or passing test line", |line| {
        GO_NOISE.is_match(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_test_keeps_failures() {
        let text = "go: downloading golang.org/x/text v0.3.0\n=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    b_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/m\t0.002s\nok  \texample.com/n\t0.001s\n";
        assert_eq!(
            go(&Transcript::new(text)),
            "[… 4 download or passing test lines omitted]\n    b_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/m\t0.002s\nok  \texample.com/n\t0.001s\n"
        );
        let build = "# example.com/m\n./main.go:5:2: undefined: foo\n";
        assert_eq!(go(&Transcript::new(build)), build);
    }
}
