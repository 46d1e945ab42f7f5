// ExecSessions with real programs in real pseudo-terminals: each update returns at the program's
// exit, at its input wait or at the yield time, with the rendered text that is new since the update
// before — every line of a 5 s printer exactly once under short polls, a progress bar's latest
// state, what follows a clear, a full-screen program's screen — cut from the front to its budget;
// the ports a server listens on; kill, the session limit, unknown ids, bad arguments, close; and a
// Shell's cwd and exports.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ExecSessions, type ExecUpdate, Shell } from '../index.js'
import { expectRangeError, expectTypeError, isRunning } from './helpers.js'

/** A yield only a hang reaches: a test that passes returns at an exit or an input wait first. */
const LONG = { yieldMs: 15_000 }

const all: ExecSessions[] = []
/** A table closed after the file's tests, whatever they left running. */
function table(options?: ConstructorParameters<typeof ExecSessions>[0]) {
  const sessions = new ExecSessions(options)
  all.push(sessions)
  return sessions
}
afterAll(async () => {
  await Promise.all(all.map((sessions) => sessions.close()))
})

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise
  } catch (error) {
    return error as Error & { code?: string }
  }
  throw new Error('expected a rejection')
}

describe('ExecSessions: when an update returns', () => {
  it('at the exit, with the output and the exit code, and the id is gone after', async () => {
    const sessions = table()
    const update = await sessions.start({ command: 'echo hi; exit 3', ...LONG })
    expect(update).toEqual({ id: 1, output: 'hi', running: false, exitCode: 3, truncatedBytes: 0, elapsedMs: update.elapsedMs })
    expect(update.elapsedMs).toBeLessThan(LONG.yieldMs)
    expect(sessions.list()).toEqual([])
    const gone = await rejection(sessions.write(update.id, ''))
    expect(gone.code).toBe('ERR_EXEC_UNKNOWN_SESSION')
    expect(gone.message).toBe('no exec session with id 1: there are none (a session that ended is gone once an update reported its end)')
  })

  it('at each input wait of a REPL: python3 -q answers print(6*7), then exits', async () => {
    const sessions = table()
    const first = await sessions.start({ command: 'python3 -q', ...LONG })
    expect(first.output).toBe('>>>')
    expect(first.running).toBe(true)
    expect(first.waitingForInput).toMatchObject({ waiting: true, mode: 'keys', prompt: '>>> ', foreground: { name: 'python3' } })
    const answer = await sessions.write(first.id, 'print(6*7)\r', LONG)
    expect(answer.output).toBe('>>> print(6*7)\n42\n>>>')
    expect(answer.waitingForInput?.prompt).toBe('>>> ')
    const end = await sessions.write(first.id, 'exit()\r', LONG)
    expect(end).toMatchObject({ output: '>>> exit()', running: false, exitCode: 0 })
    expect(end.waitingForInput).toBeUndefined()
  })

  it('at the yield time while the program is busy, and a poll returns nothing new', async () => {
    const sessions = table()
    const update = await sessions.start({ command: 'echo started; sleep 30', yieldMs: 200 })
    expect(update).toMatchObject({ output: 'started', running: true })
    expect(update.waitingForInput).toBeUndefined()
    expect(update.elapsedMs).toBeGreaterThanOrEqual(200)
    const poll = await sessions.write(update.id, '', { yieldMs: 100 })
    expect(poll).toMatchObject({ output: '', running: true })
    expect(poll.elapsedMs).toBeGreaterThanOrEqual(update.elapsedMs + 100)
  })
})

describe('ExecSessions: what is new', () => {
  it('a 5 s line printer polled with short yields: every line exactly once, none lost', async () => {
    const sessions = table()
    // A 5-row screen, so most lines have scrolled off by the next poll, some by several screens.
    const command = 'for i in $(seq 1 100); do echo "line $i"; sleep 0.05; done'
    let update: ExecUpdate = await sessions.start({ command, rows: 5, yieldMs: 10 })
    const seen = update.output === '' ? [] : update.output.split('\n')
    const yields = [10, 30, 80, 200, 450, 5, 700, 20]
    for (let poll = 0; update.running; poll++) {
      update = await sessions.write(update.id, '', { yieldMs: yields[poll % yields.length] })
      if (update.output !== '') seen.push(...update.output.split('\n'))
    }
    expect(update.exitCode).toBe(0)
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => `line ${i + 1}`))
  })

  it("a progress bar rewritten with \\r comes back with its latest state", async () => {
    const sessions = table()
    const command = "stty -echo; printf 'fetch\\n 10%%'; read; printf '\\r 50%%'; read; printf '\\r100%%\\ndone\\n'"
    const first = await sessions.start({ command, ...LONG })
    expect(first.output).toBe('fetch\n 10%')
    expect(first.waitingForInput).toMatchObject({ mode: 'line', echo: false })
    expect((await sessions.write(first.id, '\r', LONG)).output).toBe(' 50%')
    expect(await sessions.write(first.id, '\r', LONG)).toMatchObject({ output: '100%\ndone', exitCode: 0 })
  })

  it('after a clear, and after an erase from home, only what follows is new', async () => {
    const sessions = table()
    const command = "stty -echo; echo one; echo two; read; clear; echo three; read; printf '\\033[H\\033[J'; echo four"
    const first = await sessions.start({ command, env: { TERM: 'xterm-256color' }, ...LONG })
    expect(first.output).toBe('one\ntwo')
    expect((await sessions.write(first.id, '\r', LONG)).output).toBe('three')
    expect(await sessions.write(first.id, '\r', LONG)).toMatchObject({ output: 'four', exitCode: 0 })
  })

  it('is rendered text: colours gone, a wrapped line whole', async () => {
    const sessions = table()
    const update = await sessions.start({ command: "printf '\\033[1;31mred\\033[0m plain\\n%0300d\\n' 0", ...LONG })
    expect(update.output).toBe(`red plain\n${'0'.repeat(300)}`)
  })

  it("vim's screen: the whole screen while it is on, again when it changed", async () => {
    const sessions = table()
    const first = await sessions.start({ command: 'vim -u NONE -i NONE -N -n', env: { TERM: 'xterm-256color' }, cols: 80, rows: 10, ...LONG })
    expect(first.waitingForInput).toMatchObject({ mode: 'keys', foreground: { name: 'vim' } })
    const screen = first.output.split('\n')
    expect(screen.slice(0, 9)).toEqual(['', '~', '~', '~', '~', '~', '~', '~', '~'])
    const typed = (await sessions.write(first.id, 'ihello-exec', LONG)).output.split('\n')
    expect([typed[0], typed[1], typed.at(-1)]).toEqual(['hello-exec', '~', '-- INSERT --'])
    expect((await sessions.write(first.id, '', { yieldMs: 0 })).output).toBe('')
    // Escape with more keys behind it: vim reads no key sequence in them, and quits.
    const quit = await sessions.write(first.id, '\x1b:q!\r', LONG)
    expect(quit).toMatchObject({ running: false, exitCode: 0 })
  })

  it('maxOutputBytes keeps the end and counts what it dropped', async () => {
    const sessions = table()
    const update = await sessions.start({ command: 'seq 1 2000', maxOutputBytes: 100, ...LONG })
    const full = Array.from({ length: 2000 }, (_, i) => `${i + 1}`).join('\n')
    expect(update.output).toBe(full.slice(-100))
    expect(update.truncatedBytes).toBe(full.length - 100)
    expect(update.output.endsWith('1999\n2000')).toBe(true)
  })
})

describe('ExecSessions: servers, kill and the table', () => {
  it('python3 -m http.server 0: listening holds the port it printed; kill ends it', async () => {
    const sessions = table()
    const update = await sessions.start({ command: 'python3 -m http.server 0 --bind 127.0.0.1', ...LONG })
    const port = Number(update.output.match(/^Serving HTTP on 127\.0\.0\.1 port (\d+) /)?.[1])
    expect(port).toBeGreaterThan(0)
    expect(update.listening).toEqual([port])
    const [{ pid }] = sessions.list()
    expect(pid).toBeGreaterThan(0)
    const killed = await sessions.kill(update.id)
    expect(killed).toMatchObject({ id: update.id, running: false })
    expect(killed.exitCode).toBeUndefined()
    expect(killed.listening).toBeUndefined()
    expect(isRunning(pid!)).toBe(false)
    expect(sessions.list()).toEqual([])
  })

  it('keeps at most maxSessions; unknown ids and closed tables reject with their codes', async () => {
    const sessions = table({ maxSessions: 2 })
    const a = await sessions.start({ command: 'sleep 30', yieldMs: 0 })
    const b = await sessions.start({ command: 'sleep 30', yieldMs: 0 })
    const limit = await rejection(sessions.start({ command: 'true' }))
    expect(limit.code).toBe('ERR_EXEC_LIMIT')
    expect(limit.message).toBe('too many exec sessions: the limit is 2; kill one or let one finish first')
    const listed = sessions.list()
    expect(listed.map(({ id, command, running }) => ({ id, command, running }))).toEqual([
      { id: a.id, command: 'sleep 30', running: true },
      { id: b.id, command: 'sleep 30', running: true },
    ])
    expect(listed[0].startedAt).toBeGreaterThan(Date.now() - 60_000)
    const unknown = await rejection(sessions.write(9, 'x'))
    expect(unknown.code).toBe('ERR_EXEC_UNKNOWN_SESSION')
    expect(unknown.message).toBe(`no exec session with id 9: the sessions are ${a.id}, ${b.id}`)
    await sessions.kill(a.id)
    const c = await sessions.start({ command: 'echo again', ...LONG })
    expect(c).toMatchObject({ id: 3, output: 'again', exitCode: 0 })
    const pids = sessions.list().map((info) => info.pid!)
    await sessions[Symbol.asyncDispose]()
    expect(pids.filter(isRunning)).toEqual([])
    const closed = await rejection(sessions.start({ command: 'true' }))
    expect(closed.code).toBe('ERR_EXEC_CLOSED')
  })

  it('a command that cannot start rejects with the PTY error and leaves no session', async () => {
    const sessions = table({ maxSessions: 1 })
    const error = await rejection(sessions.start({ command: 'true', cwd: '/no/such/dir' }))
    expect(error.code).toBe('ERR_PTY_CWD')
    expect(error.message).toMatch(/^Failed to set cwd: \/no\/such\/dir: /)
    expect((await sessions.start({ command: 'echo ok', ...LONG })).output).toBe('ok')
  })

  it('bad arguments throw TypeErrors and RangeErrors naming the field', () => {
    const sessions = table()
    expectTypeError(() => sessions.start(undefined as never), 'options must be an object')
    expectTypeError(() => sessions.start({} as never), 'options.command must be a string')
    expectRangeError(() => sessions.start({ command: 'true', yieldMs: -1 }), 'options.yieldMs must be a non-negative number')
    expectRangeError(() => sessions.start({ command: 'true', maxOutputBytes: NaN }), 'options.maxOutputBytes must be a finite number')
    expectTypeError(() => sessions.start({ command: 'true', env: { A: 1 as never } }), 'options.env.A must be a string')
    expectTypeError(() => sessions.write('1' as never, ''), 'id must be an integer from 0 to 4294967295')
    expectRangeError(() => sessions.write(1.5, ''), 'id must be an integer from 0 to 4294967295')
    expectTypeError(() => sessions.write(1, 7 as never), 'chars must be a string')
    expectTypeError(() => sessions.write(1, '', { yieldMs: '1' as never }), 'options.yieldMs must be a number')
    expectRangeError(() => sessions.kill(-1), 'id must be an integer from 0 to 4294967295')
    expectTypeError(() => new ExecSessions({ shell: {} as never }), 'options.shell must be a Shell')
    expectTypeError(() => new ExecSessions({ maxSessions: '2' as never }), 'options.maxSessions must be a number')
    expectRangeError(() => new ExecSessions({ maxSessions: Infinity }), 'options.maxSessions must be a finite number')
  })
})

describe('ExecSessions({ shell })', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'shellwright-exec-')))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("starts in the Shell's cwd with its exported variables, not the host's", async () => {
    process.env.SW_EXEC_HOST_ONLY = 'host'
    const shell = new Shell()
    try {
      const setup = `cd '${dir}' && export SW_EXEC_FROM_SHELL='from shell' && NOT_EXPORTED=1 && unset SW_EXEC_HOST_ONLY`
      // Not awaited: the session reads the Shell's state after the runs queued before it.
      const ran = shell.run({ command: setup })
      const command = 'pwd; echo "[$SW_EXEC_FROM_SHELL|$NOT_EXPORTED|$SW_EXEC_HOST_ONLY|$OVER]"'
      const sessions = table({ shell })
      const inShell = await sessions.start({ command, env: { OVER: 'o' }, ...LONG })
      expect((await ran).exitCode).toBe(0)
      expect(inShell).toMatchObject({ output: `${dir}\n[from shell|||o]`, exitCode: 0 })
      expect((await sessions.start({ command: 'pwd', cwd: '/', ...LONG })).output).toBe('/')
      const onHost = await table().start({ command, ...LONG })
      expect(onHost.output).toBe(`${process.cwd()}\n[||host|]`)
    } finally {
      delete process.env.SW_EXEC_HOST_ONLY
    }
  })
})
