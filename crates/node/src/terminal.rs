//! `VirtualTerminal` over `shellwright_term::Terminal`, and the JS shapes of
//! `TerminalScreen`, `StyledRun` and `CommandRecord` and the reading of snapshot options, which
//! `PtySession` shares.

use napi::ValueType;
use napi::bindgen_prelude::{
    Either, Env, FromNapiValue, JsValue, Result, This, Uint8ArraySlice, Unknown, ValidateNapiValue,
};
use napi_derive::napi;
use shellwright_term::terminal::{
    DEFAULT_SCROLLBACK, MAX_COLS, MAX_ROWS, MAX_SCROLLBACK, MIN_COLS, MIN_ROWS,
};
use shellwright_term::{RunColor, Terminal, TerminalOptions};

use crate::error::JsFailure;
use crate::options::{OptionReader, clamp_count, finite_arg, type_error};

/// What the screen shows.
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
    /// The input modes a client needs to send the program what it expects.
    pub modes: TerminalModes,
    /// BEL characters rung since the terminal (or the run) started; a BEL that ends an OSC
    /// string is its terminator, not a bell.
    pub bells: f64,
}

/// The program's input modes: which bytes keys send, pastes, mouse reports.
#[napi(object, object_from_js = false)]
pub struct TerminalModes {
    /// DECCKM: arrows, Home and End send SS3 sequences (see `encodeKey`).
    pub application_cursor_keys: bool,
    /// DECKPAM: the keypad sends application sequences.
    pub application_keypad: bool,
    /// Mode 2004: pastes are to be wrapped in `ESC [200~` … `ESC [201~`.
    pub bracketed_paste: bool,
    pub alt_screen: bool,
    /// Mouse events the program asked for (modes 1000, 1002, 1003).
    #[napi(ts_type = "'none' | 'click' | 'drag' | 'motion'")]
    pub mouse_tracking: String,
    /// Mode 1006: mouse reports in SGR form.
    pub sgr_mouse: bool,
    /// Mode 1004: focus in/out reports.
    pub focus_events: bool,
    /// IRM: printed text is inserted.
    pub insert: bool,
    /// DECAWM: text wraps at the last column.
    pub auto_wrap: bool,
}

impl From<shellwright_term::TerminalModes> for TerminalModes {
    fn from(modes: shellwright_term::TerminalModes) -> Self {
        Self {
            application_cursor_keys: modes.application_cursor_keys,
            application_keypad: modes.application_keypad,
            bracketed_paste: modes.bracketed_paste,
            alt_screen: modes.alt_screen,
            mouse_tracking: modes.mouse_tracking.name().to_string(),
            sgr_mouse: modes.sgr_mouse,
            focus_events: modes.focus_events,
            insert: modes.insert,
            auto_wrap: modes.auto_wrap,
        }
    }
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
            modes: screen.modes.into(),
            bells: screen.bells as f64,
        }
    }
}

/// Text drawn in one style. Attributes are present only when set; colours are absent for the
/// terminal's default, a palette index (0–255: SGR 30–37 and 90–97 are 0–15) or `'#rrggbb'`.
#[napi(object, object_from_js = false)]
pub struct StyledRun {
    pub text: String,
    #[napi(ts_type = "string | number")]
    pub fg: Option<Either<String, u32>>,
    #[napi(ts_type = "string | number")]
    pub bg: Option<Either<String, u32>>,
    pub bold: Option<bool>,
    pub italic: Option<bool>,
    /// Any underline (single, double, curly, dotted, dashed).
    pub underline: Option<bool>,
    /// Reverse video: foreground and background swapped when drawn.
    pub inverse: Option<bool>,
    pub dim: Option<bool>,
    pub strikethrough: Option<bool>,
}

impl From<shellwright_term::StyledRun> for StyledRun {
    fn from(run: shellwright_term::StyledRun) -> Self {
        let style = run.style;
        let set = |on: bool| on.then_some(true);
        Self {
            text: run.text,
            fg: style.fg.map(color),
            bg: style.bg.map(color),
            bold: set(style.bold),
            italic: set(style.italic),
            underline: set(style.underline),
            inverse: set(style.inverse),
            dim: set(style.dim),
            strikethrough: set(style.strikethrough),
        }
    }
}

fn color(color: RunColor) -> Either<String, u32> {
    match color {
        RunColor::Palette(index) => Either::B(index.into()),
        RunColor::Rgb(r, g, b) => Either::A(format!("#{r:02x}{g:02x}{b:02x}")),
    }
}

/// The JS form of `styledLines()`.
pub fn styled_lines(lines: Vec<Vec<shellwright_term::StyledRun>>) -> Vec<Vec<StyledRun>> {
    lines
        .into_iter()
        .map(|runs| runs.into_iter().map(StyledRun::from).collect())
        .collect()
}

/// The scrollback rows `snapshot(options)` keeps: `options.scrollback` (truncated, negative as 0),
/// all when absent.
pub fn snapshot_scrollback(env: &Env, options: Option<Unknown>) -> Result<usize> {
    let reader = OptionReader::new(env, options, "options", true)?;
    Ok(reader
        .count("scrollback", 0, i64::MAX)?
        .map_or(usize::MAX, |rows| {
            usize::try_from(rows).unwrap_or(usize::MAX)
        }))
}

/// One command seen through OSC 133 (or the prompt fallback).
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
///
/// Sizes (`cols`, `rows` of the constructor and `resize`) are any finite number, truncated toward
/// zero and clamped to the emulator's 2..1000 columns and 1..1000 rows (wider than a
/// `PtySession`'s, so any recorded screen can be replayed); `scrollback` is truncated and clamped
/// to 0..1,000,000 lines. `NaN` and infinities are a `RangeError`.
///
/// `dispose()` frees the screen and scrollback at once instead of when the object is collected;
/// every later call throws an `Error` with code `ERR_TERMINAL_DISPOSED`.
#[napi]
pub struct VirtualTerminal {
    /// `None` once disposed.
    terminal: Option<Terminal>,
}

/// What `write` was given, read before the terminal is touched.
enum Data<'a> {
    Text(String),
    Bytes(Uint8ArraySlice<'a>),
}

impl AsRef<[u8]> for Data<'_> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Data::Text(text) => text.as_bytes(),
            Data::Bytes(bytes) => bytes,
        }
    }
}

impl VirtualTerminal {
    /// The terminal, or the error every call of a disposed one throws.
    fn live(&mut self, env: &Env) -> Result<&mut Terminal> {
        self.terminal.as_mut().ok_or_else(|| {
            JsFailure::operation("ERR_TERMINAL_DISPOSED", "the terminal was disposed").throw(env)
        })
    }
}

#[napi]
impl VirtualTerminal {
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "options?: VirtualTerminalOptions"
    )]
    pub fn new(env: Env, this: This<Unknown>, options: Option<Unknown>) -> Result<Self> {
        crate::construct::require_new::<Self>(&env, &this, "VirtualTerminal")?;
        let reader = OptionReader::new(&env, options, "options", true)?;
        let defaults = TerminalOptions::default();
        let options = TerminalOptions {
            cols: reader
                .count("cols", MIN_COLS.into(), MAX_COLS.into())?
                .map_or(defaults.cols, |n| n as u16),
            rows: reader
                .count("rows", MIN_ROWS.into(), MAX_ROWS.into())?
                .map_or(defaults.rows, |n| n as u16),
            scrollback: reader
                .count("scrollback", 0, MAX_SCROLLBACK as i64)?
                .map_or(DEFAULT_SCROLLBACK, |n| n as usize),
            answer_queries: reader
                .bool("answerQueries")?
                .unwrap_or(defaults.answer_queries),
        };
        Ok(Self {
            terminal: Some(Terminal::new(options)),
        })
    }

    /// Feeds program output; returns the replies owed to the program ("" if none).
    #[napi(catch_unwind, ts_args_type = "data: string | Uint8Array")]
    pub fn write(&mut self, env: Env, data: Unknown) -> Result<String> {
        let bytes = match data.get_type()? {
            ValueType::String => {
                // SAFETY: checked to be a string.
                Data::Text(unsafe { String::from_napi_value(env.raw(), data.raw())? })
            }
            ValueType::Object => {
                // SAFETY: `data` is a live value of this environment; validate checks it is a
                // typed array before its info is read.
                let bytes = unsafe {
                    Uint8ArraySlice::validate(env.raw(), data.raw())
                        .and_then(|_| Uint8ArraySlice::from_napi_value(env.raw(), data.raw()))
                };
                Data::Bytes(
                    bytes.map_err(|_| type_error(&env, "data must be a string or a Uint8Array"))?,
                )
            }
            _ => return Err(type_error(&env, "data must be a string or a Uint8Array")),
        };
        let replies = self.live(&env)?.feed(bytes.as_ref()).replies;
        Ok(String::from_utf8_lossy(&replies).into_owned())
    }

    /// Changes the size (as in the class doc); the primary screen reflows.
    #[napi(catch_unwind, ts_args_type = "cols: number, rows: number")]
    pub fn resize(&mut self, env: Env, cols: Unknown, rows: Unknown) -> Result<()> {
        let cols = clamp_count(
            finite_arg(&env, cols, "cols")?,
            MIN_COLS.into(),
            MAX_COLS.into(),
        );
        let rows = clamp_count(
            finite_arg(&env, rows, "rows")?,
            MIN_ROWS.into(),
            MAX_ROWS.into(),
        );
        self.live(&env)?.resize(cols as u16, rows as u16);
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn screen(&mut self, env: Env) -> Result<TerminalScreen> {
        Ok(self.live(&env)?.screen().into())
    }

    /// Self-contained ANSI that repaints scrollback, screen, cursor, title and modes; with
    /// `scrollback`, at most that many of the most recent scrollback rows (0: the screen alone).
    #[napi(catch_unwind, ts_args_type = "options?: SnapshotOptions")]
    pub fn snapshot(&mut self, env: Env, options: Option<Unknown>) -> Result<String> {
        let rows = snapshot_scrollback(&env, options)?;
        Ok(self.live(&env)?.snapshot_with_scrollback(rows))
    }

    /// Each visible row (one entry per row) as runs of text in one style.
    #[napi(catch_unwind)]
    pub fn styled_lines(&mut self, env: Env) -> Result<Vec<Vec<StyledRun>>> {
        Ok(styled_lines(self.live(&env)?.styled_lines()))
    }

    /// The visible rows (0-based, ascending) whose text or style changed since the last call;
    /// every row on the first call.
    #[napi(catch_unwind)]
    pub fn changed_rows(&mut self, env: Env) -> Result<Vec<u32>> {
        let rows = self.live(&env)?.changed_rows();
        Ok(rows.into_iter().map(u32::from).collect())
    }

    /// Completed commands seen through OSC 133 (or the prompt fallback), oldest first.
    #[napi(catch_unwind)]
    pub fn commands(&mut self, env: Env) -> Result<Vec<CommandRecord>> {
        let records = self.live(&env)?.commands();
        Ok(records.into_iter().map(CommandRecord::from).collect())
    }

    /// Frees the screen, scrollback and parser now (a terminal is otherwise freed when it is
    /// collected, which a loop that creates many may not give time for). Later calls throw;
    /// disposing again does nothing.
    #[napi(catch_unwind)]
    pub fn dispose(&mut self) {
        self.terminal = None;
    }
}
