// PtySession.attach benchmarks, on a session streaming text at full speed (`cat` of a large file):
//  1. attach latency: how long `attach()` takes to return its snapshot (the scrollback is full), and
//     how long until the first live chunk reaches `onData` (the catch-up), over many attaches;
//     viewers that stay attached are replayed into a VirtualTerminal at the end and must show the
//     session's screen (no byte lost or repeated across the cut);
//  2. the stream's throughput with 0, 1 and 4 viewers attached from the start (their callbacks only
//     count), each of which must receive exactly the session's own stream;
//  3. a viewer that stalls the JS thread for a second while the stream runs at ≥ 20 MB/s: the
//     stream does not slow down, the viewer is resynchronised instead of buffering, and it ends
//     showing the session's screen.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { report, stats } from './lib.mjs'

const require = createRequire(import.meta.url)
const { PtySession, VirtualTerminal } = require('../index.js')

const STREAM_BYTES = Number(process.env.SW_ATTACH_BENCH_BYTES ?? 100_000_000)
const ATTACHES = 60
const COLS = 120
const ROWS = 40

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-attach-bench-'))
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }))

function textFile(size) {
  const parts = []
  let length = 0
  for (let i = 0; length < size; i++) {
    const line = `${String(i).padStart(9, '0')} \x1b[32mINFO\x1b[0m build step ${i % 97} finished in ${i % 1000} ms ok\n`
    parts.push(line)
    length += line.length
  }
  const file = join(scratch, 'stream.txt')
  writeFileSync(file, parts.join('').slice(0, size))
  return file
}

const file = textFile(STREAM_BYTES)
const tick = () => new Promise((resolve) => setImmediate(resolve))
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function start(onChunk) {
  const session = new PtySession()
  const done = session.start({ command: `stty -echo; cat '${file}'`, cols: COLS, rows: ROWS }, onChunk)
  return { session, done }
}

/** A viewer replayed into a VirtualTerminal, counting what it received. */
function replay(session, onChunk = () => {}) {
  const viewer = { chars: 0, chunks: 0, resyncs: 0, term: undefined, attachment: undefined }
  viewer.attachment = session.attach((chunk) => {
    viewer.chars += chunk.length
    viewer.chunks++
    if (chunk.startsWith('\x1bc')) viewer.resyncs++
    viewer.term.write(chunk)
    onChunk(chunk)
  })
  viewer.term = new VirtualTerminal({ cols: viewer.attachment.cols, rows: viewer.attachment.rows })
  viewer.term.write(viewer.attachment.snapshot)
  return viewer
}

const same = (a, b) => JSON.stringify([a.lines, a.cursor]) === JSON.stringify([b.lines, b.cursor])

async function attachLatency() {
  const { session, done } = start()
  let ended = false
  done.then(() => (ended = true))
  await wait(1000) // let the stream fill the scrollback
  const snapshotMs = []
  const catchUpMs = []
  const kept = []
  for (let i = 0; i < ATTACHES && !ended; i++) {
    // Painting the snapshot is the viewer's own work (a browser's xterm.js, say), so it is left out
    // of the timing: chunks are kept and replayed afterwards.
    const chunks = []
    const begin = performance.now()
    let first = 0
    const attachment = session.attach((chunk) => {
      if (!first) first = performance.now()
      chunks.push(chunk)
    })
    snapshotMs.push(performance.now() - begin)
    while (!first && !ended) await tick()
    if (first) catchUpMs.push(first - begin)
    if (i % 10 === 0) kept.push({ attachment, chunks })
    else attachment.detach()
    await wait(5)
  }
  await done
  const screen = session.screen()
  const replays = kept.map(({ attachment, chunks }) => {
    const term = new VirtualTerminal({ cols: attachment.cols, rows: attachment.rows })
    term.write(attachment.snapshot)
    return { term, chunks, written: 0 }
  })
  const caughtUp = () =>
    replays.every((replay) => {
      while (replay.written < replay.chunks.length) replay.term.write(replay.chunks[replay.written++])
      return same(replay.term.screen(), screen)
    })
  // The last chunks may still be on their way when the run settles: a bounded poll.
  for (let i = 0; i < 500 && !caughtUp(); i++) await wait(10)
  const exact = replays.filter((replay) => same(replay.term.screen(), screen)).length
  const s = stats(snapshotMs)
  const c = stats(catchUpMs)
  report({
    bench: 'attach: snapshot + catch-up while streaming at full speed',
    unit: 'ms',
    subject: 'catch-up p50',
    results: { 'catch-up p50': c.p50, 'catch-up p90': c.p90, 'snapshot p50': s.p50, 'snapshot p90': s.p90 },
    budget: [
      { result: 'catch-up p50', atMost: 20 },
      { label: 'kept viewers not showing the session exactly', value: kept.length - exact, unit: 'viewers', atMost: 0 },
    ],
    notes: `${catchUpMs.length} attaches to a ${COLS}x${ROWS} session with full scrollback; ${exact}/${kept.length} viewers kept to the end show the session's screen exactly`,
  })
}

async function throughput() {
  const results = {}
  const notes = []
  for (const count of [0, 1, 4]) {
    let streamed = 0
    const { session, done } = start((chunk) => {
      streamed += chunk.length
    })
    // Counting only: this measures what viewers cost the stream, not what painting costs them.
    const viewers = Array.from({ length: count }, () => {
      const viewer = { chars: 0, resyncs: 0 }
      session.attach((chunk) => {
        viewer.chars += chunk.length
        if (chunk.startsWith('\x1bc')) viewer.resyncs++
      })
      return viewer
    })
    const begin = performance.now()
    await done
    const seconds = (performance.now() - begin) / 1000
    for (let i = 0; i < 500 && viewers.some((v) => v.chars < streamed); i++) await wait(10)
    results[`${count} viewers`] = streamed / 1e6 / seconds
    const exact = viewers.filter((v) => v.chars === streamed && v.resyncs === 0).length
    if (count) notes.push(`${count} viewers: ${exact}/${count} received exactly the ${streamed} characters of the stream`)
  }
  report({ bench: 'attach: stream throughput with viewers attached', unit: 'MB/s', subject: '4 viewers', better: 'higher', results, notes: notes.join('; ') })
}

async function stalledViewer() {
  let streamed = 0
  const { session, done } = start((chunk) => {
    streamed += chunk.length
  })
  let stalled = false
  const viewer = replay(session, () => {
    if (stalled) return
    stalled = true
    // The viewer holds the JS thread for a second; the program streams on meanwhile.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
  })
  const begin = performance.now()
  await done
  const seconds = (performance.now() - begin) / 1000
  const screen = session.screen()
  for (let i = 0; i < 500 && !same(viewer.term.screen(), screen); i++) await wait(10)
  report({
    bench: 'attach: a viewer stalled for 1 s under a full-speed stream',
    unit: 'MB',
    subject: 'delivered to the viewer',
    results: { 'delivered to the viewer': viewer.chars / 1e6, 'streamed by the program': streamed / 1e6 },
    notes: `stream ${(streamed / 1e6 / seconds).toFixed(1)} MB/s; ${viewer.resyncs} resync(s); the viewer ${same(viewer.term.screen(), screen) ? 'shows' : 'does NOT show'} the session's screen at the end`,
  })
}

await attachLatency()
await throughput()
await stalledViewer()
