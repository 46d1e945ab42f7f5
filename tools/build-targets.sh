#!/usr/bin/env bash
# Builds the release addon of every Linux platform package, and keeps macOS compiling, from one
# Linux x86_64 machine (`npm run build:targets`). The toolchain comes from the registries only:
#   - zig (PyPI `ziglang`) as C compiler and linker: it carries glibc stubs of any version, so
#     `--target <triple>.2.17` links against glibc 2.17 whatever the host has, plus musl and the
#     macOS headers the C parts of dependencies need (psm's assembly, for instance);
#   - cargo-zigbuild (PyPI `cargo-zigbuild`), which runs cargo with zig as linker and `CC`;
#   - the Rust standard library of each target (`rustup target add`);
#   - napi-rs's CLI (a devDependency), whose `napi build -x` drives cargo-zigbuild and names the
#     output `shellwright.<target>.node`.
#
# Usage:
#   tools/build-targets.sh                 every target below but linux-arm64-musl
#   tools/build-targets.sh TARGET...       only these:
#     linux-x64-gnu linux-arm64-gnu        release build against glibc 2.17, and its checks
#     linux-x64-musl linux-arm64-musl      release build against musl, and its checks
#     darwin-x64 darwin-arm64 (darwin: both)  clippy --workspace --all-targets -D warnings
#   tools/build-targets.sh install         only install the toolchain
#
# Each addon lands in npm/<target>/shellwright.<target>.node and is checked: its size, the
# libraries it needs, and for glibc targets the highest GLIBC_x.y symbol version it needs (at
# most 2.17) and any unversioned libc symbol (a function glibc 2.17 lacks: the addon would fail
# to load there). tools/smoke-targets.sh then runs each one on a Node.js of its own platform.
# macOS addons are linked against Apple's SDK, which no registry carries: they are built on a
# Mac (see docs/architecture.md, Packaging); here both macOS targets are compiled and linted.
#
# Idempotent: installs only what is missing, into target/xbuild. Builds run under `nice -n 19`
# (NICE="" to change) in target/cross (CARGO_TARGET_DIR to change), apart from the host's own
# build in target/, which zig's C compiler settings would otherwise invalidate.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

ZIGLANG_VERSION=0.17.1
CARGO_ZIGBUILD_VERSION=0.24.1
MAX_GLIBC=2.17
DEFAULT_TARGETS=(linux-x64-gnu linux-arm64-gnu linux-x64-musl darwin-x64 darwin-arm64)

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/cross}
# cargo-zigbuild keys its wrapper scripts on this path: moving it rebuilds the C parts.
XBUILD=$ROOT/target/xbuild
read -r -a NICE_CMD <<<"${NICE-nice -n 19}"

# napi target name -> the triple given to cargo-zigbuild (a `.2.17` suffix pins zig's glibc).
triple_of() {
  case "$1" in
    linux-x64-gnu) echo "x86_64-unknown-linux-gnu.$MAX_GLIBC" ;;
    linux-arm64-gnu) echo "aarch64-unknown-linux-gnu.$MAX_GLIBC" ;;
    linux-x64-musl) echo "x86_64-unknown-linux-musl" ;;
    linux-arm64-musl) echo "aarch64-unknown-linux-musl" ;;
    darwin-x64) echo "x86_64-apple-darwin" ;;
    darwin-arm64) echo "aarch64-apple-darwin" ;;
    *) echo "unknown target '$1' (known: linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64 darwin install)" >&2; return 1 ;;
  esac
}

log() { printf '\n== %s\n' "$*"; }

# --- toolchain ----------------------------------------------------------------------------------

install_toolchain() {
  local venv=$XBUILD/venv
  if ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null || ! [ -x "$venv/bin/cargo-zigbuild" ]; then
    log "installing ziglang==$ZIGLANG_VERSION and cargo-zigbuild==$CARGO_ZIGBUILD_VERSION (PyPI) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
      "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  fi
  # cargo-zigbuild finds zig through `python -m ziglang` too, but napi's `-x` wants `zig` on PATH.
  mkdir -p "$XBUILD/bin"
  local zig
  zig="$("$venv/bin/python" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')/zig"
  ln -sfn "$zig" "$XBUILD/bin/zig"
  export PATH="$XBUILD/bin:$venv/bin:$PATH"

  # napi-rs's CLI is a devDependency. Without node_modules, install them without the `prepare`
  # script, which would run a release build for the host.
  if ! [ -x node_modules/.bin/napi ]; then
    log "npm install --ignore-scripts (for @napi-rs/cli)"
    npm install --ignore-scripts --no-audit --no-fund
  fi
}

ensure_rust_target() {
  local triple=${1%%.*} # without the glibc suffix
  if ! rustup target list --installed | grep -qx "$triple"; then
    log "rustup target add $triple"
    rustup target add "$triple"
  fi
}

# --- checks -------------------------------------------------------------------------------------

# The highest GLIBC_x.y version among the symbols `file` needs.
glibc_max() {
  objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1
}

# Prints size, needed libraries, GLIBC maximum; returns 1 when a glibc target needs more than
# MAX_GLIBC or an unversioned libc symbol, or a musl target needs a glibc library.
check_artifact() {
  local name=$1 file=$2 status=0
  echo "artifact:  $file"
  echo "size:      $(stat -c %s "$file") bytes ($(du -h "$file" | cut -f1))"
  echo "needed:    $(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  case "$name" in
    *-gnu)
      local max unversioned
      max=$(glibc_max "$file")
      GLIBC[$name]=$max
      echo "glibc max: $max (limit GLIBC_$MAX_GLIBC)"
      if [ "$(printf '%s\n' "$max" "GLIBC_$MAX_GLIBC" | sort -V | tail -1)" != "GLIBC_$MAX_GLIBC" ]; then
        echo "FAIL: needs $max > GLIBC_$MAX_GLIBC"
        status=1
      fi
      # Undefined, non-weak, unversioned symbols other than Node's (napi_*, node_api_*, uv_*): a
      # function glibc 2.17's stubs lack (memfd_create, pidfd_open, posix_spawn_file_actions_addchdir_np…),
      # which must be reached through syscall(2) or dlsym instead.
      unversioned=$(readelf -W --dyn-syms "$file" |
        awk '$7 == "UND" && $5 == "GLOBAL" && $8 !~ /@/ && $8 !~ /^(napi_|node_api_|uv_)/ { print $8 }' |
        tr '\n' ' ')
      if [ -n "$unversioned" ]; then
        echo "FAIL: unversioned undefined symbols (absent from glibc $MAX_GLIBC): $unversioned"
        status=1
      fi
      ;;
    *-musl)
      if readelf -d "$file" | grep -Eq 'NEEDED.*\[(libc\.so\.6|ld-linux[^]]*|libpthread\.so\.0|libdl\.so\.2)\]'; then
        echo "FAIL: a musl addon needs a glibc library"
        status=1
      fi
      ;;
  esac
  return "$status"
}

# --- builds -------------------------------------------------------------------------------------

declare -A SECONDS_TAKEN RESULT GLIBC SIZE

build_target() {
  local name=$1 triple out start
  triple=$(triple_of "$name")
  ensure_rust_target "$triple"
  out=npm/$name
  mkdir -p "$out"
  log "build $name ($triple)"
  start=$(date +%s)
  # `-x`: cargo-zigbuild with zig as linker and C compiler; for musl napi adds
  # `-C target-feature=-crt-static` (a cdylib needs the dynamic C library).
  if ! "${NICE_CMD[@]}" node_modules/.bin/napi build --platform --release -x --target "$triple" \
    --manifest-path crates/node/Cargo.toml --output-dir "$out" --no-js; then
    RESULT[$name]=FAIL
    SECONDS_TAKEN[$name]=$(($(date +%s) - start))
    return
  fi
  SECONDS_TAKEN[$name]=$(($(date +%s) - start))
  # napi writes the type definitions there too; the package's are the root index.d.ts.
  rm -f "$out/index.d.ts"
  local file=$out/shellwright.$name.node
  SIZE[$name]=$(du -h "$file" | cut -f1)
  if check_artifact "$name" "$file"; then RESULT[$name]=ok; else RESULT[$name]=FAIL; fi
  echo "build time: ${SECONDS_TAKEN[$name]} s"
}

lint_darwin() {
  local name=$1 triple start
  triple=$(triple_of "$name")
  ensure_rust_target "$triple"
  log "cargo clippy --workspace --all-targets --target $triple -- -D warnings"
  start=$(date +%s)
  # Plain cargo fails here: psm's build script compiles assembly with the host's `cc`
  # ("cc: error: unrecognized command-line option '-arch'"); cargo-zigbuild sets CC to zig.
  if "${NICE_CMD[@]}" cargo-zigbuild clippy --workspace --all-targets --target "$triple" -- -D warnings; then
    RESULT[$name]=ok
  else
    RESULT[$name]=FAIL
  fi
  SECONDS_TAKEN[$name]=$(($(date +%s) - start))
}

args=("$@")
[ ${#args[@]} -gt 0 ] || args=("${DEFAULT_TARGETS[@]}")
targets=()
for name in "${args[@]}"; do
  case "$name" in
    install) install_toolchain; exit 0 ;;
    darwin) targets+=(darwin-x64 darwin-arm64) ;;
    *) triple_of "$name" >/dev/null || exit 2; targets+=("$name") ;; # typos fail before any build
  esac
done

install_toolchain
for name in "${targets[@]}"; do
  case "$name" in
    darwin-*) lint_darwin "$name" ;;
    *) build_target "$name" ;;
  esac
done

log summary
failed=0
for key in "${!RESULT[@]}"; do
  printf '%-34s %-4s %5s s  %6s  %s\n' "$key" "${RESULT[$key]}" "${SECONDS_TAKEN[$key]}" \
    "${SIZE[$key]:-}" "${GLIBC[$key]:+glibc max ${GLIBC[$key]}}"
  [ "${RESULT[$key]}" = ok ] || failed=1
done
exit "$failed"
