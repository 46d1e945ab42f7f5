// How soon a caller learns that a program waits for input (budget: ≤ 50 ms from the prompt being
// printed), against the output-quiet timer (300 ms) that agent tools use otherwise, in the same run.
//
// A Python loop prints a prompt that carries the time it was printed (CLOCK_REALTIME, ns) and reads
// a line. Each round types a line and waits until the next prompt is waiting: with
// `PtySession.waitForInput()` (the kernel's word), and with a quiet timer (no output for 300 ms, as
// the MCP server did). The latency is from the prompt's own timestamp to the moment the wait
// resolved. Also: an agent loop of 20 prompt/answer round trips, timed whole both ways.
import { createRequire } from 'node:module'
import { report, stats } from './lib.mjs'

const { PtySession } = createRequire(import.meta.url)('../index.js')

const QUIET_MS = 300
const ROUNDS = 40
const LOOP = 20
const PROGRAM = [
  'import sys, time',
  'while True:',
  '    sys.stdout.write(f"{time.time_ns()}> "); sys.stdout.flush()',
  '    if sys.stdin.readline() == "": break',
].join('\n')

/** A Python prompt loop in a fresh session; `lastOutput` follows its output. */
function startLoop() {
  const session = new PtySession()
  const watch = { lastOutput: Date.now() }
  const done = session.start({ argv: ['python3', '-u', '-c', PROGRAM], cols: 120, rows: 10 }, () => {
    watch.lastOutput = Date.now()
  })
  return { session, watch, done }
}

/** The time (ms since the epoch) the prompt under the cursor was printed. */
function promptTime(session) {
  const { lines, cursor } = session.screen()
  // The row shows "<ns>> " with its trailing blank trimmed.
  const stamp = /^(\d+)>$/.exec(lines[cursor.row])?.[1]
  if (!stamp) throw new Error(`no prompt under the cursor: ${JSON.stringify(lines[cursor.row])}`)
  return Number(BigInt(stamp) / 1_000_000n)
}

/** Waits, the way an agent tool without the kernel's word does, for QUIET_MS without output. */
async function quietWait(watch) {
  for (;;) {
    const quietFor = Date.now() - watch.lastOutput
    if (quietFor >= QUIET_MS) return
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS - quietFor))
  }
}

async function latencies(wait) {
  const run = startLoop()
  await run.session.waitForInput({ timeoutMs: 10_000 })
  const samples = []
  for (let i = 0; i < ROUNDS; i++) {
    run.session.write('x\r')
    run.watch.lastOutput = Date.now()
    await wait(run)
    samples.push(Date.now() - promptTime(run.session))
  }
  run.session.write('\x04')
  await run.done
  return samples
}

async function agentLoop(wait) {
  const run = startLoop()
  await run.session.waitForInput({ timeoutMs: 10_000 })
  const started = Date.now()
  for (let i = 0; i < LOOP; i++) {
    run.session.write(`answer ${i}\r`)
    run.watch.lastOutput = Date.now()
    await wait(run)
  }
  const elapsed = Date.now() - started
  run.session.write('\x04')
  await run.done
  return elapsed
}

const byKernel = (run) => run.session.waitForInput({ timeoutMs: 10_000 })
const byQuiet = (run) => quietWait(run.watch)

const kernel = stats(await latencies(byKernel))
const quiet = stats(await latencies(byQuiet))
report({
  bench: 'input wait: prompt printed → wait resolved (p50)',
  unit: 'ms',
  subject: 'waitForInput',
  results: { waitForInput: kernel.p50, 'quiet timer (300 ms)': quiet.p50 },
  notes: `${ROUNDS} prompts of a Python loop; waitForInput p90 ${kernel.p90} ms, quiet timer p90 ${quiet.p90} ms`,
  budget: { result: 'waitForInput', atMost: 50 },
})

report({
  bench: `input wait: an agent loop of ${LOOP} answers to a prompt`,
  unit: 'ms',
  subject: 'waitForInput',
  results: { waitForInput: await agentLoop(byKernel), 'quiet timer (300 ms)': await agentLoop(byQuiet) },
  notes: 'each answer typed, then the wait until the next prompt waits; the whole loop timed',
})
