//! Python: pytest (the session header and passing-test progress go; failures, tracebacks, `E`
//! lines and the short summary stay) and pip (download and progress lines become counts;
//! `Successfully installed`, warnings and errors stay).

use crate::text::Transcript;
use std::sync::LazyLock;

use regex::Regex;

use super::common::drop_lines;

static PYTEST_NOISE: LazyLock<Regex> = pattern!(
    r"^(platform \S+ -- Python|cachedir: |rootdir: |configfile: |plugins: |collecting \.\.\. ?$)|^\S+\.py [.sx]+\s+\[\s*\d+%\]$|^\S+::\S+ PASSED\s+\[\s*\d+%\]$"
);

static PIP_NOISE: LazyLock<Regex> = pattern!(
    r"^\s*(Collecting |Downloading |Using cached |Requirement already satisfied: |Obtaining |Preparing metadata|Getting requirements|Building wheel|Created wheel|Stored in directory|Looking in indexes|Looking in links|━|\|)"
);

pub fn pytest(cleaned: &Transcript) -> String {
    drop_lines(cleaned, "passing test or header line", |line| {
        PYTEST_NOISE.is_match(line)
    })
}

pub fn pip(cleaned: &Transcript) -> String {
    drop_lines(cleaned, "download line", |line| PIP_NOISE.is_match(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_keeps_failures_and_summary() {
        let text = "platform linux -- Python 3.11.7, pytest-9.2.0\nrootdir: /p\ncollected 3 items\n\nt.py ..                                  [ 66%]\nt.py F                                   [100%]\nE       assert 6 == 7\nFAILED t.py::test_sum - assert 6 == 7\n==== 1 failed, 2 passed in 0.05s ====\n";
        assert_eq!(
            pytest(&Transcript::new(text)),
            "[… 2 passing test or header lines omitted]\ncollected 3 items\n\nt.py F                                   [100%]\nE       assert 6 == 7\nFAILED t.py::test_sum - assert 6 == 7\n==== 1 failed, 2 passed in 0.05s ====\n"
        );
        let verbose = "t.py::test_a PASSED                       [ 50%]\nt.py::test_b FAILED                       [100%]\n";
        assert_eq!(
            pytest(&Transcript::new(verbose)),
            "t.py::test_b FAILED                       [100%]\n"
        );
    }

    #[test]
    fn pip_keeps_the_outcome() {
        let text = "Collecting pytest\n  Downloading pytest-9.2.0-py3-none-any.whl (411 kB)\n     ━━━━━━━━━━ 411.8/411.8 kB 5.1 MB/s eta 0:00:00\nInstalling collected packages: pytest\nSuccessfully installed pytest-9.2.0\nWARNING: You are using pip version 23.0\n";
        assert_eq!(
            pip(&Transcript::new(text)),
            "[… 3 download lines omitted]\nInstalling collected packages: pytest\nSuccessfully installed pytest-9.2.0\nWARNING: You are using pip version 23.0\n"
        );
    }
}
