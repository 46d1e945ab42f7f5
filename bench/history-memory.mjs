// Memory held by a Shell's history: runs SW_HISTORY_RUNS (default 100) commands that each print
// SW_HISTORY_RUN_BYTES (default 10 MB) on one Shell with the default options, with no onChunk, then
// prints one JSON line with the resident set before the runs, after them (current and peak, VmRSS and
// VmHWM) and the transcript bytes the history holds. Each entry keeps its last 2 000 000 bytes and
// all of them together 32 MiB, so the history should hold 32 MiB whatever the runs print. Run with
// `node --expose-gc bench/history-memory.mjs`; bench/history.bench.mjs reports it as a row.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Shell } = require('../index.js')

const RUNS = Number(process.env.SW_HISTORY_RUNS ?? 100)
const RUN_BYTES = Number(process.env.SW_HISTORY_RUN_BYTES ?? 10_000_000)

function statusKb(field) {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
  return match ? Number(match[1]) : NaN
}

const mb = (kb) => Math.round(kb / 1024)
const shell = new Shell()
// Warm up the session and its threads so the baseline includes them.
await shell.run({ command: 'true' })
globalThis.gc?.()
const beforeKb = statusKb('VmRSS')
const started = Date.now()
for (let i = 0; i < RUNS; i++) {
  const result = await shell.run({ command: `head -c ${RUN_BYTES} /dev/zero | tr '\\0' x` })
  if (result.exitCode !== 0) throw new Error(`run ${i} ended with ${JSON.stringify(result)}`)
}
const ms = Date.now() - started
globalThis.gc?.()
const afterKb = statusKb('VmRSS')
const peakKb = statusKb('VmHWM')
const entries = shell.history()
const heldBytes = entries.reduce((sum, e) => sum + e.output.length, 0)
const droppedBytes = entries.reduce((sum, e) => sum + e.truncatedBytes, 0)
console.log(
  JSON.stringify({
    bench: 'history-memory',
    runs: RUNS,
    runBytes: RUN_BYTES,
    ms,
    rssBeforeMb: mb(beforeKb),
    rssAfterMb: mb(afterKb),
    rssPeakMb: mb(peakKb),
    growthMb: mb(afterKb - beforeKb),
    heldBytes,
    droppedBytes,
  }),
)
