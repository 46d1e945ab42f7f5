//! git: `log` and `show` headers become one line per commit (`commit 1a2b3c4d · 2026-11-23 14:47
//! +0000 · Author`, the day, time zone and author shown only when they differ from the previous
//! commit's, the message kept verbatim); diffs and `--stat` lines are compacted by [`super::diff`]; `status`
//! loses its `(use "git …")` hints; `push`, `pull`, `fetch` and `clone` lose their
//! object-transfer progress. Custom formats (`--oneline`, `--format`, `--pretty`) keep their
//! lines and only get their diffs compacted. `git log --stat` is summarised
//! ([`summarise_stat_log`]): each commit's header, subject and totals line, the message bodies
//! and the per-file lines counted once at the top, with how to see a commit whole.

use std::sync::LazyLock;

use regex::Regex;

use super::common::{drop_lines, generic};
use super::diff;
use crate::command::Invocation;
use crate::text::{Output, Transcript, is_important, lines, squeeze_repeats};

static TRANSFER: LazyLock<Regex> = pattern!(
    r"^(remote: )?(Enumerating objects|Counting objects|Compressing objects|Writing objects|Receiving objects|Resolving deltas|Unpacking objects|Total \d+|Delta compression|Updating files|Checking out files|Checking connectivity)\b"
);

static STATUS_ENTRY: LazyLock<Regex> = pattern!(
    r"^(modified|deleted|new file|renamed|copied|typechange|both modified|both added|both deleted|added by us|added by them|deleted by us|deleted by them|unmerged):\s+(.*)$"
);

static STATUS_HINT: LazyLock<Regex> = pattern!(r#"^\s+\((use "git |commit or discard|use -u )"#);

/// A `--stat` line for one file: its changed lines and bar, a binary file's sizes, or a bare 0.
static FILE_STAT: LazyLock<Regex> =
    pattern!(r"^ \S.*? +\| +(\d+(?: [+-]*)?|Bin \d+ -> \d+ bytes)$");

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

const MONTH_NUMBERS: [&str; 12] = [
    "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12",
];

/// git's options that take a value before the subcommand.
const GLOBAL_WITH_VALUE: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace"];

pub fn git(invocation: &Invocation, cleaned: &Transcript) -> Option<String> {
    let mut args = invocation.args.iter().map(String::as_str);
    let mut sub = "";
    while let Some(arg) = args.next() {
        if GLOBAL_WITH_VALUE.contains(&arg) {
            args.next();
        } else if !arg.starts_with('-') {
            sub = arg;
            break;
        }
    }
    let custom_format = invocation.args.iter().any(|a| {
        a == "--oneline"
            || a.starts_with("--format")
            || a.starts_with("--pretty")
            || a == "-p" && sub == "log"
    });
    let stat = invocation
        .args
        .iter()
        .any(|a| a == "--stat" || a.starts_with("--stat="));
    Some(match sub {
        "log" if !custom_format && stat => {
            compact_headers(&Transcript::new(&summarise_stat_log(cleaned)))
        }
        "log" | "show" | "whatchanged" if !custom_format => {
            if diff::rewrites(cleaned) {
                compact_headers(&Transcript::new(&diff::compact(cleaned)))
            } else {
                compact_headers(cleaned)
            }
        }
        "log" | "show" | "diff" => squeeze_repeats(diff::compact(cleaned)),
        "status" => group_status(&drop_lines(cleaned, "hint line", |l| {
            STATUS_HINT.is_match(l)
        })),
        "push" | "pull" | "fetch" | "clone" => {
            drop_lines(cleaned, "transfer progress line", |l| TRANSFER.is_match(l))
        }
        _ => generic(cleaned),
    })
}

/// Where [`summarise_stat_log`] is in a commit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InCommit {
    /// The header, up to the message's first line.
    Header,
    /// The message after its subject, and the stat lines.
    Rest,
}

/// `git log --stat` as a summary: each commit's header, subject (the message's first line) and
/// totals line (` 4 files changed, 46 insertions(+), 32 deletions(-)`); the rest of each message
/// and the per-file lines are counted in a first line that says how to see a commit whole.
/// Important lines stay wherever they are.
fn summarise_stat_log(cleaned: &Transcript) -> String {
    let mut out = Output::with_capacity(cleaned.len() / 2);
    let (mut body_lines, mut file_lines) = (0, 0);
    let mut at = InCommit::Rest;
    for line in lines(cleaned) {
        let keep = if commit_line(line).is_some() {
            at = InCommit::Header;
            true
        } else if let Some(message) = line.strip_prefix("    ") {
            let subject = std::mem::replace(&mut at, InCommit::Rest) == InCommit::Header;
            let keep = subject || cleaned.is_important(line);
            if !keep {
                body_lines += usize::from(!message.trim().is_empty());
            }
            keep
        } else if line.contains(" | ") && FILE_STAT.is_match(line) && !cleaned.is_important(line) {
            file_lines += 1;
            false
        } else {
            // The blank lines around a message and before its stat go: the next header's own
            // line marks a commit's start.
            !(line.is_empty() && at == InCommit::Rest)
        };
        if keep {
            out.line(line);
        }
    }
    let mut text = out.finish();
    if body_lines + file_lines > 0 {
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        text.insert_str(
            0,
            &format!(
                "[git log --stat summarised: each commit's subject and totals; {} and {} omitted (git show --stat <commit> shows one whole)]\n",
                count(body_lines, "message body line"),
                count(file_lines, "per-file line"),
            ),
        );
    }
    text
}

/// `git status` entries, one tab-indented path a line (`\tmodified:   a.txt`, or a bare path
/// for an untracked file): a run of three or more of one kind becomes one line,
/// `\tmodified (12): a.txt b.txt …` (git quotes a path with spaces, so the list stays readable).
fn group_status(text: &str) -> String {
    let entry = |line: &str| -> Option<(String, String)> {
        let body = line.strip_prefix('\t').filter(|_| !is_important(line))?;
        Some(match STATUS_ENTRY.captures(body) {
            Some(kind) => (kind[1].to_string(), kind[2].to_string()),
            None if !body.contains(": ") => ("untracked".to_string(), body.to_string()),
            None => return None,
        })
    };
    let lines: Vec<&str> = lines(text).collect();
    let mut out = Output::default();
    let mut i = 0;
    while i < lines.len() {
        let Some((kind, _)) = entry(lines[i]) else {
            out.line(lines[i]);
            i += 1;
            continue;
        };
        let run: Vec<String> = lines[i..]
            .iter()
            .map_while(|l| entry(l).filter(|(k, _)| *k == kind).map(|(_, path)| path))
            .collect();
        if run.len() < 3 {
            out.line(lines[i]);
            i += 1;
            continue;
        }
        out.line(&format!("\t{kind} ({}): {}", run.len(), run.join(" ")));
        i += run.len();
    }
    out.finish()
}

/// `commit <sha>` / `Author:` / `Date:` / blank become `commit <sha8> · <date> · <name>`; the
/// day, the time zone and the name are left out where they repeat the previous commit's (a first
/// line says so). Each header is written into one reused line, not formatted piece by piece: a
/// long log is thousands of commits.
fn compact_headers(text: &Transcript) -> String {
    let mut lines = lines(text).peekable();
    let mut out = Output::with_capacity(text.len());
    let mut previous = Previous::default();
    let mut header = String::new();
    while let Some(line) = lines.next() {
        let Some((sha, rest)) = commit_line(line).filter(|_| !text.is_important(line)) else {
            // The blank line before a commit header: the header's own line marks the start.
            let next_is_commit = lines.peek().is_some_and(|l| commit_line(l).is_some());
            if line.trim().is_empty() {
                // As the squeeze below would make it (git indents a message's blank lines):
                // then there is usually nothing left for it to change, and no copy to make.
                if !(line.is_empty() && next_is_commit) {
                    out.line("");
                }
            } else {
                out.line(line);
            }
            continue;
        };
        header.clear();
        header.push_str("commit ");
        header.push_str(&sha[..sha.len().min(8)]);
        header.push_str(rest);
        let mut author = None;
        let mut fields = 0;
        while let Some(&line) = lines.peek() {
            if let Some(merge) = line.strip_prefix("Merge: ") {
                header.push_str(" · merge ");
                header.push_str(merge);
            } else if let Some((field, value)) =
                person_line(line).filter(|_| !text.is_important(line))
            {
                match field {
                    "Author" => {
                        author = previous.changed(value, Field::Author).then_some(value);
                    }
                    "Date" => {
                        header.push_str(" · ");
                        previous.write_date(value, &mut header);
                    }
                    field => {
                        for part in [" · ", field, " ", value] {
                            header.push_str(part);
                        }
                    }
                }
            } else {
                break;
            }
            lines.next();
            fields += 1;
        }
        if let Some(author) = author {
            header.push_str(" · ");
            header.push_str(author);
        }
        out.line(&header);
        if fields > 0 && lines.peek().is_some_and(|l| l.is_empty()) {
            lines.next();
        }
    }
    let mut text = out.finish();
    if previous.elided {
        text.insert_str(
            0,
            "[day, time zone and author shown only where they change]\n",
        );
    }
    squeeze_repeats(text)
}

/// `commit <sha>[ decorations]` as the hash and the rest of the line. (The header lines are
/// read by hand: regex captures on every line cost more than the rest of the filter.)
fn commit_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("commit ")?;
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        .count();
    (7..=64).contains(&len).then(|| rest.split_at(len))
}

/// `Author: Name <mail>`, `Date:   …` (and `--format=fuller`'s fields) as the field and its value,
/// less a mail address.
fn person_line(line: &str) -> Option<(&str, &str)> {
    let (field, value) = line.split_once(':')?;
    if !matches!(
        field,
        "Author" | "Date" | "AuthorDate" | "Commit" | "CommitDate"
    ) {
        return None;
    }
    let value = value.trim();
    let without_mail = value
        .strip_suffix('>')
        .and_then(|v| v.rsplit_once(" <"))
        .map_or(value, |(name, _)| name.trim_end());
    (!value.is_empty()).then_some((field, without_mail))
}

#[derive(Clone, Copy)]
enum Field {
    Author,
    Day,
    Zone,
}

/// The previous commit's author, day and time zone, and whether one was left out.
#[derive(Default)]
struct Previous {
    values: [String; 3],
    elided: bool,
}

impl Previous {
    /// Whether `value` differs from the previous commit's (which it then becomes).
    fn changed(&mut self, value: &str, field: Field) -> bool {
        let previous = &mut self.values[field as usize];
        if previous == value {
            self.elided = true;
            return false;
        }
        previous.clear();
        previous.push_str(value);
        true
    }

    /// Writes `Mon Nov 23 14:47:40 2026 +0000` as `2026-11-23 14:47 +0000`, less the day and the
    /// zone where they repeat; any other format as it is.
    fn write_date(&mut self, date: &str, out: &mut String) {
        let mut parts = date.split(' ').filter(|p| !p.is_empty());
        let fields = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        );
        let (Some(_weekday), Some(month), Some(day), Some(time), Some(year), Some(zone), None) =
            fields
        else {
            return out.push_str(date);
        };
        let month = MONTHS.iter().position(|m| *m == month);
        let (Some(month), Some(minutes)) = (month, time.get(..5).filter(|_| time.len() == 8))
        else {
            return out.push_str(date);
        };
        let pad = if day.chars().count() < 2 { "0" } else { "" };
        let day = [year, "-", MONTH_NUMBERS[month], "-", pad, day].concat();
        if self.changed(&day, Field::Day) {
            out.push_str(&day);
            out.push(' ');
        }
        out.push_str(minutes);
        if self.changed(zone, Field::Zone) {
            out.push(' ');
            out.push_str(zone);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_args(args: &[&str]) -> Invocation {
        Invocation {
            program: "git".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn log_headers_become_one_line() {
        let text = "commit 077b84e3682f69477bb847609ebd7b3579e08830\nAuthor: Ann Example <ann@example.com>\nDate:   Mon Nov 23 12:22:23 2026 +0000\n\n    fix the error path\n\n    body line\n\ncommit e55026ce3f36ac0388f7de61ceb60cbbbc5f2baf\nMerge: 1a2b 3c4d\nAuthor: Bob <bob@example.com>\nDate:   Sun Nov 22 10:00:00 2026 +0000\n\n    merge\n";
        assert_eq!(
            git(&git_args(&["log", "-n", "2"]), &Transcript::new(text)).as_deref(),
            Some(
                "[day, time zone and author shown only where they change]\ncommit 077b84e3 · 2026-11-23 12:22 +0000 · Ann Example\n    fix the error path\n\n    body line\ncommit e55026ce · merge 1a2b 3c4d · 2026-11-22 10:00 · Bob\n    merge\n"
            )
        );
    }

    #[test]
    fn log_stat_keeps_each_subject_and_totals_and_every_important_line() {
        let text = "commit 077b84e3682f69477bb847609ebd7b3579e08830\nAuthor: Ann Example <ann@example.com>\nDate:   Mon Nov 23 12:22:23 2026 +0000\n\n    parser: trim the carriage return\n\n    The reader kept one byte too many.\n    error: this line names an error and stays\n\n src/reader.rs     | 12 ++++++++----\n assets/logo.png   | Bin 0 -> 1234 bytes\n src/mode.sh       | 0\n 3 files changed, 8 insertions(+), 4 deletions(-)\n\ncommit e55026ce3f36ac0388f7de61ceb60cbbbc5f2baf\nMerge: 1a2b 3c4d\nAuthor: Ann Example <ann@example.com>\nDate:   Mon Nov 23 10:00:00 2026 +0000\n\n    Merge branch 'fix' where a test failed\n\ncommit 1234567812345678123456781234567812345678\nAuthor: Bob <bob@example.com>\nDate:   Sun Nov 22 09:00:00 2026 +0000\n\n    docs: one line\n\n README.md | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n";
        assert_eq!(
            git(
                &git_args(&["log", "--stat", "-n", "3"]),
                &Transcript::new(text)
            )
            .as_deref(),
            Some(
                "[day, time zone and author shown only where they change]\n\
                 [git log --stat summarised: each commit's subject and totals; 1 message body line and 4 per-file lines omitted (git show --stat <commit> shows one whole)]\n\
                 commit 077b84e3 · 2026-11-23 12:22 +0000 · Ann Example\n    parser: trim the carriage return\n    error: this line names an error and stays\n 3 files changed, 8 insertions(+), 4 deletions(-)\n\
                 commit e55026ce · merge 1a2b 3c4d · 10:00\n    Merge branch 'fix' where a test failed\n\
                 commit 12345678 · 2026-11-22 09:00 · Bob\n    docs: one line\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"
            )
        );
        // With a custom format or a patch, the log is not summarised.
        let patch = git(&git_args(&["log", "--stat", "-p"]), &Transcript::new(text));
        assert!(patch.is_some_and(|t| t.contains("The reader kept one byte too many.")));
    }

    #[test]
    fn status_diff_and_transfers() {
        let status = "On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\tmodified:   a.txt\n";
        assert_eq!(
            git(
                &git_args(&["-C", "repo", "status"]),
                &Transcript::new(status)
            )
            .as_deref(),
            Some("On branch main\nChanges not staged for commit:\n\tmodified:   a.txt\n")
        );
        let many = "Changes not staged for commit:\n\tmodified:   a.txt\n\tmodified:   b.txt\n\tmodified:   c.txt\n\tdeleted:    d.txt\n\nUntracked files:\n\tn1\n\tn2\n\tn3\n";
        assert_eq!(
            git(&git_args(&["status"]), &Transcript::new(many)).as_deref(),
            Some(
                "Changes not staged for commit:\n\tmodified (3): a.txt b.txt c.txt\n\tdeleted:    d.txt\n\nUntracked files:\n\tuntracked (3): n1 n2 n3\n"
            )
        );
        let diff = "diff --git a/x b/x\nindex 332d50b..0edbb0d 100644\n--- a/x\n+++ b/x\n";
        assert_eq!(
            git(&git_args(&["diff"]), &Transcript::new(diff)).as_deref(),
            Some(
                "diff --git a/x b/x\n[… omitted: 3 index and ---/+++ lines (the paths are on the diff --git line)]\n"
            )
        );
        let push = "Enumerating objects: 5, done.\nWriting objects: 100% (3/3), 300 bytes | 300.00 KiB/s, done.\nTo /o.git\n ! [rejected]        HEAD -> main (non-fast-forward)\nerror: failed to push some refs to '/o.git'\n";
        assert_eq!(
            git(&git_args(&["push"]), &Transcript::new(push)).as_deref(),
            Some(
                "[… 2 transfer progress lines omitted]\nTo /o.git\n ! [rejected]        HEAD -> main (non-fast-forward)\nerror: failed to push some refs to '/o.git'\n"
            )
        );
    }
}
