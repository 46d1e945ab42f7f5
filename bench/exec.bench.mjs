// An agent driving a Python REPL through exec sessions: 20 write_stdin round trips (type a line, get
// the update with its answer), timed whole. ExecSessions returns each update when the REPL waits
// for input again (the kernel's word); the agent tools that copy Codex's exec_command decide it with
// a timer — here the same loop on a PtySession that waits for 300 ms without output after each line,
// in the same run. Both loops check every answer, so neither can win by returning early.
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { report } from './lib.mjs'

const { ExecSessions, PtySession } = createRequire(import.meta.url)('../index.js')

const ROUND_TRIPS = 20
const QUIET_MS = 300
const LONG = { yieldMs: 15_000 }

function expectAnswer(text, i) {
  if (!text.includes(`\n${i * 7}\n`)) throw new Error(`round trip ${i}: no answer ${i * 7} in ${JSON.stringify(text)}`)
}

/** The loop through ExecSessions: each write resolves when the REPL waits for its next line. */
async function execLoop() {
  const sessions = new ExecSessions()
  const { id } = await sessions.start({ command: 'python3 -q', ...LONG })
  const started = performance.now()
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const update = await sessions.write(id, `print(${i}*7)\r`, LONG)
    if (!update.waitingForInput) throw new Error(`round trip ${i} returned without an input wait`)
    expectAnswer(`${update.output}\n`, i)
  }
  const elapsed = performance.now() - started
  await sessions.close()
  return elapsed
}

/** The same loop decided by a quiet timer: after each line, wait until QUIET_MS pass without output. */
async function quietLoop() {
  const session = new PtySession()
  let output = ''
  let lastOutput = performance.now()
  const done = session.start({ command: 'python3 -q', cols: 120, rows: 40 }, (chunk) => {
    output += chunk
    lastOutput = performance.now()
  })
  await session.waitForInput({ timeoutMs: 15_000 })
  const quiet = async () => {
    for (let left = QUIET_MS; left > 0; left = QUIET_MS - (performance.now() - lastOutput)) {
      await new Promise((resolve) => setTimeout(resolve, left))
    }
  }
  const started = performance.now()
  for (let i = 0; i < ROUND_TRIPS; i++) {
    output = ''
    session.write(`print(${i}*7)\r`)
    lastOutput = performance.now()
    await quiet()
    expectAnswer(output.replaceAll('\r\n', '\n'), i)
  }
  const elapsed = performance.now() - started
  session.kill()
  await done
  return elapsed
}

const exec = await execLoop()
const quiet = await quietLoop()
report({
  bench: `exec sessions: an agent loop of ${ROUND_TRIPS} write_stdin round trips to a Python REPL`,
  unit: 'ms',
  subject: 'ExecSessions',
  results: { ExecSessions: exec, 'quiet timer (300 ms)': quiet },
  notes: `each round trip types print(i*7) and returns with the answer; ExecSessions ${(exec / ROUND_TRIPS).toFixed(1)} ms a round trip`,
  budget: { label: 'ExecSessions round trip (mean)', value: exec / ROUND_TRIPS, unit: 'ms', atMost: 50 },
})
