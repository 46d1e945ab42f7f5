//! `PtySession` (DESIGN §2.2, §3.2): thin glue over `shellwright-pty`.
//!
//! One run at a time. `start` validates its options and returns the run's promise; `write`,
//! `resize` and `kill` act on that run as soon as `start` has returned (input written before the
//! child exists is queued). The promise settles on the JS thread after every chunk reached
//! `onChunk`, and the session is idle again by the time it does.
//!
//! Every run has a terminal model (`shellwright_pty::SessionTerminal`) in its read loop: the
//! bytes reach `onChunk` only after passing through it, minus the queries it answered. The model
//! outlives the run, so `screen`, `snapshot` and `commands` read it after exit until the next
//! `start`; `exec` types into the run and awaits the model's command records.

use std::sync::{Arc, Mutex, MutexGuard};

use napi::bindgen_prelude::{Env, PromiseRaw, Result, Unknown};
use napi::{Error, Status, ValueType};
use napi_derive::napi;
use shellwright_proc::{CancelReason, CancelToken};
use shellwright_pty::{
    ExecError, PtyCommand, PtyControl, PtyError, PtyExit, PtyOutput, SessionTerminal, TermSize,
};
use shellwright_term::TerminalOptions;
use shellwright_term::terminal::{DEFAULT_SCROLLBACK, MAX_SCROLLBACK};
use shellwright_term::utf8::Utf8Decoder;

use crate::abort::AbortWatch;
use crate::delivery::ChunkSink;
use crate::options::{OptionReader, type_error};
use crate::terminal::{CommandRecord, TerminalScreen};

const NOT_RUNNING: &str = "PTY session is not running";
const ALREADY_RUNNING: &str = "PTY session already running";

/// How a PTY run ended.
#[napi(object, object_from_js = false)]
pub struct PtyResult {
    /// Absent when cancelled or timed out; 128+N for a death by signal N.
    pub exit_code: Option<i32>,
    /// E.g. "SIGKILL" when the child died by a signal.
    pub signal: Option<String>,
    pub cancelled: bool,
    pub timed_out: bool,
}

impl From<PtyExit> for PtyResult {
    fn from(exit: PtyExit) -> Self {
        Self {
            exit_code: exit.exit_code,
            signal: exit.signal,
            cancelled: exit.cancelled,
            timed_out: exit.timed_out,
        }
    }
}

/// A pseudo-terminal session that runs one command at a time.
#[napi]
pub struct PtySession {
    state: Arc<Mutex<SessionState>>,
}

#[derive(Default)]
struct SessionState {
    /// Counts starts, so a finished run never clears the state of a newer one.
    generation: u64,
    running: Option<LiveRun>,
    /// The terminal model of the latest run: it outlives the run ("valid while running and after
    /// exit, until the next start"). `None` before the first start.
    terminal: Option<SessionTerminal>,
}

/// The handles of the run in progress.
struct LiveRun {
    control: PtyControl,
    cancel: CancelToken,
}

#[napi]
impl PtySession {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self {
            state: Arc::default(),
        }
    }

    /// Runs a command in a new pseudo-terminal, streaming its output to `onChunk`. Resolves after
    /// every chunk was delivered. Throws `PTY session already running` while a run is live.
    #[napi(
        ts_args_type = "options: PtyStartOptions, onChunk?: (chunk: string) => void",
        ts_return_type = "Promise<PtyResult>"
    )]
    pub fn start<'env>(
        &self,
        env: &'env Env,
        options: Unknown<'env>,
        on_chunk: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, PtyResult>> {
        if self.lock().running.is_some() {
            return Err(Error::new(Status::GenericFailure, ALREADY_RUNNING));
        }
        let reader = OptionReader::new(env, Some(options), "options", false)?;
        let start = StartOptions::read(env, &reader)?;
        let cancel = CancelToken::new();
        let abort = AbortWatch::attach(env, reader.signal("signal")?.as_ref(), &cancel)?;
        let sink = ChunkSink::from_arg(env, on_chunk, "onChunk")?;
        let control = PtyControl::new(start.command.size);
        let terminal = SessionTerminal::new(start.terminal);
        let generation = {
            let mut state = self.lock();
            state.generation += 1;
            state.running = Some(LiveRun {
                control: control.clone(),
                cancel: cancel.clone(),
            });
            state.terminal = Some(terminal.clone());
            state.generation
        };
        let output = terminal.output(
            control.clone(),
            JsOutput {
                decoder: Utf8Decoder::new(),
                sink: sink.clone(),
            },
        );
        let work = async move {
            let _timer = start.timeout.map(|after| cancel.cancel_after(after));
            let exit = shellwright_pty::run(start.command, control, output, &cancel).await;
            // Already done at end of input; this covers runs that never spawned.
            terminal.mark_ended();
            sink.flush().await;
            Ok(exit)
        };
        let state = Arc::clone(&self.state);
        env.spawn_future_with_callback(work, move |env, exit| {
            {
                let mut state = lock(&state);
                if state.generation == generation {
                    state.running = None;
                }
            }
            if let Some(abort) = abort {
                abort.detach(env)?;
            }
            exit.map(PtyResult::from).map_err(start_error)
        })
    }

    /// Sends `data` to the terminal's input.
    #[napi(ts_args_type = "data: string")]
    pub fn write(&self, env: Env, data: Unknown) -> Result<()> {
        let control = self.live_control()?;
        if data.get_type()? != ValueType::String {
            return Err(type_error(&env, "data must be a string"));
        }
        // SAFETY: checked to be a string.
        let data: String = unsafe { data.cast()? };
        ignore_ended(control.write(data.as_bytes()))
    }

    /// Resizes the terminal and reflows its emulator; sizes are clamped to 20..400 columns and
    /// 5..200 rows.
    #[napi(ts_args_type = "cols: number, rows: number")]
    pub fn resize(&self, env: Env, cols: Unknown, rows: Unknown) -> Result<()> {
        let control = self.live_control()?;
        let size = TermSize::clamped(cells(&env, cols, "cols")?, cells(&env, rows, "rows")?);
        // The emulator first, so output the child draws for the new size meets the new size.
        if let Some(terminal) = &self.lock().terminal {
            terminal.lock().resize(size.cols(), size.rows());
        }
        ignore_ended(control.resize(size))
    }

    /// What the terminal shows. Valid while running and after exit, until the next `start`;
    /// throws `PTY session is not running` before the first `start`.
    #[napi]
    pub fn screen(&self) -> Result<TerminalScreen> {
        Ok(self.terminal()?.lock().screen().into())
    }

    /// Self-contained ANSI that repaints scrollback, screen, cursor, title and modes. Valid while
    /// running and after exit, until the next `start`; throws `PTY session is not running` before
    /// the first `start`.
    #[napi]
    pub fn snapshot(&self) -> Result<String> {
        Ok(self.terminal()?.lock().snapshot())
    }

    /// Completed commands seen through OSC 133 (or the prompt fallback), oldest first. Valid while
    /// running and after exit, until the next `start`; throws `PTY session is not running` before
    /// the first `start`.
    #[napi]
    pub fn commands(&self) -> Result<Vec<CommandRecord>> {
        Ok(self
            .terminal()?
            .lock()
            .commands()
            .into_iter()
            .map(CommandRecord::from)
            .collect())
    }

    /// Waits for the shell's prompt (if none is showing yet), types `command` and Enter, and
    /// resolves with its record once its end is seen (OSC 133;D, or the next prompt in the
    /// fallback). On timeout or abort it sends Ctrl+C (if the command was typed) and rejects with
    /// `exec timed out after N ms` / `exec aborted`; it rejects with `exec failed: the session
    /// ended before the command finished` when the run ends first. Calls run one at a time, in
    /// call order. Throws `PTY session is not running` when no run is live.
    #[napi(
        ts_args_type = "command: string, options?: PtyExecOptions",
        ts_return_type = "Promise<CommandRecord>"
    )]
    pub fn exec<'env>(
        &self,
        env: &'env Env,
        command: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, CommandRecord>> {
        if command.get_type()? != ValueType::String {
            return Err(type_error(env, "command must be a string"));
        }
        // SAFETY: checked to be a string.
        let command: String = unsafe { command.cast()? };
        let reader = OptionReader::new(env, options, "options", true)?;
        let timeout = reader.duration_ms("timeoutMs")?;
        let signal = reader.signal("signal")?;
        let (control, terminal) = {
            let state = self.lock();
            match (&state.running, &state.terminal) {
                (Some(run), Some(terminal)) => (run.control.clone(), terminal.clone()),
                _ => return Err(Error::new(Status::GenericFailure, NOT_RUNNING)),
            }
        };
        let cancel = CancelToken::new();
        let abort = AbortWatch::attach(env, signal.as_ref(), &cancel)?;
        let work = async move {
            let _timer = timeout.map(|after| cancel.cancel_after(after));
            Ok(terminal.exec(&control, &command, &cancel).await)
        };
        env.spawn_future_with_callback(work, move |env, record| {
            if let Some(abort) = abort {
                abort.detach(env)?;
            }
            record
                .map(CommandRecord::from)
                .map_err(|err| exec_error(err, timeout))
        })
    }

    /// Cancels the run: the promise resolves with `cancelled: true`.
    #[napi]
    pub fn kill(&self) -> Result<()> {
        let state = self.lock();
        let run = state
            .running
            .as_ref()
            .ok_or_else(|| Error::new(Status::GenericFailure, NOT_RUNNING))?;
        run.cancel.cancel(CancelReason::Aborted);
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }

    fn terminal(&self) -> Result<SessionTerminal> {
        self.lock()
            .terminal
            .clone()
            .ok_or_else(|| Error::new(Status::GenericFailure, NOT_RUNNING))
    }

    fn live_control(&self) -> Result<PtyControl> {
        self.lock()
            .running
            .as_ref()
            .map(|run| run.control.clone())
            .ok_or_else(|| Error::new(Status::GenericFailure, NOT_RUNNING))
    }
}

impl Default for PtySession {
    fn default() -> Self {
        Self::new()
    }
}

fn lock(state: &Mutex<SessionState>) -> MutexGuard<'_, SessionState> {
    state.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Input or a resize that arrives after the child's terminal closed but before the promise
/// settled has nowhere to go; the session is still running from JS's point of view.
fn ignore_ended(result: std::result::Result<(), PtyError>) -> Result<()> {
    match result {
        Ok(()) | Err(PtyError::NotRunning) => Ok(()),
        Err(err) => Err(Error::from_reason(err.to_string())),
    }
}

fn start_error(err: PtyError) -> Error {
    Error::from_reason(err.to_string())
}

fn exec_error(err: ExecError, timeout: Option<std::time::Duration>) -> Error {
    match (err, timeout) {
        (ExecError::TimedOut, Some(after)) => {
            Error::from_reason(format!("exec timed out after {} ms", after.as_millis()))
        }
        (err, _) => Error::from_reason(err.to_string()),
    }
}

/// A column or row count: any finite number (clamped later).
fn cells(env: &Env, value: Unknown, name: &str) -> Result<i64> {
    if value.get_type()? == ValueType::Number {
        // SAFETY: checked to be a number.
        let n: f64 = unsafe { value.cast()? };
        if n.is_finite() {
            return Ok(n.round() as i64);
        }
    }
    Err(type_error(env, format!("{name} must be a finite number")))
}

/// `PtyStartOptions`, validated.
struct StartOptions {
    command: PtyCommand,
    timeout: Option<std::time::Duration>,
    terminal: TerminalOptions,
}

impl StartOptions {
    fn read(env: &Env, reader: &OptionReader) -> Result<Self> {
        let defaults = TermSize::default();
        let cols = reader
            .number("cols")?
            .map_or(defaults.cols().into(), |n| n.round() as i64);
        let rows = reader
            .number("rows")?
            .map_or(defaults.rows().into(), |n| n.round() as i64);
        let interactive = reader.bool("interactive")?.unwrap_or(false);
        let command = if interactive {
            reader.string("command")?.unwrap_or_default()
        } else {
            reader.required_string("command")?
        };
        let command = PtyCommand {
            command,
            shell: reader.string("shell")?.unwrap_or_else(|| "sh".to_string()),
            login: reader.bool("login")?.unwrap_or(false),
            interactive,
            cwd: reader.string("cwd")?.map(Into::into),
            env: reader.string_record("env")?.unwrap_or_default(),
            size: TermSize::clamped(cols, rows),
        };
        let timeout = reader.duration_ms("timeoutMs")?;
        let scrollback = match reader.number("scrollback")? {
            None => DEFAULT_SCROLLBACK,
            Some(lines) if lines >= 0.0 => lines.min(MAX_SCROLLBACK as f64) as usize,
            Some(_) => {
                return Err(type_error(
                    env,
                    "options.scrollback must be a non-negative number",
                ));
            }
        };
        let terminal = TerminalOptions {
            cols: command.size.cols(),
            rows: command.size.rows(),
            scrollback,
            answer_queries: reader.bool("answerQueries")?.unwrap_or(true),
        };
        Ok(Self {
            command,
            timeout,
            terminal,
        })
    }
}

/// Where the terminal's bytes go on the PTY I/O thread once the emulator has seen them (and cut
/// out the queries it answered): decoded to text for `onChunk`.
struct JsOutput {
    decoder: Utf8Decoder,
    sink: ChunkSink,
}

impl PtyOutput for JsOutput {
    fn bytes(&mut self, chunk: &[u8]) {
        self.sink.send(self.decoder.decode(chunk));
    }

    fn finish(&mut self) {
        self.sink.send(self.decoder.finish());
    }
}
