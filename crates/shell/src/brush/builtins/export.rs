//! `export NAME=VALUE …` and `export NAME …` without an option parser when there is nothing for
//! one to parse.
//!
//! The stock `export` reads its options with clap, which builds its whole command-line parser on
//! every call: that was a third of the time brush spent on `export X=1`, the command agents run
//! most between others. When no argument is an option (`-f`, `-n`, `-p`, `--`) and there is at
//! least one declaration (none lists the exported variables), the stock builtin exports each
//! name, assigning the scalar value first where one is given; ours does exactly that itself. A
//! declaration of an array element or an array value, one that names a variable the run sets
//! aside ([`HIDDEN_VARIABLES`]), and everything else go to the stock builtin, options and all
//! (`run_tag` calls the one or the other).

use brush_core::commands::CommandArg;
use brush_core::env::{EnvironmentLookup, EnvironmentScope};
use brush_core::extensions::DefaultShellExtensions;
use brush_core::variables::ShellValueLiteral;
use brush_core::{ErrorKind, ExecutionContext, ExecutionResult};
use brush_parser::ast::{Assignment, AssignmentName, AssignmentValue, Word};

use crate::brush::common::HIDDEN_VARIABLES;

/// One declaration the fast path handles.
pub(super) enum Declaration<'a> {
    /// `NAME`: export the variable if it exists.
    Name(&'a str),
    /// `NAME=VALUE`: assign the scalar, then export.
    Scalar(&'a str, &'a Word),
}

/// Exports `declarations` ([`plain_declarations`]) as the stock builtin would.
pub(super) fn export_plainly(
    ctx: ExecutionContext<'_, DefaultShellExtensions>,
    declarations: Vec<Declaration<'_>>,
) -> Result<ExecutionResult, brush_core::Error> {
    let command_name = &ctx.command_name;
    let env = ctx.shell.env_mut();
    for declaration in declarations {
        let exported = match declaration {
            Declaration::Name(name) => {
                if let Some((_, variable)) = env.get_mut(name) {
                    variable.export();
                }
                Ok(())
            }
            Declaration::Scalar(name, value) => env.update_or_add(
                name,
                ShellValueLiteral::Scalar(value.flatten()),
                |variable| {
                    variable.export();
                    Ok(())
                },
                EnvironmentLookup::Anywhere,
                EnvironmentScope::Global,
            ),
        };
        // As the stock builtin's own failure reaches brush (a readonly variable, say).
        exported.map_err(|err| ErrorKind::BuiltinError(Box::new(err), command_name.clone()))?;
    }
    Ok(ExecutionResult::success())
}

/// The declarations after `export`, when all of them are ones the fast path handles and there
/// is at least one (see the module doc); `None` sends the call to the stock builtin.
pub(super) fn plain_declarations(args: &[CommandArg]) -> Option<Vec<Declaration<'_>>> {
    let declarations = args
        .iter()
        .skip(1)
        .map(|arg| {
            let declaration = match arg {
                // The stock builtin reads a word starting with `-` or `+` as options.
                CommandArg::String(word) if word.starts_with(['-', '+']) => return None,
                CommandArg::String(name) => Declaration::Name(name),
                CommandArg::Assignment(assignment) => match assignment {
                    Assignment {
                        name: AssignmentName::VariableName(name),
                        value: AssignmentValue::Scalar(value),
                        ..
                    } => Declaration::Scalar(name, value),
                    _ => return None,
                },
            };
            let name = match declaration {
                Declaration::Name(name) | Declaration::Scalar(name, _) => name,
            };
            (!HIDDEN_VARIABLES.contains(&name)).then_some(declaration)
        })
        .collect::<Option<Vec<_>>>()?;
    (!declarations.is_empty()).then_some(declarations)
}

#[cfg(test)]
mod tests {
    use super::super::stock_and_ours as both;

    #[tokio::test]
    async fn exports_as_the_stock_export_does() {
        let script = concat!(
            "A=1; export A B=2 C='x y'; export A=3; D=4; export E=5 D; ",
            "readonly R=1; export R=2; echo \"status $?\"; ",
            "export -n C; export F=6 -p >/dev/null; export 'G=7'; export H=\"8 9\"; ",
            "declare -a ARR; export ARR; export ARR[1]=z; export ARR2=(p q); ",
            "env | grep -E '^(A|B|C|D|E|F|G|H|R|ARR|ARR2)=' | sort; export -p | grep -c declare",
        );
        let (stock, ours) = both(script).await;
        assert_eq!(ours, stock);
        // `'G=7'`, quoted, is a name to the stock builtin, not an assignment: neither exports G.
        assert_eq!(
            ours,
            "status 1\nA=3\nARR2=p\nB=2\nD=4\nE=5\nF=6\nH=8 9\n11\n"
        );
    }
}
