// Differences from bash that bash's own test suite found in the embedding (round 3). Each case
// states bash's transcript and exit status exactly (checked against `bash --norc --noprofile -c`);
// where bash words an error differently from version to version, the message is ours, in bash's
// `bash: line N:` style.
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { executeShell } from '../index.js'
import { collector, expectFileStopsGrowing } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-round3-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

async function run(command: string, timeoutMs = 10_000) {
  const out = collector()
  const result = await executeShell({ command, cwd: scratch, timeoutMs }, out.push)
  return { text: out.text, exitCode: result.exitCode ?? null, timedOut: result.timedOut }
}

/** Asserts `command`'s whole transcript and exit status. */
async function expectRun(command: string, text: string, exitCode = 0) {
  expect(await run(command)).toEqual({ text, exitCode, timedOut: false })
}

describe('a pipeline stage reports 141 only after writing to a pipe whose reader is gone', () => {
  it('a failing function stage keeps its own status', async () => {
    await expectRun(
      'binfalse() { /bin/false || return 1; }; set -o pipefail; true | binfalse | true; echo "$? -- ${PIPESTATUS[@]}"',
      '1 -- 0 1 0\n',
    )
  })

  it('a stage that fails after its reader left still runs to its end', async () => {
    await expectRun('{ sleep 0.2; false; echo reached >&2; exit 7; } | true; echo "${PIPESTATUS[@]}"', 'reached\n7 0\n')
  })

  it('a stage that writes to a reader that left still stops with 141', async () => {
    await expectRun('while :; do echo x; done | head -1; echo "${PIPESTATUS[@]}"', 'x\n141 0\n')
  })
})

describe('printf applies its format as bash does', () => {
  it('a format that consumes no argument is applied once', async () => {
    await expectRun('printf "\\n" 4.4 BSD | od -c; printf "x\\n" a b; printf "%%\\n" a', '0000000  \\n\n0000001\nx\n%\n')
  })

  it('\\c in a %b argument ends all output; in the format it is printed as it stands', async () => {
    await expectRun(`printf '%b|' 'a\\cb' c; echo; printf '%s|%b\\n' a 'x\\cy' b c; echo; printf '%s\\c|' x y; echo`, 'a\na|x\nx\\c|y\\c|\n')
  })

  it('-v assigns one pass of a format that consumes nothing', async () => {
    await expectRun(`printf -v v 'hi' a b; echo "$v"`, 'hi\n')
  })

  it('formats many arguments a few passes at a time, as one call would', async () => {
    // bash: `printf '%s %d\n' {1..30001} | cksum`; the last pass lacks its number (0).
    await expectRun(`printf '%s %d\\n' {1..30001} | cksum; printf '%s %d\\n' {1..30001} | tail -1`, '2737243175 168902\n30001 0\n')
  })
})

describe('printf reaches a cancellation point', () => {
  it('a timeout stops one formatting thousands of arguments', async () => {
    const started = Date.now()
    const result = await run(`printf '%60000s' {1..2000} > /dev/null; echo never`, 1000)
    expect(result).toEqual({ text: '', exitCode: null, timedOut: true })
    // The whole command formats for a minute in a debug build.
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('and in a pipeline stage, which nothing else would stop', async () => {
    const file = join(scratch, 'stage-printf.txt')
    const result = await run(`{ printf '%60000s' {1..2000} > ${file}; echo never; } | cat`, 1000)
    expect(result).toEqual({ text: '', exitCode: null, timedOut: true })
    await expectFileStopsGrowing(file)
  })
})

describe('FUNCNEST refuses the call, abandons the line and the run goes on', () => {
  // bash 5.2 words the message `environment: line 1: f: …`; ours starts as bash's other errors do.
  const refused = (limit: number) => `bash: line 1: f: maximum function nesting level exceeded (${limit})\n`

  it('at top level: the rest of the line is abandoned, $? is 1, the next line runs', async () => {
    await expectRun(
      'FUNCNEST=5; f() { (( n++ )); f; }; n=0; f; echo "same line"\necho "status $? n=$n"; echo still running',
      `${refused(5)}status 1 n=5\nstill running\n`,
    )
  })

  it('in a subshell or a command substitution, which ends with 1', async () => {
    await expectRun(
      'FUNCNEST=5; f() { (( n++ )); f; }; n=0; ( f ); echo "status $? n=$n"; x=$(f); echo "status $? n=$n"; echo still running',
      `${refused(5)}status 1 n=0\n${refused(5)}status 1 n=0\nstill running\n`,
    )
  })

  it('on the last line: the run ends with 1', async () => {
    await expectRun('FUNCNEST=3; f(){ echo $1; f $(($1+1)); }; f 1; echo never', `1\n2\n3\n${refused(3)}`, 1)
  })

  it('inside a compound command and a pipeline stage', async () => {
    await expectRun(
      'FUNCNEST=2; f(){ f; }; if true; then f; echo never; fi\nf | cat; echo "${PIPESTATUS[@]}"',
      `${refused(2)}${refused(2)}1 0\n`,
    )
  })

  it('eval ends its text with 1 and the line goes on', async () => {
    await expectRun('FUNCNEST=2; f(){ f; }; eval f; echo "after eval $?"', `${refused(2)}after eval 1\n`)
  })
})

describe('internals stay out of sight', () => {
  it('$LINENO in a DEBUG trap is the line of the command about to run', async () => {
    await expectRun(
      `trap 'echo "debug at $LINENO: $BASH_COMMAND"' DEBUG\necho a\n\necho b`,
      'debug at 2: echo a\na\ndebug at 4: echo b\nb\n',
    )
  })

  it('type, declare -f and set show the function as written', async () => {
    await expectRun(
      `f(){ echo "$-"; }; type f; f; declare -f f | grep -c '__[s]hellwright'; set | grep -c '__[s]hellwright'`,
      'f is a function\nf () \n{ \n    echo "$-"\n}\nhBc\n0\n0\n',
      1,
    )
    // brush prints a pipeline as `a |b` where bash prints `a | b`.
    await expectRun(`f(){ echo a|cat -; }; type f`, 'f is a function\nf () \n{ \n    echo a |cat -\n}\n')
  })

  it('the run tag is no variable of the shell', async () => {
    await expectRun(
      `declare -p | grep -c '^declare -x SHELL[W]RIGHT'; export -p | grep -c 'SHELL[W]RIGHT'; compgen -v | grep -c '^SHELL[W]RIGHT'; set | grep -c '^SHELL[W]RIGHT'; declare | grep -c '^SHELL[W]RIGHT'`,
      '0\n0\n0\n0\n0\n',
      1,
    )
  })

  it('but child processes keep it in their environment, unset or not', async () => {
    // It is how the processes of a run are found (see docs/bash-compatibility.md).
    await expectRun(`unset SHELLWRIGHT_RUN; env | grep -c '^SHELLWRIGHT_RUN='`, '1\n')
  })

  it('/dev/stdout, /dev/stderr and /dev/fd/N name the run\'s descriptors, never the host\'s', async () => {
    // bash says `bash: line 1: /dev/fd/7: No such file or directory`; the status is the same.
    await expectRun(
      `echo to-stderr > /dev/stderr; echo to-stdout > /dev/stdout; { echo group; } 2>/dev/null >/dev/stderr; { echo group; } >/dev/stderr; exec 7>&-; cat < /dev/fd/7; echo "rc=$?"`,
      'to-stderr\nto-stdout\ngroup\nerror: bad file descriptor: 7\nrc=1\n',
    )
  })

  it('test and [ look at the run\'s descriptors', async () => {
    await expectRun(
      'exec 6>&-; test -p /dev/fd/6; echo "p=$?"; [ -e /dev/fd/6 ]; echo "e=$?"; exec 6< <(:); test -p /dev/fd/6; echo "p=$?"; [ -p /proc/self/fd/6 ]; echo "p=$?"',
      'p=1\ne=1\np=0\np=0\n',
    )
  })

  it('wait takes a coproc\'s NAME_PID', async () => {
    await expectRun('coproc { exit 3; }; wait $COPROC_PID; echo "wait=$?"', 'wait=3\n')
    await expectRun(
      'coproc C { read -r l; echo "got $l"; }; echo hi >&"${C[1]}"; read -r r <&"${C[0]}"; echo "$r"; wait "$C_PID"; echo "wait=$?"',
      'got hi\nwait=0\n',
    )
  })

  it('kill takes a coproc\'s NAME_PID as its job, never as the pid of that number', async () => {
    // brush keeps the job's number there (1 here) and cannot signal a job it runs as a task;
    // bash signals the coproc and prints k=0. SIGCONT keeps the old behaviour (pid 1) harmless.
    await expectRun(
      'coproc sleep 1; kill -s CONT $COPROC_PID; echo "k=$?"',
      'error: kill: failed to send signal to process\nk=1\n',
    )
  })

  it('exec hands SHLVL over to the program taking the shell\'s place', async () => {
    await expectRun(`export SHLVL=3; (exec bash -c 'echo $SHLVL'); exec bash -c 'echo $SHLVL'`, '4\n3\n')
  })

  it('an exported function runs in a child bash', async () => {
    await expectRun('f(){ echo a|cat -; }; export -f f; bash -c f', 'a\n')
  })
})

describe('a signal sent to the shell from a copy of it is acted on by the shell', () => {
  it('return in the trap returns from the function the signal interrupted', async () => {
    const started = Date.now()
    expect(
      await run(
        `trap 'echo "got USR1"; return 5' USR1; loop() { while :; do :; done; }; { sleep 0.3; kill -USR1 $$; } & loop; echo "loop returned $?"`,
        5000,
      ),
    ).toEqual({ text: 'got USR1\nloop returned 5\n', exitCode: 0, timedOut: false })
    expect(Date.now() - started).toBeLessThan(4000)
  })

  it('sent by the shell itself, the trap runs inside kill and its return leaves the function', async () => {
    await expectRun(`trap "echo got; return 5" USR1; f(){ kill -USR1 $$; echo after; }; f; echo "f=$?"`, 'got\nf=5\n')
  })

  it('from a subshell, the trap runs in the shell once the subshell is done', async () => {
    await expectRun(`trap "echo got \\$BASH_SUBSHELL" USR1; (kill -USR1 $$; echo sub); echo main`, 'sub\ngot 0\nmain\n')
  })

  it('wait returns 128 + the signal, after which the trap runs', async () => {
    await expectRun(`trap "echo trapped" USR1; { sleep 0.3; kill -USR1 $$; } & wait; echo "wait=$?"`, 'trapped\nwait=138\n')
  })

  it('a fatal signal ends the shell (EXIT trap included), exit in the trap too', async () => {
    await expectRun('( kill $$ ); echo not reached', '', 143)
    await expectRun(`trap "echo bye" EXIT; ( kill $$ ); echo not reached`, 'bye\n', 143)
    await expectRun(`trap "echo t; exit 4" USR1; ( kill -USR1 $$ ); echo not reached`, 't\n', 4)
    await expectRun('{ sleep 0.3; kill -9 $$; } & wait; echo not reached', '', 137)
  })
})
