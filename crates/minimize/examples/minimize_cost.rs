//! The minimizer's own cost per call on 1 MB of recorded output, without the shell around it:
//! `cargo run --release -p shellwright-minimize --example minimize_cost`. (`bench/minimizer.bench.mjs`
//! measures the cost through `Shell.run`.) Two figures per case: the whole text minimized at
//! once, and what is left when a run ends — the text pushed into a [`Capture`] in 64 KiB chunks
//! as a run's output streams (not timed), then `minimize_capture`. Arguments, if any, pick the
//! cases whose name contains one of them (`-- vitest` to profile one filter).
//!
//! [`Capture`]: shellwright_minimize::Capture

use std::time::Instant;

use shellwright_minimize::{Minimizer, MinimizerOptions};

/// The size of the chunks a run's output arrives in (the output pipe's).
const CHUNK: usize = 64 << 10;

const CASES: &[(&str, &str)] = &[
    ("cargo-test-workspace", "cargo test"),
    ("git-log", "git log"),
    ("ls-la", "ls -la /usr/bin"),
    ("vitest-verbose-repo", "npx vitest run"),
    ("curl-progress", "./unknown-tool"),
];

fn main() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/transcripts"
    );
    let minimizer = Minimizer::new(MinimizerOptions::default()).expect("defaults");
    let picked: Vec<String> = std::env::args().skip(1).collect();
    for (name, command) in CASES {
        if !picked.is_empty() && !picked.iter().any(|p| name.contains(p.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(format!("{dir}/{name}.txt")).expect("transcript");
        let output = text.splitn(4, '\n').nth(3).unwrap_or("");
        let big = output.repeat((1 << 20) / output.len().max(1));
        let runs = 20;
        let start = Instant::now();
        let mut out_bytes = 0;
        for _ in 0..runs {
            out_bytes = minimizer
                .minimize(command, &big)
                .map_or(big.len(), |m| m.output_bytes);
        }
        let whole = start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
        let mut at_end = 0.0;
        let mut pushing = 0.0;
        for _ in 0..runs {
            let capture = minimizer.capture();
            let pushed = Instant::now();
            let mut rest = big.as_str();
            while !rest.is_empty() {
                let mut cut = rest.len().min(CHUNK);
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                capture.push(&rest[..cut]);
                rest = &rest[cut..];
            }
            pushing += pushed.elapsed().as_secs_f64() * 1000.0;
            let start = Instant::now();
            let minimized = minimizer.minimize_capture(command, Some(0), &capture);
            at_end += start.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(minimized.map_or(big.len(), |m| m.output_bytes), out_bytes);
        }
        let (at_end, pushing) = (at_end / f64::from(runs), pushing / f64::from(runs));
        println!(
            "{name:<24} {:>8} → {out_bytes:>8} bytes  whole {whole:6.2} ms, \
             pushing {pushing:5.2} ms, at a run's end {at_end:6.2} ms",
            big.len()
        );
    }
}
