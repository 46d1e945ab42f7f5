'use strict'
// The smoke suite of one built addon, for a Node.js of the addon's own platform, which may run
// under an emulator or on another C library (tools/smoke-targets.sh starts it that way):
//
//   node tests/targets/smoke.cjs npm/linux-x64-gnu/shellwright.linux-x64-gnu.node
//
// The argument is the `.node` file (or anything `require` resolves to the addon's exports, such
// as the package's index.js). Each check prints `ok` or `FAIL`; the last line is
// `smoke: N passed, N failed`, and the exit status is 1 when anything failed.
const path = require('node:path')

const target = process.argv[2]
if (!target) {
  console.error('usage: node tests/targets/smoke.cjs <shellwright.<target>.node or index.js>')
  process.exit(2)
}

let passed = 0
let failed = 0
function report(name, ok, detail) {
  if (ok) passed++
  else failed++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail === undefined ? '' : `: ${detail}`}`)
}

const described = (error) => String(error && error.stack ? error.stack : error)

/** Runs one check: `fn` resolves to `[passed, what was seen]`. */
async function check(name, fn) {
  const started = Date.now()
  try {
    const [ok, detail] = await fn()
    report(name, ok, `${detail} (${Date.now() - started} ms)`)
  } catch (error) {
    report(name, false, `threw ${described(error)}`)
  }
}

async function main() {
  console.log(`node ${process.version} ${process.platform}-${process.arch}, loading ${target}`)
  let addon
  try {
    addon = require(path.resolve(target))
  } catch (error) {
    report('load addon', false, `threw ${described(error)}`)
    return
  }
  report('load addon', true, `${Object.keys(addon).length} exports`)
  const { Shell, PtySession, VirtualTerminal, ExecSessions, parseKey, executeShell } = addon

  await check("executeShell 'echo hi; exit 3'", async () => {
    let output = ''
    const result = await executeShell({ command: 'echo hi; exit 3' }, (chunk) => (output += chunk))
    return [output === 'hi\n' && result.exitCode === 3, `output ${JSON.stringify(output)}, result ${JSON.stringify(result)}`]
  })

  await check("executeShell 'sleep 5' with timeoutMs 300", async () => {
    const started = Date.now()
    const result = await executeShell({ command: 'sleep 5', timeoutMs: 300 })
    const elapsed = Date.now() - started
    return [
      result.timedOut === true && result.exitCode === undefined && elapsed < 4000,
      `result ${JSON.stringify(result)}, resolved after ${elapsed} ms`,
    ]
  })

  // A corrected builtin writes through a memfd, which glibc 2.17 has no wrapper for.
  await check("executeShell 'shopt nullglob'", async () => {
    let output = ''
    const result = await executeShell({ command: 'shopt nullglob' }, (chunk) => (output += chunk))
    return [output === 'nullglob       \toff\n' && result.exitCode === 1, `output ${JSON.stringify(output)}, exitCode ${result.exitCode}`]
  })

  await check('Shell keeps state between runs', async () => {
    const shell = new Shell()
    try {
      await shell.run({ command: 'x=41; cd /tmp' })
      let output = ''
      const result = await shell.run({ command: 'echo $((x+1)) $PWD' }, (chunk) => (output += chunk))
      return [output === '42 /tmp\n' && result.exitCode === 0, `output ${JSON.stringify(output)}`]
    } finally {
      await shell.close()
    }
  })

  // One plain program: posix_spawn with a working directory, looked up at run time (glibc 2.29).
  await check("Shell runs '/bin/pwd' in cwd /tmp", async () => {
    const shell = new Shell()
    try {
      let output = ''
      const result = await shell.run({ command: '/bin/pwd', cwd: '/tmp' }, (chunk) => (output += chunk))
      return [output === '/tmp\n' && result.exitCode === 0, `output ${JSON.stringify(output)}, exitCode ${result.exitCode}`]
    } finally {
      await shell.close()
    }
  })

  await check("PtySession 'printf hello'", async () => {
    const session = new PtySession()
    const result = await session.start({ command: 'printf hello', timeoutMs: 20000 })
    const line = session.screen().lines[0]
    return [line === 'hello' && result.exitCode === 0, `lines[0] ${JSON.stringify(line)}, result ${JSON.stringify(result)}`]
  })

  // Input waits are read from the blocked system call's number, in the addon's architecture's
  // table. Under qemu-user the programs are the host's, of another architecture, so there the
  // first update comes after `yieldMs` instead (tools/smoke-targets.sh sets the variable).
  const foreignPrograms = process.env.SMOKE_FOREIGN_PROGRAMS === '1'
  await check(`ExecSessions 'read x; echo got $x'${foreignPrograms ? ' (input wait not read: foreign programs)' : ''}`, async () => {
    const sessions = new ExecSessions()
    try {
      const first = await sessions.start({ command: 'read x; echo got $x', yieldMs: foreignPrograms ? 1000 : 10000 })
      const last = await sessions.write(first.id, 'y\r', { yieldMs: 10000 })
      const waited = foreignPrograms ? first.running : first.waitingForInput !== undefined
      const ok = waited && last.running === false && last.exitCode === 0 && last.output.includes('got y')
      return [ok, `first ${JSON.stringify(first)}, last ${JSON.stringify(last)}`]
    } finally {
      await sessions.close()
    }
  })

  await check("VirtualTerminal.write('ab')", async () => {
    const terminal = new VirtualTerminal()
    const reply = terminal.write('ab')
    const line = terminal.screen().lines[0]
    terminal.dispose()
    return [reply === '' && line === 'ab', `reply ${JSON.stringify(reply)}, lines[0] ${JSON.stringify(line)}`]
  })

  await check("parseKey('\\x1b[A', false)", async () => {
    const key = parseKey('\x1b[A', false)
    return [key === 'up', JSON.stringify(key)]
  })
}

main()
  .catch((error) => report('smoke suite', false, described(error)))
  .finally(() => {
    console.log(`smoke: ${passed} passed, ${failed} failed`)
    process.exitCode = failed === 0 && passed > 0 ? 0 : 1
  })
