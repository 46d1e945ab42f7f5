//! Redirections that name the host's terminal, refused as a process without one refuses them.
//!
//! Every process a session starts has no controlling terminal ([`spawn_policy`]), so its own
//! `open("/dev/tty")` fails at once with ENXIO. But redirections are opened by the shell, which
//! runs inside the host, and the host may well have a terminal: `read -r x < /dev/tty` would read
//! the keys a person types into the agent, and `cat < /dev/tty` would hand the terminal to a
//! program that has none. So the walk over each run's parsed command ([`stages`]) replaces a
//! redirection target that is literally `/dev/tty`, or the name of the host's own terminal (what
//! `ttyname` says of its fds 0–2), by `/proc/<host pid>/fd/<n>`, where `n` is a socket the host
//! holds for this and nothing else: opening a socket through `/proc` fails with ENXIO, "No such
//! device or address", as `/dev/tty` does without a terminal. brush's message names that path
//! rather than `/dev/tty`. Without `/proc` (off Linux) the target is `/dev/null/tty`, refused too,
//! as "Not a directory". Targets that are built at run time (`"$tty"`) and code brush parses
//! itself (`eval` strings, sourced files, command substitutions) are not seen.
//!
//! [`spawn_policy`]: super::spawn_policy
//! [`stages`]: super::stages

use std::os::fd::{AsRawFd as _, OwnedFd};
use std::sync::LazyLock;

use brush_core::parser::ast;

/// The names a redirection may give the host's terminal: `/dev/tty` and the devices the host's
/// stdin, stdout and stderr are, when they are terminals.
static TERMINAL_NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut names = vec!["/dev/tty".to_string()];
    for fd in 0..3 {
        if let Some(name) = terminal_name(fd)
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
});

/// The path every such redirection is pointed at instead: a socket of the host's through
/// `/proc`, which no one can open. Should the socket not be had, a path that cannot be opened
/// either (though with another error).
static REFUSED: LazyLock<String> = LazyLock::new(|| match socket() {
    Some(socket) => {
        let path = format!("/proc/{}/fd/{}", std::process::id(), socket.as_raw_fd());
        // Held for the life of the host: the path must keep naming a socket.
        std::mem::forget(socket);
        path
    }
    None => "/dev/null/tty".to_string(),
});

/// Points `redirect` at [`REFUSED`] when its target is literally one of [`TERMINAL_NAMES`].
pub(crate) fn refuse_terminal(redirect: &mut ast::IoRedirect) {
    let target = match redirect {
        ast::IoRedirect::File(_, _, ast::IoFileRedirectTarget::Filename(word))
        | ast::IoRedirect::File(_, _, ast::IoFileRedirectTarget::Duplicate(word))
        | ast::IoRedirect::OutputAndError(word, _) => word,
        _ => return,
    };
    if names_terminal(&target.value) {
        target.value = REFUSED.clone();
    }
}

/// Whether the raw text of a word is one of [`TERMINAL_NAMES`], bare or in quotes.
fn names_terminal(word: &str) -> bool {
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|quote| {
            word.strip_prefix(*quote)
                .and_then(|rest| rest.strip_suffix(*quote))
        })
        .unwrap_or(word);
    // A cheap test first: most targets name no device at all.
    unquoted.starts_with("/dev/") && TERMINAL_NAMES.iter().any(|name| name == unquoted)
}

/// The device `fd` of the host is, if it is a terminal.
fn terminal_name(fd: libc::c_int) -> Option<String> {
    let mut buffer = [0u8; 256];
    // SAFETY: ttyname_r writes a NUL-terminated name into the buffer it is given, or fails.
    let failed = unsafe { libc::ttyname_r(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
    if failed != 0 {
        return None;
    }
    let end = buffer.iter().position(|b| *b == 0)?;
    String::from_utf8(buffer[..end].to_vec()).ok()
}

/// A Unix socket, close-on-exec, bound and connected to nothing.
#[cfg(target_os = "linux")]
fn socket() -> Option<OwnedFd> {
    use std::os::fd::FromRawFd as _;
    // SAFETY: socket(2) takes integers and returns a new fd or -1.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    // SAFETY: a non-negative result is a new fd that nobody else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// No socket off Linux: there is no `/proc` to name it through.
#[cfg(not(target_os = "linux"))]
fn socket() -> Option<OwnedFd> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_literal_terminal_names_are_refused() {
        for word in ["/dev/tty", "'/dev/tty'", "\"/dev/tty\""] {
            assert!(names_terminal(word), "{word}");
        }
        for word in [
            "/dev/ttyS0",
            "/dev/null",
            "tty",
            "$tty",
            "/dev/tty'",
            "'/dev/tty\"",
        ] {
            assert!(!names_terminal(word), "{word}");
        }
    }

    #[test]
    fn the_refused_path_cannot_be_opened() {
        let error = std::fs::File::open(&*REFUSED).expect_err("open");
        assert_eq!(error.raw_os_error(), Some(libc::ENXIO));
        let error = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&*REFUSED)
            .expect_err("open for writing");
        assert_eq!(error.raw_os_error(), Some(libc::ENXIO));
    }
}
