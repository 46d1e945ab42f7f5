// What keeps Node's event loop alive: a pending promise of the addon does, as a pending promise of
// Node's own APIs would, and an idle Shell, PtySession or Process does not. Each case runs in a
// Node process of its own with nothing else to keep it alive, and must end by itself.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..')

/** Runs `script` (CommonJS, with `sw` the addon) in a fresh Node; resolves with its output and status. */
function runNode(script: string, timeoutMs = 20_000): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', `const sw = require(${JSON.stringify(ROOT)});\n${script}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`node did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`))
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ stdout, stderr, code })
    })
  })
}

describe('the event loop', () => {
  it('stays alive for a queued run with no handle of its own, and the process then ends by itself', async () => {
    const { stdout, stderr, code } = await runNode(`
      const shell = new sw.Shell()
      shell.run({ command: 'sleep 0.3; echo done' }, (chunk) => process.stdout.write(chunk))
        .then((result) => console.log('settled', result.exitCode))
    `)
    expect(stderr).toBe('')
    expect(stdout).toBe('done\nsettled 0\n')
    expect(code).toBe(0)
  })

  it('stays alive for each of many runs in turn, and not after the last', async () => {
    const { stdout, code } = await runNode(`
      const shell = new sw.Shell()
      ;(async () => {
        let codes = ''
        for (let i = 0; i < 50; i++) codes += (await shell.run({ command: 'exit ' + (i % 3), cwd: '/tmp' })).exitCode
        console.log(codes)
      })()
    `)
    expect(stdout).toBe(`${'012'.repeat(17).slice(0, 50)}\n`)
    expect(code).toBe(0)
  })

  it("stays alive for a promise settled from the addon's runtime (a process's exit)", async () => {
    const { stdout, code } = await runNode(`
      const child = require('node:child_process').spawn('sleep', ['0.3'], { stdio: 'ignore' })
      child.unref()
      const process_ = sw.Process.fromPid(child.pid)
      process_.waitForExit({ timeoutMs: 10000 }).then((exited) => console.log('exited', exited))
    `)
    expect(stdout).toBe('exited true\n')
    expect(code).toBe(0)
  })

  it('is not kept alive by an idle Shell', async () => {
    const { stdout, code } = await runNode(`
      const shell = new sw.Shell()
      shell.run({ command: 'echo warm', cwd: '/tmp' }).then(() => console.log('idle now'))
    `)
    expect(stdout).toBe('idle now\n')
    expect(code).toBe(0)
  })
})
