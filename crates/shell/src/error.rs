//! Errors a run can fail with. Each message starts with a fixed phrase, so a caller
//! can tell them apart by prefix.

/// Why a run was rejected (as opposed to finishing with an exit code or being cancelled).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ShellError {
    #[error("Failed to initialize shell: {0}")]
    Init(String),
    #[error("Failed to set cwd: {0}")]
    Cwd(String),
    #[error("Failed to source snapshot: {0}")]
    Snapshot(String),
    #[error("Shell execution failed: {0}")]
    Execution(String),
    /// The shell was closed: it runs nothing any more.
    #[error("Shell is closed")]
    Closed,
}
