//! Cancellation hooks inside the brush interpreter, and the end of a stopped run's processes.
//!
//! brush-core 0.5 never yields inside a loop of builtins, so dropping its future cannot stop
//! `while :; do :; done`. It does run the DEBUG trap before every simple command, loops included,
//! and it accepts custom builtins. So every session's DEBUG trap is our builtin
//! `__shellwright_debug_trap` (its session named in the trap's text), which yields to the runtime
//! now and then so timers keep firing, and stops what must stop: once a run is stopped (its token
//! fired, or it was stopped before and a job of it still runs), every shell carrying that run's
//! tag — its foreground, its background jobs, substitutions and subshells — diverts its next command so that it unwinds
//! through brush's own frames (see [`unwind`]) and the session lives on; a pipeline stage's thread
//! unwinds up to its stage. Once the session is ending, every command of it, in any task, parks
//! for good, and the session's runtime then drops them (see [`worker`](crate::worker)). The same
//! hook refuses a function call nested past `FUNCNEST` ([`funcnest`]), delivers signals the run
//! sent its own shell ([`signals`]), and checks the stack and descriptor [`limits`] and parks the
//! run that passed one.
//!
//! The user's own DEBUG trap keeps working: the `trap` builtin is wrapped so that it reads and
//! writes the user's handler (kept in the session's record, see [`state`](super::state)), and our builtin runs that handler where bash would —
//! at top level always, inside functions and subshells only when the user asked for `set -T`.
//! We force brush's functrace on so that loops inside functions and subshells are cancellable
//! too; the `set` and `shopt` builtins are wrapped so the user still sees and sets their own value.

use std::collections::HashMap;
use std::io::Write;

use brush_core::ShellFd;
use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::openfiles::OpenFiles;
use brush_core::traps::{TrapHandler, TrapSignal};
use brush_core::{
    ExecutionContext, ExecutionParameters, ExecutionResult, Shell, ShellState, ShellValue,
    ShellVariable,
};
use futures_util::future::BoxFuture;
use shellwright_proc::{CancelReason, CancelToken, RUN_TAG_VARIABLE, RunRoots, RunScope};

use super::common::{
    BuiltinFn, DEBUG_TRAP_BUILTIN, XTRACEFD_ASIDE, is_internal, parse_trap_key, restore_xtracefd,
    session_of_traps, set_bash_command, trap_command, trap_key, trap_key_of, user_line,
};
use super::spawn_policy::{self, RunLimits};
use super::state::{SessionRecord, with_session};
use super::{bodies, builtins, funcnest, job_table, jobs, signals, stages, unwind};
use crate::limits;

/// Yield to the runtime once per this many simple commands, so a builtin-only loop cannot starve
/// the timers and other tasks sharing its thread.
const YIELD_EVERY: u64 = 64;

/// Installs the DEBUG trap and forces functrace in a new shell of session `id`, and makes
/// `$SHELLOPTS` show the user's functrace.
pub(crate) fn install(shell: &mut Shell, id: u64) {
    install_trap(shell, &trap_key(id, &RunLimits::HOST));
    shell
        .options_mut()
        .shell_functions_inherit_debug_and_return_traps = true;
    let mut shellopts = ShellVariable::new(ShellValue::Dynamic {
        getter: user_shellopts,
        setter: |_| (),
    });
    shellopts.set_readonly();
    let _ = shell.env_mut().set_global("SHELLOPTS", shellopts);
}

/// Adds our DEBUG-trap builtin and wraps `trap`, `set` and `shopt`. The wrappers call the builtin
/// [`builtins::base`] names (stock, or corrected by [`builtins`]), not whatever the table held;
/// but [`builtins::install`] replaces `shopt`, so it must run first — the test
/// `shopt_shows_the_users_functrace_with_bash_padding` fails otherwise.
pub(crate) fn install_builtins(table: &mut HashMap<String, Registration<DefaultShellExtensions>>) {
    let wrappers: [(&str, BuiltinFn); 3] = [
        ("trap", wrapped_trap),
        ("set", wrapped_set),
        ("shopt", wrapped_shopt),
    ];
    for (name, wrapper) in wrappers {
        if let Some(reg) = table.get_mut(name) {
            reg.execute_func = wrapper;
        }
    }
    builtins::add_internal(table, DEBUG_TRAP_BUILTIN, debug_trap);
}

/// Installs our DEBUG trap with `key` (the session and the shell's limits, see [`trap_key`]),
/// worded for the shell's current `set -x` state.
///
/// brush sets `$BASH_COMMAND` for every simple command, the trap's own included, and traces it
/// under `set -x`; the command hides both. `"$BASH_COMMAND"` is expanded before brush replaces it,
/// so the builtin can put the user's command back; `"$_"` comes last because brush sets `$_` to a
/// command's last argument, so the trap leaves it as the user's previous command had it. Under
/// `set -x` the trap's own trace line goes to `/dev/null` (`255>&2 2>/dev/null`); the builtin
/// writes and runs the user's trap with the saved stderr. A trace that `BASH_XTRACEFD` sends
/// elsewhere is sent to stderr too, by [`XTRACEFD_ASIDE`]. So the plain trap passes the builtin
/// two arguments, and the traced one three or four ([`TrapArgs`]).
fn install_trap(shell: &mut Shell, key: &str) {
    let words = if shell.options().print_commands_and_arguments {
        format!("\"$BASH_COMMAND\" {XTRACEFD_ASIDE} \"$_\" {SAVED_STDERR}>&2 2>/dev/null")
    } else {
        "\"$BASH_COMMAND\" \"$_\"".to_string()
    };
    shell.traps_mut().register_handler(
        TrapSignal::Debug,
        trap_command(key, &words),
        Default::default(),
    );
}

/// Where the traced trap command keeps its real stderr.
const SAVED_STDERR: ShellFd = 255;

/// The arguments of our DEBUG trap's builtin (after its name): the user's command, then, when
/// traced, the words of [`XTRACEFD_ASIDE`], then `$_`.
struct TrapArgs<'a> {
    command: Option<&'a CommandArg>,
    /// The words of [`XTRACEFD_ASIDE`]: `Some` only when the trap was worded for `set -x`.
    xtracefd_aside: Option<&'a [CommandArg]>,
}

impl<'a> TrapArgs<'a> {
    fn of(args: &'a [CommandArg]) -> Self {
        let command = args.get(1);
        let xtracefd_aside = args
            .get(2..args.len().saturating_sub(1))
            .filter(|words| !words.is_empty());
        Self {
            command,
            xtracefd_aside,
        }
    }
}

/// `$SHELLOPTS` as brush computes it, with `functrace` only where the user turned it on.
fn user_shellopts(shell: &dyn ShellState) -> ShellValue {
    let all = shell.options().seto_optstr();
    let user_functrace = session_of_traps(shell.traps())
        .and_then(|id| with_session(id, |s| s.user_functrace))
        .unwrap_or(true);
    if user_functrace {
        return ShellValue::String(all);
    }
    let shown: Vec<&str> = all.split(':').filter(|o| *o != "functrace").collect();
    ShellValue::String(shown.join(":"))
}

fn debug_trap(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let key = trap_key_of(ctx.shell.traps()).and_then(parse_trap_key);
        let id = key.map(|(id, _)| id);
        let words = TrapArgs::of(&args);
        let traced = words.xtracefd_aside.is_some();
        if let Some(aside) = words.xtracefd_aside {
            restore_xtracefd(ctx.shell, aside);
        }
        let Some((halt, user_trap, functrace, seen, signalled)) = id.and_then(|id| {
            with_session(id, |s| {
                s.commands_seen += 1;
                (
                    Halt::of(s),
                    s.user_debug_trap.clone(),
                    s.user_functrace,
                    s.commands_seen,
                    !s.pending_signals.is_empty(),
                )
            })
        }) else {
            // The session is gone; this is one of its tasks that has not been dropped yet.
            return park().await;
        };
        let Some(id) = id else {
            return park().await;
        };
        // The user's function definitions back in the table before anything reads it.
        bodies::restore(ctx.shell, id);
        let user_command = words.command.map(ToString::to_string).unwrap_or_default();
        match halt {
            Halt::Park => return park().await,
            Halt::IfRunStopped => {
                let tag = ctx.shell.env_str(RUN_TAG_VARIABLE);
                let stopped = with_session(id, |s| s.run_stopped(tag.as_deref())).unwrap_or(false);
                if stopped {
                    if stages::in_stage() {
                        stages::stop();
                    }
                    unwind::divert(ctx.shell, id, &user_command);
                    return Ok(ExecutionResult::success());
                }
            }
            Halt::No => {}
        }
        // Jobs started since the last command get their numbers and texts before this one can
        // list, wait for or signal them.
        job_table::name_jobs(ctx.shell);
        set_bash_command(ctx.shell, user_command.clone());
        let refusal = funcnest::refuse_too_deep_call(ctx.shell, id, &user_command);
        if let Some(message) = &refusal {
            report(&ctx, traced, message);
        }
        if let Some(exceeded) = limits::check() {
            report(&ctx, traced, &exceeded.message());
            with_session(id, |s| {
                if let Some(token) = &s.limit_token {
                    token.cancel(CancelReason::Aborted);
                }
                s.exceeded.get_or_insert(exceeded);
            });
            return park().await;
        }
        stages::stop_if_reader_gone(ctx.shell);
        if seen % YIELD_EVERY == 0 {
            tokio::task::yield_now().await;
        }
        // What the command about to run forks gets this shell's limits (see `spawn_policy`).
        let limits = key.map_or(RunLimits::HOST, |(_, limits)| limits);
        spawn_policy::set_thread_limits(limits);
        let job = jobs::job_without_pid(ctx.shell);
        spawn_policy::set_thread_job(job);
        let nested = ctx.shell.in_function() || ctx.shell.is_subshell();
        let user_trap = user_trap.filter(|_| {
            (functrace || !nested) && !user_command.split(' ').next().is_some_and(is_internal)
        });
        let traps = Traps {
            session: id,
            traced,
            signalled,
            user_trap,
        };
        let result = traps.run(ctx.shell, &ctx.params, &user_command).await;
        // The traps may have run other shells' commands on this thread (or moved on to another
        // thread while they waited).
        spawn_policy::set_thread_limits(limits);
        spawn_policy::set_thread_job(job);
        // Last, so that the traps see the user's functions too.
        if refusal.is_none() {
            bodies::swap_in_for_call(ctx.shell, id, &user_command);
        }
        result
    })
}

/// What the DEBUG hook does with the command about to run, before anything else.
enum Halt {
    /// Nothing: run it.
    No,
    /// Park it for good: the session is ending, or its EXIT trap ran out of time.
    Park,
    /// Divert it if it belongs to a stopped run (see [`unwind`]).
    IfRunStopped,
}

impl Halt {
    fn of(session: &SessionRecord) -> Self {
        let fired = session
            .run_token
            .as_ref()
            .is_some_and(CancelToken::is_cancelled);
        if session.stopping || (session.exiting && fired) {
            Self::Park
        } else if !session.exiting && session.any_run_stopped() {
            Self::IfRunStopped
        } else {
            Self::No
        }
    }
}

/// Writes `message` on the stderr of the command about to run (set aside under `set -x`).
fn report(ctx: &ExecutionContext<'_, DefaultShellExtensions>, traced: bool, message: &str) {
    let stderr = if traced {
        ctx.params.try_fd(ctx.shell, SAVED_STDERR)
    } else {
        ctx.params.try_stderr(ctx.shell)
    };
    if let Some(mut stderr) = stderr {
        let _ = stderr.write_all(message.as_bytes());
    }
}

/// The traps our hook runs before a command: those of signals queued for the session's shell
/// (see [`signals`]), then the user's DEBUG trap.
struct Traps {
    session: u64,
    traced: bool,
    signalled: bool,
    user_trap: Option<TrapHandler>,
}

impl Traps {
    async fn run(
        self,
        shell: &mut Shell,
        params: &ExecutionParameters,
        command_line: &str,
    ) -> Result<ExecutionResult, brush_core::Error> {
        if !self.signalled && self.user_trap.is_none() {
            return Ok(ExecutionResult::success());
        }
        // Traps run in a frame of their own, whose lines count from 1: `$LINENO` is the line of
        // the command about to run, as in bash.
        if let Some(line) = user_line(shell) {
            shell.increment_interactive_line_offset(line.saturating_sub(1));
        }
        if self.signalled {
            let mut params = params.clone();
            if self.traced
                && let Some(stderr) = params.try_fd(shell, SAVED_STDERR)
            {
                params.set_fd(OpenFiles::STDERR_FD, stderr);
            }
            if signals::deliver(shell, &params, self.session, command_line).await? {
                // The command does not run: no DEBUG trap for it either.
                return Ok(ExecutionResult::success());
            }
        }
        match self.user_trap {
            Some(handler) => run_user_trap(shell, params, handler, self.traced).await,
            None => Ok(ExecutionResult::success()),
        }
    }
}

/// Runs the user's DEBUG trap `handler` (with the stderr set aside under `set -x` when `traced`).
async fn run_user_trap(
    shell: &mut Shell,
    params: &ExecutionParameters,
    handler: TrapHandler,
    traced: bool,
) -> Result<ExecutionResult, brush_core::Error> {
    let command = if traced {
        format!(
            "{{ {}\n}} 2>&{SAVED_STDERR} {SAVED_STDERR}>&-",
            handler.command
        )
    } else {
        handler.command
    };
    shell
        .run_string(command, &handler.source_info, params)
        .await
}

/// Never returns. A pipeline stage's thread is unwound up to its stage (nothing else would ever
/// end it); anywhere else the run's `select!` (or the session's runtime shutting down) drops the
/// future.
async fn park() -> Result<ExecutionResult, brush_core::Error> {
    if stages::in_stage() {
        stages::stop();
    }
    std::future::pending().await
}

/// Runs a stock builtin with the user's view of the DEBUG trap and functrace in place, then
/// records what the builtin changed and puts our hooks back.
async fn with_user_view(
    name: &str,
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> Result<ExecutionResult, brush_core::Error> {
    let original = builtins::base(name);
    let ExecutionContext {
        shell,
        command_name,
        params,
    } = ctx;
    let ours = trap_key_of(shell.traps()).and_then(|key| {
        let (id, _) = parse_trap_key(key)?;
        Some((key.to_string(), id))
    });
    let Some((key, id)) = ours else {
        return builtins::run_or_fail(
            original,
            ExecutionContext {
                shell,
                command_name,
                params,
            },
            args,
        )
        .await;
    };
    let (user_trap, user_functrace) =
        with_session(id, |s| (s.user_debug_trap.clone(), s.user_functrace)).unwrap_or_default();
    set_debug_trap(shell, user_trap);
    shell
        .options_mut()
        .shell_functions_inherit_debug_and_return_traps = user_functrace;

    let result = builtins::run_or_fail(
        original,
        ExecutionContext {
            shell: &mut *shell,
            command_name,
            params,
        },
        args,
    )
    .await;

    let user_trap = shell.traps().get_handler(TrapSignal::Debug).cloned();
    let user_functrace = shell
        .options()
        .shell_functions_inherit_debug_and_return_traps;
    with_session(id, |s| {
        s.user_debug_trap = user_trap;
        s.user_functrace = user_functrace;
    });
    install_trap(shell, &key);
    shell
        .options_mut()
        .shell_functions_inherit_debug_and_return_traps = true;
    result
}

fn set_debug_trap(shell: &mut Shell, handler: Option<TrapHandler>) {
    match handler {
        Some(h) => shell
            .traps_mut()
            .register_handler(TrapSignal::Debug, h.command, h.source_info),
        None => shell.traps_mut().remove_handlers(TrapSignal::Debug),
    }
}

fn wrapped_trap(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(with_user_view("trap", ctx, args))
}

fn wrapped_set(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(with_user_view("set", ctx, args))
}

fn wrapped_shopt(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(with_user_view("shopt", ctx, args))
}

/// Terminates everything a cancelled run started: its tagged processes, the host's untagged
/// children started during the run (brush spawns commands from the host), their trees and the
/// sessions and groups they created; SIGKILL after `grace`.
pub(crate) async fn terminate_run(run: &RunScope, grace: std::time::Duration) {
    run.stop(RunRoots::HostChildren, &[], grace).await;
}
