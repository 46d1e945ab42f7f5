import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isRunning, pidsIn, waitUntil } from './helpers.js'

const cli = join(__dirname, '..', 'packages', 'cli', 'bin', 'shellwright.js')

function runCli(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  const out = { stdout: '', stderr: '' }
  child.stdout.on('data', (d) => (out.stdout += d))
  child.stderr.on('data', (d) => (out.stderr += d))
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return { child, out, done }
}

describe('shellwright run', () => {
  it('streams output and exits with the command exit code', async () => {
    const { out, done } = runCli(['run', 'echo hello; echo oops >&2; exit 3'])
    expect(await done).toBe(3)
    expect(out.stdout).toBe('hello\noops\n')
  })

  it('honours --cwd and --timeout', async () => {
    const cwd = runCli(['run', '--cwd', '/tmp', 'pwd'])
    expect(await cwd.done).toBe(0)
    expect(cwd.out.stdout).toBe('/tmp\n')
    const slow = runCli(['run', '--timeout', '200', 'sleep 5'])
    expect(await slow.done).toBe(124)
    expect(slow.out.stderr).toBe('shellwright run: timed out after 200 ms\n')
  })

  it('rejects bad arguments with exit code 2', async () => {
    const missing = runCli(['run'])
    expect(await missing.done).toBe(2)
    expect(missing.out.stderr).toMatch(/^shellwright run: missing command/)
    const badTimeout = runCli(['run', '--timeout', 'soon', 'true'])
    expect(await badTimeout.done).toBe(2)
  })

  it('Ctrl+C cancels the run, kills what it started and exits 130', async () => {
    const { child, out, done } = runCli(['run', "sh -c 'echo $$; exec sleep 30'"])
    await waitUntil(() => pidsIn(out.stdout).length === 1, 5000, 'pid')
    const [pid] = pidsIn(out.stdout)
    child.kill('SIGINT')
    expect(await done).toBe(130)
    await waitUntil(() => !isRunning(pid), 2000, 'sleep gone')
  })
})
