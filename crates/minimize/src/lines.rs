//! [`LineScan`]: which lines of a long text a pattern matches somewhere in, found by walking a
//! compiled DFA over several stretches of the text at once.
//!
//! A DFA step is a table load that depends on the state the previous step loaded, so one walk
//! over a text runs at the latency of a load per byte, whatever the pattern (about 1.6 ms per MB
//! here, for `regex` and a dense DFA alike), and a pattern that is a case-insensitive word list
//! has no literal prefix for a SIMD prefilter to skip ahead with. Four walks over four quarters
//! of the text, stepped together, are four independent chains the CPU runs side by side: the same
//! work in about a third of the time.
//!
//! Each quarter starts at a line start, and the pattern must not match across a line end (`\n`):
//! then every line is searched whole by exactly one walk, and a walk that found a match in a line
//! skips to the next one, restarting in the state of a line's start.

use regex_automata::dfa::{Automaton, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;

/// Walks stepped together: four fill the pipeline here; more gained nothing measurable.
const LANES: usize = 4;

/// A pattern compiled for [`matching_lines`](Self::matching_lines).
#[derive(Debug)]
pub struct LineScan {
    dfa: dense::DFA<Vec<u32>>,
    at_text_start: StateID,
    at_line_start: StateID,
}

/// One walk: its stretch of the text, where it is, and the line starts it found.
struct Lane {
    pos: usize,
    end: usize,
    state: StateID,
    found: Vec<usize>,
}

impl LineScan {
    /// Compiles `pattern`, which must not match across a `\n`: `(?m)` anchors are fine, `\s`
    /// or a negated class that takes in `\n` is not.
    pub fn new(pattern: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        // Acceleration makes more states "special", each of which stops the lanes' common step.
        let config = dense::Config::new().minimize(false).accelerate(false);
        let dfa = dense::Builder::new().configure(config).build(pattern)?;
        let start = |look_behind| start::Config::new().look_behind(look_behind);
        Ok(Self {
            at_text_start: dfa.start_state(&start(None))?,
            at_line_start: dfa.start_state(&start(Some(b'\n')))?,
            dfa,
        })
    }

    /// Whether `line`, which holds no `\n`, holds a match: one walk, for a single line.
    pub fn matches(&self, line: &str) -> bool {
        let mut state = self.at_text_start;
        for &byte in line.as_bytes() {
            state = self.dfa.next_state(state, byte);
            if self.dfa.is_special_state(state) {
                return true;
            }
        }
        self.dfa.is_match_state(self.dfa.next_eoi_state(state))
    }

    /// The byte offsets of the lines of `text` (split at `\n`) that hold a match, ascending.
    pub fn matching_lines(&self, text: &str) -> Vec<usize> {
        let bytes = text.as_bytes();
        let mut lanes = self.lanes(bytes);
        loop {
            let common = lanes
                .iter()
                .map(|lane| lane.end - lane.pos)
                .min()
                .unwrap_or(0);
            if common == 0 {
                break;
            }
            self.step_together(bytes, &mut lanes, common);
            for lane in &mut lanes {
                self.settle(bytes, lane);
            }
        }
        for lane in &mut lanes {
            self.walk_alone(bytes, lane);
        }
        lanes.into_iter().flat_map(|lane| lane.found).collect()
    }

    /// The text cut into [`LANES`] stretches, each starting at a line start (some may be empty).
    fn lanes(&self, bytes: &[u8]) -> [Lane; LANES] {
        let mut starts = [0; LANES];
        for i in 1..LANES {
            let cut = (bytes.len() / LANES * i).max(starts[i - 1]);
            starts[i] = memchr::memchr(b'\n', &bytes[cut..]).map_or(bytes.len(), |nl| cut + nl + 1);
        }
        std::array::from_fn(|i| Lane {
            pos: starts[i],
            end: starts.get(i + 1).copied().unwrap_or(bytes.len()),
            state: if i == 0 {
                self.at_text_start
            } else {
                self.at_line_start
            },
            found: Vec::new(),
        })
    }

    /// Steps every lane over at most `count` bytes (all have that many left), stopping after the
    /// step that brought any of them to a special state (a match, mostly).
    fn step_together(&self, bytes: &[u8], lanes: &mut [Lane; LANES], count: usize) {
        let chunks: [&[u8]; LANES] = std::array::from_fn(|i| &bytes[lanes[i].pos..][..count]);
        let mut states: [StateID; LANES] = std::array::from_fn(|i| lanes[i].state);
        let mut read = 0;
        while read < count {
            let mut special = false;
            for (state, chunk) in states.iter_mut().zip(&chunks) {
                *state = self.dfa.next_state(*state, chunk[read]);
                special |= self.dfa.is_special_state(*state);
            }
            read += 1;
            if special {
                break;
            }
        }
        for (lane, state) in lanes.iter_mut().zip(states) {
            lane.pos += read;
            lane.state = state;
        }
    }

    /// The rest of `lane`, stepped on its own; then, for the text's last stretch, its end.
    fn walk_alone(&self, bytes: &[u8], lane: &mut Lane) {
        while lane.pos < lane.end {
            lane.state = self.dfa.next_state(lane.state, bytes[lane.pos]);
            lane.pos += 1;
            self.settle(bytes, lane);
        }
        // A match that ends the text shows only on the end-of-input step (a DFA reports a match
        // one byte late); elsewhere the `\n` that closes a stretch already showed it.
        if lane.end == bytes.len() && lane.pos == lane.end {
            let last = self.dfa.next_eoi_state(lane.state);
            if self.dfa.is_match_state(last) {
                self.found(bytes, lane, bytes.len());
            }
        }
    }

    /// Records the line of a match the lane's last step reported, and moves the lane to the next
    /// line. A dead or quit state (not expected from these patterns) counts as a match: a line
    /// found in error only costs its caller a closer look.
    fn settle(&self, bytes: &[u8], lane: &mut Lane) {
        // Start states are special only when specialized, which `new` does not ask for.
        if self.dfa.is_special_state(lane.state) {
            // The step that reported the match read the byte after it: the match ends there.
            self.found(bytes, lane, lane.pos - 1);
        }
    }

    /// Records the line that ends with the match ending at `match_end` (exclusive), and moves
    /// `lane` past that line.
    fn found(&self, bytes: &[u8], lane: &mut Lane, match_end: usize) {
        let (line_start, line_end) = line_bounds(bytes, match_end.saturating_sub(1));
        if lane.found.last() != Some(&line_start) {
            lane.found.push(line_start);
        }
        // A stretch ends just past a `\n`, or at the text's end: the line ends within it.
        lane.pos = (line_end + 1).min(lane.end);
        lane.state = self.at_line_start;
    }
}

/// The start and end (before its `\n`) of the line of `bytes` that holds byte `at`.
pub fn line_bounds(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PATTERN: &str = r"(?m)(?i-u:error|fail|warn)|-->|^[eE]|✗|[0-9] passed";

    static REGEX: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(PATTERN).expect("test pattern"));

    /// The answer the scan must give: each line searched on its own.
    fn line_by_line(text: &str) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            if REGEX.is_match(line.strip_suffix('\n').unwrap_or(line)) {
                starts.push(start);
            }
            start += line.len();
        }
        starts
    }

    /// Compiled once: a debug build takes a while to compile a DFA.
    static SCAN: std::sync::LazyLock<LineScan> =
        std::sync::LazyLock::new(|| LineScan::new(PATTERN).expect("test pattern"));

    fn scan(text: &str) -> Vec<usize> {
        SCAN.matching_lines(text)
    }

    #[test]
    fn finds_matches_wherever_they_sit_in_a_line() {
        assert_eq!(scan(""), Vec::<usize>::new());
        assert_eq!(scan("\n\n"), Vec::<usize>::new());
        assert_eq!(scan("ERROR"), vec![0]);
        assert_eq!(scan("ok\nsome error\nok"), vec![3]);
        assert_eq!(scan("ok\nends in a warn"), vec![3]);
        assert_eq!(scan("ok\nends in a warn\n"), vec![3]);
        assert_eq!(scan("E   assert\n  E no\nx E\n"), vec![0]);
        assert_eq!(scan("a\n✗ b\n3 passed\n32 failed"), vec![2, 8, 17]);
        // Two matches in a line name it once; a match right before `\n` names its own line.
        assert_eq!(scan("fail fail\nwarn\nx"), vec![0, 10]);
    }

    #[test]
    fn a_long_text_is_cut_into_lanes_that_each_find_their_lines() {
        let mut text = String::new();
        for i in 0..2000 {
            let line = match i % 7 {
                0 => "test parser::error_recovery ... ok",
                3 => "Error: the lane boundary may fall here",
                5 => "   --> src/lib.rs:3:5",
                _ => "test parser::round_trip ... ok",
            };
            text.push_str(line);
            text.push('\n');
        }
        assert_eq!(scan(&text), line_by_line(&text));
    }

    proptest! {
        #[test]
        fn agrees_with_a_search_of_each_line(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("error"), Just("Fail"), Just("WARN"), Just("-->"), Just("E"), Just("e"),
                    Just("✗"), Just("7 passed"), Just("\n"), Just("\n"), Just(" "), Just("x"),
                    Just("ok"), Just("é"), Just("-"), Just("7"), Just("pass"),
                ],
                0..400,
            )
        ) {
            let text = parts.concat();
            prop_assert_eq!(scan(&text), line_by_line(&text));
            for line in text.split('\n') {
                prop_assert_eq!(SCAN.matches(line), !line_by_line(line).is_empty(), "{:?}", line);
            }
        }
    }
}
