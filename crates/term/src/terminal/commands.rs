//! Command tracking: turns shell-integration marks into [`CommandRecord`]s.
//!
//! Marks follow FinalTerm's semantic prompts as used by iTerm2, kitty and WezTerm
//! (OSC 133 `A` prompt start, `B` command start, `C` output start, `D[;exit]` command end, each with
//! optional `;key=value` options such as `aid=`), VS Code's shell integration (OSC 633 with the same
//! letters plus `E;commandline` and `P;Cwd=path`, values escaped as `\\` and `\xAB`), and OSC 7
//! (`file://host/path`, percent-encoded) for the working directory.
//! Shells without marks fall back to prompt detection (`[$#%❯] ` just before the cursor with nothing
//! after it), which yields records without exit codes.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use shellwright_io::Utf8Decoder;

/// Most records kept; older ones are dropped so memory stays bounded.
pub const MAX_RECORDS: usize = 1000;
/// Most bytes of output kept per record; the oldest lines are dropped beyond it.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;
/// A line longer than this many characters is broken, so output without newlines stays bounded.
const MAX_LINE_CHARS: usize = 64 * 1024;

/// One command seen by the terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRecord {
    /// The command line as entered.
    pub command: String,
    /// What it printed, as plain text (escape sequences removed, `\r\n` as `\n`).
    pub output: String,
    /// From OSC 133;D; `None` when unknown (prompt fallback, or D without a code).
    pub exit_code: Option<i32>,
    /// From OSC 7 or OSC 633;P;Cwd when the shell reports it.
    pub cwd: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    pub finished_at_ms: Option<u64>,
}

/// A shell-integration mark found in an OSC sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    PromptStart,
    CommandStart,
    OutputStart,
    CommandEnd { exit_code: Option<i32> },
    CommandLine(String),
    Cwd(String),
}

/// Parses an OSC body (`133;…`, `633;…`, `7;…`) into a mark.
pub(crate) fn parse_mark(body: &[u8]) -> Option<Mark> {
    let text = std::str::from_utf8(body).ok()?;
    let (number, rest) = text.split_once(';')?;
    match number {
        "133" | "633" => {
            let mut fields = rest.split(';');
            let letter = fields.next()?;
            match letter {
                "A" => Some(Mark::PromptStart),
                "B" => Some(Mark::CommandStart),
                "C" => Some(Mark::OutputStart),
                "D" => {
                    let exit_code = fields.next().and_then(|f| f.trim().parse::<i32>().ok());
                    Some(Mark::CommandEnd { exit_code })
                }
                "E" if number == "633" => {
                    Some(Mark::CommandLine(unescape_633(fields.next().unwrap_or(""))))
                }
                "P" if number == "633" => {
                    let property = fields.next()?;
                    let value = property.strip_prefix("Cwd=")?;
                    Some(Mark::Cwd(unescape_633(value)))
                }
                _ => None,
            }
        }
        "7" => {
            let path = rest.strip_prefix("file://")?;
            // Skip the host part: the path starts at the first '/' after it.
            let path = &path[path.find('/')?..];
            Some(Mark::Cwd(percent_decode(path)))
        }
        _ => None,
    }
}

/// Decodes VS Code's OSC 633 value escaping: `\\` is a backslash, `\xAB` a byte.
fn unescape_633(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
                continue;
            }
            if bytes.get(i + 1) == Some(&b'x')
                && let Some(byte) = bytes.get(i + 2..i + 4).and_then(hex_byte)
            {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A VS Code shell-integration mark to write: the OSC 633 sequences [`parse_mark`] reads, with
/// values escaped the way it unescapes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegrationMark<'a> {
    /// `A`: the prompt starts.
    PromptStart,
    /// `B`: the prompt ends, the command line starts.
    CommandStart,
    /// `C`: the command runs; its output follows.
    OutputStart,
    /// `D[;exit]`: the command ended (no code when it was stopped).
    CommandEnd(Option<i32>),
    /// `E;<command line>`.
    CommandLine(&'a str),
    /// `P;<name>=<value>`, e.g. `Cwd`.
    Property(&'a str, &'a str),
}

impl IntegrationMark<'_> {
    /// The whole sequence, `ESC ] 633 ; … BEL`.
    pub fn encode(&self) -> String {
        let body = match self {
            Self::PromptStart => "A".to_string(),
            Self::CommandStart => "B".to_string(),
            Self::OutputStart => "C".to_string(),
            Self::CommandEnd(None) => "D".to_string(),
            Self::CommandEnd(Some(code)) => format!("D;{code}"),
            Self::CommandLine(line) => format!("E;{}", escape_633(line)),
            Self::Property(name, value) => format!("P;{name}={}", escape_633(value)),
        };
        format!("\x1b]633;{body}\x07")
    }
}

/// VS Code's OSC 633 value escaping: `\` as `\\`, `;` as `\x3b`, and every byte of a control
/// character (C0, DEL and C1) as `\xHH`, so a value can neither end the sequence nor split its
/// fields. [`unescape_633`] is its inverse.
pub fn escape_633(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\x3b"),
            c if c.is_control() => {
                let mut bytes = [0u8; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = bytes.get(i + 1..i + 3).and_then(hex_byte)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_byte(digits: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(digits).ok()?;
    u8::from_str_radix(text, 16).ok()
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Plain text rebuilt from terminal output the way a line printer would see it: escape sequences
/// are never given to it, `\r` returns to the line start (so progress bars keep their last state),
/// backspace steps back, `\n` ends the line, other controls are dropped. UTF-8 split across feeds is
/// joined; invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct TextCapture {
    lines: VecDeque<String>,
    bytes: usize,
    line: Vec<char>,
    column: usize,
    decoder: Utf8Decoder,
}

impl TextCapture {
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let text = self.decoder.decode(bytes);
        text.chars().for_each(|c| self.put(c));
    }

    fn put(&mut self, c: char) {
        match c {
            '\n' => self.end_line(),
            '\r' => self.column = 0,
            '\x08' => self.column = self.column.saturating_sub(1),
            '\t' => {
                let next = (self.column / 8 + 1) * 8;
                while self.column < next {
                    self.put(' ');
                }
            }
            c if c.is_control() => {}
            c => {
                if self.column >= MAX_LINE_CHARS {
                    self.end_line();
                }
                if self.column < self.line.len() {
                    self.line[self.column] = c;
                } else {
                    self.line.push(c);
                }
                self.column += 1;
            }
        }
    }

    fn end_line(&mut self) {
        let line: String = self.line.drain(..).collect();
        let line = line.trim_end().to_string();
        self.column = 0;
        self.bytes += line.len() + 1;
        self.lines.push_back(line);
        while self.bytes > MAX_OUTPUT_BYTES {
            match self.lines.pop_front() {
                Some(dropped) => self.bytes -= dropped.len() + 1,
                None => break,
            }
        }
    }

    /// Lines completed so far.
    pub(crate) fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// The completed lines plus the unfinished one (if not blank), joined with `\n`.
    pub(crate) fn text(&self) -> String {
        let mut parts: Vec<&str> = self.lines.iter().map(String::as_str).collect();
        let current: String = self.line.iter().collect();
        let current = current.trim_end();
        if !current.is_empty() {
            parts.push(current);
        }
        parts.join("\n")
    }

    fn completed_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(String::as_str)
    }
}

/// Where the shell is in its prompt/command cycle, as its marks told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Nothing seen yet, or a command finished and no prompt has started.
    Idle,
    /// Between A and B: the prompt is being drawn.
    Prompt,
    /// Between B and C: the user is typing the command.
    Input,
    /// Between C and D: the command runs.
    Output,
}

struct Running {
    command: String,
    cwd: Option<String>,
    started_at_ms: u64,
    output: TextCapture,
}

/// Builds command records from marks and output text, or from prompts in fallback mode.
pub(crate) struct CommandTracker {
    records: VecDeque<CommandRecord>,
    completed: u64,
    marks_seen: bool,
    phase: Phase,
    cwd: Option<String>,
    /// OSC 633;E, when the shell reported the command line itself.
    command_line: Option<String>,
    /// The echo of what was typed after B.
    input: TextCapture,
    running: Option<Running>,
    fallback: Fallback,
}

/// Prompt-detection state: text since the last prompt was seen.
#[derive(Default)]
struct Fallback {
    prompt_seen: bool,
    since_prompt: TextCapture,
    submitted_at_ms: Option<u64>,
}

impl Default for CommandTracker {
    fn default() -> Self {
        Self {
            records: VecDeque::new(),
            completed: 0,
            marks_seen: false,
            phase: Phase::Idle,
            cwd: None,
            command_line: None,
            input: TextCapture::default(),
            running: None,
            fallback: Fallback::default(),
        }
    }
}

impl CommandTracker {
    pub(crate) fn records(&self) -> impl Iterator<Item = &CommandRecord> {
        self.records.iter()
    }

    pub(crate) fn completed(&self) -> u64 {
        self.completed
    }

    pub(crate) fn last(&self) -> Option<&CommandRecord> {
        self.records.back()
    }

    pub(crate) fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// True once any OSC 133/633 prompt mark arrived; prompt detection is then off for good.
    pub(crate) fn marks_seen(&self) -> bool {
        self.marks_seen
    }

    /// With marks: the prompt is drawn or being typed at (after A or B, before C).
    pub(crate) fn marked_prompt_showing(&self) -> bool {
        matches!(self.phase, Phase::Prompt | Phase::Input)
    }

    /// Output text as it arrives (ground-state bytes only; escape sequences never reach here).
    pub(crate) fn text(&mut self, bytes: &[u8]) {
        match self.phase {
            Phase::Input => self.input.push(bytes),
            Phase::Output => {
                if let Some(running) = &mut self.running {
                    running.output.push(bytes);
                }
            }
            Phase::Idle | Phase::Prompt => {}
        }
        if !self.marks_seen && self.fallback.prompt_seen {
            let before = self.fallback.since_prompt.line_count();
            self.fallback.since_prompt.push(bytes);
            if before == 0 && self.fallback.since_prompt.line_count() > 0 {
                self.fallback.submitted_at_ms = Some(now_ms());
            }
        }
    }

    pub(crate) fn mark(&mut self, mark: Mark) {
        match mark {
            Mark::Cwd(cwd) => self.cwd = Some(cwd),
            Mark::CommandLine(line) => self.command_line = Some(line),
            Mark::PromptStart => {
                self.marks_seen = true;
                // A prompt while a command still runs means its D never came: finish it unknown.
                self.finish(None);
                self.phase = Phase::Prompt;
            }
            Mark::CommandStart => {
                self.marks_seen = true;
                self.finish(None);
                self.input = TextCapture::default();
                self.phase = Phase::Input;
            }
            Mark::OutputStart => {
                self.marks_seen = true;
                let typed = self.input.text();
                let command = match self.command_line.take() {
                    Some(line) => line,
                    None => typed.lines().last().unwrap_or("").trim().to_string(),
                };
                self.input = TextCapture::default();
                self.running = Some(Running {
                    command,
                    cwd: self.cwd.clone(),
                    started_at_ms: now_ms(),
                    output: TextCapture::default(),
                });
                self.phase = Phase::Output;
            }
            Mark::CommandEnd { exit_code } => {
                self.marks_seen = true;
                self.finish(exit_code);
                self.phase = Phase::Idle;
            }
        }
    }

    fn finish(&mut self, exit_code: Option<i32>) {
        if let Some(running) = self.running.take() {
            self.push(CommandRecord {
                command: running.command,
                output: running.output.text(),
                exit_code,
                cwd: running.cwd,
                started_at_ms: running.started_at_ms,
                finished_at_ms: Some(now_ms()),
            });
        }
        self.command_line = None;
    }

    fn push(&mut self, record: CommandRecord) {
        if self.records.len() == MAX_RECORDS {
            self.records.pop_front();
        }
        self.records.push_back(record);
        self.completed += 1;
    }

    /// Fallback mode: called after each feed with whether a prompt shows at the cursor. A prompt
    /// after at least one finished line closes the command typed at the previous prompt: its first
    /// line is the echoed command, the lines after it are the output, and the unfinished last line is
    /// the new prompt.
    pub(crate) fn prompt_check(&mut self, prompt_showing: bool) {
        if self.marks_seen || !prompt_showing {
            return;
        }
        let fallback = &mut self.fallback;
        if !fallback.prompt_seen {
            fallback.prompt_seen = true;
            fallback.since_prompt = TextCapture::default();
            return;
        }
        if fallback.since_prompt.line_count() == 0 {
            return;
        }
        let capture = std::mem::take(&mut fallback.since_prompt);
        let started_at_ms = fallback.submitted_at_ms.take().unwrap_or_else(now_ms);
        let mut lines = capture.completed_lines();
        let command = lines.next().unwrap_or("").trim().to_string();
        let output = lines.collect::<Vec<_>>().join("\n");
        if command.is_empty() && output.is_empty() {
            return;
        }
        let cwd = self.cwd.clone();
        self.push(CommandRecord {
            command,
            output,
            exit_code: None,
            cwd,
            started_at_ms,
            finished_at_ms: Some(now_ms()),
        });
    }
}

/// The fallback prompt test on the cursor's row: the text before the cursor ends with one of
/// `$ # % ❯` and a space, and nothing but blanks follows the cursor.
pub(crate) fn looks_like_prompt(before_cursor: &str, after_cursor_blank: bool) -> bool {
    if !after_cursor_blank {
        return false;
    }
    let mut chars = before_cursor.chars().rev();
    chars.next() == Some(' ') && matches!(chars.next(), Some('$' | '#' | '%' | '❯'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_marks() {
        let cases: &[(&str, Option<Mark>)] = &[
            ("133;A", Some(Mark::PromptStart)),
            ("133;A;aid=42;cl=m", Some(Mark::PromptStart)),
            ("133;B", Some(Mark::CommandStart)),
            ("133;C", Some(Mark::OutputStart)),
            ("133;D", Some(Mark::CommandEnd { exit_code: None })),
            ("133;D;2", Some(Mark::CommandEnd { exit_code: Some(2) })),
            (
                "133;D;130;aid=42",
                Some(Mark::CommandEnd {
                    exit_code: Some(130),
                }),
            ),
            ("633;D;1", Some(Mark::CommandEnd { exit_code: Some(1) })),
            (
                "633;E;echo a\\x3bb \\\\ c;nonce",
                Some(Mark::CommandLine("echo a;b \\ c".into())),
            ),
            ("633;P;Cwd=/tmp/a\\x3bb", Some(Mark::Cwd("/tmp/a;b".into()))),
            ("633;P;IsWindows=False", None),
            (
                "7;file://host/home/me/my%20dir",
                Some(Mark::Cwd("/home/me/my dir".into())),
            ),
            ("7;file:///tmp", Some(Mark::Cwd("/tmp".into()))),
            ("133;E;x", None),
            ("0;title", None),
            ("133", None),
        ];
        for (body, expected) in cases {
            assert_eq!(parse_mark(body.as_bytes()), *expected, "body {body:?}");
        }
    }

    /// The body of an encoded sequence, as the scanner hands it to [`parse_mark`].
    fn body(sequence: &str) -> &str {
        sequence
            .strip_prefix("\x1b]")
            .and_then(|s| s.strip_suffix('\x07'))
            .unwrap_or_else(|| panic!("not an OSC: {sequence:?}"))
    }

    #[test]
    fn encodes_marks() {
        let cases: &[(IntegrationMark, &str)] = &[
            (IntegrationMark::PromptStart, "\x1b]633;A\x07"),
            (IntegrationMark::CommandStart, "\x1b]633;B\x07"),
            (IntegrationMark::OutputStart, "\x1b]633;C\x07"),
            (IntegrationMark::CommandEnd(None), "\x1b]633;D\x07"),
            (IntegrationMark::CommandEnd(Some(3)), "\x1b]633;D;3\x07"),
            (
                IntegrationMark::CommandLine("a;b \\ c\nd"),
                "\x1b]633;E;a\\x3bb \\\\ c\\x0ad\x07",
            ),
            (
                IntegrationMark::Property("Cwd", "/tmp/é;x"),
                "\x1b]633;P;Cwd=/tmp/é\\x3bx\x07",
            ),
        ];
        for (mark, expected) in cases {
            assert_eq!(mark.encode(), *expected, "{mark:?}");
        }
    }

    /// Encodes `value` as a command line and as a cwd, and parses both back.
    fn assert_round_trip(value: &str) {
        let line = IntegrationMark::CommandLine(value).encode();
        let cwd = IntegrationMark::Property("Cwd", value).encode();
        let parsed = [line, cwd].map(|sequence| parse_mark(body(&sequence).as_bytes()));
        let expected = [
            Some(Mark::CommandLine(value.to_string())),
            Some(Mark::Cwd(value.to_string())),
        ];
        assert_eq!(parsed, expected, "{value:?}");
    }

    #[test]
    fn escaping_round_trips_every_control_character() {
        let controls = (0u32..0x20).chain([0x7f]).chain(0x80..0xa0);
        for code in controls {
            let c = char::from_u32(code).unwrap_or_else(|| panic!("{code:#x}"));
            let value = format!("a{c}b\\;{c}");
            let escaped = escape_633(&value);
            assert!(
                !escaped.chars().any(|e| e.is_control() || e == ';'),
                "{code:#x}: {escaped:?}"
            );
            assert_round_trip(&value);
        }
    }

    #[test]
    fn escaping_keeps_text_that_looks_like_an_escape() {
        for value in ["\\x41", "\\\\", "x\\", "\\x3b", "naïve ✓ 日本", ""] {
            assert_round_trip(value);
        }
    }

    #[test]
    fn text_capture_behaves_like_a_line_printer() {
        let cases: &[(&[&[u8]], &str)] = &[
            (&[b"a\r\nb\r\n"], "a\nb"),
            (&[b"50%\r100%\n"], "100%"),
            (&[b"abc\x08\x08X\n"], "aXc"),
            (&[b"a\tb\n"], "a       b"),
            (&[b"caf\xc3", b"\xa9\n"], "café"),
            (&[b"x\xffy\n"], "x\u{fffd}y"),
            (&[b"bell\x07\n", b"tail"], "bell\ntail"),
        ];
        for (chunks, expected) in cases {
            let mut capture = TextCapture::default();
            chunks.iter().for_each(|c| capture.push(c));
            assert_eq!(capture.text(), *expected);
        }
    }

    #[test]
    fn prompt_test() {
        assert!(looks_like_prompt("user@host:~$ ", true));
        assert!(looks_like_prompt("# ", true));
        assert!(looks_like_prompt("~ ❯ ", true));
        assert!(looks_like_prompt("% ", true));
        assert!(!looks_like_prompt("user@host:~$ ", false));
        assert!(!looks_like_prompt("$ ls", true));
        assert!(!looks_like_prompt("$", true));
        assert!(!looks_like_prompt("", true));
    }

    #[test]
    fn marks_build_records() {
        let mut tracker = CommandTracker::default();
        tracker.mark(Mark::Cwd("/w".into()));
        tracker.mark(Mark::PromptStart);
        tracker.text(b"$ ");
        tracker.mark(Mark::CommandStart);
        assert!(tracker.marked_prompt_showing());
        tracker.text(b"ls -l\r\n");
        tracker.mark(Mark::OutputStart);
        assert!(!tracker.marked_prompt_showing());
        tracker.text(b"a\r\nb\r\n");
        tracker.mark(Mark::CommandEnd { exit_code: Some(0) });
        let record = tracker
            .last()
            .cloned()
            .unwrap_or_else(|| panic!("no record"));
        assert_eq!(record.command, "ls -l");
        assert_eq!(record.output, "a\nb");
        assert_eq!(record.exit_code, Some(0));
        assert_eq!(record.cwd.as_deref(), Some("/w"));
        assert!(record.finished_at_ms.unwrap_or(0) >= record.started_at_ms);
        assert_eq!(tracker.completed(), 1);
    }

    #[test]
    fn records_are_bounded() {
        let mut tracker = CommandTracker::default();
        for i in 0..MAX_RECORDS + 5 {
            tracker.mark(Mark::CommandLine(format!("c{i}")));
            tracker.mark(Mark::OutputStart);
            tracker.mark(Mark::CommandEnd { exit_code: Some(0) });
        }
        assert_eq!(tracker.records().count(), MAX_RECORDS);
        assert_eq!(tracker.completed(), (MAX_RECORDS + 5) as u64);
        assert_eq!(
            tracker.records().next().map(|r| r.command.as_str()),
            Some("c5")
        );
    }
}
