// First paint of a viewer that connects to a session with a full scrollback (10 000 lines above an
// 80 × 24 screen): how many bytes it receives before its screen is right, and how long that takes.
//  1. the web terminal (shellwright/web): a WebSocket client counts the first message (the screen's
//     snapshot) apart from the scrollback's messages that follow it;
//  2. PtySession.attach: the `screenSnapshot` a viewer paints first, beside the whole `snapshot`.
// A size is not a speed: the budget (≤ 64 KiB before the screen is right) is the same on any
// machine; the times are for reading.
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { report, stats, until } from './lib.mjs'

const require = createRequire(import.meta.url)
const { PtySession } = require('../index.js')
const { createTerminalServer } = require('../packages/web/index.js')
const { WebSocket } = require('ws')

const LINES = 20_000
const CONNECTIONS = 10
const KiB = 1024

const line = (i) => `${i} ${'x'.repeat(60)}`

/** A session that printed LINES numbered lines (its scrollback full) and waits in `cat`. */
async function fullSession() {
  const session = new PtySession()
  const done = session.start({ command: `seq -f '%g ${'x'.repeat(60)}' 1 ${LINES}; exec cat`, cols: 80, rows: 24 })
  await until(() => session.screen().lines[22] === line(LINES), {
    timeoutMs: 30_000,
    failure: 'the session did not print its lines',
  })
  return { session, done }
}

/** One web connection: the first message's bytes and time, and the scrollback's after it. */
function connect(server) {
  const page = new URL(server.url)
  const url = `ws://${page.host}/ws?token=${page.searchParams.get('token')}&cols=80&rows=24`
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const ws = new WebSocket(url, { origin: `http://${page.host}` })
    const paint = { firstBytes: 0, firstType: '', firstMs: 0, historyBytes: 0, historyMs: 0 }
    ws.on('message', (data) => {
      const text = data.toString('utf8')
      const message = JSON.parse(text)
      if (!paint.firstType) {
        Object.assign(paint, { firstBytes: Buffer.byteLength(text), firstType: message.type, firstMs: performance.now() - started })
      } else if (message.type === 'history') {
        paint.historyBytes += Buffer.byteLength(text)
        if (message.last) {
          paint.historyMs = performance.now() - started
          ws.close()
        }
      }
    })
    ws.on('close', () => resolve(paint))
    ws.on('error', reject)
    setTimeout(() => reject(new Error('no whole history within 30 s')), 30_000).unref()
  })
}

async function web(session) {
  const server = await createTerminalServer({ session, readOnly: true })
  try {
    const paints = []
    for (let i = 0; i < CONNECTIONS; i++) paints.push(await connect(server))
    const bad = paints.find((p) => p.firstType !== 'snapshot' || p.historyBytes === 0)
    if (bad) throw new Error(`a connection did not get the screen first, then the history: ${JSON.stringify(bad)}`)
    const firstKiB = Math.max(...paints.map((p) => p.firstBytes)) / KiB
    report({
      bench: `web terminal first paint, 80x24 with 10 000 lines of scrollback (${CONNECTIONS} connections)`,
      unit: 'KiB',
      subject: 'first message',
      results: { 'first message': firstKiB },
      budget: { result: 'first message', atMost: 64 },
      notes: {
        scrollbackKiBAfterIt: stats(paints.map((p) => p.historyBytes / KiB)).p50,
        firstMessageMs: stats(paints.map((p) => p.firstMs)).p50,
        wholeHistoryMs: stats(paints.map((p) => p.historyMs)).p50,
      },
    })
  } finally {
    await server.close()
  }
}

function attach(session) {
  const sizes = []
  for (let i = 0; i < CONNECTIONS; i++) {
    const attachment = session.attach(() => {})
    sizes.push({ screen: Buffer.byteLength(attachment.screenSnapshot), whole: Buffer.byteLength(attachment.snapshot) })
    attachment.detach()
  }
  report({
    bench: `PtySession.attach first paint, 80x24 with 10 000 lines of scrollback (${CONNECTIONS} attaches)`,
    unit: 'KiB',
    subject: 'screenSnapshot',
    results: { screenSnapshot: Math.max(...sizes.map((s) => s.screen)) / KiB },
    budget: { result: 'screenSnapshot', atMost: 64 },
    notes: { snapshotWithScrollbackKiB: stats(sizes.map((s) => s.whole / KiB)).p50 },
  })
}

const { session, done } = await fullSession()
try {
  await web(session)
  attach(session)
} finally {
  session.kill()
  await done
}
