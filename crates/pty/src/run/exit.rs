//! How a run's child ended, and how long the run reads on after that.

use std::time::Duration;

use portable_pty::Child;

/// How long processes that outlive the child may keep the terminal open before the read ends.
pub const ORPHAN_DRAIN: Duration = Duration::from_secs(1);

/// The child's end, as the operating system reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChildExit {
    Code(i32),
    /// Unix only: Windows has no signals.
    #[cfg_attr(windows, allow(dead_code))]
    Signal(i32),
}

/// The child's exit status; `block` waits for it.
pub(super) fn child_exit(child: &mut dyn Child, block: bool) -> std::io::Result<Option<ChildExit>> {
    // portable-pty spawns a std child on Unix; its status keeps the signal number, which
    // portable-pty's own ExitStatus reduces to a description.
    #[cfg(unix)]
    if let Some(std_child) = child.downcast_mut::<std::process::Child>() {
        use std::os::unix::process::ExitStatusExt;
        let status = if block {
            Some(std_child.wait()?)
        } else {
            std_child.try_wait()?
        };
        return Ok(status.map(|status| match (status.code(), status.signal()) {
            (Some(code), _) => ChildExit::Code(code),
            (None, Some(signal)) => ChildExit::Signal(signal),
            (None, None) => ChildExit::Code(1),
        }));
    }
    let status = if block {
        Some(child.wait()?)
    } else {
        child.try_wait()?
    };
    Ok(status.map(|status| ChildExit::Code(i32::try_from(status.exit_code()).unwrap_or(1))))
}
