// Shell.run done in place: a command made only of builtins that only set variables or print, run
// without a cwd while nothing else is pending, is run at once on the JS thread. It must behave
// exactly as the queued path does. A timeout under a second always takes the queued path, so each
// case is run both ways (`timeoutMs: 900` = queued) and compared.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Shell } from '../index.js'
import { collector, outcomeOf } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-inline-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const QUEUED = { timeoutMs: 900 }

/** A shell whose session exists (the first run creates it, on the queued path). */
async function warmShell(): Promise<Shell> {
  const shell = new Shell()
  await shell.run({ command: ':' })
  return shell
}

/**
 * Runs `commands` one after another on a fresh shell, each in place or queued; returns what they
 * gave, and for each run whether its output had arrived one microtask after the call (only a run
 * in place delivers that soon).
 */
async function transcript(commands: string[], extra: object) {
  const shell = await warmShell()
  const runs = []
  const early: boolean[] = []
  for (const command of commands) {
    const out = collector()
    const running = shell.run({ command, ...extra }, out.push)
    await Promise.resolve()
    early.push(out.text !== '')
    const result = await running
    runs.push({ output: out.text, result: outcomeOf(result) })
  }
  const history = shell.history().map(({ id, command, cwd, output, truncatedBytes, exitCode, cancelled, timedOut }) => ({
    id,
    command,
    cwd,
    output,
    truncatedBytes,
    exitCode,
    cancelled,
    timedOut,
  }))
  // What the runs left behind, read by an external command (never in place).
  const state = collector()
  await shell.run({ command: 'env | grep "^INLINE_" | sort; /bin/pwd' }, state.push)
  return { runs, history, state: state.text, early }
}

describe('Shell.run in place', () => {
  it('delivers the output in a microtask after run() returns and before the promise settles', async () => {
    const shell = await warmShell()
    const chunks: string[] = []
    const running = shell.run({ command: 'echo hi' }, (chunk) => chunks.push(chunk))
    expect(chunks).toEqual([])
    await Promise.resolve()
    expect(chunks).toEqual(['hi\n'])
    expect(outcomeOf(await running)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
  })

  it('is not taken with a timeout under a second: output then arrives from the session thread', async () => {
    const shell = await warmShell()
    const chunks: string[] = []
    const running = shell.run({ command: 'echo hi', ...QUEUED }, (chunk) => chunks.push(chunk))
    await Promise.resolve()
    expect(chunks).toEqual([])
    expect(outcomeOf(await running)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(chunks).toEqual(['hi\n'])
  })

  it('gives the same output, exit codes, history and state as the queued path', async () => {
    const commands = [
      'echo hi',
      `cd ${scratch} && pwd`,
      'INLINE_A=1; export INLINE_A; export INLINE_B="two words"',
      'echo "$INLINE_A|$INLINE_B|$?|${INLINE_C:-unset}|$PWD"',
      'false',
      'echo $?; ! false; echo $?',
      'cd /definitely/not/here',
      '[ 1 -eq x ]; echo status $?',
      'test -d / && echo dir || echo no',
      'unset INLINE_B; declare -p INLINE_A; echo "${INLINE_B-gone}"',
      'cd ~ && cd - >/dev/null; pwd',
      'local x=1',
      '[ -n "$SHELLWRIGHT_RUN" ] && echo tagged',
      'echo a b; echo $_ $BASH_COMMAND',
      'export INLINE_D=4 INLINE_A; readonly INLINE_R=1; export INLINE_R=2; echo $?',
    ]
    const { early: inPlaceEarly, ...inPlace } = await transcript(commands, {})
    const { early: queuedEarly, ...queued } = await transcript(commands, QUEUED)
    expect(inPlace).toEqual(queued)
    // The comparison is between the two paths: the runs of pure builtins that print went in place
    // (`false` went too, but had nothing to deliver), with `cd` to a local directory or to one that
    // does not exist; `$_`, unquoted, could glob, so that run did not.
    expect(inPlaceEarly).toEqual([true, true, false, false, false, true, true, false, false, false, false, true, false, false, true])
    expect(queuedEarly.some(Boolean)).toBe(false)
    expect(inPlace.runs[0]).toEqual({ output: 'hi\n', result: { exitCode: 0, cancelled: false, timedOut: false } })
    expect(inPlace.runs[4].result.exitCode).toBe(1)
    expect(inPlace.runs[5].output).toBe('1\n0\n')
    expect(inPlace.runs[6].result.exitCode).toBe(1)
    expect(inPlace.runs[13].output).toBe('a b\nb echo a b\n')
    // brush's own wording of the failure, which the fast `export` keeps.
    expect(inPlace.runs[14].output).toBe('error: export: cannot mutate readonly variable\n1\n')
    expect(inPlace.state).toBe(`INLINE_A=1\nINLINE_D=4\n${scratch}\n`)
  })

  it('leaves builtins that stat paths, cd through a symbolic link or resolving links, and a run with a cwd, to the queued path', async () => {
    const shell = await warmShell()
    const link = join(scratch, 'link')
    symlinkSync(scratch, link)
    const runs = [
      { command: `cd ${link} && echo cd` },
      { command: `cd ${link}/.. && echo under` },
      { command: 'pwd -P' },
      { command: 'test -d / && echo test' },
      { command: '[ -d / ] && echo bracket' },
      { command: 'echo cwd', cwd: scratch },
    ]
    const outputs = []
    for (const options of runs) {
      const chunks: string[] = []
      const running = shell.run(options, (chunk) => chunks.push(chunk))
      await Promise.resolve()
      // Output of a queued run comes from the session thread, never within the call's microtasks.
      expect(chunks).toEqual([])
      expect(outcomeOf(await running)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      outputs.push(chunks.join(''))
    }
    expect(outputs).toEqual(['cd\n', 'under\n', `${scratch}\n`, 'test\n', 'bracket\n', 'cwd\n'])
  })

  it('runs cd to a local directory, and pwd, in place', async () => {
    const shell = await warmShell()
    mkdirSync(join(scratch, 'sub'), { recursive: true })
    for (const [command, output] of [
      [`cd ${scratch}/sub/.. && pwd`, `${scratch}\n`],
      ['cd sub && echo in', 'in\n'],
      ['pwd', `${scratch}/sub\n`],
    ]) {
      const chunks: string[] = []
      const running = shell.run({ command }, (chunk) => chunks.push(chunk))
      await Promise.resolve()
      expect(chunks).toEqual([output])
      expect(outcomeOf(await running)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    }
    expect(shell.history().at(-1)?.cwd).toBe(`${scratch}/sub`)
  })

  it('honours the run options cwd and env as the queued path does', async () => {
    const run = async (extra: object) => {
      const shell = await warmShell()
      const out = collector()
      const result = await shell.run({ command: 'echo "$PWD $INLINE_E"', cwd: scratch, env: { INLINE_E: 'e' }, ...extra }, out.push)
      const after = collector()
      await shell.run({ command: 'echo "$PWD ${INLINE_E-none}"' }, after.push)
      return [out.text, outcomeOf(result), after.text]
    }
    const inPlace = await run({})
    expect(inPlace).toEqual(await run(QUEUED))
    expect(inPlace).toEqual([`${scratch} e\n`, { exitCode: 0, cancelled: false, timedOut: false }, `${scratch} none\n`])
  })

  it('leaves commands a user function, alias, trap or shell option would change to the queued path', async () => {
    const commands = [
      'echo() { printf "fn:%s\\n" "$1"; }',
      'echo hi',
      'unset -f echo; shopt -s expand_aliases; alias pwd="echo alias"',
      'pwd',
      'unalias pwd; trap "echo trapped" ERR',
      'false',
      'trap - ERR; trap "echo dbg" DEBUG',
      'true',
      'trap - DEBUG; set -x',
      'true',
      'set +x; set -e',
      'false; echo not reached',
      // `set -e` ended that session, as in bash -c: this run has a fresh one.
      'echo "[$-]"',
      'set -n',
      'echo not run',
    ]
    const inPlace = await transcript(commands, {})
    expect(inPlace).toEqual(await transcript(commands, QUEUED))
    expect(inPlace.runs[1].output).toBe('fn:hi\n')
    expect(inPlace.runs[5]).toEqual({ output: 'trapped\n', result: { exitCode: 1, cancelled: false, timedOut: false } })
    expect(inPlace.runs[7].output).toBe('dbg\n')
    expect(inPlace.runs[11]).toEqual({ output: '', result: { exitCode: 1, cancelled: false, timedOut: false } })
    const fresh = collector()
    await new Shell().run({ command: 'echo "[$-]"' }, fresh.push)
    expect(inPlace.runs[12].output).toBe(fresh.text)
    expect(inPlace.runs[14]).toEqual({ output: '', result: { exitCode: 0, cancelled: false, timedOut: false } })
  })

  it('runs commands outside the allow-list, and times out and aborts queued runs, between runs in place', async () => {
    const shell = await warmShell()
    const out = collector()
    expect(outcomeOf(await shell.run({ command: 'echo one' }, out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(outcomeOf(await shell.run({ command: 'echo two | tr a-z A-Z' }, out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('one\nTWO\n')
    expect(outcomeOf(await shell.run({ command: 'sleep 5', timeoutMs: 200 }))).toEqual({ cancelled: false, timedOut: true })
    const controller = new AbortController()
    const aborted = shell.run({ command: 'sleep 5', signal: controller.signal })
    controller.abort()
    expect(outcomeOf(await aborted)).toEqual({ cancelled: true, timedOut: false })
    expect(outcomeOf(await shell.run({ command: 'echo three' }, out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('one\nTWO\nthree\n')
    // An already-aborted signal still settles as an abort, without running anything.
    const never = shell.run({ command: 'echo never', signal: AbortSignal.abort() }, out.push)
    expect(outcomeOf(await never)).toEqual({ cancelled: true, timedOut: false })
    expect(out.text).toBe('one\nTWO\nthree\n')
  })

  it('keeps call order when a run is queued behind a pending one', async () => {
    const shell = await warmShell()
    const out = collector()
    const [slow, quick] = await Promise.all([
      shell.run({ command: 'sleep 0.2; echo slow' }, out.push),
      shell.run({ command: 'echo quick' }, out.push),
    ])
    expect([slow.exitCode, quick.exitCode]).toEqual([0, 0])
    expect(out.text).toBe('slow\nquick\n')
    expect(shell.history().map((e) => [e.command, e.output])).toEqual([
      [':', ''],
      ['sleep 0.2; echo slow', 'slow\n'],
      ['echo quick', 'quick\n'],
    ])
  })

  it('settles runs done in the same turn in call order, each after its own output', async () => {
    const [a, b] = [await warmShell(), await warmShell()]
    const events: string[] = []
    const thrown = new Error('from onChunk')
    const note = (name: string) => (chunk: string) => events.push(`${name} got ${JSON.stringify(chunk)}`)
    const settled = (name: string) => [
      (result: { exitCode?: number }) => events.push(`${name} exit ${result.exitCode}`),
      (error: unknown) => events.push(`${name} rejected${error === thrown ? ' with the throw' : ''}`),
    ]
    const runs = [
      a.run({ command: 'echo a1' }, note('a1')).then(...settled('a1')),
      b.run({ command: 'echo b1' }, note('b1')).then(...settled('b1')),
      a.run({ command: 'false' }).then(...settled('quiet')),
      a.run({ command: 'echo a2' }, (chunk) => {
        note('a2')(chunk)
        throw thrown
      }).then(...settled('a2')),
      a.run({ command: 'echo a3' }, note('a3')).then(...settled('a3')),
    ]
    expect(events).toEqual([])
    await Promise.all(runs)
    expect(events).toEqual([
      'a1 got "a1\\n"',
      'b1 got "b1\\n"',
      // No output to deliver: settled at once, so its reaction was queued before a2's delivery.
      'quiet exit 1',
      'a2 got "a2\\n"',
      'a3 got "a3\\n"',
      'a1 exit 0',
      'b1 exit 0',
      'a2 rejected with the throw',
      'a3 exit 0',
    ])
    expect(a.history().map((e) => [e.command, e.output, e.exitCode])).toEqual([
      [':', '', 0],
      ['echo a1', 'a1\n', 0],
      ['false', '', 1],
      ['echo a2', 'a2\n', 0],
      ['echo a3', 'a3\n', 0],
    ])
  })

  it('runs a repeated command as the shell is now: after an alias, a function or extglob changed', async () => {
    const shell = await warmShell()
    const run = async (command: string) => {
      const out = collector()
      const { exitCode } = await shell.run({ command }, out.push)
      return [out.text, exitCode]
    }
    expect(await run('echo hi')).toEqual(['hi\n', 0])
    await run('shopt -s expand_aliases; alias echo="echo aliased"')
    expect(await run('echo hi')).toEqual(['aliased hi\n', 0])
    await run('unalias echo; echo() { builtin echo "fn $1"; }')
    expect(await run('echo hi')).toEqual(['fn hi\n', 0])
    await run('unset -f echo')
    expect(await run('echo hi')).toEqual(['hi\n', 0])
    // The same text is a pattern under extglob and a syntax error without it.
    const pattern = 'echo @(no-such-a|no-such-b)'
    expect(await run(pattern)).toEqual(['@(no-such-a|no-such-b)\n', 0])
    await run('shopt -u extglob')
    expect(await run(pattern)).toEqual(['error: -c: syntax error at line 1 col 17\n', 2])
  })

  it('globs where a word can, and leaves set -f as the user set it', async () => {
    const shell = await warmShell()
    const dir = mkdtempSync(join(scratch, 'glob-'))
    writeFileSync(join(dir, 'x'), '')
    const run = async (command: string) => {
      const out = collector()
      await shell.run({ command }, out.push)
      return out.text
    }
    await run(`cd ${dir}`)
    expect(await run('echo hi [x] [y]')).toBe('hi x [y]\n')
    expect(await run('X=[x]; echo $X "$X"')).toBe('x [x]\n')
    expect(await run('echo hi')).toBe('hi\n')
    expect(await run('echo $-')).not.toContain('f')
    await run('set -f')
    expect(await run('echo hi; echo [x]')).toBe('hi\n[x]\n')
    expect(await run('echo $-')).toContain('f')
  })

  it('runs a command with a word that could glob once expanded on the queued path, unless set -f is on', async () => {
    const shell = await warmShell()
    const dir = mkdtempSync(join(scratch, 'could-glob-'))
    for (const name of ['a', 'ab', 'b']) writeFileSync(join(dir, name), '')
    await shell.run({ command: `cd '${dir}'` })
    /** The run's output, whether it arrived in place, and what `bash -c` prints after `setup`. */
    const run = async (setup: string, command: string) => {
      await shell.run({ command: setup })
      const out = collector()
      const running = shell.run({ command }, out.push)
      await Promise.resolve()
      const inPlace = out.text !== ''
      expect(outcomeOf(await running)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      const bash = execFileSync('bash', ['-c', `${setup}; ${command}`], { cwd: dir, encoding: 'utf8' })
      return { output: out.text, inPlace, bash }
    }
    expect(await run("X='*'", 'echo $X')).toEqual({ output: 'a ab b\n', inPlace: false, bash: 'a ab b\n' })
    expect(await run("X='*'", 'echo a $X')).toEqual({ output: 'a a ab b\n', inPlace: false, bash: 'a a ab b\n' })
    expect(await run('X=a?', 'echo $X')).toEqual({ output: 'ab\n', inPlace: false, bash: 'ab\n' })
    expect(await run(':', 'echo a[b] [c]')).toEqual({ output: 'ab [c]\n', inPlace: false, bash: 'ab [c]\n' })
    // Quoted, neither an expansion nor a bracket can glob: those runs stay in place.
    expect(await run("X='*'", `echo "$X" 'a[b]' "a[b]" $? $#`)).toEqual({
      output: '* a[b] a[b] 0 0\n',
      inPlace: true,
      bash: '* a[b] a[b] 0 0\n',
    })
    // Under set -f nothing globs, so the same runs stay in place too.
    expect(await run("set -f; X='*'", 'echo $X a[b]')).toEqual({ output: '* a[b]\n', inPlace: true, bash: '* a[b]\n' })
    expect(await run("set +f; X='*'", 'echo $X a[b]')).toEqual({ output: 'a ab b ab\n', inPlace: false, bash: 'a ab b ab\n' })
  })

  it('rejects with exactly what onChunk threw', async () => {
    const shell = await warmShell()
    const thrown = { why: 'callback' }
    await expect(
      shell.run({ command: 'echo hi' }, () => {
        throw thrown
      }),
    ).rejects.toBe(thrown)
    const out = collector()
    expect(outcomeOf(await shell.run({ command: 'echo after' }, out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('after\n')
  })

  it('reads each run option once, in order, and stops at a command that is no string', async () => {
    const shell = await warmShell()
    const reads: string[] = []
    const options = (fields: Record<string, unknown>) => {
      const object = {}
      for (const [name, value] of Object.entries(fields)) {
        Object.defineProperty(object, name, {
          enumerable: true,
          get: () => {
            reads.push(name)
            return value
          },
        })
      }
      return object as { command: string }
    }
    const fields = { command: 'echo read', cwd: undefined, env: undefined, timeoutMs: undefined, signal: undefined }
    const out = collector()
    expect(outcomeOf(await shell.run(options(fields), out.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(out.text).toBe('read\n')
    expect(reads).toEqual(['command', 'cwd', 'env', 'timeoutMs', 'signal'])

    reads.length = 0
    const queued = collector()
    const withTimeout = { ...fields, command: 'echo queued', timeoutMs: 900 }
    expect(outcomeOf(await shell.run(options(withTimeout), queued.push))).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(queued.text).toBe('queued\n')
    expect(reads).toEqual(['command', 'cwd', 'env', 'timeoutMs', 'signal'])

    reads.length = 0
    expect(() => shell.run(options({ ...fields, command: 42 }))).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE', message: 'options.command must be a string' }),
    )
    expect(reads).toEqual(['command'])
  })
})
