//! Properties of `apply_bash_fixups` over generated command lines: it never panics, never takes
//! long (input is capped at 4 KiB and parser-hostile nesting is refused before parsing), only
//! ever removes text, and applying it to its own output changes nothing more.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use shellwright_minimize::apply_bash_fixups;

/// Generous for a debug build: typical commands take well under a millisecond, the worst inputs
/// the limits still let through (8 openers, 16 nested brackets, 4 KiB) a few tens.
const CALL_BUDGET: Duration = Duration::from_millis(500);

/// Command lines made of shell pieces: words, pipes into head/tail with counts, redirections,
/// separators, groups, substitutions, quotes and the keywords the rules watch for.
fn command_line() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => "[a-z][a-z0-9._/-]{0,6}",
        2 => (prop::sample::select(vec!["head", "tail"]), 0u32..100_000, 0usize..6).prop_map(
            |(filter, n, form)| {
                let args = [format!("-{n}"), format!("-n {n}"), format!("-n{n}"),
                    format!("--lines={n}"), "-q".to_string(), format!("+{n}")];
                format!("| {filter} {}", args[form])
            }
        ),
        1 => prop::sample::select(vec![
            "|", "|&", "&&", "||", ";", "&", "2>&1", ">f", "<f", "2>/dev/null", "(", ")", "{", "}",
            "$(", "`", "'", "\"", "exec", "yes", "tail -f", "case", "in", "esac", "!", "\n", "#",
        ]).prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.join(" "))
}

fn timed(input: &str) -> (shellwright_minimize::Fixups, Duration) {
    let start = Instant::now();
    let fixups = apply_bash_fixups(input);
    (fixups, start.elapsed())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn fixups_only_remove_and_reach_a_fixpoint(input in command_line()) {
        let (once, cost) = timed(&input);
        prop_assert!(cost < CALL_BUDGET, "{input:?} took {cost:?}");
        if once.stripped.is_empty() {
            prop_assert_eq!(&once.command, &input);
        } else {
            prop_assert!(once.command.len() < input.len());
        }
        let (twice, cost) = timed(&once.command);
        prop_assert!(cost < CALL_BUDGET);
        prop_assert_eq!(&twice.command, &once.command, "not idempotent on {:?}", input);
        prop_assert!(twice.stripped.is_empty());
    }

    #[test]
    fn arbitrary_text_is_bounded_in_time(input in "\\PC{0,4200}") {
        let (fixups, cost) = timed(&input);
        prop_assert!(cost < CALL_BUDGET, "{} chars took {:?}", input.len(), cost);
        if fixups.stripped.is_empty() {
            prop_assert_eq!(fixups.command, input);
        }
    }
}

#[test]
fn nesting_at_and_past_the_limits_is_bounded_in_time() {
    let inputs = [
        format!("{} ls | head -5", "(".repeat(8)),
        format!("{} ls | head -5", "(".repeat(2000)),
        format!("echo {}x{} | head -5", "$(".repeat(16), ")".repeat(16)),
        format!("echo {}x | head -5", "${".repeat(1500)),
        format!("{} | head -5", "a ".repeat(2040)),
    ];
    for input in &inputs {
        let (fixups, cost) = timed(input);
        assert!(cost < CALL_BUDGET, "{} bytes took {cost:?}", input.len());
        assert!(fixups.command.len() <= input.len());
    }
}
