//! Which program produced a run's output: the command line parsed with brush-parser (within the
//! bounds `applyBashFixups` uses), reduced to the one simple command whose output the transcript
//! is, with wrappers seen through.
//!
//! - **Lists** (`a && b; c`): commands that print nothing of note (`cd`, `export`, `mkdir`, …)
//!   are skipped; if the others are all one program (`cargo build && cargo test`) the last of
//!   them is taken; different programs give no answer (the generic filter applies).
//! - **Pipelines**: the last command, skipping pass-through stages (`tee`, `cat` without
//!   operands) back toward the producer: `cargo build 2>&1 | tee log` is cargo's output.
//! - **Wrappers**: `env` (options and `NAME=value`), `sudo`, `time`, `nice`, `nohup`, `timeout`,
//!   `command`, `exec`, `npx`, `pnpx`, `bunx`, `npm exec`, `pnpm exec`, `yarn exec`/`dlx`, and
//!   `python -m <module>`. The program is the base name of the path (`./node_modules/.bin/vitest`
//!   is `vitest`).

use brush_parser::ast::{Command, CommandPrefixOrSuffixItem, Pipeline, SimpleCommand};

/// The program that produced the output and the words after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// Base name of the program (`cargo`, `vitest`, `pytest`).
    pub program: String,
    pub args: Vec<String>,
}

impl Invocation {
    /// The first argument that is not an option (`build` in `cargo +nightly -q build`); options
    /// that take a value are not known, so `git -C dir status` is handled by the git filter.
    pub fn subcommand(&self) -> Option<&str> {
        self.args
            .iter()
            .map(String::as_str)
            .find(|arg| !arg.starts_with('-') && !arg.starts_with('+'))
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.args.iter().any(|arg| arg == flag)
    }
}

/// Commands that print nothing worth minimizing and do not change which program the output is.
const SILENT: &[&str] = &[
    "cd", "pushd", "popd", "export", "unset", "set", "source", ".", "true", ":", "mkdir", "rm",
    "cp", "mv", "touch", "ln", "chmod", "chown", "sleep", "trap", "shopt", "alias", "umask",
];

/// The invocation that produced the output of `command`, if it can be told.
pub fn producing_invocation(command: &str) -> Option<Invocation> {
    let parsed = std::panic::catch_unwind(|| crate::fixups::parse_one_line(command)).ok()??;
    let (_, program) = parsed;
    let pipelines = program
        .complete_commands
        .iter()
        .flat_map(|list| &list.0)
        .flat_map(|item| item.0.iter().map(|(_, pipeline)| pipeline));
    let mut found: Option<Invocation> = None;
    for pipeline in pipelines {
        let invocation = pipeline_producer(pipeline)?;
        if SILENT.contains(&invocation.program.as_str()) {
            continue;
        }
        if found
            .as_ref()
            .is_some_and(|earlier| earlier.program != invocation.program)
        {
            return None;
        }
        found = Some(invocation);
    }
    found
}

/// The producing stage of one pipeline; `None` for compound commands.
fn pipeline_producer(pipeline: &Pipeline) -> Option<Invocation> {
    let mut stages = pipeline.seq.iter().rev().peekable();
    while let Some(stage) = stages.next() {
        let Command::Simple(simple) = stage else {
            return None;
        };
        let invocation = unwrap_invocation(words_of(simple))?;
        let passes_through = match invocation.program.as_str() {
            "tee" => true,
            "cat" => invocation.args.iter().all(|a| a.starts_with('-')),
            _ => false,
        };
        if passes_through && stages.peek().is_some() {
            continue;
        }
        return Some(invocation);
    }
    None
}

/// The command's words (name and arguments) without quotes, assignments and redirections.
fn words_of(simple: &SimpleCommand) -> Vec<String> {
    let name = simple.word_or_name.iter().map(|w| w.value.as_str());
    let suffix = simple
        .suffix
        .iter()
        .flat_map(|s| &s.0)
        .filter_map(|item| match item {
            CommandPrefixOrSuffixItem::Word(word) => Some(word.value.as_str()),
            _ => None,
        });
    name.chain(suffix).map(unquote).collect()
}

/// Shell quoting removed from a literal word (`'a b'` → `a b`); expansions stay as written.
fn unquote(word: &str) -> String {
    word.chars().filter(|c| !matches!(c, '\'' | '"')).collect()
}

/// Sees through wrapper commands to the program they run.
fn unwrap_invocation(mut words: Vec<String>) -> Option<Invocation> {
    loop {
        let first = words.first()?;
        let program = first.rsplit('/').next().unwrap_or(first).to_string();
        let rest = &words[1..];
        let skip = match program.as_str() {
            "env" => env_prefix(rest),
            "sudo" | "nice" | "nohup" | "command" | "exec" | "time" | "npx" | "pnpx" | "bunx" => {
                options_then(rest, &["-u", "-g", "-n", "-p", "--package"])
            }
            "timeout" => options_then(rest, &["-s", "-k"]) + 1,
            "npm" | "pnpm" | "yarn"
                if matches!(rest.first().map(String::as_str), Some("exec" | "x" | "dlx")) =>
            {
                1 + options_then(&rest[1..], &["-p", "--package"])
            }
            "python" | "python3" | "py" if rest.first().is_some_and(|w| w == "-m") => {
                return Some(Invocation {
                    program: rest.get(1)?.clone(),
                    args: rest[2..].to_vec(),
                });
            }
            _ => {
                return Some(Invocation {
                    program,
                    args: rest.to_vec(),
                });
            }
        };
        if skip >= rest.len() {
            return None;
        }
        words = rest[skip..].to_vec();
    }
}

/// How many leading words of `env` are options (`-u NAME`, `-C DIR`, …) or assignments.
fn env_prefix(words: &[String]) -> usize {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        i += match word.as_str() {
            "-u" | "--unset" | "-C" | "--chdir" | "-S" | "--split-string" => 2,
            w if w.starts_with('-') || w.contains('=') => 1,
            _ => break,
        };
    }
    i
}

/// How many leading words are options (`-x`, and the value after one listed in `with_value`).
fn options_then(words: &[String], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if word == "--" {
            return i + 1;
        }
        if !word.starts_with('-') {
            break;
        }
        i += if with_value.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program_and_sub(command: &str) -> Option<(String, Option<String>)> {
        producing_invocation(command)
            .map(|inv| (inv.program.clone(), inv.subcommand().map(str::to_string)))
    }

    #[test]
    fn sees_through_wrappers_paths_and_lists() {
        let table = [
            ("cargo build", Some(("cargo", Some("build")))),
            (
                "cargo +nightly -q test --lib",
                Some(("cargo", Some("test"))),
            ),
            (
                "env RUST_LOG=debug -u X cargo test",
                Some(("cargo", Some("test"))),
            ),
            ("sudo -u bob npm ci", Some(("npm", Some("ci")))),
            ("time cargo check", Some(("cargo", Some("check")))),
            ("npx tsc -p .", Some(("tsc", Some(".")))),
            (
                "./node_modules/.bin/vitest run",
                Some(("vitest", Some("run"))),
            ),
            ("npm exec -- vitest run", Some(("vitest", Some("run")))),
            ("python3 -m pytest -x", Some(("pytest", None))),
            ("timeout 60 make -j2", Some(("make", None))),
            (
                "cd crates && cargo build 2>&1 | tee log",
                Some(("cargo", Some("build"))),
            ),
            ("cargo build && cargo test", Some(("cargo", Some("test")))),
            ("npm install && cargo build", None),
            ("cargo test | grep FAIL", Some(("grep", Some("FAIL")))),
            ("for x in a; do cargo build; done", None),
            ("echo 'unterminated", None),
            ("env", None),
        ];
        for (command, want) in table {
            let want = want.map(|(p, s)| (p.to_string(), s.map(str::to_string)));
            assert_eq!(program_and_sub(command), want, "{command}");
        }
    }
}
