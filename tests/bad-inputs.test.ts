// Bad and unusual inputs at the N-API boundary: each is run in a child Node process (so a crash
// is observed, not suffered) and must end in exactly the expected outcome — a clean error with its
// class, code and message, or a sensible value — never a signal death, an uncaught exception or
// a hang. Cases run a batch per child; a child that dies is replaced for the cases it had not
// reached, so one crash cannot hide the other results.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

type Outcome =
  | { outcome: 'value'; value: unknown }
  | { outcome: 'throw'; ctor: string; code?: string; message: string; isError: boolean }
  | { outcome: 'hang' | 'crash' | 'uncaught'; [key: string]: unknown }

interface Case {
  id: string
  source: string
  want: Outcome
}

const PER_CASE_MS = 8_000
const RUNNER = join(__dirname, 'fixtures', 'bad-input-runner.cjs')

const typeError = (message: string, code = 'ERR_INVALID_ARG_TYPE'): Outcome => ({
  outcome: 'throw',
  ctor: 'TypeError',
  code,
  message,
  isError: true,
})
const rangeError = (message: string): Outcome => ({
  outcome: 'throw',
  ctor: 'RangeError',
  code: 'ERR_INVALID_ARG_VALUE',
  message,
  isError: true,
})
const failure = (code: string | undefined, message: string): Outcome => ({
  outcome: 'throw',
  ctor: 'Error',
  code,
  message,
  isError: true,
})
const value = (v: unknown): Outcome => ({ outcome: 'value', value: v })

const exited = (code: number) => ({ exitCode: code, cancelled: false, timedOut: false })
const notNew = (name: string) =>
  typeError(`Class constructor ${name} cannot be invoked without 'new'`, 'ERR_CONSTRUCT_CALL_REQUIRED')

// An AbortSignal-like object with the given overrides.
const signal = (overrides: string) =>
  `{ aborted: false, addEventListener() {}, removeEventListener() {}, ${overrides} }`
// A sleeping child process to point `Process` at; killed by the case (and by the runner's exit).
const sleeper = `const child = require('node:child_process').spawn('sleep', ['30']);
  await new Promise((r) => child.once('spawn', r));`
const pty = (options: string, tail = 'return s.screen().cols') => `const s = new sw.PtySession();
  await s.start({ command: 'true', ${options} }); ${tail}`
const BIG = 200 * 1024

const cases: Case[] = [
  // Shell: durations, types, construction, signals, throwing callbacks.
  ...['Number.MAX_VALUE', '1e300', 'Infinity', '5000.5'].map((ms) => ({
    id: `Shell.run timeoutMs ${ms}`,
    source: `return outcome(await new sw.Shell().run({ command: 'exit 4', timeoutMs: ${ms} }))`,
    want: value(exited(4)),
  })),
  ...['NaN', '-1', '-Infinity'].map((ms) => ({
    id: `Shell.run timeoutMs ${ms}`,
    source: `return new sw.Shell().run({ command: 'true', timeoutMs: ${ms} })`,
    want: rangeError('options.timeoutMs must be a non-negative number'),
  })),
  {
    id: 'Shell.run timeoutMs string',
    source: `return new sw.Shell().run({ command: 'true', timeoutMs: '5' })`,
    want: typeError('options.timeoutMs must be a number'),
  },
  { id: 'Shell() without new', source: 'return sw.Shell()', want: notNew('Shell') },
  { id: 'Shell.call on an object', source: 'return sw.Shell.call({})', want: notNew('Shell') },
  {
    id: 'Shell.run without options',
    source: 'return new sw.Shell().run()',
    want: typeError('options must be an object'),
  },
  {
    id: 'Shell.run command number',
    source: 'return new sw.Shell().run({ command: 5 })',
    want: typeError('options.command must be a string'),
  },
  {
    id: 'Shell.run env value object',
    source: `return new sw.Shell().run({ command: 'true', env: { A: {} } })`,
    want: typeError('options.env.A must be a string'),
  },
  {
    id: 'Shell.run onChunk number',
    source: `return new sw.Shell().run({ command: 'true' }, 42)`,
    want: typeError('onChunk must be a function'),
  },
  {
    id: 'Shell.run signal string',
    source: `return new sw.Shell().run({ command: 'true', signal: 'abort' })`,
    want: typeError('options.signal must be an AbortSignal'),
  },
  {
    id: 'Shell.run signal without removeEventListener',
    source: `return new sw.Shell().run({ command: 'true', signal: { aborted: false, addEventListener() {} } })`,
    want: typeError('options.signal must be an AbortSignal'),
  },
  {
    id: 'Shell.run signal whose aborted getter throws',
    source: `return new sw.Shell().run({ command: 'true',
      signal: ${signal(`get aborted() { throw new Error('getter boom') }`)} })`,
    want: failure(undefined, 'getter boom'),
  },
  {
    id: 'Shell.run signal whose addEventListener throws',
    source: `return new sw.Shell().run({ command: 'true',
      signal: ${signal(`addEventListener() { throw new Error('add boom') }`)} })`,
    want: failure(undefined, 'add boom'),
  },
  {
    id: 'Shell.run signal whose removeEventListener throws',
    source: `return outcome(await new sw.Shell().run({ command: 'exit 2',
      signal: ${signal(`removeEventListener() { throw new Error('remove boom') }`)} }))`,
    want: value(exited(2)),
  },
  {
    id: 'Shell.run signal with truthy aborted',
    source: `return outcome(await new sw.Shell().run({ command: 'echo ran > /dev/stderr',
      signal: ${signal(`aborted: 1`)} }))`,
    want: value({ cancelled: true, timedOut: false }),
  },
  {
    id: 'Shell.run onChunk throws an Error',
    source: `const boom = new Error('chunk boom'); const started = Date.now();
      try { await new sw.Shell().run({ command: 'echo hi; sleep 20; echo late' }, () => { throw boom }) }
      catch (e) { return [e === boom, Date.now() - started < 5000] }`,
    want: value([true, true]),
  },
  {
    id: 'Shell.run onChunk throws a string',
    source: `try { await new sw.Shell().run({ command: 'echo hi' }, () => { throw 'plain string' }) }
      catch (e) { return e }`,
    want: value('plain string'),
  },
  {
    id: 'Shell.run after an onChunk throw keeps the session usable',
    source: `const shell = new sw.Shell(); let calls = 0;
      await shell.run({ command: 'echo a; sleep 0.2; echo b' }, () => { calls++; throw 1 }).catch(() => {});
      return [calls, outcome(await shell.run({ command: 'exit 6' }))]`,
    want: value([1, exited(6)]),
  },
  // executeShell
  {
    id: 'executeShell timeoutMs Number.MAX_VALUE',
    source: `return outcome(await sw.executeShell({ command: 'exit 3', timeoutMs: Number.MAX_VALUE }))`,
    want: value(exited(3)),
  },
  {
    id: 'executeShell timeoutMs NaN',
    source: `return sw.executeShell({ command: 'true', timeoutMs: NaN })`,
    want: rangeError('options.timeoutMs must be a non-negative number'),
  },
  {
    id: 'executeShell null options',
    source: 'return sw.executeShell(null)',
    want: typeError('options must be an object'),
  },
  {
    id: 'executeShell sessionEnv value number',
    source: `return sw.executeShell({ command: 'true', sessionEnv: { A: 1 } })`,
    want: typeError('options.sessionEnv.A must be a string'),
  },
  {
    id: 'executeShell missing cwd',
    source: `return sw.executeShell({ command: 'true', cwd: '/definitely/not/here' })`,
    want: failure(
      'ERR_SHELL_CWD',
      'Failed to set cwd: /definitely/not/here: i/o error: No such file or directory (os error 2)',
    ),
  },
  {
    id: 'executeShell onChunk throws',
    source: `const boom = new TypeError('mine');
      try { await sw.executeShell({ command: 'echo hi; sleep 20' }, () => { throw boom }) }
      catch (e) { return e === boom }`,
    want: value(true),
  },
  // Runaway builtins: bash prints one newline; a builtin working for a minute obeys the timeout.
  {
    id: 'executeShell printf whose format consumes no argument',
    source: `return outcome(await sw.executeShell({ command: 'printf "\\\\n" 4.4 BSD > /dev/null', timeoutMs: 2000 }))`,
    want: value(exited(0)),
  },
  {
    id: 'executeShell printf of thousands of wide fields under timeoutMs 500',
    source: `return outcome(await sw.executeShell({ command: "printf '%60000s' {1..2000} > /dev/null", timeoutMs: 500 }))`,
    want: value({ cancelled: false, timedOut: true }),
  },
  {
    id: 'applyBashFixups number',
    source: 'return sw.applyBashFixups(5)',
    want: typeError('command must be a string'),
  },
  { id: 'applyBashFixups empty', source: `return sw.applyBashFixups('')`, want: value({ command: '', stripped: [] }) },
  {
    id: 'applyBashFixups 10,000 open parentheses',
    source: `const c = '('.repeat(10000); const r = sw.applyBashFixups(c); return [r.command === c, r.stripped]`,
    want: value([true, []]),
  },
  // PtySession
  { id: 'PtySession() without new', source: 'return sw.PtySession()', want: notNew('PtySession') },
  ...['Number.MAX_VALUE', '1e300', 'Infinity'].map((ms) => ({
    id: `PtySession.start timeoutMs ${ms}`,
    source: `return new sw.PtySession().start({ command: 'exit 5', timeoutMs: ${ms} })`,
    want: value(exited(5)),
  })),
  {
    id: 'PtySession.start timeoutMs NaN',
    source: `return new sw.PtySession().start({ command: 'true', timeoutMs: NaN })`,
    want: rangeError('options.timeoutMs must be a non-negative number'),
  },
  ...['NaN', 'Infinity'].map((n) => ({
    id: `PtySession.start cols ${n}`,
    source: `return new sw.PtySession().start({ command: 'true', cols: ${n} })`,
    want: rangeError('options.cols must be a finite number'),
  })),
  {
    id: 'PtySession.start huge sizes are clamped',
    source: pty('cols: 1e300, rows: -1e300', 'return [s.screen().cols, s.screen().rows]'),
    want: value([400, 5]),
  },
  {
    id: 'PtySession.start fractional sizes are truncated',
    source: pty('cols: 79.9, rows: 24.5', 'return [s.screen().cols, s.screen().rows]'),
    want: value([79, 24]),
  },
  {
    id: 'PtySession.start negative scrollback is clamped',
    source: `return new sw.PtySession().start({ command: 'exit 0', scrollback: -5 })`,
    want: value(exited(0)),
  },
  {
    id: 'PtySession.start scrollback NaN',
    source: `return new sw.PtySession().start({ command: 'true', scrollback: NaN })`,
    want: rangeError('options.scrollback must be a finite number'),
  },
  {
    id: 'PtySession.start command over 128 KiB',
    source: `return new sw.PtySession().start({ command: 'x'.repeat(${BIG}) })`,
    want: failure(
      'ERR_PTY_SPAWN',
      `Failed to spawn sh: the command is ${BIG} bytes, over the 131071-byte limit of one argument`,
    ),
  },
  {
    id: 'PtySession.start env value over 128 KiB',
    source: `return new sw.PtySession().start({ command: 'true', env: { BIG: 'x'.repeat(${BIG}) } })`,
    want: failure(
      'ERR_PTY_SPAWN',
      `Failed to spawn sh: the environment variable BIG is ${BIG + 4} bytes, over the 131071-byte limit of one entry`,
    ),
  },
  {
    id: 'PtySession.start missing cwd',
    source: `return new sw.PtySession().start({ command: 'true', cwd: '/definitely/not/here' })`,
    want: failure('ERR_PTY_CWD', 'Failed to set cwd: /definitely/not/here: No such file or directory'),
  },
  {
    id: 'PtySession.start while running',
    source: `const s = new sw.PtySession(); const done = s.start({ command: 'sleep 5' });
      try { s.start({ command: 'true' }) } finally { s.kill(); await done }`,
    want: failure('ERR_PTY_RUNNING', 'PTY session already running'),
  },
  {
    id: 'PtySession.write before start',
    source: `new sw.PtySession().write('x')`,
    want: failure('ERR_PTY_NOT_RUNNING', 'PTY session is not running'),
  },
  {
    id: 'PtySession.screen before start',
    source: `new sw.PtySession().screen()`,
    want: failure('ERR_PTY_NOT_RUNNING', 'PTY session is not running'),
  },
  {
    id: 'PtySession.resize rows NaN while running',
    source: `const s = new sw.PtySession(); const done = s.start({ command: 'sleep 5' });
      try { s.resize(80, NaN) } finally { s.kill(); await done }`,
    want: rangeError('rows must be a finite number'),
  },
  {
    id: 'PtySession.resize cols string while running',
    source: `const s = new sw.PtySession(); const done = s.start({ command: 'sleep 5' });
      try { s.resize('80', 24) } finally { s.kill(); await done }`,
    want: typeError('cols must be a number'),
  },
  {
    id: 'PtySession.exec command number',
    source: `new sw.PtySession().exec(42)`,
    want: typeError('command must be a string'),
  },
  {
    id: 'PtySession.exec timeoutMs -1',
    source: `new sw.PtySession().exec('true', { timeoutMs: -1 })`,
    want: rangeError('options.timeoutMs must be a non-negative number'),
  },
  {
    id: 'PtySession.exec timeoutMs 1e300',
    source: `const s = new sw.PtySession();
      const done = s.start({ shell: 'bash', interactive: true, env: { PS1: '$ ' } });
      const r = await s.exec('echo exec-ok', { timeoutMs: 1e300 }); s.kill(); await done;
      return [r.command, r.output, r.exitCode]`,
    want: value(['echo exec-ok', 'exec-ok', 0]),
  },
  {
    id: 'PtySession.start onChunk throws',
    source: `const s = new sw.PtySession(); const boom = new RangeError('pty boom');
      const caught = await s.start({ command: 'echo hi; sleep 20' }, () => { throw boom }).catch((e) => e);
      return [caught === boom, await s.start({ command: 'exit 7' })]`,
    want: value([true, exited(7)]),
  },
  {
    id: 'PtySession.start signal whose removeEventListener throws',
    source: `return new sw.PtySession().start({ command: 'exit 1',
      signal: ${signal(`removeEventListener() { throw new Error('remove boom') }`)} })`,
    want: value(exited(1)),
  },
  // ExecSessions
  { id: 'ExecSessions() without new', source: 'return sw.ExecSessions()', want: notNew('ExecSessions') },
  ...['Infinity', 'Number.MAX_VALUE', '1e300'].map((ms) => ({
    id: `ExecSessions.start yieldMs ${ms}`,
    source: `const u = await new sw.ExecSessions().start({ command: 'echo hi; exit 6', yieldMs: ${ms} });
      return [u.output, u.exitCode]`,
    want: value(['hi', 6]),
  })),
  {
    id: 'ExecSessions.start maxOutputBytes huge and negative are clamped',
    source: `const e = new sw.ExecSessions();
      const big = await e.start({ command: 'echo hi', maxOutputBytes: 1e300 });
      const none = await e.start({ command: 'echo hi', maxOutputBytes: -5 });
      return [big.output, none.output, none.truncatedBytes]`,
    want: value(['hi', '', 2]),
  },
  {
    id: 'ExecSessions maxSessions below 1 keeps one',
    source: `const e = new sw.ExecSessions({ maxSessions: -3 });
      const a = await e.start({ command: 'sleep 5', yieldMs: 0 });
      try { await e.start({ command: 'true' }) } finally { await e.close() }`,
    want: failure('ERR_EXEC_LIMIT', 'too many exec sessions: the limit is 1; kill one or let one finish first'),
  },
  {
    id: 'ExecSessions.start command over 128 KiB',
    source: `return new sw.ExecSessions().start({ command: 'x'.repeat(${BIG}) })`,
    want: failure(
      'ERR_PTY_SPAWN',
      `Failed to spawn bash: the command is ${BIG} bytes, over the 131071-byte limit of one argument`,
    ),
  },
  {
    id: 'ExecSessions.start env name with =',
    source: `return new sw.ExecSessions().start({ command: 'true', env: { 'A=B': 'x' } })`,
    want: failure(
      'ERR_PTY_SPAWN',
      `Failed to spawn bash: the environment variable "A=B" has an empty name, or contains '=' in its name or a NUL byte`,
    ),
  },
  {
    id: 'ExecSessions.write id past u32',
    source: `return new sw.ExecSessions().write(2 ** 32, '')`,
    want: rangeError('id must be an integer from 0 to 4294967295'),
  },
  {
    id: 'ExecSessions.kill unknown id',
    source: `return new sw.ExecSessions().kill(0)`,
    want: failure(
      'ERR_EXEC_UNKNOWN_SESSION',
      'no exec session with id 0: there are none (a session that ended is gone once an update reported its end)',
    ),
  },
  {
    id: 'ExecSessions options.shell a PtySession',
    source: `return new sw.ExecSessions({ shell: new sw.PtySession() })`,
    want: typeError('options.shell must be a Shell'),
  },
  // VirtualTerminal
  { id: 'VirtualTerminal() without new', source: 'return sw.VirtualTerminal()', want: notNew('VirtualTerminal') },
  {
    id: 'VirtualTerminal cols NaN',
    source: 'new sw.VirtualTerminal({ cols: NaN })',
    want: rangeError('options.cols must be a finite number'),
  },
  {
    id: 'VirtualTerminal rows -Infinity',
    source: 'new sw.VirtualTerminal({ rows: -Infinity })',
    want: rangeError('options.rows must be a finite number'),
  },
  {
    id: 'VirtualTerminal huge and tiny sizes are clamped',
    source: `const t = new sw.VirtualTerminal({ cols: 1e300, rows: 0.5, scrollback: -1 });
      return [t.screen().cols, t.screen().rows]`,
    want: value([1000, 1]),
  },
  {
    id: 'VirtualTerminal.resize Infinity',
    source: 'new sw.VirtualTerminal().resize(Infinity, 5)',
    want: rangeError('cols must be a finite number'),
  },
  {
    id: 'VirtualTerminal.resize string',
    source: `new sw.VirtualTerminal().resize('a', 5)`,
    want: typeError('cols must be a number'),
  },
  {
    id: 'VirtualTerminal.write null',
    source: 'new sw.VirtualTerminal().write(null)',
    want: typeError('data must be a string or a Uint8Array'),
  },
  {
    id: 'VirtualTerminal.write huge repeat count',
    source: `const t = new sw.VirtualTerminal({ cols: 10, rows: 2 });
      return [t.write('x\\x1b[99999999999b'), t.screen().lines[0]]`,
    want: value(['', 'xxxxxxxxxx']),
  },
  {
    id: 'VirtualTerminal.write invalid UTF-8 bytes',
    source: `const t = new sw.VirtualTerminal(); return t.write(new Uint8Array([0xff, 0xfe, 0xc3]))`,
    want: value(''),
  },
  {
    id: 'VirtualTerminal.write a lone surrogate',
    source: `const t = new sw.VirtualTerminal(); return [t.write('\\ud800'), t.screen().lines[0]]`,
    want: value(['', '\ufffd']),
  },
  // Process
  ...['NaN', '-1', '2 ** 32', '1.5'].map((pid) => ({
    id: `Process.fromPid ${pid}`,
    source: `return sw.Process.fromPid(${pid})`,
    want: rangeError('pid must be an integer from 0 to 4294967295'),
  })),
  {
    id: 'Process.fromPid string',
    source: `return sw.Process.fromPid('1')`,
    want: typeError('pid must be an integer from 0 to 4294967295'),
  },
  {
    id: 'Process.killTree NaN',
    source: `return sw.Process.fromPid(process.pid).killTree(NaN)`,
    want: rangeError('signal must be an integer from 0 to 64'),
  },
  {
    id: 'Process.terminate gracefulMs NaN',
    source: `${sleeper} try { return await sw.Process.fromPid(child.pid).terminate({ gracefulMs: NaN }) }
      finally { child.kill('SIGKILL') }`,
    want: rangeError('options.gracefulMs must be a number'),
  },
  {
    id: 'Process.terminate timeoutMs -1',
    source: `${sleeper} try { return await sw.Process.fromPid(child.pid).terminate({ timeoutMs: -1 }) }
      finally { child.kill('SIGKILL') }`,
    want: rangeError('options.timeoutMs must be a non-negative number'),
  },
  {
    id: 'Process.terminate gracefulMs and timeoutMs Infinity',
    source: `${sleeper} const exit = new Promise((r) => child.once('exit', (code, sig) => r(sig)));
      const done = await sw.Process.fromPid(child.pid).terminate({ gracefulMs: Infinity, timeoutMs: Number.MAX_VALUE });
      return [done, await exit]`,
    want: value([true, 'SIGTERM']),
  },
  {
    id: 'Process.waitForExit timeoutMs NaN',
    source: `return sw.Process.fromPid(process.pid).waitForExit({ timeoutMs: NaN })`,
    want: rangeError('options.timeoutMs must be a non-negative number'),
  },
  {
    id: 'Process.waitForExit timeoutMs 1e300 then abort',
    source: `${sleeper} const ac = new AbortController();
      const waiting = sw.Process.fromPid(child.pid).waitForExit({ timeoutMs: 1e300, signal: ac.signal });
      ac.abort(); try { return await waiting } finally { child.kill('SIGKILL') }`,
    want: failure('ABORT_ERR', 'Aborted: Signal'),
  },
  {
    id: 'Process.waitForExit signal whose aborted getter throws',
    source: `return sw.Process.fromPid(process.pid).waitForExit({
      signal: ${signal(`get aborted() { throw new Error('getter boom') }`)} })`,
    want: failure(undefined, 'getter boom'),
  },
  // Keys
  {
    id: 'parseKey undefined',
    source: 'return sw.parseKey(undefined, false)',
    want: typeError('data must be a string'),
  },
  {
    id: 'matchesKittySequence NaN codepoint',
    source: `return sw.matchesKittySequence('\\x1b[99;5u', NaN, 4)`,
    want: rangeError('expectedCodepoint must be a finite number'),
  },
  {
    id: 'matchesKittySequence huge codepoint',
    source: `return sw.matchesKittySequence('\\x1b[99;5u', 1e300, 4)`,
    want: value(false),
  },
  {
    id: 'parseKittySequence overflowing number',
    source: `return sw.parseKittySequence('\\x1b[99999999999999999999u')`,
    want: value(null),
  },
  {
    id: 'matchesKey with a 1,000-modifier id',
    source: `return sw.matchesKey('a', 'ctrl+'.repeat(1000) + 'a', false)`,
    want: value(false),
  },
  { id: 'parseKey a lone surrogate', source: `return sw.parseKey('\\ud800', false)`, want: value(null) },
  {
    id: 'executeShell ulimit -n 64 leaves the host able to open files',
    source: `const fs = require('node:fs');
      const limit = () => fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith('Max open files'));
      const before = limit();
      let text = '';
      const result = await sw.executeShell({ command: 'ulimit -n 64; ulimit -Hn 64; echo set', timeoutMs: 5000 }, (c) => (text += c));
      const fds = Array.from({ length: 100 }, () => fs.openSync('/dev/null', 'r'));
      fds.forEach((fd) => fs.closeSync(fd));
      return { text, exitCode: result.exitCode, hostLimitUnchanged: limit() === before };`,
    want: value({ text: 'set\n', exitCode: 0, hostLimitUnchanged: true }),
  },
  {
    id: 'executeShell ulimit -n 0 before a program',
    source: `let text = '';
      const result = await sw.executeShell({ command: 'ulimit -n 0; /bin/true; echo "rc=$?"', timeoutMs: 5000 }, (c) => (text += c));
      return { text, exitCode: result.exitCode };`,
    want: value({
      text: "error: failed to execute command '/bin/true': Bad file descriptor (os error 9)\nrc=126\n",
      exitCode: 0,
    }),
  },
  {
    id: 'executeShell ulimit with a number past rlim_t',
    source: `let text = '';
      const result = await sw.executeShell({ command: 'ulimit -c 99999999999999999999999; echo "rc=$?"', timeoutMs: 5000 }, (c) => (text += c));
      return { text, exitCode: result.exitCode };`,
    want: value({ text: 'bash: line 1: ulimit: 99999999999999999999999: limit out of range\nrc=1\n', exitCode: 0 }),
  },
]

/** Runs `batch` in one child; returns the outcome of every case it reached. */
function runChild(batch: Case[]): Promise<Map<string, Outcome>> {
  return new Promise((resolve) => {
    const results = new Map<string, Outcome>()
    const child = spawn(process.execPath, [RUNNER], { stdio: ['pipe', 'pipe', 'pipe'] })
    let buffered = ''
    let watchdog: NodeJS.Timeout | undefined
    const arm = () => {
      clearTimeout(watchdog)
      // The runner reports a hang itself after PER_CASE_MS; this catches a runner that cannot.
      watchdog = setTimeout(() => child.kill('SIGKILL'), PER_CASE_MS + 5_000)
    }
    arm()
    child.stdout.on('data', (data) => {
      buffered += data
      let newline
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, newline))
        buffered = buffered.slice(newline + 1)
        arm()
        if (line.id === null) continue
        const { id, ...outcome } = line
        // A second report for a case (a late uncaught exception) replaces its outcome.
        results.set(id, outcome)
      }
    })
    child.on('exit', (code, sig) => {
      clearTimeout(watchdog)
      const reached = batch.find((c) => !results.has(c.id))
      if (reached && (sig !== null || code !== 0)) {
        results.set(reached.id, { outcome: 'crash', signal: sig, code })
      }
      resolve(results)
    })
    child.stdin.end(JSON.stringify({ perCaseMs: PER_CASE_MS, cases: batch }))
  })
}

/** Runs `batch`, replacing a child that died by a new one for the cases it had not reached. */
async function runBatch(batch: Case[]): Promise<Map<string, Outcome>> {
  const results = new Map<string, Outcome>()
  let remaining = batch
  while (remaining.length > 0) {
    const got = await runChild(remaining)
    for (const [id, outcome] of got) results.set(id, outcome)
    const next = remaining.filter((c) => !results.has(c.id))
    if (next.length === remaining.length) break
    remaining = next
  }
  return results
}

describe('bad inputs at the boundary', () => {
  const outcomes = new Map<string, Outcome>()

  beforeAll(async () => {
    const batches = 4
    const groups = Array.from({ length: batches }, (_, i) => cases.filter((_, n) => n % batches === i))
    for (const result of await Promise.all(groups.map(runBatch))) {
      for (const [id, outcome] of result) outcomes.set(id, outcome)
    }
  }, 90_000)

  it('has a unique id for each of at least 60 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60)
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length)
  })

  it.each(cases.map((c) => [c.id, c] as const))('%s', (_, c) => {
    expect(outcomes.get(c.id)).toEqual(c.want)
  })
})
