//! `ShellMirror` over `shellwright_shell::Mirror`: a read-only terminal view of a `Shell`'s runs
//! in VS Code's shell-integration dialect (OSC 633), delivered to a JS callback. Input the view
//! refuses (keys, Ctrl+C with nothing running) gets a one-line notice in the view, put on a line
//! of its own from what the stream last showed (`ViewEnd`).

use std::sync::{Arc, Mutex};

use napi::ValueType;
use napi::bindgen_prelude::{
    ClassInstance, Env, FromNapiValue, Function, JavaScriptClassExt, JsValue, Result, This, Unknown,
};
use napi_derive::napi;
use shellwright_io::lock;
use shellwright_proc::CancelToken;
use shellwright_shell::mirror::{PROMPT, output_budget};
use shellwright_shell::{Mirror, PersistentShell};
use shellwright_term::IntegrationMark;

use crate::delivery::ChunkSink;
use crate::options::{OptionReader, string_arg, type_error};
use crate::shell::Shell;

/// Lines of each transcript a view replays unless told otherwise.
const DEFAULT_SCROLLBACK: i64 = 1000;

/// A read-only terminal view of a Shell's runs, in VS Code's shell-integration dialect (OSC 633):
/// each command with a prompt, its output as it streams and its exit code. A view opened late
/// replays the history first. Many views of one Shell may be open; closing one never touches the
/// Shell.
///
/// ```ts
/// const mirror = new ShellMirror(shell, { scrollback: 1000 })
/// mirror.open((data) => terminal.write(data))
/// mirror.handleInput('\x03') // true: cancels the running command
/// mirror.close()
/// ```
#[napi]
pub struct ShellMirror {
    shell: PersistentShell,
    budget: usize,
    view: Option<Mirror>,
    /// The open view's stream and where it stands, shared with the live handler.
    end: Arc<Mutex<ViewEnd>>,
    sink: Option<ChunkSink>,
}

/// Said in the view when it refuses typed input.
const READ_ONLY: &str =
    "[read-only: this view shows the agent's shell; Ctrl+C stops its running command]";
/// Said in the view for Ctrl+C while no command runs.
const NOTHING_RUNS: &str = "[read-only: no command is running; this view shows the agent's shell]";

/// What the end of a view's stream shows, followed from the marks in it, so that a notice can be
/// put on a line of its own: a prompt (after a `B` mark, before the next `C`) is drawn again
/// under the notice; a run's output gets it after its last line, or once the line it is writing
/// ends.
#[derive(Default)]
struct ViewEnd {
    prompt: bool,
    at_line_start: bool,
    /// The notice that is the last thing shown: saying it again would repeat it.
    noticed: Option<&'static str>,
    /// A notice held until the run's current line ends.
    pending: Option<&'static str>,
}

impl ViewEnd {
    /// Takes note of `data`, just shown; returns the held notice when it is due now.
    fn follow(&mut self, data: &str) -> Option<String> {
        let prompt_end = data.rfind(&IntegrationMark::CommandStart.encode());
        let output_start = data.rfind(&IntegrationMark::OutputStart.encode());
        match (prompt_end, output_start) {
            (Some(b), Some(c)) => self.prompt = b > c,
            (Some(_), None) => self.prompt = true,
            (None, Some(_)) => self.prompt = false,
            (None, None) => {}
        }
        if data.is_empty() {
            return None;
        }
        self.at_line_start = data.ends_with('\n');
        self.noticed = None;
        let pending = self.pending.take()?;
        self.notice(pending)
    }

    /// The stream that shows `text` on a line of its own, dimmed: now, or `None` when it is what
    /// the view shows last already, or while a run's line is unfinished (it is held until then).
    fn notice(&mut self, text: &'static str) -> Option<String> {
        if !self.prompt && !self.at_line_start {
            self.pending = Some(text);
            return None;
        }
        if self.noticed.replace(text) == Some(text) {
            return None;
        }
        let line = format!("\x1b[2m{text}\x1b[0m\r\n");
        Some(if self.prompt {
            format!(
                "\r\x1b[2K{line}{}{PROMPT}{}",
                IntegrationMark::PromptStart.encode(),
                IntegrationMark::CommandStart.encode()
            )
        } else {
            line
        })
    }
}

#[napi]
impl ShellMirror {
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "shell: Shell, options?: ShellMirrorOptions"
    )]
    pub fn new(
        env: Env,
        this: This<Unknown>,
        shell: Unknown,
        options: Option<Unknown>,
    ) -> Result<Self> {
        crate::construct::require_new::<Self>(&env, &this, "ShellMirror")?;
        let not_a_shell = || type_error(&env, "shell must be a Shell");
        if shell.get_type()? != ValueType::Object || !Shell::instance_of(&env, &shell)? {
            return Err(not_a_shell());
        }
        // SAFETY: a live object of this environment; the conversion checks its class itself.
        let shell = unsafe { ClassInstance::<Shell>::from_napi_value(env.raw(), shell.raw()) }
            .map_err(|_| not_a_shell())?;
        let reader = OptionReader::new(&env, options, "options", true)?;
        let scrollback = reader
            .count("scrollback", 100, 10_000)?
            .unwrap_or(DEFAULT_SCROLLBACK);
        Ok(Self {
            shell: shell.persistent().clone(),
            budget: output_budget(scrollback),
            view: None,
            end: Arc::default(),
            sink: None,
        })
    }

    /// Starts the view: `onData` receives the shell-integration properties and the replay of the
    /// history before `open` returns, then everything the Shell's runs do, as it happens (on
    /// later turns of the event loop, in order). Opening again starts over with a fresh replay.
    /// A throw from `onData` during the replay closes the view and is thrown by `open`; a later
    /// throw stops the view's delivery. An open view does not keep Node running by itself.
    #[napi(catch_unwind, ts_args_type = "onData: (data: string) => void")]
    pub fn open(&mut self, env: Env, on_data: Unknown) -> Result<()> {
        if on_data.get_type()? != ValueType::Function {
            return Err(type_error(&env, "onData must be a function"));
        }
        // SAFETY: checked to be a function.
        let replay_to: Function<String, Unknown> = unsafe { on_data.cast()? };
        // A later throw only ends this view's delivery: there is no run of its own to stop.
        let (mut sink, _throws) =
            ChunkSink::from_arg(&env, Some(on_data), "onData", &CancelToken::new())?;
        sink.unref(&env)?;
        self.close();
        let end = Arc::new(Mutex::new(ViewEnd::default()));
        let (live_end, live_sink) = (Arc::clone(&end), sink.clone());
        let (view, opening) = Mirror::open(
            &self.shell,
            self.budget,
            Box::new(move |data: String| {
                // Under the lock, so a notice never lands inside what is followed.
                let mut end = lock(&live_end);
                let notice = end.follow(&data);
                live_sink.send(data.into());
                if let Some(notice) = notice {
                    live_sink.send(notice.into());
                }
            }),
        );
        // A fresh view: nothing is held yet.
        let _ = lock(&end).follow(&opening);
        self.view = Some(view);
        self.end = end;
        self.sink = Some(sink);
        if let Err(thrown) = replay_to.call(opening) {
            self.close();
            return Err(thrown);
        }
        Ok(())
    }

    /// Input typed into the view: `"\x03"` (Ctrl+C) cancels the running command and returns
    /// true; anything else is refused (false), the view being read-only. Refused input, and
    /// Ctrl+C while no command runs, get a one-line notice in the view (once until it shows
    /// something new).
    #[napi(catch_unwind, ts_args_type = "data: string")]
    pub fn handle_input(&self, env: Env, data: Unknown) -> Result<bool> {
        let data = string_arg(&env, data, "data")?;
        let (Some(view), Some(sink)) = (&self.view, &self.sink) else {
            return Ok(false);
        };
        let accepted = view.handle_input(&data);
        let mut end = lock(&self.end);
        let notice = match (accepted, end.prompt) {
            (false, _) => READ_ONLY,
            // The view shows a prompt only while no command runs.
            (true, true) => NOTHING_RUNS,
            (true, false) => return Ok(true),
        };
        if let Some(stream) = end.notice(notice) {
            sink.send(stream.into());
        }
        Ok(accepted)
    }

    /// Stops the view; the Shell and other views go on. Closing twice is harmless.
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.view = None;
        self.sink = None;
    }
}
