// Memory check for bench/pty.bench.mjs (run in its own process so the peak belongs to this stream
// alone): streams SW_PTY_MEMORY_BYTES (default 1 GB) of text lines through one PtySession with the
// emulator on and an onChunk that only counts, then prints one JSON line with the byte count,
// the resident set before streaming and its peak (VmHWM) — the peak should stay near the baseline
// plus the scrollback, whatever the stream's size.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { PtySession } = require('../index.js')

const BYTES = Number(process.env.SW_PTY_MEMORY_BYTES ?? 1 << 30)

function statusKb(field) {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
  return match ? Number(match[1]) : NaN
}

// Warm up the addon and its threads so the baseline includes them.
await new PtySession().start({ command: 'true' })
const baselineKb = statusKb('VmRSS')
let chars = 0
const started = Date.now()
const session = new PtySession()
const result = await session.start(
  { command: `stty raw -echo; yes 'the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ' | head -c ${BYTES}` },
  (chunk) => {
    chars += chunk.length
  },
)
const seconds = (Date.now() - started) / 1000
console.log(
  JSON.stringify({
    bytes: chars,
    exitCode: result.exitCode,
    seconds,
    baselineRssMb: baselineKb / 1024,
    peakRssMb: statusKb('VmHWM') / 1024,
    screenRows: session.screen().rows,
  }),
)
