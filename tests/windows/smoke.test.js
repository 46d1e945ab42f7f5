'use strict'
// The Windows smoke suite: the win32-x64 addon, loaded through the package entry from its platform
// package, in Node's own Windows build. tools/windows-smoke.sh stages it beside node.exe and runs
// it under Wine (`node.exe --test`); it is plain CommonJS for node:test because vitest does not run
// there. It covers what the Windows addon has: the shell and its mirror, keys, the terminal
// emulator, the bash fix-ups, process control, and PtySession and ExecSessions on ConPTY.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const shellwright = require('shellwright')

const { ExecSessions, Process, PtySession, Shell, ShellMirror, VirtualTerminal } = shellwright

// Wine (8.0) does not implement ProcessCommandLineInformation, which sysinfo reads a command line
// with on Windows 8.1 and later, so `Process.args()` is empty there. Wine passes the Unix
// environment through, and tools/windows-smoke.sh sets WINEPREFIX.
const underWine = 'WINEPREFIX' in process.env

/** Polls `probe` every 50 ms until it returns a truthy value (returned) or `timeoutMs` passes. */
async function until(what, probe, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * Starts a tree of two: a node.exe that starts `ping` and stays (a root that outlives its child,
 * so a tree kill finds both alive whatever order it ends them in). Waits until the ping runs
 * under it; returns the Node child, its Process and the ping's.
 */
async function startTree(t) {
  const script = "require('child_process').spawn('ping', ['-n', '120', '127.0.0.1'], { stdio: 'ignore' }); setInterval(() => {}, 60_000)"
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill()
    await exited
  })
  const root = await until('the root node.exe', () => Process.fromPid(child.pid))
  const [ping] = await until('ping under the root', () => root.children().length === 1 && root.children())
  return { child, exited, root, ping }
}

test('the package entry loads the win32-x64-gnu addon from its platform package', () => {
  const loaded = Object.keys(require.cache).filter((file) => file.endsWith('.node'))
  assert.equal(loaded.length, 1)
  assert.match(loaded[0], /[\\/]shellwright-win32-x64-gnu[\\/]shellwright\.win32-x64-gnu\.node$/)
})

test('ES modules get the same named exports', async () => {
  const esm = await import('shellwright')
  assert.equal(esm.parseKey, shellwright.parseKey)
  assert.equal(esm.Process, Process)
  assert.equal(esm.Shell, shellwright.Shell)
})

test('keys: parseKey, encodeKey, matchesKey and the Kitty parser', () => {
  assert.equal(shellwright.parseKey('\x1b[1;5A', false), 'ctrl+up')
  assert.equal(shellwright.parseKey('\x1b[97;5u', true), 'ctrl+a')
  assert.equal(shellwright.encodeKey('ctrl+c'), '\x03')
  assert.equal(shellwright.encodeKey('up', { applicationCursorKeys: true }), '\x1bOA')
  assert.equal(shellwright.matchesKey('\x1b[A', 'up', false), true)
  assert.deepEqual({ ...shellwright.parseKittySequence('\x1b[97;5:3u') }, {
    codepoint: 97,
    modifier: 4,
    eventType: shellwright.KeyEventType.Release,
  })
  assert.equal(shellwright.matchesKittySequence('\x1b[97;5u', 97, 4), true)
})

test('VirtualTerminal: text, colour, cursor and query replies', () => {
  const terminal = new VirtualTerminal({ cols: 20, rows: 5 })
  try {
    assert.equal(terminal.write('hi\r\n\x1b[31mred\x1b[0m\x1b[6n'), '\x1b[2;4R')
    const screen = terminal.screen()
    assert.deepEqual(screen.lines, ['hi', 'red', '', '', ''])
    assert.deepEqual({ ...screen.cursor }, { row: 1, col: 3, visible: true })
    assert.deepEqual(terminal.styledLines()[1].map((run) => ({ ...run })), [{ text: 'red', fg: 1 }])
  } finally {
    terminal.dispose()
  }
})

test('applyBashFixups', () => {
  assert.deepEqual({ ...shellwright.applyBashFixups('cargo test 2>&1 | head -n 5') }, {
    command: 'cargo test',
    stripped: ['| head -n 5', '2>&1'],
  })
})

test('Process.fromPid and fromPath find this node.exe', () => {
  const self = Process.fromPid(process.pid)
  assert.equal(self.pid, process.pid)
  assert.equal(self.status(), shellwright.ProcessStatus.Running)
  if (underWine) assert.deepEqual(self.args(), [])
  else assert.match(self.args()[0], /node\.exe$/i)
  assert.ok(Process.fromPath(process.execPath).some((p) => p.pid === process.pid))
})

test('Process.children sees a spawned tree', async (t) => {
  const { child, root, ping } = await startTree(t)
  assert.equal(root.ppid, process.pid)
  assert.ok(Process.fromPid(process.pid).children().some((p) => p.pid === child.pid))
  assert.equal(ping.ppid, child.pid)
  if (underWine) assert.deepEqual(ping.args(), [])
  else assert.match(ping.args().join(' '), /ping/i)
})

test('Process.killTree ends the tree with TerminateProcess', async (t) => {
  const { exited, root, ping } = await startTree(t)
  assert.equal(root.killTree(), 2)
  assert.equal(await ping.waitForExit({ timeoutMs: 5000 }), true)
  assert.equal(await root.waitForExit({ timeoutMs: 5000 }), true)
  await exited
  assert.equal(root.status(), shellwright.ProcessStatus.Exited)
})

test('Process.killTree refuses a signal that does not end a process on Windows', async (t) => {
  const { root } = await startTree(t)
  assert.equal(root.killTree(1), 0)
  assert.equal(await root.waitForExit({ timeoutMs: 200 }), false)
  assert.equal(root.status(), shellwright.ProcessStatus.Running)
})

test('Process.terminate ends the tree and resolves true', async (t) => {
  const { exited, root, ping } = await startTree(t)
  assert.equal(await root.terminate({ gracefulMs: 100, timeoutMs: 5000 }), true)
  assert.equal(ping.status(), shellwright.ProcessStatus.Exited)
  await exited
})

// PtySession on ConPTY. Wine's pseudo console (8.0) starts the program, attached to no console
// that reaches our pipe: the program runs, takes its argv, cwd and environment, exits, and can be
// timed out and killed, but none of what it writes comes through. So under Wine these tests see
// all of that and read the screen only on Windows itself (under Wine it stays blank).

test('PtySession runs a command through cmd /c in a pseudo console and reports its exit code', async () => {
  const session = new PtySession()
  let output = ''
  const result = await session.start({ command: 'echo hello& exit /b 3', timeoutMs: 20_000 }, (chunk) => {
    output += chunk
  })
  assert.deepEqual(result, { cancelled: false, timedOut: false, exitCode: 3 })
  assert.equal(session.pid, null)
  if (!underWine) {
    assert.equal(session.screen().lines[0], 'hello')
    assert.match(output, /hello/)
  }
})

test('PtySession gives argv, cwd and env to the program as they are', async (t) => {
  const dir = tempDir(t)
  const script = "require('fs').writeFileSync('seen.json', JSON.stringify({ cwd: process.cwd(), foo: process.env.SW_FOO, args: process.argv.slice(1) }))"
  const session = new PtySession()
  const result = await session.start({
    argv: [process.execPath, '-e', script, 'one two', '"quoted"'],
    cwd: dir,
    env: { SW_FOO: 'bar baz' },
    timeoutMs: 20_000,
  })
  assert.equal(result.exitCode, 0)
  const seen = JSON.parse(fs.readFileSync(path.join(dir, 'seen.json'), 'utf8'))
  assert.deepEqual(seen, { cwd: dir, foo: 'bar baz', args: ['one two', '"quoted"'] })
})

test('PtySession refuses a missing cwd before starting anything', async () => {
  const session = new PtySession()
  await assert.rejects(session.start({ command: 'exit /b 0', cwd: 'C:\\no\\such\\dir' }), {
    code: 'ERR_PTY_CWD',
    message: /^Failed to set cwd: C:\\no\\such\\dir: /,
  })
})

test('PtySession resizes the pseudo console and its screen while the program runs, or keeps both', async () => {
  const session = new PtySession()
  const running = session.start({ argv: [process.execPath, '-e', 'setTimeout(() => {}, 30_000)'], cols: 80, rows: 24, timeoutMs: 20_000 })
  await until('the program', () => session.pid)
  // Wine (8.0) does not implement ResizePseudoConsole (E_NOTIMPL): the resize is refused, and the
  // screen keeps the size the console has.
  const resize = () => session.resize(100, 30)
  if (underWine) {
    assert.throws(resize, {
      code: 'ERR_PTY_RESIZE',
      message: 'Failed to resize the pseudo-terminal: failed to resize console to 100x30: HRESULT: -2147467263',
    })
  } else {
    resize()
  }
  const { cols, rows } = session.screen()
  assert.deepEqual({ cols, rows }, underWine ? { cols: 80, rows: 24 } : { cols: 100, rows: 30 })
  session.kill()
  assert.deepEqual(await running, { cancelled: true, timedOut: false })
  assert.throws(() => session.resize(90, 20), { code: 'ERR_PTY_NOT_RUNNING' })
})

test('PtySession timeoutMs ends the program and what it started, wherever it went', async (t) => {
  const dir = tempDir(t)
  const pidFile = path.join(dir, 'ping.pid')
  const script = `const ping = require('child_process').spawn('ping', ['-n', '120', '127.0.0.1'], { stdio: 'ignore', detached: true }); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(ping.pid)); setInterval(() => {}, 60_000)`
  const session = new PtySession()
  const started = Date.now()
  const running = session.start({ argv: [process.execPath, '-e', script], timeoutMs: 3_000 })
  const ping = Process.fromPid(Number(await until('the ping pid', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8'))))
  assert.notEqual(ping, null)
  assert.deepEqual(await running, { cancelled: false, timedOut: true })
  assert.ok(Date.now() - started < 10_000, `the run took ${Date.now() - started} ms`)
  assert.equal(await ping.waitForExit({ timeoutMs: 5000 }), true)
})

test('PtySession.kill() stops the run and reports it cancelled', async () => {
  const session = new PtySession()
  const running = session.start({ command: 'ping -n 120 127.0.0.1', timeoutMs: 60_000 })
  const child = Process.fromPid(await until('the shell', () => session.pid))
  session.kill()
  assert.deepEqual(await running, { cancelled: true, timedOut: false })
  assert.equal(await child.waitForExit({ timeoutMs: 5000 }), true)
})

test("PtySession.attach gives a viewer the snapshot and the run's end", async () => {
  const session = new PtySession()
  const running = session.start({ argv: [process.execPath, '-e', 'setTimeout(() => process.exit(5), 1000)'], cols: 60, rows: 12, timeoutMs: 20_000 })
  await until('the program', () => session.pid)
  const ended = new Promise((resolve) => {
    const attachment = session.attach(() => {}, resolve)
    assert.deepEqual([attachment.cols, attachment.rows], [60, 12])
    const view = new VirtualTerminal({ cols: 60, rows: 12 })
    view.write(attachment.snapshot)
    assert.deepEqual(view.screen().lines, session.screen().lines)
  })
  assert.deepEqual(await ended, { exitCode: 5, cancelled: false, timedOut: false })
  assert.deepEqual(await running, { cancelled: false, timedOut: false, exitCode: 5 })
})

test('ExecSessions runs a command in a session of its own through cmd and reports its exit', async () => {
  const sessions = new ExecSessions()
  try {
    let update = await sessions.start({ command: 'exit /b 2', yieldMs: 10_000 })
    // Windows cannot say whether a console program waits for input, so a quiet program may
    // look like one that waits; polling brings the end.
    for (let polls = 0; update.running && polls < 20; polls++) {
      update = await sessions.write(update.id, '', { yieldMs: 1000 })
    }
    assert.equal(update.running, false)
    assert.equal(update.exitCode, 2)
    assert.deepEqual(sessions.list(), [])
  } finally {
    await sessions.close()
  }
})

test("ShellMirror shows a Shell's runs in VS Code's dialect", async () => {
  const shell = new Shell()
  const mirror = new ShellMirror(shell)
  let text = ''
  mirror.open((data) => {
    text += data
  })
  try {
    await shell.run({ command: 'echo mirrored' })
    await until('the run in the mirror', () => text.includes('\x1b]633;D;0\x07'))
    assert.match(text, /\x1b\]633;E;echo mirrored\x07/)
    assert.match(text, /mirrored\r\n/)
  } finally {
    mirror.close()
    await shell.close()
  }
})

/** A fresh directory, removed after the test. */
function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-pty-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs `command` in `shell`; resolves to its result with the streamed output as `output`. */
async function run(shell, options) {
  let output = ''
  const result = await shell.run(typeof options === 'string' ? { command: options } : options, (chunk) => {
    output += chunk
  })
  return { ...result, output }
}

/** The shell's words for `path` (node.exe's own path, single-quoted for bash). */
const quoted = (path) => `'${path.replaceAll("'", "'\\''")}'`

test('Shell: builtins, an external program and its exit status', async () => {
  const shell = new Shell()
  try {
    const hi = await run(shell, 'echo hi')
    assert.equal(hi.output, 'hi\n')
    assert.equal(hi.exitCode, 0)
    assert.equal(hi.cancelled, false)
    assert.equal(hi.timedOut, false)
    assert.equal((await run(shell, 'cmd /c echo from-cmd')).output, 'from-cmd\r\n')
    assert.equal((await run(shell, 'cmd /c exit 3')).exitCode, 3)
    const missing = await run(shell, 'no-such-program-here')
    assert.equal(missing.exitCode, 127)
    assert.match(missing.output, /no-such-program-here/)
  } finally {
    await shell.close()
  }
})

test('Shell: the directory, variables and functions stay between runs', async () => {
  const shell = new Shell()
  try {
    const start = await run(shell, 'X=kept; greet() { echo "hello $1"; }; cd .. && pwd')
    assert.equal(start.exitCode, 0)
    assert.equal(start.output.trim(), start.cwd)
    const later = await run(shell, 'echo "$X"; greet there; pwd')
    assert.equal(later.output, `kept\nhello there\n${start.cwd}\n`)
    assert.equal(later.cwd, start.cwd)
    const env = await run(shell, { command: 'echo "$ONE_RUN"', env: { ONE_RUN: 'set' } })
    assert.equal(env.output, 'set\n')
    assert.equal((await run(shell, 'echo "[$ONE_RUN]"')).output, '[]\n')
  } finally {
    await shell.close()
  }
})

test('Shell: stdout and stderr arrive in one stream, in order', async () => {
  const shell = new Shell()
  try {
    const mixed = await run(shell, 'echo out; echo err >&2; echo out2; cmd /c "echo cmd-err 1>&2"')
    assert.equal(mixed.output, 'out\nerr\nout2\ncmd-err \r\n')
  } finally {
    await shell.close()
  }
})

test('Shell: PATH is one variable whatever its spelling, and sessionEnv entries come first', async () => {
  const shell = new Shell({ sessionEnv: { Path: 'C:\\extra-tools' } })
  try {
    const path = (await run(shell, 'echo "$PATH"')).output.trim().split(';')
    assert.equal(path[0], 'C:\\extra-tools')
    assert.ok(path.some((entry) => /^c:\\windows\\system32$/i.test(entry)), path.join(';'))
    assert.equal((await run(shell, 'echo "[$Path]"')).output, '[]\n')
  } finally {
    await shell.close()
  }
})

/**
 * A command that starts a tree — node.exe, which starts `ping` — prints both pids and waits.
 * Resolves to the run's result and the two pids.
 */
function runTree(shell, options) {
  const script =
    "const c = require('child_process').spawn('ping', ['-n', '120', '127.0.0.1'], { stdio: 'ignore' });" +
    "console.log('pids', process.pid, c.pid); setInterval(() => {}, 60000)"
  let output = ''
  let printed
  const pids = new Promise((resolve) => (printed = resolve))
  const result = shell.run({ command: `${quoted(process.execPath)} -e "${script}"`, ...options }, (chunk) => {
    output += chunk
    const match = /pids (\d+) (\d+)/.exec(output)
    if (match) printed([Number(match[1]), Number(match[2])])
  })
  // A run that ends before printing fails the test instead of leaving it waiting.
  const early = result.then((ended) => {
    throw new Error(`the run ended first: ${JSON.stringify({ ...ended, output })}`)
  })
  return { result, pids: Promise.race([pids, early]) }
}

/** Waits until neither pid names a running process. */
async function gone(pids) {
  await until('the tree to end', () =>
    pids.every((pid) => {
      const process = Process.fromPid(pid)
      return process === null || process.status() !== shellwright.ProcessStatus.Running
    }),
  )
}

test('Shell: a timeout ends the whole tree, and the next run gets a fresh session', async () => {
  const shell = new Shell()
  try {
    await run(shell, 'KEPT=1')
    const { result, pids } = runTree(shell, { timeoutMs: 3000 })
    const [node, ping] = await pids
    assert.ok(Process.fromPid(ping), 'ping runs')
    const ended = await result
    assert.equal(ended.timedOut, true)
    assert.equal(ended.exitCode, undefined)
    assert.equal(ended.sessionReset, true)
    await gone([node, ping])
    const after = await run(shell, 'echo "[$KEPT]"')
    assert.equal(after.output, '[]\n')
    assert.equal(after.exitCode, 0)
  } finally {
    await shell.close()
  }
})

test('Shell: an AbortSignal ends the tree too', async () => {
  const shell = new Shell()
  try {
    const controller = new AbortController()
    const { result, pids } = runTree(shell, { signal: controller.signal })
    const tree = await pids
    controller.abort()
    const ended = await result
    assert.equal(ended.cancelled, true)
    await gone(tree)
  } finally {
    await shell.close()
  }
})

/** Writes `text` to a script file that is removed after the test; returns its path. */
function scriptFile(t, name, text) {
  const file = path.join(os.tmpdir(), `shellwright-${name}-${process.pid}.js`)
  fs.writeFileSync(file, text)
  t.after(() => fs.rmSync(file, { force: true }))
  return file
}

test('Shell: what a run leaves running stays between runs and ends with close()', async (t) => {
  const shell = new Shell()
  let pid
  try {
    // It writes its pid to a file: its output after the run's drain has ended goes nowhere.
    const pidFile = path.join(os.tmpdir(), `shellwright-stay-${process.pid}.pid`)
    t.after(() => fs.rmSync(pidFile, { force: true }))
    const stay = scriptFile(
      t,
      'stay',
      `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 60000)`,
    )
    const started = await run(shell, `${quoted(process.execPath)} ${quoted(stay)} &`)
    assert.equal(started.exitCode, 0)
    pid = Number(await until('the pid file', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8')))
    assert.equal((await run(shell, 'echo next')).output, 'next\n')
    assert.equal(Process.fromPid(pid).status(), shellwright.ProcessStatus.Running)
  } finally {
    await shell.close()
  }
  await gone([pid])
})

test('Shell: the processes of a run end when its host process dies', async (t) => {
  const tree = scriptFile(
    t,
    'tree',
    "const c = require('child_process').spawn('ping', ['-n', '120', '127.0.0.1'], { stdio: 'ignore' });" +
      "console.log('pids', process.pid, c.pid); setInterval(() => {}, 60000)",
  )
  const host = scriptFile(
    t,
    'host',
    `const { Shell } = require(${JSON.stringify(require.resolve('shellwright'))});` +
      `new Shell().run({ command: ${JSON.stringify(`${quoted(process.execPath)} ${quoted(tree)}`)} },` +
      ' (chunk) => process.stdout.write(chunk))',
  )
  const child = spawn(process.execPath, [host], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.after(() => child.kill())
  let output = ''
  const pids = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk
      const match = /pids (\d+) (\d+)/.exec(output)
      if (match) resolve([Number(match[1]), Number(match[2])])
    })
    exited.then(() => reject(new Error(`the host ended first: ${output}`)))
  })
  assert.ok(Process.fromPid(pids[1]), 'ping runs')
  child.kill()
  await exited
  await gone(pids)
})

test('Shell: close() ends the session; a later run rejects with ERR_SHELL_CLOSED', async () => {
  const shell = new Shell()
  await run(shell, 'true')
  await shell.close()
  await assert.rejects(shell.run({ command: 'echo late' }), { code: 'ERR_SHELL_CLOSED' })
})

test('executeShell runs one command in a session of its own', async () => {
  let output = ''
  const result = await shellwright.executeShell({ command: 'cd .. && echo one; exit 4' }, (chunk) => {
    output += chunk
  })
  assert.equal(output, 'one\n')
  assert.equal(result.exitCode, 4)
})
