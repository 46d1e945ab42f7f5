//! The JS `Process` class (DESIGN §2.3, §3.3): thin glue over [`shellwright_proc::Process`].

use std::future::Future;
use std::time::Duration;

use napi::bindgen_prelude::{Env, PromiseRaw, Result, ToNapiValue, Unknown};
use napi::{Error, Status, ValueType};
use napi_derive::napi;
use shellwright_proc::{CancelReason, CancelToken, Cancelled, TerminateOptions};

use crate::abort::AbortWatch;
use crate::options::{OptionReader, type_error};

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
#[napi]
pub struct Process {
    inner: shellwright_proc::Process,
}

#[napi]
impl Process {
    /// The process that currently has `pid`, or null when there is none.
    #[napi(ts_args_type = "pid: number", ts_return_type = "Process | null")]
    pub fn from_pid(env: Env, pid: Unknown) -> Result<Option<Process>> {
        let pid = integer_arg(&env, pid, "pid", u32::MAX.into())?;
        Ok(shellwright_proc::Process::from_pid(pid as u32).map(|inner| Process { inner }))
    }

    /// Processes whose executable (`/proc/<pid>/exe`) is exactly `path`.
    #[napi(ts_args_type = "path: string")]
    pub fn from_path(env: Env, path: Unknown) -> Result<Vec<Process>> {
        if path.get_type()? != ValueType::String {
            return Err(type_error(&env, "path must be a string"));
        }
        // SAFETY: checked to be a string.
        let path: String = unsafe { path.cast()? };
        Ok(shellwright_proc::Process::from_path(path.as_ref())
            .into_iter()
            .map(|inner| Process { inner })
            .collect())
    }

    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.inner.pid()
    }

    #[napi(getter)]
    pub fn ppid(&self) -> Option<u32> {
        self.inner.ppid()
    }

    /// The command line; empty once the process has exited.
    #[napi]
    pub fn args(&self) -> Vec<String> {
        self.inner.args()
    }

    /// Signals every descendant (children first), the process itself, then its process group when
    /// it leads one. Default SIGKILL. Returns how many processes were signalled (the group signal
    /// is not counted).
    #[napi(ts_args_type = "signal?: number")]
    pub fn kill_tree(&self, env: Env, signal: Option<Unknown>) -> Result<u32> {
        let signal = match signal {
            Some(value) if !is_nullish(&value)? => integer_arg(&env, value, "signal", 64.0)? as i32,
            _ => libc::SIGKILL,
        };
        Ok(u32::try_from(self.inner.kill_tree(signal)).unwrap_or(u32::MAX))
    }

    /// SIGTERM, `gracefulMs` (default 1000; negative skips the wait), SIGKILL, then up to
    /// `timeoutMs` (default 5000). Resolves true when the root and every descendant it found have
    /// exited. `group: true` also signals the process group the root leads.
    #[napi(
        ts_args_type = "options?: TerminateOptions",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn terminate<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, bool>> {
        let reader = OptionReader::new(env, options, "options", true)?;
        let defaults = TerminateOptions::default();
        let graceful = match reader.number("gracefulMs")? {
            None => defaults.graceful,
            Some(ms) if ms < 0.0 => None,
            Some(ms) => Some(Duration::from_secs_f64(ms / 1000.0)),
        };
        let options = TerminateOptions {
            group: reader.bool("group")?.unwrap_or(defaults.group),
            graceful,
            timeout: reader.duration_ms("timeoutMs")?.unwrap_or(defaults.timeout),
        };
        let cancel = CancelToken::new();
        let watch = AbortWatch::attach(env, reader.signal("signal")?.as_ref(), &cancel)?;
        let process = self.inner.clone();
        spawn_watched(env, watch, async move {
            process.terminate(options, &cancel).await.map_err(aborted)
        })
    }

    /// Resolves true once the process has exited, false when `timeoutMs` passes first (no
    /// timeout waits forever). Rejects with `Aborted: Signal` when `signal` fires.
    #[napi(
        ts_args_type = "options?: WaitForExitOptions",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn wait_for_exit<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown<'env>>,
    ) -> Result<PromiseRaw<'env, bool>> {
        let reader = OptionReader::new(env, options, "options", true)?;
        let timeout = reader.duration_ms("timeoutMs")?;
        let cancel = CancelToken::new();
        let watch = AbortWatch::attach(env, reader.signal("signal")?.as_ref(), &cancel)?;
        let process = self.inner.clone();
        spawn_watched(env, watch, async move {
            process
                .wait_for_exit(timeout, &cancel)
                .await
                .map_err(aborted)
        })
    }

    /// The process group id; null once the process has exited.
    #[napi]
    pub fn group_id(&self) -> Option<u32> {
        self.inner.group_id()
    }

    /// The running direct children.
    #[napi]
    pub fn children(&self) -> Vec<Process> {
        self.inner
            .children()
            .into_iter()
            .map(|inner| Process { inner })
            .collect()
    }

    #[napi]
    pub fn status(&self) -> ProcessStatus {
        match self.inner.status() {
            shellwright_proc::ProcessStatus::Running => ProcessStatus::Running,
            shellwright_proc::ProcessStatus::Exited => ProcessStatus::Exited,
        }
    }
}

/// Runs `work` on the Tokio runtime and settles the returned promise with its result, after
/// removing the AbortSignal listener on the JS thread (whatever the outcome).
pub(crate) fn spawn_watched<'env, T, F>(
    env: &'env Env,
    watch: Option<AbortWatch>,
    work: F,
) -> Result<PromiseRaw<'env, T>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + Future<Output = Result<T>>,
{
    env.spawn_future_with_callback(async move { Ok(work.await) }, move |env, outcome| {
        if let Some(watch) = watch {
            watch.detach(env)?;
        }
        outcome
    })
}

/// The rejection for a wait or terminate stopped by its AbortSignal.
pub(crate) fn aborted(Cancelled(reason): Cancelled) -> Error {
    match reason {
        CancelReason::Aborted => Error::new(Status::GenericFailure, "Aborted: Signal"),
        CancelReason::TimedOut => Error::new(Status::GenericFailure, "Timed out"),
    }
}

fn is_nullish(value: &Unknown) -> Result<bool> {
    Ok(matches!(
        value.get_type()?,
        ValueType::Undefined | ValueType::Null
    ))
}

/// An integer argument in `0..=max`; anything else is a TypeError naming `name`.
fn integer_arg(env: &Env, value: Unknown, name: &str, max: f64) -> Result<f64> {
    let number = if value.get_type()? == ValueType::Number {
        // SAFETY: checked to be a number.
        Some(unsafe { value.cast::<f64>()? })
    } else {
        None
    };
    match number {
        Some(n) if n.fract() == 0.0 && (0.0..=max).contains(&n) => Ok(n),
        _ => Err(type_error(
            env,
            format!("{name} must be an integer from 0 to {max}"),
        )),
    }
}
