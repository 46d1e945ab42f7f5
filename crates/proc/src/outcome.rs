//! How a run ended, for every runtime: the shell's runs and the pseudo-terminal's.

use crate::cancel::CancelReason;
use crate::signal::signal_name;

/// How a run ended: exactly one of four ways, from which the fields a caller reports
/// (`exitCode`, `signal`, `cancelled`, `timedOut`) are derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran to its end with this exit status (for a shell, its last command's: 128 + N when
    /// that command died of signal N, as bash reports it).
    Exited(i32),
    /// Its process died of this signal, uncaught (a pseudo-terminal's child).
    Signaled(i32),
    /// It was stopped by an abort (a signal, `abort()`, `kill()`).
    Cancelled,
    /// It was stopped because its time ran out.
    TimedOut,
}

impl Outcome {
    /// The outcome of a run stopped for `reason` before it finished.
    pub fn stopped(reason: CancelReason) -> Self {
        if reason.is_timeout() {
            Self::TimedOut
        } else {
            Self::Cancelled
        }
    }

    /// The exit status: the code it exited with, 128 + N after a death by signal N, none when
    /// it was stopped.
    pub fn exit_code(self) -> Option<i32> {
        match self {
            Self::Exited(code) => Some(code),
            Self::Signaled(signal) => Some(128 + signal),
            Self::Cancelled | Self::TimedOut => None,
        }
    }

    /// The signal its process died of, if it did.
    pub fn signal(self) -> Option<i32> {
        match self {
            Self::Signaled(signal) => Some(signal),
            _ => None,
        }
    }

    /// The name of that signal (`"SIGKILL"`; `"SIG64"` for one without a name).
    pub fn signal_name(self) -> Option<String> {
        let signal = self.signal()?;
        Some(signal_name(signal).map_or_else(|| format!("SIG{signal}"), str::to_string))
    }

    /// Whether it was stopped by an abort.
    pub fn cancelled(self) -> bool {
        self == Self::Cancelled
    }

    /// Whether it was stopped because its time ran out.
    pub fn timed_out(self) -> bool {
        self == Self::TimedOut
    }

    /// Whether it was stopped before it finished, either way.
    pub fn is_stopped(self) -> bool {
        matches!(self, Self::Cancelled | Self::TimedOut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_reports_one_way_of_ending() {
        let exited = Outcome::Exited(3);
        assert_eq!(
            (
                exited.exit_code(),
                exited.signal(),
                exited.cancelled(),
                exited.timed_out()
            ),
            (Some(3), None, false, false)
        );
        let killed = Outcome::Signaled(libc::SIGKILL);
        assert_eq!(killed.exit_code(), Some(137));
        assert_eq!(killed.signal_name().as_deref(), Some("SIGKILL"));
        assert!(!killed.is_stopped());
        let aborted = Outcome::stopped(CancelReason::Aborted);
        assert_eq!(aborted, Outcome::Cancelled);
        assert_eq!(
            (
                aborted.exit_code(),
                aborted.cancelled(),
                aborted.timed_out()
            ),
            (None, true, false)
        );
        let timed_out = Outcome::stopped(CancelReason::TimedOut);
        assert_eq!(
            (
                timed_out.exit_code(),
                timed_out.cancelled(),
                timed_out.timed_out()
            ),
            (None, false, true)
        );
        assert!(timed_out.is_stopped());
    }
}
