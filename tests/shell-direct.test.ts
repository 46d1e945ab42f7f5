// Shell.run of one external program with plain words (`/bin/echo a b`, `sleep 30`): the session
// spawns it itself, without forking the host. It must behave exactly as the same run done by brush:
// a shell with an fd 3 open takes brush's path for every command (brush would pass the fd on), so
// each case is run on both and compared.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Shell } from '../index.js'
import { collector, waitUntil } from './helpers.js'

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
  return { output: out.text, result }
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
    for (const command of ['/bin/echo  a  b', 'ls /definitely/not/here', 'sh -c umask', 'basename /x/y.txt .txt', 'false x']) {
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
    const history = direct.history().slice(-2)
    expect(history.map(({ command, exitCode, cwd }) => ({ command, exitCode, cwd }))).toEqual([
      { command: 'ls /definitely/not/here', exitCode: 2, cwd: scratch },
      { command: state, exitCode: 0, cwd: scratch },
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
      expect((await run(direct, 'pwd', { cwd: '/' })).output).toBe('/\n')
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
    const running = shell.run({ command: 'sleep 30', timeoutMs: 1500 })
    await waitUntil(() => childrenRunning(['sleep', '30']).length === 1, 1400, 'sleep 30 started')
    const [pid] = childrenRunning(['sleep', '30'])
    expect(await running).toEqual({ cancelled: false, timedOut: true })
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
    expect(await running).toEqual({ cancelled: true, timedOut: false })
    expect(Date.now() - started).toBeLessThan(1500)
    await waitUntil(() => !existsSync(`/proc/${pid}`), 2000, 'sleep 30 reaped')
  })
})
