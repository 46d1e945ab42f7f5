// VirtualTerminal benchmarks: parse throughput against @xterm/headless on the same
// generated stream (text, SGR 16/256/truecolour, cursor addressing, scroll regions, wide characters,
// full-screen redraws; see terminal-stream.mjs), and snapshot() with 10 000 scrollback lines against
// @xterm/addon-serialize. Both terminals get the same bytes in the same 64 KiB chunks.
import { createRequire } from 'node:module'
import { report, sample, stats } from './lib.mjs'
import { generateEscapeHeavyStream, generatePlainText, generateStream } from './terminal-stream.mjs'

const require = createRequire(import.meta.url)
const sw = require('../index.js')
const { Terminal: Xterm } = require('@xterm/headless')
const { SerializeAddon } = require('@xterm/addon-serialize')

const COLS = 120
const ROWS = 40
const CHUNK = 64 * 1024
const mixed = generateStream({ size: 8 << 20, cols: COLS, rows: ROWS })

/** The stream in the 64 KiB writes both terminals get. */
function chunked(stream) {
  const chunks = []
  for (let i = 0; i < stream.length; i += CHUNK) chunks.push(stream.subarray(i, i + CHUNK))
  return chunks
}

function parseShellwright(chunks) {
  const term = new sw.VirtualTerminal({ cols: COLS, rows: ROWS, scrollback: 10_000 })
  for (const chunk of chunks) term.write(chunk)
  // Freed as xterm's is below, not left for the collector with the next iteration's memory.
  term.dispose()
}

function parseXterm(chunks) {
  const term = new Xterm({ cols: COLS, rows: ROWS, scrollback: 10_000, allowProposedApi: true })
  for (const chunk of chunks) term.write(chunk)
  // xterm parses asynchronously: the callback of an empty write runs once everything before it is done.
  return new Promise((resolve) => term.write('', () => (term.dispose(), resolve())))
}

const parseOptions = { iterations: 8, warmup: 3 }
/** Parse throughput of both terminals on `stream`, reported as the row `bench`. */
async function parseRow(bench, stream, what) {
  const chunks = chunked(stream)
  const megabytes = stream.length / 1e6
  const mine = stats(await sample(() => parseShellwright(chunks), parseOptions))
  const theirs = stats(await sample(() => parseXterm(chunks), parseOptions))
  report({
    bench,
    unit: 'MB/s',
    better: 'higher',
    subject: 'VirtualTerminal',
    results: { VirtualTerminal: megabytes / (mine.p50 / 1000), '@xterm/headless': megabytes / (theirs.p50 / 1000) },
    notes: `${stream.length} bytes of ${what}, ${COLS}x${ROWS}, 64 KiB writes, median of ${parseOptions.iterations}; budget ≥ 4×`,
    budget: { vs: '@xterm/headless', atLeast: 4 },
  })
}

await parseRow('terminal.parse', mixed, 'a busy session')
await parseRow(
  'terminal.parse, escape-heavy stream',
  generateEscapeHeavyStream({ size: 8 << 20, cols: COLS, rows: ROWS }),
  'escape-heavy output (colour per word, progress bars, cursor moves and erases, scroll regions on the alternate screen, wide characters)',
)
await parseRow('terminal.parse, plain text', generatePlainText({ size: 8 << 20 }), 'plain text lines')

// Snapshot: 10 000 scrollback lines of coloured text plus a full screen.
let history = ''
for (let i = 0; i < 10_000 + ROWS; i++) {
  history += `\x1b[3${i % 8}mline ${i}\x1b[0m ${'lorem ipsum dolor '.repeat(1 + (i % 5))}\x1b[1;38;5;${i % 256}mend\x1b[0m\r\n`
}
const vt = new sw.VirtualTerminal({ cols: COLS, rows: ROWS, scrollback: 10_000 })
vt.write(history)
const xt = new Xterm({ cols: COLS, rows: ROWS, scrollback: 10_000, allowProposedApi: true })
const serializer = new SerializeAddon()
xt.loadAddon(serializer)
await new Promise((resolve) => xt.write(history, resolve))

const snapshotOptions = { iterations: 30, warmup: 5 }
const snapMine = stats(await sample(() => vt.snapshot(), snapshotOptions))
const snapTheirs = stats(await sample(() => serializer.serialize(), snapshotOptions))
report({
  bench: 'terminal.snapshot',
  unit: 'ms',
  better: 'lower',
  subject: 'VirtualTerminal.snapshot',
  results: { 'VirtualTerminal.snapshot': snapMine.p50, '@xterm/addon-serialize': snapTheirs.p50 },
  notes: `10 000 scrollback lines + ${ROWS} rows, ${COLS} columns, median of ${snapshotOptions.iterations}; budget ≥ 10×`,
  budget: { vs: '@xterm/addon-serialize', atLeast: 10 },
})
