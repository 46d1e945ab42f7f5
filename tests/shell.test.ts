import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Shell, applyBashFixups, executeShell } from '../index.js'
import { collector, expectRangeError, expectTypeError, isGuardian, isRunning, outcomeOf, pidsIn, waitUntil } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-shell-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('Shell.run basics', () => {
  it('streams stdout and stderr as one transcript and reports the exit code', async () => {
    const out = collector()
    const result = await new Shell().run({ command: 'echo out; echo err >&2; echo again; exit 3' }, out.push)
    expect(out.text).toBe('out\nerr\nagain\n')
    expect(outcomeOf(result)).toEqual({ exitCode: 3, cancelled: false, timedOut: false })
  })

  it('keeps cwd, variables, functions and exports between runs', async () => {
    const shell = new Shell()
    await shell.run({ command: `cd ${scratch}; x=41; greet() { echo "hi $1"; }; export EXPORTED=yes` })
    const out = collector()
    await shell.run({ command: 'echo "$PWD $((x + 1))"; greet there; sh -c "echo $EXPORTED"' }, out.push)
    expect(out.text).toBe(`${scratch} 42\nhi there\nyes\n`)
  })

  it('reports an external command failure through the exit code', async () => {
    const out = collector()
    const result = await new Shell().run({ command: 'ls /definitely/not/here' }, out.push)
    expect(result.exitCode).toBe(2)
    expect(out.text).toBe("ls: cannot access '/definitely/not/here': No such file or directory\n")
  })

  it('gives a syntax error exit code 2 and its message in the stream, without rejecting', async () => {
    const out = collector()
    const result = await new Shell().run({ command: 'if then' }, out.push)
    expect(outcomeOf(result)).toEqual({ exitCode: 2, cancelled: false, timedOut: false })
    expect(out.text).toMatch(/syntax error/)
  })

  it('reads stdin from /dev/null', async () => {
    const out = collector()
    await new Shell().run({ command: 'cat; read line; echo "read=$?"' }, out.push)
    expect(out.text).toBe('read=1\n')
  })

  it('serialises runs in call order', async () => {
    const shell = new Shell()
    const seen: string[] = []
    const runs = [
      shell.run({ command: 'sleep 0.1; n=1; echo first' }, (c) => seen.push(c.trim())),
      shell.run({ command: 'n=$((n + 1)); echo "second $n"' }, (c) => seen.push(c.trim())),
      shell.run({ command: 'echo "third $((n + 1))"' }, (c) => seen.push(c.trim())),
    ]
    await Promise.all(runs)
    expect(seen).toEqual(['first', 'second 2', 'third 3'])
  })

  it('runs a 256 KiB heredoc without deadlocking', async () => {
    const body = 'x'.repeat(1023) + '\n'
    const out = collector()
    const result = await new Shell().run({ command: `cat <<'EOF' | wc -c\n${body.repeat(256)}EOF` }, out.push)
    expect(result.exitCode).toBe(0)
    expect(out.text.trim()).toBe(String(256 * 1024))
  })
})

describe('options', () => {
  it('cwd persists like cd', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: 'pwd', cwd: scratch }, out.push)
    await shell.run({ command: 'pwd' }, out.push)
    expect(out.text).toBe(`${scratch}\n${scratch}\n`)
  })

  it('rejects a missing cwd and keeps the session as it was', async () => {
    const shell = new Shell()
    await shell.run({ command: `cd ${scratch}; kept=1` })
    await expect(shell.run({ command: 'pwd', cwd: join(scratch, 'missing') })).rejects.toThrow(
      `Failed to set cwd: ${join(scratch, 'missing')}`,
    )
    const out = collector()
    await shell.run({ command: 'echo "$kept $PWD"' }, out.push)
    expect(out.text).toBe(`1 ${scratch}\n`)
  })

  it('env is visible to one run only', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: 'echo "[$ONLY_NOW]"; sh -c \'echo "[$ONLY_NOW]"\'', env: { ONLY_NOW: 'a b' } }, out.push)
    await shell.run({ command: 'echo "[$ONLY_NOW]"' }, out.push)
    expect(out.text).toBe('[a b]\n[a b]\n[]\n')
  })

  it('a run that unsets one of its env names sees it unset, and the session keeps its own value', async () => {
    const shell = new Shell({ sessionEnv: { MODE: 'session' } })
    const out = collector()
    await shell.run({ command: 'unset MODE; echo "[${MODE-unset}]"; sh -c \'echo "[${MODE-unset}]"\'', env: { MODE: 'run' } }, out.push)
    await shell.run({ command: 'echo "[${MODE-unset}]"' }, out.push)
    await shell.run({ command: 'MODE=changed; echo "[$MODE]"', env: { MODE: 'run' } }, out.push)
    await shell.run({ command: 'echo "[${MODE-unset}]"' }, out.push)
    expect(out.text).toBe('[unset]\n[unset]\n[session]\n[changed]\n[session]\n')
  })

  it('sessionEnv applies once, through the skip-list', async () => {
    const shell = new Shell({ sessionEnv: { FROM_SESSION: 'yes', PS1: 'nope> ', SHLVL: '9' } })
    const out = collector()
    await shell.run({ command: 'echo "$FROM_SESSION [${PS1-unset}] [${SHLVL-unset}]"' }, out.push)
    // SHLVL is the session's own (1), not the 9 passed in.
    expect(out.text).toBe('yes [unset] [1]\n')
  })

  it('inherits the host environment but not shell-internal variables', async () => {
    process.env.SHELLWRIGHT_TEST_HOST_VAR = 'from-host'
    try {
      const out = collector()
      await new Shell().run({ command: 'echo "$SHELLWRIGHT_TEST_HOST_VAR"; env | grep -c "^OLDPWD=" || true' }, out.push)
      expect(out.text).toBe('from-host\n0\n')
    } finally {
      delete process.env.SHELLWRIGHT_TEST_HOST_VAR
    }
  })

  it('keeps PowerShell-style $env:NAME text unless the user defines env', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: 'echo "$env:HOME" $env:PATH; sh -c \'echo "[${env-unset}]"\'' }, out.push)
    await shell.run({ command: 'env=prod; echo "$env:HOME"' }, out.push)
    expect(out.text).toBe('$env:HOME $env:PATH\n[unset]\nprod:HOME\n')
  })

  it('sources snapshotPath silently at session creation', async () => {
    const snapshot = join(scratch, 'snapshot.sh')
    writeFileSync(snapshot, 'echo noisy; echo noisy >&2; snap() { echo "snap $1"; }; SNAP_VAR=1\n')
    const out = collector()
    await new Shell({ snapshotPath: snapshot }).run({ command: 'snap ok; echo $SNAP_VAR' }, out.push)
    expect(out.text).toBe('snap ok\n1\n')
  })

  it('rejects a snapshot that cannot be sourced', async () => {
    const missing = join(scratch, 'no-snapshot.sh')
    await expect(new Shell({ snapshotPath: missing }).run({ command: 'true' })).rejects.toThrow(
      /^Failed to source snapshot: /,
    )
  })

  it('throws a TypeError or RangeError naming the field for bad options', () => {
    const shell = new Shell()
    const bad: Array<[unknown, string]> = [
      [{}, 'options.command must be a string'],
      [{ command: 5 }, 'options.command must be a string'],
      [{ command: 'true', timeoutMs: 'soon' }, 'options.timeoutMs must be a number'],
      [{ command: 'true', env: { A: 1 } }, 'options.env.A must be a string'],
      [{ command: 'true', cwd: 7 }, 'options.cwd must be a string'],
      [{ command: 'true', signal: {} }, 'options.signal must be an AbortSignal'],
      ['echo hi', 'options must be an object'],
    ]
    for (const [options, message] of bad) {
      expectTypeError(() => shell.run(options as never), message)
    }
    expectTypeError(() => shell.run({ command: 'true' }, 'log' as never), 'onChunk must be a function')
    expectTypeError(() => new Shell({ sessionEnv: 'x' } as never), 'options.sessionEnv must be an object of strings')
    expectTypeError(() => executeShell({ command: 'true', snapshotPath: 1 } as never), 'options.snapshotPath must be a string')
    expectRangeError(() => shell.run({ command: 'true', timeoutMs: -1 }), 'options.timeoutMs must be a non-negative number')
    expectRangeError(() => shell.run({ command: 'true', timeoutMs: NaN }), 'options.timeoutMs must be a non-negative number')
  })
})

describe('session lifetime', () => {
  it('exit ends the session: the next run starts fresh', async () => {
    const shell = new Shell()
    const out = collector()
    expect((await shell.run({ command: `cd ${scratch}; kept=1; exit 7` })).exitCode).toBe(7)
    await shell.run({ command: 'echo "[$kept] $PWD"' }, out.push)
    expect(out.text).toBe(`[] ${process.cwd()}\n`)
  })

  it('a fatal error ends the session', async () => {
    const shell = new Shell()
    const out = collector()
    const result = await shell.run({ command: 'kept=1; set -u; echo "$not_set"; echo unreachable' }, out.push)
    expect(result.exitCode).not.toBe(0)
    expect(out.text).not.toContain('unreachable')
    out.text = ''
    await shell.run({ command: 'echo "[${kept-}]"' }, out.push)
    expect(out.text).toBe('[]\n')
  })

  it('refuses a printf field over 65535 with status 1, and the session lives on', async () => {
    const shell = new Shell()
    const out = collector()
    const result = await shell.run(
      { command: `kept=1; printf '%70000d' 1; echo "s=$?"; printf '%.*f|' 2 1 -70000 1; echo "s=$?"; printf '%65535d' 1 | wc -c` },
      out.push,
    )
    expect(outcomeOf(result)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe(
      [
        'bash: line 1: printf: 70000: field width or precision over 65535 is not supported',
        's=1',
        'bash: line 1: printf: 70000: field width or precision over 65535 is not supported',
        's=1',
        '65535',
        '',
      ].join('\n'),
    )
    out.text = ''
    await shell.run({ command: 'echo "[$kept]"' }, out.push)
    expect(out.text).toBe('[1]\n')
  })

  it('a panic inside brush ends the session like a fatal error: output kept, processes stopped', async () => {
    const shell = new Shell()
    const out = collector()
    const pidFile = join(scratch, 'panic-bg.pid')
    // brush-parser unwraps the parse of a brace sequence's bound, so one past i64 panics. A run's
    // own words keep such a sequence as written, as bash does; an `eval` string is brush's alone.
    // The background job writes its pid before the panic.
    const command = [
      'kept=1; echo before',
      `sh -c 'echo $$ > "${pidFile}"; exec sleep 30' &`,
      `for i in $(seq 500); do [ -s '${pidFile}' ] && break; sleep 0.01; done`,
      "eval 'echo {1..99999999999999999999}'",
    ].join('\n')
    await expect(shell.run({ command }, out.push)).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC',
      message: expect.stringMatching(/^Shell execution failed: the shell failed \(brush panicked: .+\); the session has ended$/),
    })
    expect(out.text).toBe('before\n')
    const bg = Number(readFileSync(pidFile, 'utf8'))
    expect(bg).toBeGreaterThan(0)
    const survived = isRunning(bg)
    if (survived) process.kill(bg, 'SIGKILL')
    expect(survived).toBe(false)
    expect(outcomeOf(await shell.run({ command: 'echo "[${kept-}]"' }, out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('before\n[]\n')
  })

  it('executeShell uses a fresh session per call', async () => {
    const out = collector()
    await executeShell({ command: 'leaked=1' })
    const result = await executeShell({ command: 'echo "[$leaked] $GREETING"', sessionEnv: { GREETING: 'hello' } }, out.push)
    expect(result.exitCode).toBe(0)
    expect(out.text).toBe('[] hello\n')
  })
})

describe('output decoding and draining', () => {
  it('decodes UTF-8 split across writes and replaces invalid bytes', async () => {
    const out = collector()
    await new Shell().run({ command: "printf '\\xe2\\x82'; sleep 0.05; printf '\\xac|a\\xffb|\\xf0\\x9f'" }, out.push)
    expect(out.text).toBe('€|a\uFFFDb|\uFFFD')
  })

  it('hands non-ASCII text over exactly across JS chunks, characters outside the BMP included', async () => {
    // Latin-1, other BMP characters and surrogate pairs, in a transcript longer than one JS chunk.
    const line = 'café → 日本語 😀 naïve ✓\n'
    const text = line.repeat(20_000)
    const file = join(scratch, 'non-ascii.txt')
    writeFileSync(file, text)
    const out = collector()
    await new Shell().run({ command: `cat '${file}'; printf 'é'` }, out.push)
    expect(out.text.length).toBe(text.length + 1)
    expect(out.text).toBe(`${text}é`)
  })

  // A Shell's jobs keep what they write after their run (see runs-that-stay.test.ts); a one-shot
  // run, which nothing could ask later, drains it.
  it('executeShell keeps reading output of background jobs after the foreground ends', async () => {
    const out = collector()
    await executeShell({ command: '(sleep 0.1; echo late) & echo now' }, out.push)
    expect(out.text).toBe('now\nlate\n')
  })

  it('executeShell stops draining 250 ms after the last output when a background job holds the pipe', async () => {
    const out = collector()
    const started = Date.now()
    // brush 0.5 leaves $! empty, so the job prints its own pid.
    await executeShell({ command: "sh -c 'echo $$; exec sleep 5' &" }, out.push)
    const elapsed = Date.now() - started
    const [pid] = pidsIn(out.text)
    expect(elapsed).toBeGreaterThanOrEqual(240)
    expect(elapsed).toBeLessThan(2000)
    expect(isRunning(pid)).toBe(true) // a normal run does not kill its background jobs
    process.kill(pid, 'SIGKILL')
  })

  it('delivers every chunk before the promise resolves', async () => {
    const out = collector()
    await new Shell().run({ command: 'for i in $(seq 1 2000); do echo "line $i"; done' }, out.push)
    expect(out.text.split('\n').length).toBe(2001)
    expect(out.text.endsWith('line 2000\n')).toBe(true)
  })
})

describe('cancellation', () => {
  it('a timeout resolves timedOut without exitCode and keeps the output before it', async () => {
    const out = collector()
    const started = Date.now()
    const result = await new Shell().run({ command: 'echo before; sleep 30; echo after', timeoutMs: 300 }, out.push)
    expect(outcomeOf(result)).toEqual({ cancelled: false, timedOut: true })
    expect(out.text).toBe('before\n')
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('cancels builtin-only loops, also inside functions and subshells', async () => {
    const shell = new Shell()
    for (const command of ['while :; do :; done', 'spin() { while true; do x=1; done; }; spin', '( while :; do :; done )']) {
      const started = Date.now()
      const result = await shell.run({ command, timeoutMs: 200 })
      expect(outcomeOf(result)).toEqual({ cancelled: false, timedOut: true })
      expect(Date.now() - started).toBeLessThan(1500)
    }
  })

  it('keeps a user DEBUG trap working, and still cancels under it', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: "trap 'echo dbg' DEBUG; echo a; trap -p DEBUG" }, out.push)
    expect(out.text).toBe("dbg\na\ndbg\ntrap -- 'echo dbg' DEBUG\n")
    const result = await shell.run({ command: "trap ':' DEBUG; while :; do :; done", timeoutMs: 200 })
    expect(result.timedOut).toBe(true)
  })

  it('an AbortSignal cancels; an already aborted one runs nothing', async () => {
    const marker = join(scratch, 'should-not-exist')
    const result = await new Shell().run({ command: `touch ${marker}`, signal: AbortSignal.abort() })
    expect(outcomeOf(result)).toEqual({ cancelled: true, timedOut: false })
    expect(existsSync(marker)).toBe(false)

    const controller = new AbortController()
    const out = collector()
    const run = new Shell().run({ command: 'echo started; sleep 30', signal: controller.signal }, out.push)
    await waitUntil(() => out.text === 'started\n', 5000, 'first output')
    controller.abort()
    expect(outcomeOf(await run)).toEqual({ cancelled: true, timedOut: false })
    expect(out.text).toBe('started\n')
  })

  it('abort() cancels the running command, and resolves when idle', async () => {
    const shell = new Shell()
    await shell.abort()
    const out = collector()
    const run = shell.run({ command: 'echo go; while :; do :; done' }, out.push)
    await waitUntil(() => out.text === 'go\n', 5000, 'output')
    await shell.abort()
    expect(outcomeOf(await run)).toEqual({ cancelled: true, timedOut: false })
    expect((await shell.run({ command: 'echo fresh' })).exitCode).toBe(0)
  })

  it('kills every process the run started, children, grandchildren and other groups, but nothing else', async () => {
    const bystander = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      const out = collector()
      const command = [
        // brush 0.5 leaves $! empty, so each process prints its own pid ($$ of its sh).
        "sh -c 'echo $$; sh -c \"echo \\$\\$; exec sleep 30\" & wait' &", // a child and its grandchild
        "setsid sh -c 'echo $$; exec sleep 30' &", // another session and process group
        "sh -c 'trap \"\" TERM; echo $$; while :; do sleep 0.05; done' &", // ignores SIGTERM
        'wait',
      ].join('\n')
      const controller = new AbortController()
      const run = new Shell().run({ command, signal: controller.signal }, out.push)
      await waitUntil(() => pidsIn(out.text).length === 4, 5000, 'four pids')
      const pids = pidsIn(out.text)
      expect(pids.every(isRunning)).toBe(true)
      const started = Date.now()
      controller.abort()
      expect(outcomeOf(await run)).toEqual({ cancelled: true, timedOut: false })
      expect(Date.now() - started).toBeLessThan(1500)
      await waitUntil(() => pids.every((pid) => !isRunning(pid)), 2000, 'all run processes gone')
      expect(isRunning(bystander.pid!)).toBe(true)
    } finally {
      bystander.kill('SIGKILL')
    }
  })
})

describe('resources', () => {
  const count = (dir: string) => readdirSync(dir).length

  it('leaves no fds, threads or child processes behind after 100 runs and 50 sessions', async () => {
    const children = () => execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    // The baseline includes the runtime's threads and the persistent session's output thread.
    const shell = new Shell()
    await shell.run({ command: 'true' })
    await executeShell({ command: 'true' })
    const fds = count('/proc/self/fd')
    const threads = count('/proc/self/task')
    for (let i = 0; i < 100; i++) await shell.run({ command: i % 2 ? 'echo hi' : '/bin/true' }, () => {})
    for (let i = 0; i < 50; i++) await executeShell({ command: i % 10 === 0 ? 'sleep 5' : 'echo hi', timeoutMs: 50 })
    await waitUntil(() => count('/proc/self/fd') <= fds && count('/proc/self/task') <= threads, 5000, 'fds and threads back')
    const leftover = children().split('\n').filter((pid) => pid.trim() && Number(pid) !== process.pid)
    expect(leftover.filter((pid) => isRunning(Number(pid)) && !isGuardian(Number(pid)))).toEqual([])
  }, 60_000)
})

describe('applyBashFixups', () => {
  it('returns the command and what it stripped', () => {
    const fixed = applyBashFixups('true')
    expect(fixed).toEqual({ command: 'true', stripped: [] })
  })
})
