//! The session's job table as the user sees it: each job named as written (`jobs`), and the
//! jobs of a stopped run taken out of it.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use shellwright_io::lock;

use super::common::JOB_BUILTIN;

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
fn written_job(call_line: &str) -> Option<String> {
    let mut words = call_line.split_whitespace().skip(1);
    let mut number = || words.next()?.parse::<usize>().ok();
    let (session, index) = (u64::try_from(number()?).ok()?, number()?);
    lock(&WRITTEN).get(&session)?.get(&index).cloned()
}

/// Shows each job in `shell`'s table as the command the user wrote (`sleep 30 &`) rather than
/// the call the rewrite made of it; `jobs` runs this before it lists them.
pub(crate) fn name_jobs<SE: brush_core::extensions::ShellExtensions>(
    shell: &mut brush_core::Shell<SE>,
) {
    for job in &mut shell.jobs_mut().jobs {
        if job.command_line.starts_with(JOB_BUILTIN)
            && let Some(text) = written_job(&job.command_line)
        {
            job.command_line = format!("{text} &");
        }
    }
}

/// The jobs in `shell`'s table now (named as [`name_jobs`] names them, with how many have each command line), to tell later
/// which a run added ([`forget_jobs_since`]).
pub(crate) fn job_marks<SE: brush_core::extensions::ShellExtensions>(
    shell: &mut brush_core::Shell<SE>,
) -> HashMap<String, usize> {
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
pub(crate) fn forget_jobs_since<SE: brush_core::extensions::ShellExtensions>(
    shell: &mut brush_core::Shell<SE>,
    marks: &HashMap<String, usize>,
) {
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
