//! Functions as the user wrote them, in the function table, and as our rewrite runs them.
//!
//! The pipeline rewrite ([`stages`](super::stages)) and the `$-` rewrite change function bodies;
//! had brush defined the rewritten function, `type f`, `declare -f`, `set` and the definition an
//! exported function hands to child shells would show our hidden builtins (and a child `bash`
//! could not run it). So brush defines the user's definition, and the rewritten copy is kept
//! aside by the text of the user's. Our DEBUG hook runs before each simple command, before brush
//! looks the command's name up: when it calls a function that has a rewritten copy, the hook puts
//! the copy in the table for that lookup ([`swap_in_for_call`]), and at the next hook in that
//! shell — the first command of the function's body, which runs the copy brush already took — puts
//! the user's back ([`restore`]). Nothing between the two can read the table.

use brush_core::Shell;
use brush_core::functions::Registration;

use super::stages;
use super::state::{SwappedFunction, with_session};

/// Puts back the user's definitions that a call swapped out of `shell`'s function table (`shell`
/// may be a copy of the shell that made the call, taken since).
pub(crate) fn restore(shell: &mut Shell, session: u64) {
    let swapped = with_session(session, |s| {
        (!s.swapped_functions.is_empty()).then(|| s.swapped_functions.clone())
    })
    .flatten();
    for (name, swap) in swapped.into_iter().flatten() {
        if let Some(slot) = shell.func_mut(&name)
            && same_definition(slot, &swap.rewritten)
        {
            *slot = swap.original;
        }
    }
}

/// Before `command_line` runs in `shell`: when it calls a function that has a rewritten copy,
/// puts the copy in the table, for [`restore`] to undo.
pub(crate) fn swap_in_for_call(shell: &mut Shell, session: u64, command_line: &str) {
    let Some(name) = command_line.split(' ').next() else {
        return;
    };
    let Some(current) = shell.funcs().get(name).cloned() else {
        return;
    };
    let Some(rewritten) = rewritten_for(session, name, &current) else {
        return;
    };
    with_session(session, |s| {
        s.swapped_functions.insert(
            name.to_string(),
            SwappedFunction {
                rewritten: rewritten.clone(),
                original: current,
            },
        )
    });
    if let Some(slot) = shell.func_mut(name) {
        *slot = rewritten;
    }
}

/// The registration that runs `current`, the user's function `name`, if our rewrite changed it;
/// looked up once per definition.
fn rewritten_for(session: u64, name: &str, current: &Registration) -> Option<Registration> {
    let cached = with_session(session, |s| {
        s.rewritten_functions
            .get(name)
            .filter(|(user, _)| same_definition(user, current))
            .map(|(_, rewritten)| rewritten.clone())
    })
    .flatten();
    if let Some(rewritten) = cached {
        return rewritten;
    }
    let rewritten =
        stages::rewritten_function(session, &current.definition().to_string()).map(|definition| {
            let mut registration = Registration::new((*definition).clone(), current.source());
            if current.is_exported() {
                registration.export();
            }
            registration
        });
    with_session(session, |s| {
        s.rewritten_functions
            .insert(name.to_string(), (current.clone(), rewritten.clone()))
    });
    rewritten
}

/// Whether two registrations share one definition (not merely equal text).
fn same_definition(a: &Registration, b: &Registration) -> bool {
    std::ptr::eq(a.definition(), b.definition())
}
