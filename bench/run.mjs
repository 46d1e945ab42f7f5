// Runs every bench/*.bench.mjs in its own Node process, one after another, so that one benchmark's
// garbage and threads never skew the next; the whole set is repeated (`--reps N`, default 3), one
// repetition after the other, so that a burst of load on the machine hits one repetition of
// everything rather than every repetition of one benchmark. Each benchmark's table is shown as it
// runs; at the end, the rows of all repetitions are folded into a summary (median and min–max of
// every figure) and the table of budgets, which is also written as JSON for tools/bench-report.mjs.
//
//   node bench/run.mjs                 every benchmark, 3 repetitions, writes bench/results.json
//   node bench/run.mjs pty shell       a subset (written only with --out)
//   node bench/run.mjs --reps 1 --out /tmp/r.json keys
import { spawn } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { budgetTable, machine, summarize } from './summary.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { values: flags, positionals: wanted } = parseArgs({
  allowPositionals: true,
  options: { reps: { type: 'string', default: '3' }, out: { type: 'string' } },
})
const reps = Number(flags.reps)
if (!Number.isInteger(reps) || reps < 1) throw new RangeError(`--reps must be a whole number ≥ 1, got ${flags.reps}`)
const out = flags.out ?? (wanted.length === 0 ? join(here, 'results.json') : undefined)

const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort()

/** Runs one benchmark file, passing its output through; resolves with its rows and exit status. */
function runBench(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(here, file)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => {
      text += chunk
      process.stdout.write(chunk)
    })
    child.on('close', (status) => resolve({ status, rows: rowsOf(text) }))
  })
}

/** The machine-readable rows (bench/lib.mjs `report`) among a benchmark's output lines. */
function rowsOf(text) {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{"bench"'))
    .map((line) => JSON.parse(line))
}

const started = Date.now()
const loadAtStart = Number(loadavg()[0].toFixed(1))
const runs = []
let failed = 0
for (let rep = 1; rep <= reps; rep++) {
  for (const file of files) {
    console.log(`\n=== ${file}, repetition ${rep} of ${reps} ===`)
    const { status, rows } = await runBench(file)
    if (status !== 0) {
      console.error(`bench ${file} failed with exit code ${status}`)
      failed++
    }
    runs.push({ file, rep, status, rows })
  }
}
const seconds = Math.round((Date.now() - started) / 1000)

const rows = summarize(runs.flatMap((run) => run.rows.map((row) => ({ ...row, file: run.file }))))
const results = { machine: machine(loadAtStart), reps, seconds, files, failed, rows }
console.log(`\n${budgetTable(results)}`)
console.log(`\n${reps} repetition(s) of ${files.length} benchmark(s) in ${seconds} s; ${failed} failed run(s)`)
if (out) {
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`)
  console.log(`results written to ${out} (tools/bench-report.mjs puts them in README.md)`)
}
process.exit(failed ? 1 : 0)
