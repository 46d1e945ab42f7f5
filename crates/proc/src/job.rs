//! Windows Job Objects: a group of processes that ends as one. A process put in a job stays in it,
//! and every process it starts afterwards joins it too, wherever it goes in the tree (Windows does
//! not re-parent orphans, so a tree walk loses what a middle process left behind; a job does
//! not). The job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when its last handle closes
//! — its owner dropped it, or the host ended, however it ended — Windows terminates everything
//! in it. Only the owner holds that handle (it is not inheritable).
//!
//! A process can be put in a job only once it exists, so what it started before that is not in
//! the job; callers also end a stopped run's tree by walking it.

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_BREAKAWAY_OK,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectExtendedLimitInformation, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

/// The exit code the job's processes report when it is terminated, as `taskkill /F` leaves.
const TERMINATED_EXIT_CODE: u32 = 1;

/// A Job Object whose processes end when it is terminated or dropped.
#[derive(Debug)]
pub struct ProcessJob {
    handle: HANDLE,
}

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for ProcessJob {}
// SAFETY: every operation on the handle is a thread-safe kernel call.
unsafe impl Sync for ProcessJob {}

impl ProcessJob {
    /// A new, empty job that kills its processes when its handle closes. Processes in it may
    /// still start others outside it on purpose (`CREATE_BREAKAWAY_FROM_JOB`).
    pub fn new() -> std::io::Result<Self> {
        // SAFETY: no security attributes and no name: a private job whose handle is not
        // inherited.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let job = Self { handle };
        // SAFETY: a zeroed limit structure is valid; only its flags are set.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags =
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_BREAKAWAY_OK;
        // SAFETY: `limits` is the structure this information class names, with its size.
        let set = unsafe {
            SetInformationJobObject(
                job.handle,
                JobObjectExtendedLimitInformation,
                std::ptr::addr_of!(limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts the process `pid` in the job; false when it is gone or cannot be opened (or is in a
    /// job this one cannot nest in).
    pub fn adopt(&self, pid: u32) -> bool {
        // SAFETY: OpenProcess takes plain values and returns a handle or null, closed below.
        unsafe {
            let process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid);
            if process.is_null() {
                return false;
            }
            let adopted = AssignProcessToJobObject(self.handle, process) != 0;
            CloseHandle(process);
            adopted
        }
    }

    /// Terminates every process in the job now.
    pub fn terminate(&self) {
        // SAFETY: the handle is ours and open.
        unsafe {
            TerminateJobObject(self.handle, TERMINATED_EXIT_CODE);
        }
    }
}

impl Drop for ProcessJob {
    /// Closing the last handle terminates what is still in the job.
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe {
            CloseHandle(self.handle);
        }
    }
}

/// The pids of the processes whose parent is the host, from one ToolHelp snapshot: cheaper than
/// a full process table, for noticing that the host started something.
pub fn host_child_pids() -> Vec<u32> {
    let host = std::process::id();
    let mut children = Vec::new();
    // SAFETY: the snapshot handle is checked, walked with a correctly sized entry, and closed.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snapshot == INVALID_HANDLE_VALUE {
            return children;
        }
        let mut entry = PROCESSENTRY32W {
            dwSize: size_of::<PROCESSENTRY32W>() as u32,
            ..Default::default()
        };
        let mut more = Process32FirstW(snapshot, &mut entry) != 0;
        while more {
            if entry.th32ParentProcessID == host && entry.th32ProcessID != host {
                children.push(entry.th32ProcessID);
            }
            more = Process32NextW(snapshot, &mut entry) != 0;
        }
        CloseHandle(snapshot);
    }
    children
}
