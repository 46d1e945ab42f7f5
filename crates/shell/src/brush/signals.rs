//! Signals a run sends its own shell (`kill -USR1 $$`), acted on as bash acts on them.
//!
//! `$$` is the host's pid, and our `kill` never signals the host (see `builtins::kill`): a signal
//! aimed at the shell is acted on here instead — its trap runs, an ignored one does nothing, a
//! fatal one ends the shell with 128 + its number (SIGKILL without the EXIT trap). Where and when
//! depends on who sent it:
//!
//! - the session's own shell (`f() { kill -USR1 $$; }`): at once, inside `kill`, which then ends
//!   as the trap did — its `return 5` returns from `f`, its `exit` ends the shell;
//! - a copy of the shell — a subshell, a pipeline stage, a command substitution, a background
//!   job, which brush runs in the host process as copies of the shell: bash's signal reaches the
//!   shell process, whose trap runs when its current command is done. So the signal is queued for
//!   the session's own shell, whose DEBUG hook takes it before its next builtin command
//!   ([`deliver`]). A trap that ends with `return`, `exit`, `break` or `continue` then ends that
//!   command so instead of running it: the builtin's function is swapped, for that one call, for
//!   one that puts it back and returns the trap's result ([`resume`]) — brush looks the builtin up
//!   after the hook — so `return 5` returns from the function the loop ran in. Before a function
//!   call or an external program the signal waits: the function's first command comes next, and
//!   an external program leaves the shell nothing to swap.
//!
//! `wait` in the session's own shell returns 128 + the number as soon as a signal that does
//! something arrives (a trapped one stays queued, for its trap to run before the next command),
//! as bash's `wait` does ([`WaitInterruptions`]).

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::traps::{TrapHandler, TrapHandlerConfig, TrapSignal};
use brush_core::{
    ExecutionContext, ExecutionControlFlow, ExecutionParameters, ExecutionResult, Shell,
};
use futures_util::future::BoxFuture;

use super::common::{is_internal, session_of};
use super::state::{Ending, ReplacedBuiltin, with_session, with_shell};

/// What a signal does to a shell.
enum Action {
    /// Runs this trap.
    Trap(TrapHandler),
    Nothing,
    /// Ends the shell with 128 + the number.
    End,
}

/// What `signal` does to a shell with the traps `traps`.
fn action(traps: &TrapHandlerConfig, signal: i32) -> Action {
    // Signal 0 only asks whether the process exists (kill(2)); `trap`'s 0 is the EXIT trap.
    if signal == 0 {
        return Action::Nothing;
    }
    if signal == libc::SIGKILL {
        return Action::End;
    }
    let trap = TrapSignal::try_from(signal)
        .ok()
        .and_then(|s| traps.get_handler(s));
    match trap {
        Some(handler) if handler.command.trim().is_empty() => Action::Nothing,
        Some(handler) => Action::Trap(handler.clone()),
        None if is_fatal_by_default(signal) => Action::End,
        None => Action::Nothing,
    }
}

/// Acts on `signal` in `shell`: runs its trap (and returns how the trap ended when it did not end
/// normally), does nothing, or returns the end of the shell.
pub(crate) async fn act_on(
    shell: &mut Shell,
    params: &ExecutionParameters,
    signal: i32,
) -> Result<ExecutionResult, brush_core::Error> {
    match action(shell.traps(), signal) {
        Action::Trap(handler) => {
            let saved = shell.last_exit_status();
            let result = shell
                .run_string(handler.command, &handler.source_info, params)
                .await?;
            if !matches!(result.next_control_flow, ExecutionControlFlow::Normal) {
                return Ok(result);
            }
            shell.set_last_exit_status(saved);
            Ok(ExecutionResult::success())
        }
        Action::Nothing => Ok(ExecutionResult::success()),
        Action::End => Ok(ended_by(session_of(shell), signal)),
    }
}

/// The result that ends the shell of session `session` as `signal` kills a process (SIGKILL
/// leaves no EXIT trap).
fn ended_by(session: Option<u64>, signal: i32) -> ExecutionResult {
    if let Some(session) = session.filter(|_| signal == libc::SIGKILL) {
        with_session(session, |s| s.ending = Some(Ending::Killed));
    }
    let mut result = ExecutionResult::new(u8::try_from(128 + signal).unwrap_or(u8::MAX));
    result.next_control_flow = ExecutionControlFlow::ExitShell;
    result
}

/// What a signal with no trap does to a shell: end it, or nothing.
fn is_fatal_by_default(signal: i32) -> bool {
    !matches!(
        signal,
        libc::SIGCHLD
            | libc::SIGCONT
            | libc::SIGURG
            | libc::SIGWINCH
            // Stopping is for job control; a non-interactive session just goes on.
            | libc::SIGSTOP
            | libc::SIGTSTP
            | libc::SIGTTIN
            | libc::SIGTTOU
    )
}

/// Queues `signal` for the session's own shell, sent from `shell`, a copy of it; false when
/// `shell` belongs to no session.
pub(crate) fn queue(shell: &Shell, signal: i32) -> bool {
    with_shell(shell, |s| {
        s.pending_signals.push_back(signal);
        s.signal_arrived.notify_waiters();
    })
    .is_some()
}

/// Before `command_line` runs in the session's own shell `shell` (our DEBUG hook): acts on the
/// queued signals when the command is a builtin. Returns true when a trap ended so that the
/// command must not run: it was made to end as the trap did.
pub(crate) async fn deliver(
    shell: &mut Shell,
    params: &ExecutionParameters,
    session: u64,
    command_line: &str,
) -> Result<bool, brush_core::Error> {
    let name = command_line.split(' ').next().unwrap_or_default();
    if shell.is_subshell() || !runs_builtin(shell, name) {
        return Ok(false);
    }
    while let Some(signal) = with_session(session, |s| s.pending_signals.pop_front()).flatten() {
        let result = act_on(shell, params, signal).await?;
        if !matches!(result.next_control_flow, ExecutionControlFlow::Normal) {
            replace_once(shell, session, name, &result);
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `name` runs one of the user's builtins (not a function, not one of ours).
fn runs_builtin(shell: &Shell, name: &str) -> bool {
    let Some(builtin) = shell.builtins().get(name).filter(|b| !b.disabled) else {
        return false;
    };
    let special_first = shell.options().posix_mode && builtin.special_builtin;
    !is_internal(name) && (special_first || shell.funcs().get(name).is_none())
}

/// Makes the builtin `name` end as `result` says the next time it runs, and then run as before.
fn replace_once(shell: &mut Shell, session: u64, name: &str, result: &ExecutionResult) {
    let Some(registration) = shell.builtin_mut(name) else {
        return;
    };
    let replaced = ReplacedBuiltin {
        name: name.to_string(),
        function: registration.execute_func,
        exit_code: result.exit_code,
        flow: result.next_control_flow,
    };
    registration.execute_func = resume;
    with_session(session, |s| s.replaced_builtin = Some(replaced));
}

/// A builtin [`replace_once`] replaced: puts its function back and ends as the trap did.
fn resume(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    _args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let replaced = with_shell(ctx.shell, |s| s.replaced_builtin.take()).flatten();
        let Some(replaced) = replaced else {
            return Ok(ExecutionResult::success());
        };
        if let Some(registration) = ctx.shell.builtin_mut(&replaced.name) {
            registration.execute_func = replaced.function;
        }
        Ok(ExecutionResult {
            next_control_flow: replaced.flow,
            exit_code: replaced.exit_code,
        })
    })
}

/// What ends a `wait` of the session's own shell early: a signal sent to it that does
/// something.
pub(crate) struct WaitInterruptions {
    session: u64,
    /// The shell's traps as the wait started (nothing the shell runs can change them meanwhile).
    traps: TrapHandlerConfig,
}

impl WaitInterruptions {
    /// The interruptions of a `wait` in `shell`; none in a copy of the shell (a signal to `$$`
    /// interrupts only the shell's own `wait`).
    pub(crate) fn of(shell: &Shell) -> Option<Self> {
        let session = session_of(shell).filter(|_| !shell.is_subshell())?;
        Some(Self {
            session,
            traps: shell.traps().clone(),
        })
    }

    /// How the `wait` ends once such a signal arrives: with 128 + its number when it is trapped
    /// (it stays queued, for its trap to run before the next command), with the end of the shell
    /// when it is fatal. A signal that does nothing is taken and the wait goes on.
    pub(crate) async fn next(&self) -> ExecutionResult {
        loop {
            let signal = arrival(self.session).await;
            let action = action(&self.traps, signal);
            if matches!(action, Action::Trap(_)) {
                return ExecutionResult::new(u8::try_from(128 + signal).unwrap_or(u8::MAX));
            }
            with_session(self.session, |s| s.pending_signals.pop_front());
            if let Action::End = action {
                return ended_by(Some(self.session), signal);
            }
        }
    }
}

/// The first signal queued for session `session`, once there is one (it stays queued).
async fn arrival(session: u64) -> i32 {
    loop {
        let Some(arrived) = with_session(session, |s| s.signal_arrived.clone()) else {
            return std::future::pending().await;
        };
        let notified = arrived.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(signal) =
            with_session(session, |s| s.pending_signals.front().copied()).flatten()
        {
            return signal;
        }
        notified.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(traps: &TrapHandlerConfig, signal: i32) -> &'static str {
        match action(traps, signal) {
            Action::Trap(_) => "trap",
            Action::Nothing => "nothing",
            Action::End => "end",
        }
    }

    #[test]
    fn a_signal_runs_its_trap_does_nothing_or_ends_the_shell() {
        let mut traps = TrapHandlerConfig::default();
        assert_eq!(kind(&traps, libc::SIGTERM), "end");
        assert_eq!(kind(&traps, libc::SIGUSR1), "end");
        assert_eq!(kind(&traps, libc::SIGCHLD), "nothing");
        assert_eq!(kind(&traps, libc::SIGWINCH), "nothing");
        let usr1 = TrapSignal::try_from(libc::SIGUSR1).expect("USR1");
        let term = TrapSignal::try_from(libc::SIGTERM).expect("TERM");
        let kill = TrapSignal::try_from(libc::SIGKILL).expect("KILL");
        traps.register_handler(usr1, "echo got".to_string(), Default::default());
        traps.register_handler(term, String::new(), Default::default());
        traps.register_handler(kill, "echo never".to_string(), Default::default());
        assert_eq!(kind(&traps, libc::SIGUSR1), "trap");
        assert_eq!(kind(&traps, libc::SIGTERM), "nothing");
        assert_eq!(kind(&traps, libc::SIGKILL), "end");
    }

    #[test]
    fn signal_zero_is_only_a_question() {
        let mut traps = TrapHandlerConfig::default();
        assert_eq!(kind(&traps, 0), "nothing");
        traps.register_handler(TrapSignal::Exit, "echo bye".to_string(), Default::default());
        assert_eq!(kind(&traps, 0), "nothing");
    }
}
