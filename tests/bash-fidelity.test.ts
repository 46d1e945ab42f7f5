// The in-process shell against real bash: the same script through `bash --norc --noprofile -c`
// and through executeShell must print the same transcript and end with the same status. Each
// group is a class of difference our embedding once introduced.
import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Shell, executeShell } from '../index.js'
import { collector } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-fidelity-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const hasBash = spawnSync('bash', ['--version']).status === 0
let caseNumber = 0

/** Runs `script` in a fresh directory with bash, stdout and stderr into one file. */
function runBash(script: string, cwd: string, extra: Record<string, string>): { text: string; exitCode: number | null } {
  const out = join(cwd, '..', `${caseNumber}.bash-out`)
  const fd = openSync(out, 'w')
  const env = { ...process.env }
  delete env.OLDPWD
  Object.assign(env, extra)
  const child = spawnSync('bash', ['--norc', '--noprofile', '-c', script], {
    cwd,
    env,
    stdio: ['ignore', fd, fd],
    timeout: 10_000,
  })
  closeSync(fd)
  return { text: readFileSync(out, 'utf8'), exitCode: child.status ?? (child.signal ? 128 + osSignal(child.signal) : null) }
}

function osSignal(name: string): number {
  return Number(execFileSync('bash', ['-c', `kill -l ${name}`], { encoding: 'utf8' }).trim())
}

async function runOurs(script: string, cwd: string, env: Record<string, string>) {
  const out = collector()
  const result = await executeShell({ command: script, cwd, env, timeoutMs: 10_000 }, out.push)
  return { text: out.text, exitCode: result.exitCode ?? null }
}

/** Asserts that executeShell and bash agree on `script` exactly (both given `env` too). */
async function expectLikeBash(script: string, env: Record<string, string> = {}) {
  caseNumber++
  const bashDir = join(scratch, `b${caseNumber}`)
  const ourDir = join(scratch, `o${caseNumber}`)
  execFileSync('mkdir', ['-p', bashDir, ourDir])
  const ours = await runOurs(script, ourDir, env)
  const theirs = runBash(script, bashDir, env)
  expect({ script, ...ours }).toEqual({ script, ...theirs })
}

const cases: Record<string, string[]> = {
  'pipelines whose stages are builtins or compound commands': [
    `for i in {1..8000}; do echo xxxxxxxx; done | while read -r l; do n=$((n+1)); done; echo "\${PIPESTATUS[*]} [$n]"`,
    `while :; do echo y; done | head -n 2; echo "\${PIPESTATUS[*]}"`,
    `f() { for i in 1 2 3; do echo $i; done; }; f | while read -r l; do echo "<$l>"; done | tac`,
    `{ echo a; exit 3; } | cat; echo "\${PIPESTATUS[*]}"`,
    `set -E; set -o pipefail; trap 'echo "[ERR: $?]"' ERR; echo data | false | cat; echo after`,
  ],
  'process substitution feeding a loop or mapfile (used to hang)': [
    `while read l; do echo "[$l]"; done < <(printf 'x\\ny\\n')`,
    `mapfile -t lines < <(printf '1\\n2\\n3\\n'); echo "\${#lines[@]} \${lines[2]}"`,
    `while read -r a b; do echo "$b $a"; done < <(echo one two; echo three four)`,
  ],
  'signals the script sends to itself': [
    `trap 'echo bye' EXIT; kill $$; echo after`,
    `trap 'echo bye' EXIT; kill -INT $$; echo after`,
    `trap 'echo bye' EXIT; kill -USR1 $$; echo after`,
    `trap 'echo bye' EXIT; kill -9 $$; echo after`,
    `trap 'echo got TERM' TERM; kill $$; echo after $?`,
    `trap '' INT; kill -INT $$; echo after`,
    `trap 'echo t; exit 3' TERM; trap 'echo bye' EXIT; kill -s TERM $$; echo after`,
    `kill -CHLD $$; echo still here`,
    `f() { kill $$; echo in f; }; f; echo after`,
  ],
  'EXIT traps': [
    `trap 'echo bye' EXIT; echo hi`,
    `trap 'echo "bye $?"' EXIT; false`,
    `trap 'echo bye' EXIT; exit 4`,
    `trap 'echo one' EXIT; trap 'echo two' EXIT; echo main`,
    `trap 'echo bye' EXIT; trap - EXIT; echo main`,
  ],
  exec: [
    `exec 3>f; echo to-three >&3; exec 3>&-; cat f`,
    `exec 4<&0; exec 4<&-; echo closed`,
    `{ exec >log; echo hidden; }; cat log >&2`,
    `exec 2>&1; echo merged`,
    `exec sh -c 'echo child; exit 7'; echo never`,
    `trap 'echo bye' EXIT; exec true; echo never`,
    `(exec echo in-subshell); echo after $?`,
    `exec -a custom sh -c 'echo "$0"'`,
    `exec /nonexistent/cmd 2>/dev/null; echo never`,
  ],
  'internal hooks stay invisible': [
    `set -x; for f in 1 2; do echo $f; done; set +x; echo untraced`,
    `set -x; echo traced; set +x; echo untraced`,
    `trap 'echo "[command: $BASH_COMMAND]"' DEBUG; echo hi; trap - DEBUG`,
    `trap 'echo "ERR for: $BASH_COMMAND"' ERR; false; echo after`,
    `f() { set -x; echo in f; set +x; }; f; echo out`,
    `f() { echo "[$_]"; }; f arg1 arg2`,
    `echo a b c; echo "$_"`,
    `echo $LINENO\necho $LINENO\n\necho $LINENO`,
    `trap -p; echo none`,
    `trap 'echo dbg' DEBUG; trap -p DEBUG; trap - DEBUG; trap -p DEBUG; echo done`,
    `set -o | grep -E '^(functrace|xtrace)'`,
    `echo $-; f() { echo "in f: \${-}"; }; f; case $- in *T*) echo T;; esac; x=$-; echo "$x" | cat`,
    `set -T; echo $-; set +T; echo "$-"; echo '$-' \\$-`,
    `set -eu; f() { echo "in f: $-"; }; f; x=$-; set +eu; echo "$x $-"`,
    `echo "$SHELLOPTS"; set -T; echo "$SHELLOPTS"`,
    `set -x; echo "$-"; set +x`,
    `exec 3>trace; BASH_XTRACEFD=3; set -x; echo one; f() { echo in f; }; f; set +x; cat trace`,
    `exec 3>trace; set -x; echo before; BASH_XTRACEFD=3; echo after; unset BASH_XTRACEFD; echo back; set +x; cat trace`,
    `enable | grep -v brush | tail -3; compgen -A builtin | grep -c shellwright`,
    `help | grep -c shellwright`,
    `G=$(command -v grep); PATH=/nonexistent; compgen -A command | $G -c '^__'`,
  ],
  'builtins that reached the host or spoke differently': [
    `suspend; echo "status $?"`,
    `printf '%d.' abc; echo "status $?"`,
    `printf '%d|%x|%d|%d|%o.' '' "'A" 12abc 0x1F 010; echo "status $?"`,
    `printf '%5.1f|%s.' 1.5x y 2 z; echo "status $?"`,
    `printf '%d.' 99999999999999999999; echo "status $?"`,
    `echo {1..99999999999999999999} x{1..3}y {-99999999999999999999..2}; for i in {1..5..99999999999999999999}; do echo "$i"; done`,
    `printf '%.1f|' 0x1p3 0x1.8g 09.5x; printf '%d|' 08 0x1g 0X1g ' 08' 1a; echo " $?"`,
    `printf -v out '%d' 7x; echo "[$out] $?"`,
    `printf; echo "status $?"`,
    `shopt nullglob dotglob; shopt -o functrace`,
    `hash nosuch_program_xyz; echo "status $?"`,
    `exec /nonexistent/cmd; echo never`,
    `exec nosuch_program_xyz; echo never`,
  ],
  wait: [
    `(exit 3) & wait %1; echo "status $?"; wait %1; echo "again $?"`,
    `f() { return 4; }; f & wait %1; echo "status $?"`,
    `(exit 5) & (sleep 0.5; exit 6) & wait -n; echo "first $?"; wait -n; echo "second $?"; wait -n; echo "none $?"`,
    `sleep 0.5 & (exit 2) & wait -n %2; echo "named $?"; wait; echo "all $?"`,
    `wait %3; echo "a $?"; wait abc; echo "b $?"; wait 99999; echo "c $?"`,
  ],
  'the last job\'s process, $!, and kill': [
    `echo "[$!] [\${!}]"`,
    `sleep 5 & p=$!; kill -0 "$p" && echo alive; [ "$(ps -o comm= -p "$p")" = sleep ] && echo "it is sleep"; kill "$p"; wait "$p"; echo "status $?"`,
    `sleep 5 & p=$!; (kill -0 "$!" && [ "$!" = "$p" ] && echo "a subshell sees it"); echo "$(kill $!; echo "killed $?")"; wait; echo '$! stays'`,
    `sleep 0.2 & p=$!; wait; [ "$!" = "$p" ] && echo "kept after the job ended"`,
    `/bin/true & p=$!; wait; kill -0 "$p" 2>/dev/null || echo "[\${p//[0-9]/}] a pid, of a process gone"`,
    `for i in 1 2 3; do sh -c "exit $i" & pids+=($!); done; for p in "\${pids[@]}"; do wait "$p"; echo "status $?"; done`,
    `kill -0 $$ && echo "the shell lives"; trap 'echo exit trap' EXIT; kill -0 $$; echo "still here $?"`,
    `kill 4194999; echo "status $?"; kill -9 4194999 4194998; echo "status $?"`,
  ],
  environment: [
    `unset PATH; echo "\${PATH-unset}"`,
    `set -u; unset PATH; echo "\${PATH-unset}"`,
    `echo "\${OLDPWD-unset}"; cd /; echo "$OLDPWD" | grep -c .`,
  ],
  umask: [
    `umask 077; umask; umask -S; : > f; stat -c %a f`,
    `umask u=rwx,g=rx,o=; umask; umask -p`,
    `umask 0022; sh -c umask`,
    `umask 077; : > f | cat; touch g | cat; { touch h; umask; } | cat; stat -c %a f g h`,
  ],
}

describe.skipIf(!hasBash)('an OLDPWD given in env', () => {
  // bash keeps an inherited OLDPWD only when it names a directory; otherwise it is exported
  // without a value.
  const script = `echo "[\${OLDPWD+set}] [\${OLDPWD-unset}]"; declare -p OLDPWD; env | grep -c '^OLDPWD='`
  it('that is not a directory', async () => {
    await expectLikeBash(script, { OLDPWD: '/nonexistent/path' })
  })
  it('that is a directory', async () => {
    await expectLikeBash(script, { OLDPWD: '/' })
  })
})

describe.skipIf(!hasBash)('like bash -c', () => {
  for (const [group, scripts] of Object.entries(cases)) {
    describe(group, () => {
      for (const script of scripts) {
        it(script.replace(/\n/g, '\\n'), async () => {
          await expectLikeBash(script.replace(/\\n/g, '\n'))
        })
      }
    })
  }
})

// Still different (see docs/bash-compatibility.md): the cancellation hook forces functrace, and
// `$-` shows it where brush parses the code itself. These assert the difference still exists, so
// fixing it flips them.
describe.skipIf(!hasBash)('known differences', () => {
  for (const script of [`eval 'echo $-'`, 'echo ${#-}']) {
    it.fails(script, async () => {
      await expectLikeBash(script)
    })
  }
})

describe('persistent Shell', () => {
  it('runs the EXIT trap on exit and ends the session', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: `trap 'echo bye' EXIT; x=1` }, out.push)
    expect(out.text).toBe('')
    const last = await shell.run({ command: 'echo "x=$x"; exit 5' }, out.push)
    expect(last.exitCode).toBe(5)
    expect(out.text).toBe('x=1\nbye\n')
    const fresh = collector()
    await shell.run({ command: 'echo "x=$x"' }, fresh.push)
    expect(fresh.text).toBe('x=\n')
  })

  it('keeps the EXIT trap for the end of the session when a run times out, as Ctrl-C does', async () => {
    const shell = new Shell()
    const out = collector()
    const result = await shell.run({ command: `trap 'echo torn down' EXIT; while :; do :; done`, timeoutMs: 200 }, out.push)
    expect(result.timedOut).toBe(true)
    expect(result.sessionReset).toBeUndefined()
    expect(out.text).toBe('')
    const last = await shell.run({ command: 'exit 0' }, out.push)
    expect(last.sessionReset).toBe(true)
    expect(out.text).toBe('torn down\n')
  })

  it('runs the EXIT trap of a one-shot run that times out', async () => {
    const out = collector()
    const command = `trap 'echo torn down' EXIT; while :; do :; done`
    const result = await executeShell({ command, timeoutMs: 200 }, out.push)
    expect(result.timedOut).toBe(true)
    expect(out.text).toBe('torn down\n')
  })

  it('keeps umask and fds opened with exec across runs, and stdio on the transcript', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: `cd ${scratch} && umask 027 && exec 5>persist.txt` }, out.push)
    await shell.run({ command: 'echo kept >&5; exec 5>&-; cat persist.txt; umask; exec >/dev/null' }, out.push)
    await shell.run({ command: 'echo visible again' }, out.push)
    expect(out.text).toBe('kept\n0027\nvisible again\n')
  })

  it('kill $$ ends the session with 143 and the next run starts fresh', async () => {
    const shell = new Shell()
    const out = collector()
    await shell.run({ command: 'x=1' })
    const killed = await shell.run({ command: 'kill $$; echo after' }, out.push)
    expect(killed.exitCode).toBe(143)
    await shell.run({ command: 'echo "x=$x"' }, out.push)
    expect(out.text).toBe('x=\n')
  })
})

describe('host isolation', () => {
  it('leaves the host umask, signal dispositions, stdout and stderr untouched', () => {
    const scripts = [
      'umask 077; umask',
      'kill -USR1 $$; echo after',
      'kill -INT $$',
      "trap '' INT; kill -INT $$; echo ignored",
      'kill -9 $$',
      'kill 0; echo after',
      'kill $$',
      // ps right-aligns the group id: a short one comes with leading blanks that would split the word.
      'kill -HUP -$(ps -o pgid= $$ | tr -d " ")',
      'f() { echo completion-out; echo completion-err >&2; COMPREPLY=(x); }; compgen -F f; echo done',
      "trap 'echo trapped' TERM INT HUP USR1 USR2; echo set",
      "printf '%d %x %f' abc '' 1.5x; printf '%d' \"'\"",
      'suspend; suspend -f; echo after',
      'echo to-stderr > /dev/stderr; echo to-stdout > /dev/stdout; echo both &> /dev/stdout',
      'exec 7>&-; cat < /dev/fd/7; echo "rc=$?"',
    ]
    const child = spawnSync(process.execPath, [join(__dirname, 'fixtures', 'host-isolation.mjs'), JSON.stringify(scripts)], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(child.signal).toBeNull()
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const lines = child.stdout.split('\n').filter(Boolean)
    expect(lines).toHaveLength(1)
    const report = JSON.parse(lines[0])
    // Tokio's listener for SIGCHLD (it reaps the processes a session spawns) may become caught the
    // first time a session starts; SIGTSTP stays the host's (Ctrl+Z still suspends it). Nothing
    // else may change.
    const listeners = 1n << 16n
    const caught = (hex: string) => BigInt(`0x${hex}`) & ~listeners
    expect(caught(report.after.SigCgt)).toBe(caught(report.before.SigCgt))
    expect({ ...report.after, SigCgt: '' }).toEqual({ ...report.before, SigCgt: '' })
    const byCommand = Object.fromEntries(report.results.map((r: { command: string }) => [r.command, r]))
    expect(byCommand['umask 077; umask']).toMatchObject({ text: '0077\n', exitCode: 0 })
    expect(byCommand['kill -USR1 $$; echo after']).toMatchObject({ text: '', exitCode: 138 })
    expect(byCommand['kill -INT $$']).toMatchObject({ exitCode: 130 })
    expect(byCommand["trap '' INT; kill -INT $$; echo ignored"]).toMatchObject({ text: 'ignored\n', exitCode: 0 })
    expect(byCommand['kill -9 $$']).toMatchObject({ exitCode: 137 })
    expect(byCommand['kill 0; echo after']).toMatchObject({ text: '', exitCode: 143 })
    expect(byCommand['kill -HUP -$(ps -o pgid= $$ | tr -d " ")']).toMatchObject({ exitCode: 129 })
    expect(byCommand["printf '%d %x %f' abc '' 1.5x; printf '%d' \"'\""]).toMatchObject({
      text:
        "bash: line 1: printf: abc: invalid number\nbash: line 1: printf: 1.5x: invalid number\n0 0 1.5000000",
      exitCode: 0,
    })
    expect(byCommand['suspend; suspend -f; echo after']).toMatchObject({
      text: 'bash: line 1: suspend: cannot suspend: no job control\nbash: line 1: suspend: cannot suspend: no job control\nafter\n',
      exitCode: 0,
    })
    // The run's own stdio and descriptors, never the host's (see docs/bash-compatibility.md for
    // the wording of the error).
    expect(byCommand['echo to-stderr > /dev/stderr; echo to-stdout > /dev/stdout; echo both &> /dev/stdout']).toMatchObject({
      text: 'to-stderr\nto-stdout\nboth\n',
      exitCode: 0,
    })
    expect(byCommand['exec 7>&-; cat < /dev/fd/7; echo "rc=$?"']).toMatchObject({
      text: 'error: bad file descriptor: 7\nrc=1\n',
      exitCode: 0,
    })
    expect(byCommand['f() { echo completion-out; echo completion-err >&2; COMPREPLY=(x); }; compgen -F f; echo done'].text).toContain(
      'completion-err',
    )
  }, 90_000)
})
