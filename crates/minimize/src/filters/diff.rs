//! Unified diffs as git prints them (`git diff`, `git show`, `git log -p`): every changed line and
//! every file and hunk header stay; what goes is what the agent can do without, each time with a
//! count:
//!
//! - `index` lines, and `--- a/x` / `+++ b/x` lines that repeat the `diff --git` line's paths;
//! - unchanged context beyond one line on each side of a change (hunks keep their headers, so
//!   the line numbers stay known);
//! - the body of a new or deleted file past its first [`WHOLE_FILE_HEAD`] lines: the file itself
//!   (or the commit) holds it;
//! - the `+++---` bar of a `--stat` line (its count stays).
//!
//! A hunk whose line counts do not match its header is kept as it is.

use std::sync::LazyLock;

use regex::Regex;

use crate::lines::line_bounds;
use crate::text::{Output, is_important, lines};

/// Lines of a new or deleted file's body shown before the rest is counted.
pub const WHOLE_FILE_HEAD: usize = 15;

static INDEX: LazyLock<Regex> = pattern!(r"^index [0-9a-f]+\.\.[0-9a-f]+( \d+)?$");

static HUNK: LazyLock<Regex> = pattern!(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@");

static STAT: LazyLock<Regex> = pattern!(r"^ (\S.*?) +\| +(\d+) [+-]+$");

/// What was left out, for the closing note.
#[derive(Default)]
struct Omitted {
    header_lines: usize,
    context_lines: usize,
    stat_bars: usize,
}

/// The diff's file being read: its paths and whether it is created or deleted whole.
#[derive(Default)]
struct File {
    old: String,
    new: String,
    created: bool,
    deleted: bool,
}

/// How a file's diff starts; [`compact`] rewrites from there.
const DIFF_START: &str = "diff --git a/";

/// Whether `text` has anything [`compact`] rewrites: a file's diff or a `--stat` line
/// (` src/a.rs | 12 +++--`). Kept beside `compact`, whose triggers it must name: without them, a
/// `git log` is compacted on its transcript as it is.
pub fn rewrites(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memmem::find(bytes, DIFF_START.as_bytes()).is_some()
        || memchr::memmem::find_iter(bytes, b" | ").any(|at| {
            let (start, end) = line_bounds(bytes, at);
            STAT.is_match(&text[start..end])
        })
}

/// `text` with its diffs compacted (other lines, such as commit headers, pass through).
pub fn compact(text: &str) -> String {
    let lines: Vec<&str> = lines(text).collect();
    let mut out = Output::default();
    let mut omitted = Omitted::default();
    let mut file: Option<File> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(paths) = line.strip_prefix(DIFF_START) {
            let (old, new) = paths.rsplit_once(" b/").unwrap_or((paths, paths));
            file = Some(File {
                old: old.to_string(),
                new: new.to_string(),
                ..File::default()
            });
            out.line(line);
            continue;
        }
        if line.starts_with("commit ") {
            file = None;
        }
        if let Some(file) = file.as_mut() {
            if let Some(len) = hunk_length(line, &lines[i..]) {
                out.line(line);
                hunk(&lines[i..i + len], file, &mut out, &mut omitted);
                i += len;
                continue;
            }
            file.created |= line.starts_with("new file mode");
            file.deleted |= line.starts_with("deleted file mode");
            if repeats_a_path(line, file) && !is_important(line) {
                omitted.header_lines += 1;
                continue;
            }
        }
        let stat = line.contains(" | ").then(|| STAT.captures(line)).flatten();
        match stat.filter(|_| !is_important(line)) {
            Some(stat) => {
                omitted.stat_bars += 1;
                out.line(&format!(" {} | {}", &stat[1], &stat[2]));
            }
            None => out.line(line),
        }
    }
    closing_note(&mut out, &omitted);
    out.finish()
}

/// Whether `line` is an `index` line or a `---`/`+++` line naming the file's own path.
fn repeats_a_path(line: &str, file: &File) -> bool {
    if INDEX.is_match(line) {
        return true;
    }
    match (line.strip_prefix("--- "), line.strip_prefix("+++ ")) {
        (Some(old), _) => old == "/dev/null" || old.strip_prefix("a/") == Some(&file.old),
        (_, Some(new)) => new == "/dev/null" || new.strip_prefix("b/") == Some(&file.new),
        _ => false,
    }
}

/// The number of body lines of the hunk whose header is `header`, if `rest` holds them all.
fn hunk_length(header: &str, rest: &[&str]) -> Option<usize> {
    if !header.starts_with("@@ ") {
        return None;
    }
    let counts = HUNK.captures(header)?;
    let count = |group: usize| {
        counts
            .get(group)
            .map_or(Some(1), |m| m.as_str().parse::<usize>().ok())
    };
    let (mut old, mut new) = (count(1)?, count(2)?);
    let mut len = 0;
    while old > 0 || new > 0 {
        match rest.get(len)?.chars().next() {
            Some(' ') if old > 0 && new > 0 => (old, new) = (old - 1, new - 1),
            Some('-') if old > 0 => old -= 1,
            Some('+') if new > 0 => new -= 1,
            Some('\\') => {}
            _ => return None,
        }
        len += 1;
    }
    // "\ No newline at end of file" may follow the last line.
    while rest.get(len).is_some_and(|l| l.starts_with('\\')) {
        len += 1;
    }
    Some(len)
}

/// A hunk's body: changes and their nearest context, or a whole file's head.
fn hunk(body: &[&str], file: &File, out: &mut Output, omitted: &mut Omitted) {
    if file.created || file.deleted {
        let what = if file.created {
            "more new-file line"
        } else {
            "more deleted-file line"
        };
        let keep: Vec<bool> = (0..body.len())
            .map(|i| i < WHOLE_FILE_HEAD || is_important(body[i]))
            .collect();
        emit(body, &keep, out, |out, _, _, count| {
            out.omitted(count, what)
        });
        return;
    }
    let changed = |i: usize| body.get(i).is_some_and(|l| !l.starts_with(' '));
    let keep: Vec<bool> = (0..body.len())
        .map(|i| changed(i) || changed(i + 1) || (i > 0 && changed(i - 1)) || is_important(body[i]))
        .collect();
    emit(body, &keep, out, |out, start, end, count| {
        let interior = start > 0 && end < body.len();
        if interior {
            out.omitted(count, "unchanged line");
        } else {
            omitted.context_lines += count;
        }
    });
}

/// Writes the kept lines of `body`; each run of others goes to `note(out, start, end, count)`,
/// except a single interior line, which is shorter than its note.
fn emit(
    body: &[&str],
    keep: &[bool],
    out: &mut Output,
    mut note: impl FnMut(&mut Output, usize, usize, usize),
) {
    let mut i = 0;
    while i < body.len() {
        if keep[i] {
            out.line(body[i]);
            i += 1;
            continue;
        }
        let end = i + keep[i..].iter().take_while(|k| !**k).count();
        if end - i == 1 && i > 0 && end < body.len() {
            out.line(body[i]);
        } else {
            note(out, i, end, end - i);
        }
        i = end;
    }
}

fn closing_note(out: &mut Output, omitted: &Omitted) {
    let mut parts = Vec::new();
    if omitted.header_lines > 0 {
        parts.push(format!(
            "{} index and ---/+++ lines (the paths are on the diff --git line)",
            omitted.header_lines
        ));
    }
    if omitted.context_lines > 0 {
        parts.push(format!(
            "{} unchanged lines around hunks (one is kept on each side of a change)",
            omitted.context_lines
        ));
    }
    if omitted.stat_bars > 0 {
        parts.push(format!("the +/- bars of {} stat lines", omitted.stat_bars));
    }
    if !parts.is_empty() {
        out.line(&format!("[… omitted: {}]", parts.join("; ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_keep_one_line_of_context() {
        let diff = "diff --git a/x.rs b/x.rs\nindex 332d50b..0edbb0d 100644\n--- a/x.rs\n+++ b/x.rs\n@@ -1,10 +1,10 @@ fn main() {\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n-i\n+I\n j\n";
        assert_eq!(
            compact(diff),
            "diff --git a/x.rs b/x.rs\n@@ -1,10 +1,10 @@ fn main() {\n c\n-d\n+D\n e\n[… 2 unchanged lines omitted]\n h\n-i\n+I\n j\n[… omitted: 3 index and ---/+++ lines (the paths are on the diff --git line); 2 unchanged lines around hunks (one is kept on each side of a change)]\n"
        );
    }

    #[test]
    fn a_new_file_shows_its_head_and_important_lines() {
        let mut diff = String::from(
            "diff --git a/n.ts b/n.ts\nnew file mode 100644\nindex 0000000..a8c817d\n--- /dev/null\n+++ b/n.ts\n@@ -0,0 +1,25 @@\n",
        );
        for i in 0..25 {
            if i == 20 {
                diff.push_str("+throw new Error('bad')\n");
            } else {
                diff.push_str(&format!("+line {i}\n"));
            }
        }
        let out = compact(&diff);
        assert!(
            out.starts_with(
                "diff --git a/n.ts b/n.ts\nnew file mode 100644\n@@ -0,0 +1,25 @@\n+line 0\n"
            ),
            "{out}"
        );
        assert!(
            out.ends_with("+line 14\n[… 5 more new-file lines omitted]\n+throw new Error('bad')\n[… 4 more new-file lines omitted]\n[… omitted: 3 index and ---/+++ lines (the paths are on the diff --git line)]\n"),
            "{out}"
        );
    }

    #[test]
    fn a_hunk_that_does_not_add_up_is_kept() {
        let diff = "diff --git a/x b/x\n@@ -1,5 +1,5 @@\n a\n b\n";
        assert_eq!(compact(diff), diff);
    }

    #[test]
    fn stat_lines_lose_their_bars() {
        let stat = " tests/helpers.ts | 18 +++++++++++++++++-\n 1 file changed, 17 insertions(+), 1 deletion(-)\n";
        assert_eq!(
            compact(stat),
            " tests/helpers.ts | 18\n 1 file changed, 17 insertions(+), 1 deletion(-)\n[… omitted: the +/- bars of 1 stat lines]\n"
        );
    }
}
