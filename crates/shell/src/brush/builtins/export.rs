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
    use brush_parser::SourceSpan;

    use super::super::stock_and_ours as both;
    use super::*;

    fn word(text: &str) -> CommandArg {
        CommandArg::String(text.to_string())
    }

    fn assignment(name: AssignmentName, value: AssignmentValue) -> CommandArg {
        CommandArg::Assignment(Assignment {
            name,
            value,
            append: false,
            loc: SourceSpan::default(),
        })
    }

    fn scalar(name: &str, value: &str) -> CommandArg {
        let value = AssignmentValue::Scalar(Word {
            value: value.to_string(),
            loc: None,
        });
        assignment(AssignmentName::VariableName(name.to_string()), value)
    }

    /// How many declarations the fast path takes for `args`, or `None` for the stock builtin.
    fn taken(args: &[CommandArg]) -> Option<usize> {
        plain_declarations(args).map(|declarations| declarations.len())
    }

    #[test]
    fn only_declarations_without_options_take_the_fast_path() {
        let export = || word("export");
        assert_eq!(taken(&[export(), scalar("X", "1"), word("Y")]), Some(2));
        assert_eq!(taken(&[export(), word("_Y")]), Some(1));
        // Listing, options, the run's hidden variables and arrays go to the stock builtin.
        assert_eq!(taken(&[export()]), None);
        for option in ["-p", "-n", "-f", "--", "+x"] {
            assert_eq!(
                taken(&[export(), scalar("X", "1"), word(option)]),
                None,
                "{option}"
            );
        }
        for hidden in HIDDEN_VARIABLES {
            assert_eq!(taken(&[export(), word(hidden)]), None, "{hidden}");
            assert_eq!(taken(&[export(), scalar(hidden, "x")]), None, "{hidden}");
        }
        let element = AssignmentName::ArrayElementName("A".into(), "1".into());
        let one = AssignmentValue::Scalar(Word {
            value: "z".into(),
            loc: None,
        });
        assert_eq!(taken(&[export(), assignment(element, one)]), None);
        let array = AssignmentValue::Array(Vec::new());
        let name = AssignmentName::VariableName("A".into());
        assert_eq!(taken(&[export(), assignment(name, array)]), None);
    }

    #[tokio::test]
    async fn exports_as_the_stock_export_does() {
        let script = concat!(
            "A=1; export A B=2 C='x y'; export A=3; D=4; export E=5 D; ",
            "readonly R=1; export R=2; echo \"status $?\"; ",
            "export -n C; export F=6 -p >/dev/null; export 'G=7'; export H=\"8 9\"; export H+=0; ",
            "declare -a ARR; export ARR; export ARR[1]=z; export ARR2=(p q); ",
            "env | grep -E '^(A|B|C|D|E|F|G|H|R|ARR|ARR2)=' | sort; export -p | grep -c declare",
        );
        let (stock, ours) = both(script).await;
        assert_eq!(ours, stock);
        // `'G=7'`, quoted, is a name to the stock builtin, not an assignment: neither exports G;
        // and `export H+=0` assigns where bash appends (`8 90`). Both are the stock builtin's
        // readings, which the fast path keeps.
        assert_eq!(ours, "status 1\nA=3\nARR2=p\nB=2\nD=4\nE=5\nF=6\nH=0\n11\n");
    }
}
