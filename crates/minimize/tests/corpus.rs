//! The minimizer over the recorded corpus (`tests/fixtures/transcripts/`, made by
//! `tools/record-transcripts.sh`): per transcript and in total, bytes before and after, and the
//! safety property — every important line of the original (see `minimize::text::is_important`:
//! errors, warnings, failures, panics, tracebacks, test summaries, compiler locations) is in the
//! text the agent reads. With `MINIMIZER_REPORT=<file>` the savings table is written there as
//! Markdown (`tools/minimizer-report.mjs` puts it in the README).

use std::path::{Path, PathBuf};

use shellwright_minimize::text::{clean, is_important};
use shellwright_minimize::{Minimizer, MinimizerOptions};

/// The share of the corpus's bytes the minimizer must save: the product's target, which the
/// corpus reaches (70.2 % when this was set) with diffs keeping every changed line, logs every
/// message and listings every name.
const MIN_TOTAL_SAVINGS: f64 = 0.70;

struct Transcript {
    name: String,
    command: String,
    output: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/transcripts")
}

/// `$ command`, `# exit N`, a blank line, then the output (see the recording script).
fn read_corpus() -> Vec<Transcript> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    entries.sort();
    entries
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("utf-8 transcript");
            let (command_line, rest) = text.split_once('\n').expect("command line");
            let (_exit, rest) = rest.split_once('\n').expect("exit line");
            let output = rest
                .strip_prefix('\n')
                .expect("blank line before the output");
            Transcript {
                name: path
                    .file_stem()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned(),
                command: command_line
                    .strip_prefix("$ ")
                    .expect("`$ ` prefix")
                    .to_string(),
                output: output.to_string(),
            }
        })
        .collect()
}

struct Row {
    name: String,
    filter: String,
    before: usize,
    after: usize,
    important: usize,
}

#[test]
fn the_corpus_shrinks_and_keeps_every_important_line() {
    let corpus = read_corpus();
    assert!(
        corpus.len() >= 30,
        "corpus has {} transcripts",
        corpus.len()
    );
    let minimizer = Minimizer::new(MinimizerOptions::default()).expect("defaults");
    let mut rows = Vec::new();
    for transcript in &corpus {
        let minimized = minimizer.minimize(&transcript.command, &transcript.output);
        let (filter, text) = match &minimized {
            Some(m) => (m.filter.clone(), m.text.clone()),
            None => ("(unchanged)".to_string(), transcript.output.clone()),
        };
        let kept: std::collections::HashSet<&str> = text.lines().map(str::trim_end).collect();
        let cleaned = clean(&transcript.output);
        let important: Vec<&str> = cleaned.lines().filter(|l| is_important(l)).collect();
        let missing: Vec<&&str> = important
            .iter()
            .filter(|l| !kept.contains(l.trim_end()))
            .collect();
        if minimized.is_some() {
            assert!(missing.is_empty(), "{}: lost {missing:?}", transcript.name);
        }
        rows.push(Row {
            name: transcript.name.clone(),
            filter,
            before: transcript.output.len(),
            after: text.len(),
            important: important.len(),
        });
    }
    let table = markdown(&rows);
    println!("{table}");
    if let Ok(path) = std::env::var("MINIMIZER_REPORT") {
        std::fs::write(path, &table).expect("write report");
    }
    let before: usize = rows.iter().map(|r| r.before).sum();
    let after: usize = rows.iter().map(|r| r.after).sum();
    let savings = 1.0 - after as f64 / before as f64;
    assert!(
        savings >= MIN_TOTAL_SAVINGS,
        "total savings {:.1} %",
        savings * 100.0
    );
}

fn percent(before: usize, after: usize) -> String {
    if before == 0 {
        return "0 %".into();
    }
    format!("{:.0} %", 100.0 * (1.0 - after as f64 / before as f64))
}

fn markdown(rows: &[Row]) -> String {
    let mut by_filter: std::collections::BTreeMap<&str, (usize, usize, usize)> = Default::default();
    for r in rows {
        let entry = by_filter.entry(r.filter.as_str()).or_default();
        *entry = (entry.0 + 1, entry.1 + r.before, entry.2 + r.after);
    }
    let mut out = String::from(
        "| filter | transcripts | bytes before | bytes after | saved |\n|---|---:|---:|---:|---:|\n",
    );
    for (filter, (count, before, after)) in by_filter {
        out.push_str(&format!(
            "| {filter} | {count} | {before} | {after} | {} |\n",
            percent(before, after)
        ));
    }
    out.push('\n');
    out.push_str(
        "| transcript | filter | bytes before | bytes after | saved | important lines kept |\n|---|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {}/{} |\n",
            r.name,
            r.filter,
            r.before,
            r.after,
            percent(r.before, r.after),
            r.important,
            r.important
        ));
    }
    let before: usize = rows.iter().map(|r| r.before).sum();
    let after: usize = rows.iter().map(|r| r.after).sum();
    let important: usize = rows.iter().map(|r| r.important).sum();
    out.push_str(&format!(
        "| **total** ({} transcripts) | | {before} | {after} | **{}** | {important}/{important} |\n",
        rows.len(),
        percent(before, after)
    ));
    out
}
