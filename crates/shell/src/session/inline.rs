//! The in-place path: a run made only of builtins that cannot block, spawn, loop or touch a
//! filesystem that may hang ([`qualify`](super::qualify) says which), done on the caller's thread — Node's JS
//! thread — with its transcript collected in memory, without the session's thread, the output
//! pipe or our DEBUG hook. Nothing can cancel it once started, so only work bounded by the
//! command's text qualifies.

use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use brush_core::Shell;
use brush_core::traps::TrapSignal;
use shellwright_io::Utf8Decoder;
use shellwright_proc::processless_run_tag;

use brush_parser::ast;

use super::qualify::{self, InlineProgram, Transcript};
use super::{RunOutcome, RunRequest, Session, is_alias_or_function};
use crate::error::ShellError;
use crate::limits;
use crate::output::{ChunkHandler, StartHandler};
use crate::path_walk;

impl Session {
    /// The program of the request's command when this session may run it in place ([`inline`]):
    /// it qualifies by its text and shape, it has no `cwd` (entering one is a filesystem call,
    /// which can hang on a stalled mount), the session runs commands alone
    /// ([`runs_commands_alone`](Self::runs_commands_alone)), `set -u` (which can end the session)
    /// is off, no alias or function shadows its builtins, and no word of it can glob unless
    /// noglob (`set -f`) is on — pathname expansion reads directories, which can hang on a
    /// stalled mount as a `cwd` can, and no builtin of the allow-list turns noglob off; a `cd` or
    /// `pwd` in it must not resolve links (`set -P` off), and `cd`'s directory must be one whose
    /// lookup cannot hang ([`path_walk`]). The calling thread must have
    /// [`limits::INLINE_STACK_NEEDED`] of stack left.
    pub fn inline_program(&mut self, request: &RunRequest) -> Option<InlineProgram> {
        if !qualify::qualifies_by_text(&request.command)
            || !self.runs_commands_alone()
            || request.cwd.is_some()
            || self.shell.options().treat_unset_variables_as_error
            || limits::remaining_stack().is_none_or(|left| left < limits::INLINE_STACK_NEEDED)
        {
            return None;
        }
        let parser_options = self.shell.parser_options();
        let parsed = self.parses.get(&request.command, &parser_options).ok()?;
        let names = parsed.inline_builtins.as_ref()?;
        let shell = &self.shell;
        if parsed.may_glob && !shell.options().disable_filename_globbing {
            return None;
        }
        let shadowed = |name: &String| {
            is_alias_or_function(shell, name)
                || shell.builtins().get(name).is_none_or(|b| b.disabled)
        };
        if names.iter().any(shadowed) || !path_builtins_cannot_hang(shell, names, &parsed.program) {
            return None;
        }
        Some(InlineProgram {
            program: parsed.program.clone(),
            expands_no_pathnames: parsed.expands_no_pathnames,
        })
    }

    /// Runs `program` (from [`inline_program`](Self::inline_program)) on the calling thread,
    /// driving it with the session's `runtime` (brush may spawn on it), by the steps of
    /// [`run`](Self::run) — `on_start`, the run's environment and tag, `bash -c` mode — but
    /// without our DEBUG hook, and with its transcript (stdout and stderr) collected in memory
    /// and passed to `on_chunk` in one piece when it ends. Nothing it runs can wait, so it takes microseconds;
    /// nothing can cancel it either (its caller's thread is busy running it). Should a run end
    /// the session all the same, the outcome says so and the caller drops the session.
    pub fn run_inline(
        &mut self,
        runtime: &tokio::runtime::Handle,
        inline: InlineProgram,
        request: &RunRequest,
        on_start: Option<StartHandler>,
        mut on_chunk: ChunkHandler,
    ) -> Result<RunOutcome, ShellError> {
        let started = Instant::now();
        self.enter_cwd(request, on_start)?;
        // It starts no process, so it needs no scope to find them by: only its tag.
        let tag = processless_run_tag();
        self.enter_command_scope(&request.env, &tag)?;
        let transcript = Transcript::default();
        let idle_stdio = self.lend_stdio(&transcript);
        let params = self.shell.default_exec_params();
        self.brush.begin_run(request.cancel.clone(), &tag, None);
        // Our DEBUG trap parks a cancelled run, yields to timers and checks the nesting limits:
        // nothing a run in place can need (no user trap is set, or it would not be in place). It
        // costs brush a parse and an expansion of its command before every simple command, a
        // quarter of such a run: it is lifted for the run. brush sets `BASH_COMMAND` without it.
        let debug_trap = self.shell.traps().get_handler(TrapSignal::Debug).cloned();
        self.shell.traps_mut().remove_handlers(TrapSignal::Debug);
        // brush asks its pattern parser whether each word is a glob, a tenth of such a run; where
        // no word can be one, noglob (`set -f`) skips the question, unseen.
        let globbing = &mut self.shell.options_mut().disable_filename_globbing;
        let noglob = *globbing;
        *globbing |= inline.expands_no_pathnames;
        let program = Ok(inline.program);
        // Nothing can stop it (see above), and without our DEBUG trap no nesting limit is checked:
        // no stop is watched, which spared registering and dropping two waiters per run.
        let ended = drive(
            runtime,
            self.execute_parsed(&request.command, program, &params, None),
        );
        self.shell.options_mut().disable_filename_globbing = noglob;
        if let Some(trap) = debug_trap {
            self.shell.traps_mut().register_handler(
                TrapSignal::Debug,
                trap.command,
                trap.source_info,
            );
        }
        self.brush.end_run();
        let outcome = self.conclude(ended);
        self.restore_stdio(idle_stdio);
        let mut decoder = Utf8Decoder::new();
        let mut text = decoder.decode_owned(transcript.take_written());
        text.push_str(&decoder.finish());
        if !text.is_empty() {
            on_chunk(text.into());
        }
        outcome.map(|outcome| outcome.took(started.elapsed()))
    }
}

/// Whether the `cd` and `pwd` among `names` touch no mount that may hang: `pwd` prints the
/// directory the shell keeps, unless `set -P` has it resolve links, which `cd` then does too;
/// `cd` stats its directory, taken from the directory the run starts in.
fn path_builtins_cannot_hang(shell: &Shell, names: &[String], program: &ast::Program) -> bool {
    if !names.iter().any(|name| name == "cd" || name == "pwd") {
        return true;
    }
    if shell.options().do_not_resolve_symlinks_when_changing_dir {
        return false;
    }
    qualify::cd_target(program)
        .is_none_or(|target| path_walk::lookup_cannot_hang(&shell.working_dir().join(target)))
}

/// Drives `future` to its end on the calling thread, in `runtime`'s context: polled once first —
/// a run in place is done in that one poll unless brush waited on something — and by the
/// runtime's `block_on` only if not done, which costs more than the run when it is not needed.
fn drive<F: Future>(runtime: &tokio::runtime::Handle, future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    {
        let _context = runtime.enter();
        let mut once = Context::from_waker(Waker::noop());
        if let Poll::Ready(output) = future.as_mut().poll(&mut once) {
            return output;
        }
    }
    // Polled again at once, with a waker that works: nothing is missed.
    runtime.block_on(future)
}
