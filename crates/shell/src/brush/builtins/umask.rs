//! `umask`, kept per session.
//!
//! The session's umask is a value of its own: printed and set here, and installed on the run's
//! thread, whose filesystem context is private (see the `isolation` module), so the files and
//! processes the session creates get it while the host's umask never changes.

use std::io::Write as _;

use brush_core::commands::CommandArg;
use brush_core::extensions::DefaultShellExtensions;
use brush_core::{ExecutionContext, ExecutionResult};
use futures_util::future::BoxFuture;

use crate::brush::isolation;
use crate::brush::state::with_shell;

pub(super) fn run(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    args: Vec<CommandArg>,
) -> BoxFuture<'_, Result<ExecutionResult, brush_core::Error>> {
    Box::pin(async move {
        let mut symbolic = false;
        let mut reusable = false;
        let mut mode = None;
        for arg in args.iter().skip(1).map(ToString::to_string) {
            match arg.as_str() {
                "-S" => symbolic = true,
                "-p" => reusable = true,
                "-pS" | "-Sp" => (symbolic, reusable) = (true, true),
                _ if arg.starts_with('-') && arg.len() > 1 => {
                    let _ = writeln!(ctx.stderr(), "bash: umask: {arg}: invalid option");
                    let _ = writeln!(ctx.stderr(), "umask: usage: umask [-p] [-S] [mode]");
                    return Ok(ExecutionResult::new(2));
                }
                _ => mode = Some(arg),
            }
        }
        let current = with_shell(ctx.shell, |s| s.umask).unwrap_or(0o022);
        let Some(mode) = mode else {
            let text = if symbolic {
                to_symbolic(current)
            } else {
                format!("{current:04o}")
            };
            let prefix = if reusable {
                if symbolic { "umask -S " } else { "umask " }
            } else {
                ""
            };
            writeln!(ctx.stdout(), "{prefix}{text}")?;
            return Ok(ExecutionResult::success());
        };
        let Some(mask) = parse_mode(&mode, current) else {
            let what = if mode.starts_with(|c: char| c.is_ascii_digit()) {
                "octal number out of range"
            } else {
                "invalid symbolic mode operator"
            };
            let _ = writeln!(ctx.stderr(), "bash: umask: {mode}: {what}");
            return Ok(ExecutionResult::new(1));
        };
        // A subshell running on another thread (a pipeline stage) changes nothing, as in bash.
        if isolation::set_private_umask(mask) {
            with_shell(ctx.shell, |s| s.umask = mask);
        }
        Ok(ExecutionResult::success())
    })
}

/// `u=rwx,g=rx,o=rx` for a umask of 022: the permissions the mask lets through.
fn to_symbolic(mask: u32) -> String {
    let allowed = !mask & 0o777;
    let part = |shift: u32| {
        let bits = (allowed >> shift) & 0o7;
        [(4, 'r'), (2, 'w'), (1, 'x')]
            .iter()
            .filter(|(bit, _)| bits & bit != 0)
            .map(|(_, c)| *c)
            .collect::<String>()
    };
    format!("u={},g={},o={}", part(6), part(3), part(0))
}

/// The umask `mode` sets, starting from `current`: octal, or chmod-style clauses such as
/// `u=rwx,g=rx,o=` and `go-w` (which say what is *allowed*).
fn parse_mode(mode: &str, current: u32) -> Option<u32> {
    if mode.starts_with(|c: char| c.is_ascii_digit()) {
        let value = u32::from_str_radix(mode, 8).ok()?;
        return (value <= 0o777).then_some(value);
    }
    let mut allowed = !current & 0o777;
    for clause in mode.split(',') {
        let op_at = clause.find(['=', '+', '-'])?;
        let (who, rest) = clause.split_at(op_at);
        let mut who_bits = 0;
        for c in who.chars() {
            who_bits |= match c {
                'u' => 0o700,
                'g' => 0o070,
                'o' => 0o007,
                'a' => 0o777,
                _ => return None,
            };
        }
        if who_bits == 0 {
            who_bits = 0o777;
        }
        let mut ops = rest;
        while !ops.is_empty() {
            let op = ops.chars().next()?;
            let perms_end = ops[1..].find(['=', '+', '-']).map_or(ops.len(), |i| i + 1);
            let mut perm_bits = 0;
            for c in ops[1..perms_end].chars() {
                perm_bits |= match c {
                    'r' => 0o444,
                    'w' => 0o222,
                    'x' => 0o111,
                    _ => return None,
                };
            }
            let bits = perm_bits & who_bits;
            match op {
                '=' => allowed = (allowed & !who_bits) | bits,
                '+' => allowed |= bits,
                '-' => allowed &= !bits,
                _ => return None,
            }
            ops = &ops[perms_end..];
        }
    }
    Some(!allowed & 0o777)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_symbolic_masks_like_bash() {
        assert_eq!(to_symbolic(0o022), "u=rwx,g=rx,o=rx");
        assert_eq!(to_symbolic(0o077), "u=rwx,g=,o=");
        assert_eq!(to_symbolic(0o777), "u=,g=,o=");
    }

    #[test]
    fn parses_octal_and_symbolic_modes() {
        assert_eq!(parse_mode("077", 0o022), Some(0o077));
        assert_eq!(parse_mode("0", 0o022), Some(0));
        assert_eq!(parse_mode("1000", 0o022), None);
        assert_eq!(parse_mode("u=rwx,g=rx,o=", 0o022), Some(0o027));
        assert_eq!(parse_mode("go-w", 0o002), Some(0o022));
        assert_eq!(parse_mode("a+rwx", 0o077), Some(0));
        assert_eq!(parse_mode("o=r", 0o022), Some(0o023));
        assert_eq!(parse_mode("z=r", 0o022), None);
        assert_eq!(parse_mode("u=q", 0o022), None);
    }
}
