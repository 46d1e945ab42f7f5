//! [`Mirror`]: a read-only terminal view of a shell's runs, written in VS Code's shell-integration
//! dialect (OSC 633), so an IDE's terminal shows each command with its prompt, its output as it
//! streams and its exit code, and marks them as commands.
//!
//! The stream a view receives: `P;Cwd=<cwd>` and `P;HasRichCommandDetection=True`; then every
//! entry of the [`History`](crate::History) replayed — `A` + prompt + `B`, `P;Cwd` of where it
//! ran, `E;<command>` + the command echoed (control characters in caret notation) + CR LF + `C`,
//! the output with LF → CR LF, then `D;<exit>` (`D` alone after a line saying the run was
//! cancelled or timed out) and `P;Cwd` of where the run left the session when it moved it; then the running run's output so far; then everything live, in the
//! same form. A transcript longer than the view's budget is replayed from its end, after a line
//! saying how much was dropped. Replay and live stream meet at one point (see
//! [`History::observe`](crate::History::observe)): nothing is missing or shown twice.

use std::path::{Path, PathBuf};

use shellwright_term::IntegrationMark;

use crate::history::{HistoryEntry, HistoryEvent, Observation, tail_within};
use crate::persistent::PersistentShell;
use shellwright_proc::Outcome;

/// The prompt drawn between `A` and `B`.
pub const PROMPT: &str = "$ ";

/// What a view receives after its opening: each piece of the stream, in order.
pub type DataHandler = Box<dyn FnMut(String) + Send>;

/// Replay budget per entry for a view of `scrollback` lines: 200 bytes a line, the lines clamped
/// to 100..=10 000.
pub fn output_budget(scrollback: i64) -> usize {
    scrollback.clamp(100, 10_000) as usize * 200
}

/// An open view of a shell. Dropping it (or [`Mirror::close`]) stops the stream; the shell is
/// never touched.
pub struct Mirror {
    shell: PersistentShell,
    observation: Option<Observation>,
}

impl Mirror {
    /// Opens a view of `shell` whose replay keeps at most `budget` bytes of each transcript.
    /// Returns the view and its opening (properties, replay, prompt); everything after it goes to
    /// `on_live`, from the runs' threads. The opening is returned rather than handed over so the
    /// caller may pass it on without holding the history's lock.
    pub fn open(
        shell: &PersistentShell,
        budget: usize,
        mut on_live: DataHandler,
    ) -> (Self, String) {
        let mut opening = String::new();
        let observation = shell.history().observe(|entries| {
            let mut writer = StreamWriter::new(budget);
            opening = writer.opening(entries, &current_dir(entries));
            Box::new(move |event| {
                let data = writer.event(event);
                if !data.is_empty() {
                    on_live(data);
                }
            })
        });
        let view = Self {
            shell: shell.clone(),
            observation: Some(observation),
        };
        (view, opening)
    }

    /// Input typed into the view: Ctrl+C (`"\x03"`) cancels the running run and is accepted;
    /// anything else is refused, the view being read-only.
    pub fn handle_input(&self, data: &str) -> bool {
        if data != "\x03" {
            return false;
        }
        self.shell.interrupt();
        true
    }

    /// Stops the stream (idempotent).
    pub fn close(&mut self) {
        self.observation = None;
    }
}

fn current_dir(entries: &[HistoryEntry]) -> PathBuf {
    match entries.last() {
        Some(entry) => entry.cwd.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    }
}

/// Turns history into terminal output, remembering where the terminal is: whether a prompt is
/// showing and whether the cursor is at the start of a line.
struct StreamWriter {
    budget: usize,
    prompt_showing: bool,
    at_line_start: bool,
}

impl StreamWriter {
    fn new(budget: usize) -> Self {
        Self {
            budget,
            prompt_showing: false,
            at_line_start: true,
        }
    }

    /// The opening of a view: its properties, the replay, and a prompt unless a run is going on.
    fn opening(&mut self, entries: &[HistoryEntry], cwd: &Path) -> String {
        let mut out = property("Cwd", &cwd.to_string_lossy());
        out.push_str(&property("HasRichCommandDetection", "True"));
        for entry in entries {
            self.replay(&mut out, entry);
        }
        if entries.last().is_none_or(|e| !e.is_running()) {
            self.prompt(&mut out);
        }
        out
    }

    fn event(&mut self, event: &HistoryEvent) -> String {
        let mut out = String::new();
        match event {
            HistoryEvent::Started(entry) => self.started(&mut out, entry),
            HistoryEvent::Output(text) => self.output(&mut out, text),
            HistoryEvent::Finished(entry) => {
                self.finished(&mut out, entry);
                self.prompt(&mut out);
            }
        }
        out
    }

    fn replay(&mut self, out: &mut String, entry: &HistoryEntry) {
        self.started(out, entry);
        let (output, cut) = tail_within(&entry.output, self.budget);
        let dropped = entry.truncated_bytes + cut as u64;
        if dropped > 0 {
            out.push_str(&truncation_notice(dropped));
        }
        self.output(out, output);
        if !entry.is_running() {
            self.finished(out, entry);
            self.prompt(out);
        }
    }

    fn prompt(&mut self, out: &mut String) {
        if !self.prompt_showing {
            out.push_str(&IntegrationMark::PromptStart.encode());
            out.push_str(PROMPT);
            out.push_str(&IntegrationMark::CommandStart.encode());
            self.prompt_showing = true;
        }
    }

    fn started(&mut self, out: &mut String, entry: &HistoryEntry) {
        self.prompt(out);
        out.push_str(&property("Cwd", &entry.cwd.to_string_lossy()));
        out.push_str(&IntegrationMark::CommandLine(&entry.command).encode());
        push_echo(out, &entry.command);
        out.push_str("\r\n");
        out.push_str(&IntegrationMark::OutputStart.encode());
        self.prompt_showing = false;
        self.at_line_start = true;
    }

    fn output(&mut self, out: &mut String, text: &str) {
        if let Some(last) = text.chars().last() {
            push_lines(out, text);
            self.at_line_start = last == '\n';
        }
    }

    fn finished(&mut self, out: &mut String, entry: &HistoryEntry) {
        if !self.at_line_start {
            out.push_str("\r\n");
            self.at_line_start = true;
        }
        let outcome = entry.outcome;
        if let Some(note) = outcome.and_then(stop_note) {
            out.push_str(&format!("[Command {note}]\r\n"));
        }
        let exit_code = outcome.and_then(Outcome::exit_code);
        out.push_str(&IntegrationMark::CommandEnd(exit_code).encode());
        // A `cd` moved the session: the view's directory is where the next run starts.
        if let Some(end_cwd) = entry.end_cwd.as_ref().filter(|end| **end != entry.cwd) {
            out.push_str(&property("Cwd", &end_cwd.to_string_lossy()));
        }
    }
}

/// Why a stopped run ended, for the line before its `D`.
fn stop_note(outcome: Outcome) -> Option<&'static str> {
    match outcome {
        Outcome::Cancelled => Some("cancelled"),
        Outcome::TimedOut => Some("timed out"),
        Outcome::Exited(_) | Outcome::Signaled(_) => None,
    }
}

fn property(name: &str, value: &str) -> String {
    IntegrationMark::Property(name, value).encode()
}

/// The first line of a replay whose transcript was cut: the bytes dropped, in KB (at least 1).
fn truncation_notice(dropped: u64) -> String {
    let kb = dropped.div_ceil(1024);
    format!("[Terminal output truncated: ~{kb} KB dropped from beginning]\r\n")
}

/// The command as a line editor echoes it: lines on their own rows, tabs kept, other control
/// characters in caret notation (`^C`, `^[`, `^?`), so a command can never act on the terminal or
/// forge a mark in the view.
fn push_echo(out: &mut String, command: &str) {
    for c in command.chars() {
        match c {
            '\n' => out.push_str("\r\n"),
            '\t' => out.push('\t'),
            '\x7f' => out.push_str("^?"),
            c if c.is_control() => {
                let code = u32::from(c);
                // A C1 control is the 7-bit ESC followed by code − 0x40.
                let (prefix, shown) = if code >= 0x80 {
                    ("^[", code - 0x40)
                } else {
                    ("^", code + 0x40)
                };
                out.push_str(prefix);
                out.push(char::from_u32(shown).unwrap_or('?'));
            }
            c => out.push(c),
        }
    }
}

/// `text` with every LF as CR LF, as a terminal needs it to start the next line at column 0.
fn push_lines(out: &mut String, text: &str) {
    let mut lines = text.split('\n');
    if let Some(first) = lines.next() {
        out.push_str(first);
    }
    for line in lines {
        out.push_str("\r\n");
        out.push_str(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::History;
    use shellwright_term::{Terminal, TerminalOptions};

    fn entry(id: u64, command: &str, output: &str, outcome: Option<Outcome>) -> HistoryEntry {
        HistoryEntry {
            id,
            command: command.into(),
            cwd: PathBuf::from("/w"),
            end_cwd: Some(PathBuf::from("/w")),
            output: output.into(),
            truncated_bytes: 0,
            outcome,
            started_at_ms: 1,
            finished_at_ms: Some(2),
        }
    }

    fn exited(code: i32) -> Option<Outcome> {
        Some(Outcome::Exited(code))
    }

    fn commands(stream: &str) -> Vec<(String, String, Option<i32>, Option<String>)> {
        let mut terminal = Terminal::new(TerminalOptions::default());
        let _ = terminal.feed(stream.as_bytes());
        terminal
            .commands()
            .into_iter()
            .map(|r| (r.command, r.output, r.exit_code, r.cwd))
            .collect()
    }

    #[test]
    fn writes_the_vs_code_sequences() {
        let entries = [entry(1, "echo a;b", "a\nb\n", exited(0))];
        let stream = StreamWriter::new(1000).opening(&entries, Path::new("/w"));
        assert_eq!(
            stream,
            "\x1b]633;P;Cwd=/w\x07\x1b]633;P;HasRichCommandDetection=True\x07\
             \x1b]633;A\x07$ \x1b]633;B\x07\x1b]633;P;Cwd=/w\x07\x1b]633;E;echo a\\x3bb\x07\
             echo a;b\r\n\x1b]633;C\x07a\r\nb\r\n\x1b]633;D;0\x07\
             \x1b]633;A\x07$ \x1b]633;B\x07"
        );
    }

    #[test]
    fn a_run_that_moved_the_session_leaves_the_view_where_it_ended() {
        let mut moved = entry(1, "cd /srv", "", exited(0));
        moved.end_cwd = Some(PathBuf::from("/srv"));
        let stream = StreamWriter::new(1000).opening(&[moved], Path::new("/srv"));
        assert!(
            stream
                .ends_with("\x1b]633;D;0\x07\x1b]633;P;Cwd=/srv\x07\x1b]633;A\x07$ \x1b]633;B\x07")
        );
        let mut terminal = Terminal::new(TerminalOptions::default());
        let _ = terminal.feed(stream.as_bytes());
        assert_eq!(terminal.cwd(), Some("/srv"));
    }

    #[test]
    fn a_terminal_reads_back_the_commands() {
        let stopped = |cancelled| {
            Some(if cancelled {
                Outcome::Cancelled
            } else {
                Outcome::TimedOut
            })
        };
        let entries = [
            entry(1, "printf 'x\\\\y'; echo\ntrue", "x\\y\n", exited(0)),
            entry(2, "exit 3", "", exited(3)),
            entry(3, "printf no-newline", "no-newline", exited(0)),
            entry(4, "sleep 9", "", stopped(true)),
            entry(5, "sleep 8", "late\n", stopped(false)),
            entry(6, "echo 日本", "日本\n", None),
        ];
        let stream = StreamWriter::new(1000).opening(&entries, Path::new("/w"));
        let cwd = Some("/w".to_string());
        assert_eq!(
            commands(&stream),
            [
                (
                    "printf 'x\\\\y'; echo\ntrue".into(),
                    "x\\y".into(),
                    Some(0),
                    cwd.clone()
                ),
                ("exit 3".into(), "".into(), Some(3), cwd.clone()),
                (
                    "printf no-newline".into(),
                    "no-newline".into(),
                    Some(0),
                    cwd.clone()
                ),
                (
                    "sleep 9".into(),
                    "[Command cancelled]".into(),
                    None,
                    cwd.clone()
                ),
                (
                    "sleep 8".into(),
                    "late\n[Command timed out]".into(),
                    None,
                    cwd.clone()
                ),
                ("echo 日本".into(), "日本".into(), None, cwd),
            ]
        );
    }

    #[test]
    fn a_long_transcript_is_replayed_from_its_end() {
        let mut long = entry(1, "yes", &"y\n".repeat(600), exited(0));
        long.truncated_bytes = 2000;
        let stream = StreamWriter::new(1000).opening(&[long], Path::new("/w"));
        let records = commands(&stream);
        // 2000 dropped by the history, 200 more by the view's budget: 2200 bytes, ~3 KB.
        let expected = format!(
            "[Terminal output truncated: ~3 KB dropped from beginning]\n{}",
            ["y"; 500].join("\n")
        );
        assert_eq!(records[0].1, expected);
    }

    #[test]
    fn live_events_continue_the_replay() {
        let history = History::new(crate::history::HistoryLimits {
            entries: 10,
            ..Default::default()
        });
        history.start("one", PathBuf::from("/w"));
        history.output(&"first ".into());
        let mut writer = StreamWriter::new(1000);
        let mut stream = writer.opening(&history.entries(), Path::new("/w"));
        let record = |stream: &mut String, writer: &mut StreamWriter, event| {
            stream.push_str(&writer.event(&event));
        };
        record(&mut stream, &mut writer, HistoryEvent::Output("second\n"));
        let done = entry(1, "one", "", exited(0));
        record(&mut stream, &mut writer, HistoryEvent::Finished(&done));
        let two = entry(2, "two", "", None);
        record(&mut stream, &mut writer, HistoryEvent::Started(&two));
        let mut terminal = Terminal::new(TerminalOptions::default());
        let _ = terminal.feed(stream.as_bytes());
        let records = terminal.commands();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].output, "first second");
        assert_eq!(records[0].exit_code, Some(0));
        // The second command is running: its prompt and echo are on screen.
        assert!(!terminal.prompt_showing());
        let screen = terminal.screen();
        assert_eq!(&screen.lines[..4], ["$ one", "first second", "$ two", ""]);
    }

    #[test]
    fn an_echoed_command_cannot_act_on_the_terminal() {
        let controls = (1u32..0x20).chain([0x7f]).chain(0x80..0xa0);
        let mut command: String = controls.filter_map(char::from_u32).collect();
        command.push_str("\x1b]633;D;7\x07 echo forged");
        let entries = [entry(1, &command, "ok\n", exited(0))];
        let stream = StreamWriter::new(1000).opening(&entries, Path::new("/w"));
        let mut terminal = Terminal::new(TerminalOptions {
            cols: 200,
            ..TerminalOptions::default()
        });
        let _ = terminal.feed(stream.as_bytes());
        let records = terminal.commands();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].command, command);
        assert_eq!(records[0].output, "ok");
        assert_eq!(records[0].exit_code, Some(0));
        let screen = terminal.screen();
        // The tab moves the cursor and leaves no text; the LF starts the next row.
        assert_eq!(screen.lines[0], "$ ^A^B^C^D^E^F^G^H");
        assert_eq!(
            screen.lines[1],
            "^K^L^M^N^O^P^Q^R^S^T^U^V^W^X^Y^Z^[^\\^]^^^_^?^[@^[A^[B^[C^[D^[E^[F^[G^[H^[I^[J^[K^[L^[M^[N^[O\
             ^[P^[Q^[R^[S^[T^[U^[V^[W^[X^[Y^[Z^[[^[\\^[]^[^^[_^[]633;D;7^G echo forged"
        );
    }

    #[test]
    fn budget_follows_scrollback() {
        assert_eq!(output_budget(0), 20_000);
        assert_eq!(output_budget(1000), 200_000);
        assert_eq!(output_budget(1_000_000), 2_000_000);
    }
}
