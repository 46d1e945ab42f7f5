// What the MCP tools hand a model, through an in-memory MCP client: a screen with its styles marked,
// for menus whose selection is only a colour; shell output without colour and escape sequences
// (which the Shell's history keeps).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Shell } from '../index.js'
import * as mcpServer from '../packages/mcp/index.js'

/** The server and its shell (`buildServer` is the package's internal constructor behind createMcpServer). */
const { mcp, shell } = (mcpServer as unknown as { buildServer(): { mcp: ReturnType<typeof mcpServer.createMcpServer>; shell(): Shell } }).buildServer()

let client: Client
beforeAll(async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await mcp.connect(serverSide)
  client = new Client({ name: 'shellwright-tests', version: '1.0.0' })
  await client.connect(clientSide)
})
// Closing the client closes the server, which kills and reaps its sessions.
afterAll(() => client?.close())

async function ok(name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args })
  const [block] = result.content as { type: string; text: string }[]
  if (result.isError) throw new Error(`${name} failed: ${block.text}`)
  return block.text
}

describe('tui_screen format "styled"', () => {
  it('marks reverse video and colours where they change, and leaves plain rows alone', async () => {
    const menu = "printf '  Open\\n\\033[7m  Save  \\033[0m\\n  \\033[1;31mQuit\\033[0m now\\n\\033[38;5;208;48;2;0;0;64m[x]\\033[0m\\n'; read answer"
    const started = await ok('tui_start', { command: menu, cols: 30, rows: 6 })
    const id = started.match(/^started (t\d+): /)![1]
    const styled = await ok('tui_screen', { id, format: 'styled' })
    expect(styled.split('\n').slice(1)).toEqual([
      '  Open',
      '⟦inverse⟧  Save  ⟦/⟧',
      '  ⟦bold fg=red⟧Quit⟦/⟧ now',
      '⟦fg=208 bg=#000040⟧[x]⟦/⟧',
    ])
    // The status line is the plain screen's.
    const plain = await ok('tui_screen', { id })
    expect(styled.split('\n')[0]).toBe(plain.split('\n')[0])
    expect(plain.split('\n').slice(1)).toEqual(['  Open', '  Save', '  Quit now', '[x]'])
    await ok('tui_kill', { id })
  })
})

describe('shell_run', () => {
  it('hands the model the text without colour and escape sequences; the history keeps them', async () => {
    const command =
      "printf '\\033[1;31merror\\033[0m: \\033]8;;file:///a\\033\\\\a.txt\\033]8;;\\033\\\\ missing\\n\\033]0;title\\007\\033[2Kdone\\tok\\n'"
    expect(await ok('shell_run', { command })).toBe('error: a.txt missing\ndone\tok\n[exit code 0]')
    expect(shell().history().at(-1)!.output).toBe(
      '\x1b[1;31merror\x1b[0m: \x1b]8;;file:///a\x1b\\a.txt\x1b]8;;\x1b\\ missing\n\x1b]0;title\x07\x1b[2Kdone\tok\n',
    )
  })
})
