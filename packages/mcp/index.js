'use strict'
// `shellwright/mcp`: an MCP server (stdio, @modelcontextprotocol/sdk) that gives an agent one
// persistent shell, commands it steps through (exec_command / write_stdin) and real terminal programs. `createMcpServer()` builds the server
// for embedding; `shellwright mcp` connects it to stdin/stdout for MCP clients' configs.
// Each group of tools is a file of lib/tools/ (a new tool goes into the file of its group, or a
// new file registered below); lib/tools/common.js holds the bounds and schemas they share.
// The SDK and zod are optional peer dependencies of the package: checked first.
require('../common/peer-dependencies.js').requirePeers('mcp')
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js')
const { ExecSessions, Shell } = require('../../index.js')
const { ToolError, TuiSessions } = require('./lib/sessions.js')
const { WatchServers } = require('./lib/watch-servers.js')
const { LIMITS } = require('./lib/tools/common.js')
const { registerExecTools } = require('./lib/tools/exec.js')
const { registerShellTools } = require('./lib/tools/shell.js')
const { registerTuiTools } = require('./lib/tools/tui.js')
const { version } = require('../../package.json')

/**
 * The server, its shell (`shell()` makes it on first use) and its sessions. `close()` closes the
 * transport, closes the shell (its running command, its background jobs and every process its
 * runs left) and kills and reaps every exec and TUI session; the same cleanup runs when the client
 * closes the connection.
 */
function buildServer(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw Object.assign(new TypeError('options must be an object'), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  const mcp = new McpServer({ name: 'shellwright', version })
  // Made on first use: a server that is only asked about terminals never starts a shell session.
  let shellSession
  const shell = () => (shellSession ??= new Shell(options.minimizer ? { minimizer: options.minimizer } : {}))
  // Bad minimizer options are the caller's error now, not the first shell_run's.
  if (options.minimizer !== undefined) shell()
  const sessions = new TuiSessions(LIMITS)
  let execTable
  let released = false
  const execSessions = () => {
    if (released) throw new ToolError('the server is shutting down')
    return (execTable ??= new ExecSessions({ maxSessions: LIMITS.maxExecSessions }))
  }
  let watchServers
  sessions.onRemove = (session) => watchServers?.remove(session.id)
  registerShellTools(mcp, shell, options)
  registerExecTools(mcp, execSessions)
  registerTuiTools(mcp, sessions, () => watchServers)

  let cleanup
  const release = () => {
    released = true
    cleanup ??= Promise.all([sessions.closeAll(), execTable?.close(), shellSession?.close(), watchServers?.close()])
    return cleanup.then(() => {})
  }
  mcp.server.onclose = () => void release()
  const closeTransport = mcp.close.bind(mcp)
  mcp.close = async () => {
    await closeTransport()
    await release()
  }
  /** Serves the shell's mirror and every TUI session to browsers (see lib/watch-servers.js). */
  const serve = async ({ port, host }) => {
    watchServers = await WatchServers.start(shell(), { port, host })
    return watchServers.shellUrl
  }
  return { mcp, shell, sessions, serve, close: () => mcp.close() }
}

/**
 * An MCP server with the shell, exec and terminal tools, ready to `connect()` to a transport. Its
 * `close()` also kills and reaps every exec and TUI session it started.
 */
function createMcpServer(options = {}) {
  return buildServer(options).mcp
}

module.exports = { createMcpServer, buildServer, LIMITS }
