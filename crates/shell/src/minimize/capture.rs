//! [`Capture`]: the run's transcript kept for the minimizer, up to a byte limit. Written from
//! the output thread while the same text streams to the caller; past the limit it stops
//! keeping text and remembers that it overflowed (the minimizer then leaves output unchanged).
//!
//! The chunks are kept as they come and joined once, into a buffer of the exact size, when the
//! run is over: a string grown chunk by chunk is copied at every doubling and touches twice the
//! memory, which on a megabyte cost more than minimizing it. A chunk nobody else needs is moved
//! in ([`Capture::push_owned`]) rather than copied.

use std::sync::Mutex;

#[derive(Debug)]
pub struct Capture {
    limit: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    chunks: Vec<String>,
    len: usize,
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
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends a copy of `chunk` (see [`push_owned`](Self::push_owned)).
    pub fn push(&self, chunk: &str) {
        self.push_owned(chunk.to_string());
    }

    /// Appends `chunk`, or marks the capture overflowed (and frees it) if it would pass the limit.
    pub fn push_owned(&self, chunk: String) {
        let mut state = self.state();
        if state.overflowed || chunk.is_empty() {
            return;
        }
        if state.len + chunk.len() > self.limit {
            state.overflowed = true;
            state.chunks = Vec::new();
            return;
        }
        state.len += chunk.len();
        state.chunks.push(chunk);
    }

    /// The whole transcript, taken out (the capture is left empty), or `None` if it went past
    /// the limit.
    pub fn take_text(&self) -> Option<String> {
        let mut state = self.state();
        if state.overflowed {
            return None;
        }
        state.len = 0;
        let mut chunks = std::mem::take(&mut state.chunks);
        if chunks.len() <= 1 {
            return Some(chunks.pop().unwrap_or_default());
        }
        Some(chunks.concat())
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
        capture.push_owned("moved".to_string());
        assert_eq!(capture.take_text().as_deref(), Some("moved"));
    }
}
