// Soak: hundreds of Shell runs and PTY sessions, many of them timed out or killed, must leave the
// process as it found it: file descriptors, threads, child processes and memory return to their
// baseline once everything has settled.
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { PtySession, Shell } from '../index.js'
import { collector, isGuardian, outcomeOf, waitUntil } from './helpers.js'

const SHELL_RUNS = 520
const PTY_RUNS = 520
/** Runs in flight at once: enough to overlap waits on a loaded 2-core machine. */
const CONCURRENCY = 8

function fdCount(): number {
  return readdirSync('/proc/self/fd').length
}

function threadCount(): number {
  return readdirSync('/proc/self/task').length
}

/** Pids whose parent is this process (zombies included: an unreaped child is a leak too), but for
 * the host's guardian, which lives as long as the host. */
function children(): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === process.pid && !isGuardian(Number(entry))) found.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  return found
}

function rssBytes(): number {
  return process.memoryUsage.rss()
}

interface Usage {
  fds: number
  threads: number
  children: number
  rss: number
}

/** Collects garbage first (vitest runs with --expose-gc): objects nobody references any more, and
 * the native memory they hold, are then gone whatever V8's schedule. */
function usage(): Usage {
  globalThis.gc?.()
  return { fds: fdCount(), threads: threadCount(), children: children().length, rss: rssBytes() }
}

// Tolerances. fds and threads: exact would be ideal, but libuv and V8 open and retire a few of
// their own (the threadpool grows to 4 on first fs use, V8 spawns compiler/GC helpers, vitest
// keeps its IPC), so a small slack; a leak of one per run would exceed it hundreds of times over.
// Children: none may remain. RSS: V8's heap and the allocator keep freed pages, so growth of a
// few tens of MB is normal; a leaked session (thread stack + runtime) per run would be far more.
const FD_SLACK = 4
const THREAD_SLACK = 4
const RSS_SLACK = 96 * 1024 * 1024

/** Runs `count` jobs, `CONCURRENCY` at a time. */
async function inPool(count: number, job: (index: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      await job(index)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

async function shellRun(shell: Shell, index: number): Promise<void> {
  switch (index % 3) {
    case 0: {
      const out = collector()
      const result = await shell.run({ command: `echo run ${index}`, timeoutMs: 10_000 }, out.push)
      expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      expect(out.text).toBe(`run ${index}\n`)
      return
    }
    case 1: {
      expect(outcomeOf(await shell.run({ command: 'sleep 5', timeoutMs: 20 }))).toEqual({ cancelled: false, timedOut: true })
      return
    }
    default:
      expect(outcomeOf(await shell.run({ command: 'while :; do :; done & while :; do :; done', timeoutMs: 20 }))).toEqual({
        cancelled: false,
        timedOut: true,
      })
  }
}

async function ptyRun(index: number): Promise<void> {
  const pty = new PtySession()
  switch (index % 4) {
    case 0:
    case 1: {
      const out = collector()
      const result = await pty.start({ command: `echo pty ${index}`, timeoutMs: 10_000 }, out.push)
      expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      expect(out.text).toContain(`pty ${index}`)
      return
    }
    case 2:
      expect(outcomeOf(await pty.start({ command: 'sleep 5', timeoutMs: 20 }))).toEqual({ cancelled: false, timedOut: true })
      return
    default: {
      const run = pty.start({ command: 'sleep 5', timeoutMs: 10_000 })
      pty.kill()
      expect(outcomeOf(await run)).toEqual({ cancelled: true, timedOut: false })
    }
  }
}

/** Waits until `current()` is within the tolerances of `baseline`; fails with the figures if not. */
async function expectBackToBaseline(baseline: Usage): Promise<void> {
  let last = usage()
  console.log(`soak: baseline ${JSON.stringify({ ...baseline, rss: Math.round(baseline.rss / 1048576) })}`)
  const settled = () =>
    last.fds <= baseline.fds + FD_SLACK &&
    last.threads <= baseline.threads + THREAD_SLACK &&
    last.children <= baseline.children &&
    last.rss <= baseline.rss + RSS_SLACK
  try {
    await waitUntil(
      () => {
        last = usage()
        return settled()
      },
      // Past Tokio's 10 s keep-alive, so idle blocking-pool threads have had time to exit.
      20_000,
      'resources to return to baseline',
    )
  } finally {
    // On failure the message names which figure did not come back.
    expect({ ...last, rss: Math.round(last.rss / 1048576) }).toEqual({
      fds: expect.toSatisfy((n: number) => n <= baseline.fds + FD_SLACK),
      threads: expect.toSatisfy((n: number) => n <= baseline.threads + THREAD_SLACK),
      children: expect.toSatisfy((n: number) => n <= baseline.children),
      rss: expect.toSatisfy((mb: number) => mb * 1048576 <= baseline.rss + RSS_SLACK + 1048576),
    })
  }
}

describe('soak', () => {
  it(`${SHELL_RUNS} Shell runs and ${PTY_RUNS} PTY sessions leave no fds, threads, children or memory behind`, {
    timeout: 120_000,
  }, async () => {
    // Warm up first so that lazily created pools (libuv, tokio, V8) are part of the baseline:
    // one run of each kind, one at a time, so that the baseline holds as few live sessions as
    // possible (a baseline inflated by warm-up sessions would hide a leak).
    const warm = new Shell()
    for (let i = 0; i < 3; i++) await shellRun(warm, i)
    for (let i = 0; i < 4; i++) await ptyRun(i)
    // And one whole batch of PTY sessions at full concurrency: each holds ~250 KB outside the JS
    // heap until V8 collects it (V8 is told, and collects once such memory has grown by about
    // 64 MB), and the allocator keeps the pages its peak grew to. That peak belongs in the
    // baseline, and a smaller batch reaches a smaller one; a leak grows with every run past it.
    await inPool(PTY_RUNS, ptyRun)
    await waitUntil(() => children().length === 0, 10_000, 'warm-up children to be reaped')
    const baseline = usage()

    const started = Date.now()
    const shells = Array.from({ length: CONCURRENCY }, () => new Shell())
    await inPool(SHELL_RUNS, (i) => shellRun(shells[i % CONCURRENCY], i))
    const shellMs = Date.now() - started
    await inPool(PTY_RUNS, ptyRun)
    const ptyMs = Date.now() - started - shellMs
    // End the live sessions: a session that is still open legitimately holds its thread and fds.
    for (const shell of [warm, ...shells]) {
      expect(outcomeOf(await shell.run({ command: 'exit 0', timeoutMs: 10_000 }))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    }
    console.log(`soak: ${SHELL_RUNS} Shell runs in ${shellMs} ms, ${PTY_RUNS} PTY runs in ${ptyMs} ms`)

    await expectBackToBaseline(baseline)
    const after = usage()
    console.log(
      `soak: after ${JSON.stringify({ ...after, rss: Math.round(after.rss / 1048576) })} (rss in MB)`,
    )
  })
})
