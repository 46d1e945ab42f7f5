//! Text primitives every filter shares: cleaning a transcript (ANSI escapes, carriage-return
//! redraws), the definition of a line that must never be dropped ([`is_important`]), and the
//! run-collapsing used by the generic fallback and by several tool filters.
//!
//! ## Important lines
//! A line is *important* — the minimizer never drops or rewrites it — when one of these holds
//! (case-insensitive):
//! - it contains one of the words `error(s)`, `fatal`, `fail(s|ed|ure|ures|ing)`,
//!   `panic(ked)`, `warn(ing|ings)`, `exception`, `traceback`, `abort(ed)`, `denied`,
//!   `segmentation fault`, `core dumped`, `undefined reference`, `cannot`, `could not`,
//!   `couldn't`, `unable to`, `conflict`, `rejected`, `timed out`, as a word of prose: a word
//!   that is part of a path or file name (`src/error.rs`, `libgpg-error.so`, `-Werror`) does
//!   not count;
//! - it is a compiler location (`--> file:line:col`) or a pytest error line (`E   …`);
//! - it carries a failure mark (`✗`, `×`, `✖`, `not ok`, npm's `ERR!`);
//! - it is a test summary: a count followed by `passed`, `failed`, `skipped`, `pending`, `todo`,
//!   `tests`, `errors` or `warnings`; `test result:`; TAP's `# pass N` / `# fail N` …
//!
//! The set is deliberately wide: a false positive only keeps a line.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::sync::LazyLock;

use regex::Regex;

use super::lines::LineScan;

// Word boundaries are ASCII (`-u`): a Unicode `\b` keeps the regex engine off its DFA on any
// line with a non-ASCII character (✓, ⎯, box drawing), which made such transcripts ten times
// slower to check. The keywords are ASCII, so only what counts as a word's edge changes.
const KEYWORDS_PATTERN: &str = r"(?i-u:\b(errors?|fatal|fail|fails|failed|failure|failures|failing|panic|panicked|warn|warning|warnings|exception|traceback|abort|aborted|denied|segmentation fault|core dumped|undefined reference|cannot|could not|couldn't|unable to|conflict|rejected|timed out)\b)";

const MARKERS_PATTERN: &str = r"(?ix:
        ^\s*-->\s                                   # rustc location
        | ^E\s                                      # pytest error line
        | [✗×✖❌]                                   # failure marks
        | ^\s*not\ ok(?-u:\b)                       # TAP failure
        | (?-u:\b)ERR!
        | (^|[\s(,|:])[0-9]+\ (passed|failed|skipped|pending|todo|tests?|errors?|warnings?)(?-u:\b)
        | (?-u:\b)test\ result:
        | ^\#\ (tests|suites|pass|fail|cancelled|skipped|todo)\ \d
        )";

static KEYWORDS: LazyLock<Regex> = pattern!(KEYWORDS_PATTERN);

static MARKERS: LazyLock<Regex> = pattern!(MARKERS_PATTERN);

/// A looser pattern than either of the two, matching every line one of them matches (keywords
/// without their word boundaries or plural forms, markers reduced to a literal they contain),
/// compiled to a small, case-folded-ASCII DFA that rules out the great majority of lines, which
/// match neither, at a fraction of the precise patterns' cost. Multi-line, so that one scan can
/// run over a whole text ([`Transcript`]); no alternative crosses a line end.
static CANDIDATE: LazyLock<LineScan> = LazyLock::new(|| {
    LineScan::new(
        r"(?m)(?i-u:error|fatal|fail|panic|warn|exception|traceback|abort|denied|segmentation fault|core dumped|undefined reference|cannot|could not|couldn't|unable to|conflict|rejected|timed out|not ok|err!|test result:)|-->|^[eE]|^\# |✗|×|✖|❌|[0-9] (?i-u:passed|failed|skipped|pending|todo|test|error|warning)",
    )
    .expect("valid built-in pattern")
});

/// Whether `line` must survive minimization verbatim (see the module documentation).
pub fn is_important(line: &str) -> bool {
    CANDIDATE.matches(line) && matches_precisely(line)
}

/// The precise test, for a line the candidate search did not rule out.
fn matches_precisely(line: &str) -> bool {
    MARKERS.is_match(line)
        || KEYWORDS
            .find_iter(line)
            .any(|found| !inside_a_name(line, found.start(), found.end()))
}

/// A cleaned text and, once asked for, the positions of its important lines: found by one
/// candidate search over the whole text, since a search per line costs more on a long
/// transcript and a filter and the safety net would each pay it. Dereferences to the text.
pub struct Transcript<'t> {
    text: &'t str,
    /// Byte offsets of the important lines' starts, ascending.
    important: OnceCell<Vec<usize>>,
    /// Where in `important` the last lookup ended: filters ask about lines in order, so the next
    /// answer is found by stepping on from here rather than by a search.
    cursor: Cell<usize>,
}

impl<'t> Transcript<'t> {
    pub fn new(text: &'t str) -> Self {
        Self {
            text,
            important: OnceCell::new(),
            cursor: Cell::new(0),
        }
    }

    /// A transcript whose important lines were already found: `important` holds their starts
    /// in `text`, ascending, as [`is_important`](Self::is_important) would find them.
    pub(crate) fn with_important(text: &'t str, important: Vec<usize>) -> Self {
        Self {
            text,
            important: OnceCell::from(important),
            cursor: Cell::new(0),
        }
    }

    /// Whether `line` is [important](is_important): looked up when it is one of the text's
    /// lines (as `str::lines` gives them), tested on its own otherwise.
    pub fn is_important(&self, line: &str) -> bool {
        let Some(start) = self.line_start(line) else {
            return is_important(line);
        };
        let starts = self
            .important
            .get_or_init(|| important_line_starts(self.text));
        let mut at = self.cursor.get();
        if at > 0 && starts.get(at - 1).is_some_and(|&before| before >= start) {
            at = starts.partition_point(|&s| s < start);
        }
        while starts.get(at).is_some_and(|&s| s < start) {
            at += 1;
        }
        self.cursor.set(at);
        let indexed = starts.get(at) == Some(&start);
        // The filters and the safety net both ask the index: every test build checks it against
        // the line-by-line answer, so an index that missed a line cannot pass unnoticed.
        debug_assert_eq!(indexed, is_important(line), "index disagrees on {line:?}");
        indexed
    }

    /// `line`'s offset in the text, if it is a whole line of it.
    fn line_start(&self, line: &str) -> Option<usize> {
        let start = (line.as_ptr() as usize).checked_sub(self.text.as_ptr() as usize)?;
        let end = start.checked_add(line.len())?;
        let bytes = self.text.as_bytes();
        let starts_a_line = start == 0 || bytes.get(start - 1) == Some(&b'\n');
        let rest = bytes.get(end..)?;
        let ends_a_line = rest.is_empty() || rest.starts_with(b"\n") || rest.starts_with(b"\r\n");
        (starts_a_line && ends_a_line).then_some(start)
    }
}

impl std::ops::Deref for Transcript<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.text
    }
}

/// The offsets of `text`'s important lines, found by one candidate scan over all of it.
pub(crate) fn important_line_starts(text: &str) -> Vec<usize> {
    let mut starts = CANDIDATE.matching_lines(text);
    starts.retain(|&start| {
        let line = text[start..].split('\n').next().unwrap_or_default();
        matches_precisely(line.strip_suffix('\r').unwrap_or(line))
    });
    starts
}

/// Whether the word at `start..end` is part of a path, file name or flag rather than prose.
fn inside_a_name(line: &str, start: usize, end: usize) -> bool {
    let before = line[..start].chars().next_back();
    let mut after = line[end..].chars();
    let (next, next_next) = (after.next(), after.next());
    let name_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    matches!(before, Some('/' | '.' | '-' | '_'))
        || matches!(next, Some('/' | '_' | '='))
        || (matches!(next, Some('.' | '-')) && name_char(next_next))
}

/// The transcript as a reader of a terminal would see it: ANSI escape sequences and other
/// control characters removed (tabs kept), CRLF line ends made LF, and a line redrawn with
/// carriage returns (progress bars, spinners) reduced to its last drawing. Borrows `raw` when
/// there is nothing to remove (most transcripts): a megabyte copied for nothing cost more than
/// some filters' whole work on it.
pub fn clean(raw: &str) -> Cow<'_, str> {
    redrawn(strip_controls(raw))
}

/// `plain` (a text without controls) with each line redrawn by carriage returns reduced to its
/// last drawing, and CRLF made LF; unchanged when it holds no `\r`.
pub(crate) fn redrawn(plain: Cow<'_, str>) -> Cow<'_, str> {
    if memchr::memchr(b'\r', plain.as_bytes()).is_none() {
        return plain;
    }
    let mut out = String::with_capacity(plain.len());
    for (index, line) in plain.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let last_drawing = line
            .rsplit('\r')
            .find(|part| !part.trim().is_empty())
            .unwrap_or("");
        out.push_str(last_drawing);
    }
    Cow::Owned(out)
}

/// Removes CSI, OSC and two-byte escape sequences and C0 controls other than `\t`, `\n`, `\r`.
/// An escape sequence that runs past the end of `raw` is removed to the end.
pub(crate) fn strip_controls(raw: &str) -> Cow<'_, str> {
    strip(raw).0
}

/// [`strip_controls`] of a part of a longer text, or `None` when an escape sequence runs past
/// the part's end: it may end in text that follows, which would then be removed with it.
pub(crate) fn strip_controls_complete(raw: &str) -> Option<Cow<'_, str>> {
    match strip(raw) {
        (plain, false) => Some(plain),
        (_, true) => None,
    }
}

/// `raw` without its controls, and whether an escape sequence ran past its end.
fn strip(raw: &str) -> (Cow<'_, str>, bool) {
    let bytes = raw.as_bytes();
    let Some(first) = first_control(bytes) else {
        return (Cow::Borrowed(raw), false);
    };
    // Byte by byte near a control (in coloured output the next escape is often a word away,
    // closer than a block search pays off), by blocks again past a plain stretch.
    const NEAR: usize = 128;
    let mut out = String::with_capacity(raw.len());
    let mut kept_from = 0;
    let mut i = first;
    let mut unterminated = false;
    while let Some(&b) = bytes.get(i) {
        if !is_control(b) {
            i += 1;
            if i - kept_from > NEAR {
                i = first_control(&bytes[i..]).map_or(bytes.len(), |next| i + next);
            }
            continue;
        }
        out.push_str(&raw[kept_from..i]);
        i = if b == 0x1b {
            escape_end(bytes, i).unwrap_or_else(|| {
                unterminated = true;
                bytes.len()
            })
        } else {
            i + 1
        };
        kept_from = i;
    }
    out.push_str(&raw[kept_from..]);
    (Cow::Owned(out), unterminated)
}

/// Whether [`strip_controls`] removes `b`.
fn is_control(b: u8) -> bool {
    (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f
}

/// The first byte of `bytes` that [`strip_controls`] removes. Blocks of bytes are tested whole
/// first (a test without an early exit, which the compiler vectorises): most transcripts have
/// none.
fn first_control(bytes: &[u8]) -> Option<usize> {
    let mut offset = 0;
    for block in bytes.chunks(64) {
        if block.iter().fold(false, |any, &b| any | is_control(b)) {
            return block
                .iter()
                .position(|&b| is_control(b))
                .map(|i| offset + i);
        }
        offset += block.len();
    }
    None
}

/// The index just past the escape sequence starting at `start` (an ESC byte), or `None` when it
/// runs past the end of `bytes`. Sequences end on ASCII bytes, so the result is always a
/// character boundary.
fn escape_end(bytes: &[u8], start: usize) -> Option<usize> {
    let kind = *bytes.get(start + 1)?;
    match kind {
        b'[' => {
            let params = bytes[start + 2..]
                .iter()
                .position(|b| (0x40..=0x7e).contains(b))?;
            Some(start + 2 + params + 1)
        }
        b']' | b'P' | b'_' | b'^' => {
            let mut j = start + 2;
            while j < bytes.len() {
                match bytes[j] {
                    0x07 => return Some(j + 1),
                    0x1b if bytes.get(j + 1) == Some(&b'\\') => return Some(j + 2),
                    _ => j += 1,
                }
            }
            None
        }
        0x20..=0x7e => Some(start + 2),
        _ => Some(start + 1),
    }
}

/// The lines of `text`, as `str::lines` gives them (split at `\n`, a `\r` before it dropped,
/// no empty line after a final `\n`), found with a vectorised byte search: splitting lines is
/// most of what several filters do, and the standard library's search for `\n` was the largest
/// single cost of minimizing a long transcript.
pub fn lines(text: &str) -> impl Iterator<Item = &str> + Clone {
    let mut at = 0;
    std::iter::from_fn(move || {
        let rest = text.get(at..).filter(|rest| !rest.is_empty())?;
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(end) => {
                at += end + 1;
                let line = &rest[..end];
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None => {
                at = text.len();
                Some(rest)
            }
        }
    })
}

/// A line's "kind" for run collapsing: its indentation and first word, digits ignored.
fn shape(line: &str) -> (usize, String) {
    let indent = line.len() - line.trim_start().len();
    (indent, first_word_shape(line).collect())
}

/// `line`'s first word with each ASCII digit read as `#`.
fn first_word_shape(line: &str) -> impl Iterator<Item = char> + '_ {
    let first = line.split_whitespace().next().unwrap_or("");
    first
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
}

/// Builds a filter's output: kept lines, and notes that say what was left out.
#[derive(Default)]
pub struct Output {
    text: String,
}

impl Output {
    /// An output with room for `bytes` (a filter's input size, which its output rarely passes: a
    /// hint, not a bound). Only what is written is touched, and growing by doubling copied a long
    /// output several times.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            text: String::with_capacity(bytes),
        }
    }

    pub fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// A note standing for `count` omitted things, `what` being one of them (`passing test`).
    pub fn omitted(&mut self, count: usize, what: &str) {
        if count > 0 {
            self.line(&omitted_note(count, what));
        }
    }

    pub fn finish(self) -> String {
        self.text
    }
}

/// The note standing for `count` omitted things, `what` being one of them: `[… 3 passing tests omitted]`.
pub fn omitted_note(count: usize, what: &str) -> String {
    let s = if count == 1 { "" } else { "s" };
    format!("[… {count} {what}{s} omitted]")
}

/// The generic squeeze: blank-line runs become one blank line, a line repeated consecutively
/// is kept once with a count, and a run of more than `similar_run` unimportant lines of the same
/// [`shape`] keeps its first three and last two lines around a count. `similar_run` of `None`
/// collapses only exact repeats.
pub fn squeeze(text: &str, similar_run: Option<usize>) -> String {
    squeeze_transcript(&Transcript::new(text), similar_run)
}

/// [`squeeze`] of exact repeats only (`similar_run` of `None`), for a text a filter just built:
/// the text itself when there is nothing to collapse (the common case), which is not copied.
pub fn squeeze_repeats(text: String) -> String {
    if squeeze_changes(&text) {
        squeeze(&text, None)
    } else {
        text
    }
}

/// Whether `squeeze(text, None)` differs from `text`: it has a run of blank lines, a line of
/// only blanks, three equal lines in a row, a CR (conservatively: `\r\n` ends are made `\n`)
/// or no final line end.
fn squeeze_changes(text: &str) -> bool {
    if !(text.is_empty() || text.ends_with('\n'))
        || memchr::memchr(b'\r', text.as_bytes()).is_some()
    {
        return true;
    }
    let mut previous = None;
    let mut repeats = 0;
    for line in lines(text) {
        let blank = line.trim().is_empty();
        if blank && (!line.is_empty() || previous == Some("")) {
            return true;
        }
        repeats = if previous == Some(line) {
            repeats + 1
        } else {
            0
        };
        if repeats == 2 {
            return true;
        }
        previous = Some(line);
    }
    false
}

/// [`squeeze`] of a text whose important lines may already be known.
pub fn squeeze_transcript(text: &Transcript, similar_run: Option<usize>) -> String {
    let lines: Vec<&str> = lines(text).collect();
    let mut out = Output::with_capacity(text.len());
    let mut i = 0;
    // Lines before this index belong to a run already measured and found short enough: they
    // are not measured again (which would make the scan quadratic in the run length).
    let mut measured_until = 0;
    while i < lines.len() {
        let line = lines[i];
        let repeats = lines[i..].iter().take_while(|l| **l == line).count();
        if line.trim().is_empty() {
            out.line("");
            i += repeats;
            continue;
        }
        if repeats > 2 {
            out.line(line);
            out.omitted(repeats - 1, "identical line");
            i += repeats;
            continue;
        }
        if let Some(limit) = similar_run.filter(|_| i >= measured_until) {
            let run = similar_run_length(text, &lines[i..]);
            measured_until = i + run;
            if run > limit.max(5) {
                for kept in &lines[i..i + 3] {
                    out.line(kept);
                }
                out.omitted(run - 5, "similar line");
                for kept in &lines[i + run - 2..i + run] {
                    out.line(kept);
                }
                i += run;
                continue;
            }
        }
        out.line(line);
        i += 1;
    }
    out.finish()
}

/// Characters that decorate rules and banners (`==== FAILURES ====`, `______ test_x ______`).
const RULE_CHARS: &[char] = &['=', '_', '-', '─', '━', '⎯', '*', '#', '~'];

/// Rules drawn with a run of ten or more of one [`RULE_CHARS`] character (or of that character
/// and a space, `_ _ _ …`), alone or around a title, have each run cut to three characters: the title stays, the width goes. Important
/// lines (a test summary inside a rule) are kept as they are.
pub fn shorten_rules(text: &str) -> String {
    let mut out = Output::with_capacity(text.len());
    for line in lines(text) {
        match shortened_rule(line).filter(|_| !is_important(line)) {
            Some(short) => out.line(&short),
            None => out.line(line),
        }
    }
    out.finish()
}

fn shortened_rule(line: &str) -> Option<String> {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let mark = body.chars().next().filter(|c| RULE_CHARS.contains(c))?;
    // pytest's `_ _ _ _ …` between a test and the frame it called.
    let spaced = body.trim_end();
    if spaced.len() >= 19
        && spaced
            .chars()
            .enumerate()
            .all(|(i, c)| if i % 2 == 0 { c == mark } else { c == ' ' })
    {
        return Some(format!("{indent}{mark} {mark} {mark}"));
    }
    let lead = body.chars().take_while(|&c| c == mark).count();
    let trail = body.chars().rev().take_while(|&c| c == mark).count();
    if lead.max(trail) < 10 {
        return None;
    }
    let width = mark.len_utf8();
    let three: String = std::iter::repeat_n(mark, 3).collect();
    if lead * width == body.len() {
        return Some(format!("{indent}{three}"));
    }
    let title = &body[lead * width..body.len() - trail * width];
    let tail = if trail > 0 { three.as_str() } else { "" };
    Some(format!(
        "{indent}{}{title}{tail}",
        &three[..width * lead.min(3)]
    ))
}

/// Whether `line` has the [`shape`] `key` (without building the line's own shape: this runs on
/// every line of a long run).
fn same_shape(line: &str, (indent, word): &(usize, String)) -> bool {
    let body = line.trim_start();
    if line.len() - body.len() != *indent {
        return false;
    }
    first_word_shape(body).eq(word.chars())
}

/// How many lines from the start of `lines` share the first line's shape, none important.
fn similar_run_length(text: &Transcript, lines: &[&str]) -> usize {
    let Some(first) = lines.first() else { return 0 };
    if first.trim().is_empty() || text.is_important(first) {
        return 0;
    }
    let key = shape(first);
    lines
        .iter()
        .take_while(|l| !l.trim().is_empty() && same_shape(l, &key) && !text.is_important(l))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn important_lines_are_prose_not_names() {
        for line in [
            "error[E0277]: cannot add `&str` to `i32`",
            "warning: unused variable: `x`",
            "npm ERR! code ENOENT",
            "thread 'main' panicked at src/main.rs:2:5:",
            "Traceback (most recent call last):",
            " --> src/lib.rs:3:7",
            "E       assert 6 == 7",
            "     × adds strings wrongly",
            "not ok 16 - fails",
            "test result: ok. 4 passed; 0 failed",
            "# fail 0",
            "========================= 2 failed, 41 passed in 0.05s ====",
            " ! [rejected]        HEAD -> main (non-fast-forward)",
            "CONFLICT (content): Merge conflict in a.txt",
        ] {
            assert!(is_important(line), "{line}");
        }
        for line in [
            "crates/shell/src/error.rs",
            "-rw-r--r-- 1 root root 10 Jan 1 12:00 libgpg-error.so.0",
            "gcc -Werror -c a.c",
            "   Compiling thiserror v1.0.69",
            "test tests::adds ... ok",
            "\tmodified:   src/errors.rs",
        ] {
            assert!(!is_important(line), "{line}");
        }
    }

    /// The candidate search may only rule out lines the precise patterns would not take, and the
    /// whole-text index must answer as the line-by-line test does: checked on every line of the
    /// recorded corpus and on the examples above.
    #[test]
    fn the_candidate_search_misses_no_important_line() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/transcripts"
        );
        let mut texts: Vec<String> = Vec::new();
        for entry in std::fs::read_dir(dir).expect("corpus") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("utf-8");
            texts.push(clean(&text).into_owned());
        }
        texts.push(
            [
                "٣ passed",
                "e\tx",
                "# TESTS 3",
                "Not OK 2",
                "3 Warnings",
                "x ✖ y",
                "×",
                "E",
            ]
            .join("\n"),
        );
        let mut important = 0;
        for text in &texts {
            let index = Transcript::new(text);
            for line in text.lines() {
                let precise = matches_precisely(line);
                important += usize::from(precise);
                assert_eq!(is_important(line), precise, "{line}");
                assert_eq!(index.is_important(line), precise, "{line}");
            }
        }
        assert!(important > 150, "{important}");
    }

    #[test]
    fn the_index_tests_strings_that_are_not_its_lines() {
        let text = "ok\nerror: here\nok again\n";
        let index = Transcript::new(text);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines
                .iter()
                .map(|l| index.is_important(l))
                .collect::<Vec<_>>(),
            [false, true, false]
        );
        // A piece that starts a line but does not end one, or ends one but does not start it, is
        // tested itself: looked up, it would take its line's answer (true).
        assert!(!index.is_important(&text[3..5]));
        assert!(!index.is_important(&text[10..14]));
        assert!(index.is_important("warning: elsewhere"));
        assert!(!index.is_important("fine"));
        assert_eq!(important_line_starts(""), Vec::<usize>::new());
        assert_eq!(
            important_line_starts("E   assert 1\r\nx ✗\nok\n# pass 2"),
            [0, 14, 23]
        );
    }

    #[test]
    fn lines_are_split_as_the_standard_library_splits_them() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r",
            "a\r\n",
            "\r\n\r\n",
            "a\n\nb",
            "a\r\rb\r\n",
            "é\n✓\r\nx\n\n",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn cleaning_strips_escapes_and_keeps_the_last_redraw() {
        let raw =
            "\x1b[1m\x1b[32m✓\x1b[39m ok\x1b[0m\r\n 10%\r 50%\r100% done\n\x1b]0;title\x07end";
        assert_eq!(clean(raw), "✓ ok\n100% done\nend");
        assert_eq!(clean("tab\there\x08"), "tab\there");
        assert_eq!(clean("cut \x1b["), "cut ");
    }

    #[test]
    fn squeeze_counts_repeats_and_similar_runs() {
        let text = "a\na\na\na\n\n\n\nb\n";
        assert_eq!(
            squeeze(text, None),
            "a\n[… 3 identical lines omitted]\n\nb\n"
        );
        let run: String = (0..10).map(|i| format!("item {i}\n")).collect();
        assert_eq!(
            squeeze(&run, Some(6)),
            "item 0\nitem 1\nitem 2\n[… 5 similar lines omitted]\nitem 8\nitem 9\n"
        );
        assert_eq!(squeeze(&run, Some(10)), run);
        let with_error = "item 0\nitem 1\nitem error 2\nitem 3\n";
        assert_eq!(squeeze(with_error, Some(1)), with_error);
    }

    #[test]
    fn squeezing_repeats_returns_an_unchanged_text_as_it_is() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/transcripts"
        );
        let mut texts: Vec<String> = [
            "",
            "a",
            "a\n",
            "a\na\n",
            "a\na\na\n",
            "a\n\nb\n",
            "a\n\n\nb\n",
            "a\n \nb\n",
            "\n",
            "\n\n",
            "a\r\n",
            "a\rb\n",
            "a\nb\na\nb\n",
            "x\n\ny\n\n",
        ]
        .map(String::from)
        .into();
        for entry in std::fs::read_dir(dir).expect("corpus") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("utf-8");
            texts.push(squeeze(&text, None));
            texts.push(text);
        }
        for text in texts {
            assert_eq!(
                squeeze_repeats(text.clone()),
                squeeze(&text, None),
                "{text:?}"
            );
        }
    }

    #[test]
    fn rules_keep_their_title_not_their_width() {
        let text = format!(
            "{eq} test session starts {eq}\n{us} test_x {us}\n{dash}\n== short ==\n{eq} 2 failed in 0.1s {eq}\n{spaced}\n",
            eq = "=".repeat(30),
            us = "_".repeat(20),
            dash = "-".repeat(40),
            spaced = "_ ".repeat(20)
        );
        assert_eq!(
            shorten_rules(&text),
            format!(
                "=== test session starts ===\n___ test_x ___\n---\n== short ==\n{eq} 2 failed in 0.1s {eq}\n_ _ _\n",
                eq = "=".repeat(30)
            )
        );
    }
}
