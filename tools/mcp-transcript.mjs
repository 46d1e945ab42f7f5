#!/usr/bin/env node
// Prints a real transcript of an MCP client driving htop through `shellwright mcp` (the one in the
// README): each tool call as the agent sends it, then the text the server returns.
//
// Usage: node tools/mcp-transcript.mjs
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'cli', 'bin', 'shellwright.js')
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [cli, 'mcp'],
  env: { ...process.env, TERM: 'xterm-256color' },
  stderr: 'inherit',
})
const client = new Client({ name: 'transcript', version: '1.0.0' })
await client.connect(transport)

async function call(name, args) {
  const result = await client.callTool({ name, arguments: args })
  process.stdout.write(`→ ${name} ${JSON.stringify(args)}\n`)
  process.stdout.write(`← ${result.isError ? '(tool error) ' : ''}${result.content[0].text}\n\n`)
  return result.content[0].text
}

try {
  const started = await call('tui_start', { command: 'htop --no-color', cols: 80, rows: 11 })
  const id = started.match(/^started (t\d+)/)[1]
  await call('tui_send', { id, keys: '<f6>' })
  await call('tui_send', { id, keys: '<esc>q' })
} finally {
  await client.close()
}
