'use strict'
// The MCP server and the web terminal need packages that a project using only the addon does not:
// they are optional peer dependencies of `shellwright` (package.json `peerDependencies`), which
// npm does not install with it. `shellwright/mcp`, `shellwright/web` and the commands built on
// them check for theirs when loaded; a missing one is an error that says what to install, with
// the versions package.json asks for.
const { name, peerDependencies } = require('../../package.json')

/** The packages each optional part needs, and the command of the CLI that uses it. */
const PARTS = {
  mcp: { entry: `${name}/mcp`, command: 'mcp', packages: ['@modelcontextprotocol/sdk', 'zod'] },
  web: { entry: `${name}/web`, command: 'serve', packages: ['ws', '@xterm/xterm', '@xterm/addon-fit'] },
}

/** Throws `ERR_MISSING_PEER` naming what `part` (`'mcp'` or `'web'`) needs and cannot find. */
function requirePeers(part) {
  const { entry, command, packages } = PARTS[part]
  const missing = packages.filter((pkg) => !isInstalled(pkg))
  if (missing.length === 0) return
  const spec = (pkg) => `${pkg}@${peerDependencies[pkg]}`
  const npx = ['npx', '-p', name, ...packages.flatMap((pkg) => ['-p', spec(pkg)]), name, command]
  const error = new Error(
    `${entry} needs ${listed(missing)}, which ${missing.length === 1 ? 'is' : 'are'} not installed. ` +
      `Install ${missing.length === 1 ? 'it' : 'them'} next to ${name}: npm install ${missing.map(spec).join(' ')} ` +
      `(or run the command with npx: ${npx.join(' ')})`,
  )
  error.code = 'ERR_MISSING_PEER'
  error.missing = missing
  throw error
}

/**
 * Whether `pkg` resolves from here, as the part's own `require` would find it. Its package.json is
 * asked for, since not every package exports its root; one that keeps package.json private is
 * there all the same.
 */
function isInstalled(pkg) {
  try {
    require.resolve(`${pkg}/package.json`)
    return true
  } catch (error) {
    return error.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED'
  }
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items) {
  return items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`
}

module.exports = { requirePeers }
