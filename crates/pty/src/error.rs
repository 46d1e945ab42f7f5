//! The errors of the PTY runtime, with the messages callers show.

/// Why a PTY run could not start or an operation on it failed.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    #[error("Failed to set cwd: {path}: {reason}")]
    Cwd { path: String, reason: String },
    #[error("Failed to open a pseudo-terminal: {0}")]
    Open(String),
    #[error("Failed to spawn {program}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("Failed to resize the pseudo-terminal: {0}")]
    Resize(String),
    #[error("PTY session is not running")]
    NotRunning,
    #[error("PTY session already running")]
    AlreadyRunning,
    #[error("PTY I/O failed: {0}")]
    Io(String),
}
