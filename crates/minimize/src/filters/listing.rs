//! Listings. `ls -l`: each entry becomes its name (with `/` for a directory, `-> target` for a
//! link) and, for a file, its size; permissions, owners, link counts and dates go. A listing of
//! more than [`LONG_LISTING`] entries keeps only the names, marked as `ls -F` does (`/`
//! directory, `@` link), several to a line, under a count of each kind. `find`: paths
//! are grouped under their directory, one line per directory, when there are many. `tree`: a long
//! tree keeps its first 80 and last 10 lines (the count summary) around a count.
//! A listing whose lines do not all have the expected shape is left unchanged.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use memchr::memmem;

use crate::text::{Output, Transcript, lines};

/// Fewer entries than this are shown as they are.
const MIN_ENTRIES: usize = 20;
/// More entries than this are shown by name only.
const LONG_LISTING: usize = 200;
/// Names are packed into lines of about this many bytes.
const NAMES_WIDTH: usize = 100;
const TREE_HEAD: usize = 80;
const TREE_TAIL: usize = 10;

/// One `ls -l` line's kind (`-`, `d`, `l`, …), size and name (with `-> target` for a link),
/// and the line itself when it is important (a name like `test` after a year reads as a test
/// count): such a line is kept verbatim.
struct Entry<'a> {
    kind: &'a str,
    size: &'a str,
    name: &'a str,
    important: Option<&'a str>,
}

pub fn ls(cleaned: &Transcript) -> Option<String> {
    // Every entry goes into one vector sized once (a listing is mostly entries, a line each);
    // a section is a heading line and where its entries start.
    let lines_count = memchr::memchr_iter(b'\n', cleaned.as_bytes()).count() + 1;
    let mut entries = Vec::with_capacity(lines_count);
    let mut sections: Vec<(Option<&str>, usize)> = vec![(None, 0)];
    for line in lines(cleaned) {
        match long_entry(line, cleaned) {
            Some(entry) => entries.push(entry),
            None if line.is_empty()
                || line.starts_with("total ")
                || line.ends_with(':')
                || cleaned.is_important(line) =>
            {
                sections.push((Some(line), entries.len()));
            }
            None => return None,
        }
    }
    if entries.len() < MIN_ENTRIES {
        return None;
    }
    let mut out = Output::with_capacity(cleaned.len());
    let ends = sections.iter().skip(1).map(|s| s.1).chain([entries.len()]);
    for ((line, start), end) in sections.iter().zip(ends) {
        if let Some(line) = line {
            out.line(line);
        }
        let section = &entries[*start..end];
        if section.len() > LONG_LISTING {
            names_only(section, &mut out);
        } else {
            section.iter().for_each(|e| out.line(&name_and_size(e)));
        }
    }
    Some(out.finish())
}

/// Parses an `ls -l` line: `drwxr-xr-x 2 root root 4096 Nov 23 12:22 name` (a device has
/// `major, minor` for a size; the time may be a year). By hand rather than by regex: a regex
/// with captures costs several times more per line, and a listing is all such lines.
fn long_entry<'a>(line: &'a str, listing: &Transcript) -> Option<Entry<'a>> {
    let mut fields = Fields { line, at: 0 };
    let mode = fields.next()?;
    let kind = mode.get(..1)?;
    let valid_mode = matches!(kind, "-" | "d" | "l" | "c" | "b" | "p" | "s")
        && mode.get(1..10)?.bytes().all(|b| b"-rwxsStT".contains(&b))
        && matches!(mode.get(10..), Some("" | "." | "+" | "@"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !valid_mode || !digits(fields.next()?) {
        return None;
    }
    let (_owner, _group) = (fields.next()?, fields.next()?);
    let size_start = fields.at;
    let first = fields.next()?;
    let size = match first.strip_suffix(',') {
        // A device: `major, minor`.
        Some(major) if digits(major) && digits(fields.next()?) => {
            line[size_start..fields.at].trim_start()
        }
        None if first.split(',').all(digits) => first,
        _ => return None,
    };
    let (month, day, time) = (fields.next()?, fields.next()?, fields.next()?);
    let valid_date = month.len() == 3
        && month.chars().all(char::is_alphabetic)
        && day.len() <= 2
        && digits(day)
        && (4..=5).contains(&time.len())
        && time.bytes().all(|b| b.is_ascii_digit() || b == b':');
    // One whitespace character separates the date from the name, which may begin with spaces.
    let name = line[fields.at..].strip_prefix([' ', '\t'])?;
    (valid_date && !name.is_empty()).then(|| Entry {
        kind,
        size,
        name,
        important: listing.is_important(line).then_some(line),
    })
}

/// Whitespace-separated fields of a line, read left to right.
struct Fields<'a> {
    line: &'a str,
    /// Where the next field's search starts (just past the previous field).
    at: usize,
}

impl<'a> Fields<'a> {
    /// The next field. A field of printable ASCII after ASCII blanks (all of a listing's fields
    /// before the name, nearly always) is read byte by byte in one tight loop: decoding
    /// characters made this most of the listing filter's cost. Any other byte hands the field
    /// to [`next_any`](Self::next_any), which splits at any Unicode whitespace.
    #[inline(always)]
    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.line.as_bytes();
        let blank = |b: u8| b == b' ' || b == b'\t';
        let mut i = self.at;
        while i < bytes.len() && blank(bytes[i]) {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && matches!(bytes[i], 0x21..=0x7e) {
            i += 1;
        }
        if i < bytes.len() && !blank(bytes[i]) {
            return self.next_any();
        }
        self.at = i;
        // `start..i` holds only ASCII, so both ends are character boundaries.
        (i > start).then(|| &self.line[start..i])
    }

    fn next_any(&mut self) -> Option<&'a str> {
        let rest = &self.line[self.at..];
        let start = self.at + (rest.len() - rest.trim_start().len());
        let len = self.line[start..]
            .find(char::is_whitespace)
            .unwrap_or(self.line.len() - start);
        self.at = start + len;
        (len > 0).then(|| &self.line[start..start + len])
    }
}

fn name_and_size(entry: &Entry) -> String {
    if let Some(line) = entry.important {
        return line.to_string();
    }
    match entry.kind {
        "d" => format!("{}/", entry.name),
        "-" => format!("{} {}", entry.name, entry.size),
        _ => entry.name.to_string(),
    }
}

/// A count of each kind, then the names (`ls -F` marks, names sharing a prefix as
/// `prefix{a,b,c}`), a line at a time.
fn names_only(entries: &[Entry], out: &mut Output) {
    let count = |kind: &str| entries.iter().filter(|e| e.kind == kind).count();
    let (files, dirs, links) = (count("-"), count("d"), count("l"));
    let other = entries.len() - files - dirs - links;
    let mut summary = format!(
        "[{} entries: {files} files, {dirs} directories (/), {links} symlinks (@)",
        entries.len()
    );
    if other > 0 {
        summary.push_str(&format!(", {other} other"));
    }
    summary.push_str(
        "; sizes, owners, permissions, dates and link targets omitted; names sharing a prefix as prefix{a,b}]",
    );
    out.line(&summary);
    let mut names = Vec::with_capacity(entries.len());
    for entry in entries {
        if let Some(line) = entry.important {
            pack(&brace_groups(&names), out);
            names.clear();
            out.line(line);
            continue;
        }
        names.push(match entry.kind {
            "d" => Marked::new(entry.name, "/"),
            "l" => Marked::new(link_name(entry.name), "@"),
            _ => Marked::new(entry.name, ""),
        });
    }
    pack(&brace_groups(&names), out);
}

/// A link entry's name without its ` -> target`.
fn link_name(entry: &str) -> &str {
    static ARROW: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(" -> "));
    ARROW
        .find(entry.as_bytes())
        .map_or(entry, |at| &entry[..at])
}

/// A name as `ls -F` shows it, kept as the name and its mark rather than a string of its own:
/// a listing has thousands of names.
#[derive(Clone, Copy)]
struct Marked<'a> {
    name: &'a str,
    mark: &'static str,
    /// Whether it may go into a `prefix{a,b}` group (no `,`, `{`, `}` or space in it).
    groupable: bool,
}

impl<'a> Marked<'a> {
    fn new(name: &'a str, mark: &'static str) -> Self {
        let groupable = !name.bytes().any(|b| matches!(b, b',' | b'{' | b'}' | b' '));
        Self {
            name,
            mark,
            groupable,
        }
    }

    fn len(&self) -> usize {
        self.name.len() + self.mark.len()
    }
}

/// What [`pack`] lays out: a name, or names sharing a prefix of `prefix` bytes.
enum Token<'n, 'a> {
    Name(Marked<'a>),
    Group {
        prefix: usize,
        names: &'n [Marked<'a>],
    },
}

impl Token<'_, '_> {
    fn len(&self) -> usize {
        match self {
            Token::Name(name) => name.len(),
            Token::Group { prefix, names } => {
                let rests: usize = names.iter().map(|n| n.len() - prefix).sum();
                prefix + rests + names.len() + 1
            }
        }
    }

    fn write(&self, row: &mut String) {
        match self {
            Token::Name(name) => {
                row.push_str(name.name);
                row.push_str(name.mark);
            }
            Token::Group { prefix, names } => {
                row.push_str(&names[0].name[..*prefix]);
                for (i, name) in names.iter().enumerate() {
                    row.push(if i == 0 { '{' } else { ',' });
                    row.push_str(&name.name[*prefix..]);
                    row.push_str(name.mark);
                }
                row.push('}');
            }
        }
    }
}

/// Names packed into lines of about [`NAMES_WIDTH`] bytes, one space apart (two if a name has a
/// space in it).
fn pack(tokens: &[Token], out: &mut Output) {
    let spaced = |t: &Token| matches!(t, Token::Name(n) if n.name.contains(' '));
    let gap = if tokens.iter().any(spaced) { "  " } else { " " };
    let mut row = String::new();
    for token in tokens {
        if !row.is_empty() && row.len() + gap.len() + token.len() > NAMES_WIDTH {
            out.line(&row);
            row.clear();
        }
        if !row.is_empty() {
            row.push_str(gap);
        }
        token.write(&mut row);
    }
    if !row.is_empty() {
        out.line(&row);
    }
}

/// Runs of three or more consecutive names (two, if the prefix is six bytes or more) that share
/// a prefix ending in `-`, `_` or `.` become one `prefix{rest,rest,…}` (the prefix that saves
/// most); other names stay as they are.
fn brace_groups<'n, 'a>(names: &'n [Marked<'a>]) -> Vec<Token<'n, 'a>> {
    let mut tokens = Vec::with_capacity(names.len());
    let mut i = 0;
    while i < names.len() {
        let name = names[i];
        let mut best: Option<(usize, usize)> = None;
        let separators = name.name.bytes().enumerate();
        let separators =
            separators.filter(|(_, b)| name.groupable && matches!(b, b'-' | b'_' | b'.'));
        for (at, _) in separators {
            let prefix = &name.name[..=at];
            let run = names[i..]
                .iter()
                .take_while(|n| n.groupable && n.len() > prefix.len() && n.name.starts_with(prefix))
                .count();
            let saved = |(len, run): (usize, usize)| (run - 1) * len;
            let worth_it = run >= 3 || (run == 2 && prefix.len() >= 6);
            if worth_it && best.is_none_or(|b| saved((prefix.len(), run)) > saved(b)) {
                best = Some((prefix.len(), run));
            }
        }
        match best {
            Some((prefix, run)) => {
                tokens.push(Token::Group {
                    prefix,
                    names: &names[i..i + run],
                });
                i += run;
            }
            None => {
                tokens.push(Token::Name(name));
                i += 1;
            }
        }
    }
    tokens
}

pub fn find(cleaned: &Transcript) -> Option<String> {
    let mut directories: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    let mut other = Output::default();
    let mut paths = 0;
    for line in lines(cleaned) {
        if cleaned.is_important(line) || !line.contains('/') || line.contains(char::is_whitespace) {
            other.line(line);
            continue;
        }
        paths += 1;
        let (dir, name) = line.rsplit_once('/').unwrap_or(("", line));
        directories
            .entry(dir)
            .or_insert_with(|| {
                order.push(dir);
                Vec::new()
            })
            .push(name);
    }
    if paths < MIN_ENTRIES {
        return None;
    }
    let mut out = Output::default();
    for dir in order {
        let names = &directories[dir];
        out.line(&format!("{dir}/: {}", names.join(" ")));
    }
    Some(out.finish() + &other.finish())
}

pub fn tree(cleaned: &Transcript) -> Option<String> {
    let lines: Vec<&str> = lines(cleaned).collect();
    if lines.len() <= TREE_HEAD + TREE_TAIL {
        return None;
    }
    let mut out = Output::default();
    lines[..TREE_HEAD].iter().for_each(|l| out.line(l));
    let middle = &lines[TREE_HEAD..lines.len() - TREE_TAIL];
    let hidden = middle.iter().filter(|l| !cleaned.is_important(l)).count();
    out.omitted(hidden, "tree line");
    middle
        .iter()
        .filter(|l| cleaned.is_important(l))
        .for_each(|l| out.line(l));
    lines[lines.len() - TREE_TAIL..]
        .iter()
        .for_each(|l| out.line(l));
    Some(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_listings_keep_names_and_sizes() {
        let mut text = String::from("total 12\ndrwxr-xr-x  2 root root 4096 Nov 23 12:22 .\n");
        for i in 0..20 {
            text.push_str(&format!(
                "-rw-r--r--  1 root root {i}00 Jan  4  2023 file {i}.txt\n"
            ));
        }
        text.push_str("lrwxrwxrwx  1 root root   11 Mar  1  2023 GET -> lwp-request\n");
        let out = ls(&Transcript::new(&text)).expect("a long listing");
        assert!(
            out.starts_with("total 12\n./\nfile 0.txt 000\nfile 1.txt 100\n"),
            "{out}"
        );
        assert!(
            out.ends_with("file 19.txt 1900\nGET -> lwp-request\n"),
            "{out}"
        );
        assert_eq!(ls(&Transcript::new("a\nb\n")), None);
        assert_eq!(
            ls(&Transcript::new(
                &text.replace("total 12", "something else")
            )),
            None
        );
    }

    #[test]
    fn long_entries_parse_by_hand() {
        const DEVICE: &str = "crw-rw-rw-  1 root root   1,   3 Nov 23 12:22 null";
        const SPACED: &str = "-rw-r--r--. 1 me me 10 Jan  4  2023  two words";
        let device = long_entry(DEVICE, &Transcript::new(DEVICE)).expect("device");
        assert_eq!(
            (device.kind, device.size, device.name),
            ("c", "1,   3", "null")
        );
        let spaced = long_entry(SPACED, &Transcript::new(SPACED)).expect("file");
        assert_eq!(
            (spaced.kind, spaced.size, spaced.name),
            ("-", "10", " two words")
        );
        // Fields that are not plain ASCII are read character by character: a wide space
        // separates, a wide letter does not.
        for line in [
            "-rw-r--r--\u{a0}1 me me 10 Jan  4  2023 x",
            "-rw-r--r-- 1 josé staff 10 Jan  4  2023 x",
            "-rw-r--r-- 1 me me 10\u{2003}Jan  4  2023 x",
        ] {
            let entry = long_entry(line, &Transcript::new(line)).expect(line);
            assert_eq!((entry.kind, entry.size, entry.name), ("-", "10", "x"));
        }
        assert!(long_entry("-rw-r--r-- 1 me me 1é Jan 4 2023 a", &Transcript::new("")).is_none());
        for line in [
            "-rw-r--r-- 1 me me 10 Jan 4 2023",
            "-rw-r--r-- x me me 10 Jan 4 2023 a",
            "-rw-r--r-- 1 me me 1x Jan 4 2023 a",
            "-rw-r--r-- 1 me me 10 January 4 2023 a",
            "?rw-r--r-- 1 me me 10 Jan 4 2023 a",
        ] {
            assert!(long_entry(line, &Transcript::new(line)).is_none(), "{line}");
        }
    }

    #[test]
    fn listings_over_the_limit_keep_names_only() {
        let mut text = String::from("total 9\n");
        for name in ["apt", "apt-cache", "apt-get", "apt-key", "bash"] {
            text.push_str(&format!(
                "-rwxr-xr-x  1 root root   1200 Sep 20  2022 {name}\n"
            ));
        }
        text.push_str("lrwxrwxrwx  1 root root      6 Jan  8  2023 cpp -> cpp-12\n");
        text.push_str("drwxr-xr-x  2 root root   4096 Jan  8  2023 lib\n");
        text.push_str("-rwxr-xr-x  1 root root  60304 Sep 20  2022 test\n");
        for i in 0..LONG_LISTING {
            text.push_str(&format!(
                "-rwxr-xr-x  1 root root   1200 Sep 20  2022 x-{i:03}\n"
            ));
        }
        let out = ls(&Transcript::new(&text)).expect("a long listing");
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("total 9"));
        assert_eq!(
            lines.next(),
            Some(
                "[208 entries: 206 files, 1 directories (/), 1 symlinks (@); sizes, owners, permissions, dates and link targets omitted; names sharing a prefix as prefix{a,b}]"
            )
        );
        assert_eq!(lines.next(), Some("apt apt-{cache,get,key} bash cpp@ lib/"));
        // A year then `test` reads as a test count: the entry is kept as it is.
        assert_eq!(
            lines.next(),
            Some("-rwxr-xr-x  1 root root  60304 Sep 20  2022 test")
        );
        assert!(lines.next().is_some_and(|l| l.starts_with("x-{000,001,")));
    }

    #[test]
    fn find_groups_by_directory() {
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&format!("src/a/f{i}.rs\nsrc/b/g{i}.rs\n"));
        }
        text.push_str("find: ‘/root’: Permission denied\n");
        let out = find(&Transcript::new(&text)).expect("many paths");
        assert_eq!(
            out,
            "src/a/: f0.rs f1.rs f2.rs f3.rs f4.rs f5.rs f6.rs f7.rs f8.rs f9.rs f10.rs f11.rs\nsrc/b/: g0.rs g1.rs g2.rs g3.rs g4.rs g5.rs g6.rs g7.rs g8.rs g9.rs g10.rs g11.rs\nfind: ‘/root’: Permission denied\n"
        );
    }

    #[test]
    fn long_trees_keep_head_and_summary() {
        let mut text = String::from(".\n");
        for i in 0..100 {
            text.push_str(&format!("├── f{i}\n"));
        }
        text.push_str("\n0 directories, 100 files\n");
        let out = tree(&Transcript::new(&text)).expect("a long tree");
        assert_eq!(out.lines().count(), TREE_HEAD + TREE_TAIL + 1);
        assert!(out.contains("\n[… 13 tree lines omitted]\n"), "{out}");
        assert!(out.ends_with("\n0 directories, 100 files\n"));
    }
}
