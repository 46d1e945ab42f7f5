//! Builtins of our own, where the stock ones would reach the host process: `exec` (which would
//! `execve` the host), `kill` (whose `$$` is the host's pid), `umask` (process-wide), `suspend`
//! (which would stop the host) and `printf` (whose formatting library writes to the host's
//! stderr); `wait`, where the stock one loses the job's status ([`wait`]); `echo`, which skips the
//! stock one's costly option parser when there are no options ([`echo`]); and stock builtins
//! whose output we correct ([`corrected`]: `enable`, `compgen`, `help`, `shopt`, `hash`).
//!
//! Each keeps the stock registration (help text, special-builtin flag) and swaps its function.
//! What they need to remember between the builtin and the end of the run lives in a per-session
//! record here, keyed by the session's hook id.

mod corrected;
mod echo;
mod exec;
mod kill;
mod printf;
mod suspend;
mod umask;
mod wait;

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use brush_core::builtins::{CommandExecuteFunc, Registration};
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionControlFlow, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use crate::hooks;

type BuiltinFn = CommandExecuteFunc<DefaultShellExtensions>;

/// How a session was ended by one of our builtins, when that changes what happens at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// `exec cmd` replaced the shell: no EXIT trap (there is no shell left to run it).
    Exec,
    /// SIGKILL aimed at the session itself: no EXIT trap.
    Killed,
}

#[derive(Debug)]
struct SessionState {
    umask: u32,
    ending: Option<Ending>,
}

static STATES: LazyLock<Mutex<HashMap<u64, SessionState>>> = LazyLock::new(Mutex::default);

fn with_state<R>(id: u64, f: impl FnOnce(&mut SessionState) -> R) -> Option<R> {
    let mut states = STATES.lock().unwrap_or_else(|p| p.into_inner());
    states.get_mut(&id).map(f)
}

fn with_shell_state<R>(shell: &Shell, f: impl FnOnce(&mut SessionState) -> R) -> Option<R> {
    with_state(hooks::session_of(shell)?, f)
}

/// The umask of the session `shell` belongs to.
pub(crate) fn session_umask(shell: &Shell) -> Option<u32> {
    with_shell_state(shell, |s| s.umask)
}

/// Registers a session's record; dropping the guard removes it.
pub(crate) struct StateGuard {
    id: u64,
}

impl StateGuard {
    pub fn register(id: u64, umask: u32) -> Self {
        STATES.lock().unwrap_or_else(|p| p.into_inner()).insert(
            id,
            SessionState {
                umask,
                ending: None,
            },
        );
        Self { id }
    }

    /// The session's umask (what its processes and files are created with).
    pub fn umask(&self) -> u32 {
        with_state(self.id, |s| s.umask).unwrap_or(0o022)
    }

    /// How our builtins ended the session, if they did; cleared by reading.
    pub fn take_ending(&self) -> Option<Ending> {
        with_state(self.id, |s| s.ending.take()).flatten()
    }
}

impl Drop for StateGuard {
    fn drop(&mut self) {
        STATES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// Our builtins, each replacing the stock one of its name.
const OURS: [(&str, BuiltinFn); 12] = [
    ("echo", echo::run),
    ("exec", exec::run),
    ("kill", kill::run),
    ("umask", umask::run),
    ("suspend", suspend::run),
    ("printf", printf::run),
    ("enable", corrected::enable),
    ("compgen", corrected::compgen),
    ("shopt", corrected::shopt),
    ("hash", corrected::hash),
    ("help", corrected::help),
    ("wait", wait::run),
];

/// Swaps in our `echo`, `exec`, `kill`, `umask`, `suspend`, `printf`, `wait` and the corrected
/// `enable`, `compgen`, `help`, `shopt` and `hash`. Must run before anything wraps builtins
/// ([`hooks::install_builtins`]): it replaces whatever the registrations of those names run.
pub(crate) fn install(builtins: &mut HashMap<String, Registration<DefaultShellExtensions>>) {
    for (name, func) in OURS {
        if let Some(reg) = builtins.get_mut(name) {
            reg.execute_func = func;
        }
    }
}

/// The builtin `name` as [`install`] leaves it — ours where we have one, else the stock one —
/// for wrappers that add to it. It does not read a registration table, so a wrapper never calls
/// another wrapper by mistake; the install order still matters the other way, as `install`
/// replaces whatever a table holds for its names (see [`hooks::install_builtins`]).
pub(crate) fn base(name: &str) -> Option<BuiltinFn> {
    OURS.iter()
        .find(|(ours, _)| *ours == name)
        .map(|(_, func)| *func)
        .or_else(|| stock(name))
}

/// `bash: line N: `, how `bash -c` starts the messages of a builtin.
fn error_prefix(shell: &Shell) -> String {
    match shell.env_str("LINENO") {
        Some(line) => format!("bash: line {line}: "),
        None => "bash: ".to_string(),
    }
}

/// Registers `name`, a builtin only our hooks call, running `func` (a copy of `:`'s
/// registration: a regular builtin, which `enable`, `compgen` and `help` leave out, see
/// [`is_internal`]).
pub(crate) fn add_internal(
    builtins: &mut HashMap<String, Registration<DefaultShellExtensions>>,
    name: &str,
    func: BuiltinFn,
) {
    if let Some(colon) = builtins.get(":") {
        let mut registration = colon.clone();
        registration.execute_func = func;
        registration.special_builtin = false;
        builtins.insert(name.to_string(), registration);
    }
}

/// Whether `name` is one of the builtins only our hooks call, which bash does not have.
pub(crate) fn is_internal(name: &str) -> bool {
    [
        hooks::DEBUG_TRAP_BUILTIN,
        crate::stages::STAGE_BUILTIN,
        crate::flags::FLAGS_BUILTIN,
    ]
    .contains(&name)
}

/// A builtin's arguments after its name, as text.
fn operands(args: &[CommandArg]) -> Vec<String> {
    args.iter().skip(1).map(ToString::to_string).collect()
}

/// A result that ends the session with `code`.
fn exit_with(code: u8) -> ExecutionResult {
    let mut result = ExecutionResult::new(code);
    result.next_control_flow = ExecutionControlFlow::ExitShell;
    result
}

/// The stock builtin `name`.
fn stock(name: &str) -> Option<BuiltinFn> {
    static STOCK: LazyLock<HashMap<String, BuiltinFn>> = LazyLock::new(|| {
        brush_builtins::default_builtins::<DefaultShellExtensions>(
            brush_builtins::BuiltinSet::BashMode,
        )
        .into_iter()
        .map(|(name, reg)| (name, reg.execute_func))
        .collect()
    });
    STOCK.get(name).copied()
}

/// Runs `builtin` — a stock one ours hands over to unchanged, or what [`base`] gives a wrapper —
/// or, when brush has none, fails with status 2, as bash does for a builtin it cannot run.
pub(crate) fn run_or_fail<'a>(
    builtin: Option<BuiltinFn>,
    ctx: ExecutionContext<'a, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'a, Result<ExecutionResult, brush_core::Error>> {
    match builtin {
        Some(builtin) => builtin(ctx, args),
        None => Box::pin(async { Ok(ExecutionResult::new(2)) }),
    }
}

/// Builtin arguments as brush passes them, from string literals.
#[cfg(test)]
pub(crate) fn test_args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}
