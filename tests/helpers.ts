// Shared test helpers: output collection, bounded polling and /proc checks.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { expect } from 'vitest'

/** A callback that appends every chunk to `text`. */
export function collector() {
  const out = { text: '', chunks: 0, push: (chunk: string) => {} }
  out.push = (chunk: string) => {
    out.text += chunk
    out.chunks++
  }
  return out
}

/** Polls `condition` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** The size of `file` in bytes, 0 while it does not exist. */
export function fileSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0
}

/**
 * Asserts that `file` does not change size over `windowMs` from now. Call it after a run settled:
 * the contract is that nothing the run started still writes, so any growth is a survivor. This is a
 * measurement window, not synchronisation.
 */
export async function expectFileStopsGrowing(file: string, windowMs = 500): Promise<void> {
  const settled = fileSize(file)
  await new Promise((resolve) => setTimeout(resolve, windowMs))
  expect(fileSize(file)).toBe(settled)
}

/** Whether a process is running: present in /proc and not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** Every integer printed on its own line in `text`. */
export function pidsIn(text: string): number[] {
  return text
    .split('\n')
    .filter((line) => /^\d+$/.test(line.trim()))
    .map(Number)
}

/** Asserts that `fn` throws a TypeError with exactly `message` and Node's ERR_INVALID_ARG_TYPE code. */
export function expectTypeError(fn: () => unknown, message: string): void {
  expectThrown(fn, TypeError, 'ERR_INVALID_ARG_TYPE', message)
}

/** Asserts that `fn` throws a RangeError with exactly `message` and Node's ERR_INVALID_ARG_VALUE code. */
export function expectRangeError(fn: () => unknown, message: string): void {
  expectThrown(fn, RangeError, 'ERR_INVALID_ARG_VALUE', message)
}

function expectThrown(fn: () => unknown, kind: ErrorConstructor, code: string, message: string): void {
  let thrown: unknown
  try {
    fn()
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(kind)
  expect((thrown as Error).message).toBe(message)
  expect((thrown as { code?: string }).code).toBe(code)
}

/** How a Shell run ended — its result without where the session is and how long it took — to compare exactly. */
export function outcomeOf(result: { exitCode?: number; cancelled: boolean; timedOut: boolean }) {
  const { exitCode, cancelled, timedOut } = result
  return exitCode === undefined ? { cancelled, timedOut } : { exitCode, cancelled, timedOut }
}

/**
 * Whether `pid` is the host's guardian: the one process a host keeps for its whole life, which ends
 * what its runs left once the host is gone. Leak checks skip it.
 */
export function isGuardian(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('shellwright-guardian')
  } catch {
    return false
  }
}
