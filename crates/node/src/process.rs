//! The JS `Process` class: thin glue over [`shellwright_proc::Process`].

use napi::bindgen_prelude::{Env, PromiseRaw, Result, Unknown};
use napi_derive::napi;
use shellwright_proc::{CancelReason, CancelToken, Cancelled, TerminateOptions};

use crate::abort::AbortWatch;
use crate::error::{JsFailure, Settlement};
use crate::options::{OptionReader, integer_arg, is_absent, string_arg};
use crate::settle::{CallScope, spawn_settled};

/// Whether a process is still running.
#[napi(string_enum)]
pub enum ProcessStatus {
    #[napi(value = "running")]
    Running,
    #[napi(value = "exited")]
    Exited,
}

/// A process pinned to its identity (pid + start time): once it has exited, or its pid has been
/// reused by another process, it reports `exited` and signals nothing.
///
/// Durations (`gracefulMs`, `timeoutMs`) are milliseconds ≥ 0 (a negative `gracefulMs` skips the
/// grace); longer ones than about 100 years (`Infinity` included) are clamped to that, and `NaN`
/// is a `RangeError`. Instances come from `fromPid`/`fromPath`/`children`; the class has no
/// public constructor.
#[napi]
pub struct Process {
    inner: shellwright_proc::Process,
}

#[napi]
impl Process {
    /// The process that currently has `pid`, or null when there is none.
    #[napi(
        catch_unwind,
        ts_args_type = "pid: number",
        ts_return_type = "Process | null"
    )]
    pub fn from_pid(env: Env, pid: Unknown) -> Result<Option<Process>> {
        let pid = integer_arg(&env, pid, "pid", u32::MAX)?;
        Ok(shellwright_proc::Process::from_pid(pid).map(|inner| Process { inner }))
    }

    /// Processes whose executable (`/proc/<pid>/exe`) is exactly `path`.
    #[napi(catch_unwind, ts_args_type = "path: string")]
    pub fn from_path(env: Env, path: Unknown) -> Result<Vec<Process>> {
        let path = string_arg(&env, path, "path")?;
        Ok(shellwright_proc::Process::from_path(path.as_ref())
            .into_iter()
            .map(|inner| Process { inner })
            .collect())
    }

    #[napi(getter, catch_unwind)]
    pub fn pid(&self) -> u32 {
        self.inner.pid()
    }

    #[napi(getter, catch_unwind)]
    pub fn ppid(&self) -> Option<u32> {
        self.inner.ppid()
    }

    /// The command line; empty once the process has exited.
    #[napi(catch_unwind)]
    pub fn args(&self) -> Vec<String> {
        self.inner.args()
    }

    /// Signals every descendant (children first), the process itself, then its process group when
    /// it leads one. Default SIGKILL. Returns how many processes were signalled (the group signal
    /// is not counted).
    #[napi(catch_unwind, ts_args_type = "signal?: number")]
    pub fn kill_tree(&self, env: Env, signal: Option<Unknown>) -> Result<u32> {
        let signal = match signal {
            Some(value) if !is_absent(Some(&value))? => {
                integer_arg(&env, value, "signal", 64)? as i32
            }
            _ => shellwright_proc::SIGKILL,
        };
        Ok(u32::try_from(self.inner.kill_tree(signal)).unwrap_or(u32::MAX))
    }

    /// SIGTERM, `gracefulMs` (default 1000; negative skips the wait), SIGKILL, then up to
    /// `timeoutMs` (default 5000). Resolves true when the root and every descendant it found have
    /// exited. `group: true` also signals the process group the root leads.
    #[napi(
        catch_unwind,
        ts_args_type = "options?: TerminateOptions",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn terminate<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, Settlement<bool>>> {
        let reader = OptionReader::new(env, options, "options", true)?;
        let defaults = TerminateOptions::default();
        let options = TerminateOptions {
            group: reader.bool("group")?.unwrap_or(defaults.group),
            graceful: reader
                .optional_duration_ms("gracefulMs")?
                .unwrap_or(defaults.graceful),
            timeout: reader.duration_ms("timeoutMs")?.unwrap_or(defaults.timeout),
        };
        let signal = reader.signal("signal")?;
        let cancel = CancelToken::new();
        let scope = CallScope {
            watch: AbortWatch::attach(env, signal.as_ref(), &cancel)?,
            throws: None,
            in_flight: None,
        };
        let process = self.inner.clone();
        let work = async move { process.terminate(options, &cancel).await };
        spawn_settled(env, scope, work, |done| done.map_err(aborted))
    }

    /// Resolves true once the process has exited, false when `timeoutMs` passes first (no
    /// timeout waits forever). Rejects with `Aborted: Signal` when `signal` fires.
    #[napi(
        catch_unwind,
        ts_args_type = "options?: WaitForExitOptions",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn wait_for_exit<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, Settlement<bool>>> {
        let reader = OptionReader::new(env, options, "options", true)?;
        let timeout = reader.duration_ms("timeoutMs")?;
        let signal = reader.signal("signal")?;
        let cancel = CancelToken::new();
        let scope = CallScope {
            watch: AbortWatch::attach(env, signal.as_ref(), &cancel)?,
            throws: None,
            in_flight: None,
        };
        let process = self.inner.clone();
        let work = async move { process.wait_for_exit(timeout, &cancel).await };
        spawn_settled(env, scope, work, |exited| exited.map_err(aborted))
    }

    /// The process group id; null once the process has exited.
    #[napi(catch_unwind)]
    pub fn group_id(&self) -> Option<u32> {
        self.inner.group_id()
    }

    /// The running direct children.
    #[napi(catch_unwind)]
    pub fn children(&self) -> Vec<Process> {
        self.inner
            .children()
            .into_iter()
            .map(|inner| Process { inner })
            .collect()
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> ProcessStatus {
        match self.inner.status() {
            shellwright_proc::ProcessStatus::Running => ProcessStatus::Running,
            shellwright_proc::ProcessStatus::Exited => ProcessStatus::Exited,
        }
    }
}

/// The rejection for a wait or terminate stopped by its AbortSignal.
fn aborted(Cancelled(reason): Cancelled) -> JsFailure {
    match reason {
        CancelReason::Aborted => JsFailure::abort("Aborted: Signal"),
        CancelReason::TimedOut => JsFailure::operation("ERR_EXEC_TIMEOUT", "Timed out"),
    }
}
