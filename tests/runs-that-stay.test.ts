// A stopped run keeps the session, a result says where the session is and how long the run took,
// close() ends a Shell for good, and nothing a run started outlives the host however it ends.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Shell, type ShellResult } from '../index.js'
import { collector, isRunning, outcomeOf, waitUntil } from './helpers.js'

type Stop = 'timeout' | 'signal' | 'abort()'
const stops: Stop[] = ['timeout', 'signal', 'abort()']

/** Runs `command` on `shell` and stops it the way `stop` says once it has printed `started`. */
async function runAndStop(shell: Shell, command: string, stop: Stop): Promise<ShellResult> {
  const out = collector()
  const controller = new AbortController()
  const run = shell.run(
    {
      command,
      timeoutMs: stop === 'timeout' ? 500 : undefined,
      signal: stop === 'signal' ? controller.signal : undefined,
    },
    out.push,
  )
  if (stop !== 'timeout') {
    await waitUntil(() => out.text.includes('started'), 5000, 'the run to start')
    if (stop === 'signal') controller.abort()
    else await shell.abort()
  }
  return run
}

const setUp = [
  'cd /usr',
  'export KEEP=kept',
  'f() { echo "f runs"; }',
  "alias hello='echo hello'",
  'set -o noglob',
  'spin() { local inside=1; echo started; while :; do :; done; }',
].join('\n')

const check = [
  'echo "$PWD $KEEP ${inside-no-local} ${#FUNCNAME[@]}"',
  'f',
  'alias hello',
  'set -o | grep -w noglob',
  'echo *',
].join('\n')

describe('a stopped run keeps the session', () => {
  it.each(stops)('after a %s: cwd, variables, functions, aliases and options stay; the frames go', async (stop) => {
    const shell = new Shell()
    expect(outcomeOf(await shell.run({ command: setUp }))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    const stopped = await runAndStop(shell, 'spin', stop)
    expect(outcomeOf(stopped)).toEqual({ cancelled: stop !== 'timeout', timedOut: stop === 'timeout' })
    expect(stopped.sessionReset).toBeUndefined()
    expect(stopped.cwd).toBe('/usr')
    const out = collector()
    const next = await shell.run({ command: check }, out.push)
    expect(outcomeOf(next)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe("/usr kept no-local 0\nf runs\nalias hello='echo hello'\nnoglob         \ton\n*\n")
    await shell.close()
  })

  it('ends only with exit, which the result says', async () => {
    const shell = new Shell()
    await shell.run({ command: 'cd /tmp; x=1' })
    const exited = await shell.run({ command: 'exit 3' })
    expect(outcomeOf(exited)).toEqual({ exitCode: 3, cancelled: false, timedOut: false })
    expect(exited.sessionReset).toBe(true)
    expect(exited.cwd).toBe(process.cwd())
    const out = collector()
    const next = await shell.run({ command: 'echo "[$x] $PWD"' }, out.push)
    expect(out.text).toBe(`[] ${process.cwd()}\n`)
    expect(next.sessionReset).toBeUndefined()
  })
})

describe('a result says where the session is and how long the run took', () => {
  it('cwd follows cd, durationMs the run', async () => {
    const shell = new Shell()
    const first = await shell.run({ command: 'cd /etc' })
    expect(first.cwd).toBe('/etc')
    const slept = await shell.run({ command: 'sleep 0.2; cd /' })
    expect(slept.cwd).toBe('/')
    expect(slept.durationMs).toBeGreaterThanOrEqual(200)
    expect(slept.durationMs).toBeLessThan(5000)
    const quick = await shell.run({ command: 'true' })
    expect(quick.durationMs).toBeGreaterThanOrEqual(0)
    expect(quick.durationMs).toBeLessThan(200)
  })
})

describe('close()', () => {
  it('stops the running command, ends what the runs left and refuses later runs', async () => {
    const shell = new Shell()
    const dir = process.cwd()
    const out = collector()
    await shell.run(
      { command: "sh -c 'echo $$; exec sleep 301' & nohup setsid sh -c 'echo $$; exec sleep 302' 2>/dev/null &" },
      out.push,
    )
    const running = shell.run({ command: 'echo started; sleep 303' }, out.push)
    await waitUntil(() => out.text.split('\n').filter((line) => /^\d+$/.test(line)).length === 2 && out.text.includes('started'))
    const pids = out.text.split('\n').filter((line) => /^\d+$/.test(line)).map(Number)
    expect(pids.every(isRunning)).toBe(true)
    await shell.close()
    expect(outcomeOf(await running)).toEqual({ cancelled: true, timedOut: false })
    expect(pids.filter(isRunning)).toEqual([])
    await expect(shell.run({ command: 'echo again' })).rejects.toMatchObject({
      code: 'ERR_SHELL_CLOSED',
      message: 'Shell is closed',
    })
    await shell.close()
    expect(process.cwd()).toBe(dir)
  })

  it('is what `await using` calls', async () => {
    const shell = new Shell()
    await shell.run({ command: 'true' })
    await (shell as unknown as AsyncDisposable)[Symbol.asyncDispose]()
    await expect(shell.run({ command: 'true' })).rejects.toMatchObject({ code: 'ERR_SHELL_CLOSED' })
  })
})

/** The pids of processes tagged by a run of host `host`. */
function taggedBy(host: number): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1')
      if (environ.split('\0').some((entry) => entry.startsWith(`SHELLWRIGHT_RUN=${host}-`))) pids.push(Number(name))
    } catch {}
  }
  return pids.filter(isRunning)
}

describe('nothing a run started outlives the host', () => {
  it.each(['kill', 'exit', 'throw'])('host ended by %s', async (mode) => {
    const host = spawn(process.execPath, [join(__dirname, 'fixtures', 'host-death.mjs'), mode], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    host.stdout.on('data', (chunk) => (stdout += chunk))
    const ended = new Promise((resolve) => host.on('exit', resolve))
    await waitUntil(() => stdout.includes('\n'), 15_000, 'the host to start its runs')
    // sleep 301–304 and the PTY's program, tagged by the host's runs, as the host saw them.
    const pids: number[] = JSON.parse(stdout)
    expect(pids.length).toBeGreaterThanOrEqual(5)
    if (mode === 'kill') host.kill('SIGKILL')
    await ended
    const gone = Date.now()
    await waitUntil(() => pids.every((pid) => !isRunning(pid)) && taggedBy(host.pid!).length === 0, 1500, `the runs of a host ended by ${mode} to be gone`)
    expect(Date.now() - gone).toBeLessThan(1500)
  })
})
