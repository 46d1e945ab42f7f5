//! A session never changes how the host handles signals: brush-core listens for SIGTSTP while it
//! waits for an external command, yet the host must still be suspended by Ctrl+Z afterwards. In a
//! binary of its own, so that nothing else in the process touches the dispositions it reads.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use shellwright_shell::SessionOptions;

/// The mask of signals the process catches, from `/proc/self/status`.
fn caught_signals() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let hex = status
        .lines()
        .find_map(|line| line.strip_prefix("SigCgt:"))
        .expect("SigCgt line");
    u64::from_str_radix(hex.trim(), 16).expect("hex mask")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_an_external_command_leaves_sigtstp_to_the_host() {
    let sigtstp = 1u64 << (libc::SIGTSTP - 1);
    assert_eq!(
        caught_signals() & sigtstp,
        0,
        "SIGTSTP is not caught to begin with"
    );
    let (result, out) = once(request("/bin/true && echo ran"), SessionOptions::default()).await;
    assert_eq!((result, out.as_str()), (exited(0), "ran\n"));
    assert_eq!(caught_signals() & sigtstp, 0, "SIGTSTP is still not caught");
}
