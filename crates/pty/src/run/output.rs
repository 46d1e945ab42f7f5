//! [`PtyOutput`]: where a run's terminal output goes.

/// Receives the terminal's output in order, on the thread that reads it (the run's I/O thread, or
/// a [`ReadDriver`]'s).
pub trait PtyOutput: Send + 'static {
    /// Every byte read from the terminal, in arrival order.
    fn bytes(&mut self, chunk: &[u8]);
    /// Called once after the last read, before the run's result is published.
    fn finish(&mut self) {}
}

impl<F: FnMut(&[u8]) + Send + 'static> PtyOutput for F {
    fn bytes(&mut self, chunk: &[u8]) {
        self(chunk)
    }
}
