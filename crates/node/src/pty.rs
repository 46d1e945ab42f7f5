//! `PtySession`: argument conversion, callbacks and errors over
//! `shellwright_pty::PtySession`, which owns the session's state (one run at a time, the terminal
//! that outlives the run, resizes, timeouts).
//!
//! `start` validates its options and returns the run's promise; `write`, `resize` and `kill` act
//! on that run as soon as `start` has returned. The promise settles on the JS thread after every
//! chunk reached `onChunk`, and the session is idle again by the time it does.

use std::time::Duration;

use napi::bindgen_prelude::{Env, ObjectFinalize, PromiseRaw, Result, This, Unknown};
use napi_derive::napi;
use shellwright_io::Utf8Decoder;
use shellwright_proc::{CancelToken, Outcome};
use shellwright_pty::{
    DEFAULT_SHELL, ExecError, InputMode, PtyCommand, PtyError, PtyOutput, Reading, RunOptions,
    TermSize,
};
use shellwright_term::terminal::{DEFAULT_SCROLLBACK, MAX_SCROLLBACK};

use crate::abort::AbortWatch;
use crate::attach::TerminalAttachment;
use crate::delivery::ChunkSink;
use crate::error::{JsFailure, Settlement};
use crate::options::{OptionReader, finite_arg, string_arg, truncate};
use crate::settle::{CallScope, spawn_settled};
use crate::terminal::{
    CommandRecord, StyledRun, TerminalScreen, snapshot_scrollback, styled_lines,
};

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

impl From<Outcome> for PtyResult {
    fn from(outcome: Outcome) -> Self {
        Self {
            exit_code: outcome.exit_code(),
            signal: outcome.signal_name(),
            cancelled: outcome.cancelled(),
            timed_out: outcome.timed_out(),
        }
    }
}

/// Whether a PTY run's program waits for input (see `PtySession.inputState()`).
#[napi(object, object_from_js = false)]
pub struct InputState {
    /// The program waits for input: asleep reading its terminal, everything it wrote read.
    pub waiting: bool,
    /// `line`: the terminal hands over whole lines (canonical mode: a prompt); `keys`: key by
    /// key (raw mode: TUIs, readline). Absent once the run has ended.
    #[napi(ts_type = "'line' | 'keys'")]
    pub mode: Option<String>,
    /// Whether typed text is echoed: false at a password prompt.
    pub echo: Option<bool>,
    /// The process that reads the input (else the foreground group's leader).
    pub foreground: Option<ForegroundProcess>,
    /// While waiting: the cursor's row up to the cursor, what the program asks.
    pub prompt: Option<String>,
}

impl ObjectFinalize for PtySession {
    fn finalize(self, env: Env) -> Result<()> {
        let _ = env.adjust_external_memory(-NATIVE_MEMORY_HINT);
        Ok(())
    }
}

/// A process of the terminal's foreground group.
#[napi(object, object_from_js = false)]
pub struct ForegroundProcess {
    pub pid: u32,
    /// Its name as the kernel reports it (at most 15 characters).
    pub name: String,
}

impl From<shellwright_pty::InputState> for InputState {
    fn from(state: shellwright_pty::InputState) -> Self {
        Self {
            waiting: state.waiting,
            mode: state.mode.map(|mode| {
                match mode {
                    InputMode::Line => "line",
                    InputMode::Keys => "keys",
                }
                .to_string()
            }),
            echo: state.echo,
            foreground: state.foreground.map(|process| ForegroundProcess {
                pid: process.pid,
                name: process.name,
            }),
            prompt: state.prompt,
        }
    }
}

/// A pseudo-terminal session that runs one command at a time.
///
/// Sizes (`cols`, `rows` of `start` and `resize`) are any finite number, truncated toward zero and
/// clamped to 20..400 columns and 5..200 rows; `scrollback` is truncated and clamped to
/// 0..1,000,000 lines. Durations (`timeoutMs`) are milliseconds ≥ 0, longer ones than about 100
/// years (`Infinity` included) are clamped to that. `NaN` is a `RangeError` everywhere.
#[napi(custom_finalize)]
pub struct PtySession {
    inner: shellwright_pty::PtySession,
}

/// About what a session holds outside the JS heap once it has run (its terminal's screen, the
/// reader's buffers: 215 KiB measured after `echo`), told to V8 so that many sessions dropped
/// without `dispose` are collected as soon as their memory would count, not when the JS heap
/// alone would call for a collection.
const NATIVE_MEMORY_HINT: i64 = 256 * 1024;

#[napi]
impl PtySession {
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, this: This<Unknown>) -> Result<Self> {
        crate::construct::require_new::<Self>(&env, &this, "PtySession")?;
        // Only a hint: a failure to pass it on changes nothing else.
        let _ = env.adjust_external_memory(NATIVE_MEMORY_HINT);
        Ok(Self {
            inner: shellwright_pty::PtySession::new(),
        })
    }

    /// Runs a command in a new pseudo-terminal, streaming its output to `onChunk`. Resolves after
    /// every chunk was delivered. Throws `PTY session already running` while a run is live. A
    /// throw from `onChunk` stops the run, and the promise rejects with the thrown value.
    #[napi(
        catch_unwind,
        ts_args_type = "options: PtyStartOptions, onChunk?: (chunk: string) => void",
        ts_return_type = "Promise<PtyResult>"
    )]
    pub fn start<'env>(
        &self,
        env: &'env Env,
        options: Unknown<'env>,
        on_chunk: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, Settlement<PtyResult>>> {
        if self.inner.is_running() {
            return Err(pty_failure(&PtyError::AlreadyRunning).throw(env));
        }
        let reader = OptionReader::new(env, Some(options), "options", false)?;
        let StartOptions { command, run } = StartOptions::read(&reader)?;
        let signal = reader.signal("signal")?;
        let cancel = CancelToken::new();
        let (sink, throws) = ChunkSink::from_arg(env, on_chunk, "onChunk", &cancel)?;
        let run = RunOptions {
            reading: event_loop_reading(env, &sink)?,
            ..run
        };
        let watch = AbortWatch::attach(env, signal.as_ref(), &cancel)?;
        let output = JsOutput {
            decoder: Utf8Decoder::new(),
            sink: sink.clone(),
        };
        let (run, guard) = match self.inner.start(command, run, cancel, output) {
            Ok(started) => started,
            Err(err) => {
                if let Some(watch) = watch {
                    watch.detach(env);
                }
                return Err(pty_failure(&err).throw(env));
            }
        };
        let work = async move {
            let exit = run.await;
            sink.flush().await;
            exit
        };
        let scope = CallScope {
            watch,
            throws: Some(throws),
            in_flight: None,
        };
        spawn_settled(env, scope, work, move |exit| {
            // The session is idle again once the result is on its way to JS.
            drop(guard);
            exit.map(PtyResult::from).map_err(|err| pty_failure(&err))
        })
    }

    /// Sends `data` to the terminal's input.
    #[napi(catch_unwind, ts_args_type = "data: string")]
    pub fn write(&self, env: Env, data: Unknown) -> Result<()> {
        if !self.inner.is_running() {
            return Err(pty_failure(&PtyError::NotRunning).throw(&env));
        }
        let data = string_arg(&env, data, "data")?;
        self.inner
            .write(data.as_bytes())
            .map_err(|err| pty_failure(&err).throw(&env))
    }

    /// Resizes the terminal and reflows its emulator (sizes as in the class doc). Throws
    /// `ERR_PTY_RESIZE` when the pseudo-terminal refuses the size; both keep the size they had.
    #[napi(catch_unwind, ts_args_type = "cols: number, rows: number")]
    pub fn resize(&self, env: Env, cols: Unknown, rows: Unknown) -> Result<()> {
        if !self.inner.is_running() {
            return Err(pty_failure(&PtyError::NotRunning).throw(&env));
        }
        let cols = finite_arg(&env, cols, "cols")?;
        let rows = finite_arg(&env, rows, "rows")?;
        let size = TermSize::clamped(truncate(cols), truncate(rows));
        self.inner
            .resize(size)
            .map_err(|err| pty_failure(&err).throw(&env))
    }

    /// What the terminal shows. Valid while running and after exit, until the next `start`;
    /// throws `PTY session is not running` before the first `start`.
    #[napi(catch_unwind)]
    pub fn screen(&self, env: Env) -> Result<TerminalScreen> {
        Ok(self.terminal(&env)?.lock().screen().into())
    }

    /// Self-contained ANSI that repaints scrollback, screen, cursor, title and modes. Valid while
    /// running and after exit, until the next `start`; throws `PTY session is not running` before
    /// the first `start`.
    ///
    /// With `scrollback`, at most that many of the most recent scrollback rows (0: the screen
    /// alone, a screenful however long the history).
    #[napi(catch_unwind, ts_args_type = "options?: SnapshotOptions")]
    pub fn snapshot(&self, env: Env, options: Option<Unknown>) -> Result<String> {
        let rows = snapshot_scrollback(&env, options)?;
        Ok(self.terminal(&env)?.lock().snapshot_with_scrollback(rows))
    }

    /// Each visible row (one entry per row) as runs of text in one style. Valid while running
    /// and after exit, until the next `start`; throws `PTY session is not running` before the
    /// first `start`.
    #[napi(catch_unwind)]
    pub fn styled_lines(&self, env: Env) -> Result<Vec<Vec<StyledRun>>> {
        Ok(styled_lines(self.terminal(&env)?.lock().styled_lines()))
    }

    /// The visible rows (0-based, ascending) whose text or style changed since the last call;
    /// every row on the first call of each run. Valid while running and after exit, until the
    /// next `start`; throws `PTY session is not running` before the first `start`.
    #[napi(catch_unwind)]
    pub fn changed_rows(&self, env: Env) -> Result<Vec<u32>> {
        let rows = self.terminal(&env)?.lock().changed_rows();
        Ok(rows.into_iter().map(u32::from).collect())
    }

    /// Completed commands seen through OSC 133 (or the prompt fallback), oldest first. Valid while
    /// running and after exit, until the next `start`; throws `PTY session is not running` before
    /// the first `start`.
    #[napi(catch_unwind)]
    pub fn commands(&self, env: Env) -> Result<Vec<CommandRecord>> {
        Ok(self
            .terminal(&env)?
            .lock()
            .commands()
            .into_iter()
            .map(CommandRecord::from)
            .collect())
    }

    /// Waits for the shell's prompt (if none is showing yet), types `command` and Enter, and
    /// resolves with its record once its end is seen (OSC 133;D, or the next prompt in the
    /// fallback). On timeout or abort it sends Ctrl+C (if the command was typed) and rejects with
    /// `exec timed out after N ms` (`ERR_EXEC_TIMEOUT`) / `exec aborted` (`ABORT_ERR`); it
    /// rejects with `exec failed: the session ended before the command finished` when the run
    /// ends first. Calls run one at a time, in call order. Throws `PTY session is not running`
    /// when no run is live.
    #[napi(
        catch_unwind,
        ts_args_type = "command: string, options?: PtyExecOptions",
        ts_return_type = "Promise<CommandRecord>"
    )]
    pub fn exec<'env>(
        &self,
        env: &'env Env,
        command: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, Settlement<CommandRecord>>> {
        let command = string_arg(env, command, "command")?;
        let reader = OptionReader::new(env, options, "options", true)?;
        let timeout = reader.duration_ms("timeoutMs")?;
        let signal = reader.signal("signal")?;
        let cancel = CancelToken::new();
        let work = self
            .inner
            .exec(command, timeout, cancel.clone())
            .map_err(|err| pty_failure(&err).throw(env))?;
        let scope = CallScope {
            watch: AbortWatch::attach(env, signal.as_ref(), &cancel)?,
            throws: None,
            in_flight: None,
        };
        spawn_settled(env, scope, work, move |record| {
            record
                .map(CommandRecord::from)
                .map_err(|err| exec_failure(err, timeout))
        })
    }

    /// Attaches a viewer, as tmux does: `snapshot` repaints a fresh terminal of `cols` × `rows`,
    /// and `onData` then receives the live stream from exactly that point, so snapshot + every
    /// chunk, written into a fresh terminal, equals this session's `screen()` — nothing missing,
    /// nothing twice. Chunks carry the program's output with answered terminal queries removed,
    /// and are whole characters. Many viewers may attach at once; the program never waits for
    /// them.
    ///
    /// A viewer that falls more than 8 MiB behind (its callback too slow for the stream), and
    /// every viewer when the session is resized, gets a *resync* instead of the backlog: one
    /// chunk that is a fresh snapshot, starting with RIS (`ESC c`) so it repaints an already
    /// used terminal from scratch; `cols`/`rows` are updated to the size it is drawn for just
    /// before `onData` receives it.
    ///
    /// An attachment follows the current run until it ends (after its last chunk, `onData` is
    /// not called again) or `detach()` is called; attached after the run, it gets the snapshot
    /// only; after the next `start`, attach again. `onEnd`, when given, is called once after the
    /// last chunk with how the run ended (also when attached after it; not after `detach()`).
    /// If `onData` throws, the viewer is detached and the error is passed to
    /// `process.emitWarning`. Throws `PTY session is not running` before the first `start`.
    ///
    /// `screenSnapshot` is `snapshot` without the scrollback, cut at the same point: a viewer on
    /// a slow link paints the screen from it (a screenful) and the history from `snapshot` after.
    ///
    /// ```ts
    /// const session = new PtySession()
    /// const run = session.start({ command: 'top', cols: 100, rows: 30 })
    /// const view = new VirtualTerminal({ cols: 100, rows: 30 }) // or an xterm.js Terminal
    /// const attachment = session.attach((chunk) => view.write(chunk), (end) => console.log(end.exitCode))
    /// view.write(attachment.snapshot)
    /// ```
    #[napi(
        catch_unwind,
        ts_args_type = "onData: (chunk: string) => void, onEnd?: (end: AttachmentEnd) => void",
        ts_return_type = "TerminalAttachment"
    )]
    pub fn attach(
        &self,
        env: Env,
        on_data: Unknown,
        on_end: Option<Unknown>,
    ) -> Result<TerminalAttachment> {
        crate::attach::attach(&env, &self.inner, on_data, on_end)?
            .map_err(|err| pty_failure(&err).throw(&env))
    }

    /// The pid of the live run's child (the shell, or the program of `argv`); `null` while idle,
    /// and for the moment between `start` returning and the child being spawned.
    #[napi(getter, catch_unwind)]
    pub fn pid(&self) -> Option<u32> {
        self.inner.pid()
    }

    /// Whether the program waits for input right now, as the kernel reports it: its terminal's
    /// foreground processes are all asleep reading the terminal (or only waiting for their
    /// children), it has no output left unread and no typed input it has not read. `mode` says
    /// whether it reads lines or keys, `echo` whether typed text shows (false at a password
    /// prompt), `prompt` the cursor's row up to the cursor. `{ waiting: false }` while idle.
    #[napi(catch_unwind)]
    pub fn input_state(&self) -> InputState {
        self.inner.input_state().into()
    }

    /// Resolves as soon as the program waits for input (see `inputState()`), or with
    /// `{ waiting: false }` when the run ends first (at once while idle). Rejects with
    /// `waitForInput timed out after N ms` (`ERR_EXEC_TIMEOUT`) after `timeoutMs`, and with an
    /// `AbortError` when `signal` aborts.
    ///
    /// ```ts
    /// const done = pty.start({ command: 'python3 -q' })
    /// const state = await pty.waitForInput({ timeoutMs: 5000 })  // { waiting: true, mode: 'keys', prompt: '>>> ', … }
    /// pty.write('print(6*7)\r')
    /// ```
    #[napi(
        catch_unwind,
        ts_args_type = "options?: PtyWaitOptions",
        ts_return_type = "Promise<InputState>"
    )]
    pub fn wait_for_input<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, Settlement<InputState>>> {
        let reader = OptionReader::new(env, options, "options", true)?;
        let timeout = reader.duration_ms("timeoutMs")?;
        let signal = reader.signal("signal")?;
        let cancel = CancelToken::new();
        let work = self.inner.wait_for_input(timeout, cancel.clone());
        let scope = CallScope {
            watch: AbortWatch::attach(env, signal.as_ref(), &cancel)?,
            throws: None,
            in_flight: None,
        };
        spawn_settled(env, scope, work, move |state| {
            state
                .map(InputState::from)
                .map_err(|err| wait_failure(err, timeout))
        })
    }

    /// Cancels the run: the promise resolves with `cancelled: true`.
    #[napi(catch_unwind)]
    pub fn kill(&self, env: Env) -> Result<()> {
        self.inner
            .kill()
            .map_err(|err| pty_failure(&err).throw(&env))
    }

    fn terminal(&self, env: &Env) -> Result<shellwright_pty::SessionTerminal> {
        self.inner
            .terminal()
            .map_err(|err| pty_failure(&err).throw(env))
    }
}

/// Who reads the terminal: Node's event loop on Linux (see `loop_reader`), the run's I/O thread
/// elsewhere.
#[cfg(target_os = "linux")]
fn event_loop_reading(env: &Env, sink: &ChunkSink) -> Result<Reading> {
    let driver = crate::loop_reader::LoopReader::new(env, sink.clone())?;
    Ok(Reading::Driver(Box::new(driver)))
}

#[cfg(not(target_os = "linux"))]
fn event_loop_reading(_env: &Env, _sink: &ChunkSink) -> Result<Reading> {
    Ok(Reading::IoThread)
}

/// The JS error for a failed PTY operation, with the code of what failed.
pub(crate) fn pty_failure(err: &PtyError) -> JsFailure {
    let code = match err {
        PtyError::Cwd { .. } => "ERR_PTY_CWD",
        PtyError::NotRunning => "ERR_PTY_NOT_RUNNING",
        PtyError::AlreadyRunning => "ERR_PTY_RUNNING",
        PtyError::Resize(_) => "ERR_PTY_RESIZE",
        PtyError::Open(_) | PtyError::Spawn { .. } | PtyError::Io(_) => "ERR_PTY_SPAWN",
    };
    JsFailure::operation(code, err.to_string())
}

/// Why `waitForInput` rejected: its timeout or its signal (it never ends otherwise: a run that
/// ends resolves it).
fn wait_failure(err: ExecError, timeout: Option<Duration>) -> JsFailure {
    match err {
        ExecError::TimedOut => JsFailure::operation(
            "ERR_EXEC_TIMEOUT",
            format!(
                "waitForInput timed out after {} ms",
                timeout.map_or(0, |after| after.as_millis())
            ),
        ),
        ExecError::Aborted => JsFailure::abort("waitForInput aborted".to_string()),
        ExecError::Ended => JsFailure::operation("ERR_PTY_NOT_RUNNING", err.to_string()),
    }
}

fn exec_failure(err: ExecError, timeout: Option<Duration>) -> JsFailure {
    match (err, timeout) {
        (ExecError::TimedOut, Some(after)) => JsFailure::operation(
            "ERR_EXEC_TIMEOUT",
            format!("exec timed out after {} ms", after.as_millis()),
        ),
        (ExecError::TimedOut, None) => JsFailure::operation("ERR_EXEC_TIMEOUT", err.to_string()),
        (ExecError::Aborted, _) => JsFailure::abort(err.to_string()),
        (ExecError::Ended, _) => JsFailure::operation("ERR_PTY_NOT_RUNNING", err.to_string()),
    }
}

/// `PtyStartOptions`, validated.
struct StartOptions {
    command: PtyCommand,
    run: RunOptions,
}

impl StartOptions {
    fn read(reader: &OptionReader) -> Result<Self> {
        let (defaults, cols_range, rows_range) =
            (TermSize::default(), TermSize::COLS, TermSize::ROWS);
        let cols = reader.count("cols", cols_range.0.into(), cols_range.1.into())?;
        let rows = reader.count("rows", rows_range.0.into(), rows_range.1.into())?;
        let interactive = reader.bool("interactive")?.unwrap_or(false);
        let program = reader.string_array("argv")?;
        let command = match (&program, interactive) {
            (Some(_), true) => {
                return Err(reader.unusable("argv", "cannot be combined with interactive: true"));
            }
            (Some(argv), false) => {
                if reader.string("command")?.is_some() {
                    return Err(reader.unusable("argv", "cannot be combined with options.command"));
                }
                if argv.is_empty() {
                    return Err(reader.unusable("argv", "must name a program"));
                }
                String::new()
            }
            (None, true) => reader.string("command")?.unwrap_or_default(),
            (None, false) => reader.required_string("command")?,
        };
        let command = PtyCommand {
            command,
            program,
            shell: reader
                .string("shell")?
                .unwrap_or_else(|| DEFAULT_SHELL.to_string()),
            login: reader.bool("login")?.unwrap_or(false),
            interactive,
            cwd: reader.string("cwd")?.map(Into::into),
            env: reader.string_record("env")?.unwrap_or_default(),
            inherit_env: true,
            size: TermSize::clamped(
                cols.unwrap_or(defaults.cols().into()),
                rows.unwrap_or(defaults.rows().into()),
            ),
        };
        let timeout = reader.duration_ms("timeoutMs")?;
        let scrollback = reader
            .count("scrollback", 0, MAX_SCROLLBACK as i64)?
            .map_or(DEFAULT_SCROLLBACK, |lines| lines as usize);
        let run = RunOptions {
            timeout,
            scrollback,
            answer_queries: reader.bool("answerQueries")?.unwrap_or(true),
            reading: Reading::IoThread,
        };
        Ok(Self { command, run })
    }
}

/// Where the terminal's bytes go once the emulator has seen them (and cut out the queries it
/// answered): decoded to text for `onChunk`. On Linux they are read on the JS thread
/// (`loop_reader`), elsewhere on the run's I/O thread.
struct JsOutput {
    decoder: Utf8Decoder,
    sink: ChunkSink,
}

impl PtyOutput for JsOutput {
    fn bytes(&mut self, chunk: &[u8]) {
        self.sink.send(self.decoder.decode(chunk).into());
    }

    fn finish(&mut self) {
        self.sink.send(self.decoder.finish().into());
    }
}
