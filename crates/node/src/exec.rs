//! `ExecSessions`: argument conversion and errors over `shellwright_pty::exec::ExecSessions`, which
//! owns the sessions, when each step returns and what output is new; and, with a `Shell`, the
//! working directory and exported variables a session starts with (read from the Shell when the
//! session starts).

use std::time::UNIX_EPOCH;

use napi::bindgen_prelude::{
    ClassInstance, Env, FromNapiValue, JavaScriptClassExt, JsValue, PromiseRaw, Result, This,
    Unknown,
};
use napi_derive::napi;
use shellwright_proc::Outcome;
use shellwright_pty::TermSize;
use shellwright_pty::exec::{
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_START_YIELD, DEFAULT_WRITE_YIELD,
    ExecSessionError, ExecStart, Step,
};
use shellwright_shell::{PersistentShell, ShellEnvironment};

use crate::error::JsFailure;
use crate::options::{OptionReader, integer_arg, string_arg, type_error};
use crate::pty::{InputState, pty_failure};
use crate::settle::{CallScope, spawn_settled};
use crate::shell::{Shell, shell_failure};

/// The most sessions a table may be told to keep.
const MAX_SESSIONS_LIMIT: i64 = 1024;
/// The largest per-update output budget (bytes).
const MAX_OUTPUT_BYTES_LIMIT: i64 = 64 << 20;

/// One step of an exec session: what is new since the previous update and why this one returned.
#[napi(object, object_from_js = false)]
pub struct ExecUpdate {
    /// The session's id, for `write` and `kill`.
    pub id: u32,
    /// New since the previous update, as a terminal shows it: rendered lines without escape
    /// sequences; the whole screen (when it changed) while a full-screen program is on.
    pub output: String,
    pub running: bool,
    /// Present once the program exited; 128+N after a death by signal N.
    pub exit_code: Option<i32>,
    /// E.g. "SIGKILL" when the program died by a signal.
    pub signal: Option<String>,
    /// Present when the update returned because the program waits for input.
    pub waiting_for_input: Option<InputState>,
    /// TCP ports the session's processes listen on (a server is up), ascending; absent when none.
    pub listening: Option<Vec<u32>>,
    /// Bytes of new output dropped from the front to stay within `maxOutputBytes`.
    pub truncated_bytes: f64,
    /// Milliseconds since the session started.
    pub elapsed_ms: f64,
}

impl From<shellwright_pty::exec::ExecUpdate> for ExecUpdate {
    fn from(update: shellwright_pty::exec::ExecUpdate) -> Self {
        Self {
            id: update.id,
            output: update.output,
            running: update.outcome.is_none(),
            exit_code: update.outcome.and_then(Outcome::exit_code),
            signal: update.outcome.and_then(Outcome::signal_name),
            waiting_for_input: update.waiting.map(InputState::from),
            listening: (!update.listening.is_empty())
                .then(|| update.listening.into_iter().map(u32::from).collect()),
            truncated_bytes: update.truncated_bytes as f64,
            elapsed_ms: update.elapsed.as_secs_f64() * 1000.0,
        }
    }
}

/// A row of `ExecSessions.list()`.
#[napi(object, object_from_js = false)]
pub struct ExecSessionInfo {
    pub id: u32,
    pub command: String,
    /// The program's pid while it runs.
    pub pid: Option<u32>,
    pub running: bool,
    /// When it started, in milliseconds since the epoch.
    pub started_at: f64,
}

/// Commands an agent starts, types into and reads in steps, each in a pseudo-terminal of its
/// own (`bash -c`, so programs see a terminal) — the shape of Codex's `exec_command` and
/// `write_stdin` tools.
///
/// Every call returns an update at the earliest of: the program exited (with everything it
/// wrote read), it waits for input (read from the kernel: it is asleep reading its terminal), or
/// `yieldMs` passed. `output` is what is new since the previous update, as the terminal renders
/// it: lines that scrolled by or changed since then (a line rewritten in place comes again); for
/// a full-screen program, its whole screen when it changed. `maxOutputBytes` (default 32 KiB)
/// keeps the end of it; the bytes dropped from its front are in `truncatedBytes`. `listening`
/// lists the TCP ports the session's processes listen on.
///
/// At most `maxSessions` (default 16) are kept; one more rejects with `ERR_EXEC_LIMIT`. A
/// session leaves the table once an update has reported its end, or after `kill`; its id then
/// rejects with `ERR_EXEC_UNKNOWN_SESSION`. With `{ shell }`, a session starts in that Shell's
/// working directory with its exported variables (as its queued runs leave them), instead of the
/// host's. `close()` (and `await using`) kills every session with everything it started.
///
/// ```ts
/// const sessions = new ExecSessions()
/// let update = await sessions.start({ command: 'python3 -q' })  // waitingForInput.prompt '>>> '
/// update = await sessions.write(update.id, 'print(6*7)\r')       // output '>>> print(6*7)\n42\n>>>'
/// update = await sessions.write(update.id, 'exit()\r')           // running false, exitCode 0
/// ```
#[napi]
pub struct ExecSessions {
    sessions: shellwright_pty::exec::ExecSessions,
    shell: Option<PersistentShell>,
}

#[napi]
impl ExecSessions {
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "options?: ExecSessionsOptions"
    )]
    pub fn new(env: Env, this: This<Unknown>, options: Option<Unknown>) -> Result<Self> {
        crate::construct::require_new::<Self>(&env, &this, "ExecSessions")?;
        let reader = OptionReader::new(&env, options, "options", true)?;
        let max_sessions = reader
            .count("maxSessions", 1, MAX_SESSIONS_LIMIT)?
            .map_or(DEFAULT_MAX_SESSIONS, |n| n as usize);
        let shell = match reader.object("shell", "a Shell")? {
            None => None,
            Some(shell) => {
                let not_a_shell = || type_error(&env, "options.shell must be a Shell");
                if !Shell::instance_of(&env, &shell)? {
                    return Err(not_a_shell());
                }
                // SAFETY: a live object of this environment; the conversion checks its class.
                let shell =
                    unsafe { ClassInstance::<Shell>::from_napi_value(env.raw(), shell.raw()) }
                        .map_err(|_| not_a_shell())?;
                Some(shell.persistent().clone())
            }
        };
        Ok(Self {
            sessions: shellwright_pty::exec::ExecSessions::new(max_sessions),
            shell,
        })
    }

    /// Starts `command` through `bash -c` (`cmd /c` on Windows) in a new pseudo-terminal and
    /// resolves with its first update (see the class doc). Rejects with `ERR_EXEC_LIMIT` when
    /// `maxSessions` are kept, `ERR_PTY_CWD` / `ERR_PTY_SPAWN` when it cannot start (no session
    /// is left then).
    #[napi(
        catch_unwind,
        ts_args_type = "options: ExecStartOptions",
        ts_return_type = "Promise<ExecUpdate>"
    )]
    pub fn start<'env>(
        &self,
        env: &'env Env,
        options: Unknown<'env>,
    ) -> Result<PromiseRaw<'env, crate::error::Settlement<ExecUpdate>>> {
        let reader = OptionReader::new(env, Some(options), "options", false)?;
        let (cols_range, rows_range) = (TermSize::COLS, TermSize::ROWS);
        let defaults = TermSize::default();
        let cols = reader.count("cols", cols_range.0.into(), cols_range.1.into())?;
        let rows = reader.count("rows", rows_range.0.into(), rows_range.1.into())?;
        let start = ExecStart {
            command: reader.required_string("command")?,
            cwd: reader.string("cwd")?.map(Into::into),
            env: reader.string_record("env")?.unwrap_or_default(),
            inherit_env: true,
            size: TermSize::clamped(
                cols.unwrap_or(defaults.cols().into()),
                rows.unwrap_or(defaults.rows().into()),
            ),
        };
        let step = read_step(&reader, DEFAULT_START_YIELD)?;
        let sessions = self.sessions.clone();
        let shell = self.shell.clone();
        let work = async move {
            let start = match shell {
                Some(shell) => {
                    let environment = shell.environment().await.map_err(shell_failure)?;
                    in_environment(start, environment)
                }
                None => start,
            };
            sessions.start(start, step).await.map_err(exec_failure)
        };
        spawn_settled(env, CallScope::default(), work, |update| {
            update.map(ExecUpdate::from)
        })
    }

    /// Types `chars` into session `id` (`''` polls without typing) and resolves with the next
    /// update; `yieldMs` defaults to 250. Keys are characters: `'\r'` is Enter, `'\x03'` Ctrl+C.
    #[napi(
        catch_unwind,
        ts_args_type = "id: number, chars: string, options?: ExecWriteOptions",
        ts_return_type = "Promise<ExecUpdate>"
    )]
    pub fn write<'env>(
        &self,
        env: &'env Env,
        id: Unknown<'env>,
        chars: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, crate::error::Settlement<ExecUpdate>>> {
        let id = integer_arg(env, id, "id", u32::MAX)?;
        let chars = string_arg(env, chars, "chars")?;
        let reader = OptionReader::new(env, options, "options", true)?;
        let step = read_step(&reader, DEFAULT_WRITE_YIELD)?;
        let sessions = self.sessions.clone();
        let work = async move { sessions.write(id, &chars, step).await };
        spawn_settled(env, CallScope::default(), work, |update| {
            update.map(ExecUpdate::from).map_err(exec_failure)
        })
    }

    /// Stops session `id` with everything it started (SIGTERM, then SIGKILL after 500 ms) and
    /// resolves with its last update once they are gone: `running: false`, and no `exitCode`
    /// unless it exited by itself first.
    #[napi(
        catch_unwind,
        ts_args_type = "id: number",
        ts_return_type = "Promise<ExecUpdate>"
    )]
    pub fn kill<'env>(
        &self,
        env: &'env Env,
        id: Unknown<'env>,
    ) -> Result<PromiseRaw<'env, crate::error::Settlement<ExecUpdate>>> {
        let id = integer_arg(env, id, "id", u32::MAX)?;
        let sessions = self.sessions.clone();
        let work = async move { sessions.kill(id, DEFAULT_MAX_OUTPUT_BYTES).await };
        spawn_settled(env, CallScope::default(), work, |update| {
            update.map(ExecUpdate::from).map_err(exec_failure)
        })
    }

    /// The sessions kept now, by id: running ones, and ended ones whose end no update has
    /// reported yet.
    #[napi(catch_unwind)]
    pub fn list(&self) -> Vec<ExecSessionInfo> {
        self.sessions
            .list()
            .into_iter()
            .map(|info| ExecSessionInfo {
                id: info.id,
                command: info.command,
                pid: info.pid,
                running: info.running,
                started_at: info
                    .started_at
                    .duration_since(UNIX_EPOCH)
                    .map_or(0.0, |since| since.as_millis() as f64),
            })
            .collect()
    }

    /// Kills every session with everything it started and resolves once they are gone; later
    /// starts reject with `ERR_EXEC_CLOSED`. Also `[Symbol.asyncDispose]`.
    #[napi(catch_unwind, ts_return_type = "Promise<void>")]
    pub fn close<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, crate::error::Settlement<()>>> {
        let sessions = self.sessions.clone();
        let work = async move { sessions.close().await };
        spawn_settled(env, CallScope::default(), work, Ok)
    }
}

/// The per-step options: `yieldMs` (default `default_yield`) and `maxOutputBytes`.
fn read_step(reader: &OptionReader, default_yield: std::time::Duration) -> Result<Step> {
    Ok(Step {
        yield_time: reader.duration_ms("yieldMs")?.unwrap_or(default_yield),
        max_output_bytes: reader
            .count("maxOutputBytes", 0, MAX_OUTPUT_BYTES_LIMIT)?
            .map_or(DEFAULT_MAX_OUTPUT_BYTES, |n| n as usize),
    })
}

/// `start` as the Shell would start a program: in its cwd unless `start` names one, with its
/// exported variables (and `start.env` over them) instead of the host's.
fn in_environment(start: ExecStart, environment: ShellEnvironment) -> ExecStart {
    let mut env = environment.exported;
    env.retain(|(name, _)| !start.env.iter().any(|(own, _)| own == name));
    env.extend(start.env);
    ExecStart {
        cwd: start.cwd.or(Some(environment.cwd)),
        env,
        inherit_env: false,
        ..start
    }
}

fn exec_failure(err: ExecSessionError) -> JsFailure {
    let code = match &err {
        ExecSessionError::Limit(_) => "ERR_EXEC_LIMIT",
        ExecSessionError::UnknownSession { .. } => "ERR_EXEC_UNKNOWN_SESSION",
        ExecSessionError::Closed => "ERR_EXEC_CLOSED",
        ExecSessionError::Start(err) => return pty_failure(err),
    };
    JsFailure::operation(code, err.to_string())
}
