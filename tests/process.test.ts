import { type ChildProcess, spawn } from 'node:child_process'
import { getEventListeners } from 'node:events'
import { readlinkSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Process, ProcessStatus } from '../index.js'
import { collector, expectRangeError, expectTypeError, isRunning, waitUntil } from './helpers.js'

const started: ChildProcess[] = []

/** Spawns `sh -c script` as the leader of a new process group, with stdout collected. */
function sh(script: string) {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] })
  started.push(child)
  const out = collector()
  child.stdout!.setEncoding('utf8').on('data', out.push)
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  return { child, pid: child.pid!, out, exit }
}

afterEach(async () => {
  for (const child of started.splice(0)) {
    const running = child.exitCode === null && child.signalCode === null
    const exited = running ? new Promise((resolve) => child.once('exit', resolve)) : null
    // The whole group: a test's tree may have left members behind its root.
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {}
    await exited
  }
})

/** Kills leftover pids printed by a test script (processes that left the tree). */
function killPids(pids: number[]) {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}

describe('Process lookup', () => {
  it('describes a running process', async () => {
    const { pid, exit } = sh('exec sleep 30')
    await waitUntil(() => Process.fromPid(pid)?.args()[0] === 'sleep', 5000, 'exec')
    const p = Process.fromPid(pid)!
    expect(p.pid).toBe(pid)
    expect(p.ppid).toBe(process.pid)
    expect(p.args()).toEqual(['sleep', '30'])
    expect(p.groupId()).toBe(pid)
    expect(p.status()).toBe(ProcessStatus.Running)
    expect(p.status()).toBe('running')
    expect(p.children()).toEqual([])
    const exe = readlinkSync(`/proc/${pid}/exe`)
    expect(Process.fromPath(exe).map((q) => q.pid)).toContain(pid)
    expect(Process.fromPath('/no/such/binary')).toEqual([])

    expect(p.killTree()).toBe(1)
    expect(await exit).toEqual({ code: null, signal: 'SIGKILL' })
    expect(p.status()).toBe('exited')
    expect(p.args()).toEqual([])
    expect(p.groupId()).toBeNull()
    expect(p.children()).toEqual([])
    expect(p.killTree()).toBe(0)
    expect(await p.waitForExit()).toBe(true)
  })

  it('returns null or nothing for pids and paths that match nothing', () => {
    expect(Process.fromPid(0)).toBeNull()
    expect(Process.fromPid(4294967295)).toBeNull()
    expect(Process.fromPath('/')).toEqual([])
  })

  it('rejects bad arguments with TypeErrors and RangeErrors naming the argument', () => {
    expectTypeError(() => Process.fromPid('1' as never), 'pid must be an integer from 0 to 4294967295')
    expectRangeError(() => Process.fromPid(-1), 'pid must be an integer from 0 to 4294967295')
    expectRangeError(() => Process.fromPid(1.5), 'pid must be an integer from 0 to 4294967295')
    expectTypeError(() => Process.fromPath(5 as never), 'path must be a string')
    const me = Process.fromPid(process.pid)!
    expectTypeError(() => me.killTree('TERM' as never), 'signal must be an integer from 0 to 64')
    expectRangeError(() => me.killTree(65), 'signal must be an integer from 0 to 64')
    expectTypeError(() => me.terminate({ gracefulMs: '1' as never }), 'options.gracefulMs must be a number')
    expectRangeError(() => me.terminate({ timeoutMs: -1 }), 'options.timeoutMs must be a non-negative number')
    expectTypeError(() => me.terminate({ group: 1 as never }), 'options.group must be a boolean')
    expectTypeError(() => me.terminate({ signal: {} as never }), 'options.signal must be an AbortSignal')
    expectTypeError(() => me.terminate(7 as never), 'options must be an object')
    expectTypeError(() => me.waitForExit({ timeoutMs: 'soon' as never }), 'options.timeoutMs must be a number')
  })

  it('lists children and kills a tree children first, root last, plus the group it leads', async () => {
    // `(sleep 30 & echo $!)` leaves a sleep that is re-parented out of the tree but stays in the group.
    // The trailing `sleep 30` keeps the root from exiting normally between its children's signal
    // and its own (children are signalled first).
    const { pid, out, exit } = sh('(sleep 30 & echo $!); sleep 30 & sleep 30 & wait; sleep 30')
    const root = Process.fromPid(pid)!
    const sleeping = () => root.children().filter((k) => k.args()[0] === 'sleep').length
    await waitUntil(() => sleeping() === 2 && out.text !== '', 5000, 'children')
    const kids = root.children()
    expect(kids.map((k) => k.args())).toEqual([
      ['sleep', '30'],
      ['sleep', '30'],
    ])
    expect(kids.map((k) => k.ppid)).toEqual([pid, pid])
    const orphan = Process.fromPid(Number(out.text.trim()))!
    expect(orphan.args()).toEqual(['sleep', '30'])
    expect(orphan.groupId()).toBe(pid)

    expect(root.killTree(15)).toBe(3)
    expect(await exit).toEqual({ code: null, signal: 'SIGTERM' })
    for (const p of [...kids, orphan]) expect(await p.waitForExit({ timeoutMs: 5000 })).toBe(true)
  })
})

describe('Process.terminate', () => {
  it('stops a cooperative tree with SIGTERM', async () => {
    const { pid, exit } = sh('sleep 30 & wait; sleep 30')
    const root = Process.fromPid(pid)!
    await waitUntil(() => root.children().length === 1, 5000, 'child')
    const [kid] = root.children()
    expect(await root.terminate()).toBe(true)
    expect(await exit).toEqual({ code: null, signal: 'SIGTERM' })
    expect(kid.status()).toBe('exited')
  })

  it('escalates to SIGKILL after gracefulMs', async () => {
    const { pid, out, exit } = sh("trap '' TERM; echo ready; while :; do sleep 1; done")
    await waitUntil(() => out.text === 'ready\n', 5000, 'ready')
    const t0 = Date.now()
    expect(await Process.fromPid(pid)!.terminate({ gracefulMs: 150 })).toBe(true)
    const elapsed = Date.now() - t0
    expect(elapsed).toBeGreaterThanOrEqual(145)
    expect(elapsed).toBeLessThan(1000)
    expect(await exit).toEqual({ code: null, signal: 'SIGKILL' })
  })

  it('skips the grace when gracefulMs is negative', async () => {
    const { pid, out, exit } = sh("trap '' TERM; echo ready; while :; do sleep 1; done")
    await waitUntil(() => out.text === 'ready\n', 5000, 'ready')
    const t0 = Date.now()
    expect(await Process.fromPid(pid)!.terminate({ gracefulMs: -1 })).toBe(true)
    expect(Date.now() - t0).toBeLessThan(500)
    expect(await exit).toEqual({ code: null, signal: 'SIGKILL' })
  })

  it('reaches group members outside the tree only with group: true', async () => {
    const { pid, out, exit } = sh('(sleep 30 & echo $!); exec sleep 30')
    await waitUntil(() => out.text !== '', 5000, 'orphan pid')
    const orphanPid = Number(out.text.trim())
    try {
      expect(await Process.fromPid(pid)!.terminate()).toBe(true)
      await exit
      expect(isRunning(orphanPid)).toBe(true)

      const second = sh('(sleep 30 & echo $!); exec sleep 30')
      await waitUntil(() => second.out.text !== '', 5000, 'orphan pid')
      const secondOrphan = Number(second.out.text.trim())
      expect(await Process.fromPid(second.pid)!.terminate({ group: true })).toBe(true)
      await second.exit
      await waitUntil(() => !isRunning(secondOrphan), 5000, 'group member to exit')
    } finally {
      killPids([orphanPid])
    }
  })

  it('resolves true at once for a process that has exited', async () => {
    const { pid, exit } = sh('exec sleep 30')
    const p = Process.fromPid(pid)!
    process.kill(pid, 'SIGKILL')
    await exit
    expect(p.status()).toBe('exited')
    const t0 = Date.now()
    expect(await p.terminate()).toBe(true)
    expect(Date.now() - t0).toBeLessThan(100)
  })

  it('rejects an already-aborted signal without sending anything', async () => {
    const { pid } = sh('exec sleep 30')
    const p = Process.fromPid(pid)!
    const signal = AbortSignal.abort()
    await expect(p.terminate({ signal })).rejects.toMatchObject({
      name: 'AbortError',
      code: 'ABORT_ERR',
      message: 'Aborted: Signal',
      cause: signal.reason,
    })
    expect(p.status()).toBe('running')
  })
})

describe('Process.waitForExit', () => {
  it('times out, is cancelled by its signal, and resolves when the process exits', async () => {
    const { pid, exit } = sh('exec sleep 30')
    const p = Process.fromPid(pid)!
    const t0 = Date.now()
    expect(await p.waitForExit({ timeoutMs: 60 })).toBe(false)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55)

    const controller = new AbortController()
    const waiting = p.waitForExit({ signal: controller.signal })
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    const reason = new Error('stop waiting')
    setTimeout(() => controller.abort(reason), 20)
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', message: 'Aborted: Signal' })
    await expect(waiting).rejects.toHaveProperty('cause', reason)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)

    await expect(p.waitForExit({ signal: AbortSignal.abort() })).rejects.toThrow(/^Aborted: Signal$/)

    const untilExit = new AbortController()
    const forever = p.waitForExit({ signal: untilExit.signal })
    process.kill(pid, 'SIGKILL')
    expect(await forever).toBe(true)
    expect(getEventListeners(untilExit.signal, 'abort')).toHaveLength(0)
    await exit
  })
})
