// What the MCP tools hand a model beyond plain rows, through an in-memory MCP client: a screen with
// its styles marked, for menus whose selection is only a colour.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMcpServer } from '../packages/mcp/index.js'

let client: Client
beforeAll(async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createMcpServer().connect(serverSide)
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
