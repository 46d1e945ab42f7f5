//! Measures where the time of one `PersistentShell::run` goes: `cargo run --release --example latency`.

use std::time::Instant;

use shellwright_shell::{PersistentShell, RunRequest, SessionOptions};

fn per_call_us(n: u32, start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6 / f64::from(n)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n = 2000;
    let shell = PersistentShell::new(SessionOptions::default());
    for command in [":", "echo hi"] {
        let request = || RunRequest {
            command: command.into(),
            ..Default::default()
        };
        for _ in 0..100 {
            let _ = shell.run(request(), Box::new(|_| {})).await;
        }
        let start = Instant::now();
        for _ in 0..n {
            let _ = shell.run(request(), Box::new(|_| {})).await;
        }
        println!(
            "PersistentShell::run({command:?}): {:.1} us",
            per_call_us(n, start)
        );
    }

    let start = Instant::now();
    for _ in 0..n {
        let (reader, writer) =
            shellwright_shell::output::spawn_reader(Box::new(|_| {})).expect("pipe");
        drop(writer);
        reader.finish().await;
    }
    println!(
        "output reader spawn + finish: {:.1} us",
        per_call_us(n, start)
    );

    let mut brush = brush_core::Shell::builder().build().await.expect("brush");
    let params = brush.default_exec_params();
    let source = brush_core::SourceInfo::default();
    let start = Instant::now();
    for _ in 0..n {
        let _ = brush.run_string(":", &source, &params).await;
    }
    println!(
        "bare brush run_string(\":\"): {:.1} us",
        per_call_us(n, start)
    );
}
