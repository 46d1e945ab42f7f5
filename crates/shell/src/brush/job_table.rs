//! The session's job table as the user sees it: each job named as written (`jobs`), with its
//! process (`jobs -l`, `jobs -p`), signalled through its record (`kill %N`), and the jobs of a
//! stopped run taken out of it.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use shellwright_io::lock;

use super::common::JOB_BUILTIN;
use brush_core::Shell;

use super::state;
use crate::jobs::JobBook;

/// Per session, each registered job's command as the user wrote it, before its pipelines were
/// rewritten, by registration index.
static WRITTEN: LazyLock<Mutex<HashMap<u64, HashMap<usize, String>>>> =
    LazyLock::new(Mutex::default);

/// Records that the job registered as `index` in `session` was written `text`.
pub(super) fn remember_written(session: u64, index: usize, text: String) {
    lock(&WRITTEN)
        .entry(session)
        .or_default()
        .insert(index, text);
}

/// Forgets a session's jobs' texts (when the session ends).
pub(super) fn forget_written(session: u64) {
    lock(&WRITTEN).remove(&session);
}

/// The text the user wrote for the job a job's call line names (`<builtin> <session> <index>
/// …`).
pub(super) fn written_job(call_line: &str) -> Option<String> {
    let mut words = call_line.split_whitespace().skip(1);
    let mut number = || words.next()?.parse::<usize>().ok();
    let (session, index) = (u64::try_from(number()?).ok()?, number()?);
    lock(&WRITTEN).get(&session)?.get(&index).cloned()
}

/// Gives each job brush added to `shell`'s table since the last call the number and the text its
/// record has (see `jobs`): the command the user wrote (`sleep 30 &`) rather than the call the
/// rewrite made of it, and bash's number — one past the highest in use — where brush's (one past
/// the count) could repeat a running job's. Our DEBUG hook runs this before every command, so
/// nothing sees a job before.
pub(crate) fn name_jobs(shell: &mut Shell) {
    let fresh = |job: &brush_core::jobs::Job| job.command_line.starts_with(JOB_BUILTIN);
    if !shell.jobs().jobs.iter().any(fresh) {
        return;
    }
    let book = state::with_shell(shell, |s| s.jobs.clone());
    for job in shell.jobs_mut().jobs.iter_mut().filter(|job| fresh(job)) {
        match book.as_ref().and_then(JobBook::bind_next) {
            Some((id, command)) => {
                job.id = id;
                job.command_line = command;
            }
            None => {
                if let Some(text) = written_job(&job.command_line) {
                    job.command_line = format!("{text} &");
                }
            }
        }
    }
}

/// The jobs in `shell`'s table now (named as [`name_jobs`] names them, with how many have each command line), to tell later
/// which a run added ([`forget_jobs_since`]).
pub(crate) fn job_marks(shell: &mut Shell) -> HashMap<String, usize> {
    name_jobs(shell);
    let mut marks = HashMap::new();
    for job in &shell.jobs().jobs {
        *marks.entry(job.command_line.clone()).or_default() += 1;
    }
    marks
}

/// Removes from `shell`'s table the jobs added since `marks` were taken: a stopped run's jobs
/// ended with it, and an interactive shell does not list a job that Ctrl-C ended either. Jobs
/// are appended, so of the jobs with one command line the oldest are those marked.
pub(crate) fn forget_jobs_since(shell: &mut Shell, marks: &HashMap<String, usize>) {
    name_jobs(shell);
    let mut kept: HashMap<String, usize> = HashMap::new();
    let table = &mut shell.jobs_mut().jobs;
    let before = table.len();
    table.retain(|job| {
        let seen = kept.entry(job.command_line.clone()).or_default();
        *seen += 1;
        *seen <= marks.get(&job.command_line).copied().unwrap_or(0)
    });
    if table.len() != before {
        // The current job (`%+`) may be gone: add the others again, in order, as brush marks
        // them when they start, keeping their numbers.
        let jobs = std::mem::take(table);
        for job in jobs {
            let id = job.id;
            let manager = shell.jobs_mut();
            manager.add_as_current(job);
            if let Some(added) = manager.jobs.last_mut() {
                added.id = id;
            }
        }
    }
}

/// The signals `kill %N` ends a job's list with, besides sending them to its processes: those
/// that end a shell by default and are sent to end a job. Others only reach its processes.
const ENDING_SIGNALS: [i32; 5] = [
    libc::SIGTERM,
    libc::SIGKILL,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
];

/// The number of the job `spec` names (`%N`, `%+`, `%%`, `%-`, `%name`, `%?text`), if any.
pub(crate) fn job_number(shell: &mut Shell, spec: &str) -> Option<usize> {
    name_jobs(shell);
    shell.jobs_mut().resolve_job_spec(spec).map(|job| job.id)
}

/// The processes of job `id` that still run, oldest first.
pub(crate) fn job_processes(shell: &Shell, id: usize) -> Vec<u32> {
    state::with_shell(shell, |s| s.jobs.tag_of(id))
        .flatten()
        .map(|tag| shellwright_proc::processes_tagged(&tag))
        .unwrap_or_default()
}

/// Sends `signal` to job `id`: to every process it started, and — for a signal that ends it
/// ([`ENDING_SIGNALS`]) — to the job itself, whose list is given up (a loop of builtins has no
/// process to receive it). `false` when the session has no running job `id`.
pub(crate) fn signal_job(shell: &Shell, id: usize, signal: i32) -> bool {
    let Some(book) = state::with_shell(shell, |s| s.jobs.clone()) else {
        return false;
    };
    let running = book.jobs().iter().any(|job| job.id == id && job.running);
    if !running {
        return false;
    }
    for pid in job_processes(shell, id) {
        if let Ok(pid) = i32::try_from(pid) {
            // SAFETY: kill(2) with a pid taken from the process table; a process gone meanwhile
            // only makes it fail with ESRCH.
            unsafe { libc::kill(pid, signal) };
        }
    }
    if ENDING_SIGNALS.contains(&signal) {
        book.stop(id, signal);
    }
    true
}
