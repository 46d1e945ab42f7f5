#!/usr/bin/env bash
# What the integration tests need from the system, installed or named. `npm test` runs this first
# (its `pretest`), so on a fresh machine of CI's kind (Debian, root) `npm install && npm test` is
# enough; .ci/run gets it through `npm test` too. The tests drive:
#   vim, less, htop, ps (procps)  the TUI and input-wait tests, the MCP server's TUI tools
#   git, make                     the minimizer's tests
#   zsh, fish                     the shell-integration tests of interactive PTY sessions
#   chromium                      the web terminal's tests (Debian's /usr/bin/chromium, headless)
#   Textual (PyPI, pinned)        the MCP tests' Python TUI, from a venv in target/textual-venv
#                                 (python3 with its venv module)
# As root, or with sudo that asks no password, and with apt-get, it installs what is missing;
# otherwise (or with SHELLWRIGHT_PROVISION=0) it names what is missing, says how to install it and
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."

TEXTUAL_VERSION=8.2.8
VENV=target/textual-venv

# Each program the tests run, and the Debian package that has it.
declare -A PACKAGE_OF=(
  [vim]=vim [less]=less [htop]=htop [ps]=procps [git]=git [make]=make [chromium]=chromium [python3]=python3
  [zsh]=zsh [fish]=fish
)

missing_packages() {
  local tool
  for tool in "${!PACKAGE_OF[@]}"; do
    command -v "$tool" >/dev/null || echo "${PACKAGE_OF[$tool]}"
  done
  python3 -c 'import ensurepip, venv' 2>/dev/null || echo python3-venv
}

has_textual() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import textual' 2>/dev/null
}

# The command that runs apt-get as root, if this process may.
root_command() {
  if [ "$(id -u)" -eq 0 ]; then
    echo env
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    echo sudo
  else
    return 1
  fi
}

may_install() {
  [ "${SHELLWRIGHT_PROVISION:-1}" != 0 ] && command -v apt-get >/dev/null && root_command >/dev/null
}

mapfile -t packages < <(missing_packages | sort -u)
if [ ${#packages[@]} -gt 0 ]; then
  if may_install; then
    as_root=$(root_command)
    echo "provision-tests: apt-get install ${packages[*]}"
    $as_root apt-get update -qq
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
    mapfile -t packages < <(missing_packages | sort -u)
  fi
fi
if [ ${#packages[@]} -eq 0 ] && ! has_textual && [ "${SHELLWRIGHT_PROVISION:-1}" != 0 ]; then
  echo "provision-tests: textual==$TEXTUAL_VERSION (PyPI) into $VENV"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "textual==$TEXTUAL_VERSION"
fi

if [ ${#packages[@]} -gt 0 ] || ! has_textual; then
  {
    echo "The tests need what this machine lacks:"
    if [ ${#packages[@]} -gt 0 ]; then
      echo "  programs: ${packages[*]} (Debian/Ubuntu package names)"
      echo "    install: sudo apt-get install ${packages[*]}"
      echo "    (as root, or with sudo that asks no password, npm test installs them itself)"
    fi
    if ! has_textual; then
      echo "  Textual, a Python package, in $VENV:"
      echo "    install: python3 -m venv $VENV && $VENV/bin/python -m pip install textual==$TEXTUAL_VERSION"
    fi
  } >&2
  exit 1
fi
