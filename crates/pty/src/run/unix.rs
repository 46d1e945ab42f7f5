//! A run on Unix: a pseudo-terminal pair from portable-pty, the child on its slave side, and one
//! I/O thread ([`super::io_loop`]) that reads the master to its end, writes queued input and
//! reaps the child.

use portable_pty::native_pty_system;
use shellwright_io::{pidfd_open, set_nonblocking, wake_pipe};
use shellwright_proc::{ProcessId, process_info, send_signal};
use tokio::sync::oneshot;

use super::control::{Spawned, pty_size};
use super::io_loop::{Backstop, IoLoop};
use super::{MasterReader, Prepared, PtyControl, PtyOutput, PtyRun, Reading};
use crate::{PtyCommand, PtyError};

/// Opens a pseudo-terminal pair, spawns the prepared command on its slave side and starts the
/// run's I/O thread.
pub(super) fn start(
    command: &PtyCommand,
    prepared: Prepared,
    control: &PtyControl,
    output: Box<dyn PtyOutput>,
    reading: Reading,
) -> Result<PtyRun, PtyError> {
    let Prepared {
        builder,
        scope,
        hooks,
    } = prepared;
    let size = control.size();
    let pair = native_pty_system()
        .openpty(pty_size(size))
        .map_err(|err| PtyError::Open(err.to_string()))?;
    let child = pair
        .slave
        .spawn_command(builder)
        .map_err(|err| PtyError::Spawn {
            program: command.program_name(),
            reason: err.to_string(),
        })?;
    // Only the child may hold the slave side, so that its exit ends the read with EIO.
    drop(pair.slave);
    let master = pair.master;
    let master_fd = master
        .as_raw_fd()
        .ok_or_else(|| PtyError::Open("no master fd".into()))?;
    // SAFETY: `master` owns this fd and outlives the borrow.
    let master_borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(master_fd) };
    set_nonblocking(master_borrowed).map_err(|err| PtyError::Open(err.to_string()))?;
    let (waker, wake) = wake_pipe().map_err(|err| PtyError::Open(err.to_string()))?;

    let pid = child.process_id().unwrap_or_default();
    // The child is not reaped before the I/O thread reaps it, so its pid cannot be reused yet.
    let child_id = process_info(pid).map_or(ProcessId { pid, start_time: 0 }, |info| info.id);
    let pidfd = pidfd_open(pid);
    let reader = match MasterReader::new(master_borrowed, output, control.clone()) {
        Ok(reader) => reader,
        Err(err) => {
            send_signal(child_id, libc::SIGKILL);
            control.close();
            return Err(PtyError::Open(format!(
                "cannot duplicate the master: {err}"
            )));
        }
    };
    control.attach(Spawned {
        master,
        size,
        wake: waker,
        child: pid,
        reader: reader.clone(),
    });
    // Handed over only now that input and resizes reach the terminal.
    let driver = match reading {
        Reading::IoThread => None,
        Reading::Driver(driver) => driver.start(reader.clone()).ok().map(|()| driver),
    };
    let (done_tx, done) = oneshot::channel();
    let io = IoLoop {
        fd: master_fd,
        wake,
        pidfd,
        child,
        control: control.clone(),
        reader,
        driver,
        backstop: Backstop::Watching,
        hooks,
    };
    let io_thread = std::thread::Builder::new()
        .name("shellwright-pty-io".into())
        .spawn(move || {
            let exit = io.run();
            let _ = done_tx.send(exit);
        });
    let io_thread = match io_thread {
        Ok(handle) => handle,
        Err(err) => {
            // The closure (and with it the child handle) is gone; stop the child we started.
            send_signal(child_id, libc::SIGKILL);
            control.close();
            return Err(PtyError::Spawn {
                program: command.program_name(),
                reason: format!("cannot start the I/O thread: {err}"),
            });
        }
    };
    Ok(PtyRun {
        control: control.clone(),
        child: child_id,
        scope,
        done,
        io_thread: Some(io_thread),
    })
}
