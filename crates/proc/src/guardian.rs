//! Nothing a run started outlives the host: a guardian process ends every process tagged by a run
//! of this host once the host is gone, whatever ended it — a normal exit, an uncaught exception,
//! a crash, SIGKILL.
//!
//! A host that can no longer run code cannot clean up after itself, so something else must notice
//! its end. The guardian is started once, before the host's first run: `/bin/sh` running a short
//! script in a process group of its own (a signal to the host's terminal or group does not reach
//! it, and it ignores hangups and interrupts), with its stdin the read end of a pipe whose write
//! end only the host holds (close-on-exec: no child inherits it). When the host ends, the kernel
//! closes that end; the guardian's `read` returns and it kills, with SIGKILL, every process whose
//! environment carries a run tag of this host (`SHELLWRIGHT_RUN=<host pid>-…`: processes that
//! called `setsid` or `nohup` keep it), looking again a few times for processes forked meanwhile.
//! A process that cleared its environment (`env -i`) is out of its reach.
//!
//! Linux's parent-death signal was the other candidate: it follows the *thread* that forked, not
//! the process (a session's worker thread ending would kill its jobs), and it does not reach
//! grandchildren or processes that left the tree.

use std::io;
#[cfg(unix)]
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

/// The script: wait for the host's end, then sweep its tagged processes. `$1` is the host's pid.
/// GNU grep reads the NUL-separated environments in one process (`-z`: `^` is an entry's start);
/// where grep lacks `-z`, each environment goes through `tr`.
#[cfg(target_os = "linux")]
const SCRIPT: &str = r#"trap '' HUP INT TERM QUIT PIPE
while read -r _; do :; done
tagged() {
  if printf 'a\0' | grep -qz '^a$' 2>/dev/null; then
    grep -lzs "^SHELLWRIGHT_RUN=$1-" /proc/[0-9]*/environ 2>/dev/null
  else
    for f in /proc/[0-9]*/environ; do
      tr '\0' '\n' < "$f" 2>/dev/null | grep -q "^SHELLWRIGHT_RUN=$1-" && echo "$f"
    done
  fi
}
for round in 1 2 3 4 5; do
  tagged "$1" | while IFS= read -r f; do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = "$$" ] || kill -KILL "$p" 2>/dev/null
  done
  sleep 0.1
done
"#;

/// The name the guardian shows in its command line (`ps`), after the script.
pub const GUARDIAN_NAME: &str = "shellwright-guardian";

struct Guardian {
    pid: u32,
    /// The write end of the guardian's stdin; never written, closed only by the host's end.
    #[cfg(unix)]
    _alive: OwnedFd,
}

static GUARDIAN: OnceLock<Option<Guardian>> = OnceLock::new();

/// Starts the guardian if it is not running yet; returns its pid, or `None` where it could not
/// start (no `/bin/sh`, or not Linux: there is no `/proc` to sweep).
pub fn ensure() -> Option<u32> {
    GUARDIAN
        .get_or_init(|| start().ok())
        .as_ref()
        .map(|guardian| guardian.pid)
}

/// The guardian's pid, if it was started.
pub fn pid() -> Option<u32> {
    GUARDIAN.get().and_then(Option::as_ref).map(|g| g.pid)
}

#[cfg(target_os = "linux")]
fn start() -> io::Result<Guardian> {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let (read, write) = shellwright_io::pipe()?;
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(SCRIPT)
        .arg(GUARDIAN_NAME)
        .arg(std::process::id().to_string())
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove(crate::RUN_TAG_VARIABLE)
        .process_group(0)
        .spawn()?;
    Ok(Guardian {
        pid: child.id(),
        _alive: write,
    })
}

#[cfg(not(target_os = "linux"))]
fn start() -> io::Result<Guardian> {
    Err(io::Error::other(
        "the guardian sweeps /proc, which this platform lacks",
    ))
}
