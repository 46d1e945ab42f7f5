//! `ShellMirror` over `shellwright_shell::Mirror`: a read-only terminal view of a `Shell`'s runs
//! in VS Code's shell-integration dialect (OSC 633), delivered to a JS callback.

use napi::ValueType;
use napi::bindgen_prelude::{
    ClassInstance, Env, FromNapiValue, Function, JavaScriptClassExt, JsValue, Result, This, Unknown,
};
use napi_derive::napi;
use shellwright_proc::CancelToken;
use shellwright_shell::{Mirror, PersistentShell, mirror::output_budget};

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
        self.view = None;
        let (view, opening) = Mirror::open(
            &self.shell,
            self.budget,
            Box::new(move |data: String| sink.send(data.into())),
        );
        self.view = Some(view);
        if let Err(thrown) = replay_to.call(opening) {
            self.view = None;
            return Err(thrown);
        }
        Ok(())
    }

    /// Input typed into the view: `"\x03"` (Ctrl+C) cancels the running command and returns
    /// true; anything else is refused (false), the view being read-only.
    #[napi(catch_unwind, ts_args_type = "data: string")]
    pub fn handle_input(&self, env: Env, data: Unknown) -> Result<bool> {
        let data = string_arg(&env, data, "data")?;
        Ok(self
            .view
            .as_ref()
            .is_some_and(|view| view.handle_input(&data)))
    }

    /// Stops the view; the Shell and other views go on. Closing twice is harmless.
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.view = None;
    }
}
