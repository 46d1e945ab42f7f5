// Shell history and its read-only mirror terminal: `Shell.history()`, `ShellMirror` (VS Code's OSC 633
// dialect) and `shellwright/vscode`. The mirror stream is checked by reading it back: our VirtualTerminal's
// command records must equal the history, and @xterm/headless must render the expected screen.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import * as sw from '../index.js'
import type { CommandRecord, ShellHistoryEntry } from '../index.js'
import { createShellPseudoterminal } from '../packages/vscode/index.js'
import { expectRangeError, expectTypeError, waitUntil, outcomeOf } from './helpers.js'
import { xterm, xtermLines, xtermWrite } from './xterm.js'

/** What a view shows once the last run ended: the next prompt. */
const PROMPT_TAIL = '\x1b]633;A\x07$ \x1b]633;B\x07'
const READ_ONLY = "[read-only: this view shows the agent's shell; Ctrl+C stops its running command]"
const NOTHING_RUNS = "[read-only: no command is running; this view shows the agent's shell]"
const FIVE_MB = 50_000 * 101 - 1 // fold ends the last line without a newline

const mirrors: sw.ShellMirror[] = []
afterEach(() => {
  for (const mirror of mirrors.splice(0)) mirror.close()
})

/** Opens a mirror of `shell` whose stream is collected in `text`. */
function view(shell: sw.Shell, options?: sw.ShellMirrorOptions) {
  const mirror = new sw.ShellMirror(shell, options)
  mirrors.push(mirror)
  const out = { mirror, text: '' }
  mirror.open((data) => {
    out.text += data
  })
  return out
}

/** Waits until the view has shown the end of every run so far (the next prompt) and `runs` runs. */
async function settled(out: { text: string }, runs: number): Promise<void> {
  const ends = () => out.text.split('\x1b]633;D').length - 1
  await waitUntil(() => ends() === runs && out.text.endsWith(PROMPT_TAIL), 20_000, `${runs} runs in the view`)
}

function records(stream: string): CommandRecord[] {
  const term = new sw.VirtualTerminal({ cols: 100, rows: 30 })
  term.write(stream)
  return term.commands()
}

/** A transcript as a terminal's command record reads it: lines' trailing blanks trimmed, no final newline. */
function asRecorded(output: string): string {
  return output
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n+$/, '')
}

/** The record a history entry should produce in a view (the line saying why a stopped run ended included). */
function expectedRecord(entry: ShellHistoryEntry) {
  const note = entry.cancelled ? '[Command cancelled]' : entry.timedOut ? '[Command timed out]' : ''
  const output = [asRecorded(entry.output), note].filter(Boolean).join('\n')
  return { command: entry.command, output, exitCode: entry.exitCode, cwd: entry.cwd }
}

function recordOf(record: CommandRecord) {
  return { command: record.command, output: record.output, exitCode: record.exitCode, cwd: record.cwd }
}

const SPECIAL = "printf '%s\\n' 'a;b' 'c\\d'\necho two"

describe('Shell.history', () => {
  it('records each run as it happens: command, cwd, output, exit code, times', async () => {
    const shell = new sw.Shell()
    expect(shell.history()).toEqual([])
    const before = Date.now()
    await shell.run({ command: 'echo one; echo err >&2', cwd: '/tmp' })
    const running = shell.run({ command: 'echo started; sleep 0.3; echo done' })
    await waitUntil(() => shell.history().at(-1)?.output === 'started\n', 5000, 'the running entry')
    const [first, second] = shell.history()
    expect(second).toMatchObject({ id: 2, command: 'echo started; sleep 0.3; echo done', cwd: '/tmp', cancelled: false })
    expect(second.finishedAt).toBeUndefined()
    expect(second.exitCode).toBeUndefined()
    await running
    expect(first).toEqual({
      id: 1,
      command: 'echo one; echo err >&2',
      cwd: '/tmp',
      output: 'one\nerr\n',
      truncatedBytes: 0,
      exitCode: 0,
      cancelled: false,
      timedOut: false,
      startedAt: first.startedAt,
      finishedAt: first.finishedAt,
    })
    expect(first.startedAt).toBeGreaterThanOrEqual(before)
    expect(first.finishedAt).toBeGreaterThanOrEqual(first.startedAt)
    const done = shell.history()[1]
    expect(done).toMatchObject({ output: 'started\ndone\n', exitCode: 0 })
    expect(done.finishedAt! - done.startedAt).toBeGreaterThanOrEqual(250)
  })

  it('keeps historyLimit entries, and marks cancelled and timed-out runs', async () => {
    const shell = new sw.Shell({ historyLimit: 2 })
    await shell.run({ command: 'echo 1' })
    await shell.run({ command: 'sleep 5', timeoutMs: 100 })
    const controller = new AbortController()
    const aborted = shell.run({ command: 'echo x; sleep 5', signal: controller.signal })
    await waitUntil(() => shell.history().at(-1)?.output === 'x\n', 5000, 'the run to start')
    controller.abort()
    await aborted
    const history = shell.history()
    expect(history.map((e) => [e.id, e.command, e.exitCode, e.cancelled, e.timedOut])).toEqual([
      [2, 'sleep 5', undefined, false, true],
      [3, 'echo x; sleep 5', undefined, true, false],
    ])
  })

  it('truncates a transcript from the front on a character boundary and counts what it dropped', async () => {
    const shell = new sw.Shell()
    // 1 500 000 two-byte characters then "a": the cut at byte 1 000 001 falls inside a character.
    await shell.run({ command: "head -c 1500000 /dev/zero | tr '\\0' '\\1' | sed 's/\\x01/é/g'; printf a" })
    const [entry] = shell.history()
    expect(entry.truncatedBytes).toBe(1_000_002)
    expect(Buffer.byteLength(entry.output)).toBe(1_999_999)
    expect(entry.output).toBe('é'.repeat(999_999) + 'a')
  })

  it('rejects a bad historyLimit with the field named', () => {
    expectTypeError(() => new sw.Shell({ historyLimit: '5' as unknown as number }), 'options.historyLimit must be a number')
    expectRangeError(() => new sw.Shell({ historyLimit: Number.NaN }), 'options.historyLimit must be a finite number')
  })

  it('keeps historyBytes of transcript in all, dropping the oldest output first and counting it', async () => {
    const shell = new sw.Shell({ historyBytes: 25 })
    await shell.run({ command: 'printf 0123456789' })
    await shell.run({ command: 'printf abcdefghij' })
    await shell.run({ command: 'printf ABCDEFGHIJ' })
    expect(shell.history().map((e) => [e.output, e.truncatedBytes])).toEqual([
      ['56789', 5],
      ['abcdefghij', 0],
      ['ABCDEFGHIJ', 0],
    ])
    // One run alone keeps at most the budget.
    await shell.run({ command: "printf '%030d' 7" })
    expect(shell.history().map((e) => [e.output, e.truncatedBytes])).toEqual([
      ['', 10],
      ['', 10],
      ['', 10],
      ['0'.repeat(24) + '7', 5],
    ])
  })

  it('keeps 32 MiB of transcript by default', async () => {
    const shell = new sw.Shell()
    for (let i = 0; i < 20; i++) await shell.run({ command: "head -c 2000000 /dev/zero | tr '\\0' x" })
    const history = shell.history()
    const kept = history.reduce((sum, e) => sum + e.output.length, 0)
    const dropped = history.reduce((sum, e) => sum + e.truncatedBytes, 0)
    expect([kept, dropped]).toEqual([32 * 1024 * 1024, 20 * 2_000_000 - 32 * 1024 * 1024])
    expect(history[0].output).toBe('')
    expect(history[3].output.length).toBe(32 * 1024 * 1024 - 16 * 2_000_000)
  })

  it('rejects a bad historyBytes with the field named', () => {
    expectTypeError(() => new sw.Shell({ historyBytes: '5' as unknown as number }), 'options.historyBytes must be a number')
    expectRangeError(() => new sw.Shell({ historyBytes: Number.POSITIVE_INFINITY }), 'options.historyBytes must be a finite number')
  })
})

describe('ShellMirror', () => {
  it('says where a run left the session when it moved it, live and replayed', async () => {
    const shell = new sw.Shell()
    const live = view(shell)
    await shell.run({ command: 'cd /usr', cwd: '/' })
    await shell.run({ command: 'true' })
    await settled(live, 2)
    const moved = '\x1b]633;D;0\x07\x1b]633;P;Cwd=/usr\x07\x1b]633;A\x07'
    expect(live.text.split(moved)).toHaveLength(2)
    const replayed = view(shell)
    await settled(replayed, 2)
    expect(replayed.text.split(moved)).toHaveLength(2)
  })

  it('streams runs that a VirtualTerminal reads back as the history, live and replayed', async () => {
    const shell = new sw.Shell()
    const live = view(shell)
    await shell.run({ command: 'echo hello' })
    await shell.run({ command: 'echo failing; sh -c "exit 3"', cwd: '/' })
    const cancelled = shell.run({ command: 'echo waiting; sleep 30' })
    await waitUntil(() => live.text.includes('waiting\r\n'), 5000, 'the run to print')
    expect(live.mirror.handleInput('\x03')).toBe(true)
    expect(outcomeOf(await cancelled)).toEqual({ cancelled: true, timedOut: false })
    expect(outcomeOf(await shell.run({ command: 'echo slow; sleep 30', timeoutMs: 300 }))).toEqual({
      cancelled: false,
      timedOut: true,
    })
    await shell.run({ command: "head -c 5000000 /dev/zero | tr '\\0' x | fold -w 100" })
    await shell.run({ command: "echo 'héllo wörld 日本語 🎉'" })
    await shell.run({ command: SPECIAL })
    await settled(live, 7)

    const history = shell.history()
    expect(history.map((e) => [e.command, e.exitCode, e.cancelled, e.timedOut])).toEqual([
      ['echo hello', 0, false, false],
      ['echo failing; sh -c "exit 3"', 3, false, false],
      ['echo waiting; sleep 30', undefined, true, false],
      ['echo slow; sleep 30', undefined, false, true],
      ["head -c 5000000 /dev/zero | tr '\\0' x | fold -w 100", 0, false, false],
      ["echo 'héllo wörld 日本語 🎉'", 0, false, false],
      [SPECIAL, 0, false, false],
    ])
    expect(history[4].truncatedBytes).toBe(FIVE_MB - 2_000_000)
    expect(history[6].output).toBe('a;b\nc\\d\ntwo\n')

    const late = view(shell, { scrollback: 10_000 })
    await settled(late, 7)
    for (const stream of [live.text, late.text]) {
      const seen = records(stream)
      expect(seen).toHaveLength(7)
      for (const i of [0, 1, 2, 3, 5, 6]) expect(recordOf(seen[i])).toEqual(expectedRecord(history[i]))
      // The 5 MB run: a terminal keeps the last megabyte of a command's output, which both views end with.
      const big = seen[4]
      expect(recordOf(big)).toMatchObject({ command: history[4].command, exitCode: 0, cwd: history[4].cwd })
      expect(big.output.length).toBeGreaterThan(900_000)
      expect(asRecorded(history[4].output).endsWith(big.output)).toBe(true)
    }
    // The live view saw all 5 MB; the late one replays 2 MB after a line saying how much was dropped.
    expect(live.text.split('x'.repeat(100)).length - 1).toBe(50_000)
    expect(late.text).toContain('\x1b]633;C\x07[Terminal output truncated: ~2979 KB dropped from beginning]\r\n')
  })

  it('writes a stream that @xterm/headless renders as the expected screen', async () => {
    const shell = new sw.Shell()
    await shell.run({ command: 'echo one', cwd: '/' })
    await shell.run({ command: 'printf "no newline"' })
    await shell.run({ command: SPECIAL })
    await shell.run({ command: 'exit 3' })
    const out = view(shell)
    await settled(out, 4)
    const term = xterm(60, 12, 1000)
    await xtermWrite(term, out.text)
    const screen = [
      '$ echo one',
      'one',
      '$ printf "no newline"',
      'no newline',
      "$ printf '%s\\n' 'a;b' 'c\\d'",
      'echo two',
      'a;b',
      'c\\d',
      'two',
      '$ exit 3',
      '$',
      '',
    ]
    expect(xtermLines(term)).toEqual(screen)
    const ours = new sw.VirtualTerminal({ cols: 60, rows: 12 })
    ours.write(out.text)
    expect(ours.screen().lines).toEqual(screen)
    expect(ours.commands().map((r) => r.exitCode)).toEqual([0, 0, 0, 3])
    term.dispose()
  })

  it('opened during a streaming run, shows the earlier runs, the output so far, then the rest once', async () => {
    const shell = new sw.Shell()
    await shell.run({ command: 'echo before' })
    const streaming = shell.run({
      command: 'for i in $(seq 1 3000); do echo "line $i"; if [ $((i % 100)) = 0 ]; then sleep 0.02; fi; done',
    })
    const printed = () => shell.history().at(-1)?.output.split('\n').length ?? 0
    await waitUntil(() => printed() > 100, 10_000, 'the run to stream')
    const late = view(shell)
    // The view opened while the run was printing: part of the output came in the replay, the rest live.
    expect(printed()).toBeLessThan(3000)
    await streaming
    await settled(late, 2)
    const [before, lines] = records(late.text)
    expect(recordOf(before)).toEqual({ command: 'echo before', output: 'before', exitCode: 0, cwd: process.cwd() })
    const expected = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\n')
    expect(lines.output).toBe(expected)
    expect(lines.exitCode).toBe(0)
    // Every line once, in order, across the replay and the live stream.
    const numbers = [...late.text.matchAll(/line (\d+)\r\n/g)].map((m) => Number(m[1]))
    expect(numbers).toEqual(Array.from({ length: 3000 }, (_, i) => i + 1))
  })

  it('gives two views of one Shell the same bytes from the moment both are open', async () => {
    const shell = new sw.Shell()
    const first = view(shell)
    await shell.run({ command: 'echo a' })
    await settled(first, 1)
    const second = view(shell)
    await waitUntil(() => second.text.endsWith(PROMPT_TAIL), 5000, 'the replay')
    const [markFirst, markSecond] = [first.text.length, second.text.length]
    await shell.run({ command: 'seq 1 20000; printf "é%.0s" $(seq 1 100)' })
    await shell.run({ command: 'exit 3' })
    await settled(first, 3)
    await settled(second, 3)
    expect(second.text.slice(markSecond)).toBe(first.text.slice(markFirst))
    expect(first.text.slice(markFirst).length).toBeGreaterThan(100_000)
  })

  it('refuses input but Ctrl+C, and closing a view never touches the Shell', async () => {
    const shell = new sw.Shell()
    const out = view(shell)
    expect(out.mirror.handleInput('q')).toBe(false)
    expect(out.mirror.handleInput('\x03\x03')).toBe(false)
    expect(out.mirror.handleInput('\x03')).toBe(true) // idle: nothing to cancel
    const run = shell.run({ command: 'echo begun; sleep 0.3; echo finished' })
    await waitUntil(() => out.text.includes('begun'), 5000, 'the run to print')
    out.mirror.close()
    out.mirror.close()
    expect(out.mirror.handleInput('\x03')).toBe(false)
    expect(outcomeOf(await run)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(shell.history()[0].output).toBe('begun\nfinished\n')
  })

  it('says in the view, once until it shows something new, that it is read-only when input is refused', async () => {
    const shell = new sw.Shell()
    await shell.run({ command: 'echo earlier' })
    const out = view(shell)
    const screen = () => {
      const term = new sw.VirtualTerminal({ cols: 100, rows: 12 })
      term.write(out.text)
      return term.screen().lines.filter((line) => line !== '')
    }
    const delivered = () => new Promise((resolve) => setImmediate(resolve))
    // At the prompt: the notice goes above a fresh prompt, said once however many keys come.
    expect(out.mirror.handleInput('ls')).toBe(false)
    expect(out.mirror.handleInput('\r')).toBe(false)
    await waitUntil(() => out.text.includes(READ_ONLY), 5000, 'the notice')
    await delivered()
    expect(screen()).toEqual(['$ echo earlier', 'earlier', READ_ONLY, '$'])
    // Ctrl+C with nothing running says so.
    expect(out.mirror.handleInput('\x03')).toBe(true)
    await waitUntil(() => out.text.includes(NOTHING_RUNS), 5000, 'the idle notice')
    expect(screen()).toEqual(['$ echo earlier', 'earlier', READ_ONLY, NOTHING_RUNS, '$'])
    // During a run: after its output, on a line of its own; Ctrl+C stops it without a word.
    const run = shell.run({ command: 'echo first; sleep 30' })
    await waitUntil(() => out.text.includes('first'), 5000, 'the run')
    expect(out.mirror.handleInput('q')).toBe(false)
    await waitUntil(() => out.text.split(READ_ONLY).length === 3, 5000, 'the notice in the run')
    expect(out.mirror.handleInput('\x03')).toBe(true)
    expect(await run).toMatchObject({ cancelled: true })
    await settled(out, 2)
    expect(screen().slice(-5)).toEqual(['$ echo first; sleep 30', 'first', READ_ONLY, '[Command cancelled]', '$'])
    // A line the run has not finished is not broken: the notice waits for its end (here, the run's).
    const partial = shell.run({ command: 'printf partial; sleep 30' })
    await waitUntil(() => out.text.includes('partial'), 5000, 'the partial line')
    expect(out.mirror.handleInput('q')).toBe(false)
    await delivered()
    expect(out.text.split(READ_ONLY)).toHaveLength(3)
    expect(out.mirror.handleInput('\x03')).toBe(true)
    await partial
    await settled(out, 3)
    await waitUntil(() => out.text.split(READ_ONLY).length === 4, 5000, 'the held notice')
    expect(screen().slice(-5)).toEqual(['$ printf partial; sleep 30', 'partial', '[Command cancelled]', READ_ONLY, '$'])
    expect(records(out.text).map((r) => [r.command, r.output])).toEqual([
      ['echo earlier', 'earlier'],
      ['echo first; sleep 30', `first\n${READ_ONLY}\n[Command cancelled]`],
      ['printf partial; sleep 30', 'partial\n[Command cancelled]'],
    ])
  })

  it('hands over the replay before open returns; a throw there closes the view and comes out of open', async () => {
    const shell = new sw.Shell()
    await shell.run({ command: 'echo replayed' })
    const out = view(shell)
    expect(out.text).toContain('\x1b]633;C\x07replayed\r\n\x1b]633;D;0\x07')
    expect(out.text.endsWith(PROMPT_TAIL)).toBe(true)
    const failing = new sw.ShellMirror(shell)
    mirrors.push(failing)
    const thrown = new Error('view broke')
    expect(() =>
      failing.open(() => {
        throw thrown
      }),
    ).toThrow(thrown)
    expect(failing.handleInput('\x03')).toBe(false)
  })

  it('does not keep Node running while a view is open', () => {
    const script = `
      const { Shell, ShellMirror } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
      const shell = new Shell()
      shell.run({ command: 'echo from-the-shell' }).then(() => {
        new ShellMirror(shell).open((data) => process.stdout.write(data))
      })`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(child.error).toBeUndefined()
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('from-the-shell\r\n\x1b]633;D;0\x07')
  })

  it('rejects bad arguments with the argument named', () => {
    const shell = new sw.Shell()
    expectTypeError(() => new sw.ShellMirror({} as sw.Shell), 'shell must be a Shell')
    expectTypeError(() => new sw.ShellMirror(undefined as unknown as sw.Shell), 'shell must be a Shell')
    expectTypeError(() => new sw.ShellMirror(shell, 5 as unknown as sw.ShellMirrorOptions), 'options must be an object')
    expectRangeError(() => new sw.ShellMirror(shell, { scrollback: Number.POSITIVE_INFINITY }), 'options.scrollback must be a finite number')
    const mirror = new sw.ShellMirror(shell)
    expectTypeError(() => mirror.open('x' as unknown as () => void), 'onData must be a function')
    expectTypeError(() => mirror.handleInput(3 as unknown as string), 'data must be a string')
  })
})

describe('shellwright/vscode', () => {
  it('is a Pseudoterminal whose events carry the mirror stream', async () => {
    const shell = new sw.Shell()
    await shell.run({ command: 'echo earlier' })
    const pty = createShellPseudoterminal(shell, { name: 'Agent shell' })
    expect(pty.name).toBe('Agent shell')
    let written = ''
    const names: string[] = []
    const closes: unknown[] = []
    const disposables: { dispose(): void }[] = []
    pty.onDidWrite((data) => {
      written += data
    })
    const extra = pty.onDidWrite(() => {
      throw new Error('disposed listeners are not called')
    })
    extra.dispose()
    pty.onDidChangeName((name) => names.push(name), undefined, disposables)
    pty.onDidClose((code) => closes.push(code))
    expect(disposables).toHaveLength(1)
    pty.open({ columns: 80, rows: 24 })
    pty.setDimensions({ columns: 100, rows: 30 })
    expect(names).toEqual(['Agent shell'])
    const run = shell.run({ command: 'echo go; sleep 30' })
    await waitUntil(() => written.includes('go\r\n'), 5000, 'the run in the terminal')
    pty.handleInput('x')
    pty.handleInput('\x03')
    expect(await run).toMatchObject({ cancelled: true })
    await waitUntil(() => written.endsWith(PROMPT_TAIL) && written.includes('[Command cancelled]'), 5000, 'the end')
    expect(records(written).map((r) => [r.command, r.output, r.exitCode])).toEqual([
      ['echo earlier', 'earlier', 0],
      // The key typed during the run got its notice there.
      ['echo go; sleep 30', `go\n${READ_ONLY}\n[Command cancelled]`, undefined],
    ])
    pty.close()
    pty.close()
    expect(closes).toEqual([undefined])
    await shell.run({ command: 'echo after' })
    expect(shell.history().at(-1)?.output).toBe('after\n')
  })
})
