//! [`Capture`]: the run's transcript kept for the minimizer, up to a byte limit. Written from
//! the output thread while the same text streams to the caller; past the limit it stops
//! keeping text and remembers that it overflowed (the minimizer then leaves output unchanged).
//!
//! The text is appended to one buffer that reserves room for [`RESERVED`] bytes (or the limit,
//! if smaller) at its first chunk. The reservation is address space only: a page costs when the
//! text reaches it, so a short transcript pays for a short one. A string grown chunk by chunk
//! would be copied at every doubling, and chunks kept apart and joined at the end were copied
//! once more into fresh memory; on a megabyte either cost more than minimizing it.

use shellwright_io::lock;
use std::sync::Mutex;

/// Room reserved for the transcript up front: text up to this size is never moved.
const RESERVED: usize = 8 << 20;

#[derive(Debug)]
pub struct Capture {
    limit: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    text: String,
    overflowed: bool,
}

impl Capture {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Appends `chunk`, or marks the capture overflowed (and frees it) if it would pass the limit.
    pub fn push(&self, chunk: &str) {
        let mut state = self.state();
        if state.overflowed || chunk.is_empty() {
            return;
        }
        if state.text.len() + chunk.len() > self.limit {
            state.overflowed = true;
            state.text = String::new();
            return;
        }
        if state.text.capacity() == 0 {
            state.text.reserve(self.limit.min(RESERVED));
        }
        state.text.push_str(chunk);
    }

    /// The whole transcript, taken out (the capture is left empty), or `None` if it went past
    /// the limit.
    pub fn take_text(&self) -> Option<String> {
        let mut state = self.state();
        if state.overflowed {
            return None;
        }
        let mut text = std::mem::take(&mut state.text);
        // Gives back the reservation's untouched rest (a reservation of megabytes is its own
        // mapping, which shrinks in place).
        text.shrink_to_fit();
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_text_up_to_the_limit_and_no_part_past_it() {
        let capture = Capture::new(10);
        capture.push("hello ");
        capture.push("four");
        capture.push("!");
        assert_eq!(capture.take_text(), None);
        capture.push("");
        assert_eq!(capture.take_text(), None);
        let capture = Capture::new(10);
        capture.push("hello ");
        capture.push("four");
        assert_eq!(capture.take_text().as_deref(), Some("hello four"));
        assert_eq!(capture.take_text().as_deref(), Some(""));
        capture.push("again");
        assert_eq!(capture.take_text().as_deref(), Some("again"));
    }
}
