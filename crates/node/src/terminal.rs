//! `VirtualTerminal` (DESIGN §2.2) over `shellwright_term::Terminal`, and the JS shapes of
//! `TerminalScreen` and `CommandRecord` that `PtySession` returns too.

use napi::ValueType;
use napi::bindgen_prelude::{
    Env, FromNapiValue, JsValue, Result, Uint8ArraySlice, Unknown, ValidateNapiValue,
};
use napi_derive::napi;
use shellwright_term::terminal::{DEFAULT_SCROLLBACK, MAX_SCROLLBACK};
use shellwright_term::{Terminal, TerminalOptions};

use crate::options::{OptionReader, type_error};

/// What the screen shows (DESIGN §2.2).
#[napi(object, object_from_js = false)]
pub struct TerminalScreen {
    pub cols: u32,
    pub rows: u32,
    /// One entry per visible row (length === rows), each row's trailing blanks trimmed.
    pub lines: Vec<String>,
    /// 0-based.
    pub cursor: TerminalCursor,
    pub title: String,
    pub alt_screen: bool,
}

#[napi(object, object_from_js = false)]
pub struct TerminalCursor {
    pub row: u32,
    pub col: u32,
    pub visible: bool,
}

impl From<shellwright_term::TerminalScreen> for TerminalScreen {
    fn from(screen: shellwright_term::TerminalScreen) -> Self {
        Self {
            cols: screen.cols.into(),
            rows: screen.rows.into(),
            lines: screen.lines,
            cursor: TerminalCursor {
                row: screen.cursor.row.into(),
                col: screen.cursor.col.into(),
                visible: screen.cursor.visible,
            },
            title: screen.title,
            alt_screen: screen.alt_screen,
        }
    }
}

/// One command seen through OSC 133 (or the prompt fallback) (DESIGN §2.2).
#[napi(object, object_from_js = false)]
pub struct CommandRecord {
    /// The command line as entered.
    pub command: String,
    /// What it printed, as plain text (escape sequences removed).
    pub output: String,
    /// From OSC 133;D, absent when unknown (prompt fallback).
    pub exit_code: Option<i32>,
    /// From OSC 7 / 633;P;Cwd when the shell reports it.
    pub cwd: Option<String>,
    /// ms since epoch.
    pub started_at: f64,
    pub finished_at: Option<f64>,
}

impl From<shellwright_term::CommandRecord> for CommandRecord {
    fn from(record: shellwright_term::CommandRecord) -> Self {
        Self {
            command: record.command,
            output: record.output,
            exit_code: record.exit_code,
            cwd: record.cwd,
            started_at: record.started_at_ms as f64,
            finished_at: record.finished_at_ms.map(|ms| ms as f64),
        }
    }
}

/// A terminal emulator without a process: feed it output, read the screen, snapshot and commands.
#[napi]
pub struct VirtualTerminal {
    terminal: Terminal,
}

#[napi]
impl VirtualTerminal {
    #[napi(constructor, ts_args_type = "options?: VirtualTerminalOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        let reader = OptionReader::new(&env, options, "options", true)?;
        let defaults = TerminalOptions::default();
        let options = TerminalOptions {
            cols: reader.number("cols")?.map_or(defaults.cols, clamp_u16),
            rows: reader.number("rows")?.map_or(defaults.rows, clamp_u16),
            scrollback: reader
                .number("scrollback")?
                .map_or(DEFAULT_SCROLLBACK, |n| {
                    n.clamp(0.0, MAX_SCROLLBACK as f64) as usize
                }),
            answer_queries: reader
                .bool("answerQueries")?
                .unwrap_or(defaults.answer_queries),
        };
        Ok(Self {
            terminal: Terminal::new(options),
        })
    }

    /// Feeds program output; returns the replies owed to the program ("" if none).
    #[napi(ts_args_type = "data: string | Uint8Array")]
    pub fn write(&mut self, env: Env, data: Unknown) -> Result<String> {
        let replies = match data.get_type()? {
            ValueType::String => {
                // SAFETY: checked to be a string.
                let text = unsafe { String::from_napi_value(env.raw(), data.raw())? };
                self.terminal.feed(text.as_bytes()).replies
            }
            ValueType::Object => {
                // SAFETY: `data` is a live value of this environment; validate checks it is a
                // typed array before its info is read.
                let bytes = unsafe {
                    Uint8ArraySlice::validate(env.raw(), data.raw())
                        .and_then(|_| Uint8ArraySlice::from_napi_value(env.raw(), data.raw()))
                };
                let bytes =
                    bytes.map_err(|_| type_error(&env, "data must be a string or a Uint8Array"))?;
                self.terminal.feed(&bytes).replies
            }
            _ => return Err(type_error(&env, "data must be a string or a Uint8Array")),
        };
        Ok(String::from_utf8_lossy(&replies).into_owned())
    }

    /// Changes the size (clamped to 2..1000 columns, 1..1000 rows); the primary screen reflows.
    #[napi(ts_args_type = "cols: number, rows: number")]
    pub fn resize(&mut self, env: Env, cols: Unknown, rows: Unknown) -> Result<()> {
        let cols = number_arg(&env, cols, "cols")?;
        let rows = number_arg(&env, rows, "rows")?;
        self.terminal.resize(clamp_u16(cols), clamp_u16(rows));
        Ok(())
    }

    #[napi]
    pub fn screen(&mut self) -> TerminalScreen {
        self.terminal.screen().into()
    }

    /// Self-contained ANSI that repaints scrollback, screen, cursor, title and modes.
    #[napi]
    pub fn snapshot(&mut self) -> String {
        self.terminal.snapshot()
    }

    /// Completed commands seen through OSC 133 (or the prompt fallback), oldest first.
    #[napi]
    pub fn commands(&self) -> Vec<CommandRecord> {
        self.terminal
            .commands()
            .into_iter()
            .map(CommandRecord::from)
            .collect()
    }
}

/// A finite number argument, or a `TypeError` naming it.
fn number_arg(env: &Env, value: Unknown, name: &str) -> Result<f64> {
    if value.get_type()? == ValueType::Number {
        // SAFETY: checked to be a number.
        let n = unsafe { f64::from_napi_value(env.raw(), value.raw())? };
        if n.is_finite() {
            return Ok(n);
        }
    }
    Err(type_error(env, format!("{name} must be a finite number")))
}

/// Sizes are clamped later by the terminal; this only maps any finite number into u16.
fn clamp_u16(n: f64) -> u16 {
    n.clamp(0.0, f64::from(u16::MAX)) as u16
}
