//! The minimizer's own cost per call on 1 MB of recorded output, without the shell around it:
//! `cargo run --release -p shellwright-minimize --example minimize_cost`. (`bench/minimizer.bench.mjs`
//! measures the cost through `Shell.run`.) Arguments, if any, pick the cases whose name contains
//! one of them (`-- vitest` to profile one filter).

use std::time::Instant;

use shellwright_minimize::{Minimizer, MinimizerOptions};

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
        let per_call = start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
        println!(
            "{name:<24} {:>8} → {out_bytes:>8} bytes  {per_call:6.2} ms per call",
            big.len()
        );
    }
}
