// PTY benchmarks: PtySession against node-pty in the same process — throughput of a
// 100 MB text stream with the terminal emulator on (every PtySession feeds its emulator; node-pty
// has none), with the byte counts each delivered (node-pty is known to lose the tail of fast output
// at exit), and the echo round trip through `stty -echo; exec cat`. Then the memory check: 1 GB
// streamed through one session in a separate process (bench/pty-memory.mjs), reporting peak RSS.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { cLoop } from './c-loop.mjs'
import { report, sample, stats, until } from './lib.mjs'

const require = createRequire(import.meta.url)
const { PtySession } = require('../index.js')
const nodePty = require('node-pty')

const STREAM_BYTES = Number(process.env.SW_PTY_BENCH_BYTES ?? 100_000_000)
const ROUNDS = 3
/** How long node-pty gets after its exit event for late data (ours needs none: it resolves last). */
const NODE_PTY_LATE_MS = 200

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-pty-bench-'))
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }))

/** A text file of exactly `size` bytes: numbered log lines. */
function textFile(size) {
  const parts = []
  let length = 0
  for (let i = 0; length < size; i++) {
    const line = `${String(i).padStart(9, '0')} INFO build step ${i % 97} finished in ${i % 1000} ms ok\n`
    parts.push(line)
    length += line.length
  }
  const text = parts.join('').slice(0, size)
  const file = join(scratch, 'stream.txt')
  writeFileSync(file, text)
  return file
}

// Two terminal modes. Cooked (`stty -echo`): the line discipline turns each \n into \r\n, as a
// program's output in a normal terminal — the emulator then skips lines no viewer can see again.
// Raw (`stty raw -echo`): bytes pass unchanged (the lines staircase), and every byte is emulated.
const MODES = { cooked: 'stty -echo', raw: 'stty raw -echo' }
let streamCommand = (file) => `${MODES.raw}; cat '${file}'`

async function streamShellwright(file) {
  let bytes = 0
  const cpu = process.cpuUsage()
  const start = performance.now()
  const result = await new PtySession().start({ command: streamCommand(file) }, (chunk) => {
    bytes += chunk.length // ASCII: one byte per character
  })
  const ms = performance.now() - start
  if (result.exitCode !== 0) throw new Error(`shellwright stream failed: ${JSON.stringify(result)}`)
  return { ms, cpuMs: cpuMs(cpu), bytesAtEnd: bytes, bytesLate: bytes }
}

/** CPU time (user + system, all threads of this process) since `before`, in ms. */
function cpuMs(before) {
  const { user, system } = process.cpuUsage(before)
  return (user + system) / 1000
}

function streamNodePty(file) {
  return new Promise((resolve) => {
    let bytes = 0
    const cpu = process.cpuUsage()
    const start = performance.now()
    const child = nodePty.spawn('sh', ['-c', streamCommand(file)], { cols: 120, rows: 40, env: process.env })
    child.onData((chunk) => {
      bytes += chunk.length
    })
    child.onExit(() => {
      const ms = performance.now() - start
      const bytesAtEnd = bytes
      const cpuUsed = cpuMs(cpu)
      setTimeout(() => resolve({ ms, cpuMs: cpuUsed, bytesAtEnd, bytesLate: bytes }), NODE_PTY_LATE_MS)
    })
  })
}

async function throughput(mode) {
  streamCommand = (file) => `${MODES[mode]}; cat '${file}'`
  const file = textFile(STREAM_BYTES)
  const runs = { shellwright: [], 'node-pty': [] }
  for (let round = 0; round < ROUNDS; round++) {
    runs.shellwright.push(await streamShellwright(file))
    runs['node-pty'].push(await streamNodePty(file))
  }
  const median = (list, key) => stats(list.map((r) => r[key])).p50
  const mbPerSecond = (list) => STREAM_BYTES / 1e6 / (median(list, 'ms') / 1000)
  const delivered = (list) => list.map((r) => r.bytesAtEnd)
  report({
    bench: `PtySession throughput, ${STREAM_BYTES / 1e6} MB text, ${mode} mode (${MODES[mode]})`,
    unit: 'MB/s',
    better: 'higher',
    subject: 'shellwright',
    results: { shellwright: mbPerSecond(runs.shellwright), 'node-pty': mbPerSecond(runs['node-pty']) },
    budget: { vs: 'node-pty', atLeast: mode === 'raw' ? 0.5 : 0.9 },
    notes: {
      expectedBytes: mode === 'raw' ? STREAM_BYTES : 'file bytes + one \\r per line',
      shellwrightBytesWhenResolved: delivered(runs.shellwright),
      nodePtyBytesAtExitEvent: delivered(runs['node-pty']),
      [`nodePtyBytes${NODE_PTY_LATE_MS}msAfterExit`]: runs['node-pty'].map((r) => r.bytesLate),
      emulator: 'shellwright: on (every byte fed to the terminal model); node-pty: none',
      // Less noisy than the wall clock on a loaded machine: this process's CPU time per MB.
      cpuMsPerMb: {
        shellwright: median(runs.shellwright, 'cpuMs') / (STREAM_BYTES / 1e6),
        'node-pty': median(runs['node-pty'], 'cpuMs') / (STREAM_BYTES / 1e6),
      },
    },
  })
}

/** A running `stty -echo; exec cat` with a function that writes a line and awaits its echo. */
function echoRoundTrip(write, subscribe) {
  let buffer = ''
  let waiting = null
  subscribe((chunk) => {
    buffer += chunk
    if (waiting && buffer.includes(waiting.line)) {
      const { resolve } = waiting
      waiting = null
      buffer = ''
      resolve()
    }
  })
  let n = 0
  return () =>
    new Promise((resolve) => {
      const line = `ping ${n++}`
      waiting = { line: `${line}\r\n`, resolve }
      write(`${line}\n`)
    })
}

function readyWhen(text, getBuffer) {
  return until(() => getBuffer().includes(text), {
    timeoutMs: 5000,
    failure: `no ${JSON.stringify(text)} from the terminal`,
  })
}

/** A `stty -echo; exec cat` in a fresh PtySession: its round trip, and a function that ends it. */
async function ourTerminal(command) {
  const session = new PtySession()
  let text = ''
  const listeners = []
  const done = session.start({ command }, (chunk) => {
    text += chunk
    for (const l of listeners) l(chunk)
  })
  await readyWhen('ready', () => text)
  const roundTrip = echoRoundTrip((d) => session.write(d), (l) => listeners.push(l))
  const end = async () => {
    session.kill()
    await done
  }
  return { roundTrip, end }
}

/** The same in a fresh node-pty terminal. */
async function theirTerminal(command) {
  const child = nodePty.spawn('sh', ['-c', command], { cols: 120, rows: 40, env: process.env })
  let text = ''
  const listeners = []
  child.onData((chunk) => {
    text += chunk
    for (const l of listeners) l(chunk)
  })
  await readyWhen('ready', () => text)
  const roundTrip = echoRoundTrip((d) => child.write(d), (l) => listeners.push(l))
  const end = async () => {
    const exited = new Promise((resolve) => child.onExit(resolve))
    child.kill('SIGKILL')
    await exited
  }
  return { roundTrip, end }
}

/** The C loop's contender name (see bench/c-loop.mjs). */
const C_LOOP = 'C loop (poll + read/write)'

/**
 * Echo round trips through both terminals, alternating blocks of samples between them so that a
 * burst of load on the machine hits both alike; p50 in microseconds. Each block gets fresh
 * terminals: on a machine with few cores, a round trip takes about half as long when the kernel
 * happens to run the `cat` on the same core as Node as when it runs it on another, and it keeps a
 * process where it put it. With one terminal each for the whole run, one draw of that placement
 * decided the comparison; with new ones per block, both sides sample it alike.
 */
async function latency() {
  const command = 'stty -echo; echo ready; exec cat'
  const BLOCKS = 10
  const options = { iterations: 100, warmup: 10 }

  const shellwrightSamples = []
  const nodePtySamples = []
  // node-pty's p50 over ours, block by block: the budget holds for the worst block too.
  const blockRatios = []
  // The same round trips by a C loop (bench/c-loops/pty-echo.c) in each block: what they cost
  // this machine's kernel and scheduler with no runtime in the way.
  const cLoopSamples = []
  for (let block = 0; block < BLOCKS; block++) {
    const p50s = []
    for (const [open, samples] of [
      [ourTerminal, shellwrightSamples],
      [theirTerminal, nodePtySamples],
    ]) {
      const terminal = await open(command)
      const blockSamples = await sample(terminal.roundTrip, options)
      samples.push(...blockSamples)
      p50s.push(stats(blockSamples).p50)
      await terminal.end()
    }
    blockRatios.push(p50s[1] / p50s[0])
    cLoopSamples.push(...(cLoop('pty-echo', options) ?? []))
  }

  const us = (samples) => {
    const { p50, p90, mean } = stats(samples.map((ms) => ms * 1000))
    return { p50, p90, mean }
  }
  const [mine, theirsUs] = [us(shellwrightSamples), us(nodePtySamples)]
  const results = { shellwright: mine.p50, 'node-pty': theirsUs.p50 }
  const notes = {
    samples: `${BLOCKS} alternating blocks of ${options.iterations} round trips each, each block in fresh terminals`,
    shellwright: mine,
    nodePty: theirsUs,
    blockRatios: blockRatios.map((ratio) => Number(ratio.toFixed(2))),
  }
  if (cLoopSamples.length) {
    notes.cLoop = us(cLoopSamples)
    results[C_LOOP] = notes.cLoop.p50
  }
  report({
    bench: 'PTY echo round trip (p50)',
    unit: 'µs',
    better: 'lower',
    subject: 'shellwright',
    results,
    notes,
    budget: [
      { vs: 'node-pty', atLeast: 1.5 },
      { label: 'worst block, node-pty p50 / ours', value: Math.min(...blockRatios), unit: '×', atLeast: 1.5 },
    ],
  })
}

/** Streams 1 GB through one session in a fresh process and reports its peak RSS. */
function memory() {
  const bytes = Number(process.env.SW_PTY_MEMORY_BYTES ?? 1 << 30)
  const child = spawnSync(process.execPath, [new URL('./pty-memory.mjs', import.meta.url).pathname], {
    encoding: 'utf8',
    env: { ...process.env, SW_PTY_MEMORY_BYTES: String(bytes) },
    timeout: 600_000,
  })
  if (child.status !== 0) throw new Error(`memory check failed: ${child.error ?? child.stderr}`)
  const figures = JSON.parse(child.stdout.trim().split('\n').pop())
  if (figures.bytes !== bytes) throw new Error(`memory check delivered ${figures.bytes} of ${bytes} bytes`)
  report({
    bench: `PtySession peak RSS while streaming ${Math.round(bytes / 2 ** 20)} MiB (emulator on, scrollback 10000)`,
    unit: 'MB',
    better: 'lower',
    subject: 'shellwright',
    results: { shellwright: figures.peakRssMb },
    notes: {
      baselineRssMb: figures.baselineRssMb,
      growthMb: figures.peakRssMb - figures.baselineRssMb,
      bytesDelivered: figures.bytes,
      seconds: figures.seconds,
    },
  })
}

// SW_PTY_BENCH_PARTS picks parts, e.g. `cooked,latency`; all four by default.
const parts = (process.env.SW_PTY_BENCH_PARTS ?? 'cooked,raw,latency,memory').split(',')
if (parts.includes('cooked')) await throughput('cooked')
if (parts.includes('raw')) await throughput('raw')
if (parts.includes('latency')) await latency()
if (parts.includes('memory')) memory()
