// Shell.run of one external program with plain words (`/bin/echo a b`, `sleep 30`): the session
// spawns it itself, without forking the host. It must behave exactly as the same run done by brush:
// a shell with an fd 3 open takes brush's path for every command (brush would pass the fd on), so
// each case is run on both and compared.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Shell } from '../index.js'
import { collector, waitUntil, outcomeOf } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-direct-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A direct shell and a brush-only one, set up alike with `setup`. */
async function pair(setup: string): Promise<[Shell, Shell]> {
  const direct = new Shell()
  const brush = new Shell()
  await brush.run({ command: 'exec 3</dev/null' })
  for (const shell of [direct, brush]) expect((await shell.run({ command: setup })).exitCode).toBe(0)
  return [direct, brush]
}

async function run(shell: Shell, command: string, extra: object = {}) {
  const out = collector()
  const result = await shell.run({ command, ...extra }, out.push)
  return { output: out.text, result: outcomeOf(result) }
}

/** The pids of this process's children whose command line is `argv`. */
function childrenRunning(argv: string[]): number[] {
  const cmdline = `${argv.join('\0')}\0`
  const pids = readdirSync('/proc/self/task').flatMap((task) =>
    readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  )
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === cmdline
    } catch {
      return false
    }
  })
}

describe('a run of one plain external program', () => {
  it('gives the output, exit code, $?, PIPESTATUS and $_ that brush gives', async () => {
    const [direct, brush] = await pair(`cd ${scratch}`)
    const state = 'echo "$? ${PIPESTATUS[*]} $_"'
    for (const command of ['/bin/echo  a  b', 'ls /definitely/not/here', 'sh -c umask', 'cat /proc/self/cmdline', 'basename /x/y.txt .txt']) {
      const got = await run(direct, command)
      expect(got).toEqual(await run(brush, command))
      expect(await run(direct, state)).toEqual(await run(brush, state))
    }
    expect(await run(direct, '/bin/echo  a  b')).toEqual({ output: 'a b\n', result: { exitCode: 0, cancelled: false, timedOut: false } })
    expect(await run(direct, 'ls /definitely/not/here')).toEqual({
      output: "ls: cannot access '/definitely/not/here': No such file or directory\n",
      result: { exitCode: 2, cancelled: false, timedOut: false },
    })
    expect((await run(direct, state)).output).toBe('2 2 /definitely/not/here\n')
    // argv[0] is the name as typed, not the path it resolved to.
    expect((await run(direct, 'cat /proc/self/cmdline')).output).toBe('cat\0/proc/self/cmdline\0')
    const history = direct.history().slice(-3)
    expect(history.map(({ command, exitCode, cwd, output }) => ({ command, exitCode, cwd, output }))).toEqual([
      { command: 'ls /definitely/not/here', exitCode: 2, cwd: scratch, output: "ls: cannot access '/definitely/not/here': No such file or directory\n" },
      { command: state, exitCode: 0, cwd: scratch, output: '2 2 /definitely/not/here\n' },
      { command: 'cat /proc/self/cmdline', exitCode: 0, cwd: scratch, output: 'cat\0/proc/self/cmdline\0' },
    ])
  })

  it("sees the session's exported variables, cwd and umask, not the host's", async () => {
    process.env.SW_DIRECT_HOST_ONLY = 'host'
    try {
      const [direct, brush] = await pair(`unset SW_DIRECT_HOST_ONLY; export SW_DIRECT=yes; HIDDEN=1; umask 027; cd ${scratch}`)
      const command = 'printenv SW_DIRECT SW_DIRECT_HOST_ONLY HIDDEN SW_ONCE'
      const got = await run(direct, command, { env: { SW_ONCE: 'once' } })
      expect(got).toEqual({ output: 'yes\nonce\n', result: { exitCode: 1, cancelled: false, timedOut: false } })
      expect(got).toEqual(await run(brush, command, { env: { SW_ONCE: 'once' } }))
      expect(await run(direct, '/bin/pwd')).toEqual({ output: `${scratch}\n`, result: { exitCode: 0, cancelled: false, timedOut: false } })
      expect((await run(direct, 'sh -c umask')).output).toBe('0027\n')
      expect((await run(direct, 'printenv _')).output).toBe('/usr/bin/printenv\n')
      expect((await run(direct, '/bin/pwd', { cwd: '/' })).output).toBe('/\n')
      // The name is looked up on the run's PATH.
      const bin = join(scratch, 'bin')
      mkdirSync(bin)
      writeFileSync(join(bin, 'tool'), '#!/bin/sh\necho "tool $0 $1"\n', { mode: 0o755 })
      const tool = await run(direct, 'tool x', { env: { PATH: `${bin}:/usr/bin:/bin` } })
      expect(tool).toEqual({ output: `tool ${bin}/tool x\n`, result: { exitCode: 0, cancelled: false, timedOut: false } })
      expect(tool).toEqual(await run(brush, 'tool x', { env: { PATH: `${bin}:/usr/bin:/bin` } }))
    } finally {
      delete process.env.SW_DIRECT_HOST_ONLY
    }
  })

  it('is left to brush under set -x, with its trace', async () => {
    const [direct, brush] = await pair('set -x')
    const got = await run(direct, '/bin/echo hi')
    expect(got).toEqual({ output: '+ /bin/echo hi\nhi\n', result: { exitCode: 0, cancelled: false, timedOut: false } })
    expect(got).toEqual(await run(brush, '/bin/echo hi'))
  })

  it('is stopped by a timeout, and its process killed and reaped', async () => {
    const shell = new Shell()
    // Long enough for a loaded machine to start it before the timeout fires.
    const running = shell.run({ command: 'sleep 30', timeoutMs: 5000 })
    await waitUntil(() => childrenRunning(['sleep', '30']).length === 1, 4500, 'sleep 30 started')
    const [pid] = childrenRunning(['sleep', '30'])
    expect(outcomeOf(await running)).toEqual({ cancelled: false, timedOut: true })
    await waitUntil(() => !existsSync(`/proc/${pid}`), 2000, 'sleep 30 reaped')
    expect((await run(shell, '/bin/echo again')).output).toBe('again\n')
  })

  it('is stopped by an AbortSignal, and its process killed and reaped', async () => {
    const controller = new AbortController()
    const running = new Shell().run({ command: 'sleep 30', signal: controller.signal })
    await waitUntil(() => childrenRunning(['sleep', '30']).length === 1, 5000, 'sleep 30 started')
    const [pid] = childrenRunning(['sleep', '30'])
    const started = Date.now()
    controller.abort()
    expect(outcomeOf(await running)).toEqual({ cancelled: true, timedOut: false })
    expect(Date.now() - started).toBeLessThan(1500)
    await waitUntil(() => !existsSync(`/proc/${pid}`), 2000, 'sleep 30 reaped')
  })
})
