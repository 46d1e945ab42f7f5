//! Everything Shellwright adds inside brush-core, behind one install point.
//!
//! A session is a stock brush `Shell` plus what this module installs when the session is created
//! ([`builtins`] for its builtin table, [`Integration::install`] on the shell):
//!
//! - [`hooks`]: our DEBUG trap, the cancellation point before every simple command (and the
//!   nesting-limit checks), with `trap`, `set` and `shopt` wrapped so the user still sees their own
//!   DEBUG trap and functrace;
//! - [`stages`]: every stage but the last of a pipeline rewritten into a hidden builtin that runs
//!   it on a thread of its own, so stages run at once as bash's do;
//! - [`tty`]: redirections naming the host's terminal refused in the same walk, since the shell
//!   opens them inside the host;
//! - [`flags`]: `$-` as the user set the options;
//! - [`devfd`]: redirections to `/dev/stdout`, `/dev/fd/N` and their kind made duplications of
//!   the run's descriptors;
//! - [`funcnest`]: a function call nested past `FUNCNEST` refused as bash refuses it;
//! - [`builtins`](mod@builtins): our own builtins where the stock ones would reach the host
//!   process, and stock ones whose output we correct;
//! - [`isolation`]: the run thread with its own umask, and the host's SIGTSTP kept;
//! - [`signals`]: signals a run sends its own shell, acted on as bash acts on them;
//! - [`spawn_policy`]: every process a session's thread forks gets a session of its own, without
//!   the host's controlling terminal, and the limits its shell set with `ulimit`;
//! - [`state`]: the per-session record all of them share, found by the session id our DEBUG trap
//!   carries; [`common`]: the names and helpers they share, a leaf.
//!
//! Where things go: a new builtin of ours is a file in `builtins/`, listed in that module's table;
//! a new hook on every command goes into `hooks`; anything two parts need is a constant or helper
//! in `common` (so no part depends on another in a circle).

mod bodies;
mod builtins;
mod common;
mod devfd;
mod flags;
mod funcnest;
mod hooks;
mod isolation;
mod job_output;
mod job_table;
mod jobs;
mod signals;
mod spawn_policy;
mod stages;
mod state;
mod tty;
mod unwind;
mod words;

use std::collections::HashMap;

use brush_core::Shell;
use brush_core::builtins::Registration;
use brush_core::extensions::DefaultShellExtensions;
use shellwright_proc::CancelToken;

use crate::jobs::JobBook;
use crate::limits::LimitExceeded;

/// SIGKILL follows SIGTERM this long after a run is stopped (within 200 ms, as promised).
pub(crate) const KILL_GRACE: std::time::Duration = std::time::Duration::from_millis(150);

pub(crate) use common::set_bash_command;
pub(crate) use hooks::terminate_run;
pub(crate) use isolation::{adopt_session_thread, host_umask, keep_host_sigtstp, run_isolated};
pub(crate) use job_table::{forget_jobs_since, job_marks};
pub(crate) use spawn_policy::adopt_thread as adopt_spawn_policy;
pub(crate) use stages::run_concurrently;
pub(crate) use state::Ending;

/// Whether `shell` sets no resource limits of its own (`ulimit`): its processes get the host's.
pub(crate) fn has_host_limits(shell: &Shell) -> bool {
    common::run_limits(shell).is_host()
}

/// A session's builtin table: brush's bash-mode builtins, ours in place of the stock ones we
/// replace, the wrapped `trap`, `set` and `shopt`, and our internal builtins.
pub(crate) fn builtins() -> HashMap<String, Registration<DefaultShellExtensions>> {
    let mut table = brush_builtins::default_builtins(brush_builtins::BuiltinSet::BashMode);
    // Ours first: the hooks then wrap `shopt` as ours left it (see `hooks::install_builtins`).
    builtins::install(&mut table);
    hooks::install_builtins(&mut table);
    stages::install_builtin(&mut table);
    jobs::install_builtins(&mut table);
    flags::install_builtin(&mut table);
    builtins::add_internal(&mut table, common::UNWIND_BUILTIN, unwind::run_unwind);
    funcnest::install_builtin(&mut table);
    table
}

/// The integration installed in one session's shell: its record in [`state`] and its DEBUG trap.
/// Dropping it forgets the session (its record and its pipeline stages).
pub(crate) struct Integration {
    id: u64,
}

impl Integration {
    /// Registers a session whose processes and files get `umask` and whose background jobs go in
    /// `jobs`, and installs its DEBUG trap, forced functrace and `$SHELLOPTS` in `shell` (built
    /// with [`builtins`]).
    pub fn install(shell: &mut Shell, umask: u32, jobs: JobBook) -> Self {
        let id = state::register(umask, jobs);
        hooks::install(shell, id);
        Self { id }
    }

    /// The session's id, which pipeline stages are registered under.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Makes `token` the one the DEBUG trap obeys until [`end_run`](Self::end_run), for the
    /// run whose shells and jobs carry `tag` and whose output goes to the pipe of identity
    /// `output` ([`shellwright_io::file_identity`]; its jobs then write through pipes of their
    /// own, see `jobs`).
    pub fn begin_run(
        &self,
        token: CancelToken,
        tag: &str,
        output: Option<shellwright_io::FileIdentity>,
    ) {
        state::with_session(self.id, |s| {
            s.run_token = Some(token);
            s.run_tag = Some(tag.to_string());
            s.run_output = output;
            s.line_abandoned = false;
            // Nothing of an earlier stopped run runs a command any more: its foreground unwound
            // before it ended, its jobs were dropped when it was stopped (see `jobs`). Keeping
            // their tags would make every later command look its own tag up.
            s.stopped_tags.clear();
        });
    }

    /// Makes `token` the one the DEBUG trap obeys while the EXIT trap of a session being torn down
    /// after a stop runs (nothing is diverted then: a fired token parks it), until
    /// [`end_run`](Self::end_run).
    pub fn begin_exit_trap(&self, token: CancelToken) {
        state::with_session(self.id, |s| {
            s.run_token = Some(token);
            s.exiting = true;
        });
    }

    /// Ends the run begun last; when its token fired, whatever of it still runs (a job) is
    /// stopped at its next command from now on.
    pub fn end_run(&self) {
        state::with_session(self.id, |s| {
            s.exiting = false;
            let stopped = s.run_token.take().is_some_and(|t| t.is_cancelled());
            if let Some(tag) = s.run_tag.take()
                && stopped
            {
                s.stopped_tags.insert(tag);
            }
        });
    }

    /// Stops passing the running run's jobs' output on to its transcript: from now on they keep it
    /// in their records (see `jobs`). Call it before waiting for the end of the run's output: the
    /// run's pipe is then held by nothing of its jobs. Also removes from `shell` the variable the
    /// run's jobs got their records through.
    pub fn end_job_forwarding(&self, shell: &mut Shell) {
        let _ = shell.env_mut().unset(common::JOB_SERIAL_VARIABLE);
        let forwards = state::with_session(self.id, |s| {
            s.run_output = None;
            std::mem::take(&mut s.job_forwards)
        });
        for output in forwards.into_iter().flatten() {
            output.end_forwarding();
        }
    }

    /// Puts back every command name diverted to unwind a stopped run in `shell` (see `unwind`).
    pub fn restore_diversions(&self, shell: &mut Shell) {
        unwind::restore_all(shell, self.id);
    }

    /// Whether the user has set a DEBUG trap of their own (our hook runs it before each command).
    pub fn has_user_debug_trap(&self) -> bool {
        state::with_session(self.id, |s| s.user_debug_trap.is_some()).unwrap_or(false)
    }

    /// A token the hooks cancel when a command passes a nesting limit; [`take_exceeded`] then
    /// says which.
    ///
    /// [`take_exceeded`]: Self::take_exceeded
    pub fn watch_limits(&self) -> CancelToken {
        let token = CancelToken::new();
        state::with_session(self.id, |s| {
            s.exceeded = None;
            s.limit_token = Some(token.clone());
        });
        token
    }

    pub fn take_exceeded(&self) -> Option<LimitExceeded> {
        state::with_session(self.id, |s| s.exceeded.take()).flatten()
    }

    /// Parks every command of the session, in the foreground and in every task brush spawned for
    /// it, at its next simple command, for good.
    pub fn stop(&self) {
        state::with_session(self.id, |s| s.stopping = true);
    }

    /// The session's umask (what its processes and files are created with).
    pub fn umask(&self) -> u32 {
        state::with_session(self.id, |s| s.umask).unwrap_or(0o022)
    }

    /// Whether a function call refused by `FUNCNEST` abandoned the command line that just ended
    /// (the run then goes on with the next line); cleared by reading.
    pub fn take_abandoned_line(&self) -> bool {
        funcnest::take_abandoned_line(self.id)
    }

    /// How our builtins ended the session, if they did; cleared by reading.
    pub fn take_ending(&self) -> Option<Ending> {
        state::with_session(self.id, |s| s.ending.take()).flatten()
    }
}

impl Drop for Integration {
    fn drop(&mut self) {
        state::remove(self.id);
        stages::forget(self.id);
    }
}
