//! make (and ninja) and docker build. make: directory enter/leave notices go and runs of echoed
//! compiler commands become their first lines and a count; diagnostics (gcc's `file:line:col:`
//! lines with their source excerpts) and `make: ***` errors stay. docker build: layer ids,
//! intermediate containers, download and timing lines of the legacy builder and BuildKit's
//! plain progress go; steps, the commands' own output and errors stay.

use std::sync::LazyLock;

use regex::Regex;

use super::common::drop_lines;
use crate::text::{Output, Transcript, is_important, lines, squeeze_repeats};

static DIRECTORY_NOTICE: LazyLock<Regex> =
    pattern!(r"^(make|gmake)(\[\d+\])?: (Entering|Leaving) directory ");

/// An echoed build command: a compiler or tool invocation, or a kbuild-style `  CC  file`.
static ECHOED_COMMAND: LazyLock<Regex> = pattern!(
    r"^\s*((\S*/)?(gcc|g\+\+|cc|c\+\+|clang|clang\+\+|ar|ranlib|ld|as|libtool|install|mkdir|rm|cp|ln|echo|cargo|rustc|javac|nasm)\s|\[\d+/\d+\]\s|(CC|CXX|LD|AR|AS|GEN|INSTALL|CCLD|CXXLD|HOSTCC|LINK)\s+\S)"
);

/// Echoed commands in a row beyond this many are collapsed.
const ECHO_RUN: usize = 4;

static DOCKER_NOISE: LazyLock<Regex> = pattern!(
    r"^( ---> |Removing intermediate container |#\d+ (sha256:|extracting |resolve |DONE |CACHED$|transferring |\[internal\] load)|#\d+ \d+\.\d+ (sha256|extracting)|Sending build context)"
);

pub fn make(cleaned: &Transcript) -> String {
    let text = drop_lines(cleaned, "directory notice", |line| {
        DIRECTORY_NOTICE.is_match(line)
    });
    collapse_echoed_commands(&text)
}

fn collapse_echoed_commands(text: &str) -> String {
    let lines: Vec<&str> = lines(text).collect();
    let mut out = Output::default();
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..]
            .iter()
            .take_while(|l| ECHOED_COMMAND.is_match(l) && !is_important(l))
            .count();
        if run > ECHO_RUN {
            lines[i..i + 2].iter().for_each(|l| out.line(l));
            out.omitted(run - 3, "build command");
            out.line(lines[i + run - 1]);
            i += run;
        } else {
            out.line(lines[i]);
            i += 1;
        }
    }
    squeeze_repeats(out.finish())
}

pub fn docker_build(cleaned: &Transcript) -> String {
    drop_lines(cleaned, "layer or transfer line", |line| {
        DOCKER_NOISE.is_match(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_collapses_echoed_commands_and_keeps_diagnostics() {
        let mut text = String::from("make[1]: Entering directory '/p'\n");
        for i in 1..=6 {
            text.push_str(&format!("gcc -Wall -c unit{i}.c -o unit{i}.o\n"));
        }
        text.push_str("broken.c:4:20: error: expected ';'\n    4 |   printf(\"%d\", n)\n      |                    ^\nmake: *** [Makefile:4: broken.o] Error 1\n");
        assert_eq!(
            make(&Transcript::new(&text)),
            "gcc -Wall -c unit1.c -o unit1.o\ngcc -Wall -c unit2.c -o unit2.o\n[… 3 build commands omitted]\ngcc -Wall -c unit6.c -o unit6.o\nbroken.c:4:20: error: expected ';'\n    4 |   printf(\"%d\", n)\n      |                    ^\nmake: *** [Makefile:4: broken.o] Error 1\n"
        );
    }

    #[test]
    fn docker_keeps_steps_and_output() {
        let text = "Sending build context to Docker daemon  2.048kB\nStep 1/2 : FROM busybox\n ---> 3f57d9401f8d\nStep 2/2 : RUN echo hi\n ---> Running in 6a1b\nhi\nRemoving intermediate container 6a1b\n ---> 9c2e\nSuccessfully built 9c2e\n";
        assert_eq!(
            docker_build(&Transcript::new(text)),
            "Step 1/2 : FROM busybox\nStep 2/2 : RUN echo hi\nhi\n[… 2 layer or transfer lines omitted]\nSuccessfully built 9c2e\n"
        );
    }
}
