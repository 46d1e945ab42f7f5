//! [`JobBook`]: what a shell keeps about its background jobs (`cmd &`) — which are running, how
//! each ended, and what each wrote once the run that started it had resolved.
//!
//! While the run that started a job is going, the job's output is part of that run's transcript.
//! Once the run resolves, the job's output has nowhere to go: an interactive shell would print it
//! on the terminal between prompts, but a run's transcript is closed. From then on it goes to the
//! job's own [`OutputRing`], read with [`JobBook::jobs`]. Each byte goes to exactly one of the two.

use std::sync::{Arc, Mutex};

use shellwright_io::{Utf8Decoder, lock};
use shellwright_proc::{CancelReason, CancelToken};

use crate::history::TranscriptBuffer;

/// How many bytes of output a job keeps: older bytes are dropped from the front, and counted.
pub const JOB_OUTPUT_LIMIT: usize = 1024 * 1024;

/// How many ended jobs a book keeps (the oldest ended one goes first); running ones always stay.
const ENDED_JOBS_KEPT: usize = 64;

/// The run a job was started by, as it was when the job was recorded (the job's task may first
/// run after that run ended).
#[derive(Clone, Debug, Default)]
pub(crate) struct JobOrigin {
    /// The run tag the job's processes carry: the run's, and the job's serial (`<run>.j<n>`).
    pub tag: String,
    /// The run's token: the job gives up its list when the run is stopped.
    pub run_stop: Option<CancelToken>,
    /// The identity of the run's output pipe (see `shellwright_io::file_identity`).
    #[cfg(unix)]
    pub run_output: Option<shellwright_io::FileIdentity>,
}

/// One background job, as [`JobBook::jobs`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellJob {
    /// The job's number, as `%N` names it.
    pub id: usize,
    /// Its first process still running, if any (what `jobs -l` shows).
    pub pid: Option<u32>,
    /// The command as written, with its `&`.
    pub command: String,
    pub running: bool,
    /// Its status once it ended.
    pub exit_code: Option<i32>,
    /// What it wrote after the run that started it resolved (the last [`JOB_OUTPUT_LIMIT`] bytes,
    /// decoded as UTF-8).
    pub output: String,
    /// How many bytes were dropped from the front of `output`.
    pub truncated_bytes: u64,
}

/// A shell's background jobs, shared by the session (which adds and ends them) and its owner
/// (which reads them between runs). Cloning gives another handle to the same book.
#[derive(Clone, Default)]
pub struct JobBook {
    records: Arc<Mutex<Vec<JobRecord>>>,
}

struct JobRecord {
    /// Unique within the book (job numbers are reused).
    serial: u64,
    id: usize,
    command: String,
    exit_code: Option<i32>,
    output: OutputRing,
    /// Fired by [`JobBook::stop`]: the job gives up its list (see `brush::jobs`).
    stop: CancelToken,
    origin: JobOrigin,
    /// Whether the entry brush added to its job table for it has its number and text (see
    /// [`JobBook::bind_next`]).
    bound: bool,
    /// The signal that stopped it.
    stopped_by: Option<i32>,
    /// Its first process, once `$!` found it (see [`JobBook::process_of`]).
    first_pid: Option<u32>,
}

impl JobBook {
    /// Records a job that starts now, from the run `origin` says.
    pub(crate) fn add(&self, serial: u64, id: usize, command: String, origin: JobOrigin) {
        let mut records = lock(&self.records);
        records.push(JobRecord {
            serial,
            id,
            command,
            origin,
            exit_code: None,
            output: OutputRing::default(),
            stop: CancelToken::new(),
            stopped_by: None,
            bound: false,
            first_pid: None,
        });
    }

    /// The number and the command of the oldest job whose table entry does not have them yet,
    /// now marked as having them: brush adds entries in the order jobs are recorded.
    pub(crate) fn bind_next(&self) -> Option<(usize, String)> {
        let mut records = lock(&self.records);
        let record = records.iter_mut().find(|r| !r.bound)?;
        record.bound = true;
        Some((record.id, record.command.clone()))
    }

    /// Where job `serial` comes from, and what it waits on to give up its list when `kill %N`
    /// ends it.
    pub(crate) fn start_of(&self, serial: u64) -> Option<(JobOrigin, CancelToken)> {
        let records = lock(&self.records);
        let record = records.iter().find(|r| r.serial == serial)?;
        Some((record.origin.clone(), record.stop.clone()))
    }

    /// The signal [`stop`](Self::stop) ended job `serial` with.
    pub(crate) fn stopped_by(&self, serial: u64) -> Option<i32> {
        let records = lock(&self.records);
        records.iter().find(|r| r.serial == serial)?.stopped_by
    }

    /// Makes the latest running job numbered `id` give up its list, as `signal` ends it; `false`
    /// when there is none.
    pub(crate) fn stop(&self, id: usize, signal: i32) -> bool {
        let mut records = lock(&self.records);
        let Some(record) = records
            .iter_mut()
            .rev()
            .find(|r| r.id == id && r.exit_code.is_none())
        else {
            return false;
        };
        record.stopped_by = Some(signal);
        record.stop.cancel(CancelReason::Aborted);
        true
    }

    /// Records that job `serial` ended with `status`.
    pub(crate) fn end(&self, serial: u64, status: i32) {
        let mut records = lock(&self.records);
        if let Some(record) = records.iter_mut().find(|r| r.serial == serial) {
            record.exit_code = Some(status);
        }
        let ended = records.iter().filter(|r| r.exit_code.is_some()).count();
        if ended > ENDED_JOBS_KEPT
            && let Some(oldest) = records.iter().position(|r| r.exit_code.is_some())
        {
            records.remove(oldest);
        }
    }

    /// Keeps `bytes` the job `serial` wrote after its run resolved.
    pub(crate) fn keep_output(&self, serial: u64, bytes: &[u8]) {
        if let Some(record) = lock(&self.records).iter_mut().find(|r| r.serial == serial) {
            record.output.push(bytes);
        }
    }

    /// The run tag the processes of the latest job numbered `id` carry.
    pub(crate) fn tag_of(&self, id: usize) -> Option<String> {
        let records = lock(&self.records);
        records
            .iter()
            .rev()
            .find(|r| r.id == id)
            .map(|r| r.origin.tag.clone())
    }

    /// What `$!` names for job `serial`: the process found for it before, or else the tag its
    /// processes carry while it runs.
    pub(crate) fn process_of(&self, serial: u64) -> Option<JobProcess> {
        let records = lock(&self.records);
        let record = records.iter().find(|r| r.serial == serial)?;
        Some(match record.first_pid {
            Some(pid) => JobProcess::Found(pid),
            None if record.exit_code.is_none() => JobProcess::Running(record.origin.tag.clone()),
            None => JobProcess::Ended,
        })
    }

    /// Keeps `pid` as job `serial`'s process: `$!` names it from then on, also once it ended.
    pub(crate) fn remember_pid(&self, serial: u64, pid: u32) {
        if let Some(record) = lock(&self.records).iter_mut().find(|r| r.serial == serial) {
            record.first_pid.get_or_insert(pid);
        }
    }

    /// The number of the job whose process `$!` named as `pid`.
    pub(crate) fn id_of_pid(&self, pid: u32) -> Option<usize> {
        let records = lock(&self.records);
        let record = records.iter().rev().find(|r| r.first_pid == Some(pid))?;
        Some(record.id)
    }

    /// Forgets every job (the session they belonged to ended).
    pub(crate) fn clear(&self) {
        lock(&self.records).clear();
    }

    /// The jobs, oldest first, each with its first live process (found in the process table,
    /// after the book's lock is released).
    pub fn jobs(&self) -> Vec<ShellJob> {
        let jobs: Vec<(ShellJob, String)> = lock(&self.records)
            .iter()
            .map(|r| {
                let (output, truncated_bytes) = r.output.text();
                let job = ShellJob {
                    id: r.id,
                    pid: None,
                    command: r.command.clone(),
                    running: r.exit_code.is_none(),
                    exit_code: r.exit_code,
                    output,
                    truncated_bytes,
                };
                (job, r.origin.tag.clone())
            })
            .collect();
        jobs.into_iter()
            .map(|(job, tag)| ShellJob {
                pid: job.running.then(|| first_process(&tag)).flatten(),
                ..job
            })
            .collect()
    }
}

/// A job's process, as far as its record knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum JobProcess {
    Found(u32),
    /// Not looked for yet, or not started yet: the job's processes carry this tag.
    Running(String),
    /// The job ended before anything looked for its process.
    Ended,
}

/// The oldest live process carrying `tag`.
pub(crate) fn first_process(tag: &str) -> Option<u32> {
    shellwright_proc::processes_tagged(tag).first().copied()
}

/// The last [`JOB_OUTPUT_LIMIT`] bytes a job wrote, decoded as the run's output is (a character
/// split across reads is joined), and how many came before them.
struct OutputRing {
    decoder: Utf8Decoder,
    kept: TranscriptBuffer,
}

impl Default for OutputRing {
    fn default() -> Self {
        Self {
            decoder: Utf8Decoder::new(),
            kept: TranscriptBuffer::new(JOB_OUTPUT_LIMIT),
        }
    }
}

impl OutputRing {
    fn push(&mut self, bytes: &[u8]) {
        let text = self.decoder.decode(bytes);
        self.kept.push(&text);
    }

    fn text(&self) -> (String, u64) {
        self.kept.text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_keeps_the_last_bytes_and_counts_the_dropped_ones() {
        let mut ring = OutputRing::default();
        ring.push(b"abc");
        assert_eq!(ring.text(), ("abc".to_string(), 0));
        ring.push(&vec![b'x'; JOB_OUTPUT_LIMIT]);
        let (text, dropped) = ring.text();
        assert_eq!(dropped, 3);
        assert_eq!(text.len(), JOB_OUTPUT_LIMIT);
    }

    #[test]
    fn a_character_split_between_two_writes_is_joined() {
        let mut ring = OutputRing::default();
        let bytes = "é!".as_bytes();
        ring.push(&bytes[..1]);
        ring.push(&bytes[1..]);
        assert_eq!(ring.text(), ("é!".to_string(), 0));
    }

    #[test]
    fn a_ring_never_keeps_half_a_character() {
        let mut ring = OutputRing::default();
        ring.push("é".repeat(JOB_OUTPUT_LIMIT / 2).as_bytes());
        ring.push(b"z");
        let (text, dropped) = ring.text();
        assert!(text.starts_with('é'));
        assert!(text.ends_with('z'));
        assert_eq!(dropped, 2);
        assert!(!text.contains('\u{FFFD}'));
    }

    #[test]
    fn a_book_keeps_running_jobs_and_the_latest_ended_ones() {
        let book = JobBook::default();
        for serial in 0..(ENDED_JOBS_KEPT as u64 + 10) {
            let origin = JobOrigin {
                tag: format!("t.{serial}"),
                ..JobOrigin::default()
            };
            book.add(serial, 1, "true &".into(), origin);
            if serial > 0 {
                book.end(serial, 0);
            }
        }
        let jobs = book.jobs();
        assert_eq!(jobs.len(), ENDED_JOBS_KEPT + 1);
        assert!(jobs[0].running);
        assert!(jobs[1..].iter().all(|job| job.exit_code == Some(0)));
    }

    #[test]
    fn a_job_keeps_the_first_process_found_for_it() {
        let book = JobBook::default();
        let origin = JobOrigin {
            tag: "run.j1".into(),
            ..JobOrigin::default()
        };
        book.add(1, 1, "sleep 1 &".into(), origin.clone());
        book.add(2, 2, "true &".into(), origin);
        assert_eq!(
            book.process_of(1),
            Some(JobProcess::Running("run.j1".into()))
        );
        book.remember_pid(1, 4242);
        book.remember_pid(1, 4343);
        book.end(1, 0);
        assert_eq!(book.process_of(1), Some(JobProcess::Found(4242)));
        assert_eq!(book.id_of_pid(4242), Some(1));
        book.end(2, 0);
        assert_eq!(book.process_of(2), Some(JobProcess::Ended));
        assert_eq!(book.process_of(3), None);
    }
}
