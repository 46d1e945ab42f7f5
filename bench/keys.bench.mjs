// parseKey cost per call from JS (budget: ≤ 1 µs), over a mix of the sequences a TUI receives:
// text, C0 controls, legacy CSI/SS3 keys, xterm modified keys, Kitty CSI u events and non-keys.
import { createRequire } from 'node:module'
import { report, sample, stats } from './lib.mjs'

const sw = createRequire(import.meta.url)('../index.js')

const MIX = [
  'a', 'Z', ' ', '\r', '\x7f', '\x03', '\x1b',
  '\x1b[A', '\x1bOB', '\x1b[5~', '\x1b[Z', '\x1b[[A', '\x1b[7^',
  '\x1b[1;5C', '\x1b[3;2~', '\x1b[24;5~', '\x1b[27;5;109~',
  '\x1ba', '\x1b\x1b[A',
  '\x1b[97;5u', '\x1b[1089::99;5u', '\x1b[57399;129u', '\x1b[99;5:3u',
  '\x1b[200~', 'hello',
]
const CALLS_PER_SAMPLE = 20_000

function parseMix() {
  let found = 0
  for (let i = 0; i < CALLS_PER_SAMPLE; i++) {
    if (sw.parseKey(MIX[i % MIX.length], false) !== null) found++
  }
  return found
}

function matchMix() {
  let found = 0
  for (let i = 0; i < CALLS_PER_SAMPLE; i++) {
    if (sw.matchesKey(MIX[i % MIX.length], 'ctrl+c', false)) found++
  }
  return found
}

const nsPerCall = (samples) => (stats(samples).p50 * 1e6) / CALLS_PER_SAMPLE

const parse = nsPerCall(await sample(parseMix, { iterations: 100, warmup: 10 }))
report({
  bench: 'parseKey per call from JS',
  unit: 'ns/call',
  subject: 'shellwright',
  results: { shellwright: parse },
  notes: `median of 100 samples × ${CALLS_PER_SAMPLE} calls over ${MIX.length} sequences; budget ≤ 1000 ns/call`,
  budget: { result: 'shellwright', atMost: 1000 },
})

const match = nsPerCall(await sample(matchMix, { iterations: 100, warmup: 10 }))
report({
  bench: 'matchesKey per call from JS',
  unit: 'ns/call',
  subject: 'shellwright',
  results: { shellwright: match },
  notes: `median of 100 samples × ${CALLS_PER_SAMPLE} calls over ${MIX.length} sequences`,
})

if (parse > 1000) {
  // A debug build is several times slower; `npm run bench` measures the release build.
  console.error(`warning: parseKey at ${parse.toFixed(0)} ns/call is over the 1 µs budget`)
}
