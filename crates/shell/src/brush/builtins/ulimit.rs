//! `ulimit`, kept per shell and applied to the processes it starts, never to the host.
//!
//! The stock builtin calls `setrlimit` on its own process, which is the host: `ulimit -n 64`
//! would leave Node unable to open files. Ours keeps the limits a shell sets in the shell itself
//! (see [`common::trap_key`](crate::brush::common::trap_key): a subshell's are its own, as its
//! `( ulimit -c 0 )` must not change its parent's), over the host's own for every resource it
//! has not set, and the spawn policy applies them to every process the shell starts
//! ([`spawn_policy`](crate::brush::spawn_policy)). The shell itself runs in the host and is not
//! limited: its builtins and redirections may go past what it set.
//!
//! Everything else is bash 5's, on Linux: the options and their order in `-a`, units (1024-byte
//! blocks for `-c` and `-f`, kilobytes, microseconds, …), `-S`/`-H` (neither: set both, print
//! the soft limit), `unlimited`/`soft`/`hard`, the read-only pipe size, the messages and exit
//! statuses. The kernel's refusals are foreseen here, since a child cannot report a failed
//! `setrlimit`: a soft limit above the hard one is `Invalid argument`; raising a hard limit
//! without `CAP_SYS_RESOURCE`, or the open-files limit above `fs.nr_open`, is `Operation not
//! permitted`. On other systems `ulimit` has only the resources they have, root may raise hard
//! limits, and the system's ceiling on open files is not foreseen: a process the shell starts
//! past it keeps the host's limit.

use std::io::Write as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;
use libc::{RLIM_INFINITY, rlim_t};

use super::{error_prefix, operands, run_or_fail, stock};
use crate::brush::common::{run_limits, set_run_limits};
use crate::brush::spawn_policy::{Limit, RunLimits};

const USAGE: &str = "ulimit: usage: ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]";
const SOFT: u8 = 1;
const HARD: u8 = 2;
/// What the kernel's `setrlimit` would say.
const EINVAL: &str = "Invalid argument";
const EPERM: &str = "Operation not permitted";

/// One line of `ulimit -a`.
struct Resource {
    flag: char,
    description: &'static str,
    unit: Option<&'static str>,
    /// Bytes (or whatever the kernel counts) per unit of the value shown and given.
    factor: rlim_t,
    /// The `RLIMIT_*` number; `None` for the pipe size, which can only be read.
    number: Option<usize>,
}

const fn resource(
    flag: char,
    description: &'static str,
    unit: Option<&'static str>,
    factor: rlim_t,
    number: usize,
) -> Resource {
    Resource {
        flag,
        description,
        unit,
        factor,
        number: Some(number),
    }
}

/// bash's resources, in the order of `ulimit -a`: on other systems only those they have, as bash
/// there lists them.
const RESOURCES: &[Resource] = &[
    #[cfg(target_os = "linux")]
    resource(
        'R',
        "real-time non-blocking time",
        Some("microseconds"),
        1,
        libc::RLIMIT_RTTIME as usize,
    ),
    resource(
        'c',
        "core file size",
        Some("blocks"),
        1024,
        libc::RLIMIT_CORE as usize,
    ),
    resource(
        'd',
        "data seg size",
        Some("kbytes"),
        1024,
        libc::RLIMIT_DATA as usize,
    ),
    #[cfg(target_os = "linux")]
    resource(
        'e',
        "scheduling priority",
        None,
        1,
        libc::RLIMIT_NICE as usize,
    ),
    resource(
        'f',
        "file size",
        Some("blocks"),
        1024,
        libc::RLIMIT_FSIZE as usize,
    ),
    #[cfg(target_os = "linux")]
    resource(
        'i',
        "pending signals",
        None,
        1,
        libc::RLIMIT_SIGPENDING as usize,
    ),
    resource(
        'l',
        "max locked memory",
        Some("kbytes"),
        1024,
        libc::RLIMIT_MEMLOCK as usize,
    ),
    resource(
        'm',
        "max memory size",
        Some("kbytes"),
        1024,
        libc::RLIMIT_RSS as usize,
    ),
    resource('n', "open files", None, 1, libc::RLIMIT_NOFILE as usize),
    Resource {
        flag: 'p',
        description: "pipe size",
        unit: Some("512 bytes"),
        factor: 512,
        number: None,
    },
    #[cfg(target_os = "linux")]
    resource(
        'q',
        "POSIX message queues",
        Some("bytes"),
        1,
        libc::RLIMIT_MSGQUEUE as usize,
    ),
    #[cfg(target_os = "linux")]
    resource(
        'r',
        "real-time priority",
        None,
        1,
        libc::RLIMIT_RTPRIO as usize,
    ),
    resource(
        's',
        "stack size",
        Some("kbytes"),
        1024,
        libc::RLIMIT_STACK as usize,
    ),
    resource(
        't',
        "cpu time",
        Some("seconds"),
        1,
        libc::RLIMIT_CPU as usize,
    ),
    resource(
        'u',
        "max user processes",
        None,
        1,
        libc::RLIMIT_NPROC as usize,
    ),
    resource(
        'v',
        "virtual memory",
        Some("kbytes"),
        1024,
        libc::RLIMIT_AS as usize,
    ),
    #[cfg(target_os = "linux")]
    resource('x', "file locks", None, 1, libc::RLIMIT_LOCKS as usize),
];

/// The pipe size `-p` reports, in bytes (`PIPE_BUF`, as bash reads it).
const PIPE_SIZE: rlim_t = libc::PIPE_BUF as rlim_t;

fn find(flag: char) -> Option<&'static Resource> {
    RESOURCES.iter().find(|r| r.flag == flag)
}

/// `ulimit`'s arguments, read as bash's option parser reads them: each resource option takes an
/// optional value, attached (`-n64`) or as the next word unless that starts with `-`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Request {
    all: bool,
    /// [`SOFT`], [`HARD`], both, or 0 (neither given).
    mode: u8,
    /// The resources named, in order, each with its value if one was given.
    resources: Vec<(char, Option<String>)>,
}

/// Parses the arguments after `ulimit`; `Err` names an option bash does not have.
fn parse(words: &[String]) -> Result<Request, String> {
    let mut request = Request::default();
    let mut rest = words.iter().peekable();
    while let Some(word) = rest.next_if(|w| w.starts_with('-') && w.len() > 1) {
        if word == "--" {
            break;
        }
        let flags: Vec<char> = word.chars().skip(1).collect();
        for (at, &flag) in flags.iter().enumerate() {
            match flag {
                'a' => request.all = true,
                'S' => request.mode |= SOFT,
                'H' => request.mode |= HARD,
                _ if find(flag).is_some() => {
                    let attached: String = flags[at + 1..].iter().collect();
                    let value = if attached.is_empty() {
                        rest.next_if(|w| !w.starts_with('-')).cloned()
                    } else {
                        Some(attached)
                    };
                    request.resources.push((flag, value));
                    break;
                }
                other => return Err(format!("-{other}")),
            }
        }
    }
    // `ulimit [value]` is `ulimit -f [value]`; an operand after options is the last one's value.
    let mut operand = rest.next().cloned();
    if request.resources.is_empty() {
        request.resources.push(('f', operand.take()));
    } else if let Some((_, value @ None)) = request.resources.last_mut() {
        *value = operand.take();
    }
    Ok(request)
}

/// What a shell's limits are, over the host's, and what the kernel would let it set.
struct Limits {
    own: RunLimits,
}

impl Limits {
    /// The soft and hard limit of `resource` for the processes the shell starts.
    fn current(&self, resource: &Resource) -> Limit {
        match resource.number {
            Some(number) => self.own.get(number).unwrap_or_else(|| host_limit(number)),
            None => Limit {
                soft: PIPE_SIZE,
                hard: PIPE_SIZE,
            },
        }
    }

    /// Sets `resource` to `value` as `mode` says; `Err` is the kernel's word for a refusal.
    fn set(&mut self, resource: &Resource, value: rlim_t, mode: u8) -> Result<(), &'static str> {
        let Some(number) = resource.number else {
            return Err(EINVAL);
        };
        let current = self.current(resource);
        // bash's rule: an unprivileged `ulimit -S x unlimited` means "as high as the hard limit".
        // SAFETY: geteuid cannot fail.
        let unprivileged = unsafe { libc::geteuid() } != 0;
        let value = if unprivileged
            && value == RLIM_INFINITY
            && mode & HARD == 0
            && current.soft <= current.hard
        {
            current.hard
        } else {
            value
        };
        let wanted = Limit {
            soft: if mode & SOFT != 0 {
                value
            } else {
                current.soft
            },
            hard: if mode & HARD != 0 {
                value
            } else {
                current.hard
            },
        };
        refusal(number, wanted, current, &Kernel::read())?;
        let host = host_limit(number);
        self.own = self.own.with(number, (wanted != host).then_some(wanted));
        Ok(())
    }
}

/// The capability that lets a process raise its hard limits (`capabilities(7)`).
const CAP_SYS_RESOURCE: u32 = 24;

/// What decides whether the kernel lets a process set a limit.
struct Kernel {
    may_raise_hard: bool,
    nr_open: rlim_t,
}

impl Kernel {
    fn read() -> Self {
        Self {
            may_raise_hard: has_capability(CAP_SYS_RESOURCE),
            nr_open: std::fs::read_to_string("/proc/sys/fs/nr_open")
                .ok()
                .and_then(|text| text.trim().parse().ok())
                .unwrap_or(1 << 20),
        }
    }
}

/// Why `setrlimit(number, wanted)` would fail in a process whose limit is `current`, as the
/// kernel decides it; `Ok` when it would not.
fn refusal(
    number: usize,
    wanted: Limit,
    current: Limit,
    kernel: &Kernel,
) -> Result<(), &'static str> {
    if wanted.soft > wanted.hard {
        return Err(EINVAL);
    }
    if number == libc::RLIMIT_NOFILE as usize && wanted.hard > kernel.nr_open {
        return Err(EPERM);
    }
    if wanted.hard > current.hard && !kernel.may_raise_hard {
        return Err(EPERM);
    }
    Ok(())
}

/// The host's own limit of resource `number`.
fn host_limit(number: usize) -> Limit {
    let mut value = libc::rlimit {
        rlim_cur: RLIM_INFINITY,
        rlim_max: RLIM_INFINITY,
    };
    // SAFETY: getrlimit writes one rlimit into `value`; on failure it stays unlimited.
    unsafe { libc::getrlimit(number as _, &mut value) };
    Limit {
        soft: value.rlim_cur,
        hard: value.rlim_max,
    }
}

/// Whether the host holds capability `bit` in its effective set (`CapEff` in /proc).
#[cfg(target_os = "linux")]
fn has_capability(bit: u32) -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|caps| caps >> bit & 1 == 1)
}

/// Without Linux's capabilities, root holds them all.
#[cfg(not(target_os = "linux"))]
fn has_capability(_bit: u32) -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A value as `ulimit` shows it, with its row's description and unit when `described`.
fn shown(resource: &Resource, value: rlim_t, described: bool) -> String {
    let value = if value == RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        (value / resource.factor).to_string()
    };
    if !described {
        return value;
    }
    let unit = match resource.unit {
        Some(unit) => format!("({unit}, -{}) ", resource.flag),
        None => format!("(-{}) ", resource.flag),
    };
    format!("{:<20} {unit:>20}{value}", resource.description)
}

/// Why a value given to `ulimit` is no value, as bash words it.
#[derive(Debug, PartialEq, Eq)]
enum BadValue {
    /// `… invalid number` (or `invalid octal number`, `invalid hex number`).
    Invalid(&'static str),
    OutOfRange,
}

/// The limit `text` asks for: `unlimited`, `soft`, `hard` (of `current`), or digits in the
/// resource's units (bash reads digits only, wrapping as its `rlim_t` does; none is 0).
fn value_of(text: &str, resource: &Resource, current: Limit) -> Result<rlim_t, BadValue> {
    match text {
        "unlimited" => return Ok(RLIM_INFINITY),
        "soft" => return Ok(current.soft),
        "hard" => return Ok(current.hard),
        _ => {}
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        let mut bytes = text.bytes();
        return Err(BadValue::Invalid(match (bytes.next(), bytes.next()) {
            (Some(b'0'), Some(b'0'..=b'9')) => "invalid octal number",
            (Some(b'0'), Some(b'x')) => "invalid hex number",
            _ => "invalid number",
        }));
    }
    let units = text.bytes().fold(0 as rlim_t, |n, digit| {
        n.wrapping_mul(10).wrapping_add(rlim_t::from(digit - b'0'))
    });
    units
        .checked_mul(resource.factor)
        .ok_or(BadValue::OutOfRange)
}

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let words = operands(&args);
        if words.first().is_some_and(|w| w == "--help") {
            return run_or_fail(stock("ulimit"), ctx, args).await;
        }
        let prefix = error_prefix(ctx.shell);
        let request = match parse(&words) {
            Ok(request) => request,
            Err(option) => {
                let _ = writeln!(ctx.stderr(), "{prefix}ulimit: {option}: invalid option");
                let _ = writeln!(ctx.stderr(), "{USAGE}");
                return Ok(ExecutionResult::new(2));
            }
        };
        let mut limits = Limits {
            own: run_limits(ctx.shell),
        };
        if request.all {
            let mode = if request.mode == 0 {
                SOFT
            } else {
                request.mode
            };
            let mut out = String::new();
            for resource in RESOURCES {
                out.push_str(&shown(resource, pick(limits.current(resource), mode), true));
                out.push('\n');
            }
            ctx.stdout().write_all(out.as_bytes())?;
            return Ok(ExecutionResult::success());
        }
        let described = request.resources.len() > 1;
        let mut status = 0;
        for (flag, value) in &request.resources {
            let Some(resource) = find(*flag) else {
                continue;
            };
            let current = limits.current(resource);
            let Some(text) = value else {
                let mode = if request.mode == 0 {
                    SOFT
                } else {
                    request.mode
                };
                writeln!(
                    ctx.stdout(),
                    "{}",
                    shown(resource, pick(current, mode), described)
                )?;
                continue;
            };
            let mode = if request.mode == 0 {
                SOFT | HARD
            } else {
                request.mode
            };
            let failure = match value_of(text, resource, current) {
                Ok(value) => match limits.set(resource, value, mode) {
                    Ok(()) => continue,
                    Err(errno) => format!("{}: cannot modify limit: {errno}", resource.description),
                },
                Err(BadValue::Invalid(what)) => format!("{text}: {what}"),
                Err(BadValue::OutOfRange) => format!("{text}: limit out of range"),
            };
            let _ = writeln!(ctx.stderr(), "{prefix}ulimit: {failure}");
            status = 1;
            break;
        }
        if limits.own != run_limits(ctx.shell) {
            set_run_limits(ctx.shell, limits.own);
        }
        Ok(ExecutionResult::new(status))
    })
}

/// The soft limit, unless only the hard one was asked for.
fn pick(limit: Limit, mode: u8) -> rlim_t {
    if mode & SOFT != 0 {
        limit.soft
    } else {
        limit.hard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::builtins::test_args as strings;

    fn request(all: bool, mode: u8, resources: &[(char, Option<&str>)]) -> Request {
        Request {
            all,
            mode,
            resources: resources
                .iter()
                .map(|(flag, value)| (*flag, value.map(String::from)))
                .collect(),
        }
    }

    #[test]
    fn reads_options_and_values_as_bash_does() {
        let parsed = |words: &[&str]| parse(&strings(words));
        assert_eq!(parsed(&[]), Ok(request(false, 0, &[('f', None)])));
        assert_eq!(
            parsed(&["100"]),
            Ok(request(false, 0, &[('f', Some("100"))]))
        );
        assert_eq!(
            parsed(&["-n", "64"]),
            Ok(request(false, 0, &[('n', Some("64"))]))
        );
        assert_eq!(
            parsed(&["-n64", "-S"]),
            Ok(request(false, SOFT, &[('n', Some("64"))]))
        );
        // `-nc`: the rest of the word is -n's value.
        assert_eq!(parsed(&["-nc"]), Ok(request(false, 0, &[('n', Some("c"))])));
        // A value never starts with `-`; an operand is the last option's value.
        assert_eq!(
            parsed(&["-c", "-n", "100", "200"]),
            Ok(request(false, 0, &[('c', None), ('n', Some("100"))]))
        );
        assert_eq!(
            parsed(&["-SH", "-c", "-n", "--", "7"]),
            Ok(request(
                false,
                SOFT | HARD,
                &[('c', None), ('n', Some("7"))]
            ))
        );
        assert_eq!(
            parsed(&["--", "-n"]),
            Ok(request(false, 0, &[('f', Some("-n"))]))
        );
        assert_eq!(parsed(&["-"]), Ok(request(false, 0, &[('f', Some("-"))])));
        assert_eq!(
            parsed(&["-ac", "0"]),
            Ok(request(true, 0, &[('c', Some("0"))]))
        );
        assert_eq!(parsed(&["-b"]), Err("-b".into()));
        assert_eq!(parsed(&["-n", "-5"]), Err("-5".into()));
        assert_eq!(parsed(&["-T"]), Err("-T".into()));
    }

    #[test]
    fn shows_values_and_rows_as_bash_5_does() {
        let core = find('c').expect("-c");
        let files = find('n').expect("-n");
        let rt = find('R').expect("-R");
        assert_eq!(shown(core, 5120, false), "5");
        assert_eq!(shown(core, RLIM_INFINITY, false), "unlimited");
        assert_eq!(
            shown(core, 0, true),
            "core file size              (blocks, -c) 0"
        );
        assert_eq!(
            shown(files, 20000, true),
            "open files                          (-n) 20000"
        );
        assert_eq!(
            shown(rt, RLIM_INFINITY, true),
            "real-time non-blocking time  (microseconds, -R) unlimited"
        );
        let flags: String = RESOURCES.iter().map(|r| r.flag).collect();
        let expected = if cfg!(target_os = "linux") {
            "Rcdefilmnpqrstuvx"
        } else {
            "cdflmnpstuv"
        };
        assert_eq!(flags, expected);
    }

    #[test]
    fn reads_values_in_the_resources_units() {
        let core = find('c').expect("-c");
        let files = find('n').expect("-n");
        let current = Limit {
            soft: 2048,
            hard: 4096,
        };
        assert_eq!(value_of("4", core, current), Ok(4096));
        assert_eq!(value_of("64", files, current), Ok(64));
        assert_eq!(value_of("", files, current), Ok(0));
        assert_eq!(value_of("08", files, current), Ok(8));
        assert_eq!(value_of("unlimited", core, current), Ok(RLIM_INFINITY));
        assert_eq!(value_of("soft", core, current), Ok(2048));
        assert_eq!(value_of("hard", core, current), Ok(4096));
        assert_eq!(
            value_of("abc", core, current),
            Err(BadValue::Invalid("invalid number"))
        );
        assert_eq!(
            value_of("0x10", core, current),
            Err(BadValue::Invalid("invalid hex number"))
        );
        assert_eq!(
            value_of("09a", core, current),
            Err(BadValue::Invalid("invalid octal number"))
        );
        assert_eq!(
            value_of("-1", core, current),
            Err(BadValue::Invalid("invalid number"))
        );
        assert_eq!(
            value_of("18014398509481984", core, current),
            Err(BadValue::OutOfRange)
        );
        assert_eq!(
            value_of("18014398509481983", core, current),
            Ok(18014398509481983 * 1024)
        );
        // Digits beyond rlim_t wrap, as bash's do.
        assert_eq!(
            value_of("99999999999999999999", files, current),
            Ok(7766279631452241919)
        );
    }

    #[test]
    fn foresees_the_kernels_refusals() {
        let files = libc::RLIMIT_NOFILE as usize;
        let core = libc::RLIMIT_CORE as usize;
        let current = Limit { soft: 64, hard: 64 };
        let unprivileged = Kernel {
            may_raise_hard: false,
            nr_open: 1 << 20,
        };
        let privileged = Kernel {
            may_raise_hard: true,
            nr_open: 1 << 20,
        };
        let limit = |soft, hard| Limit { soft, hard };
        assert_eq!(
            refusal(files, limit(32, 64), current, &unprivileged),
            Ok(())
        );
        assert_eq!(
            refusal(files, limit(32, 32), current, &unprivileged),
            Ok(())
        );
        assert_eq!(
            refusal(files, limit(65, 64), current, &unprivileged),
            Err(EINVAL)
        );
        assert_eq!(
            refusal(files, limit(100, 100), current, &unprivileged),
            Err(EPERM)
        );
        assert_eq!(
            refusal(files, limit(100, 100), current, &privileged),
            Ok(())
        );
        assert_eq!(
            refusal(files, limit(100, (1 << 20) + 1), current, &privileged),
            Err(EPERM)
        );
        assert_eq!(
            refusal(core, limit(100, RLIM_INFINITY), current, &privileged),
            Ok(())
        );
    }
}
