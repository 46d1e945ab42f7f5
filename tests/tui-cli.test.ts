// `shellwright tui`: runs a TUI in a PtySession, sends keys, waits, prints the screen, kills it.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isRunning, pidsIn, waitUntil } from './helpers.js'

const cli = join(__dirname, '..', 'packages', 'cli', 'bin', 'shellwright.js')
const { parseKeys } = require('../packages/common/key-spec.js') as { parseKeys: (spec: string, app?: boolean) => string }

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-tui-cli-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const file = join(scratch, 'lines.txt')
writeFileSync(file, Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')

function runTui(args: string[]) {
  const child = spawn(process.execPath, [cli, 'tui', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TERM: 'xterm-256color', LESS: '', LESSHISTFILE: '-' },
  })
  const out = { stdout: '', stderr: '' }
  child.stdout.on('data', (d) => (out.stdout += d))
  child.stderr.on('data', (d) => (out.stderr += d))
  const code = new Promise<number | null>((resolve) => child.on('close', resolve))
  return { out, code }
}

const lines = (from: number, count: number) => Array.from({ length: count }, (_, i) => `line ${from + i}\n`).join('')

describe('shellwright tui', () => {
  it('prints the screen after keys, following the cursor-key mode for arrows', async () => {
    const paged = runTui(['--cols', '30', '--rows', '6', '--keys', '<space>', '--', 'less', file])
    expect(await paged.code).toBe(0)
    expect(paged.out.stdout).toBe(lines(6, 5) + ':\n')

    const arrows = runTui(['--cols', '30', '--rows', '6', '--keys', '<down><down>', '--', 'less', file])
    expect(await arrows.code).toBe(0)
    expect(arrows.out.stdout).toBe(lines(3, 5) + ':\n')
  })

  it('waits for text, and fails with exit 1 (screen still printed) when it never shows', async () => {
    const found = runTui(['--rows', '5', '--wait-for', 'ready', '--', "sleep 0.3; echo ready"])
    expect(await found.code).toBe(0)
    expect(found.out.stdout).toBe('ready\n')

    const missing = runTui(['--rows', '5', '--wait-for', 'never', '--timeout', '400', '--', 'echo shown; sleep 30'])
    expect(await missing.code).toBe(1)
    expect(missing.out.stdout).toBe('shown\n')
    expect(missing.out.stderr).toBe('shellwright tui: timed out after 400 ms waiting for "never"\n')
  })

  it('--ansi prints a snapshot that repaints the screen', async () => {
    const { out, code } = runTui(['--ansi', '--cols', '20', '--rows', '5', '--', "printf '\\033[1mbold\\033[0m plain'"])
    expect(await code).toBe(0)
    expect(out.stdout.startsWith('\x1bc')).toBe(true)
    expect(out.stdout).toContain('\x1b[0;1mbold')
  })

  it('kills the program at the end', async () => {
    // cat waits for input at once, so the screen is printed and the program killed right away.
    const { out, code } = runTui(['--', 'echo $$; exec cat'])
    expect(await code).toBe(0)
    const [pid] = pidsIn(out.stdout)
    expect(pid).toBeGreaterThan(0)
    await waitUntil(() => !isRunning(pid), 2000, 'program gone')
  })

  it('returns when a busy program still is not waiting for input at --timeout, screen printed', async () => {
    const started = Date.now()
    const { out, code } = runTui(['--timeout', '700', '--', 'echo busy; exec sleep 30'])
    expect(await code).toBe(0)
    expect(out.stdout).toBe('busy\n')
    expect(Date.now() - started).toBeGreaterThanOrEqual(700)
  })

  it('rejects bad arguments with exit 2', async () => {
    const badKey = runTui(['--keys', '<nope>', '--', 'true'])
    expect(await badKey.code).toBe(2)
    expect(badKey.out.stderr).toMatch(/^shellwright tui: unknown key <nope>\n/)
    const noCommand = runTui(['--rows', '5'])
    expect(await noCommand.code).toBe(2)
    expect(noCommand.out.stderr).toMatch(/^shellwright tui: missing command\n/)
    const badNumber = runTui(['--timeout', 'soon', '--', 'true'])
    expect(await badNumber.code).toBe(2)
    expect(badNumber.out.stderr).toMatch(/^shellwright tui: --timeout must be a non-negative number, got 'soon'\n/)
    const unknown = runTui(['--frobnicate', '--', 'true'])
    expect(await unknown.code).toBe(2)
    expect(unknown.out.stderr).toMatch(/^shellwright tui: Unknown option '--frobnicate'/)
    const help = runTui(['--help'])
    expect(await help.code).toBe(0)
    expect(help.out.stdout).toMatch(/^usage: shellwright tui /)
  })

  it('key SPEC: literal text, named keys, ctrl/alt chords, <lt>', () => {
    const table: [string, boolean, string][] = [
      ['abc', false, 'abc'],
      ['a<enter>b', false, 'a\rb'],
      ['<esc>:q!<Enter>', false, '\x1b:q!\r'],
      ['<up><left>', false, '\x1b[A\x1b[D'],
      ['<up><left>', true, '\x1bOA\x1bOD'],
      ['<ctrl+c><ctrl+A><c-d>', false, '\x03\x01\x04'],
      ['<alt+x><alt+up><m-x>', false, '\x1bx\x1b[1;3A\x1bx'],
      ['<ctrl+shift+up><shift+tab><bs><del><pgdn>', false, '\x1b[1;6A\x1b[Z\x7f\x1b[3~\x1b[6~'],
      ['<home><end>', true, '\x1bOH\x1bOF'],
      ['<ctrl+é>', false, '\x1b[27;5;233~'],
      ['<f1><f5><pagedown><tab><backspace><delete>', false, '\x1bOP\x1b[15~\x1b[6~\t\x7f\x1b[3~'],
      ['a < b <lt>x>', false, 'a < b <x>'],
    ]
    for (const [spec, app, want] of table) expect(parseKeys(spec, app), spec).toBe(want)
    expect(() => parseKeys('<ctrl+nope>')).toThrowError(/^unknown key <ctrl\+nope>$/)
    expect(() => parseKeys('<hyper+a>')).toThrowError(/^unknown key <hyper\+a>$/)
  })
})
