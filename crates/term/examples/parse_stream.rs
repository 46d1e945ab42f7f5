//! Feeds a recorded terminal stream to the terminal model in 64 KiB chunks and prints MB/s, to
//! profile the emulator without the Node addon: `cargo run --release -p shellwright-term --example
//! parse_stream -- FILE [COLS ROWS ROUNDS]`.

use std::time::Instant;

use shellwright_term::{Terminal, TerminalOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: parse_stream FILE [COLS ROWS ROUNDS]");
        std::process::exit(2);
    };
    let stream = std::fs::read(path).unwrap_or_else(|error| {
        eprintln!("{path}: {error}");
        std::process::exit(1);
    });
    let number = |index: usize, default: usize| {
        args.get(index)
            .and_then(|arg| arg.parse().ok())
            .unwrap_or(default)
    };
    let cols = u16::try_from(number(2, 120)).unwrap_or(120);
    let rows = u16::try_from(number(3, 40)).unwrap_or(40);
    let rounds = number(4, 10);
    let mut times = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let mut terminal = Terminal::new(TerminalOptions {
            cols,
            rows,
            ..TerminalOptions::default()
        });
        for chunk in stream.chunks(64 * 1024) {
            std::hint::black_box(terminal.feed(chunk));
        }
        std::hint::black_box(terminal.screen());
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let megabytes = stream.len() as f64 / 1e6;
    let rates: Vec<String> = times
        .iter()
        .map(|t| format!("{:.1}", megabytes / t))
        .collect();
    println!(
        "median {:.1} MB/s (all: {})",
        megabytes / times[times.len() / 2],
        rates.join(" ")
    );
}
