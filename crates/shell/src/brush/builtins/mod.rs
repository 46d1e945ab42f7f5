//! Builtins of our own, where the stock ones would reach the host process: `exec` (which would
//! `execve` the host), `kill` (whose `$$` is the host's pid), `umask` and `ulimit` (process-wide),
//! `suspend` (which would stop the host) and `printf` (whose formatting library writes to the
//! host's stderr); `command`, which gives its thread its shell's limits before it starts a
//! program ([`command`]); `wait`, where the stock one loses the job's status ([`wait`]); `jobs`,
//! which lists each job as the command the user wrote ([`jobs`]); `echo`, `cd`, `pwd` and
//! `export`, which skip the stock ones' costly option parser when there are no options
//! ([`echo`], [`cd`], [`pwd`], [`export`]); stock builtins whose output
//! we correct ([`corrected`]: `enable`, `compgen`, `help`, `shopt`, `hash`); `declare`,
//! `typeset`, `export`, `set` and `unset`, which leave the run's tag alone ([`run_tag`]); and
//! `test` and `[`, which test the run's descriptors, not the host's ([`test`]).
//!
//! Each keeps the stock registration (help text, special-builtin flag) and swaps its function.
//! What they need to remember between the builtin and the end of the run lives in the session's
//! record ([`state`](super::state)).

mod cd;
mod command;
mod corrected;
mod echo;
mod exec;
mod export;
mod jobs;
mod kill;
mod printf;
mod pwd;
mod run_tag;
mod suspend;
mod test;
mod ulimit;
mod umask;
mod wait;

use std::collections::HashMap;
use std::sync::LazyLock;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionControlFlow, ExecutionResult, Shell};
use futures_util::future::BoxFuture;

use super::common::{BuiltinFn, session_of};
use super::state::with_session;

/// Our builtins, each replacing the stock one of its name.
const OURS: [(&str, BuiltinFn); 24] = [
    ("echo", echo::run),
    ("cd", cd::run),
    ("pwd", pwd::run),
    ("exec", exec::run),
    ("kill", kill::run),
    ("umask", umask::run),
    ("ulimit", ulimit::run),
    ("command", command::run),
    ("suspend", suspend::run),
    ("printf", printf::run),
    ("enable", corrected::enable),
    ("compgen", corrected::compgen),
    ("shopt", corrected::shopt),
    ("hash", corrected::hash),
    ("help", corrected::help),
    ("wait", wait::run),
    ("jobs", jobs::run),
    ("declare", run_tag::declare),
    ("typeset", run_tag::typeset),
    ("export", run_tag::export),
    ("set", run_tag::set),
    ("unset", run_tag::unset),
    ("test", test::run),
    ("[", test::run),
];

/// Swaps in our `echo`, `cd`, `pwd`, `exec`, `kill`, `umask`, `ulimit`, `command`, `suspend`, `printf`, `wait`,
/// `jobs`, the corrected `enable`, `compgen`, `help`, `shopt` and `hash`, the tag-keeping
/// `declare`, `typeset`, `export`, `set` and `unset`, and `test` and `[`. Must run before anything
/// wraps builtins ([`hooks::install_builtins`](super::hooks::install_builtins)): it replaces
/// whatever the registrations of those names run.
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
/// replaces whatever a table holds for its names (see
/// [`hooks::install_builtins`](super::hooks::install_builtins)).
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

/// `operand` as `wait` and `kill` should read it: a coproc's `NAME_PID` names its job (`%N`).
/// brush stores the coproc's job id there, where bash stores its pid, and no pid is the coproc's
/// (it runs as a task of the session): read as a pid, it would name whatever process has it,
/// pid 1 for the first job.
fn coproc_as_job(shell: &Shell, operand: &str) -> Option<String> {
    let id = operand.parse::<usize>().ok()?;
    shell
        .jobs()
        .jobs
        .iter()
        .filter(|job| job.id == id)
        .filter_map(|job| job.command_line.strip_prefix("coproc "))
        .any(|name| shell.env_str(&format!("{name}_PID")).as_deref() == Some(operand))
        .then(|| format!("%{id}"))
}

/// A builtin's arguments after its name, as text.
fn operands(args: &[CommandArg]) -> Vec<String> {
    args.iter().skip(1).map(ToString::to_string).collect()
}

/// The status a builtin returns when it stops because its run was cancelled (bash: 128 +
/// SIGTERM); the run reports the cancellation, not this.
const STOPPED_STATUS: u8 = 143;

/// A cancellation point for a builtin that works for long: yields to the runtime, so the run's
/// timer fires and, once the run is cancelled, its `select!` drops the builtin there; then says
/// whether the run must stop, for a builtin that nothing drops (on a pipeline stage's thread),
/// which then returns at once — the stage ends at its next command's hook.
async fn cancellation_point(shell: &Shell) -> bool {
    tokio::task::yield_now().await;
    // A shell that is not a session's (a test's) is never stopped; a session that is gone is.
    let tag = shell.env_str(shellwright_proc::RUN_TAG_VARIABLE);
    session_of(shell)
        .is_some_and(|id| with_session(id, |s| s.must_stop(tag.as_deref())).unwrap_or(true))
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

/// Prints `text` and a newline on the builtin's stdout, as one write (the fast `echo` and `pwd`).
fn print_line(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    text: String,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let mut line = text;
        line.push('\n');
        let mut stdout = ctx.stdout();
        std::io::Write::write_all(&mut stdout, line.as_bytes())?;
        std::io::Write::flush(&mut stdout)?;
        Ok(ExecutionResult::success())
    })
}

/// Builtin arguments as brush passes them, from string literals.
#[cfg(test)]
pub(crate) fn test_args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// What `script` prints in a shell with the stock builtins, then with ours installed.
#[cfg(test)]
pub(crate) async fn stock_and_ours(script: &str) -> (String, String) {
    let mut outputs = Vec::new();
    for ours in [false, true] {
        let mut builtins = brush_builtins::default_builtins(brush_builtins::BuiltinSet::BashMode);
        if ours {
            install(&mut builtins);
        }
        let mut shell = brush_core::Shell::builder()
            .do_not_inherit_env(true)
            .profile(brush_core::ProfileLoadBehavior::Skip)
            .rc(brush_core::RcLoadBehavior::Skip)
            .builtins(builtins)
            .build()
            .await
            .expect("shell");
        let file = corrected::memory_file().expect("memory file");
        let mut params = shell.default_exec_params();
        params.set_fd(
            brush_core::openfiles::OpenFiles::STDOUT_FD,
            brush_core::openfiles::OpenFile::File(file.try_clone().expect("dup")),
        );
        shell
            .run_string(script, &brush_core::SourceInfo::default(), &params)
            .await
            .expect("run");
        outputs.push(
            String::from_utf8(corrected::read_back(file).expect("read back")).expect("utf-8"),
        );
    }
    let ours = outputs.pop().expect("ours");
    (outputs.pop().expect("stock"), ours)
}
