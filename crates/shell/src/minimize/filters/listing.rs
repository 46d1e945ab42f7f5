//! Listings. `ls -l`: each entry becomes its name (with `/` for a directory, `-> target` for a
//! link) and, for a file, its size; permissions, owners, link counts and dates go. `find`: paths
//! are grouped under their directory, one line per directory, when there are many. `tree`: a long
//! tree keeps its first 80 and last 10 lines (the count summary) around a count.
//! A listing whose lines do not all have the expected shape is left unchanged.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::minimize::text::{Output, is_important};

static LONG_ENTRY: LazyLock<Regex> = pattern!(
    r"^([-dlcbps])[-rwxsStT]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+([\d,]+(?:,\s*\d+)?)\s+\w{3}\s+\d{1,2}\s+[\d:]{4,5}\s(.*)$"
);

/// Fewer entries than this are shown as they are.
const MIN_ENTRIES: usize = 20;
const TREE_HEAD: usize = 80;
const TREE_TAIL: usize = 10;

pub fn ls(cleaned: &str) -> Option<String> {
    let mut out = Output::default();
    let mut entries = 0;
    for line in cleaned.lines() {
        if let Some(entry) = LONG_ENTRY.captures(line).filter(|_| !is_important(line)) {
            entries += 1;
            let name = &entry[3];
            match &entry[1] {
                "d" => out.line(&format!("{name}/")),
                "-" => out.line(&format!("{name} {}", &entry[2])),
                _ => out.line(name),
            }
        } else if line.is_empty()
            || line.starts_with("total ")
            || line.ends_with(':')
            || is_important(line)
        {
            out.line(line);
        } else {
            return None;
        }
    }
    (entries >= MIN_ENTRIES).then(|| out.finish())
}

pub fn find(cleaned: &str) -> Option<String> {
    let mut directories: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    let mut other = Output::default();
    let mut paths = 0;
    for line in cleaned.lines() {
        if is_important(line) || !line.contains('/') || line.contains(char::is_whitespace) {
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

pub fn tree(cleaned: &str) -> Option<String> {
    let lines: Vec<&str> = cleaned.lines().collect();
    if lines.len() <= TREE_HEAD + TREE_TAIL {
        return None;
    }
    let mut out = Output::default();
    lines[..TREE_HEAD].iter().for_each(|l| out.line(l));
    let middle = &lines[TREE_HEAD..lines.len() - TREE_TAIL];
    let hidden = middle.iter().filter(|l| !is_important(l)).count();
    out.omitted(hidden, "tree line");
    middle
        .iter()
        .filter(|l| is_important(l))
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
        let out = ls(&text).expect("a long listing");
        assert!(
            out.starts_with("total 12\n./\nfile 0.txt 000\nfile 1.txt 100\n"),
            "{out}"
        );
        assert!(
            out.ends_with("file 19.txt 1900\nGET -> lwp-request\n"),
            "{out}"
        );
        assert_eq!(ls("a\nb\n"), None);
        assert_eq!(ls(&text.replace("total 12", "something else")), None);
    }

    #[test]
    fn find_groups_by_directory() {
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&format!("src/a/f{i}.rs\nsrc/b/g{i}.rs\n"));
        }
        text.push_str("find: ‘/root’: Permission denied\n");
        let out = find(&text).expect("many paths");
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
        let out = tree(&text).expect("a long tree");
        assert_eq!(out.lines().count(), TREE_HEAD + TREE_TAIL + 1);
        assert!(out.contains("\n[… 13 tree lines omitted]\n"), "{out}");
        assert!(out.ends_with("\n0 directories, 100 files\n"));
    }
}
