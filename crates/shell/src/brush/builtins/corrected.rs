//! Stock builtins whose standard output we correct after they ran.
//!
//! - `enable` and `compgen` list every builtin registered in the shell, so they would show our
//!   internal ones (the DEBUG hook of [`hooks`](crate::brush::hooks) and the pipeline-stage builtin of
//!   [`stages`](crate::brush::stages)), which bash does not have: their lines are dropped. So is
//!   the run's tag from `compgen`'s variable names (see [`run_tag`](super::run_tag)).
//! - `shopt` pads option names to 20 columns where bash pads to 15 (bash prints each option as
//!   `%-15s\t%s`): the padding is redone.
//! - `help` (the general listing) shows our internal builtins in its table: it is laid out
//!   again without them.
//! - `hash` reports a name it cannot find as `NAME: not found` on stderr, where bash starts the
//!   message as its builtins do (`bash: line N: hash: NAME: not found`).
//!
//! The stock builtin runs with the stream we correct (stdout, or stderr for `hash`) in an
//! anonymous memory file (so it may write any amount, and anything it runs, like `compgen -F`'s
//! function, writes there too); what it wrote is then corrected and written to the real stream.

use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
#[cfg(target_os = "linux")]
use std::os::fd::{FromRawFd as _, OwnedFd, RawFd};

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::openfiles::{OpenFile, OpenFiles};
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use super::{error_prefix, run_or_fail, stock};
use crate::brush::common::{HIDDEN_VARIABLES, is_internal};

/// How one builtin's output is corrected.
#[derive(Clone, Copy)]
enum Correction {
    /// `enable`: drops `enable <internal>` lines.
    Enable,
    /// `compgen`: drops candidates named like an internal builtin.
    Compgen,
    /// `shopt`: bash's 15-column padding of `name<TAB>on|off` lines.
    Shopt,
    /// `hash`: bash's prefix on `NAME: not found` (stderr).
    Hash,
    /// `help` with no topic: its table of builtins laid out again without the internal ones.
    Help,
}

impl Correction {
    fn fd(self) -> brush_core::ShellFd {
        match self {
            Self::Hash => OpenFiles::STDERR_FD,
            _ => OpenFiles::STDOUT_FD,
        }
    }

    /// `prefix` is how bash starts a builtin's message (`bash: line N: `).
    fn line(self, line: &str, prefix: &str) -> Option<String> {
        match self {
            Self::Enable => {
                let name = line
                    .strip_prefix("enable ")
                    .map(|rest| rest.strip_prefix("-n ").unwrap_or(rest));
                (!name.is_some_and(is_internal)).then(|| line.to_string())
            }
            Self::Compgen => {
                (!is_internal(line) && !HIDDEN_VARIABLES.contains(&line)).then(|| line.to_string())
            }
            Self::Shopt => Some(shopt_line(line)),
            Self::Help => Some(line.to_string()),
            Self::Hash => Some(match line.strip_suffix(": not found") {
                Some(name) if !name.is_empty() && !name.contains(' ') => {
                    format!("{prefix}hash: {name}: not found")
                }
                _ => line.to_string(),
            }),
        }
    }

    /// Corrects everything the builtin wrote, line by line; lines that are not UTF-8 (a file
    /// name `compgen -f` found, say) pass through unchanged.
    fn apply(self, output: &[u8], prefix: &str) -> Vec<u8> {
        if let Self::Help = self {
            return help_table(output);
        }
        let mut corrected = Vec::with_capacity(output.len());
        for line in output.split_inclusive(|&b| b == b'\n') {
            let (body, end) = match line.strip_suffix(b"\n") {
                Some(body) => (body, &b"\n"[..]),
                None => (line, &b""[..]),
            };
            match std::str::from_utf8(body) {
                Ok(text) => {
                    if let Some(fixed) = self.line(text, prefix) {
                        corrected.extend_from_slice(fixed.as_bytes());
                        corrected.extend_from_slice(end);
                    }
                }
                Err(_) => corrected.extend_from_slice(line),
            }
        }
        corrected
    }
}

/// The line after which brush's `help` lists the builtins, three columns of names sorted down
/// the columns, each cell `  ` + `*` if disabled (else a blank) + the name padded to 20.
const HELP_TABLE_HEADER: &str = "The following commands are implemented as shell built-ins:";
const HELP_COLUMNS: usize = 3;

/// brush's general help with the internal builtins left out of its table.
fn help_table(output: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(output) else {
        return output.to_vec();
    };
    let Some(start) = text.find(HELP_TABLE_HEADER) else {
        return output.to_vec();
    };
    let table_start = start + HELP_TABLE_HEADER.len() + 1;
    let (head, table) = text.split_at(table_start.min(text.len()));
    let mut names: Vec<&str> = table
        .split_whitespace()
        .filter(|cell| !is_internal(cell.trim_start_matches('*')))
        .collect();
    names.sort_by_key(|cell| cell.trim_start_matches('*'));
    let rows = names.len().div_ceil(HELP_COLUMNS);
    let mut out = head.to_string();
    for row in 0..rows {
        for column in 0..HELP_COLUMNS {
            if let Some(cell) = names.get(row + column * rows) {
                let (marker, name) = match cell.strip_prefix('*') {
                    Some(name) => ('*', name),
                    None => (' ', *cell),
                };
                out.push_str(&format!("  {marker}{name:<20}"));
            }
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// `checkwinsize        \ton` (brush) → `checkwinsize   \ton` (bash).
fn shopt_line(line: &str) -> String {
    if let Some((name, state)) = line.split_once('\t')
        && matches!(state, "on" | "off")
        && let name = name.trim_end_matches(' ')
        && !name.is_empty()
        && !name.contains(' ')
    {
        return format!("{name:<15}\t{state}");
    }
    line.to_string()
}

/// The builtin `$name`: the stock one, its output corrected by `$correction`.
macro_rules! corrected_builtin {
    ($name:ident, $correction:expr) => {
        pub(super) fn $name(
            ctx: ExecutionContext<'_, DefaultShellExtensions>,
            args: Vec<CommandArg>,
        ) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
            Box::pin(corrected(stringify!($name), $correction, ctx, args))
        }
    };
}

corrected_builtin!(enable, Correction::Enable);
corrected_builtin!(compgen, Correction::Compgen);
corrected_builtin!(hash, Correction::Hash);
corrected_builtin!(shopt, Correction::Shopt);

pub(super) fn help(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    // Only the general listing shows every builtin; help on a topic is left as it is.
    if args.len() > 1 {
        return run_or_fail(stock("help"), ctx, args);
    }
    Box::pin(corrected("help", Correction::Help, ctx, args))
}

async fn corrected(
    name: &str,
    correction: Correction,
    mut ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> Result<ExecutionResult, brush_core::Error> {
    let fd = correction.fd();
    let Some(mut target) = ctx.params.try_fd(ctx.shell, fd) else {
        // Nowhere to write to: nothing to correct.
        return run_or_fail(stock(name), ctx, args).await;
    };
    let prefix = error_prefix(ctx.shell);
    let capture = memory_file()?;
    ctx.params.set_fd(fd, OpenFile::File(capture.try_clone()?));
    let result = run_or_fail(stock(name), ctx, args).await;
    let written = read_back(capture)?;
    target.write_all(&correction.apply(&written, &prefix))?;
    target.flush()?;
    result
}

/// An anonymous file in memory, closed on exec; an unlinked temporary file where the kernel has no
/// `memfd_create` (before Linux 3.17).
#[cfg(target_os = "linux")]
pub(super) fn memory_file() -> std::io::Result<File> {
    // Through syscall(2): glibc has a memfd_create wrapper only since 2.27, and the addon is
    // linked against glibc 2.17.
    // SAFETY: the name is a NUL-terminated literal; the result is checked before use.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_memfd_create,
            c"shellwright-builtin-output".as_ptr(),
            libc::MFD_CLOEXEC,
        )
    };
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ENOSYS) {
            return temporary_file();
        }
        return Err(error);
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd as RawFd) }))
}

/// An unlinked temporary file (other systems have no `memfd_create`).
#[cfg(not(target_os = "linux"))]
pub(super) fn memory_file() -> std::io::Result<File> {
    temporary_file()
}

/// A new file in the temporary directory, unlinked at once; std opens it close-on-exec.
fn temporary_file() -> std::io::Result<File> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "shellwright-builtin-output-{}-{n}",
        std::process::id()
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

pub(super) fn read_back(mut file: File) -> std::io::Result<Vec<u8>> {
    let mut written = Vec::new();
    file.rewind()?;
    file.read_to_end(&mut written)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enable_and_compgen_drop_only_internal_builtins() {
        let listing = "enable .\nenable __shellwright_stage\nenable -n __shellwright_debug_trap\nenable echo\n";
        assert_eq!(
            Correction::Enable.apply(listing.as_bytes(), ""),
            b"enable .\nenable echo\n"
        );
        let candidates =
            "[[\n__shellwright_debug_trap\n__shellwright_stage\n__shellwright_stage2\nalias";
        assert_eq!(
            Correction::Compgen.apply(candidates.as_bytes(), ""),
            b"[[\n__shellwright_stage2\nalias"
        );
    }

    #[test]
    fn help_lays_its_table_out_again_without_internal_builtins() {
        let mut listing = format!("brush 0.5\n\n{HELP_TABLE_HEADER}\n");
        let cells = [
            [" .", " __shellwright_stage", " echo"],
            [" :", "*cd", " exit"],
            [" __shellwright_debug_trap", " cd2", ""],
        ];
        for row in cells {
            for cell in row.iter().filter(|c| !c.is_empty()) {
                listing.push_str(&format!("  {cell:<21}"));
            }
            listing.push('\n');
        }
        let expected = format!(
            "brush 0.5\n\n{HELP_TABLE_HEADER}\n   {:<20}  *{:<20}   {:<20}\n   {:<20}   {:<20}   {:<20}\n",
            ".", "cd", "echo", ":", "cd2", "exit"
        );
        assert_eq!(
            String::from_utf8(Correction::Help.apply(listing.as_bytes(), "")).unwrap(),
            expected
        );
    }

    #[test]
    fn shopt_lines_get_bash_padding() {
        let listing = "checkwinsize        \ton\nassoc_expand_once   \toff\nshopt -s extglob\nname with space     \ton\n";
        assert_eq!(
            String::from_utf8(Correction::Shopt.apply(listing.as_bytes(), "")).unwrap(),
            "checkwinsize   \ton\nassoc_expand_once\toff\nshopt -s extglob\nname with space     \ton\n"
        );
    }

    #[test]
    fn hash_misses_get_bash_prefix() {
        let errors = "ls: not found\nsome other message: not found\n";
        assert_eq!(
            Correction::Hash.apply(errors.as_bytes(), "bash: line 3: "),
            b"bash: line 3: hash: ls: not found\nsome other message: not found\n"
        );
    }

    #[test]
    fn memory_file_reads_back_what_was_written() {
        let mut file = memory_file().unwrap();
        file.write_all(b"abc\n").unwrap();
        assert_eq!(read_back(file).unwrap(), b"abc\n");
    }

    #[test]
    fn the_temporary_file_reads_back_and_leaves_no_name_behind() {
        let mut file = temporary_file().unwrap();
        file.write_all(b"abc\n").unwrap();
        let prefix = format!("shellwright-builtin-output-{}-", std::process::id());
        let left = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(Result::ok)
            .any(|entry| entry.file_name().to_string_lossy().starts_with(&prefix));
        assert!(!left, "the file was not unlinked");
        assert_eq!(read_back(file).unwrap(), b"abc\n");
    }
}
