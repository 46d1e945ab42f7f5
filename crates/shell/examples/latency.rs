//! Where the time of one `PersistentShell::run` goes, without Node:
//! `cargo run --release -p shellwright-shell --example latency`.

use std::time::Instant;

use shellwright_shell::output::OutputPump;
use shellwright_shell::{PersistentShell, RunRequest, SessionOptions};

const CALLS: u32 = 2000;

fn per_call_us(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let shell = PersistentShell::new(SessionOptions::default());
    // A `cwd` is what a Node caller passes to keep a builtin off the JS thread: `:` with one is
    // the queued path's cost alone.
    let runs = [
        (":", None),
        (":", Some("/tmp")),
        ("echo hi", None),
        ("/bin/true", None),
    ];
    for (command, cwd) in runs {
        let request = || RunRequest {
            command: command.into(),
            cwd: cwd.map(Into::into),
            ..Default::default()
        };
        for _ in 0..100 {
            let _ = shell.run(request(), Box::new(|_| {})).await;
        }
        let start = Instant::now();
        for _ in 0..CALLS {
            let _ = shell.run(request(), Box::new(|_| {})).await;
        }
        let cwd = cwd.map_or(String::new(), |cwd| format!(" in {cwd}"));
        println!(
            "PersistentShell::run({command:?}){cwd}: {:.1} us",
            per_call_us(start)
        );
    }

    // A run in place needs a thread that drives no runtime and has a few MiB of stack, as
    // Node's JS thread does.
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new().stack_size(8 << 20);
        thread
            .spawn_scoped(scope, || {
                for command in [":", "echo hi"] {
                    let start = Instant::now();
                    for _ in 0..CALLS {
                        let request = RunRequest {
                            command: command.into(),
                            ..Default::default()
                        };
                        let ran = shell.try_run_inline(request, Box::new(|_| {}));
                        assert!(ran.is_ok(), "{command:?} must run in place");
                    }
                    println!(
                        "PersistentShell::try_run_inline({command:?}): {:.1} us",
                        per_call_us(start)
                    );
                }
            })
            .expect("thread");
    });

    let pump = OutputPump::start().expect("output thread");
    let start = Instant::now();
    for _ in 0..CALLS {
        let (reader, writer) = pump.begin(Box::new(|_| {})).expect("pipe");
        drop(writer);
        reader.finish().await;
    }
    println!("output pipe begin + finish: {:.1} us", per_call_us(start));

    let mut brush = brush_core::Shell::builder()
        .builtins(brush_builtins::default_builtins(
            brush_builtins::BuiltinSet::BashMode,
        ))
        .build()
        .await
        .expect("brush");
    let params = brush.default_exec_params();
    let source = brush_core::SourceInfo::default();
    let start = Instant::now();
    for _ in 0..CALLS {
        let _ = brush.run_string(":", &source, &params).await;
    }
    println!("bare brush run_string(\":\"): {:.1} us", per_call_us(start));
}
