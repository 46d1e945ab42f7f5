//! Pipeline stages that run at the same time, as bash's do.
//!
//! bash runs every stage of `a | b | c` in its own process, all at once. brush-core 0.5 runs a
//! stage that is a builtin on a blocking thread of its own, but runs a stage that is a compound
//! command (`for`, `while`, `{ … }`, `( … )`, …) or a shell function to completion on the
//! thread driving the pipeline before it starts the next stage. So
//! `for i in {1..20000}; do echo x; done | while read -r l; do :; done` fills the pipe, blocks in
//! `write(2)` and never returns, and nothing can stop it: the run's timeout is a future on the
//! very thread that is blocked.
//!
//! We parse each run's command ourselves, so before running it every stage but the last of every
//! pipeline (function bodies and process substitutions included) is replaced by a call to our
//! builtin `__shellwright_stage <session> <n>`, which brush runs on a blocking thread like any
//! builtin stage; the builtin runs the original command there, in the stage's own copy of the
//! shell, and returns its status. The original commands are kept per session, looked up by their
//! text so a command run again reuses its entry. Code brush parses itself (`eval` strings,
//! sourced files, command substitutions, traps) keeps brush's behaviour. The same walk makes
//! the run's `$-` show the user's flags and `$!` the last job's process, keeps brace sequences
//! brush cannot expand as written (see [`words`]), and refuses redirections to the host's
//! terminal (see [`tty`]). A function definition is rewritten in a copy, kept by the text of the
//! user's: brush defines the user's (which `type`, `declare -f` and an exported function show),
//! and each call runs the copy (see [`bodies`](super::bodies)).
//!
//! The stage's thread gets the session's umask, so what the stage creates gets it as the run's
//! own commands do. The call is invisible: its own trace line (`set -x`) goes to `/dev/null`
//! (`255>&2 2>/dev/null` around the call, undone around the original command; `BASH_XTRACEFD` set aside by
//! [`XTRACEFD_ASIDE`]), and the DEBUG hook does not show it to the user's DEBUG trap.
//!
//! A stage ends early, as a bash subshell would be killed, in two cases, both found by the DEBUG
//! hook before a command of the stage starts: when the run is cancelled or the session is ending
//! (nothing else could stop a thread of the blocking pool; one that parked forever would be
//! leaked), and when a command failed with status 141 after the stage's reader went away (bash's
//! stage dies of `SIGPIPE` on its write; ours gets `EPIPE`, which brush makes 141, so
//! `while :; do echo x; done | head -1` would loop forever). The hook then unwinds the stage's
//! thread up to the builtin with [`StageStopped`], which drops everything the stage held — its
//! pipe ends first, so its neighbours see end of file.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use brush_core::builtins::Registration;
use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::openfiles::OpenFile;
use brush_core::parser::ast;
use brush_core::{ExecutionContext, ExecutionParameters, ExecutionResult, Shell};
use brush_parser::{Parser, ParserOptions};
use futures_util::future::BoxFuture;
use shellwright_io::lock;
use shellwright_io::poll::{PollFd, poll};

use super::common::{
    JOB_BUILTIN, JOB_RECORD_BUILTIN, STAGE_BUILTIN, XTRACEFD_ASIDE, restore_xtracefd,
};
use super::{builtins, devfd, isolation, job_table, state, tty, words};

/// The file descriptor that carries the stage's stderr past its own call's trace line.
const SAVED_STDERR_FD: &str = "255";
const SAVED_STDERR_FD_NUMBER: brush_core::ShellFd = 255;

/// Exit status of a stage stopped because its reader went away (bash: 128 + SIGPIPE).
const BROKEN_PIPE_STATUS: u8 = 141;
/// Exit status of a stage stopped by a cancellation (bash: 128 + SIGTERM); never seen by the
/// caller, whose run reports the cancellation instead.
const STOPPED_STATUS: u8 = 143;

/// The unwind payload that ends a stage's thread (see the module docs).
pub(crate) struct StageStopped(u8);

/// The original commands of a session's stages, and its functions whose bodies have stages.
#[derive(Default)]
struct SessionStages {
    by_text: HashMap<String, usize>,
    commands: Vec<Arc<ast::Command>>,
    /// Each rewritten function definition, by the text of the user's: the user's is the one
    /// defined (and shown, exported), the rewritten one runs (see `bodies`).
    functions: HashMap<String, Arc<ast::FunctionDefinition>>,
}

static STAGES: LazyLock<Mutex<HashMap<u64, SessionStages>>> = LazyLock::new(Mutex::default);

fn stages() -> std::sync::MutexGuard<'static, HashMap<u64, SessionStages>> {
    lock(&STAGES)
}

/// Forgets a session's stages (when the session ends).
pub(crate) fn forget(session: u64) {
    stages().remove(&session);
    job_table::forget_written(session);
}

/// The rewritten form of the function definition whose text is `definition`, if it has one.
pub(crate) fn rewritten_function(
    session: u64,
    definition: &str,
) -> Option<Arc<ast::FunctionDefinition>> {
    stages().get(&session)?.functions.get(definition).cloned()
}

/// The calls a stage and a background job are replaced by, and the brace group either runs in:
/// parsed once from text, so they are exactly what the parser would build.
struct Templates {
    call: ast::SimpleCommand,
    job_call: ast::SimpleCommand,
    job_record_call: ast::SimpleCommand,
    inner: ast::Command,
}

static TEMPLATES: LazyLock<Option<Templates>> = LazyLock::new(|| {
    let call = |builtin: &str| match first_command(&format!(
        "{builtin} 0 0 {XTRACEFD_ASIDE} {SAVED_STDERR_FD}>&2 2>/dev/null"
    ))? {
        ast::Command::Simple(call) => Some(call),
        _ => None,
    };
    let inner = first_command(&format!(
        "{{ :; }} 2>&{SAVED_STDERR_FD} {SAVED_STDERR_FD}>&-"
    ))?;
    Some(Templates {
        call: call(STAGE_BUILTIN)?,
        job_call: call(JOB_BUILTIN)?,
        job_record_call: call(JOB_RECORD_BUILTIN)?,
        inner,
    })
});

fn first_command(text: &str) -> Option<ast::Command> {
    let program = Parser::new(text.as_bytes(), &ParserOptions::default())
        .parse_program()
        .ok()?;
    let list = program.complete_commands.into_iter().next()?;
    let item = list.0.into_iter().next()?;
    item.0.first.seq.into_iter().next()
}

/// Replaces every stage but the last of every pipeline in `program` (parsed from `source`) by a
/// call to the stage builtin of `session`, and every background job by the calls that record and
/// run it (see `jobs`).
pub(crate) fn run_concurrently(program: &mut ast::Program, source: &str, session: u64) {
    let Some(templates) = TEMPLATES.as_ref() else {
        return;
    };
    let mut all = stages();
    let mut rewriter = Rewriter {
        session,
        source,
        templates,
        stages: all.entry(session).or_default(),
    };
    for list in &mut program.complete_commands {
        rewriter.list(list);
    }
}

struct Rewriter<'a> {
    session: u64,
    source: &'a str,
    templates: &'a Templates,
    stages: &'a mut SessionStages,
}

impl Rewriter<'_> {
    fn list(&mut self, list: &mut ast::CompoundList) {
        let items = std::mem::take(&mut list.0);
        for ast::CompoundListItem(mut and_or, separator) in items {
            let is_job = matches!(separator, ast::SeparatorOperator::Async);
            let written = is_job.then(|| self.written(&and_or));
            self.pipeline(&mut and_or.first);
            for next in &mut and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
            match written {
                // `X &` becomes `<record the job>; <run X as a job> &`: the record is made by the
                // shell that starts the job, in the order jobs start (see `jobs`).
                Some(written) => {
                    let [record, job] = self.job_calls_for(and_or, written);
                    list.0.push(ast::CompoundListItem(
                        simple_list(record),
                        ast::SeparatorOperator::Sequence,
                    ));
                    list.0
                        .push(ast::CompoundListItem(simple_list(job), separator));
                }
                None => list.0.push(ast::CompoundListItem(and_or, separator)),
            }
        }
    }

    /// `list` as the user wrote it: its text in the source (`jobs` shows it), or brush's
    /// rendering of it where the parser kept no location.
    fn written(&self, list: &ast::AndOrList) -> String {
        use brush_parser::ast::SourceLocation as _;
        list.location()
            .map(|span| {
                let text: String = self
                    .source
                    .chars()
                    .skip(span.start.index)
                    .take(span.length())
                    .collect();
                text.trim().to_string()
            })
            .filter(|text| !text.is_empty())
            .unwrap_or_else(|| list.to_string())
    }

    fn pipeline(&mut self, pipeline: &mut ast::Pipeline) {
        let stages = pipeline.seq.len();
        for (position, command) in pipeline.seq.iter_mut().enumerate() {
            self.command(command);
            if position + 1 < stages {
                let call = ast::Command::Simple(self.call_for(command.clone()));
                *command = call;
            }
        }
    }

    /// Registers `original` (its nested pipelines already rewritten) and returns the call that
    /// runs it as a stage.
    fn call_for(&mut self, original: ast::Command) -> ast::SimpleCommand {
        let index = self.register(ast::AndOrList {
            first: ast::Pipeline {
                timed: None,
                bang: false,
                seq: vec![original],
            },
            additional: Vec::new(),
        });
        self.call(&self.templates.call, index)
    }

    /// Registers `original`, a list run with `&` (its pipelines already rewritten; `written`
    /// before that), and returns the calls that record it and run it as a background job (see
    /// `jobs`).
    fn job_calls_for(
        &mut self,
        original: ast::AndOrList,
        written: String,
    ) -> [ast::SimpleCommand; 2] {
        let index = self.register(original);
        job_table::remember_written(self.session, index, written);
        [
            self.call(&self.templates.job_record_call, index),
            self.call(&self.templates.job_call, index),
        ]
    }

    /// Registers `original` in the brace group a stage or a job runs in, once per text.
    fn register(&mut self, original: ast::AndOrList) -> usize {
        let text = original.to_string();
        if let Some(&index) = self.stages.by_text.get(&text) {
            return index;
        }
        let mut inner = self.templates.inner.clone();
        if let ast::Command::Compound(ast::CompoundCommand::BraceGroup(group), _) = &mut inner
            && let Some(item) = group.list.0.first_mut()
        {
            item.0 = original;
        }
        self.stages.commands.push(Arc::new(inner));
        self.stages
            .by_text
            .insert(text, self.stages.commands.len() - 1);
        self.stages.commands.len() - 1
    }

    /// `template` (a stage's or a job's call) naming this session and the registered command
    /// `index`.
    fn call(&self, template: &ast::SimpleCommand, index: usize) -> ast::SimpleCommand {
        let mut call = template.clone();
        let mut words = call
            .suffix
            .iter_mut()
            .flat_map(|suffix| suffix.0.iter_mut())
            .filter_map(|item| match item {
                ast::CommandPrefixOrSuffixItem::Word(word) => Some(&mut word.value),
                _ => None,
            });
        if let (Some(session), Some(slot)) = (words.next(), words.next()) {
            *session = self.session.to_string();
            *slot = index.to_string();
        }
        call
    }

    fn command(&mut self, command: &mut ast::Command) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound);
                if let Some(redirects) = redirects {
                    self.redirect_list(&mut redirects.0);
                }
            }
            ast::Command::Function(function) => {
                // The user's definition stays in the program; the rewritten one is kept aside.
                let mut rewritten = function.clone();
                self.compound(&mut rewritten.body.0);
                if let Some(redirects) = &mut rewritten.body.1 {
                    self.redirect_list(&mut redirects.0);
                }
                let original = function.to_string();
                if rewritten.to_string() != original {
                    self.stages.functions.insert(original, Arc::new(rewritten));
                }
            }
            ast::Command::ExtendedTest(..) => {}
        }
    }

    fn compound(&mut self, compound: &mut ast::CompoundCommand) {
        match compound {
            ast::CompoundCommand::Arithmetic(_) => {}
            ast::CompoundCommand::ArithmeticForClause(c) => self.list(&mut c.body.list),
            ast::CompoundCommand::BraceGroup(c) => self.list(&mut c.list),
            ast::CompoundCommand::Subshell(c) => self.list(&mut c.list),
            ast::CompoundCommand::ForClause(c) => {
                for word in c.values.iter_mut().flatten() {
                    fix_word(word);
                }
                self.list(&mut c.body.list);
            }
            ast::CompoundCommand::CaseClause(c) => {
                fix_word(&mut c.value);
                for case in &mut c.cases {
                    if let Some(list) = &mut case.cmd {
                        self.list(list);
                    }
                }
            }
            ast::CompoundCommand::IfClause(c) => {
                self.list(&mut c.condition);
                self.list(&mut c.then);
                for clause in c.elses.iter_mut().flatten() {
                    if let Some(condition) = &mut clause.condition {
                        self.list(condition);
                    }
                    self.list(&mut clause.body);
                }
            }
            ast::CompoundCommand::WhileClause(c) | ast::CompoundCommand::UntilClause(c) => {
                self.list(&mut c.0);
                self.list(&mut c.1.list);
            }
            ast::CompoundCommand::Coprocess(c) => self.command(&mut c.body),
        }
    }

    fn simple(&mut self, simple: &mut ast::SimpleCommand) {
        let items = simple
            .prefix
            .iter_mut()
            .flat_map(|p| p.0.iter_mut())
            .chain(simple.suffix.iter_mut().flat_map(|s| s.0.iter_mut()));
        for item in items {
            match item {
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                    self.list(&mut subshell.list);
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                    self.redirects(std::slice::from_mut(redirect));
                }
                ast::CommandPrefixOrSuffixItem::Word(word) => fix_word(word),
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    fix_word(word);
                    match &mut assignment.value {
                        ast::AssignmentValue::Scalar(value) => fix_word(value),
                        ast::AssignmentValue::Array(elements) => {
                            for (key, value) in elements {
                                key.iter_mut().for_each(fix_word);
                                fix_word(value);
                            }
                        }
                    }
                }
            }
        }
        for words in simple.prefix.iter_mut().map(|p| &mut p.0) {
            devfd::in_words(words);
        }
        for words in simple.suffix.iter_mut().map(|s| &mut s.0) {
            devfd::in_words(words);
        }
    }

    fn redirect_list(&mut self, redirects: &mut Vec<ast::IoRedirect>) {
        self.redirects(redirects);
        devfd::in_list(redirects);
    }

    fn redirects(&mut self, redirects: &mut [ast::IoRedirect]) {
        for redirect in redirects {
            tty::refuse_terminal(redirect);
            if let ast::IoRedirect::File(
                _,
                _,
                ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell),
            ) = redirect
            {
                self.list(&mut subshell.list);
            }
        }
    }
}

/// Rewrites `word` where brush would expand it differently from bash (see [`words`]).
fn fix_word(word: &mut ast::Word) {
    if let Some(rewritten) = words::rewrite(&word.value) {
        word.value = rewritten;
    }
}

/// Adds the stage builtin.
pub(crate) fn install_builtin(
    builtins: &mut HashMap<String, Registration<DefaultShellExtensions>>,
) {
    builtins::add_internal(builtins, STAGE_BUILTIN, run_stage);
}

/// What the DEBUG hook needs to know about the stage running on this thread.
struct CurrentStage {
    /// The stage's stdout, to notice its reader went away; kept open while the stage runs.
    stdout: Option<OwnedFd>,
}

thread_local! {
    /// The stages running on this thread, innermost last (a stage's brace group can itself run
    /// `eval` of a pipeline whose builtin stage brush runs in place only when it is the last).
    static CURRENT: RefCell<Vec<CurrentStage>> = const { RefCell::new(Vec::new()) };
}

/// Whether the current thread runs a stage, which [`stop`] may end.
pub(crate) fn in_stage() -> bool {
    CURRENT.with(|c| !c.borrow().is_empty())
}

/// Ends the stage running on this thread (see the module docs); only when [`in_stage`].
pub(crate) fn stop() -> ! {
    std::panic::resume_unwind(Box::new(StageStopped(STOPPED_STATUS)))
}

/// Ends the stage running on this thread if its last command failed because the stage's reader
/// went away, as `SIGPIPE` ends a bash stage. Only a write to that pipe fails so (a builtin's
/// `EPIPE` becomes 141, as does an external program killed by `SIGPIPE`): a command that failed
/// otherwise after the reader left goes on, as bash's stage does until it writes.
pub(crate) fn stop_if_reader_gone(shell: &Shell) {
    if shell.last_exit_status() != BROKEN_PIPE_STATUS {
        return;
    }
    let gone = CURRENT.with(|c| {
        c.borrow()
            .last()
            .and_then(|stage| stage.stdout.as_ref())
            .is_some_and(|fd| reader_gone(fd.as_fd()))
    });
    if gone {
        std::panic::resume_unwind(Box::new(StageStopped(BROKEN_PIPE_STATUS)));
    }
}

/// Whether the pipe `fd` writes to has no reader left (poll reports an error on it).
fn reader_gone(fd: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(Some(fd), libc::POLLOUT)];
    poll(&mut fds, Some(Duration::ZERO)).is_ok() && fds[0].revents() & libc::POLLERR != 0
}

fn run_stage(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let Some(command) = registered(&args) else {
            return Ok(ExecutionResult::new(2));
        };
        let ExecutionContext {
            shell, mut params, ..
        } = ctx;
        enter_call(shell, &mut params, &args);
        // A simple command is a pipeline component, not a pipeline of its own: its failure fires
        // no ERR trap and no errexit inside the stage (the pipeline's status does, outside).
        params.suppress_errexit |= wraps_simple_command(&command);
        if let Some(umask) = state::session_umask(shell) {
            isolation::enter_stage_fs(umask);
        }
        let stdout = params.try_stdout(shell).and_then(|file| duplicate(&file));
        CURRENT.with(|c| c.borrow_mut().push(CurrentStage { stdout }));
        let ran = CatchStop(Box::pin(shell.run_program(program_of(&command), &params))).await;
        CURRENT.with(|c| c.borrow_mut().pop());
        // A stage is a subshell: its `exit`, `return` or `break` ends only the stage.
        let status = match ran {
            Ok(ran) => status_of(shell, &params, ran),
            Err(StageStopped(status)) => status,
        };
        Ok(ExecutionResult::new(status))
    })
}

/// An and-or list of the one simple command `command`.
fn simple_list(command: ast::SimpleCommand) -> ast::AndOrList {
    ast::AndOrList {
        first: ast::Pipeline {
            timed: None,
            bang: false,
            seq: vec![ast::Command::Simple(command)],
        },
        additional: Vec::new(),
    }
}

/// The command registered for a stage's or a job's call (`<builtin> <session> <index> …`).
pub(super) fn registered(args: &[CommandArg]) -> Option<Arc<ast::Command>> {
    let number = |i: usize| args.get(i).and_then(|a| a.to_string().parse::<u64>().ok());
    let (session, index) = (number(1)?, number(2)?);
    stages()
        .get(&session)
        .and_then(|s| s.commands.get(usize::try_from(index).ok()?).cloned())
}

/// What a stage's or a job's call does before it runs its command: puts back the
/// `BASH_XTRACEFD` it set aside, and sends errors the program reports at its own level to the
/// command's stderr, not the call's.
pub(super) fn enter_call(shell: &mut Shell, params: &mut ExecutionParameters, args: &[CommandArg]) {
    if let Some(aside) = args.get(3..) {
        restore_xtracefd(shell, aside);
    }
    if let Some(stderr) = params.try_fd(shell, SAVED_STDERR_FD_NUMBER) {
        params.set_fd(brush_core::openfiles::OpenFiles::STDERR_FD, stderr);
    }
}

/// A program of the registered `command` alone.
pub(super) fn program_of(command: &ast::Command) -> ast::Program {
    ast::Program {
        complete_commands: vec![ast::CompoundList(vec![ast::CompoundListItem(
            ast::AndOrList {
                first: ast::Pipeline {
                    timed: None,
                    bang: false,
                    seq: vec![command.clone()],
                },
                additional: Vec::new(),
            },
            ast::SeparatorOperator::Sequence,
        )])],
    }
}

/// The status a stage or a job ends with: its command's, or its error's (reported on its
/// stderr, as brush reports a program's).
pub(super) fn status_of(
    shell: &mut Shell,
    params: &ExecutionParameters,
    ran: Result<ExecutionResult, brush_core::Error>,
) -> u8 {
    match ran {
        Ok(result) => u8::from(result.exit_code),
        Err(error) => {
            let _ = shell.display_error(&mut params.stderr(shell), &error);
            u8::from(error.into_result(shell).exit_code)
        }
    }
}

/// Whether a registered stage (a brace group around the original command) runs a simple command.
fn wraps_simple_command(command: &ast::Command) -> bool {
    let ast::Command::Compound(ast::CompoundCommand::BraceGroup(group), _) = command else {
        return false;
    };
    group
        .list
        .0
        .first()
        .is_some_and(|item| matches!(item.0.first.seq.first(), Some(ast::Command::Simple(_))))
}

/// A descriptor of the stage's stdout of its own, when it is a pipe (only a pipe's reader can go
/// away).
fn duplicate(file: &OpenFile) -> Option<OwnedFd> {
    match file {
        OpenFile::PipeWriter(_) => file
            .try_borrow_as_fd()
            .ok()
            .and_then(|fd| fd.try_clone_to_owned().ok()),
        _ => None,
    }
}

/// Polls the future, turning a [`StageStopped`] unwind into `Err`; any other panic goes on.
struct CatchStop<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchStop<F> {
    type Output = Result<F::Output, StageStopped>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(payload) => match payload.downcast::<StageStopped>() {
                Ok(stopped) => Poll::Ready(Err(*stopped)),
                Err(other) => std::panic::resume_unwind(other),
            },
        }
    }
}
