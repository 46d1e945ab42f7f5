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
    // A job's output is the run's while that run goes, its own after.
    const pidLines = () =>
      [out.text, ...shell.jobs().map((job) => job.output)].join('\n').split('\n').filter((line) => /^\d+$/.test(line))
    await waitUntil(() => pidLines().length === 2 && out.text.includes('started'))
    const pids = pidLines().map(Number)
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

describe('background jobs', () => {
  it('keep running after their run, which does not wait for them, and nothing they write is lost or doubled', async () => {
    const shell = new Shell()
    const out = collector()
    const started = Date.now()
    const ticks = '(for i in $(seq 1 40); do echo tick $i; sleep 0.05; done) &'
    const result = await shell.run({ command: `${ticks} echo started; sleep 0.3` }, out.push)
    expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(Date.now() - started).toBeLessThan(1500)
    await waitUntil(() => shell.jobs()[0]?.running === false, 10_000, 'the tick job to end')
    const [job] = shell.jobs()
    expect(job).toEqual({
      id: 1,
      command: '(for i in $(seq 1 40); do echo tick $i; sleep 0.05; done) &',
      running: false,
      exitCode: 0,
      output: expect.any(String),
      truncatedBytes: 0,
    })
    const transcriptTicks = out.text.split('\n').filter((line) => line.startsWith('tick'))
    const all = [...transcriptTicks, ...job.output.split('\n').filter(Boolean)]
    expect(all).toEqual(Array.from({ length: 40 }, (_, i) => `tick ${i + 1}`))
    expect(out.text.split('\n').filter((line) => line === 'started')).toHaveLength(1)
    await shell.close()
  })

  it('are listed, signalled and waited for across runs as in bash', async () => {
    const shell = new Shell()
    const run = async (command: string) => {
      const out = collector()
      const result = await shell.run({ command }, out.push)
      return { text: out.text, exitCode: result.exitCode }
    }
    expect(await run('sleep 30 & sleep 31 && true &')).toEqual({ text: '', exitCode: 0 })
    expect(await run('jobs')).toEqual({
      text: '[1]-  Running                 sleep 30 &\n[2]+  Running                 sleep 31 && true &\n',
      exitCode: 0,
    })
    const long = await run('jobs -l')
    expect(long.text).toMatch(/^\[1\]- +(\d+) Running {17}sleep 30 &\n\[2\]\+ +(\d+) Running {17}sleep 31 && true &\n$/)
    const pids = (await run('jobs -p')).text.trim().split('\n').map(Number)
    expect(pids).toHaveLength(2)
    expect(shell.jobs().map((job) => job.pid)).toEqual(pids)
    expect(pids.every(isRunning)).toBe(true)
    expect(await run('kill %1; wait %1; echo "status $?"; jobs')).toEqual({
      text: 'status 143\n[2]+  Running                 sleep 31 && true &\n',
      exitCode: 0,
    })
    await waitUntil(() => !isRunning(pids[0]), 2000, 'the killed job to end')
    // $! names the last job's process in later runs too, as between the commands of a terminal.
    expect(await run('echo $!')).toEqual({ text: `${pids[1]}\n`, exitCode: 0 })
    expect(await run('kill %7')).toEqual({ text: 'kill: %7: no such job\n', exitCode: 1 })
    // A job of builtins alone has no process: the signal ends the job itself.
    expect(await run('while :; do :; done & kill -INT %+; wait %+; echo "status $?"')).toEqual({ text: 'status 130\n', exitCode: 0 })
    expect(shell.jobs().map(({ id, command, running, exitCode }) => ({ id, command, running, exitCode }))).toEqual([
      { id: 1, command: 'sleep 30 &', running: false, exitCode: 143 },
      { id: 2, command: 'sleep 31 && true &', running: true, exitCode: undefined },
      { id: 3, command: 'while :; do :; done &', running: false, exitCode: 130 },
    ])
    await shell.close()
    expect(isRunning(pids[1])).toBe(false)
    expect(shell.jobs()).toEqual([])
  })

  it('writing fast while their run ends hold up neither the run nor a byte', async () => {
    const shell = new Shell()
    let chars = 0
    const started = Date.now()
    const result = await shell.run({ command: 'yes | head -c 50000000 & sleep 0.005' }, (chunk) => (chars += chunk.length))
    expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(Date.now() - started).toBeLessThan(2000)
    await waitUntil(() => shell.jobs()[0]?.running === false, 10_000, 'the job to end')
    const [job] = shell.jobs()
    // What reached the run's transcript, what the job's record kept and what it dropped.
    expect(chars + job.output.length + job.truncatedBytes).toBe(50_000_000)
    await shell.close()
  })

  it('keep the last MiB of what they write after their run, counting what they dropped', async () => {
    const shell = new Shell()
    await shell.run({ command: "(sleep 0.2; head -c 1572864 /dev/zero | tr '\\0' x) &" })
    await waitUntil(() => shell.jobs()[0]?.running === false, 10_000, 'the job to end')
    const [job] = shell.jobs()
    expect(job.exitCode).toBe(0)
    expect(job.output).toBe('x'.repeat(1048576))
    expect(job.truncatedBytes).toBe(524288)
    await shell.close()
  })

  it('are forgotten with their session; their processes run on, as after bash exits, until close()', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: "sh -c 'echo $$; exec sleep 300' & sleep 0.2" }, out.push)
    const [pid] = out.text.split('\n').filter((line) => /^\d+$/.test(line)).map(Number)
    expect(shell.jobs().map((job) => job.running)).toEqual([true])
    const exited = await shell.run({ command: 'exit 0' })
    expect(exited.sessionReset).toBe(true)
    expect(shell.jobs()).toEqual([])
    expect(isRunning(pid)).toBe(true)
    await shell.close()
    expect(isRunning(pid)).toBe(false)
  })
})
