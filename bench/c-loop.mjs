// A latency row's measurement without a runtime: the same steps done by a small C program in
// bench/c-loops/ (no event loop, JS engine or emulator in the way), reported beside the
// contenders so that a reader can see how much of a figure is the machine's own — its kernel,
// wake-ups and scheduling — and which budgets this machine leaves room for. It is a reference,
// not a strict bound: it runs in a process of its own, whose threads the scheduler places anew.
// Each program is compiled with the system's C compiler the first time it is asked for; without
// one (or off Linux and macOS) the rows carry only their contenders.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const sources = join(dirname(fileURLToPath(import.meta.url)), 'c-loops')
const compiled = new Map()
let buildDir

/** The path of `name`'s compiled program, or null when it cannot be built here. */
function program(name) {
  if (compiled.has(name)) return compiled.get(name)
  let path = null
  if (process.platform === 'linux' || process.platform === 'darwin') {
    if (!buildDir) {
      buildDir = mkdtempSync(join(tmpdir(), 'shellwright-c-loop-'))
      process.on('exit', () => rmSync(buildDir, { recursive: true, force: true }))
    }
    const output = join(buildDir, name)
    const cc = process.env.CC ?? 'cc'
    // forkpty(3) lives in libutil on Linux, in libc on macOS.
    const libraries = process.platform === 'linux' ? ['-lutil'] : []
    const build = spawnSync(cc, ['-O2', '-o', output, join(sources, `${name}.c`), ...libraries], { encoding: 'utf8' })
    if (build.status === 0) path = output
    else console.log(`C loop ${name}: not measured (${cc}: ${build.error?.message ?? build.stderr.trim()})`)
  }
  compiled.set(name, path)
  return path
}

/**
 * Runs the C loop `name` (bench/c-loops/NAME.c) for `iterations` timed rounds after `warmup`
 * untimed ones; returns their samples in milliseconds (as bench/lib.mjs `sample` does), or null
 * when there is no C loop here. It blocks the event loop while it runs: call it between timed
 * samples, never during them.
 */
export function cLoop(name, { iterations, warmup }) {
  const path = program(name)
  if (!path) return null
  const run = spawnSync(path, [String(iterations), String(warmup)], { encoding: 'utf8', timeout: 120_000 })
  if (run.status !== 0) throw new Error(`C loop ${name} failed (${run.status ?? run.signal}): ${run.stderr}`)
  return JSON.parse(run.stdout).samples.map((us) => us / 1000)
}
