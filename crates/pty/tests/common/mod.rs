//! Helpers shared by the PTY integration tests.
#![allow(dead_code)] // each test crate uses a different subset

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Collects everything that reached a run's output.
#[derive(Clone, Default)]
pub struct Collected(Arc<Mutex<Vec<u8>>>);

impl Collected {
    pub fn output(&self) -> impl shellwright_pty::PtyOutput {
        let bytes = Arc::clone(&self.0);
        move |chunk: &[u8]| bytes.lock().expect("lock").extend_from_slice(chunk)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("lock")).into_owned()
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().expect("lock").clone()
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A scratch directory, `shellwright-pty-<name>-<pid>` in the temporary directory, removed when
/// dropped, a failed assertion included.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("shellwright-pty-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).expect("scratch dir");
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
