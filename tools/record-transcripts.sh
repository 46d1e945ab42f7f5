#!/usr/bin/env bash
# Records the minimizer's corpus: real runs of real tools on small scratch projects, successes and
# failures, into tests/fixtures/transcripts/<name>.txt. Run from the repository root:
#
#   tools/record-transcripts.sh            # every transcript
#   tools/record-transcripts.sh cargo git  # only those whose name starts with a prefix given
#                                          # (the scratch projects are still set up)
#
# File format (read by crates/minimize/tests/corpus.rs and tools/minimizer-report.mjs):
#
#   $ <the command line, as an agent would type it>
#   # exit <status>
#   <blank line>
#   <the merged stdout+stderr transcript, byte for byte>
#
# Tools this machine lacks (go, pnpm, yarn, tree, eslint, jest, clang at the time of recording) are
# skipped with a note; their filters are covered by unit tests instead. pytest is installed into a
# scratch virtualenv by the recorded `pip install pytest` run itself (needs PyPI access); npm
# installs need the npm registry. Tests only read the recorded files and need neither.
set -u

repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/tests/fixtures/transcripts"
work=/tmp/shellwright-transcripts
mkdir -p "$out"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

wanted=("$@")

# record NAME DIR COMMAND: runs COMMAND with bash in DIR, stdout and stderr on one pipe (as a
# Shellwright run sees them), stdin from /dev/null, and writes the transcript file.
record() {
  local name=$1 dir=$2 command=$3
  if ((${#wanted[@]})); then
    local match=0 prefix
    for prefix in "${wanted[@]}"; do [[ $name == "$prefix"* ]] && match=1; done
    ((match)) || return 0
  fi
  local body status
  body=$(mktemp)
  (cd "$dir" && bash -c "$command") >"$body" 2>&1 </dev/null
  status=$?
  { printf '$ %s\n# exit %d\n\n' "$command" "$status"; cat "$body"; } >"$out/$name.txt"
  rm -f "$body"
  printf '%-32s exit %3d  %8d bytes\n' "$name" "$status" "$(wc -c <"$out/$name.txt")"
}

have() { command -v "$1" >/dev/null 2>&1 || { echo "skip: $1 is not installed" >&2; return 1; }; }

# --- Rust: a crate with dependencies (so a build has many lines), a warning and a type error ---
crate="$work/rustproj"
mkdir -p "$crate/src"
cat >"$crate/Cargo.toml" <<'EOF'
[package]
name = "rustproj"
version = "0.1.0"
edition = "2021"

[dependencies]
thiserror = "1"
serde_json = "1"
anyhow = "1"
EOF
cat >"$crate/src/lib.rs" <<'EOF'
pub fn add(a: i32, b: i32) -> i32 {
    let unused = 3;
    a + b
}

#[derive(Debug, thiserror::Error)]
#[error("bad input: {0}")]
pub struct BadInput(pub String);

pub fn parse(text: &str) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::from_str(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn adds() { assert_eq!(add(2, 2), 4); }
    #[test]
    fn adds_wrong() { assert_eq!(add(2, 2), 5, "two and two"); }
    #[test]
    fn parses() { assert!(parse("[1, 2]").is_ok()); }
    #[test]
    fn panics() { let v: Vec<i32> = Vec::new(); let _ = v[3]; }
}
EOF
cat >"$crate/src/main.rs" <<'EOF'
fn main() {
    for i in 0..5 {
        println!("line {i}: {}", rustproj::add(i, i));
    }
}
EOF
if have cargo; then
  export CARGO_NET_OFFLINE=true CARGO_TARGET_DIR="$work/rust-target"
  record cargo-build-warning "$crate" "cargo build"
  record cargo-run "$crate" "cargo run"
  record cargo-test-fail "$crate" "cargo test"
  record cargo-clippy-warnings "$crate" "cargo clippy"
  # The type error: a string where an i32 is expected.
  sed -i 's/    a + b/    a + "b"/' "$crate/src/lib.rs"
  touch "$crate/src/lib.rs"
  record cargo-build-error "$crate" "cargo build"
  record cargo-check-error "$crate" "cargo check"
  rm -rf "$CARGO_TARGET_DIR"
  record cargo-check-fresh-error "$crate" "cargo check"
  # A binary with the dependencies a typical CLI has: a fresh check prints a line per crate.
  app="$work/rustapp"
  mkdir -p "$app/src"
  cat >"$app/Cargo.toml" <<'TOML'
[package]
name = "rustapp"
version = "0.1.0"
edition = "2021"

[dependencies]
clap = { version = "4", features = ["derive"] }
serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["full"] }
regex = "1"
chrono = "0.4"
TOML
  printf 'fn main() {\n    let n: i32 = "1";\n    println!("{n}");\n}\n' >"$app/src/main.rs"
  record cargo-check-deps-error "$app" "cargo check"
  unset CARGO_NET_OFFLINE CARGO_TARGET_DIR
  # This repository's own unit tests (a real workspace, already built by the time this runs).
  record cargo-test-workspace "$repo" "cargo test -p shellwright-shell -p shellwright-term --lib"
  mkdir -p "$work/rustc"
  printf 'fn main() {\n    let x: u8 = 300;\n    let y = x.foo();\n}\n' >"$work/rustc/main.rs"
  record rustc-error "$work/rustc" "rustc main.rs"
fi

# --- C: gcc and make ---
cdir="$work/cproj"
mkdir -p "$cdir"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  printf 'int f%d(int x) { return x * %d; }\n' "$i" "$i" >"$cdir/unit$i.c"
done
printf '#include <stdio.h>\nint main(void) {\n  int n = "text";\n  printf("%%d\\n", n)\n  return undefined_name;\n}\n' >"$cdir/broken.c"
cat >"$cdir/Makefile" <<'EOF'
OBJS := $(patsubst %.c,%.o,$(wildcard unit*.c))
all: $(OBJS) broken.o
%.o: %.c
	gcc -Wall -c $< -o $@
clean:
	rm -f *.o
EOF
if have gcc && have make; then
  record gcc-error "$cdir" "gcc -Wall -c broken.c -o broken.o"
  record make-error "$cdir" "make"
  record make-ok "$cdir" "make clean && make -k unit1.o unit2.o unit3.o unit4.o unit5.o unit6.o unit7.o unit8.o unit9.o unit10.o unit11.o unit12.o"
fi

# --- Python: pip install (into a scratch virtualenv), pytest ---
if have python3; then
  python3 -m venv "$work/venv"
  PATH="$work/venv/bin:$PATH" record pip-install "$work" "pip install pytest"
  [ -x "$work/venv/bin/pytest" ] || "$work/venv/bin/pip" install -q pytest
  PATH="$work/venv/bin:$PATH" record pip-install-deps "$work" "pip install flask requests"
  pdir="$work/pyproj"
  mkdir -p "$pdir"
  cat >"$pdir/test_math.py" <<'EOF'
import pytest

def divide(a, b):
    return a / b

def test_divides():
    assert divide(6, 3) == 2

@pytest.mark.parametrize("n", range(40))
def test_many(n):
    assert n * 0 == 0

def test_wrong_sum():
    assert sum([1, 2, 3]) == 7

def test_zero_division():
    assert divide(1, 0) == 0
EOF
  PATH="$work/venv/bin:$PATH" record pytest-fail "$pdir" "pytest"
  PATH="$work/venv/bin:$PATH" record pytest-verbose-fail "$pdir" "python -m pytest -v"
  PATH="$work/venv/bin:$PATH" record pytest-pass "$pdir" "pytest -k 'many or divides'"
  printf 'def load():\n    return {}["missing"]\n\nload()\n' >"$pdir/crash.py"
  PATH="$work/venv/bin:$PATH" record python-traceback "$pdir" "python crash.py"
fi

# --- JavaScript: npm install, vitest, tsc, node --test ---
jdir="$work/jsproj"
mkdir -p "$jdir/src"
cat >"$jdir/package.json" <<'EOF'
{ "name": "jsproj", "version": "1.0.0", "private": true,
  "scripts": { "test": "vitest run", "build": "tsc -p ." } }
EOF
if have npm; then
  record npm-install "$jdir" "npm install --no-fund left-pad@1.3.0 express@4.21.2 request@2.88.2"
  record npm-ci "$jdir" "npm ci"
  ln -s "$repo/node_modules/.bin" "$work/jsbin"
  # vitest and tsc come from this repository's own dev dependencies.
  mkdir -p "$jdir/node_modules/.bin"
  for tool in vitest tsc; do ln -sf "$repo/node_modules/.bin/$tool" "$jdir/node_modules/.bin/$tool"; done
  ln -sf "$repo/node_modules/vitest" "$jdir/node_modules/vitest"
  ln -sf "$repo/node_modules/typescript" "$jdir/node_modules/typescript"
  cat >"$jdir/src/math.test.js" <<'EOF'
import { describe, expect, it } from 'vitest'
const add = (a, b) => a + b
describe('add', () => {
  for (let i = 0; i < 30; i++) it(`adds ${i}`, () => expect(add(i, 1)).toBe(i + 1))
  it('adds strings wrongly', () => expect(add('1', 1)).toBe(2))
})
describe('objects', () => {
  it('compares deeply', () => expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] }))
})
EOF
  cat >"$jdir/src/ok.test.js" <<'EOF'
import { expect, it } from 'vitest'
for (let i = 0; i < 20; i++) it(`works ${i}`, () => expect(i).toBe(i))
EOF
  record vitest-fail "$jdir" "npx vitest run"
  record npm-test-fail "$jdir" "npm test"
  record vitest-pass "$jdir" "./node_modules/.bin/vitest run src/ok.test.js"
  cat >"$jdir/tsconfig.json" <<'EOF'
{ "compilerOptions": { "strict": true, "noEmit": true, "target": "es2022", "module": "nodenext" },
  "include": ["src/**/*.ts"] }
EOF
  cat >"$jdir/src/index.ts" <<'EOF'
export function greet(name: string): string {
  return 'hi ' + name
}
const n: number = greet('x')
greet(42)
export const missing = notDefined + 1
EOF
  record tsc-error "$jdir" "npx tsc -p ."
  record npm-run-build-error "$jdir" "npm run build"
  mkdir -p "$work/nodetest"
  cat >"$work/nodetest/math.test.mjs" <<'EOF'
import test from 'node:test'
import assert from 'node:assert'
for (let i = 0; i < 15; i++) test(`passes ${i}`, () => assert.equal(i, i))
test('fails', () => assert.deepStrictEqual({ a: 1 }, { a: 2 }))
EOF
  record node-test-fail "$work/nodetest" "node --test"
  # This repository's own key-parser suite (needs the built addon), with the verbose reporter.
  record vitest-verbose-repo "$repo" "npx vitest run --reporter=verbose tests/keys.test.ts"
fi

# --- git: this repository's own history, and a local clone/push/pull/fetch round trip ---
if have git; then
  # Early commit messages and diffs of this repository cite a design file that is not part of it;
  # the commands pick history without those references, so the corpus stands on its own.
  record git-log "$repo" "git log -n 60 --no-decorate --invert-grep --grep='DES[I]GN' main"
  record git-log-stat "$repo" "git log -n 15 --stat --no-decorate main"
  record git-show "$repo" "git show --no-decorate \$(git rev-list -n 1 main -- crates/shell/src/minimize)"
  record git-diff "$repo" "git diff \$(git rev-list -n 1 --skip 8 main) \$(git rev-list -n 1 main) -- crates tests"
  gdir="$work/gitproj"
  git init -q --bare "$work/origin.git"
  record git-clone "$work" "git clone $work/origin.git gitproj"
  [ -d "$gdir" ] || git clone -q "$work/origin.git" "$gdir" 2>/dev/null
  for i in $(seq 1 30); do printf 'line %d\n' "$i" >"$gdir/file$i.txt"; done
  git -C "$gdir" add . && git -C "$gdir" -c user.name=rec -c user.email=rec@example.com commit -qm "thirty files"
  for i in $(seq 1 12); do printf 'changed\n' >>"$gdir/file$i.txt"; done
  for i in $(seq 1 8); do printf 'new\n' >"$gdir/new$i.txt"; done
  git -C "$gdir" rm -q file30.txt
  record git-status "$gdir" "git status"
  record git-push "$gdir" "git push origin HEAD:main"
  git clone -q "$work/origin.git" "$work/other"
  git -C "$work/other" -c user.name=rec -c user.email=rec@example.com commit -q --allow-empty -m "from elsewhere"
  git -C "$work/other" push -q origin HEAD:main
  record git-fetch "$gdir" "git fetch origin"
  record git-pull "$gdir" "git pull origin main"
fi

# --- docker (the daemon may be absent: then this records the client's error) ---
if have docker; then
  mkdir -p "$work/docker"
  printf 'FROM busybox\nRUN echo hi\n' >"$work/docker/Dockerfile"
  record docker-build "$work/docker" "docker build -t shellwright-rec ."
fi

# --- listings and a progress meter ---
record ls-la "$repo" "ls -la /usr/bin"
record find-files "$repo" "find crates -name '*.rs'"
if have curl; then
  record curl-progress "$work" "curl -o /dev/null https://static.crates.io/crates/regex/regex-1.11.1.crate"
fi
for tool in go pnpm yarn tree eslint jest clang; do have "$tool" >/dev/null 2>&1 || echo "skip: $tool is not installed" >&2; done
