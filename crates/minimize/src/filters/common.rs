//! What several filters share: the generic fallback, and dropping kinds of lines with a count
//! note in their place.

use crate::text::{Output, Transcript, lines, squeeze_repeats, squeeze_transcript};

/// Runs of more same-shaped lines than this are collapsed by the generic fallback.
const GENERIC_SIMILAR_RUN: usize = 20;

/// The fallback for any other program: repeats and long runs of same-shaped lines collapsed.
pub fn generic(cleaned: &Transcript) -> String {
    squeeze_transcript(cleaned, Some(GENERIC_SIMILAR_RUN))
}

/// Drops the lines `drop` selects (never an important one), replacing each run of two or more
/// with a count note naming `what` (a lone line goes without a note: the note would be longer);
/// then the generic squeeze of exact repeats.
pub fn drop_lines(cleaned: &Transcript, what: &str, drop: impl Fn(&str) -> bool) -> String {
    drop_kinds(cleaned, |line| drop(line).then_some(what))
}

/// [`drop_lines`] for several kinds of line in one pass: `kind` names what a line to drop is,
/// and each run of one kind gets its own note. Kinds that alternate line by line (a status line,
/// a passing test, a status line…) are runs of one and so leave no note, where passes one kind
/// at a time would have joined the leftovers under one count; no line that matters is lost, only
/// the count of what was dropped.
pub fn drop_kinds<'k>(cleaned: &Transcript, kind: impl Fn(&str) -> Option<&'k str>) -> String {
    let mut out = Output::with_capacity(cleaned.len());
    let mut run: Option<(&str, usize)> = None;
    let note = |out: &mut Output, run: Option<(&str, usize)>| {
        if let Some((what, dropped)) = run.filter(|(_, dropped)| *dropped > 1) {
            out.omitted(dropped, what);
        }
    };
    for line in lines(cleaned) {
        let dropped_as = kind(line).filter(|_| !cleaned.is_important(line));
        if let (Some(what), Some((current, dropped))) = (dropped_as, run.as_mut())
            && what == *current
        {
            *dropped += 1;
            continue;
        }
        note(&mut out, run.take());
        match dropped_as {
            Some(what) => run = Some((what, 1)),
            None => out.line(line),
        }
    }
    note(&mut out, run);
    squeeze_repeats(out.finish())
}
