// `shellwright mcp` driven by the MCP SDK's own Client over stdio, the way an agent's MCP client
// drives it: the tool list and schemas, structured results, the persistent shell, exec_command and
// write_stdin, real TUIs (htop, a Textual app, vim, a
// crossterm program that blocks on a cursor-position query), interactive-shell exec with exit codes,
// tool errors, and the cleanup of every process when the client goes away.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createMcpServer } from '../packages/mcp/index.js'
import { isRunning, pidsIn, waitUntil } from './helpers.js'

const root = join(__dirname, '..')
const cli = join(root, 'packages', 'cli', 'bin', 'shellwright.js')
const scratch = mkdtempSync(join(tmpdir(), 'shellwright-mcp-'))
/** A fixed terminal and HOME, so the host's settings cannot change the screens (htop saves its config there). */
const env = { ...process.env, TERM: 'xterm-256color', HOME: scratch, LANG: 'C.UTF-8' } as Record<string, string>

/** The venv tools/provision-tests.sh installs Textual into (`npm test` runs it), else a python3 that has it. */
function textualPython(): string {
  const venv = join(root, 'target', 'textual-venv', 'bin', 'python')
  if (existsSync(venv)) return venv
  if (spawnSync('python3', ['-c', 'import textual']).status === 0) return 'python3'
  throw new Error('Textual is not installed: run tools/provision-tests.sh (a venv in target/textual-venv)')
}

type Server = { client: Client; transport: StdioClientTransport; pid: number }

async function connect(...flags: string[]): Promise<Server> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', ...flags],
    env,
    cwd: scratch,
    stderr: flags.length > 0 ? 'pipe' : 'inherit',
  })
  const client = new Client({ name: 'shellwright-tests', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport, pid: transport.pid! }
}

/** Calls a tool and returns its one text block, its structuredContent and whether it is a tool error. */
async function call(server: Server, name: string, args: Record<string, unknown>) {
  const result = await server.client.callTool({ name, arguments: args })
  const content = result.content as { type: string; text: string }[]
  expect(content).toHaveLength(1)
  expect(content[0].type).toBe('text')
  const isError = result.isError === true
  // Every result that is not an error carries its facts for clients that do not parse text.
  expect(result.structuredContent === undefined, `${name}: structuredContent`).toBe(isError)
  return { text: content[0].text, isError, facts: result.structuredContent as Record<string, any> }
}

/** A tool's result as its text and its structuredContent; a tool error throws. */
async function facts(server: Server, name: string, args: Record<string, unknown>) {
  const { text, isError, facts } = await call(server, name, args)
  if (isError) throw new Error(`${name} failed: ${text}`)
  return { text, facts }
}

async function ok(server: Server, name: string, args: Record<string, unknown>) {
  const { text, isError } = await call(server, name, args)
  if (isError) throw new Error(`${name} failed: ${text}`)
  return text
}

async function toolError(server: Server, name: string, args: Record<string, unknown>) {
  const { text, isError } = await call(server, name, args)
  expect(isError, text).toBe(true)
  return text
}

/** The id in "started t3: …". */
const idOf = (started: string) => started.match(/^started (t\d+): /)![1]

/** Every live descendant of `pid`, from /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // exited while we looked
    }
  }
  const found: number[] = []
  const walk = (of: number) => {
    for (const [child, ppid] of parent) if (ppid === of && isRunning(child)) found.push(child), walk(child)
  }
  walk(pid)
  return found
}

let server: Server
beforeAll(async () => {
  const build = spawnSync(
    'cargo',
    ['build', '--quiet', '--manifest-path', join(root, 'tests', 'fixtures', 'crossterm-cpr', 'Cargo.toml'), '--target-dir', join(root, 'target', 'fixtures')],
    { encoding: 'utf8', timeout: 300_000 },
  )
  if (build.status !== 0) throw new Error(`building the crossterm fixture failed: ${build.error ?? build.stderr}`)
  server = await connect()
}, 310_000)
afterAll(async () => {
  await server?.client.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('shellwright mcp: tools', () => {
  it('lists the twelve tools, each with a description, an input schema and an output schema', async () => {
    const { tools } = await server.client.listTools()
    const shape = Object.fromEntries(
      tools.map((t) => [t.name, { properties: Object.keys(t.inputSchema.properties ?? {}), required: t.inputSchema.required ?? [] }]),
    )
    expect(shape).toEqual({
      shell_run: { properties: ['command', 'cwd', 'timeout_ms'], required: ['command'] },
      shell_jobs: { properties: ['job'], required: [] },
      exec_command: { properties: ['cmd', 'workdir', 'yield_time_ms', 'max_output_tokens'], required: ['cmd'] },
      write_stdin: { properties: ['session_id', 'chars', 'yield_time_ms', 'max_output_tokens'], required: ['session_id'] },
      tui_start: { properties: ['command', 'cwd', 'cols', 'rows', 'answer_queries', 'interactive', 'quiet_ms'], required: [] },
      tui_send: { properties: ['id', 'text', 'keys', 'quiet_ms'], required: ['id'] },
      tui_screen: { properties: ['id', 'format'], required: ['id'] },
      tui_wait_for: { properties: ['id', 'text', 'regex', 'timeout_ms'], required: ['id'] },
      tui_exec: { properties: ['id', 'command', 'timeout_ms'], required: ['id', 'command'] },
      tui_resize: { properties: ['id', 'cols', 'rows', 'quiet_ms'], required: ['id', 'cols', 'rows'] },
      tui_kill: { properties: ['id'], required: ['id'] },
      tui_list: { properties: [], required: [] },
    })
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.outputSchema?.type, tool.name).toBe('object')
      expect(tool.description!.length, tool.name).toBeGreaterThan(100)
    }
    const exec = tools.find((t) => t.name === 'exec_command')!
    expect(exec.inputSchema.properties!.yield_time_ms).toMatchObject({ type: 'integer', minimum: 0, maximum: 30000 })
    expect(exec.outputSchema!.required).toEqual(['returned', 'listening', 'output', 'truncated_bytes', 'wall_time_ms', 'elapsed_ms'])
    const start = tools.find((t) => t.name === 'tui_start')!.inputSchema.properties as Record<string, object>
    expect(start.cols).toMatchObject({ type: 'integer', minimum: 20, maximum: 400 })
    expect(start.answer_queries).toMatchObject({ type: 'boolean' })
    const screen = tools.find((t) => t.name === 'tui_screen')!.inputSchema.properties as Record<string, object>
    expect(screen.format).toMatchObject({ type: 'string', enum: ['text', 'styled', 'ansi'] })
  })
})

describe('shellwright mcp: shell_jobs', () => {
  it('shows what a background job wrote after its shell_run returned, and how it ended', async () => {
    const command = '(sleep 1; printf "\\e[32mbuilt\\e[0m\\n"; exit 3) &'
    expect(await ok(server, 'shell_run', { command: `${command} echo started` })).toBe('started\n[exit code 0]')
    const job = async () => (await facts(server, 'shell_jobs', {})).facts.jobs.find((j: any) => j.command === command)
    const running = await job()
    expect(running).toMatchObject({ command, running: true, output: '' })
    let ended = running
    const deadline = Date.now() + 10_000
    while (ended.running && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
      ended = await job()
    }
    expect(ended).toEqual({ id: running.id, command, running: false, exit_code: 3, output: 'built\n' })
    expect(await facts(server, 'shell_jobs', { job: running.id })).toEqual({
      text: `[${running.id}] exited 3 · ${command}\nbuilt`,
      facts: { jobs: [ended] },
    })
    expect(await toolError(server, 'shell_jobs', { job: 999 })).toMatch(/^no job 999; the shell's jobs: (%\d+, )*%\d+$/)
  })
})

describe('shellwright mcp: shell_run', () => {
  it('keeps the working directory and variables between calls and reports exit codes', async () => {
    // `exit` ends the shell: the next command starts a fresh one where the server runs.
    const ended = `the shell ended, the next command starts a fresh one in ${scratch} (variables and functions are gone)`
    expect(await facts(server, 'shell_run', { command: 'echo out; exit 4' })).toEqual({
      text: `out\n[exit code 4; ${ended}]`,
      facts: { exit_code: 4, timed_out: false, cancelled: false, cwd: scratch, session_reset: true, output: 'out\n', minimized: false },
    })
    expect(await ok(server, 'shell_run', { command: `cd '${scratch}' && export GREETING=hi && pwd` })).toBe(`${scratch}\n[exit code 0]`)
    expect(await ok(server, 'shell_run', { command: 'pwd; echo "$GREETING"' })).toBe(`${scratch}\nhi\n[exit code 0]`)
    expect(await ok(server, 'shell_run', { command: "sh -c 'echo to stderr >&2; exit 3'" })).toBe('to stderr\n[exit code 3]')
    expect(await ok(server, 'shell_run', { command: 'true', cwd: '/' })).toBe('(no output)\n[exit code 0]')
    expect(await ok(server, 'shell_run', { command: 'pwd' })).toBe('/\n[exit code 0]')
  })

  it('keeps the end of a long transcript, under a header counting what was dropped', async () => {
    const text = await ok(server, 'shell_run', { command: 'seq 1 20000' })
    const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join('')
    const dropped = full.length - 32 * 1024
    const header = `[Terminal output truncated: ~${Math.ceil(dropped / 1024)} KB dropped from beginning]\n`
    expect(text).toBe(header + full.slice(dropped) + '[exit code 0]')
  })

  it('a timed-out command is stopped with everything it started', async () => {
    const text = await ok(server, 'shell_run', {
      command: "sh -c 'sleep 31 & echo $!; echo $$; exec sleep 32'",
      timeout_ms: 500,
    })
    expect(text).toMatch(/^\d+\n\d+\n\[timed out after 500 ms: the command and everything it started were stopped; the shell is still in \/.*\]$/)
    const pids = pidsIn(text)
    expect(pids).toHaveLength(2)
    await waitUntil(() => pids.every((pid) => !isRunning(pid)), 5000, 'the timed-out processes to be gone')
    expect(await ok(server, 'shell_run', { command: 'echo still here' })).toBe('still here\n[exit code 0]')
  })

  it('says when exit ended the shell, and the next call gets a fresh one', async () => {
    await ok(server, 'shell_run', { command: 'GONE=1' })
    const text = await ok(server, 'shell_run', { command: 'exit 4' })
    expect(text).toMatch(/^\(no output\)\n\[exit code 4; the shell ended, the next command starts a fresh one in \/.* \(variables and functions are gone\)\]$/)
    expect(await ok(server, 'shell_run', { command: 'echo "[$GONE]"' })).toBe('[]\n[exit code 0]')
  })

  it('a request the client cancels stops its command', async () => {
    const pidFile = join(scratch, 'cancelled.pid')
    const controller = new AbortController()
    const pending = server.client.callTool(
      { name: 'shell_run', arguments: { command: `sh -c 'echo $$ > "${pidFile}"; exec sleep 30'` } },
      undefined,
      { signal: controller.signal },
    )
    await waitUntil(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 5000, 'the command to start')
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(isRunning(pid)).toBe(true)
    controller.abort()
    await expect(pending).rejects.toThrow(/abort/i)
    await waitUntil(() => !isRunning(pid), 5000, 'the cancelled command to be stopped')
    expect(await ok(server, 'shell_run', { command: 'echo next' })).toBe('next\n[exit code 0]')
  })
})

describe('shellwright mcp: exec_command and write_stdin', () => {
  it('a command that exits: why it returned first, then its output', async () => {
    expect(await facts(server, 'exec_command', { cmd: 'echo hi; exit 3' })).toEqual({
      text: 'exited 3\nhi',
      facts: {
        returned: 'exited',
        exit_code: 3,
        listening: [],
        output: 'hi',
        truncated_bytes: 0,
        wall_time_ms: expect.any(Number),
        elapsed_ms: expect.any(Number),
      },
    })
    expect((await facts(server, 'exec_command', { cmd: 'pwd', workdir: '/' })).text).toBe('exited 0\n/')
  })

  it('python3 -q: each call returns at the prompt; the session is gone once its exit was reported', async () => {
    const started = await facts(server, 'exec_command', { cmd: 'python3 -q' })
    const id = started.facts.session_id
    expect(started.text).toBe(`waiting for input: ">>> " · session_id ${id}\n>>>`)
    expect(started.facts).toMatchObject({ returned: 'waiting_for_input', prompt: '>>> ', input_mode: 'keys' })
    const answer = await facts(server, 'write_stdin', { session_id: id, chars: 'print(6*7)\r' })
    expect(answer.text).toBe(`waiting for input: ">>> " · session_id ${id}\n>>> print(6*7)\n42\n>>>`)
    expect(answer.facts.wall_time_ms).toBeLessThan(5000)
    expect((await facts(server, 'write_stdin', { session_id: id, chars: 'exit()\r' })).text).toBe('exited 0\n>>> exit()')
    expect(await toolError(server, 'write_stdin', { session_id: id, chars: '' })).toMatch(new RegExp(`^no exec session with id ${id}: `))
  })

  it('a busy command: still running after the yield; Ctrl+C through write_stdin ends it', async () => {
    const started = await facts(server, 'exec_command', { cmd: 'echo up; sleep 30', yield_time_ms: 300 })
    const id = started.facts.session_id
    expect(started.text).toMatch(new RegExp(`^still running after \\d+ ms · session_id ${id}\nup$`))
    expect(started.facts.wall_time_ms).toBeGreaterThanOrEqual(300)
    const poll = await facts(server, 'write_stdin', { session_id: id, yield_time_ms: 100 })
    expect(poll.text).toMatch(new RegExp(`^still running after \\d+ ms · session_id ${id}\n\\(no new output\\)$`))
    const stopped = await facts(server, 'write_stdin', { session_id: id, chars: '\u0003' })
    // The terminal echoes the Ctrl+C, as a terminal does.
    expect(stopped.text).toBe('exited 130 (killed by SIGINT)\n^C')
    expect(stopped.facts).toMatchObject({ returned: 'exited', exit_code: 130, signal: 'SIGINT' })
  })

  it('max_output_tokens keeps the end (4 bytes a token) and says what it dropped', async () => {
    const { text, facts: update } = await facts(server, 'exec_command', { cmd: 'seq 1 3000', max_output_tokens: 25 })
    const full = Array.from({ length: 3000 }, (_, i) => `${i + 1}`).join('\n')
    expect(text).toBe(`exited 0\n[${full.length - 100} bytes of earlier output dropped]\n${full.slice(-100)}`)
    expect(update).toMatchObject({ truncated_bytes: full.length - 100, output: full.slice(-100) })
  })

  it('a server: listening on the port it printed', async () => {
    const started = await facts(server, 'exec_command', { cmd: 'python3 -m http.server 0 --bind 127.0.0.1' })
    const port = Number(started.facts.output.match(/port (\d+) /)?.[1])
    expect(started.facts.listening).toEqual([port])
    expect(started.text.split('\n')[0]).toMatch(new RegExp(` · session_id ${started.facts.session_id} · listening on :${port}$`))
    expect(await httpGet(`http://127.0.0.1:${port}/`)).toBe(200)
    const stopped = await facts(server, 'write_stdin', { session_id: started.facts.session_id, chars: '\u0003' })
    expect(stopped.facts.returned).toBe('exited')
  })

  it('bad arguments are tool errors', async () => {
    const invalid = (tool: string, why: string) => `MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: ${why}`
    expect(await toolError(server, 'exec_command', { cmd: 'true', yield_time_ms: 60_000 })).toBe(
      invalid('exec_command', 'Too big: expected number to be <=30000 at yield_time_ms'),
    )
    expect(await toolError(server, 'write_stdin', { session_id: '1' })).toBe(
      invalid('write_stdin', 'Invalid input: expected number, received string at session_id'),
    )
    const missing = join(scratch, 'missing')
    expect(await toolError(server, 'exec_command', { cmd: 'true', workdir: missing })).toBe(`Failed to set cwd: ${missing}: No such file or directory`)
  })
})

describe('createMcpServer', () => {
  it('checks its options', () => {
    expect(() => createMcpServer(5 as unknown as object)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'options must be an object' }))
  })
})

describe('shellwright mcp: TUI programs', () => {
  it('htop: first screen, F2 setup, then <esc>q in one call quits', async () => {
    const started = await ok(server, 'tui_start', { command: 'htop', cols: 80, rows: 24 })
    const id = idOf(started)
    const lines = started.split('\n')
    expect(lines[1]).toMatch(new RegExp(`^\\[${id} · waiting for keys · 80x24 · cursor \\d+,\\d+ hidden\\]$`))
    const main = await ok(server, 'tui_wait_for', { id, text: 'F10Quit' })
    expect(main).toMatch(/^ *PID USER +PRI +NI +VIRT +RES +SHR +S +CPU%.MEM% +TIME\+ +Command$/m)
    expect(main.split('\n').at(-1)).toBe('F1Help  F2Setup F3SearchF4FilterF5Tree  F6SortByF7Nice -F8Nice +F9Kill  F10Quit')
    const setup = await ok(server, 'tui_send', { id, keys: '<f2>' })
    expect(setup).toMatch(/^Categories +Display options$/m)
    expect(setup.split('\n').at(-1)).toBe('F1      F2      F3      F4      F5      F6      F7      F8      F9      F10Done')
    // <esc> leaves the setup screen and q quits: the server lets htop read the Escape alone first, or
    // the two would arrive as Alt+q.
    const quit = await ok(server, 'tui_send', { id, keys: '<esc>q' })
    expect(quit.split('\n')[0]).toMatch(new RegExp(`^\\[${id} · exited with code 0 · 80x24 · `))
  })

  // Python's start and Textual's imports alone can take seconds on a loaded machine.
  it('a Textual app: draws, counts on + and -, quits on q', { timeout: 60_000 }, async () => {
    const started = await ok(server, 'tui_start', { command: `'${textualPython()}' '${join(root, 'tests', 'fixtures', 'textual-counter', 'app.py')}'`, cols: 40, rows: 8 })
    const id = idOf(started)
    const footer = /^ \+ Add  - Subtract  q Quit/
    // Textual draws from an event loop; the footer is its last piece.
    const screen = await ok(server, 'tui_wait_for', { id, regex: footer.source, timeout_ms: 20_000 })
    expect(screen.split('\n')[0]).toMatch(new RegExp(`^\\[${id} · (waiting for keys|running) · 40x8 · cursor 0,0 hidden\\]$`))
    expect(screen.split('\n').slice(1, 3)).toEqual(['', '  Count: 0'])
    expect(screen.split('\n').at(-1)).toMatch(footer)
    await ok(server, 'tui_send', { id, keys: '++' })
    const two = await ok(server, 'tui_wait_for', { id, text: 'Count: 2' })
    expect(two.split('\n')[2]).toBe('  Count: 2')
    await ok(server, 'tui_send', { id, text: '-' })
    expect((await ok(server, 'tui_wait_for', { id, text: 'Count: 1' })).split('\n')[2]).toBe('  Count: 1')
    await ok(server, 'tui_send', { id, keys: 'q' })
    const list = await ok(server, 'tui_list', {})
    expect(list).toMatch(new RegExp(`^${id}\\texited with code 0\\t40x8\\t`, 'm'))
  })

  describe('the crossterm program that asks for the cursor position', () => {
    const binary = join(root, 'target', 'fixtures', 'debug', 'crossterm-cpr')

    it('gets its answer and exits at once', async () => {
      const started = await ok(server, 'tui_start', { command: `'${binary}'`, cols: 40, rows: 8 })
      const id = idOf(started)
      expect(started).toBe(`started ${id}: '${binary}'\n[${id} · exited with code 0 · 40x8 · cursor 5,0]\n\n\n\n\nposition col=7 row=3`)
    })

    it('with answer_queries false it visibly waits, then gives up', async () => {
      const started = await ok(server, 'tui_start', { command: `'${binary}'`, cols: 40, rows: 8, answer_queries: false })
      const id = idOf(started)
      // Blocked reading the answer to its query: the cursor where it moved it, nothing printed.
      expect(started).toBe(`started ${id}: '${binary}'\n[${id} · waiting for keys · 40x8 · cursor 3,7]`)
      const gaveUp = await ok(server, 'tui_wait_for', { id, text: 'no position', timeout_ms: 10_000 })
      expect(gaveUp.split('\n')[5]).toMatch(/^no position: /)
    })
  })

  it('vim: insert text, see the cursor, resize, quit', async () => {
    // A short escape timeout: vim otherwise waits a second after <esc> for the rest of a key sequence.
    const vim = "vim -u NONE -i NONE -N -n -c 'set ttimeout ttimeoutlen=20'"
    const started = await ok(server, 'tui_start', { command: vim, cols: 40, rows: 10 })
    const id = idOf(started)
    const tildes = Array.from({ length: 8 }, () => '~')
    // tui_start returns once vim waits for keys: its first screen is whole.
    expect(started.split('\n').slice(1).join('\n')).toBe(
      [`[${id} · waiting for keys · 40x10 · cursor 0,0]`, '', ...tildes].join('\n'),
    )
    const typed = await facts(server, 'tui_send', { id, keys: 'ihello world<esc>' })
    expect(typed.text).toBe([`[${id} · waiting for keys · 40x10 · cursor 0,10]`, 'hello world', ...tildes].join('\n'))
    expect(typed.facts).toEqual({
      id,
      status: 'waiting for keys',
      running: true,
      cols: 40,
      rows: 10,
      cursor: { row: 0, col: 10, visible: true },
      title: '',
      lines: ['hello world', ...tildes],
    })
    expect(await ok(server, 'tui_resize', { id, cols: 50, rows: 6 })).toBe(
      [`[${id} · waiting for keys · 50x6 · cursor 0,10]`, 'hello world', '~', '~', '~', '~'].join('\n'),
    )
    expect(await ok(server, 'tui_screen', { id, format: 'ansi' })).toContain('hello world')
    expect((await ok(server, 'tui_send', { id, keys: ':q!<enter>' })).split('\n')[0]).toMatch(
      new RegExp(`^\\[${id} · exited with code 0 · 50x6 · `),
    )
    expect(await ok(server, 'tui_kill', { id })).toMatch(new RegExp(`^${id} exited with code 0\nlast screen:\n`))
    const listed = await facts(server, 'tui_list', {})
    expect(listed.text).not.toMatch(new RegExp(`^${id}\\t`, 'm'))
    expect(listed.facts.sessions.map((session: { id: string }) => session.id)).not.toContain(id)
  })

  it('tui_exec runs commands in an interactive shell and returns exit codes 0 and 3', async () => {
    const started = await ok(server, 'tui_start', { interactive: true, cwd: scratch })
    const id = idOf(started)
    expect(await ok(server, 'tui_exec', { id, command: 'echo hello; pwd' })).toBe(`hello\n${scratch}\n[exit code 0]`)
    expect(await facts(server, 'tui_exec', { id, command: '(exit 3)' })).toEqual({
      text: '(no output)\n[exit code 3]',
      facts: { output: '', exit_code: 3 },
    })
    expect(await toolError(server, 'tui_exec', { id, command: 'sleep 30', timeout_ms: 300 })).toBe(
      'exec timed out after 300 ms (Ctrl+C was sent)',
    )
    expect(await ok(server, 'tui_exec', { id, command: 'echo back' })).toBe('back\n[exit code 0]')
    // A command that stops to ask: the call returns at once, saying so, and tui_send answers.
    const asks = await ok(server, 'tui_exec', { id, command: "read -r -p 'name? ' x; echo \"hi $x\"" })
    expect(asks.split('\n')[0]).toBe('the command is waiting for input (waiting for a line: "name?"); answer with tui_send')
    expect(asks.split('\n').at(-1)).toBe('name?')
    const answered = await ok(server, 'tui_send', { id, keys: 'ada<enter>' })
    expect(answered).toMatch(/^hi ada$/m)
    expect(await ok(server, 'tui_exec', { id, command: 'echo after' })).toBe('after\n[exit code 0]')
    expect(await ok(server, 'tui_kill', { id })).toMatch(new RegExp(`^${id} cancelled\nlast screen:\n`))
  })
})

describe('shellwright mcp: tool errors', () => {
  it('a bad id or argument is a tool error with a clear message, and the server goes on', async () => {
    const sleeper = idOf(await ok(server, 'tui_start', { command: 'echo ready; exec cat' }))
    expect(await toolError(server, 'tui_send', { id: 't999', keys: 'q' })).toMatch(/^no TUI session with id "t999": the sessions are (t\d+, )*t\d+$/)
    expect(await toolError(server, 'tui_send', { id: sleeper, keys: 'a<nope>' })).toBe('unknown key <nope>')
    expect(await toolError(server, 'tui_send', { id: sleeper })).toBe('give text, keys or both')
    expect(await toolError(server, 'tui_wait_for', { id: sleeper, text: 'a', regex: 'b' })).toBe('give exactly one of text or regex')
    expect(await toolError(server, 'tui_wait_for', { id: sleeper, regex: '(' })).toBe(
      'regex is not a valid regular expression: Invalid regular expression: /(/m: Unterminated group',
    )
    expect(await toolError(server, 'tui_wait_for', { id: sleeper, text: 'never', timeout_ms: 200 })).toBe(
      `timed out after 200 ms waiting for "never"\n[${sleeper} · waiting for a line · 80x24 · cursor 1,0]\nready`,
    )
    expect(await toolError(server, 'tui_exec', { id: sleeper, command: 'true' })).toBe(
      `session ${sleeper} runs "echo ready; exec cat", not an interactive shell: start one with tui_start interactive: true`,
    )
    expect(await toolError(server, 'tui_start', {})).toBe('command is required unless interactive is true')
    expect(await toolError(server, 'tui_start', { command: 'true', interactive: true })).toMatch(/^command must be omitted when interactive is true/)
    const missing = join(scratch, 'missing')
    expect(await toolError(server, 'tui_start', { command: 'true', cwd: missing })).toBe(`Failed to set cwd: ${missing}: No such file or directory`)
    expect(await toolError(server, 'shell_run', { command: 'true', cwd: missing })).toBe(
      `Failed to set cwd: ${missing}: i/o error: No such file or directory (os error 2)`,
    )
    const invalid = (tool: string, why: string) => `MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: ${why}`
    expect(await toolError(server, 'tui_start', { command: 'true', cols: 5 })).toBe(invalid('tui_start', 'Too small: expected number to be >=20 at cols'))
    expect(await toolError(server, 'shell_run', {})).toBe(invalid('shell_run', 'Invalid input: expected string, received undefined at command'))
    expect(await toolError(server, 'tui_send', { id: 5, keys: 'q' })).toBe(invalid('tui_send', 'Invalid input: expected string, received number at id'))
    const killed = await facts(server, 'tui_kill', { id: sleeper })
    expect(killed.text).toMatch(new RegExp(`^${sleeper} cancelled\n`))
    expect(killed.facts).toMatchObject({ id: sleeper, status: 'cancelled', last_screen: { id: sleeper, lines: ['ready'] } })
    expect(await toolError(server, 'tui_screen', { id: sleeper })).toMatch(new RegExp(`^no TUI session with id "${sleeper}"`))
    expect(await ok(server, 'shell_run', { command: 'echo alive' })).toBe('alive\n[exit code 0]')
  })
})

describe('shellwright mcp --minimize', () => {
  it("shell_run returns the minimizer's rewrite of known programs' output", async () => {
    const repo = join(scratch, 'repo')
    const gitEnv = 'GIT_AUTHOR_NAME=Ann GIT_AUTHOR_EMAIL=ann@example.com GIT_AUTHOR_DATE=2026-01-05T10:00:00+0000 ' +
      'GIT_COMMITTER_NAME=Ann GIT_COMMITTER_EMAIL=ann@example.com GIT_COMMITTER_DATE=2026-01-05T10:00:00+0000'
    const setup = `git init -q '${repo}' && cd '${repo}' && ${gitEnv} git commit -q --allow-empty -m first && git log --format=%H`
    const sha = (await ok(server, 'shell_run', { command: setup })).split('\n')[0]
    const date = 'Mon Jan 5 10:00:00 2026 +0000'
    expect(await ok(server, 'shell_run', { command: 'git log' })).toBe(
      `commit ${sha}\nAuthor: Ann <ann@example.com>\nDate:   ${date}\n\n    first\n[exit code 0]`,
    )
    const own = await connect('--minimize')
    try {
      expect(await ok(own, 'shell_run', { command: `git -C '${repo}' log` })).toBe(
        `commit ${sha.slice(0, 8)} · 2026-01-05 10:00 +0000 · Ann\n    first\n[exit code 0]`,
      )
    } finally {
      await own.client.close()
    }
  })

  it('createMcpServer checks the minimizer options', () => {
    expect(() => createMcpServer({ minimizer: { enabled: 'yes' as unknown as boolean } })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }),
    )
  })
})

describe('shellwright mcp: limits', () => {
  it('refuses a ninth running session, and takes one again after a tui_kill', async () => {
    const own = await connect()
    try {
      const ids: string[] = []
      for (let i = 0; i < 8; i++) ids.push(idOf(await ok(own, 'tui_start', { command: 'echo up; exec cat' })))
      expect(ids).toEqual(['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8'])
      expect(await toolError(own, 'tui_start', { command: 'true' })).toBe(
        'too many running sessions (the limit is 8); end one with tui_kill first',
      )
      await ok(own, 'tui_kill', { id: 't3' })
      expect(idOf(await ok(own, 'tui_start', { command: 'echo up; exec cat' }))).toBe('t9')
    } finally {
      await own.client.close()
    }
  })
})

describe('shellwright mcp: cleanup', () => {
  it('killing the client leaves no process behind, background jobs and nohup included', async () => {
    const sessions = ['htop', "sh -c 'echo ready; exec cat'", 'exec:echo ready; exec sleep 300', 'shell:sleep 777 & nohup sleep 778 >/dev/null 2>&1 &']
    const client = spawn(process.execPath, [join(root, 'tests', 'fixtures', 'mcp-client.mjs'), ...sessions], {
      env,
      cwd: scratch,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: client.stdout! }).once('line', resolve)
      client.once('exit', (code) => reject(new Error(`the client exited (${code}) before starting its sessions`)))
    })
    const serverPid: number = JSON.parse(line).server
    let children: number[] = []
    try {
      // The shell's run returns once it has started its background jobs, which may not have
      // reached `exec` yet: their command lines are awaited, not assumed.
      const sleeps = () => children.filter((pid) => /^sleep 77[78]$/.test(commandLine(pid)))
      await waitUntil(
        () => {
          children = descendants(serverPid)
          return sleeps().length === 2
        },
        10_000,
        'both background sleeps to start',
      )
      // htop, sh running cat (or cat itself), the exec session's sleep and the two background
      // sleeps: at least five programs.
      expect(children.length).toBeGreaterThanOrEqual(5)
    } finally {
      client.kill('SIGKILL')
    }
    await waitUntil(() => [serverPid, ...children].every((pid) => !isRunning(pid)), 10_000, 'the server and its sessions to exit')
  })

  it('SIGTERM to the server kills and reaps its sessions before it exits', async () => {
    const own = await connect()
    await ok(own, 'tui_start', { command: "sh -c 'echo ready; exec cat'" })
    await ok(own, 'tui_start', { interactive: true })
    const children = descendants(own.pid)
    expect(children.length).toBeGreaterThanOrEqual(2)
    const exited = new Promise<void>((resolve) => (own.transport.onclose = resolve))
    process.kill(own.pid, 'SIGTERM')
    await exited
    await waitUntil(() => [own.pid, ...children].every((pid) => !isRunning(pid)), 10_000, 'the server and its sessions to exit')
  })
})

/** A web terminal page's WebSocket: everything it was sent, snapshots and output, as one text. */
async function watchPage(pageUrl: string) {
  const url = new URL(pageUrl)
  const socket = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`)
  const page = { text: '', readOnly: undefined as boolean | undefined, socket }
  socket.on('message', (data, isBinary) => {
    if (isBinary) return void (page.text += data.toString())
    const message = JSON.parse(data.toString())
    if (message.type === 'snapshot') Object.assign(page, { text: page.text + message.data, readOnly: message.readOnly })
  })
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  return page
}

/** The status of a GET of `url`, or the connection error's code. */
function httpGet(url: string) {
  return new Promise<number | string>((resolve) => {
    get(url, { agent: false }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    }).on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })
}

describe('shellwright mcp --serve', () => {
  it("serves the shell's runs read-only and each TUI session, which a person can type into", async () => {
    const own = await connect('--serve', '0')
    const announced = await new Promise<string>((resolve) => createInterface({ input: own.transport.stderr as Readable }).once('line', resolve))
    const shellUrl = announced.match(/^shellwright mcp: watch the shell at (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32})$/)![1]
    const token = new URL(shellUrl).searchParams.get('token')
    try {
      expect(await ok(own, 'shell_run', { command: 'echo mirrored run' })).toBe('mirrored run\n[exit code 0]')
      const shellPage = await watchPage(shellUrl)
      await waitUntil(() => shellPage.text.includes('mirrored run\r\n'), 5000, 'the shell page to replay the run')
      expect(shellPage.readOnly).toBe(true)
      shellPage.socket.close()

      const started = await ok(own, 'tui_start', { command: "echo type here; exec cat", cols: 40, rows: 5 })
      const id = idOf(started)
      const tuiUrl = started.split('\n')[1].match(/^watch it at (http:\/\/127\.0\.0\.1:\d+\/\?token=(\w+))$/)!
      expect(tuiUrl[2]).toBe(token)
      expect(new URL(tuiUrl[1]).port).not.toBe(new URL(shellUrl).port)
      expect(await ok(own, 'tui_list', {})).toBe(`${id}\twaiting for a line\t40x5\techo type here; exec cat\t${tuiUrl[1]}`)
      const tuiPage = await watchPage(tuiUrl[1])
      await waitUntil(() => tuiPage.text.includes('type here'), 5000, 'the session page to show the screen')
      expect(tuiPage.readOnly).toBe(false)
      // A person takes over: keys typed in the page reach the program the agent started.
      tuiPage.socket.send(JSON.stringify({ type: 'input', data: 'from the browser\r' }))
      const typed = (await ok(own, 'tui_wait_for', { id, regex: '^from the browser\\n^from the browser$' })).split('\n')
      // cat took the line and prints it: by the time the tool looks it may be reading the next one.
      expect(typed[0]).toMatch(new RegExp(`^\\[${id} · (waiting for a line|running) · 40x5 · cursor 3,0\\]$`))
      expect(typed.slice(1)).toEqual(['type here', 'from the browser', 'from the browser'])
      tuiPage.socket.close()
      expect(await httpGet(tuiUrl[1])).toBe(200)
      await ok(own, 'tui_kill', { id })
      expect(await httpGet(tuiUrl[1])).toBe('ECONNREFUSED')
    } finally {
      await own.client.close()
    }
    await waitUntil(() => !isRunning(own.pid), 5000, 'the server to exit')
    expect(await httpGet(shellUrl)).toBe('ECONNREFUSED')
  })
})

/** The command line of `pid`, its arguments joined by spaces ('' once it is gone). */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
  } catch {
    return ''
  }
}
