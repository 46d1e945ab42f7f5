//! A run on Windows: a pseudo console (ConPTY, through portable-pty) with the child attached.
//!
//! ConPTY differs from a Unix pseudo-terminal in ways that shape this module:
//! - Its pipes are plain blocking pipes. The output is read by a thread of its own (the run's I/O
//!   thread), and input is written by another, so a console host that stops reading never blocks
//!   the caller.
//! - The output pipe does not end when the child exits: the console host keeps it open until the
//!   pseudo console is closed, and it paints the child's last output a moment after the child
//!   wrote it. So once the child has exited, the run waits until the output has been quiet for
//!   [`EXIT_QUIET`] (at most [`ORPHAN_DRAIN`]), closes the console's input, closes the pseudo
//!   console on a helper thread (closing can wait for the output to be read), and reads the
//!   output to its end, again for at most [`ORPHAN_DRAIN`]. Closing the console ends the console
//!   programs still attached to it.
//! - Creating a pseudo console can hang where ConPTY is missing or broken, so opening and spawning
//!   run on a helper thread, given [`START_TIMEOUT`].
//!
//! The run's processes are put in a Job Object ([`ProcessJob`]): a cancel ends them wherever they
//! are in the tree, and so does the end of the run or of the host.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, MasterPty, native_pty_system};
use shellwright_proc::{ProcessId, ProcessJob, process_info};
use tokio::sync::oneshot;

use super::control::{Spawned, pty_size};
use super::delivery::Delivery;
use super::exit::{ChildExit, ORPHAN_DRAIN, child_exit};
use super::{Prepared, PtyControl, PtyOutput, PtyRun, Reading};
use crate::{PtyCommand, PtyError};

/// How long opening a pseudo console and spawning the child in it may take.
const START_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the output must stay quiet after the child exits before the console is closed: its
/// host paints what the child wrote last a moment after the child wrote it.
const EXIT_QUIET: Duration = Duration::from_millis(50);
/// The most bytes one read of the console's output takes.
const READ_BUFFER: usize = 64 * 1024;

/// What the helper thread opens: the console, the child in it, and the console's pipes.
struct Opened {
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn Child + Send + Sync>,
    output: Box<dyn Read + Send>,
    input: Box<dyn Write + Send>,
}

/// Opens a pseudo console, spawns the prepared command in it and starts the run's threads.
pub(super) fn start(
    command: &PtyCommand,
    prepared: Prepared,
    control: &PtyControl,
    output: Box<dyn PtyOutput>,
    reading: Reading,
) -> Result<PtyRun, PtyError> {
    // A pseudo console's output is read with blocking reads; only the run's own thread can.
    let Reading::IoThread = reading;
    let Prepared { builder, scope } = prepared;
    let size = control.size();
    let program = command.program_name();
    let (opened_tx, opened_rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("shellwright-conpty-open".into())
        .spawn(move || {
            let opened = open(size, builder, program);
            if let Err(mpsc::SendError(Ok(mut late))) = opened_tx.send(opened) {
                // The run gave up waiting: nobody will read this child's console.
                let _ = late.child.kill();
            }
        })
        .map_err(|err| PtyError::Open(format!("cannot start the ConPTY thread: {err}")))?;
    let opened = match opened_rx.recv_timeout(START_TIMEOUT) {
        Ok(opened) => opened?,
        Err(_) => {
            return Err(PtyError::Open(format!(
                "creation timed out ({}s). ConPTY may be unavailable on this system.",
                START_TIMEOUT.as_secs()
            )));
        }
    };
    let Opened {
        master,
        mut child,
        output: console_output,
        input: console_input,
    } = opened;
    let pid = child.process_id().unwrap_or_default();
    // Processes the child starts from now on join the job by themselves.
    let job = ProcessJob::new().ok().filter(|job| job.adopt(pid));
    let child_id = process_info(pid).map_or(ProcessId { pid, start_time: 0 }, |info| info.id);
    let delivery = Arc::new(Delivery::new(output));
    let threads = start_threads(&delivery, console_output, console_input);
    let input = match threads {
        Ok(input) => input,
        Err(err) => {
            let _ = child.kill();
            control.close();
            return Err(PtyError::Spawn {
                program: command.program_name(),
                reason: format!("cannot start the I/O threads: {err}"),
            });
        }
    };
    control.attach(Spawned {
        master,
        size,
        input,
        child: pid,
    });
    let (done_tx, done) = oneshot::channel();
    let run_control = control.clone();
    let waiter = std::thread::Builder::new()
        .name("shellwright-pty-wait".into())
        .spawn(move || {
            let exit = wait_and_close(child.as_mut(), &run_control, &delivery);
            let _ = done_tx.send(exit);
        })
        .map_err(|err| {
            // The closure (and with it the child handle) is gone; the job's end stops the child.
            control.close();
            PtyError::Spawn {
                program: command.program_name(),
                reason: format!("cannot start the I/O thread: {err}"),
            }
        })?;
    Ok(PtyRun {
        control: control.clone(),
        child: child_id,
        scope,
        done,
        io_thread: Some(waiter),
        job,
    })
}

/// Opens the pseudo console and spawns the child in it (on the helper thread).
fn open(
    size: crate::TermSize,
    builder: portable_pty::CommandBuilder,
    program: String,
) -> Result<Opened, PtyError> {
    let pair = native_pty_system()
        .openpty(pty_size(size))
        .map_err(open_error)?;
    let child = pair
        .slave
        .spawn_command(builder)
        .map_err(|err| PtyError::Spawn {
            program,
            reason: err.to_string(),
        })?;
    let output = pair.master.try_clone_reader().map_err(open_error)?;
    let input = pair.master.take_writer().map_err(open_error)?;
    Ok(Opened {
        master: pair.master,
        child,
        output,
        input,
    })
}

fn open_error(err: impl std::fmt::Display) -> PtyError {
    PtyError::Open(err.to_string())
}

/// Starts the thread that reads the console's output and the one that writes its input; returns
/// the way in to the latter.
fn start_threads(
    delivery: &Arc<Delivery>,
    mut console_output: Box<dyn Read + Send>,
    mut console_input: Box<dyn Write + Send>,
) -> std::io::Result<mpsc::Sender<Vec<u8>>> {
    let reader_delivery = Arc::clone(delivery);
    std::thread::Builder::new()
        .name("shellwright-pty-io".into())
        .spawn(move || {
            let mut buffer = vec![0; READ_BUFFER];
            loop {
                match console_output.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        if !reader_delivery.deliver(&buffer[..n]) {
                            break;
                        }
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    // A broken pipe: the pseudo console is closed.
                    Err(_) => break,
                }
            }
            reader_delivery.end();
        })?;
    let (input_tx, input_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::Builder::new()
        .name("shellwright-pty-input".into())
        .spawn(move || {
            // Ends when the control lets go of the sender (the run is closing) or the console
            // stops taking input; either way the input pipe closes with it.
            for chunk in input_rx {
                if console_input
                    .write_all(&chunk)
                    .and_then(|()| console_input.flush())
                    .is_err()
                {
                    break;
                }
            }
        })?;
    Ok(input_tx)
}

/// Waits for the child, then closes the pseudo console in ConPTY's order (see the module doc)
/// and returns how the child ended once its output has been read.
fn wait_and_close(child: &mut dyn Child, control: &PtyControl, delivery: &Delivery) -> ChildExit {
    let exit = match child_exit(child, true) {
        Ok(Some(exit)) => exit,
        _ => ChildExit::Code(1),
    };
    let exited = Instant::now();
    delivery.wait_quiet(exited, EXIT_QUIET, exited + ORPHAN_DRAIN);
    // Closes the input, then the console (on a thread of its own).
    control.close();
    delivery.wait_end(Instant::now() + ORPHAN_DRAIN);
    delivery.end();
    exit
}
