//! Signal numbers and names, and process-group signalling.

/// SIGKILL; 9 where libc defines no such signal (Windows), the number [`signal_name`] gives that
/// name to there too.
#[cfg(unix)]
pub const SIGKILL: i32 = libc::SIGKILL;
#[cfg(not(unix))]
pub const SIGKILL: i32 = 9;

/// The conventional name of signal `signal` (`9` → `"SIGKILL"`), for the signals POSIX and Linux
/// define; `None` for numbers without a fixed name (real-time signals, out of range).
pub fn signal_name(signal: i32) -> Option<&'static str> {
    #[cfg(unix)]
    {
        let name = match signal {
            libc::SIGHUP => "SIGHUP",
            libc::SIGINT => "SIGINT",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGILL => "SIGILL",
            libc::SIGTRAP => "SIGTRAP",
            libc::SIGABRT => "SIGABRT",
            libc::SIGBUS => "SIGBUS",
            libc::SIGFPE => "SIGFPE",
            libc::SIGKILL => "SIGKILL",
            libc::SIGUSR1 => "SIGUSR1",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGUSR2 => "SIGUSR2",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGALRM => "SIGALRM",
            libc::SIGTERM => "SIGTERM",
            libc::SIGCHLD => "SIGCHLD",
            libc::SIGCONT => "SIGCONT",
            libc::SIGSTOP => "SIGSTOP",
            libc::SIGTSTP => "SIGTSTP",
            libc::SIGTTIN => "SIGTTIN",
            libc::SIGTTOU => "SIGTTOU",
            libc::SIGURG => "SIGURG",
            libc::SIGXCPU => "SIGXCPU",
            libc::SIGXFSZ => "SIGXFSZ",
            libc::SIGVTALRM => "SIGVTALRM",
            libc::SIGPROF => "SIGPROF",
            libc::SIGWINCH => "SIGWINCH",
            libc::SIGIO => "SIGIO",
            libc::SIGSYS => "SIGSYS",
            #[cfg(any(target_os = "linux", target_os = "android"))]
            libc::SIGSTKFLT => "SIGSTKFLT",
            #[cfg(any(target_os = "linux", target_os = "android"))]
            libc::SIGPWR => "SIGPWR",
            _ => return None,
        };
        Some(name)
    }
    #[cfg(not(unix))]
    {
        match signal {
            2 => Some("SIGINT"),
            9 => Some("SIGKILL"),
            15 => Some("SIGTERM"),
            _ => None,
        }
    }
}

/// Sends `signal` to every process in group `pgid`; returns whether the kernel accepted it.
///
/// Refuses (returns false) for group ids ≤ 1 and for the caller's own group, so a stop request can
/// never take down the host process. A group id cannot be reused while any process is still in
/// the group, so no identity check is needed beyond the caller knowing the group is the one it
/// means.
pub fn signal_group(pgid: u32, signal: i32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: getpgrp/killpg take and return plain integers.
        let own_group = unsafe { libc::getpgrp() } as u32;
        if pgid <= 1 || pgid == own_group {
            return false;
        }
        // SAFETY: killpg takes plain integers; the group is neither init's nor the host's own.
        unsafe { libc::killpg(pgid as libc::pid_t, signal) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = (pgid, signal);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_common_signals() {
        let table = [
            (1, Some("SIGHUP")),
            (2, Some("SIGINT")),
            (9, Some("SIGKILL")),
            (15, Some("SIGTERM")),
            (0, None),
            (-3, None),
            (200, None),
        ];
        for (number, name) in table {
            assert_eq!(signal_name(number), name, "signal {number}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn never_signals_its_own_group_or_init() {
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() } as u32;
        assert!(!signal_group(own, 0));
        assert!(!signal_group(1, 0));
        assert!(!signal_group(0, 0));
    }
}
