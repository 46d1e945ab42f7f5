// The web terminal (shellwright/web) in a real browser: Debian's headless Chromium, driven by
// playwright-core, opens the page, types, reads xterm.js's buffer and compares it with the
// session's own screen; raw HTTP and WebSocket clients check the access rules and that a hostile
// client costs nothing but its own connection.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { PtySession, Shell, type PtyResult } from '../index.js'
import { createTerminalServer, type TerminalServer } from '../packages/web/index.js'
import { isRunning, waitUntil } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-web-'))
/** A fixed environment, so the host's vim or bash settings cannot change the screens. */
const env = { TERM: 'xterm-256color', HOME: scratch, PS1: '$ ', LANG: 'C.UTF-8' }
const VIEWPORT = { width: 900, height: 500 }

let browser: Browser
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] })
}, 30_000)
afterAll(async () => {
  await browser?.close()
  rmSync(scratch, { recursive: true, force: true })
})

/** Starts `command` in a session that the test owns (the server is only given it). */
function launch(command: string) {
  const session = new PtySession()
  const done = session.start({ command, cols: 80, rows: 24, env, timeoutMs: 60_000 })
  return { session, done }
}

async function stop(session: PtySession, done: Promise<PtyResult>) {
  try {
    session.kill()
  } catch {
    // already ended
  }
  await done
}

/** Opens the page in a fresh browser context and waits until it shows the session (or is in one of `states`). */
async function openPage(url: string, states = ['connected']): Promise<Page> {
  const context = await browser.newContext({ viewport: VIEWPORT })
  const page = await context.newPage()
  await page.goto(url)
  await page.waitForFunction((states) => states.includes((globalThis as any).shellwright?.state), states, { timeout: 10_000 })
  return page
}

/** What the page's xterm.js shows, in the shape of `TerminalScreen`. */
function pageScreen(page: Page) {
  return page.evaluate(() => {
    const term = (globalThis as any).term
    const buffer = term.buffer.active
    const lines: string[] = []
    // Trailing blanks trimmed, as in TerminalScreen (xterm.js keeps blanks that were written).
    for (let y = 0; y < term.rows; y++) lines.push(buffer.getLine(buffer.baseY + y)?.translateToString(true).trimEnd() ?? '')
    return {
      cols: term.cols as number,
      rows: term.rows as number,
      lines,
      cursor: { row: buffer.cursorY as number, col: buffer.cursorX as number },
      altScreen: buffer.type === 'alternate',
    }
  })
}

/** The session's screen in the same shape. */
function sessionScreen(session: PtySession) {
  const { cols, rows, lines, cursor, altScreen } = session.screen()
  return { cols, rows, lines, cursor: { row: cursor.row, col: cursor.col }, altScreen }
}

/** Polls until the page shows exactly what the session shows; returns that screen. */
async function pageMatchesSession(page: Page, session: PtySession, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const [shown, actual] = [await pageScreen(page), sessionScreen(session)]
    if (JSON.stringify(shown) === JSON.stringify(actual)) return shown
    if (Date.now() > deadline) {
      expect(shown).toEqual(actual)
      throw new Error('unreachable')
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Asserts that the page shows its whole terminal inside the window: nothing scrolled and nothing
 * past the edges (a terminal larger than the window is scaled down).
 */
async function expectFitsWindow(page: Page) {
  await page.waitForFunction(
    () => {
      const container = document.getElementById('terminal')!
      const screen = container.querySelector('.xterm-screen')!.getBoundingClientRect()
      const box = container.getBoundingClientRect()
      const inside = screen.left >= box.left && screen.top >= box.top && screen.right <= box.right + 0.5 && screen.bottom <= box.bottom + 0.5
      return inside && container.scrollTop === 0 && container.scrollLeft === 0
    },
    null,
    { timeout: 5000 },
  )
}

async function pageShows(page: Page, text: string) {
  await page.waitForFunction(
    (text) => {
      const term = (globalThis as any).term
      const buffer = term.buffer.active
      for (let y = 0; y < buffer.length; y++) if (buffer.getLine(y)?.translateToString(true).includes(text)) return true
      return false
    },
    text,
    { timeout: 10_000 },
  )
}

/** The status of a plain GET, with optional headers. */
function httpStatus(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; cookie?: string[] }>((resolve, reject) => {
    request(url, { headers }, (response) => {
      response.resume()
      resolve({ status: response.statusCode ?? 0, cookie: response.headers['set-cookie'] })
    })
      .on('error', reject)
      .end()
  })
}

function wsUrl(server: TerminalServer, token = server.token) {
  return `${server.url.replace(/^http/, 'ws').replace(/\/\?.*$/, '')}/ws?token=${token}`
}

/** The status of a WebSocket upgrade: 101 when accepted, else the refusal's status. */
function upgradeStatus(url: string, origin?: string) {
  return new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(url, { origin })
    socket.on('open', () => {
      socket.terminate()
      resolve(101)
    })
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0)
      socket.terminate()
    })
    socket.on('error', (error) => reject(error))
  })
}

/** A raw WebSocket client: its control messages and the output it received, as text. */
async function rawClient(url: string) {
  const socket = new WebSocket(url)
  const seen = { controls: [] as any[], output: '', socket }
  socket.on('message', (data, isBinary) => {
    if (isBinary) seen.output += data.toString()
    else seen.controls.push(JSON.parse(data.toString()))
  })
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  return seen
}

/** Resolves once the server has handled every message the socket sent before (ping/pong keep order). */
function roundTrip(socket: WebSocket) {
  return new Promise((resolve) => {
    socket.once('pong', resolve)
    socket.ping()
  })
}

describe('createTerminalServer options', () => {
  it.each([
    [{ port: -1 }, RangeError, 'ERR_INVALID_ARG_VALUE', 'options.port must be an integer from 0 to 65535'],
    [{ port: '80' }, TypeError, 'ERR_INVALID_ARG_TYPE', 'options.port must be a number'],
    [{ host: 7 }, TypeError, 'ERR_INVALID_ARG_TYPE', 'options.host must be a string'],
    [{ readOnly: 'yes' }, TypeError, 'ERR_INVALID_ARG_TYPE', 'options.readOnly must be a boolean'],
    [{ token: 'short' }, RangeError, 'ERR_INVALID_ARG_VALUE', 'options.token must be 8 to 256 characters from A-Z a-z 0-9 . _ ~ -'],
    [{ session: {} }, TypeError, 'ERR_INVALID_ARG_TYPE', 'options.session must be a PtySession'],
    [{ command: '' }, RangeError, 'ERR_INVALID_ARG_VALUE', 'options.command must not be empty'],
    [{ command: 'true', session: new PtySession() }, RangeError, 'ERR_INVALID_ARG_VALUE', 'options.session and options.command cannot be used together: give one'],
    [{ mirror: {} }, TypeError, 'ERR_INVALID_ARG_TYPE', 'options.mirror must be a Shell'],
    [{ session: new PtySession(), mirror: new Shell() }, RangeError, 'ERR_INVALID_ARG_VALUE', 'options.session and options.mirror cannot be used together: give one'],
    ['all', TypeError, 'ERR_INVALID_ARG_TYPE', 'options must be an object'],
  ])('%j is refused', async (options, kind, code, message) => {
    const error = await createTerminalServer(options as any).catch((e) => e)
    expect(error).toBeInstanceOf(kind)
    expect({ code: error.code, message: error.message }).toEqual({ code, message })
  })

  it('a port in use is the listen error', async () => {
    const { session, done } = launch('sleep 30')
    const first = await createTerminalServer({ session })
    const port = Number(new URL(first.url).port)
    await expect(createTerminalServer({ session, port })).rejects.toMatchObject({ code: 'EADDRINUSE' })
    await first.close()
    await stop(session, done)
  })
})

describe('access', () => {
  it('needs the token on every request and the upgrade, and a matching Origin', async () => {
    const { session, done } = launch('sleep 30')
    const server = await createTerminalServer({ session, token: 'secret-token-1' })
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=secret-token-1$/)
      expect(server.token).toBe('secret-token-1')
      const base = server.url.replace(/\?.*$/, '')
      const page = await httpStatus(server.url)
      expect(page.status).toBe(200)
      const cookie = page.cookie![0].split(';')[0]
      expect(cookie).toBe(`shellwright_token_${new URL(base).port}=secret-token-1`)
      expect((await httpStatus(base)).status).toBe(401)
      expect((await httpStatus(`${base}?token=secret-token-2`)).status).toBe(401)
      expect((await httpStatus(`${base}xterm.js`)).status).toBe(401)
      expect((await httpStatus(`${base}xterm.js`, { cookie })).status).toBe(200)
      expect((await httpStatus(`${base}addon-fit.js`, { cookie })).status).toBe(200)
      expect((await httpStatus(`${base}nothing-here`, { cookie })).status).toBe(404)

      expect(await upgradeStatus(wsUrl(server, 'secret-token-2'))).toBe(401)
      expect(await upgradeStatus(wsUrl(server).replace(/\?.*$/, ''))).toBe(401)
      expect(await upgradeStatus(wsUrl(server), 'http://evil.example')).toBe(403)
      expect(await upgradeStatus(wsUrl(server), `http://localhost:${new URL(base).port}`)).toBe(403)
      expect(await upgradeStatus(wsUrl(server), base.replace(/\/$/, ''))).toBe(101)
      expect(await upgradeStatus(wsUrl(server))).toBe(101)
    } finally {
      await server.close()
      await stop(session, done)
    }
  })

  it('a hostile client loses its own connection only: garbage frames, a message over 1 MiB', async () => {
    const { session, done } = launch('cat')
    const server = await createTerminalServer({ session })
    try {
      // A message over the limit is refused with 1009 (message too big).
      const big = await rawClient(wsUrl(server))
      const closed = new Promise<number>((resolve) => big.socket.once('close', resolve))
      big.socket.send(JSON.stringify({ type: 'input', data: 'x'.repeat(1024 * 1024) }))
      expect(await closed).toBe(1009)

      // Bytes that are not WebSocket frames, then an abrupt end.
      const { port } = new URL(server.url)
      const raw = connect(Number(port), '127.0.0.1')
      await new Promise((resolve) => raw.once('connect', resolve))
      raw.write(
        `GET /ws?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
          'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      )
      raw.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x13, 0x37]))
      raw.resume() // read the 101 and the snapshot, so that the server's close is seen
      await new Promise((resolve) => raw.once('close', resolve))
      raw.destroy()

      // A request target that is no URL at all.
      const odd = connect(Number(port), '127.0.0.1')
      let answer = ''
      odd.on('data', (data) => (answer += data))
      odd.write(`GET @ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
      await new Promise((resolve) => odd.once('close', resolve))
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')

      // Malformed messages are ignored; the same connection still types.
      const good = await rawClient(wsUrl(server))
      for (const junk of ['{', 'null', '42', '{"type":"input","data":7}', '{"type":"resize","cols":-1,"rows":1e9}']) {
        good.socket.send(junk)
      }
      good.socket.send(Buffer.from([1, 2, 3]))
      good.socket.send(JSON.stringify({ type: 'input', data: 'still here\r' }))
      await waitUntil(() => good.output.includes('still here\r\nstill here'), 5000, 'the echo of the input')
      expect(session.screen().lines.slice(0, 2)).toEqual(['still here', 'still here'])
      good.socket.terminate()
    } finally {
      await server.close()
      await stop(session, done)
    }
  })

  it('a session that has not started is refused to each viewer, who may come back once it runs', async () => {
    const session = new PtySession()
    const server = await createTerminalServer({ session })
    let done: Promise<PtyResult> | undefined
    try {
      const early = await rawClient(wsUrl(server))
      const code = await new Promise<number>((resolve) => early.socket.once('close', resolve))
      expect({ code, controls: early.controls }).toEqual({
        code: 1011,
        controls: [{ type: 'error', message: 'PTY session is not running' }],
      })
      done = session.start({ command: 'echo started; exec sleep 30', env })
      await waitUntil(() => session.screen().lines[0] === 'started', 5000, 'the run')
      const later = await rawClient(wsUrl(server))
      await waitUntil(() => later.controls.length > 0, 5000, 'the snapshot')
      // The session's default size; the raw client sent none of its own.
      expect(later.controls[0]).toMatchObject({ type: 'snapshot', cols: 120, rows: 40, readOnly: false })
      expect(later.controls[0].data).toContain('started')
      later.socket.terminate()
    } finally {
      await server.close()
      if (done) await stop(session, done)
    }
  })

  it('read-only drops input and resize from any client', async () => {
    const { session, done } = launch('cat')
    const server = await createTerminalServer({ session, readOnly: true })
    try {
      const client = await rawClient(`${wsUrl(server)}&cols=40&rows=10`)
      await waitUntil(() => client.controls.length > 0, 5000, 'the snapshot')
      expect(client.controls[0]).toMatchObject({ type: 'snapshot', cols: 80, rows: 24, readOnly: true })
      client.socket.send(JSON.stringify({ type: 'input', data: 'typed\r' }))
      client.socket.send(JSON.stringify({ type: 'resize', cols: 30, rows: 8 }))
      await roundTrip(client.socket)
      session.write('marker\r')
      await waitUntil(() => client.output.includes('marker\r\nmarker'), 5000, 'the marker')
      expect(session.screen().lines.slice(0, 3)).toEqual(['marker', 'marker', ''])
      expect([session.screen().cols, session.screen().rows]).toEqual([80, 24])
      client.socket.terminate()

      const page = await openPage(server.url)
      expect(await page.isVisible('#read-only')).toBe(true)
      // Record what the page sends from now on.
      await page.evaluate(() => {
        const sent: string[] = ((globalThis as any).sent = [])
        // (globalThis: `WebSocket` here would name the test's import of ws.)
        const prototype = (globalThis as any).WebSocket.prototype
        const send = prototype.send
        prototype.send = function (data: unknown) {
          sent.push(String(data))
          return send.call(this, data)
        }
      })
      await page.click('#terminal')
      await page.keyboard.type('from the page')
      await page.keyboard.press('Enter')
      // xterm.js hands keys over as they are pressed: nothing of them went out.
      const sent: string[] = await page.evaluate(() => (globalThis as any).sent)
      expect(sent.filter((message) => message.includes('"input"'))).toEqual([])
      session.write('second\r')
      await waitUntil(() => session.screen().lines[3] === 'second', 5000, "cat's copy of the second line")
      expect(session.screen().lines.slice(0, 5)).toEqual(['marker', 'marker', 'second', 'second', ''])
      expect(await pageMatchesSession(page, session)).toMatchObject({ cols: 80, rows: 24 })
      await page.context().close()
    } finally {
      await server.close()
      await stop(session, done)
    }
  })
})

describe('in the browser', () => {
  it('types echo hello and reads the answer from the page', async () => {
    const server = await createTerminalServer({ command: 'bash --norc --noprofile -i' })
    const page = await openPage(server.url)
    try {
      await page.click('#terminal')
      await page.keyboard.type('echo hello')
      await page.keyboard.press('Enter')
      await page.waitForFunction(
        () => {
          const buffer = (globalThis as any).term.buffer.active
          const lines = Array.from({ length: buffer.length }, (_, y) => buffer.getLine(y).translateToString(true))
          return lines.some((line, y) => line.endsWith('echo hello') && lines[y + 1] === 'hello')
        },
        null,
        { timeout: 10_000 },
      )
      // The page asked for the size that fits its window.
      const shown = await pageScreen(page)
      expect(shown.cols).toBeGreaterThan(60)
      expect(shown.rows).toBeGreaterThan(15)
    } finally {
      await page.context().close()
      await server.close()
    }
  })

  it('vim: after a dropped connection the page repaints to the session screen; a second browser sees it too', async () => {
    const { session, done } = launch('vim -u NONE -i NONE -N -n')
    const server = await createTerminalServer({ session })
    const page = await openPage(server.url)
    const second = await openPage(server.url)
    try {
      await waitUntil(() => session.screen().lines[1] === '~', 10_000, 'vim started')
      await page.click('#terminal')
      await page.keyboard.type('ifirst line')
      await page.keyboard.press('Enter')
      await pageShows(page, 'first line')

      // Drop the socket while the keys of the next edit are still being answered.
      await page.evaluate(() => {
        const socket = (globalThis as any).shellwright.socket
        socket.send(JSON.stringify({ type: 'input', data: 'second line\rthird line\x1bgg' }))
        socket.close()
      })
      await page.waitForFunction(() => (globalThis as any).shellwright.state !== 'connected', null, { timeout: 5000 })
      await waitUntil(() => session.screen().cursor.row === 0 && session.screen().lines[2] === 'third line', 10_000, 'the edit')
      await page.waitForFunction(() => (globalThis as any).shellwright.state === 'connected', null, { timeout: 10_000 })
      const shown = await pageMatchesSession(page, session)
      expect(shown.lines.slice(0, 4)).toEqual(['first line', 'second line', 'third line', '~'])
      expect(shown).toMatchObject({ altScreen: true, cursor: { row: 0, col: 0 } })
      expect(await pageMatchesSession(second, session)).toEqual(shown)

      // The second browser types: both pages follow.
      await second.click('#terminal')
      await second.keyboard.type('A!')
      await second.keyboard.press('Escape')
      await waitUntil(() => session.screen().lines[0] === 'first line!', 10_000, 'the second browser typed')
      await pageMatchesSession(second, session)
      await pageMatchesSession(page, session)
    } finally {
      await page.context().close()
      await second.context().close()
      await server.close()
      await stop(session, done)
    }
  })

  it('a page that falls behind a fast stream skips to the current screen', async () => {
    const { session, done } = launch("bash --norc --noprofile -c 'yes | head -c 20000000; echo; echo stream done; exec sleep 60'")
    const server = await createTerminalServer({ session })
    const page = await openPage(server.url)
    try {
      await waitUntil(() => session.screen().lines.includes('stream done'), 30_000, 'the end of the stream')
      await pageShows(page, 'stream done')
      await pageMatchesSession(page, session)
    } finally {
      await page.context().close()
      await server.close()
      await stop(session, done)
    }
  })

  it('mirror: a Shell shown read-only, its history first, then its runs live', async () => {
    const shell = new Shell()
    await shell.run({ command: 'echo before the page' })
    const server = await createTerminalServer({ mirror: shell })
    const page = await openPage(server.url)
    try {
      await pageShows(page, 'before the page')
      expect(await page.isVisible('#read-only')).toBe(true)
      await shell.run({ command: 'printf "%s\\n" "while the page" watches' })
      await pageShows(page, 'while the page')
      // A reconnecting page replays the history again, from the start.
      await page.evaluate(() => (globalThis as any).shellwright.socket.close())
      await page.waitForFunction(() => (globalThis as any).shellwright.snapshots === 2, null, { timeout: 10_000 })
      await pageShows(page, 'watches')
      const text = await page.evaluate(() => {
        const buffer = (globalThis as any).term.buffer.active
        return Array.from({ length: buffer.length }, (_, y) => buffer.getLine(y).translateToString(true).trimEnd())
          .join('\n')
          .trim()
      })
      expect(text.split('\n').filter((line) => /before the page|while the page|watches/.test(line))).toEqual([
        '$ echo before the page',
        'before the page',
        '$ printf "%s\\n" "while the page" watches',
        'while the page',
        'watches',
      ])
    } finally {
      await page.context().close()
      await server.close()
    }
    // Closing the server leaves the Shell alone.
    const after = await shell.run({ command: 'echo still mine' }, () => {})
    expect(after.exitCode).toBe(0)
  })

  it('the terminal takes the size of the page that typed last, not of the one that opened last', async () => {
    const { session, done } = launch('cat')
    const server = await createTerminalServer({ session })
    const wide = await openPage(server.url)
    const narrowContext = await browser.newContext({ viewport: { width: 500, height: 300 } })
    const narrow = await narrowContext.newPage()
    try {
      // The first page drives the size.
      const wideSize = await wide.evaluate(() => [(globalThis as any).term.cols, (globalThis as any).term.rows])
      await waitUntil(() => session.screen().cols === wideSize[0], 5000, 'the wide size')
      await narrow.goto(server.url)
      await narrow.waitForFunction(() => (globalThis as any).shellwright?.state === 'connected', null, { timeout: 10_000 })
      // Opening the second page left the size alone: it shows the wide terminal, scaled to fit.
      expect([session.screen().cols, session.screen().rows]).toEqual(wideSize)
      expect(await pageMatchesSession(narrow, session)).toMatchObject({ cols: wideSize[0], rows: wideSize[1] })
      await expectFitsWindow(narrow)
      await narrow.click('#terminal')
      await narrow.keyboard.type('n')
      await waitUntil(() => session.screen().cols < wideSize[0], 5000, 'the narrow size')
      // The echo of the key can come after the resize: both pages are compared once it is in.
      await waitUntil(() => session.screen().lines[0] === 'n', 5000, 'the echo of n')
      const narrowScreen = await pageMatchesSession(narrow, session)
      expect(await pageMatchesSession(wide, session)).toEqual(narrowScreen)
      await wide.click('#terminal')
      await wide.keyboard.type('w')
      await waitUntil(() => session.screen().cols === wideSize[0], 5000, 'the wide size again')
      await waitUntil(() => session.screen().lines[0] === 'nw', 5000, 'the echo of w')
      const wideScreen = await pageMatchesSession(wide, session)
      expect(await pageMatchesSession(narrow, session)).toEqual(wideScreen)
      await expectFitsWindow(narrow)
    } finally {
      await wide.context().close()
      await narrowContext.close()
      await server.close()
      await stop(session, done)
    }
  })

  it('read-only: a small window shows the whole terminal, scaled, and never scrolls the prompt away', async () => {
    const { session, done } = launch("seq 1 100; printf 'prompt> '; exec cat")
    const server = await createTerminalServer({ session, readOnly: true })
    const context = await browser.newContext({ viewport: { width: 480, height: 260 } })
    const page = await context.newPage()
    try {
      await page.goto(server.url)
      await page.waitForFunction(() => (globalThis as any).shellwright?.state === 'connected', null, { timeout: 10_000 })
      await waitUntil(() => session.screen().lines[23] === 'prompt>', 5000, 'the prompt')
      expect(await pageMatchesSession(page, session)).toMatchObject({ cols: 80, rows: 24 })
      await expectFitsWindow(page)
      // Keys pressed in a read-only page (xterm.js keeps its input field at the cursor) scroll nothing.
      await page.click('#terminal')
      for (const key of ['a', 'Enter', 'End', 'PageDown', 'ArrowDown', 'Space']) await page.keyboard.press(key)
      session.write('more\r')
      await waitUntil(() => session.screen().lines[22] === 'more', 5000, "cat's copy")
      await pageMatchesSession(page, session)
      await expectFitsWindow(page)
    } finally {
      await context.close()
      await server.close()
      await stop(session, done)
    }
  })

  it('paints the screen from the first message (at most 64 KiB), then the 10 000 lines of scrollback', async () => {
    const line = (i: number) => `${i} ${'x'.repeat(60)}`
    const { session, done } = launch(`seq -f '%g ${'x'.repeat(60)}' 1 20000; exec cat`)
    await waitUntil(() => session.screen().lines[22] === line(20000), 10_000, 'the lines')
    // Read-only, so the page keeps the session's 80 × 24 (a resize would move rows to and from
    // the scrollback).
    const server = await createTerminalServer({ session, readOnly: true })
    const context = await browser.newContext({ viewport: VIEWPORT })
    const page = await context.newPage()
    // Between the page and the server: every message from the server is counted, and the scrollback
    // is held back until the test lets it through.
    const fromServer: string[] = []
    const held: string[] = []
    let hold = true
    let toPage: ((message: string) => void) | undefined
    await page.routeWebSocket(/\/ws/, (ws) => {
      const upstream = ws.connectToServer()
      ws.onMessage((message) => upstream.send(message))
      toPage = (message) => ws.send(message)
      upstream.onMessage((message) => {
        const text = typeof message === 'string' ? message : message.toString('utf8')
        fromServer.push(text)
        if (typeof message === 'string' && JSON.parse(message).type === 'history' && hold) held.push(message)
        else ws.send(message)
      })
    })
    try {
      await page.goto(server.url)
      await page.waitForFunction(() => (globalThis as any).shellwright?.state === 'connected', null, { timeout: 10_000 })
      // The screen is right from the first message alone.
      const first = JSON.parse(fromServer[0])
      expect(first).toMatchObject({ type: 'snapshot', history: true })
      expect(Buffer.byteLength(fromServer[0])).toBeLessThanOrEqual(64 * 1024)
      await pageMatchesSession(page, session)
      const bufferLength = () => page.evaluate(() => (globalThis as any).term.buffer.active.length as number)
      expect(await bufferLength()).toBe(24)
      // Output goes on while the scrollback is on its way.
      session.write('live\r')
      await waitUntil(() => session.screen().lines[22] === 'live', 5000, "cat's copy")
      await pageMatchesSession(page, session)
      await waitUntil(() => held.some((message) => JSON.parse(message).last), 10_000, 'the whole history')
      const total = held.reduce((sum, message) => sum + Buffer.byteLength(message), 0)
      expect(total).toBeGreaterThan(600_000)
      hold = false
      for (const message of held) toPage!(message)
      await page.waitForFunction(() => (globalThis as any).term.buffer.active.length === 10_024, null, { timeout: 10_000 })
      await pageMatchesSession(page, session)
      const top = await page.evaluate(() => (globalThis as any).term.buffer.active.getLine(0).translateToString(true).trimEnd())
      // 20 000 lines, `live` twice (the echo and cat's copy) and the empty last row: 10 000 above the screen.
      expect(top).toBe(line(20000 + 2 + 1 - 24 - 10_000 + 1))
    } finally {
      await context.close()
      await server.close()
      await stop(session, done)
    }
  })

  it.each<[string, { command: string; kill?: boolean; timeoutMs?: number }, string]>([
    ['an exit code', { command: 'read x; exit 3' }, 'the program exited with 3'],
    ['a signal', { command: 'read x; kill -9 $$' }, 'the program was killed by SIGKILL'],
    ['a kill', { command: 'exec sleep 30', kill: true }, 'the program was stopped'],
    ['a timeout', { command: 'exec sleep 30', timeoutMs: 500 }, 'the program timed out'],
  ])('says how a given session ended: %s, and stays on it', async (_, how, said) => {
    const session = new PtySession()
    const done = session.start({ command: how.command, env, timeoutMs: how.timeoutMs ?? 60_000 })
    const server = await createTerminalServer({ session })
    // A timeout may come before the page is up.
    const page = await openPage(server.url, ['connected', 'exited'])
    try {
      if (how.kill) session.kill()
      else if (!how.timeoutMs) session.write('x\r')
      await done
      await page.waitForFunction(() => (globalThis as any).shellwright.state === 'exited', null, { timeout: 10_000 })
      expect(await page.textContent('#state')).toBe(said)
      // A page opened after the end is told too.
      const late = await openPage(server.url, ['exited'])
      expect(await late.textContent('#state')).toBe(said)
      await late.context().close()
      // The server goes away: the page keeps its last screen and says how the program ended.
      await server.close()
      await page.waitForFunction(() => (globalThis as any).shellwright.socket === null, null, { timeout: 5000 })
      expect(await page.evaluate(() => (globalThis as any).shellwright.state)).toBe('exited')
      expect(await page.textContent('#state')).toBe(said)
    } finally {
      await page.context().close()
      await server.close()
    }
  })

  it('says why a program it started could not run', async () => {
    const server = await createTerminalServer({ command: 'true', port: 0 })
    // A server that starts its program: the pages learn the end from the run itself.
    const page = await openPage(server.url, ['exited'])
    try {
      expect(await page.textContent('#state')).toBe('the program exited with 0')
      expect(await server.exited).toMatchObject({ exitCode: 0 })
    } finally {
      await page.context().close()
      await server.close()
    }
    const session = new PtySession()
    const failed = session.start({ command: 'true', cwd: join(scratch, 'missing') })
    await expect(failed).rejects.toThrow(/^Failed to set cwd: /)
    const given = await createTerminalServer({ session })
    const late = await openPage(given.url, ['exited'])
    try {
      expect(await late.textContent('#state')).toMatch(/^the program could not run: Failed to set cwd: /)
    } finally {
      await late.context().close()
      await given.close()
    }
  })

  it('close() kills the program it started and leaves no socket or timer behind', async () => {
    const resources = () => {
      const counts: Record<string, number> = {}
      for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
      return counts
    }
    // Nothing of the server's is left: no more handles of any kind than before it started.
    const noMoreThan = (before: Record<string, number>) =>
      Object.entries(resources()).every(([kind, count]) => count <= (before[kind] ?? 0))
    const before = resources()
    const server = await createTerminalServer({ command: 'echo "pid $$"; exec sleep 600' })
    const page = await openPage(server.url)
    await pageShows(page, 'pid ')
    const pid = Number(
      await page.evaluate(() => (globalThis as any).term.buffer.active.getLine(0).translateToString(true).slice(4)),
    )
    expect(isRunning(pid)).toBe(true)
    expect(resources()).toMatchObject({ TCPServerWrap: 1, TCPSocketWrap: expect.any(Number) })
    await server.close()
    expect(isRunning(pid)).toBe(false)
    await page.waitForFunction(() => (globalThis as any).shellwright.state === 'disconnected', null, { timeout: 5000 })
    await page.context().close()
    const { port } = new URL(server.url)
    await expect(httpStatus(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    await waitUntil(() => noMoreThan(before), 5000, 'no more handles than before')
    expect(resources()).not.toHaveProperty('TCPServerWrap')
    expect(resources()).not.toHaveProperty('TCPSocketWrap')
  })
})

describe('shellwright serve', () => {
  const cli = join(__dirname, '..', 'packages', 'cli', 'bin', 'shellwright.js')

  function serve(args: string[]) {
    const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const out = { stdout: '', stderr: '' }
    child.stdout.on('data', (data) => (out.stdout += data))
    child.stderr.on('data', (data) => (out.stderr += data))
    const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    return { child, out, done }
  }

  it.each(['SIGTERM', 'SIGINT'] as const)('prints the URL with its token, serves the page; %s ends it and the program', async (signal) => {
    const pidFile = join(scratch, `serve-${signal}.pid`)
    const { child, out, done } = serve(['--port', '0', '--', `echo $$ > ${pidFile}; exec sleep 600`])
    await waitUntil(() => out.stdout.includes('\n') && existsSync(pidFile), 10_000, 'the URL and the program')
    expect(out.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32}\n$/)
    const url = out.stdout.trim()
    expect((await httpStatus(url)).status).toBe(200)
    expect((await httpStatus(url.replace(/\?.*/, ''))).status).toBe(401)
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(isRunning(pid)).toBe(true)
    child.kill(signal)
    expect(await done).toBe(0)
    expect(isRunning(pid)).toBe(false)
    expect(out.stderr).toBe('Serving the terminal at the URL above; Ctrl+C stops.\n')
  })

  it('tells the page how the program ended before it stops, and the page stays on it', async () => {
    const { child, out, done } = serve(['--', "printf 'ready> '; read x; exit 4"])
    await waitUntil(() => out.stdout.includes('\n'), 10_000, 'the URL')
    const page = await openPage(out.stdout.trim())
    try {
      await pageShows(page, 'ready>')
      await page.click('#terminal')
      await page.keyboard.type('bye')
      await page.keyboard.press('Enter')
      expect(await done).toBe(4)
      expect(child.exitCode).toBe(4)
      await page.waitForFunction(() => (globalThis as any).shellwright.socket === null, null, { timeout: 5000 })
      expect(await page.evaluate(() => (globalThis as any).shellwright.state)).toBe('exited')
      expect(await page.textContent('#state')).toBe('the program exited with 4')
    } finally {
      await page.context().close()
    }
  })

  it("ends with the program's exit code, and refuses bad arguments with 2", async () => {
    const ended = serve(['--read-only', '--', 'exit 3'])
    expect(await ended.done).toBe(3)
    const badPort = serve(['--port', 'eighty'])
    expect(await badPort.done).toBe(2)
    expect(badPort.out.stderr).toMatch(/^shellwright serve: --port must be an integer from 0 to 65535, got 'eighty'\n/)
    const unknown = serve(['--colour'])
    expect(await unknown.done).toBe(2)
  })
})
