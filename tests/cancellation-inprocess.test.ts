// A cancelled run stops the work brush does inside the process, not only the processes it
// spawned: background jobs, subshells, pipeline stages and command substitutions that run as
// tasks of the session, and the sourcing of a snapshot at session creation. Each scenario runs
// with a timeout and with an AbortSignal; afterwards the file it wrote must not grow any more and
// the next run on the same Shell must work in the same session, without the stopped run's jobs. Also: the nesting limits and a
// huge command line under a timeout.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Shell, type ShellResult } from '../index.js'
import { collector, expectFileStopsGrowing, fileSize, waitUntil, outcomeOf } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-inproc-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

type Cancel = 'timeout' | 'abort'
const cancels: Cancel[] = ['timeout', 'abort']

interface Scenario {
  name: string
  /** The command, given the file it writes (every scenario that loops writes to it). */
  command: (file: string) => string
  /** Whether the work is under way: cancelling before it is proves nothing. */
  started: (file: string) => boolean
  /** Checked after the run settled and the file stopped growing. */
  after?: (file: string) => void
  /** The timeout of the timeout variant (default 1500 ms). */
  timeoutMs?: number
}

const wrote = (file: string) => fileSize(file) > 0
/** A builtin-only loop that appends a line to `file` on each pass. */
const spin = (file: string) => `while :; do echo t >> ${file}; done`

const scenarios: Scenario[] = [
  {
    // If the job survived the kill of its `sleep 1`, its `echo` would write at once.
    name: 'a background group that writes after its sleep',
    command: (f) => `{ sleep 1; echo done > ${f}; } & echo started > ${f}.started; sleep 30`,
    started: (f) => existsSync(`${f}.started`),
    after: (f) => expect(existsSync(f)).toBe(false),
    // Shorter than the job's `sleep 1`, which would otherwise end on its own and let it write.
    timeoutMs: 500,
  },
  {
    name: 'a background loop that appends and sleeps',
    command: (f) => `while :; do echo t >> ${f}; sleep 0.1; done & sleep 30`,
    started: wrote,
  },
  { name: 'a builtin loop in a function', command: (f) => `f() { ${spin(f)}; }; f`, started: wrote },
  { name: 'a builtin loop in a subshell', command: (f) => `( ${spin(f)} )`, started: wrote },
  {
    name: 'a silent builtin loop in a subshell',
    command: (f) => `echo started > ${f}; ( while :; do :; done )`,
    started: wrote,
  },
  { name: 'a builtin loop in a background job', command: (f) => `${spin(f)} & wait`, started: wrote },
  {
    name: 'a builtin loop in a function run as a background job',
    command: (f) => `g() { ${spin(f)}; }; g & sleep 30`,
    started: wrote,
  },
  {
    name: 'a pipeline of builtins',
    command: (f) => `while :; do echo t; done | while read -r line; do echo "$line" >> ${f}; done`,
    started: wrote,
  },
  {
    // The consumer blocks in read(2) on the run's own thread: only the producer stage ending
    // (its pipe closing) lets the run reach its next cancellation point.
    name: 'a builtin loop feeding a blocked reader',
    command: (f) => `while :; do echo t >> ${f}; done | while read -r line; do :; done`,
    started: wrote,
  },
  {
    name: 'an eval loop piped to cat',
    command: (f) => `eval 'while :; do echo t >> ${f}; done' | cat`,
    started: wrote,
  },
  { name: 'a builtin loop in a command substitution', command: (f) => `x=$(${spin(f)})`, started: wrote },
  {
    name: 'a builtin loop in a background subshell',
    command: (f) => `( ${spin(f)} ) & sleep 30`,
    started: wrote,
  },
  // One builtin that works for a minute (in a debug build) reaches no hook before a command.
  { name: 'printf formatting thousands of arguments', command: (f) => `printf '%60000s' {1..2000} > ${f}`, started: wrote },
  {
    name: 'printf formatting thousands of arguments in a pipeline stage',
    command: (f) => `{ printf '%60000s' {1..2000} > ${f}; } | cat`,
    started: wrote,
  },
]

let nextFile = 0
function freshFile(): string {
  nextFile += 1
  return join(scratch, `out-${nextFile}`)
}

/** Runs `command` on `shell` and cancels it once `started` holds (timeout: waits for expiry). */
async function runAndCancel(
  shell: Shell,
  cancel: Cancel,
  command: string,
  started: () => boolean,
  timeoutMs = 1500,
) {
  const controller = new AbortController()
  const run = shell.run({
    command,
    timeoutMs: cancel === 'timeout' ? timeoutMs : undefined,
    signal: cancel === 'abort' ? controller.signal : undefined,
  })
  let seen = false
  let result: ShellResult | undefined
  void run.then((r) => {
    result = r
  })
  try {
    await waitUntil(
      () => {
        seen ||= started()
        return seen || result !== undefined
      },
      5000,
      'the scenario to start',
    )
  } catch (error) {
    // Never leave a run behind: stop it before failing.
    controller.abort()
    await run
    throw error
  }
  expect(seen).toBe(true)
  if (cancel === 'abort') controller.abort()
  return run
}

/** The next run on `shell` works in the same session (a variable set before the stopped run is
 * still there), and no job of the stopped run is left in the job table. */
async function expectKeptSession(shell: Shell): Promise<void> {
  const out = collector()
  const result = await shell.run({ command: 'echo "next [$before]"; jobs; echo end', timeoutMs: 10_000 }, out.push)
  expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
  expect(result.sessionReset).toBeUndefined()
  expect(out.text).toBe('next [set]\nend\n')
}

const cases = scenarios.flatMap((scenario) => cancels.map((cancel) => ({ scenario, cancel })))

describe('a cancelled run stops its in-process work', () => {
  const check = async ({ scenario, cancel }: (typeof cases)[number]) => {
    const shell = new Shell()
    const file = freshFile()
    expect(outcomeOf(await shell.run({ command: 'before=set' }))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    const result = await runAndCancel(
      shell,
      cancel,
      scenario.command(file),
      () => scenario.started(file),
      scenario.timeoutMs,
    )
    expect(outcomeOf(result)).toEqual({ cancelled: cancel === 'abort', timedOut: cancel === 'timeout' })
    await expectFileStopsGrowing(file)
    scenario.after?.(file)
    await expectKeptSession(shell)
  }
  it.each(cases)('$scenario.name ($cancel)', check)
})

describe('pipeline stages run at the same time', () => {
  // A compound first stage that writes more than a pipe buffer used to block the run's thread in
  // write(2) for good, and its timeout never fired.
  const producer = 'for i in {1..8000}; do echo xxxxxxxx; done'

  it('a producer that fills the pipe completes', async () => {
    const out = collector()
    const command = `${producer} | while read -r l; do n=$((n+1)); done; echo "\${PIPESTATUS[*]}"`
    const result = await new Shell().run({ command, timeoutMs: 120_000 }, out.push)
    expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('0 0\n')
  })

  it.each(cancels)('a producer that fills the pipe stops on time (%s)', async (cancel) => {
    const controller = new AbortController()
    const started = Date.now()
    const run = new Shell().run({
      command: `while :; do ${producer}; done | while read -r l; do :; done`,
      timeoutMs: cancel === 'timeout' ? 300 : undefined,
      signal: cancel === 'abort' ? controller.signal : undefined,
    })
    if (cancel === 'abort') setTimeout(() => controller.abort(), 300)
    expect(outcomeOf(await run)).toEqual({ cancelled: cancel === 'abort', timedOut: cancel === 'timeout' })
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('an endless builtin producer ends when its reader does, as bash\'s dies of SIGPIPE', async () => {
    const out = collector()
    const result = await new Shell().run(
      { command: 'while :; do echo y; done | head -n 2; echo "${PIPESTATUS[*]}"', timeoutMs: 30_000 },
      out.push,
    )
    expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('y\ny\n141 0\n')
  })
})

describe('session creation obeys the token', () => {
  const snapshots = [
    { name: 'a snapshot that sleeps', body: 'sleep 30\n' },
    { name: 'a snapshot that spins in builtins', body: 'while :; do :; done\n' },
  ]
  const snapshotCases = snapshots.flatMap((snapshot) => cancels.map((cancel) => ({ snapshot, cancel })))

  it.each(snapshotCases)('$snapshot.name ($cancel)', async ({ snapshot, cancel }) => {
    const path = join(scratch, `snapshot-${++nextFile}.sh`)
    writeFileSync(path, snapshot.body)
    const shell = new Shell({ snapshotPath: path })
    const controller = new AbortController()
    const started = Date.now()
    const run = shell.run({
      command: 'echo never',
      timeoutMs: cancel === 'timeout' ? 300 : undefined,
      signal: cancel === 'abort' ? controller.signal : undefined,
    })
    if (cancel === 'abort') setTimeout(() => controller.abort(), 300)
    const out = collector()
    expect(outcomeOf(await run)).toEqual({ cancelled: cancel === 'abort', timedOut: cancel === 'timeout' })
    // Settles promptly after the 300 ms cancel, not after the snapshot's 30 s (or never).
    expect(Date.now() - started).toBeLessThan(5000)
    // The failed creation left no session: the next run sources the (now harmless) snapshot anew.
    writeFileSync(path, 'from_snapshot=yes\n')
    const next = await shell.run({ command: 'echo "$from_snapshot"', timeoutMs: 10_000 }, out.push)
    expect(outcomeOf(next)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('yes\n')
  })
})

describe('nesting limits and big inputs', () => {
  it('runs a 1,000-deep recursive function', async () => {
    const out = collector()
    const command = 'f() { if [ "$1" -gt 1 ]; then f $(( $1 - 1 )); else echo bottom; fi; }; f 1000; echo "exit $?"'
    const result = await new Shell().run({ command, timeoutMs: 30_000 }, out.push)
    expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('bottom\nexit 0\n')
  })

  it('ends unbounded recursion with a message and a non-zero exit', async () => {
    const shell = new Shell()
    const out = collector()
    const result = await shell.run({ command: 'f() { f; }; f', timeoutMs: 30_000 }, out.push)
    expect(outcomeOf(result)).toEqual({ exitCode: 1, cancelled: false, timedOut: false })
    expect(out.text).toBe('bash: line 1: f: maximum function nesting level exceeded (1000)\n')
    const next = collector()
    expect(outcomeOf(await shell.run({ command: 'echo still here' }, next.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(next.text).toBe('still here\n')
  })

  it('rejects 2,000 nested groups as a syntax error with exit 2', async () => {
    const out = collector()
    const command = `${'{ '.repeat(2000)}echo x; ${'}; '.repeat(2000)}`
    const result = await new Shell().run({ command, timeoutMs: 30_000 }, out.push)
    expect(outcomeOf(result)).toEqual({ exitCode: 2, cancelled: false, timedOut: false })
    expect(out.text).toBe('bash: syntax error: nesting deeper than 1000 levels\n')
  })

  it('obeys timeoutMs: 200 with a 3 MB command line', async () => {
    const shell = new Shell()
    const command = `x=${'a'.repeat(3 * 1024 * 1024)}; while :; do :; done`
    const started = Date.now()
    expect(outcomeOf(await shell.run({ command, timeoutMs: 200 }))).toEqual({ cancelled: false, timedOut: true })
    expect(Date.now() - started).toBeLessThan(5000)
    const out = collector()
    expect(outcomeOf(await shell.run({ command: 'echo "${#x}"' }, out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    // The session is kept either way: with the assignment when the timeout came during the loop,
    // without it when it came while the 3 MB were still being parsed (a slow build).
    expect(['3145728\n', '0\n']).toContain(out.text)
  })
})
