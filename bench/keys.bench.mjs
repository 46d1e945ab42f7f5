// parseKey cost per call from JS (budget: ≤ 120 ns), over a mix of the sequences a TUI receives:
// text, C0 controls, legacy CSI/SS3 keys, xterm modified keys, Kitty CSI u events and non-keys; and
// its cost for sequences it has not seen before (each answered by the addon, not from the memo that
// index.js keeps of the sequences seen).
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

// Kitty CSI u presses of distinct keys and modifiers: more than the memo keeps, so each is new to it.
const FRESH = Array.from({ length: CALLS_PER_SAMPLE }, (_, i) => `\x1b[${97 + (i % 5000)};${2 + Math.floor(i / 5000)}u`)
let freshRound = 0

function parseFresh() {
  // A sequence is seen again only after 8 000 others, by when the memo has started afresh.
  const shift = (freshRound++ % 2) * (CALLS_PER_SAMPLE / 2)
  let found = 0
  for (let i = 0; i < CALLS_PER_SAMPLE; i++) {
    if (sw.parseKey(FRESH[(i + shift) % CALLS_PER_SAMPLE], false) !== null) found++
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
  notes: `median of 100 samples × ${CALLS_PER_SAMPLE} calls over ${MIX.length} sequences; budget ≤ 120 ns/call`,
  budget: { result: 'shellwright', atMost: 120 },
})

const fresh = nsPerCall(await sample(parseFresh, { iterations: 30, warmup: 4 }))
report({
  bench: 'parseKey per call from JS, sequences not seen before',
  unit: 'ns/call',
  subject: 'shellwright',
  results: { shellwright: fresh },
  notes: `median of 30 samples × ${CALLS_PER_SAMPLE} distinct Kitty CSI u sequences (the addon's cost)`,
})

const match = nsPerCall(await sample(matchMix, { iterations: 100, warmup: 10 }))
report({
  bench: 'matchesKey per call from JS',
  unit: 'ns/call',
  subject: 'shellwright',
  results: { shellwright: match },
  notes: `median of 100 samples × ${CALLS_PER_SAMPLE} calls over ${MIX.length} sequences`,
})

if (parse > 120) {
  // A debug build is several times slower; `npm run bench` measures the release build.
  console.error(`warning: parseKey at ${parse.toFixed(0)} ns/call is over the 120 ns budget`)
}
