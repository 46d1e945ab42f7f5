//! Ending a stopped run through brush's own frames, so that its session lives on.
//!
//! A run stopped by its timeout or an abort must end at once, yet the session must stay as an
//! interactive bash stays after Ctrl+C: everything the run had changed kept, no function frame or
//! local scope of it left behind. Dropping the interpreter's future would stop it, but it leaves
//! brush's call stack and scopes as they were mid-run, which no public API of brush can pop. So the
//! run is ended from the inside: our DEBUG hook runs before every simple command, and once the
//! run is stopped it diverts the command about to run — the first word of `$BASH_COMMAND`, which
//! brush resolves only after the hook — to a stand-in function of that name whose body is our
//! builtin `__shellwright_unwind`. The builtin puts back whatever the name meant and returns
//! `ExitShell`, which brush carries up through functions, loops, `eval` and `source`, leaving each
//! frame and scope as it goes; the run's foreground returns, and the session sees a stopped run
//! instead of an `exit`. A subshell, a command substitution or a background job of the run ends the
//! same way, and the next command of whoever waited for it is diverted in turn.
//!
//! A stand-in function is used rather than a builtin because functions are looked up first and
//! can be removed again (a builtin registration cannot); `ExitShell` passes a function's boundary
//! where `return` would stop. What cannot be diverted — a command run by a special builtin in POSIX
//! mode, a builtin blocked in a system call — is left to the run's grace period, after which the
//! session is dropped as before.

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::parser::ast;
use brush_core::{ExecutionContext, ExecutionControlFlow, ExecutionResult, Shell};
use brush_parser::{Parser, ParserOptions};
use futures_util::future::BoxFuture;

use super::common::UNWIND_BUILTIN;
use super::state::{Diversion, with_session};

/// The exit status a diverted command reports on its way out (bash's for a SIGINT).
const UNWIND_STATUS: u8 = 130;

/// Diverts the command that `command_line` (the `$BASH_COMMAND` brush set for it) runs next in
/// `shell`, of session `session`, to a stand-in that unwinds the run (see the module doc).
/// Returns whether it could: a command without a name, or one our hooks run, is not diverted.
pub(crate) fn divert(shell: &mut Shell, session: u64, command_line: &str) -> bool {
    let Some(name) = command_line
        .split(' ')
        .next()
        .filter(|name| !name.is_empty())
    else {
        return false;
    };
    if super::common::is_internal(name) {
        return false;
    }
    let original = shell.funcs().get(name).cloned();
    let Some(diversion) = with_session(session, |s| {
        s.next_diversion += 1;
        let id = s.next_diversion;
        s.diversions.insert(
            id,
            Diversion {
                name: name.to_string(),
                original,
            },
        );
        id
    }) else {
        return false;
    };
    match stand_in(name, session, diversion) {
        Some(definition) => {
            shell
                .funcs_mut()
                .update(name.to_string(), definition.into());
            true
        }
        None => {
            with_session(session, |s| s.diversions.remove(&diversion));
            false
        }
    }
}

/// Puts back every name the session's diversions replaced in `shell` and forgets them: a
/// diverted command that never ran (a special builtin in POSIX mode skips functions) must not
/// leave its stand-in behind.
pub(crate) fn restore_all(shell: &mut Shell, session: u64) {
    let diversions =
        with_session(session, |s| std::mem::take(&mut s.diversions)).unwrap_or_default();
    for diversion in diversions.into_values() {
        put_back(shell, diversion);
    }
}

fn put_back(shell: &mut Shell, diversion: Diversion) {
    match diversion.original {
        Some(original) => shell.funcs_mut().update(diversion.name, original),
        None => {
            shell.funcs_mut().remove(&diversion.name);
        }
    }
}

/// `name() { __shellwright_unwind <session> <diversion>; }`, parsed from a template with a name
/// the parser accepts, then renamed: the name is the user's command word, whatever it is.
fn stand_in(name: &str, session: u64, diversion: u64) -> Option<ast::FunctionDefinition> {
    let text = format!("f() {{ {UNWIND_BUILTIN} {session} {diversion}; }}");
    let program = Parser::new(text.as_bytes(), &ParserOptions::default())
        .parse_program()
        .ok()?;
    let list = program.complete_commands.into_iter().next()?;
    let item = list.0.into_iter().next()?;
    match item.0.first.seq.into_iter().next()? {
        ast::Command::Function(mut definition) => {
            definition.fname.value = name.to_string();
            Some(definition)
        }
        _ => None,
    }
}

/// `__shellwright_unwind <session> <diversion>`: puts back what the diverted name meant and ends
/// everything up to the run's top with `ExitShell`.
pub(crate) fn run_unwind(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let number = |i: usize| args.get(i).and_then(|a| a.to_string().parse::<u64>().ok());
        if let (Some(session), Some(id)) = (number(1), number(2))
            && let Some(diversion) = with_session(session, |s| s.diversions.remove(&id)).flatten()
        {
            put_back(ctx.shell, diversion);
        }
        let mut result = ExecutionResult::new(UNWIND_STATUS);
        result.next_control_flow = ExecutionControlFlow::ExitShell;
        Ok(result)
    })
}
