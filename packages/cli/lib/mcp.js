'use strict'
// `shellwright mcp`: serves the MCP tools of `shellwright/mcp` over stdin/stdout. The server ends,
// after killing and reaping every session it started, when the client closes stdin or on SIGTERM,
// SIGINT or SIGHUP.
const { parseArgs } = require('node:util')
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js')
const { buildServer, LIMITS } = require('../../mcp/index.js')

const HELP = `usage: shellwright mcp

Serves Shellwright's MCP tools over stdin/stdout for an MCP client (Claude Code, Claude Desktop,
Cursor, …): shell_run (one persistent shell), tui_start, tui_send, tui_screen, tui_wait_for,
tui_exec, tui_resize, tui_kill and tui_list (programs in pseudo-terminals).
Client configuration: {"mcpServers":{"shellwright":{"command":"npx","args":["shellwright","mcp"]}}}

Limits: ${LIMITS.maxSessions} running sessions; transcripts keep their last ${LIMITS.maxOutputBytes / 1024} KB.
The server exits when the client closes stdin, killing every program it started.`

async function main(args) {
  try {
    const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } })
    if (values.help) {
      process.stdout.write(HELP + '\n')
      return 0
    }
  } catch (error) {
    process.stderr.write(`shellwright mcp: ${error.message}\n${HELP}\n`)
    return 2
  }

  const server = buildServer()
  const transport = new StdioServerTransport()
  await server.mcp.connect(transport)

  await new Promise((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.once(signal, resolve)
    const release = server.mcp.server.onclose
    server.mcp.server.onclose = () => {
      release()
      resolve()
    }
  })
  await server.close()
  process.stdin.destroy()
  return 0
}

module.exports = { main }
