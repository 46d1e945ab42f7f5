import { AsyncLocalStorage } from 'node:async_hooks'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Process, PtySession } from '../index.js'
import { collector, expectRangeError, expectTypeError, isRunning, waitUntil } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-pty-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Runs one command to its end in a fresh session. */
async function runPty(options: Parameters<PtySession['start']>[0]) {
  const out = collector()
  const result = await new PtySession().start(options, out.push)
  return { result, text: out.text }
}

/** Asserts that `fn` throws an Error whose message is exactly `message`. */
function expectError(fn: () => unknown, message: string) {
  expect(fn).toThrowError(new RegExp(`^${escape(message)}$`))
}

/** Asserts that `promise` rejects with an Error whose message is exactly `message`. */
async function expectRejection(promise: Promise<unknown>, message: string) {
  await expect(promise).rejects.toThrowError(new RegExp(`^${escape(message)}$`))
}

function escape(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

describe('PtySession runs', () => {
  it('streams output and reports the exit code', async () => {
    const { result, text } = await runPty({ command: 'printf hello; exit 3' })
    expect(text).toBe('hello')
    expect(result).toEqual({ exitCode: 3, cancelled: false, timedOut: false })
  })

  it('reports a death by signal as 128+N with the signal name', async () => {
    const { result } = await runPty({ command: 'kill -KILL $$' })
    expect(result).toEqual({ exitCode: 137, signal: 'SIGKILL', cancelled: false, timedOut: false })
  })

  it('runs through sh -c by default, another shell, and -lc for a login shell', async () => {
    expect((await runPty({ command: 'echo $0' })).text).toBe('sh\r\n')
    expect((await runPty({ command: 'echo ${BASH_VERSION:+bash}', shell: 'bash' })).text).toBe('bash\r\n')
    const login = await runPty({ command: 'shopt -q login_shell && echo login-shell', shell: 'bash', login: true })
    expect(login.text.endsWith('login-shell\r\n')).toBe(true)
    expect(login.result.exitCode).toBe(0)
  })

  it('overlays env on the host environment and runs in cwd', async () => {
    const { text } = await runPty({
      command: 'printf "%s|%s|%s" "$SW_PTY_VAR" "$PWD" "${PATH:+has-path}"',
      env: { SW_PTY_VAR: 'from env' },
      cwd: scratch,
    })
    expect(text).toBe(`from env|${scratch}|has-path`)
  })

  it('rejects a missing or non-directory cwd after start returned', async () => {
    const session = new PtySession()
    await expectRejection(
      session.start({ command: 'true', cwd: '/no/such/dir' }),
      'Failed to set cwd: /no/such/dir: No such file or directory',
    )
    const file = join(scratch, 'plain-file')
    writeFileSync(file, 'x')
    await expectRejection(session.start({ command: 'true', cwd: file }), `Failed to set cwd: ${file}: not a directory`)
    await expect(session.start({ command: 'true', shell: 'no-such-shell-sw' })).rejects.toThrowError(
      /^Failed to spawn no-such-shell-sw: /,
    )
    expect(await session.start({ command: 'exit 4' })).toEqual({ exitCode: 4, cancelled: false, timedOut: false })
  })

  it('defaults to 120×40 and clamps sizes on start and resize', async () => {
    expect((await runPty({ command: 'stty size' })).text).toBe('40 120\r\n')
    expect((await runPty({ command: 'stty size', cols: 1000, rows: 1 })).text).toBe('5 400\r\n')
    expect((await runPty({ command: 'stty size', cols: 3, rows: 999 })).text).toBe('200 20\r\n')

    const session = new PtySession()
    const out = collector()
    const done = session.start({ command: 'stty -echo; stty size; read _; stty size; read _; stty size' }, out.push)
    await waitUntil(() => out.text === '40 120\r\n', 5000, 'first size')
    session.resize(80, 24)
    session.write('\n')
    await waitUntil(() => out.text === '40 120\r\n24 80\r\n', 5000, 'second size')
    session.resize(5000, 0)
    session.write('\n')
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('40 120\r\n24 80\r\n5 400\r\n')
  })

  it('decodes UTF-8 split across reads and replaces invalid bytes', async () => {
    const { text } = await runPty({ command: "stty raw; printf '\\342\\202'; sleep 0.05; printf '\\254\\377ok'" })
    expect(text).toBe('€\uFFFDok')
  })
})

describe('PtySession lifecycle', () => {
  it('write, resize and kill work as soon as start returned, and throw when idle', async () => {
    const session = new PtySession()
    expectError(() => session.write('x'), 'PTY session is not running')
    expectError(() => session.resize(80, 24), 'PTY session is not running')
    expectError(() => session.kill(), 'PTY session is not running')

    const out = collector()
    // The line discipline echoes input on arrival, whenever the shell gets to read it.
    const done = session.start({ command: 'read line; echo "got:$line"' }, out.push)
    session.write('hello\n')
    expectError(() => session.start({ command: 'true' }), 'PTY session already running')
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('hello\r\ngot:hello\r\n')

    expectError(() => session.write('x'), 'PTY session is not running')
    const again = collector()
    expect(await session.start({ command: 'echo again' }, again.push)).toEqual({
      exitCode: 0,
      cancelled: false,
      timedOut: false,
    })
    expect(again.text).toBe('again\r\n')
  })

  it('delivers 20 MB byte-exact before the promise resolves', async () => {
    const line = (i: number) => `${String(i).padStart(8, '0')} €uro ${'x'.repeat(i % 50)}\n`
    const parts: string[] = []
    let size = 0
    for (let i = 0; size < 20_000_000; i++) {
      const l = line(i)
      parts.push(l)
      size += Buffer.byteLength(l)
    }
    const expected = Buffer.from(parts.join(''))
    const file = join(scratch, 'twenty-mb')
    writeFileSync(file, expected)

    const out = collector()
    let resolvedWith = -1
    const result = await new PtySession()
      .start({ command: `stty raw -echo; cat '${file}'` }, out.push)
      .then((r) => {
        resolvedWith = out.text.length
        return r
      })
    expect(result).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(resolvedWith).toBe(out.text.length)
    const got = Buffer.from(out.text)
    expect(got.length).toBe(expected.length)
    expect(got.equals(expected)).toBe(true)
    expect(out.chunks).toBeGreaterThan(1)
  }, 60_000)

  it('calls onChunk in the async context of start, and runs what it queues before moving on', async () => {
    const storage = new AsyncLocalStorage<string>()
    const stores: Array<string | undefined> = []
    const order: string[] = []
    // Between the two lines nothing else happens, so no other callback would run the queued work.
    const result = await storage.run('the caller', () =>
      new PtySession().start({ command: 'echo one; sleep 0.3; echo two' }, () => {
        stores.push(storage.getStore())
        if (stores.length > 1) return
        setImmediate(() => order.push('immediate'))
        process.nextTick(() => order.push('tick'))
        queueMicrotask(() => order.push('microtask'))
      }),
    )
    expect(result.exitCode).toBe(0)
    expect(stores.length).toBeGreaterThanOrEqual(2)
    expect(new Set(stores)).toEqual(new Set(['the caller']))
    expect(order).toEqual(['tick', 'microtask', 'immediate'])
  })

  it('keeps the program going, and loses nothing, while the JS thread is busy', async () => {
    // 30,000 lines are far more than the terminal holds: the program finishes, and creates the
    // marker, only if the terminal is read meanwhile (it could not be, were it read by the event
    // loop alone).
    const expected = Array.from({ length: 30_000 }, (_, i) => `${i + 1}\r\n`).join('')
    const command = (marker: string) => `seq 30000; touch '${marker}'; sleep 0.2`
    /** Keeps the JS thread busy until `path` exists (10 s at most); returns whether it does. */
    const busyUntilExists = (path: string) => {
      const until = Date.now() + 10_000
      while (!existsSync(path) && Date.now() < until) {
        // Synchronous work: the event loop gets no turn.
      }
      return existsSync(path)
    }

    // Busy from the start, before the event loop could take the terminal over.
    const atStart = collector()
    const startMarker = join(scratch, 'done-at-start')
    const started = new PtySession().start({ command: command(startMarker) }, atStart.push)
    expect(busyUntilExists(startMarker)).toBe(true)
    expect(await started).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(atStart.text).toBe(expected)

    // Busy in the middle of the stream, in onChunk; every byte arrives afterwards, in order.
    const midway = collector()
    const midwayMarker = join(scratch, 'done-midway')
    let finishedWhileBusy = false
    const streamed = new PtySession().start({ command: command(midwayMarker) }, (chunk) => {
      const firstChunk = midway.chunks === 0
      midway.push(chunk)
      if (firstChunk) finishedWhileBusy = busyUntilExists(midwayMarker)
    })
    expect(await streamed).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(finishedWhileBusy).toBe(true)
    expect(midway.text).toBe(expected)
  }, 30_000)

  it('writes input larger than the terminal takes at once, all of it and in order', async () => {
    const session = new PtySession()
    const out = collector()
    const done = session.start({ command: 'stty raw -echo; echo ready; head -c 1000000 | md5sum' }, out.push)
    await waitUntil(() => out.text.includes('ready'), 5000, 'ready')
    const input = '0123456789'.repeat(100_000)
    session.write(input)
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe(`ready\n${createHash('md5').update(input).digest('hex')}  -\n`)
  }, 60_000)

  it('gives processes that keep the terminal open at most 1 s after the child exits', async () => {
    // The leader drops its controlling terminal (TIOCNOTTY, 0x5422) so that its exit does not hang
    // the terminal up; the background sleep (SIGHUP ignored) keeps the slave side open.
    const t0 = Date.now()
    const { result, text } = await runPty({
      command: "trap '' HUP; sleep 8 & echo \"orphan=$!\"; exec perl -e 'ioctl(STDIN, 0x5422, 0) or die $!'",
    })
    const elapsed = Date.now() - t0
    const orphan = Number(/orphan=(\d+)/.exec(text)?.[1])
    try {
      expect(result).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      expect(elapsed).toBeGreaterThanOrEqual(950)
      expect(elapsed).toBeLessThan(2500)
      expect(isRunning(orphan)).toBe(true)
    } finally {
      if (orphan > 0) process.kill(orphan, 'SIGKILL')
    }
  })

  it('can be started 200 times in sequence without leaking fds or processes', async () => {
    const fds = () => readdirSync('/proc/self/fd').length
    const children = () => Process.fromPid(process.pid)!.children().length
    const session = new PtySession()
    await session.start({ command: 'true' })
    const before = { fds: fds(), children: children() }
    for (let i = 0; i < 200; i++) {
      const result = await session.start(
        i % 10 === 0 ? { command: 'sleep 5', timeoutMs: 20 } : { command: 'printf ok' },
        () => {},
      )
      expect(result.timedOut).toBe(i % 10 === 0)
    }
    // Bounded poll: a run's I/O thread may still be closing its last fd as the promise settles;
    // a leak of one per run never settles.
    await waitUntil(() => fds() <= before.fds && children() <= before.children, 5000, 'fds and children back')
    expect({ fds: fds(), children: children() }).toEqual(before)
  }, 60_000)
})

describe('PtySession cancellation', () => {
  it('times out, reporting timedOut without an exit code', async () => {
    const t0 = Date.now()
    const { result } = await runPty({ command: 'sleep 30', timeoutMs: 150 })
    expect(result).toEqual({ cancelled: false, timedOut: true })
    expect(Date.now() - t0).toBeLessThan(1500)
  })

  it('resolves promptly after a timeout even with a disowned background job', async () => {
    const t0 = Date.now()
    const { result, text } = await runPty({
      shell: 'bash',
      command: 'set -m; sleep 30 & echo "bg=$!"; disown; sleep 30',
      timeoutMs: 150,
    })
    expect(result).toEqual({ cancelled: false, timedOut: true })
    expect(Date.now() - t0).toBeLessThan(1500)
    const bg = Number(/bg=(\d+)/.exec(text)?.[1])
    expect(bg).toBeGreaterThan(0)
    expect(isRunning(bg)).toBe(false)
  })

  it('kill() sends SIGTERM, then SIGKILL after at most 500 ms', async () => {
    const session = new PtySession()
    const out = collector()
    // `exec` leaves one process, which ignores SIGTERM: no shell is left to report its child's
    // death, so the output is exactly what the command printed.
    const done = session.start({ command: "trap '' TERM; echo ready; exec sleep 30" }, out.push)
    await waitUntil(() => out.text.includes('ready'), 5000, 'ready')
    const t0 = Date.now()
    session.kill()
    expect(await done).toEqual({ cancelled: true, timedOut: false })
    const elapsed = Date.now() - t0
    expect(elapsed).toBeGreaterThanOrEqual(450)
    expect(elapsed).toBeLessThan(2000)
    expect(out.text).toBe('ready\r\n')
  })

  it('an AbortSignal cancels a run, and an aborted one starts nothing', async () => {
    const marker = join(scratch, 'should-not-exist')
    const result = await new PtySession().start({ command: `touch '${marker}'`, signal: AbortSignal.abort() })
    expect(result).toEqual({ cancelled: true, timedOut: false })
    expect(existsSync(marker)).toBe(false)

    const controller = new AbortController()
    const out = collector()
    // `exec`: no shell is left to report the sleep's death ("Terminated") after the cancel.
    const done = new PtySession().start({ command: 'echo before; exec sleep 30', signal: controller.signal }, out.push)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    // The whole line: a read may end between `before` and its line end.
    await waitUntil(() => out.text.includes('before\r\n'), 5000, 'output')
    controller.abort()
    expect(await done).toEqual({ cancelled: true, timedOut: false })
    expect(out.text).toBe('before\r\n')
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('a worker torn down while its run streams output leaves the host running and the program gone', async () => {
    // Calls are still queued to the worker's callback when its environment goes away: they must be
    // dropped, not delivered into a dead environment (which would crash the host).
    const worker = `
      const { parentPort } = require('node:worker_threads')
      const { PtySession } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
      let text = ''
      let told = false
      new PtySession().start({ command: 'echo "pid $$"; exec yes' }, (chunk) => {
        if (told) return
        text += chunk
        const pid = /^pid (\\d+)\\r\\ny\\r\\n/.exec(text)
        if (pid) { told = true; parentPort.postMessage(Number(pid[1])) }
      })`
    const host = `
      const { Worker } = require('node:worker_threads')
      const worker = new Worker(${JSON.stringify(worker)}, { eval: true })
      worker.once('message', async (pid) => console.log('terminated', await worker.terminate(), pid))`
    const child = spawnSync(process.execPath, ['-e', host], { encoding: 'utf8', timeout: 20_000 })
    expect(child.error).toBeUndefined()
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const [, pid] = /^terminated 1 (\d+)\n$/.exec(child.stdout) ?? []
    expect(pid).toBeDefined()
    await waitUntil(() => !isRunning(Number(pid)), 5000, 'the program to be gone')
  })
})

describe('PtySession argument checks', () => {
  it('throws TypeErrors and RangeErrors naming the field', async () => {
    const session = new PtySession()
    expectTypeError(() => session.start(undefined as never), 'options must be an object')
    expectTypeError(() => session.start({} as never), 'options.command must be a string')
    expectTypeError(() => session.start({ command: 5 } as never), 'options.command must be a string')
    expectTypeError(() => session.start({ command: 'x', shell: 1 } as never), 'options.shell must be a string')
    expectTypeError(() => session.start({ command: 'x', login: 'yes' } as never), 'options.login must be a boolean')
    expectTypeError(() => session.start({ command: 'x', cwd: 1 } as never), 'options.cwd must be a string')
    expectTypeError(() => session.start({ command: 'x', env: { A: 1 } } as never), 'options.env.A must be a string')
    expectTypeError(() => session.start({ command: 'x', cols: '80' } as never), 'options.cols must be a number')
    expectRangeError(() => session.start({ command: 'x', rows: NaN }), 'options.rows must be a finite number')
    expectRangeError(() => session.start({ command: 'x', timeoutMs: -5 }), 'options.timeoutMs must be a non-negative number')
    expectTypeError(() => session.start({ command: 'x', signal: {} } as never), 'options.signal must be an AbortSignal')
    expectRangeError(() => session.start({ command: 'x', scrollback: NaN }), 'options.scrollback must be a finite number')
    expectTypeError(() => session.start({ command: 'x', answerQueries: 1 } as never), 'options.answerQueries must be a boolean')
    expectTypeError(() => session.start({ command: 'x' }, 'log' as never), 'onChunk must be a function')

    const done = session.start({ command: 'stty -echo; read _' })
    expectTypeError(() => session.write(5 as never), 'data must be a string')
    expectTypeError(() => session.resize('80' as never, 24), 'cols must be a number')
    expectRangeError(() => session.resize(80, Infinity), 'rows must be a finite number')
    session.write('\n')
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
  })
})
