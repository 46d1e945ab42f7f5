// The addon in the life of its host: what keeps Node's event loop alive (a pending promise of the
// addon does, as a pending promise of Node's own APIs would; an idle Shell does not), and worker
// threads that load it, run in it and exit, one after another or side by side. Each case runs in
// a Node process of its own, which must end by itself, with status 0.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..')

/**
 * Runs `script` (CommonJS) in a fresh Node, with `sw` the addon unless `mainLoads` is false (then
 * only the workers it starts load it); resolves with its output and status.
 */
function runNode(
  script: string,
  { mainLoads = true, timeoutMs = 20_000 } = {},
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const prelude = mainLoads ? `const sw = require(${JSON.stringify(ROOT)});\n` : ''
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', `${prelude}${script}`], {
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
    const ended = await runNode(`
      const shell = new sw.Shell()
      shell.run({ command: 'sleep 0.3; echo done' }, (chunk) => process.stdout.write(chunk))
        .then((result) => console.log('settled', result.exitCode))
    `)
    expect(ended).toEqual({ stdout: 'done\nsettled 0\n', stderr: '', code: 0 })
  })

  it('stays alive for each of many runs in turn, and not after the last', async () => {
    const ended = await runNode(`
      const shell = new sw.Shell()
      ;(async () => {
        let codes = ''
        for (let i = 0; i < 50; i++) codes += (await shell.run({ command: 'exit ' + (i % 3), cwd: '/tmp' })).exitCode
        console.log(codes)
      })()
    `)
    expect(ended).toEqual({ stdout: `${'012'.repeat(17).slice(0, 50)}\n`, stderr: '', code: 0 })
  })

  it("stays alive for a promise settled from the addon's runtime (a process's exit)", async () => {
    const ended = await runNode(`
      const child = require('node:child_process').spawn('sleep', ['0.3'], { stdio: 'ignore' })
      child.unref()
      const process_ = sw.Process.fromPid(child.pid)
      process_.waitForExit({ timeoutMs: 10000 }).then((exited) => console.log('exited', exited))
    `)
    expect(ended).toEqual({ stdout: 'exited true\n', stderr: '', code: 0 })
  })

  it('is not kept alive by an idle Shell', async () => {
    const ended = await runNode(`
      const shell = new sw.Shell()
      shell.run({ command: 'echo warm', cwd: '/tmp' }).then(() => console.log('idle now'))
    `)
    expect(ended).toEqual({ stdout: 'idle now\n', stderr: '', code: 0 })
  })
})

describe('worker threads', () => {
  /** A worker that loads the addon, runs a queued and an in-place command and a PTY, and reports. */
  const WORKER = `
    const { parentPort } = require('node:worker_threads')
    const sw = require(${JSON.stringify(ROOT)})
    ;(async () => {
      const shell = new sw.Shell()
      const queued = await shell.run({ command: 'echo queued', cwd: '/tmp' }, () => {})
      const inPlace = await shell.run({ command: 'echo in-place' })
      let screen = ''
      const pty = new sw.PtySession()
      const exit = await pty.start({ command: 'echo pty' }, (chunk) => (screen += chunk))
      parentPort.postMessage([queued.exitCode, inPlace.exitCode, exit.exitCode, screen.includes('pty')].join(' '))
    })()
  `
  /** Starts a worker running WORKER, in the runner script; resolves with it and its report. */
  const START = `
    const { Worker } = require('node:worker_threads')
    const start = () => new Promise((resolve, reject) => {
      const worker = new Worker(${JSON.stringify(WORKER)}, { eval: true })
      worker.once('message', (report) => resolve({ worker, report }))
      worker.once('error', reject)
    })
  `

  it('load the addon one after another, each after the last one exited (the main thread never loads it)', async () => {
    const ended = await runNode(
      `${START}
      ;(async () => {
        for (let i = 0; i < 3; i++) {
          const { worker, report } = await start()
          console.log(report)
          await worker.terminate()
        }
      })()`,
      { mainLoads: false },
    )
    expect(ended).toEqual({ stdout: '0 0 0 true\n0 0 0 true\n0 0 0 true\n', stderr: '', code: 0 })
  })

  it('load it side by side, and a new one starts after the first exited while another runs', async () => {
    const ended = await runNode(
      `${START}
      ;(async () => {
        const first = await start()
        const second = await start()
        await first.worker.terminate()
        const third = await start()
        console.log([first.report, second.report, third.report].join(' | '))
        await second.worker.terminate()
        await third.worker.terminate()
      })()`,
      { mainLoads: false },
    )
    expect(ended).toEqual({ stdout: '0 0 0 true | 0 0 0 true | 0 0 0 true\n', stderr: '', code: 0 })
  })

  it('end quietly when one is terminated while its run is pending, the run ending after it', async () => {
    // The run outlives the worker (and so the last environment using the addon): its end must not
    // reach for anything that environment took with it.
    const ended = await runNode(
      `
      const { Worker } = require('node:worker_threads')
      const { readdirSync, readFileSync } = require('node:fs')
      const worker = new Worker(\`
        const { parentPort } = require('node:worker_threads')
        const sw = require(${JSON.stringify(ROOT)})
        const shell = new sw.Shell()
        shell.run({ command: 'echo warm', cwd: '/tmp' }).then(() => {
          shell.run({ command: 'sleep 0.2345; echo late' }, () => {})
          parentPort.postMessage('started')
        })
      \`, { eval: true })
      const sleeping = () => readdirSync('/proc').some((pid) => {
        try { return readFileSync('/proc/' + pid + '/cmdline', 'utf8') === 'sleep\\u00000.2345\\u0000' } catch { return false }
      })
      worker.once('message', async () => {
        await worker.terminate()
        const deadline = Date.now() + 5000
        while (sleeping() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
        // What follows the sleep's end, on the session's thread, takes microseconds: a window.
        setTimeout(() => console.log('done'), 300)
      })`,
      { mainLoads: false },
    )
    expect(ended).toEqual({ stdout: 'done\n', stderr: '', code: 0 })
  })
})
