//! [`Capture`]: the run's transcript kept for the minimizer, up to a byte limit. Written from
//! the output thread while the same text streams to the caller; past the limit it stops
//! keeping text and remembers that it overflowed (the minimizer then leaves output unchanged).

use std::sync::Mutex;

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
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends `chunk`, or marks the capture overflowed (and frees it) if it would pass the limit.
    pub fn push(&self, chunk: &str) {
        let mut state = self.state();
        if state.overflowed {
            return;
        }
        if state.text.len() + chunk.len() > self.limit {
            state.overflowed = true;
            state.text = String::new();
            return;
        }
        state.text.push_str(chunk);
    }

    /// The whole transcript, taken out (the capture is left empty), or `None` if it went past
    /// the limit.
    pub fn take_text(&self) -> Option<String> {
        let mut state = self.state();
        (!state.overflowed).then(|| std::mem::take(&mut state.text))
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
    }
}
