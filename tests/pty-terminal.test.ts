// The terminal model inside PtySession: screen, snapshot, commands, resize reflow, query answers
// through a real pseudo-terminal, interactive bash with OSC 133 hooks, and exec.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PtySession, VirtualTerminal } from '../index.js'
import { collector, expectRangeError, expectTypeError, waitUntil } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-pty-terminal-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A HOME with an optional .bashrc, so the user's real startup files stay out of the tests. */
function home(name: string, bashrc?: string): string {
  const dir = join(scratch, name)
  mkdirSync(dir)
  if (bashrc !== undefined) writeFileSync(join(dir, '.bashrc'), bashrc)
  return dir
}

/** An interactive bash session with hooks, its HOME and cwd in the scratch dir. */
function interactiveBash(name: string, bashrc?: string) {
  const session = new PtySession()
  const out = collector()
  const dir = home(name, bashrc)
  const done = session.start(
    { interactive: true, shell: 'bash', cwd: dir, env: { HOME: dir, TERM: 'xterm-256color' }, cols: 60, rows: 12 },
    out.push,
  )
  return { session, out, done, dir }
}

async function exit(session: PtySession, done: Promise<unknown>) {
  session.write('exit 0\r')
  return await done
}

describe('PtySession screen, snapshot and commands', () => {
  it('throw before the first start, stay valid after exit and reset on the next start', async () => {
    const session = new PtySession()
    expect(() => session.screen()).toThrowError(/^PTY session is not running$/)
    expect(() => session.snapshot()).toThrowError(/^PTY session is not running$/)
    expect(() => session.commands()).toThrowError(/^PTY session is not running$/)

    await session.start({ command: "printf 'hello\\nworld\\033]0;my title\\007'", cols: 30, rows: 5 })
    expect(session.screen()).toEqual({
      cols: 30,
      rows: 5,
      lines: ['hello', 'world', '', '', ''],
      cursor: { row: 1, col: 5, visible: true },
      title: 'my title',
      altScreen: false,
      bells: 0,
      modes: {
        applicationCursorKeys: false,
        applicationKeypad: false,
        bracketedPaste: false,
        altScreen: false,
        mouseTracking: 'none',
        sgrMouse: false,
        focusEvents: false,
        insert: false,
        autoWrap: true,
      },
    })
    expect(session.commands()).toEqual([])

    const next = session.start({ command: 'read _', cols: 25, rows: 6 })
    // The new run's terminal replaces the old one as soon as start returns.
    expect(session.screen().lines).toEqual(['', '', '', '', '', ''])
    expect(session.screen().cols).toBe(25)
    session.write('\r')
    await next
  })

  it('snapshot repaints screen and scrollback, honouring the scrollback option', async () => {
    const session = new PtySession()
    await session.start({ command: "seq 1 50; printf '\\033[1mbold\\033[0m'", cols: 20, rows: 5, scrollback: 10 })
    const screen = session.screen()
    expect(screen.lines).toEqual(['47', '48', '49', '50', 'bold'])
    const snapshot = session.snapshot()
    const replay = new VirtualTerminal({ cols: 20, rows: 5, scrollback: 10 })
    replay.write(snapshot)
    expect(replay.screen()).toEqual(screen)
    // Ten lines of scrollback: 37..46 survive, 36 scrolled out of the ring.
    const plain = snapshot.replace(/\x1b(\[[0-9;?]*[ -/]*[@-~]|[@-~])/g, '').split(/\r\n/)
    expect(plain).toContain('37')
    expect(plain).not.toContain('36')
  })

  it('resize reflows the emulator at once and the program sees the new size', async () => {
    const session = new PtySession()
    const out = collector()
    const done = session.start({ command: 'stty -echo; echo ready; read _; stty size', cols: 80, rows: 24 }, out.push)
    await waitUntil(() => out.text === 'ready\r\n', 5000, 'ready')
    session.resize(40, 10)
    expect([session.screen().cols, session.screen().rows]).toEqual([40, 10])
    session.resize(1, 1000)
    expect([session.screen().cols, session.screen().rows]).toEqual([20, 200])
    session.write('\r')
    await done
    expect(out.text).toBe('ready\r\n200 20\r\n')
  })
})

describe('PtySession onChunk and the screen', () => {
  it('a chunk is on the screen by the time onChunk receives it', async () => {
    const session = new PtySession()
    let received = ''
    const missing: string[] = []
    const done = session.start({ command: 'stty -echo; echo ready; exec cat', cols: 40, rows: 5 }, (chunk) => {
      received += chunk
      const screen = session.screen().lines.join('\n')
      for (const piece of chunk.split('\r\n')) if (!screen.includes(piece)) missing.push(piece)
    })
    // Set when the run ends, whatever ends it: kill() of an ended session throws, and would hide
    // the failure that ended it.
    let ended = false
    void done.then(() => (ended = true))
    try {
      await waitUntil(() => received.includes('ready\r\n'), 5000, 'ready')
      for (let i = 0; i < 50; i++) {
        session.write(`line ${i}\n`)
        await waitUntil(() => received.includes(`line ${i}\r\n`), 5000, `line ${i}`)
      }
      session.write('\x04')
      expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    } finally {
      // A failed wait must not leave cat running.
      if (!ended) {
        session.kill()
        await done
      }
    }
    expect(missing).toEqual([])
  })
})

describe('PtySession answers queries', () => {
  const cprProgram =
    "stty raw -echo; printf 'ab\\033[6n'; if IFS= read -r -t 5 -d R reply; then :; else reply=xnone; fi; stty sane; printf '%s|\\n' \"${reply#?}\""

  it('answers CPR from the real cursor and removes the query from onChunk', async () => {
    const out = collector()
    const result = await new PtySession().start({ command: cprProgram, shell: 'bash' }, out.push)
    expect(result.exitCode).toBe(0)
    expect(out.text).toBe('ab[1;3|\r\n')
  })

  it('answers DA1 and a query split across writes', async () => {
    const out = collector()
    await new PtySession().start(
      {
        command:
          "stty raw -echo; printf '\\033['; sleep 0.1; printf 'c'; IFS= read -r -t 5 -d c reply; stty sane; printf '%s|\\n' \"${reply#?}\"",
        shell: 'bash',
      },
      out.push,
    )
    expect(out.text).toBe('[?62;22|\r\n')
  })

  it('answerQueries: false passes every byte through and answers nothing', async () => {
    const out = collector()
    await new PtySession().start(
      {
        command:
          "stty raw -echo; printf 'ab\\033[6n'; if IFS= read -r -t 0.3 -d R reply; then r=answered; else r=silent; fi; stty sane; echo $r",
        shell: 'bash',
        answerQueries: false,
      },
      out.push,
    )
    expect(out.text).toBe('ab\x1b[6nsilent\r\n')
  })
})

describe('PtySession interactive bash and exec', () => {
  it('exec types a command and resolves with its record; commands() lists them', async () => {
    const { session, done, dir } = interactiveBash('exec')
    const first = await session.exec('echo hi; false', { timeoutMs: 10_000 })
    expect(first).toMatchObject({ command: 'echo hi; false', output: 'hi', exitCode: 1, cwd: dir })
    expect(first.finishedAt! >= first.startedAt).toBe(true)
    const cd = await session.exec('cd / && pwd')
    expect(cd).toMatchObject({ command: 'cd / && pwd', output: '/', exitCode: 0, cwd: dir })
    const after = await session.exec("printf 'a\\nb\\n'; (exit 7)")
    expect(after).toMatchObject({ output: 'a\nb', exitCode: 7, cwd: '/' })
    expect(session.commands().map((c) => [c.command, c.exitCode])).toEqual([
      ['echo hi; false', 1],
      ['cd / && pwd', 0],
      ["printf 'a\\nb\\n'; (exit 7)", 7],
    ])
    expect(await exit(session, done)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    // Still readable after exit; `exit` itself never completes (no D mark: the shell is gone).
    expect(session.commands()).toHaveLength(3)
    expect(session.screen().lines.filter((l) => /[$#] exit 0$/.test(l))).toHaveLength(1)
  })

  it('exec concurrent calls run one at a time, in call order', async () => {
    const { session, done } = interactiveBash('order')
    const results = await Promise.all([session.exec('echo one'), session.exec('echo two'), session.exec('echo three')])
    expect(results.map((r) => r.output)).toEqual(['one', 'two', 'three'])
    await exit(session, done)
  })

  it('exec timeout and abort send Ctrl+C and reject; the shell keeps working', async () => {
    const { session, done } = interactiveBash('cancel')
    await expect(session.exec('sleep 30', { timeoutMs: 200 })).rejects.toThrowError(/^exec timed out after 200 ms$/)
    const controller = new AbortController()
    const aborted = session.exec('sleep 30', { signal: controller.signal })
    setTimeout(() => controller.abort('user pressed stop'), 100)
    await expect(aborted).rejects.toMatchObject({
      name: 'AbortError',
      code: 'ABORT_ERR',
      message: 'exec aborted',
      cause: 'user pressed stop',
    })
    await expect(session.exec('echo never', { signal: AbortSignal.abort() })).rejects.toThrowError(/^exec aborted$/)
    const back = await session.exec('echo back')
    expect(back).toMatchObject({ output: 'back', exitCode: 0 })
    expect(session.commands().map((c) => [c.command, c.exitCode])).toEqual([
      ['sleep 30', 130],
      ['sleep 30', 130],
      ['echo back', 0],
    ])
    await exit(session, done)
  })

  it("keeps the user's PS1 and PROMPT_COMMAND (with the right $?) and removes the rcfile at the end", async () => {
    const bashrc = `PS1='my> '\nPROMPT_COMMAND='printf "[pc:%s]" $?'\n`
    const { session, done } = interactiveBash('user-rc', bashrc)
    let ended = false
    void done.then(() => (ended = true))
    try {
      const record = await session.exec('false')
      expect(record.exitCode).toBe(1)
      await waitUntil(() => session.screen().lines.some((l) => l === '[pc:1]my>'), 5000, 'user prompt')
      const args = await session.exec('ps -ww -o args= -p $$')
      const rcfile = args.output.match(/^bash --rcfile (\S+) -i$/)?.[1]
      expect(rcfile).toBeDefined()
      expect(existsSync(rcfile!)).toBe(true)
      await exit(session, done)
      expect(existsSync(rcfile!)).toBe(false)
    } finally {
      // On a failed assertion, end the run so its rcfile directory is removed too.
      if (!ended) session.kill()
      await done
    }
  })

  it('other shells fall back to prompt detection: records without exit codes', async () => {
    const session = new PtySession()
    const dir = home('fallback')
    const done = session.start({
      interactive: true,
      shell: 'sh',
      cwd: dir,
      env: { HOME: dir, PS1: '$ ', ENV: '' },
    })
    const record = await session.exec('echo fallback')
    expect(record.command).toBe('echo fallback')
    expect(record.output).toBe('fallback')
    expect(record.exitCode).toBeUndefined()
    await exit(session, done)
  })

  it('exec rejects when the run ends first, throws when idle, and checks its arguments', async () => {
    const session = new PtySession()
    expect(() => session.exec('true')).toThrowError(/^PTY session is not running$/)
    const done = session.start({ command: 'sleep 0.2' })
    const pending = session.exec('echo never')
    await expect(pending).rejects.toThrowError(/^exec failed: the session ended before the command finished$/)
    await done
    expect(() => session.exec('true')).toThrowError(/^PTY session is not running$/)

    const live = session.start({ command: 'sleep 5' })
    expectTypeError(() => session.exec(42 as unknown as string), 'command must be a string')
    expectTypeError(() => session.exec('x', 5 as unknown as object), 'options must be an object')
    expectTypeError(
      () => session.exec('x', { timeoutMs: '1' as unknown as number }),
      'options.timeoutMs must be a number',
    )
    expectRangeError(() => session.exec('x', { timeoutMs: -1 }), 'options.timeoutMs must be a non-negative number')
    expectTypeError(
      () => session.exec('x', { signal: {} as AbortSignal }),
      'options.signal must be an AbortSignal',
    )
    session.kill()
    await live
  })

  it('start checks the terminal options and requires command unless interactive', () => {
    const session = new PtySession()
    expectTypeError(() => session.start({}), 'options.command must be a string')
    expectTypeError(
      () => session.start({ command: 'true', interactive: 'yes' as unknown as boolean }),
      'options.interactive must be a boolean',
    )
    expectTypeError(
      () => session.start({ command: 'true', scrollback: '5' as unknown as number }),
      'options.scrollback must be a number',
    )
    expectRangeError(
      () => session.start({ command: 'true', scrollback: Infinity }),
      'options.scrollback must be a finite number',
    )
    expectTypeError(
      () => session.start({ command: 'true', answerQueries: 1 as unknown as boolean }),
      'options.answerQueries must be a boolean',
    )
    expect(() => session.screen()).toThrowError(/^PTY session is not running$/)
  })
})
