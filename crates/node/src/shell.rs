//! `Shell` and `executeShell` over `shellwright-shell`, and the output
//! minimizer's options and result (`minimizer`, `minimized`).

use std::cell::RefCell;
use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{
    Env, Function, JsObjectValue, JsValue, Object, PromiseRaw, Property, PropertyAttributes,
    Result, This, ToNapiValue, Unknown,
};
use napi::{check_status, sys};
use napi_derive::napi;
use shellwright_io::{SharedText, lock};
use shellwright_minimize::{Minimized, Minimizer, MinimizerOptions};
use shellwright_proc::CancelToken;
use shellwright_proc::Outcome;
use shellwright_shell::history::{DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_LIMIT, HistoryLimits};
use shellwright_shell::output::ChunkHandler;
use shellwright_shell::{
    HistoryEntry, PersistentShell, RunRequest, RunResult, SessionOptions, ShellError,
};

use crate::abort::AbortWatch;
use crate::delivery::{ChunkSink, call_plain, callback_arg, js_string};
use crate::error::{JsFailure, Settlement};
use crate::names::{Name, Names};
use crate::options::OptionReader;
use crate::settle::{CallScope, DonePromises, Unsettled, drive_settled};

/// How a run ended, and where the session is now.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ShellResult {
    /// Absent when cancelled or timed out.
    pub exit_code: Option<i32>,
    /// True after an AbortSignal or `abort()`; false after a timeout.
    pub cancelled: bool,
    /// True after `timeoutMs`; false after an abort.
    pub timed_out: bool,
    /// The session's working directory after the run: where the next run starts.
    pub cwd: String,
    /// How long the run took, from its start to its last output.
    pub duration_ms: f64,
    /// Present (true) when the run ended the session (`exit`, `exec cmd`, a fatal error): the next
    /// run starts a fresh one.
    pub session_reset: Option<bool>,
    /// Present only when the minimizer is enabled and a filter rewrote the output.
    pub minimized: Option<MinimizedOutput>,
}

/// A background job (`cmd &`) of a Shell's session.
#[napi(object, object_from_js = false)]
pub struct ShellJob {
    /// The job's number, as `%N` names it in `jobs`, `wait` and `kill`.
    pub id: u32,
    /// Its oldest process still running, if any.
    pub pid: Option<u32>,
    /// The command as written, with its `&`.
    pub command: String,
    pub running: bool,
    /// Its status once it ended.
    pub exit_code: Option<i32>,
    /// What it wrote after the run that started it resolved: the last 1 MiB (while the run goes,
    /// its output is part of the run's transcript).
    pub output: String,
    /// How many bytes were dropped from the front of `output`.
    pub truncated_bytes: f64,
}

impl From<shellwright_shell::ShellJob> for ShellJob {
    fn from(job: shellwright_shell::ShellJob) -> Self {
        Self {
            id: u32::try_from(job.id).unwrap_or(u32::MAX),
            pid: job.pid,
            command: job.command,
            running: job.running,
            exit_code: job.exit_code,
            output: job.output,
            // Exact up to 2^53 bytes.
            #[allow(clippy::cast_precision_loss)]
            truncated_bytes: job.truncated_bytes as f64,
        }
    }
}

impl From<RunResult> for ShellResult {
    fn from(result: RunResult) -> Self {
        Self {
            exit_code: result.exit_code(),
            cancelled: result.cancelled(),
            timed_out: result.timed_out(),
            cwd: result.cwd.to_string_lossy().into_owned(),
            duration_ms: result.duration.as_secs_f64() * 1000.0,
            session_reset: result.session_reset.then_some(true),
            minimized: result.minimized.map(MinimizedOutput::from),
        }
    }
}

/// A plain object, `{ cancelled, timedOut, exitCode?, cwd, durationMs, sessionReset?, minimized? }`
/// in that order (as napi-rs would lay it out), named with the environment's kept [`Names`]: a
/// builtin's run is over in microseconds, and naming the properties anew cost a tenth of it. The
/// common shape, the five first, is made by the kept function [`Names::common_result`].
impl ToNapiValue for ShellResult {
    unsafe fn to_napi_value(raw_env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        let names = Names::of(&Env::from_raw(raw_env))?;
        if let (Some(code), None, None) = (value.exit_code, &value.session_reset, &value.minimized)
        {
            // SAFETY: Node-API calls and conversions in the live environment of this call.
            return unsafe {
                let args = [
                    bool::to_napi_value(raw_env, value.cancelled)?,
                    bool::to_napi_value(raw_env, value.timed_out)?,
                    i32::to_napi_value(raw_env, code)?,
                    String::to_napi_value(raw_env, value.cwd)?,
                    f64::to_napi_value(raw_env, value.duration_ms)?,
                ];
                call_plain(raw_env, names.common_result()?, &args)
            };
        }
        let mut fields = [field(ptr::null_mut(), ptr::null_mut()); 7];
        let mut count = 0;
        let mut add = |name: Name, value: sys::napi_value| -> Result<()> {
            fields[count] = field(names.get(name)?, value);
            count += 1;
            Ok(())
        };
        // SAFETY: conversions in the live environment of this call.
        unsafe {
            add(
                Name::CANCELLED,
                bool::to_napi_value(raw_env, value.cancelled)?,
            )?;
            add(
                Name::TIMED_OUT,
                bool::to_napi_value(raw_env, value.timed_out)?,
            )?;
            if let Some(code) = value.exit_code {
                add(Name::EXIT_CODE, i32::to_napi_value(raw_env, code)?)?;
            }
            add(Name::CWD, String::to_napi_value(raw_env, value.cwd)?)?;
            add(
                Name::DURATION_MS,
                f64::to_napi_value(raw_env, value.duration_ms)?,
            )?;
            if let Some(reset) = value.session_reset {
                add(Name::SESSION_RESET, bool::to_napi_value(raw_env, reset)?)?;
            }
            if let Some(minimized) = value.minimized {
                add(
                    Name::MINIMIZED,
                    MinimizedOutput::to_napi_value(raw_env, minimized)?,
                )?;
            }
        }
        let mut object = ptr::null_mut();
        // SAFETY: Node-API calls in the live environment of this call; the descriptors' names and
        // values are values of it, and `count` of them are filled in.
        unsafe {
            check_status!(sys::napi_create_object(raw_env, &mut object))?;
            check_status!(sys::napi_define_properties(
                raw_env,
                object,
                count,
                fields.as_ptr()
            ))?;
        }
        Ok(object)
    }
}

/// A plain data property (writable, enumerable, configurable) named by a JS string.
fn field(name: sys::napi_value, value: sys::napi_value) -> sys::napi_property_descriptor {
    use sys::PropertyAttributes::{configurable, enumerable, writable};
    sys::napi_property_descriptor {
        utf8name: ptr::null(),
        name,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: writable | enumerable | configurable,
        data: ptr::null_mut(),
    }
}

/// The output rewritten for an agent to read; `onChunk` still received the raw transcript.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct MinimizedOutput {
    /// The filter that rewrote it: `"cargo"`, `"git"`, `"generic"`, `"rule:<name>"`, …
    pub filter: String,
    /// What the agent should read instead of the streamed transcript.
    pub text: String,
    /// The transcript as it streamed (made a JS string on first read: most callers never read it).
    pub original_text: String,
    /// UTF-8 bytes of `originalText`.
    pub input_bytes: u32,
    /// UTF-8 bytes of `text`.
    pub output_bytes: u32,
}

impl From<Minimized> for MinimizedOutput {
    fn from(m: Minimized) -> Self {
        let bytes = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            filter: m.filter,
            input_bytes: bytes(m.input_bytes),
            output_bytes: bytes(m.output_bytes),
            text: m.text,
            original_text: m.original_text,
        }
    }
}

/// A plain object with the fields in their declared order, except that `originalText` is an
/// enumerable getter: a transcript of megabytes costs a string conversion (and its memory) that
/// an agent reading only `text` never needs. Its first read replaces it with a plain value.
impl ToNapiValue for MinimizedOutput {
    unsafe fn to_napi_value(raw_env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        let mut object = Object::new(&env)?;
        object.set("filter", value.filter)?;
        object.set("text", js_string(&env, &value.text)?)?;
        let original = RefCell::new(Some(value.original_text));
        object.define_properties(&[Property::new()
            .with_utf8_name("originalText")?
            .with_property_attributes(
                PropertyAttributes::Enumerable | PropertyAttributes::Configurable,
            )
            .with_getter_closure(move |env, mut this: This| {
                let value = js_string(&env, original.borrow().as_deref().unwrap_or(""))?;
                let plain = Property::new()
                    .with_utf8_name("originalText")?
                    .with_value(&value);
                // A frozen object keeps the getter: the text stays for the next read.
                if this.define_properties(&[plain]).is_ok() {
                    original.borrow_mut().take();
                }
                Ok(value.raw())
            })])?;
        object.set("inputBytes", value.input_bytes)?;
        object.set("outputBytes", value.output_bytes)?;
        // SAFETY: `object` was made in this environment, which is live for this call.
        unsafe { Object::to_napi_value(raw_env, object) }
    }
}

/// One run in a Shell's history.
#[napi(object, object_from_js = false)]
pub struct ShellHistoryEntry {
    /// 1 for the Shell's first run, then counting up.
    pub id: u32,
    pub command: String,
    /// The working directory the command started in.
    pub cwd: String,
    /// The transcript (stdout and stderr in arrival order), truncated from the front to the last
    /// 2 000 000 bytes, and emptied from the front, oldest run first, when all transcripts together
    /// pass `historyBytes`.
    pub output: String,
    /// Bytes dropped from the front of `output` (0 when whole).
    pub truncated_bytes: f64,
    /// Absent while running, when cancelled or timed out, and when the run failed.
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub timed_out: bool,
    /// Milliseconds since the epoch.
    pub started_at: f64,
    /// Absent while running.
    pub finished_at: Option<f64>,
}

impl From<HistoryEntry> for ShellHistoryEntry {
    fn from(entry: HistoryEntry) -> Self {
        let outcome = entry.outcome;
        Self {
            id: u32::try_from(entry.id).unwrap_or(u32::MAX),
            command: entry.command,
            cwd: entry.cwd.to_string_lossy().into_owned(),
            output: entry.output,
            truncated_bytes: entry.truncated_bytes as f64,
            exit_code: outcome.and_then(Outcome::exit_code),
            cancelled: outcome.is_some_and(Outcome::cancelled),
            timed_out: outcome.is_some_and(Outcome::timed_out),
            started_at: entry.started_at_ms as f64,
            finished_at: entry.finished_at_ms.map(|ms| ms as f64),
        }
    }
}

/// The most history entries a Shell may be asked to keep.
const MAX_HISTORY_LIMIT: i64 = 1_000_000;
/// The most transcript bytes a Shell's history may be asked to keep (1 TiB: no limit in practice).
const MAX_HISTORY_BYTES: i64 = 1 << 40;

/// A persistent, in-process bash-compatible shell: cwd, variables and functions survive between
/// runs, which are serialised in call order. Every run is recorded in its history.
#[napi]
pub struct Shell {
    inner: PersistentShell,
    minimizer: Option<Arc<Minimizer>>,
    /// Runs whose promise has not settled: a run is done in place only when there are none, so
    /// its output cannot overtake theirs.
    unsettled: Unsettled,
    /// The promises of runs done in place.
    done: DonePromises<ShellResult>,
}

impl Shell {
    // For ShellMirror, which Windows builds leave out.
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn persistent(&self) -> &PersistentShell {
        &self.inner
    }
}

#[napi]
impl Shell {
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "options?: ShellConstructorOptions"
    )]
    pub fn new(env: Env, this: This<Unknown>, options: Option<Unknown>) -> Result<Self> {
        crate::construct::require_new::<Self>(&env, &this, "Shell")?;
        let reader = OptionReader::new(&env, options, "options", true)?;
        let session = session_options(&reader)?;
        let limits = HistoryLimits {
            entries: reader
                .count("historyLimit", 1, MAX_HISTORY_LIMIT)?
                .map_or(DEFAULT_HISTORY_LIMIT, |n| n as usize),
            bytes: reader
                .count("historyBytes", 0, MAX_HISTORY_BYTES)?
                .map_or(DEFAULT_HISTORY_BYTES, |n| n as usize),
        };
        Ok(Self {
            inner: PersistentShell::with_history_limits(session, limits),
            minimizer: minimizer_option(&reader)?,
            unsettled: Unsettled::default(),
            done: DonePromises::new(&env)?,
        })
    }

    /// This Shell's runs, oldest first, the running one last: each with its command, where it ran,
    /// its transcript so far and how it ended.
    ///
    /// ```ts
    /// await shell.run({ command: 'echo hi' })
    /// shell.history().at(-1) // { id: 1, command: 'echo hi', exitCode: 0, … }
    /// ```
    #[napi(catch_unwind)]
    pub fn history(&self) -> Vec<ShellHistoryEntry> {
        self.inner
            .history_entries()
            .into_iter()
            .map(ShellHistoryEntry::from)
            .collect()
    }

    /// Runs a command in the session, streaming its output to `onChunk`.
    /// A throw from `onChunk` stops the run, and the promise rejects with the thrown value.
    ///
    /// A command made only of builtins that set variables or print (`echo`, `export`, `unset`,
    /// `declare`, `true`, assignments, `pwd`, `cd DIR` …, joined by `;`, `&&`, `||`), run without
    /// `cwd` while no other run is pending, takes microseconds: it is run at once, and `onChunk`
    /// gets its output in one piece, in a microtask before the promise settles. A `cd` whose
    /// directory lies on or behind a network or FUSE mount or a symbolic link, and builtins that
    /// stat paths (`test`), run on the session's thread, like every other command, so that a
    /// stalled mount cannot freeze Node's event loop.
    #[napi(
        catch_unwind,
        ts_args_type = "options: ShellRunOptions, onChunk?: (chunk: string) => void",
        ts_return_type = "Promise<ShellResult>"
    )]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        options: Unknown<'env>,
        on_chunk: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, Settlement<ShellResult>>> {
        let mut reader = OptionReader::new(env, Some(options), "options", false)?;
        reader.read_run_options()?;
        let args = RunArgs::read(env, &reader, on_chunk, self.minimizer.clone())?;
        let args = match self.run_in_place(env, args)? {
            InPlace::Done(promise) => return Ok(promise),
            InPlace::Declined(args) => args,
        };
        let mut call = args.prepare(env)?;
        call.scope.in_flight = Some(self.unsettled.enter());
        call.spawn(env, |request, sink| self.inner.run(request, sink))
    }

    /// Runs `args` on this thread when no run of this Shell has an unsettled promise (its output
    /// could be overtaken) and the shell takes it (see [`PersistentShell::try_run_inline`]). A run
    /// whose signal is already aborted is declined too: the queued path reports the abort.
    fn run_in_place<'env>(&self, env: &'env Env, mut args: RunArgs<'env>) -> Result<InPlace<'env>> {
        if !self.unsettled.none() {
            return Ok(InPlace::Declined(args));
        }
        if let Some(signal) = &args.signal
            && crate::abort::is_aborted(signal)?
        {
            return Ok(InPlace::Declined(args));
        }
        // A run in place passes its output in one chunk, kept as it came.
        let output = Arc::new(std::sync::Mutex::new(None::<SharedText>));
        let collected = Arc::clone(&output);
        let on_chunk = Box::new(move |chunk: SharedText| {
            let mut text = lock(&collected);
            *text = Some(match text.take() {
                None => chunk,
                Some(before) => SharedText::from(format!("{}{}", &*before, &*chunk)),
            });
        });
        let request = std::mem::take(&mut args.request);
        let outcome = match self.inner.try_run_inline(request, on_chunk) {
            Ok(outcome) => outcome,
            Err(request) => {
                args.request = request;
                return Ok(InPlace::Declined(args));
            }
        };
        let text = lock(&output).take();
        let outcome = outcome.map(ShellResult::from).map_err(shell_failure);
        self.done
            .promise(env, args.on_chunk, text, outcome)
            .map(InPlace::Done)
    }

    /// Cancels the running command (resolves once it has ended; at once when idle).
    #[napi(catch_unwind)]
    pub async fn abort(&self) -> Result<()> {
        self.inner.abort().await;
        Ok(())
    }

    /// The session's background jobs (`cmd &`), oldest first: those still running and the latest
    /// that ended, each with what it wrote after the run that started it resolved.
    #[napi(catch_unwind)]
    pub fn jobs(&self) -> Vec<ShellJob> {
        self.inner.jobs().into_iter().map(ShellJob::from).collect()
    }

    /// Ends the shell for good (also `await using shell = new Shell()`): stops the running
    /// command, ends the session and its jobs, and terminates every process its runs left
    /// running (`cmd &`, `nohup`, `setsid`). Later runs reject with `ERR_SHELL_CLOSED`; closing
    /// again does nothing.
    #[napi(catch_unwind)]
    pub async fn close(&self) -> Result<()> {
        self.inner.close().await;
        Ok(())
    }
}

/// Runs one command in a fresh session. A throw from `onChunk` stops the run, and the promise
/// rejects with the thrown value.
#[napi(
    catch_unwind,
    ts_args_type = "options: ShellExecuteOptions, onChunk?: (chunk: string) => void",
    ts_return_type = "Promise<ShellResult>"
)]
pub fn execute_shell<'env>(
    env: &'env Env,
    options: Unknown<'env>,
    on_chunk: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, Settlement<ShellResult>>> {
    let reader = OptionReader::new(env, Some(options), "options", false)?;
    let session = session_options(&reader)?;
    let minimizer = minimizer_option(&reader)?;
    let call = RunArgs::read(env, &reader, on_chunk, minimizer)?.prepare(env)?;
    call.spawn(env, move |request, sink| {
        shellwright_shell::execute_once(session, request, sink)
    })
}

fn session_options(reader: &OptionReader) -> Result<SessionOptions> {
    Ok(SessionOptions {
        session_env: reader.string_record("sessionEnv")?.unwrap_or_default(),
        snapshot_path: reader.string("snapshotPath")?.map(PathBuf::from),
    })
}

/// `options.minimizer`: `None` unless `enabled` is true. Every field is checked either way; the
/// rules file is loaded (and its examples run) only when enabled.
fn minimizer_option(reader: &OptionReader) -> Result<Option<Arc<Minimizer>>> {
    let options = reader.nested("minimizer", "options.minimizer")?;
    let enabled = options.bool("enabled")?.unwrap_or(false);
    let only = options.string_array("only")?.unwrap_or_default();
    let except = options.string_array("except")?.unwrap_or_default();
    let max_capture_bytes = options
        .count("maxCaptureBytes", 0, i64::from(u32::MAX))?
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let filters_path = options.string("filtersPath")?.map(PathBuf::from);
    if !enabled {
        return Ok(None);
    }
    let minimizer = Minimizer::new(MinimizerOptions {
        only,
        except,
        max_capture_bytes,
        filters_path,
    })
    .map_err(|err| options.unusable("filtersPath", err))?;
    Ok(Some(Arc::new(minimizer)))
}

/// Whether a run was done in place.
enum InPlace<'env> {
    Done(PromiseRaw<'env, Settlement<ShellResult>>),
    Declined(RunArgs<'env>),
}

/// A run's arguments, read and validated before anything runs.
struct RunArgs<'env> {
    request: RunRequest,
    signal: Option<Object<'env>>,
    on_chunk: Option<Function<'env, String, Unknown<'static>>>,
}

impl<'env> RunArgs<'env> {
    fn read(
        env: &Env,
        reader: &OptionReader<'_, 'env>,
        on_chunk: Option<Unknown<'env>>,
        minimizer: Option<Arc<Minimizer>>,
    ) -> Result<Self> {
        let request = RunRequest {
            command: reader.required_string("command")?,
            cwd: reader.string("cwd")?.map(PathBuf::from),
            env: reader.string_record("env")?.unwrap_or_default(),
            timeout: reader.duration_ms("timeoutMs")?,
            cancel: CancelToken::new(),
            minimizer,
        };
        let signal = reader.signal("signal")?;
        let on_chunk = callback_arg(env, on_chunk, "onChunk")?;
        Ok(Self {
            request,
            signal,
            on_chunk,
        })
    }

    /// Ties the run to JS: the chunk sink and the signal's listener.
    fn prepare(self, env: &Env) -> Result<RunCall> {
        let cancel = &self.request.cancel;
        let (sink, throws) = ChunkSink::from_callback(env, self.on_chunk, cancel)?;
        let watch = AbortWatch::attach(env, self.signal.as_ref(), cancel)?;
        Ok(RunCall {
            request: self.request,
            sink,
            scope: CallScope {
                watch,
                throws: Some(throws),
                in_flight: None,
            },
        })
    }
}

/// Everything a run needs from the JS side, ready to start.
struct RunCall {
    request: RunRequest,
    sink: ChunkSink,
    scope: CallScope,
}

impl RunCall {
    /// Starts the run (`run` is called at once) on the runtime; the promise settles after every
    /// chunk reached `onChunk`.
    fn spawn<'env, F, Fut>(
        self,
        env: &'env Env,
        run: F,
    ) -> Result<PromiseRaw<'env, Settlement<ShellResult>>>
    where
        F: FnOnce(RunRequest, ChunkHandler) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<RunResult, ShellError>>
            + Send
            + 'static,
    {
        let Self {
            request,
            sink,
            scope,
        } = self;
        let chunk_sink = sink.clone();
        let on_chunk = move |chunk: SharedText| chunk_sink.send(chunk);
        // Called here, on the JS thread, so a persistent shell queues the run in call order.
        let run = run(request, Box::new(on_chunk));
        let work = async move {
            let outcome = run.await;
            sink.flush().await;
            outcome.map(ShellResult::from)
        };
        drive_settled(env, scope, work, |outcome| outcome.map_err(shell_failure))
    }
}

/// A rejected run, with the code of what failed.
pub(crate) fn shell_failure(err: ShellError) -> JsFailure {
    let code = match err {
        ShellError::Init(_) => "ERR_SHELL_INIT",
        ShellError::Cwd(_) => "ERR_SHELL_CWD",
        ShellError::Snapshot(_) => "ERR_SHELL_SNAPSHOT",
        ShellError::Execution(_) => "ERR_SHELL_EXEC",
        ShellError::Closed => "ERR_SHELL_CLOSED",
    };
    JsFailure::operation(code, err.to_string())
}
