//! Builds the snapshot benchmark's terminal (120×40, 10 000 lines of coloured scrollback) and
//! times [`Terminal::snapshot`], to profile it without the Node addon: `cargo run --release -p
//! shellwright-term --example snapshot_history -- [ROUNDS]`.

use std::time::Instant;

use shellwright_term::{Terminal, TerminalOptions};

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(30usize);
    let (cols, rows, scrollback) = (120u16, 40u16, 10_000usize);
    let mut history = String::new();
    // The lines bench/terminal.bench.mjs writes.
    for i in 0..scrollback + usize::from(rows) {
        history.push_str(&format!(
            "\x1b[3{}mline {i}\x1b[0m {}\x1b[1;38;5;{}mend\x1b[0m\r\n",
            i % 8,
            "lorem ipsum dolor ".repeat(1 + i % 5),
            i % 256
        ));
    }
    let mut terminal = Terminal::new(TerminalOptions {
        cols,
        rows,
        scrollback,
        ..TerminalOptions::default()
    });
    terminal.feed(history.as_bytes());
    let mut times = Vec::new();
    let mut length = 0;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        length = std::hint::black_box(terminal.snapshot()).len();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "median {:.2} ms for {length} bytes (fastest {:.2} ms)",
        times[times.len() / 2],
        times[0]
    );
}
