// A cancelled run stops every process it started, however it was started, and nothing else:
// a matrix of real scenarios, each run in a Shell (timeout and abort) and in a PtySession
// (timeout and abort), each checked in /proc for survivors and, where a loop writes a file, that
// the file stops growing.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PtySession, Shell } from '../index.js'
import { expectFileStopsGrowing, fileSize, isRunning, waitUntil, outcomeOf } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-cancel-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A loop that appends to a file every 50 ms; the file keeps growing while any copy survives. */
const loop = (file: string) => `while :; do echo t >> ${file}; sleep 0.05; done`

interface Scenario {
  name: string
  /** The command, given a unique `sleep` argument to find its processes by and a file for loops. */
  command: (marker: string, file: string) => string
  /** Whether the command writes `file` in a loop. */
  writes?: boolean
}

const scenarios: Scenario[] = [
  { name: 'sleep', command: (m) => `sleep ${m}` },
  { name: 'pipeline', command: (m) => `sleep ${m} | cat | sleep ${m}` },
  { name: 'setsid -f', command: (m) => `setsid -f sleep ${m}; sleep ${m}` },
  {
    name: 'setsid loop in a subshell',
    command: (m, f) => `(setsid sh -c '${loop(f)}' &); sleep ${m}`,
    writes: true,
  },
  { name: 'nohup &', command: (m) => `nohup sleep ${m} > /dev/null 2>&1 & sleep ${m}` },
  { name: 'disown', command: (m) => `sleep ${m} & disown; sleep ${m}` },
  {
    name: 'SIGTERM-immune child',
    command: (m, f) => `sh -c "trap '' TERM; ${loop(f)}" & sleep ${m}`,
    writes: true,
  },
  { name: 'double fork', command: (m) => `( ( sleep ${m} & ) & ); sleep ${m}` },
  { name: 'env -i', command: (m) => `env -i sleep ${m}` },
  { name: 'process substitution', command: (m) => `cat <(sleep ${m})` },
  { name: 'command substitution', command: (m) => `x=$(sleep ${m}); echo "$x"` },
  // Every process of a Shell run leads a session of its own; with limits of its own too.
  { name: 'ulimit', command: (m) => `ulimit -n 64; sleep ${m} | cat` },
]

type Runtime = 'Shell' | 'PtySession'
type Cancel = 'timeout' | 'abort'

let nextMarker = 0
/** A `sleep` argument no other process on the machine has: 31.<pid><n>. */
function uniqueMarker(): string {
  nextMarker += 1
  return `31.${process.pid}${String(nextMarker).padStart(3, '0')}`
}

/** Pids of running processes whose command line is exactly `sleep <marker>`. */
function sleepers(marker: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let cmdline: string
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
    } catch {
      continue
    }
    if (cmdline === `sleep\0${marker}\0` && isRunning(Number(entry))) found.push(Number(entry))
  }
  return found
}

/** Starts `command` in `runtime`, cancels it once its processes run, and returns the result. */
async function runAndCancel(runtime: Runtime, cancel: Cancel, command: string, started: () => boolean) {
  const controller = new AbortController()
  const timeoutMs = cancel === 'timeout' ? 700 : undefined
  const signal = cancel === 'abort' ? controller.signal : undefined
  const run =
    runtime === 'Shell'
      ? new Shell().run({ command, timeoutMs, signal })
      : new PtySession().start({ command, shell: 'bash', timeoutMs, signal })
  let seen = false
  await waitUntil(
    () => {
      seen ||= started()
      return seen
    },
    5000,
    'the scenario to start',
  )
  if (cancel === 'abort') controller.abort()
  return run
}

const cases = scenarios.flatMap((scenario) =>
  (['Shell', 'PtySession'] as Runtime[]).flatMap((runtime) =>
    (['timeout', 'abort'] as Cancel[]).map((cancel) => ({ scenario, runtime, cancel })),
  ),
)

describe('a cancelled run leaves nothing running', () => {
  it.each(cases)('$scenario.name in $runtime ($cancel)', async ({ scenario, runtime, cancel }) => {
    const marker = uniqueMarker()
    const file = join(scratch, `loop-${marker}`)
    const command = scenario.command(marker, file)
    const started = () => sleepers(marker).length > 0 && (!scenario.writes || fileSize(file) > 0)
    const result = await runAndCancel(runtime, cancel, command, started)
    expect(outcomeOf(result)).toEqual({ cancelled: cancel === 'abort', timedOut: cancel === 'timeout' })
    await waitUntil(() => sleepers(marker).length === 0, 3000, `no survivor of sleep ${marker}`)
    if (scenario.writes) {
      // The loop writes every 50 ms: four periods without growth mean no copy is left.
      await expectFileStopsGrowing(file, 200)
    }
  })
})

describe('a cancelled run stops only what it started', () => {
  it('leaves processes that existed before the run, and another live run, alone', async () => {
    const before = uniqueMarker()
    const older: ChildProcess = spawn('sleep', [before], { stdio: 'ignore' })
    const otherMarker = uniqueMarker()
    const other = new AbortController()
    const otherRun = new Shell().run({ command: `sleep ${otherMarker}`, signal: other.signal })
    try {
      await waitUntil(() => sleepers(before).length === 1 && sleepers(otherMarker).length === 1, 5000, 'both sleeps')
      const mine = uniqueMarker()
      const result = await runAndCancel('Shell', 'timeout', `env -i sleep ${mine}`, () => sleepers(mine).length > 0)
      expect(result.timedOut).toBe(true)
      await waitUntil(() => sleepers(mine).length === 0, 3000, 'the run to be stopped')
      expect(sleepers(before)).toEqual([older.pid])
      expect(sleepers(otherMarker)).toHaveLength(1)
    } finally {
      older.kill('SIGKILL')
      other.abort()
      expect((await otherRun).cancelled).toBe(true)
    }
    await waitUntil(() => sleepers(otherMarker).length === 0, 3000, 'the other run to be stopped')
  })

  it('leaves the host its own limits when the run had set others for its processes', async () => {
    const limits = (pid: number | 'self') => readFileSync(`/proc/${pid}/limits`, 'utf8')
    const openFiles = (text: string) => text.split('\n').find((line) => line.startsWith('Max open files'))
    const host = limits('self')
    const mine = uniqueMarker()
    const controller = new AbortController()
    const run = new Shell().run({ command: `ulimit -n 64; ulimit -Sc 0; sleep ${mine}`, signal: controller.signal })
    await waitUntil(() => sleepers(mine).length > 0, 5000, 'the sleep to start')
    const [sleeper] = sleepers(mine)
    expect(openFiles(limits(sleeper))).toBe('Max open files            64                   64                   files     ')
    controller.abort()
    expect((await run).cancelled).toBe(true)
    await waitUntil(() => sleepers(mine).length === 0, 3000, 'the run to be stopped')
    expect(limits('self')).toBe(host)
  })
})
