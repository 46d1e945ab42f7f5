// Minimizer benchmark: the per-call cost of minimizing 1 MB of output, measured as the p50 of
// Shell.run with the minimizer enabled minus the p50 of the same run with it off (budget ≤ 5 ms),
// the two runs taken in turn.
// The output is real: recorded transcripts from tests/fixtures/transcripts repeated to 1 MB, printed
// by a program named like the tool (a script on PATH that cats the file), so the run dispatches to
// that tool's filter and starts its program as it would start the real tool. A shell function
// would make brush fork the whole host for `cat`, a cost that grows with the host's memory and so
// lands more on the minimizing run, which holds more of it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { report, sampleInTurn, stats } from './lib.mjs'

const require = createRequire(import.meta.url)
const { Shell } = require('../index.js')
const here = dirname(fileURLToPath(import.meta.url))
const corpus = join(here, '..', 'tests', 'fixtures', 'transcripts')
const MB = 1024 * 1024

/** The output part of a recorded transcript (after `$ command`, `# exit N` and a blank line). */
function transcriptOutput(name) {
  const text = readFileSync(join(corpus, `${name}.txt`), 'utf8')
  return text.split('\n').slice(3).join('\n')
}

/** `text` repeated to just under `bytes` bytes. */
function repeatedTo(text, bytes) {
  const size = Buffer.byteLength(text)
  return text.repeat(Math.max(1, Math.floor(bytes / size)))
}

const dir = mkdtempSync(join(tmpdir(), 'sw-minimizer-bench-'))
try {
  const cases = [
    { name: 'cargo test', transcript: 'cargo-test-workspace', program: 'cargo', command: 'cargo test' },
    { name: 'git log', transcript: 'git-log', program: 'git', command: 'git log' },
    { name: 'ls -la', transcript: 'ls-la', program: 'ls', command: 'ls -la' },
    {
      name: 'vitest --reporter=verbose',
      transcript: 'vitest-verbose-repo',
      program: 'vitest',
      command: 'vitest run --reporter=verbose',
    },
  ]
  for (const c of cases) {
    const file = join(dir, `${c.transcript}.txt`)
    const output = repeatedTo(transcriptOutput(c.transcript), MB)
    writeFileSync(file, output)
    const bin = join(dir, `bin-${c.program}`)
    mkdirSync(bin)
    writeFileSync(join(bin, c.program), `#!/bin/sh\nexec cat '${file}'\n`)
    chmodSync(join(bin, c.program), 0o755)
    const path = `export PATH='${bin}':"$PATH"`
    const raw = new Shell()
    const minimizing = new Shell({ minimizer: { enabled: true } })
    await raw.run({ command: path })
    await minimizing.run({ command: path })
    const probe = await minimizing.run({ command: c.command })
    if (!probe.minimized) throw new Error(`${c.name}: the minimizer left the output unchanged`)
    const samples = await sampleInTurn(
      { off: () => raw.run({ command: c.command }), on: () => minimizing.run({ command: c.command }) },
      { iterations: 40, warmup: 5 },
    )
    const [off, on] = [stats(samples.off).p50, stats(samples.on).p50]
    report({
      bench: `minimizer, ${c.name}: Shell.run of ${(Buffer.byteLength(output) / MB).toFixed(2)} MB, p50 latency`,
      unit: 'ms',
      subject: 'minimizer on',
      results: { 'minimizer on': on, 'minimizer off': off },
      budget: { label: 'minimizer cost per MB', value: (on - off) / (Buffer.byteLength(output) / MB), unit: 'ms/MB', atMost: 5 },
      notes: `per-call minimizer cost ${(on - off).toFixed(2)} ms (budget 5 ms); ${probe.minimized.inputBytes} → ${probe.minimized.outputBytes} bytes with filter ${probe.minimized.filter}`,
    })
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
