//! What beginning a run costs ([`RunScope::begin`]) on its usual path (two small reads, the pid
//! cursor), in a host with as many threads as a Node process running a shell session has — which
//! matters only to the fallback that lists the host's children where the pid cursor cannot be
//! read: `cargo run --release -p shellwright-proc --example scope_cost`.

use std::time::Instant;

use shellwright_proc::RunScope;

const CALLS: u32 = 5000;
/// Node's own threads plus a session's: the fallback that lists the host's children reads one
/// file per thread.
const HOST_THREADS: usize = 16;

fn main() {
    let _threads: Vec<_> = (0..HOST_THREADS)
        .map(|_| std::thread::spawn(std::thread::park))
        .collect();
    for _ in 0..100 {
        drop(RunScope::begin());
    }
    let start = Instant::now();
    for _ in 0..CALLS {
        drop(RunScope::begin());
    }
    println!(
        "RunScope::begin: {:.1} us",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
    );
}
