// A Shell's history under output: 100 runs printing 3 MB each (300 MB in all) on one Shell with the
// default options, in a fresh process (bench/history-memory.mjs), reporting the transcript bytes the
// history keeps (budget: 32 MiB in all by default) and how much the resident set grew.
import { spawnSync } from 'node:child_process'
import { report } from './lib.mjs'

const RUN_BYTES = 3_000_000
const child = spawnSync(process.execPath, ['--expose-gc', new URL('./history-memory.mjs', import.meta.url).pathname], {
  encoding: 'utf8',
  env: { ...process.env, SW_HISTORY_RUNS: '100', SW_HISTORY_RUN_BYTES: String(RUN_BYTES) },
  timeout: 600_000,
})
if (child.status !== 0) throw new Error(`history memory check failed: ${child.error ?? child.stderr}`)
const figures = JSON.parse(child.stdout.trim().split('\n').pop())
const MiB = 2 ** 20
report({
  bench: `Shell history, 100 runs × ${RUN_BYTES / 1e6} MB (default options)`,
  unit: 'MiB',
  subject: 'RSS growth',
  results: { 'RSS growth': figures.growthMb },
  notes: { rssBeforeMb: figures.rssBeforeMb, rssAfterMb: figures.rssAfterMb, rssPeakMb: figures.rssPeakMb, droppedBytes: figures.droppedBytes },
  budget: [
    { label: 'transcripts kept', value: figures.heldBytes / MiB, unit: 'MiB', atMost: 32 },
    // Before the total budget the same runs grew it by 200 MiB; what is above the 32 MiB kept is the
    // allocator's and V8's.
    { result: 'RSS growth', atMost: 64 },
  ],
})
