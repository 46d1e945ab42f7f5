'use strict'
// The Windows smoke suite: the win32-x64 addon, loaded through the package entry from its platform
// package, in Node's own Windows build. tools/windows-smoke.sh stages it beside node.exe and runs
// it under Wine (`node.exe --test`); it is plain CommonJS for node:test because vitest does not run
// there. What it covers is what the Windows addon has: keys, the terminal emulator, the bash
// fix-ups and process control; and that the shell and PTY classes fail with a clear error.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const shellwright = require('shellwright')

const { Process, VirtualTerminal } = shellwright

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

for (const name of ['Shell', 'PtySession', 'ExecSessions', 'ShellMirror']) {
  test(`new ${name}() throws ERR_UNSUPPORTED_PLATFORM`, () => {
    assert.throws(() => new shellwright[name](), {
      name: 'Error',
      code: 'ERR_UNSUPPORTED_PLATFORM',
      message: new RegExp(`^shellwright: ${name} is not available on win32 yet `),
    })
  })
}

test('executeShell rejects with ERR_UNSUPPORTED_PLATFORM', async () => {
  await assert.rejects(shellwright.executeShell({ command: 'echo hi' }), {
    code: 'ERR_UNSUPPORTED_PLATFORM',
    message: /^shellwright: executeShell is not available on win32 yet /,
  })
})
