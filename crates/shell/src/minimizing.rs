//! The output minimizer around a run: the transcript captured (and prepared) as it streams, and
//! rewritten by `shellwright-minimize` into the run's result when the run ends. Every front end
//! gets the same [`RunResult::minimized`] by asking for it in the [`RunRequest`].

use std::sync::Arc;

use shellwright_minimize::{Capture, Minimizer};

use crate::output::ChunkHandler;
use crate::session::{RunRequest, RunResult};

/// A run's minimizer and the transcript captured for it.
pub(crate) struct Minimizing {
    minimizer: Arc<Minimizer>,
    capture: Arc<Capture>,
    command: String,
}

/// Wraps `on_chunk` so that the transcript is captured for the request's minimizer, if it has
/// one; the capture is what [`Minimizing::finish`] rewrites.
pub(crate) fn capture(
    request: &RunRequest,
    mut on_chunk: ChunkHandler,
) -> (ChunkHandler, Option<Minimizing>) {
    let Some(minimizer) = &request.minimizer else {
        return (on_chunk, None);
    };
    let capture = Arc::new(minimizer.capture());
    let captured = Arc::clone(&capture);
    // The chunk goes to the caller first: the capture prepares the lines it completes.
    let wrapped: ChunkHandler = Box::new(move |chunk| {
        on_chunk(chunk.clone());
        captured.push(&chunk);
    });
    let minimizing = Minimizing {
        minimizer: Arc::clone(minimizer),
        capture,
        command: request.command.clone(),
    };
    (wrapped, Some(minimizing))
}

impl Minimizing {
    /// Puts the minimizer's rewrite of the captured transcript into `result`, when a filter
    /// rewrote it (a stopped run, an overflowed capture and an unknown producer are left alone).
    pub fn finish(&self, result: &mut RunResult) {
        result.minimized =
            self.minimizer
                .minimize_capture(&self.command, result.exit_code(), &self.capture);
    }
}

/// `outcome`, with the minimizer's rewrite put into its result when there is one.
pub(crate) fn finished<E>(
    minimizing: Option<&Minimizing>,
    outcome: Result<RunResult, E>,
) -> Result<RunResult, E> {
    outcome.map(|mut result| {
        if let Some(minimizing) = minimizing {
            minimizing.finish(&mut result);
        }
        result
    })
}
