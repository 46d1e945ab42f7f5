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

describe('shellwright exec', () => {
  it('prints the output and exits with the exit code, the reason on stderr', async () => {
    const { out, done } = runCli(['exec', '--', 'echo hi; exit 3'])
    expect(await done).toBe(3)
    expect(out).toEqual({ stdout: 'hi\n', stderr: '[exited 3]\n' })
  })

  it('prints each update until the program exits: every line once', async () => {
    const { out, done } = runCli(['exec', '--yield', '100', '--', 'for i in 1 2 3; do echo "line $i"; sleep 0.2; done'])
    expect(await done).toBe(0)
    expect(out).toEqual({ stdout: 'line 1\nline 2\nline 3\n', stderr: '[exited 0]\n' })
  })

  it('stops where the program waits for input, says what it asks and kills it', async () => {
    const { out, done } = runCli(['exec', '--', "read -r -p 'name? ' x; echo \"hi $x\""])
    expect(await done).toBe(0)
    expect(out).toEqual({ stdout: 'name?\n', stderr: '[waiting for input: "name? "]\n' })
  })

  it('--json prints each update as a JSON line', async () => {
    const { out, done } = runCli(['exec', '--json', '--', 'echo hi'])
    expect(await done).toBe(0)
    expect(out.stderr).toBe('')
    const lines = out.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0])).toMatchObject({ id: 1, output: 'hi', running: false, exitCode: 0, truncatedBytes: 0 })
  })

  it('rejects bad arguments with exit code 2, and a command that cannot start with 1', async () => {
    const missing = runCli(['exec'])
    expect(await missing.done).toBe(2)
    expect(missing.out.stderr).toMatch(/^shellwright exec: missing command\n/)
    const badYield = runCli(['exec', '--yield', 'soon', '--', 'true'])
    expect(await badYield.done).toBe(2)
    expect(badYield.out.stderr).toMatch(/^shellwright exec: --yield must be a number of milliseconds, got 'soon'\n/)
  })

  it('Ctrl+C kills the program and exits 130', async () => {
    const { child, out, done } = runCli(['exec', '--yield', '100', '--', 'echo $$; exec sleep 30'])
    await waitUntil(() => pidsIn(out.stdout).length === 1, 5000, 'pid')
    const [pid] = pidsIn(out.stdout)
    child.kill('SIGINT')
    expect(await done).toBe(130)
    expect(isRunning(pid)).toBe(false)
  })
})
