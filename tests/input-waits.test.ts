// Input waits read from the kernel, with real programs in real pseudo-terminals: a prompt, a
// password prompt, a REPL, a TUI and a pager are seen waiting as soon as they sleep in a read of
// their terminal; a program that sleeps on a timer or computes silently is not; one that exits
// resolves the wait with `waiting: false`. Also `pid` and `argv`.
import { describe, expect, it } from 'vitest'
import { PtySession } from '../index.js'
import { collector, waitUntil } from './helpers.js'

/** Starts `options` in a fresh session; returns it, its output and its end. */
function start(options: Parameters<PtySession['start']>[0]) {
  const session = new PtySession()
  const out = collector()
  const done = session.start({ cols: 80, rows: 24, timeoutMs: 30_000, ...options }, out.push)
  return { session, out, done }
}

/** Kills a session still running and waits for its end. */
async function stop({ session, done }: { session: PtySession; done: Promise<unknown> }) {
  if (session.pid !== null) session.kill()
  await done
}

describe('waitForInput and inputState', () => {
  it('a read prompt: a line is read, echoed, and the prompt is the cursor row', async () => {
    const run = start({ command: "read -r -p 'name? ' x; echo \"hi $x\"", shell: 'bash' })
    const state = await run.session.waitForInput({ timeoutMs: 10_000 })
    expect(state).toEqual({
      waiting: true,
      mode: 'line',
      echo: true,
      foreground: { pid: run.session.pid, name: 'bash' },
      prompt: 'name? ',
    })
    expect(run.session.inputState()).toEqual(state)
    run.session.write('ada\r')
    expect(await run.done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(run.out.text).toBe('name? ada\r\nhi ada\r\n')
  })

  it('a password prompt is not echoed', async () => {
    const run = start({ command: "read -r -s -p 'Password: ' x; echo \"got ${#x}\"", shell: 'bash' })
    const state = await run.session.waitForInput({ timeoutMs: 10_000 })
    expect([state.waiting, state.mode, state.echo, state.prompt]).toEqual([true, 'line', false, 'Password: '])
    run.session.write('hunter2\r')
    await run.done
    expect(run.out.text).toBe('Password: got 7\r\n')
  })

  it('python3 -q waits for keys at its prompt, then for the next line after print(6*7)', async () => {
    const run = start({ argv: ['python3', '-q'] })
    const first = await run.session.waitForInput({ timeoutMs: 10_000 })
    expect([first.waiting, first.mode, first.prompt, first.foreground?.name]).toEqual([true, 'keys', '>>> ', 'python3'])
    run.session.write('print(6*7)\r')
    const second = await run.session.waitForInput({ timeoutMs: 10_000 })
    expect(second.waiting).toBe(true)
    expect(run.session.screen().lines.slice(0, 3)).toEqual(['>>> print(6*7)', '42', '>>>'])
    run.session.write('exit()\r')
    expect((await run.done).exitCode).toBe(0)
  })

  it('vim -u NONE and less wait for keys', async () => {
    for (const argv of [['vim', '-u', 'NONE', '-N'], ['less', '/etc/hostname']]) {
      const run = start({ argv })
      const state = await run.session.waitForInput({ timeoutMs: 10_000 })
      expect([state.waiting, state.mode, state.foreground?.name]).toEqual([true, 'keys', argv[0]])
      run.session.write(argv[0] === 'vim' ? '\x1b:q!\r' : 'q')
      expect((await run.done).exitCode).toBe(0)
    }
  })

  it('is not waiting while the program sleeps on a timer or computes silently', async () => {
    const run = start({
      command:
        "sleep 0.5; read -r a; python3 -c 'import time\nt = time.time() + 1.5\nwhile time.time() < t: pass\ninput(\"next? \")'",
    })
    const started = Date.now()
    expect((await run.session.waitForInput({ timeoutMs: 10_000 })).waiting).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(450)
    run.session.write('x\r')
    const typed = Date.now()
    const state = await run.session.waitForInput({ timeoutMs: 10_000 })
    expect([state.waiting, state.prompt]).toEqual([true, 'next? '])
    expect(Date.now() - typed).toBeGreaterThanOrEqual(1400)
    run.session.write('y\r')
    expect((await run.done).exitCode).toBe(0)
  })

  it('resolves with waiting: false when the program exits first, and is idle afterwards', async () => {
    const run = start({ command: 'sleep 0.2' })
    // The child is spawned a moment after start() returned.
    await waitUntil(() => run.session.pid !== null, 5000, 'the child')
    expect(run.session.pid).toBeGreaterThan(0)
    expect(await run.session.waitForInput({ timeoutMs: 10_000 })).toEqual({ waiting: false })
    await run.done
    expect(run.session.pid).toBeNull()
    expect(run.session.inputState()).toEqual({ waiting: false })
    expect(await run.session.waitForInput()).toEqual({ waiting: false })
  })

  it('rejects on its timeout and on its signal', async () => {
    const run = start({ command: 'sleep 30' })
    const timedOut = run.session.waitForInput({ timeoutMs: 100 })
    await expect(timedOut).rejects.toThrowError(/^waitForInput timed out after 100 ms$/)
    await expect(timedOut).rejects.toMatchObject({ code: 'ERR_EXEC_TIMEOUT' })
    const controller = new AbortController()
    const aborted = run.session.waitForInput({ signal: controller.signal })
    controller.abort(new Error('enough'))
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' })
    await stop(run)
  })
})

describe('argv', () => {
  it('runs a program with its arguments as they are: no shell, no quoting', async () => {
    const run = start({ argv: ['printf', '%s|', 'a b', '$HOME', "'q'"] })
    expect(await run.done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(run.out.text).toBe("a b|$HOME|'q'|")
  })

  it('refuses argv with command or interactive, an empty argv, and a missing program', async () => {
    const session = new PtySession()
    expect(() => session.start({ argv: ['true'], command: 'true' })).toThrowError(
      /^options\.argv: cannot be combined with options\.command$/,
    )
    expect(() => session.start({ argv: ['bash'], interactive: true })).toThrowError(
      /^options\.argv: cannot be combined with interactive: true$/,
    )
    expect(() => session.start({ argv: [] })).toThrowError(/^options\.argv: must name a program$/)
    expect(() => session.start({ argv: ['true', 1] as unknown as string[] })).toThrowError(
      /^options\.argv must be an array of strings$/,
    )
    await expect(new PtySession().start({ argv: ['no-such-program-sw'] })).rejects.toMatchObject({
      code: 'ERR_PTY_SPAWN',
    })
  })
})
