'use strict'
// `shellwright mcp [--serve PORT] [--host H]`: serves the MCP tools of `shellwright/mcp` over
// stdin/stdout, and with --serve the shell and every TUI session to browsers. The server ends, after
// killing and reaping every session it started, when the client closes stdin or on SIGTERM, SIGINT
// or SIGHUP.
const { parseArgs } = require('node:util')
// First shellwright/mcp, which says what to install when its optional packages are missing.
const { buildServer, LIMITS } = require('../../mcp/index.js')
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js')

const HELP = `usage: shellwright mcp [--minimize] [--serve PORT [--host H]]

Serves Shellwright's MCP tools over stdin/stdout for an MCP client (Claude Code, Claude Desktop,
Cursor, …): shell_run (one persistent shell), tui_start, tui_send, tui_screen, tui_wait_for,
tui_exec, tui_resize, tui_kill and tui_list (programs in pseudo-terminals).
Client configuration: {"mcpServers":{"shellwright":{"command":"npx","args":["shellwright","mcp"]}}}

  --serve PORT  let a person watch in a browser: the shell's commands, read-only, on PORT (0: any
                free port), and each TUI session, which they can type into, on a port of its own (its
                URL is in tui_start's result and tui_list). The shell's URL, with the access token
                every page needs, is printed on stderr.
  --host H      address the pages listen on (default 127.0.0.1: this machine only)
  --minimize    condense shell_run output of known programs (cargo, git, npm, make, test runners…):
                errors, warnings and summaries are kept

Limits: ${LIMITS.maxSessions} running sessions; transcripts keep their last ${LIMITS.maxOutputBytes / 1024} KB.
The server exits when the client closes stdin, killing every program it started.`

function parseCommandLine(args) {
  const { values } = parseArgs({
    args,
    options: {
      serve: { type: 'string' },
      host: { type: 'string' },
      minimize: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const port = values.serve === undefined ? undefined : Number(values.serve)
  if (port !== undefined && (values.serve === '' || !Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`--serve must be a port number from 0 to 65535, got '${values.serve}'`)
  }
  if (values.host !== undefined && port === undefined) throw new Error('--host needs --serve')
  return { help: values.help, port, host: values.host, minimize: values.minimize ?? false }
}

async function main(args) {
  let options
  try {
    options = parseCommandLine(args)
  } catch (error) {
    process.stderr.write(`shellwright mcp: ${error.message}\n${HELP}\n`)
    return 2
  }
  if (options.help) {
    process.stdout.write(HELP + '\n')
    return 0
  }

  const server = buildServer(options.minimize ? { minimizer: { enabled: true } } : {})
  if (options.port !== undefined) {
    try {
      const url = await server.serve({ port: options.port, host: options.host })
      process.stderr.write(`shellwright mcp: watch the shell at ${url}\n`)
    } catch (error) {
      process.stderr.write(`shellwright mcp: --serve: ${error.message}\n`)
      return 1
    }
  }
  const transport = new StdioServerTransport()
  await server.mcp.connect(transport)

  await new Promise((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
    // A client that died mid-reply: EPIPE on stdout is a disconnect, not a crash that skips cleanup.
    process.stdout.on('error', resolve)
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
