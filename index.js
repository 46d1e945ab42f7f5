'use strict'
// The package entry. `binding.js` is the loader `napi build` generates: it loads the addon built
// for this platform, either `shellwright.<target>.node` beside it (a build from source) or the
// `shellwright-<target>` package that npm installs with this one as an optional dependency.
// When it finds neither it throws a generic error; this file rethrows it as one that names the
// target and what to do. The plain `module.exports = require(...)` keeps the addon's exports
// visible to Node's CommonJS lexer, so `import { Shell } from 'shellwright'` works from ESM.
try {
  module.exports = require('./binding.js')
} catch (cause) {
  // Copied onto the exports rather than assigned: a second `module.exports =` would hide the
  // names above from the lexer.
  const addon = windowsGnuAddon(cause)
  Object.defineProperties(module.exports, Object.getOwnPropertyDescriptors(addon))
}

// `await using shell = new Shell()` and `await using sessions = new ExecSessions()` close them when
// the scope ends (a #[napi] class cannot declare a symbol-keyed method itself).
if (typeof Symbol.asyncDispose === 'symbol') {
  for (const Class of [module.exports.Shell, module.exports.ExecSessions]) {
    Class.prototype[Symbol.asyncDispose] = function asyncDispose() {
      return this.close()
    }
  }
}

// parseKey is called once per keystroke, and a terminal sends the same few sequences over and over:
// the answers for sequences seen before are kept here (per Kitty mode, up to 4096 of them, then
// started afresh), so a repeated key costs a Map lookup instead of a call into the addon. Anything
// but a string and a boolean goes to the addon, which throws the usual TypeError.
{
  const parseKeyNative = module.exports.parseKey
  const seen = [new Map(), new Map()]
  module.exports.parseKey = function parseKey(data, kittyProtocolActive) {
    if (typeof data !== 'string' || typeof kittyProtocolActive !== 'boolean') {
      return parseKeyNative(data, kittyProtocolActive)
    }
    const known = seen[kittyProtocolActive ? 1 : 0]
    let id = known.get(data)
    if (id === undefined) {
      id = parseKeyNative(data, kittyProtocolActive)
      if (data.length <= 64) {
        if (known.size >= 4096) known.clear()
        known.set(data, id)
      }
    }
    return id
  }
}

function addonLoadError(cause) {
  const target = hostTarget()
  const { name, optionalDependencies = {} } = require('./package.json')
  const prebuilt = Object.keys(optionalDependencies).map((pkg) => pkg.slice(name.length + 1))
  const advice = prebuilt.includes(target)
    ? `Its prebuilt addon comes in the optional dependency ${name}-${target}: reinstall without ` +
      `--omit=optional / --no-optional, or build it from a clone of the repository (npm install).`
    : `No prebuilt addon exists for this target (prebuilt: ${prebuilt.join(', ')}); build it ` +
      `from a clone of the repository (npm install).`
  const error = new Error(`shellwright: cannot load the native addon for ${target}. ${advice}`, { cause })
  error.code = 'ERR_ADDON_LOAD'
  return error
}

/**
 * The win32-x64 addon, which is built with mingw-w64 (`win32-x64-gnu`). The generated loader looks
 * for that build only inside a Node that was itself built with mingw, and for `win32-x64-msvc`
 * inside Node's official builds; but the gnu addon loads into those just as well (it finds
 * Node-API in node.exe at load time). Throws the load error for any other platform, or when the
 * gnu addon is absent or fails to load too.
 */
function windowsGnuAddon(cause) {
  if (process.platform !== 'win32' || process.arch !== 'x64') throw addonLoadError(cause)
  for (const id of ['./shellwright.win32-x64-gnu.node', 'shellwright-win32-x64-gnu']) {
    try {
      return require(id)
    } catch (error) {
      // A missing file or package is expected (one of the two is absent); any other failure is
      // the reason the addon cannot load.
      if (error.code !== 'MODULE_NOT_FOUND') throw addonLoadError(error)
    }
  }
  throw addonLoadError(cause)
}

/** The napi-rs name of this machine's target, e.g. `linux-x64-gnu` or `darwin-arm64`. */
function hostTarget() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const glibc = process.report.getReport().header.glibcVersionRuntime
    return `${platform}-${arch}-${glibc ? 'gnu' : 'musl'}`
  }
  if (platform === 'win32') return `${platform}-${arch}-${arch === 'x64' ? 'gnu' : 'msvc'}`
  return `${platform}-${arch}`
}
