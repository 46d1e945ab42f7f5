'use strict'
// `shellwright/web`: a terminal in the browser. createTerminalServer serves a page (xterm.js, from
// the installed package) over HTTP and streams a PtySession to it over a WebSocket: each page is
// painted from the session's snapshot, then follows the live output; keys and the window's size go
// back to the session. A Shell can be shown instead, read-only, through ShellMirror (lib/mirror.js).
// The wire protocol and flow control are described in lib/viewers.js, the access rules (token,
// Origin) in lib/auth.js.
// ws and xterm.js are optional peer dependencies of the package: checked first.
require('../common/peer-dependencies.js').requirePeers('web')
const http = require('node:http')
const { once } = require('node:events')
const { WebSocketServer } = require('ws')
const { PtySession } = require('../../index.js')
const { readServerOptions } = require('./lib/options.js')
const { loadAssets } = require('./lib/assets.js')
const { requestUrl, isAuthorized, isSameOrigin, tokenCookie } = require('./lib/auth.js')
const { ViewerHub, isSize } = require('./lib/viewers.js')
const { startOptions, describeExit, stopRun } = require('../common/terminal-program.js')
const { mirrorSource } = require('./lib/mirror.js')

/** Client messages larger than this are refused (the connection is closed with 1009). */
const MAX_MESSAGE_BYTES = 1024 * 1024

const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  // xterm.js styles its rows with a <style> element it writes at run time.
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Answers a request that is not let through, on a plain HTTP response or a raw upgrade socket. */
function refuse(target, status) {
  const body = `${status} ${http.STATUS_CODES[status]}\n`
  if (target instanceof http.ServerResponse) {
    target.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length })
    target.end(body)
    return
  }
  target.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  )
}

/** The listener for plain HTTP requests: the page and its assets, to holders of the token. */
function answerRequest(token, port, assets) {
  return (request, response) => {
    const url = requestUrl(request)
    if (!url) return refuse(response, 400)
    if (!isAuthorized(request, url, token, port)) return refuse(response, 401)
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(response, 405)
    const asset = assets.get(url.pathname)
    if (!asset) return refuse(response, 404)
    serveAsset(request, response, asset, { token, port })
  }
}

/** Why a WebSocket upgrade is refused (an HTTP status), or undefined when it may go ahead. */
function upgradeRefusal(request, url, token, port) {
  if (!url) return 400
  if (!isAuthorized(request, url, token, port)) return 401
  if (!isSameOrigin(request)) return 403
  if (url.pathname !== '/ws') return 404
  return undefined
}

function serveAsset(request, response, asset, { token, port }) {
  const headers = {
    'Content-Type': asset.type,
    'Content-Length': asset.body.length,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    // The page's URL holds the token: never send it elsewhere.
    'Referrer-Policy': 'no-referrer',
  }
  if (asset.type.startsWith('text/html')) {
    headers['Content-Security-Policy'] = PAGE_POLICY
    headers['Set-Cookie'] = tokenCookie(token, port)
  }
  response.writeHead(200, headers)
  response.end(request.method === 'HEAD' ? undefined : asset.body)
}

/** The page's fitted size from the upgrade URL (`?cols=&rows=`), if it sent a valid one. */
function sizeFromQuery(url) {
  const cols = Number(url.searchParams.get('cols'))
  const rows = Number(url.searchParams.get('rows'))
  return isSize(cols, rows) ? { cols, rows } : undefined
}

/**
 * What the server shows, and the run it started (`started`, its promise) if it started one: a
 * session it starts is its own to end, one it was given is never touched.
 */
function showing(config) {
  if (config.mirror) return { source: mirrorSource(config.mirror) }
  if (config.session) return { source: config.session }
  const session = new PtySession()
  return { source: session, started: session.start(startOptions(config.command)) }
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function urlFor(host, port, token) {
  const name = host.includes(':') ? `[${host}]` : host
  return `http://${name}:${port}/?token=${token}`
}

/**
 * Starts a web terminal server; resolves once it listens.
 *
 * @example
 * const { createTerminalServer } = require('shellwright/web')
 * const server = await createTerminalServer({ command: 'htop' })
 * console.log(`open ${server.url}`)
 * // … later
 * await server.close()
 */
async function createTerminalServer(options) {
  const config = readServerOptions(options)
  const assets = await loadAssets()
  const server = http.createServer()
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES })
  await listen(server, config.port, config.host)
  // Errors of single connections are handled where they happen; nothing else may end the process.
  server.on('error', () => {})
  const port = server.address().port

  let shown
  try {
    shown = showing(config)
  } catch (error) {
    server.close()
    throw error
  }
  const hub = new ViewerHub(shown.source, { readOnly: config.readOnly })
  // Pages are told how the program ended before anyone awaiting `exited` goes on (and closes).
  const done = shown.started?.then(
    (result) => {
      hub.ended(describeExit(result))
      return result
    },
    (error) => {
      hub.ended(describeExit({ error: error.message }))
      throw error
    },
  )
  // Whoever never awaits `exited` must not get an unhandled rejection.
  done?.catch(() => {})

  let closing = null
  server.on('request', answerRequest(config.token, port, assets))
  server.on('upgrade', (request, socket, head) => {
    socket.on('error', () => socket.destroy())
    const url = requestUrl(request)
    const refusal = upgradeRefusal(request, url, config.token, port)
    if (refusal || closing) return refuse(socket, refusal ?? 404)
    sockets.handleUpgrade(request, socket, head, (ws) => {
      if (closing) ws.terminate()
      else hub.add(ws, sizeFromQuery(url))
    })
  })

  const close = () => {
    closing ??= (async () => {
      hub.close()
      sockets.close()
      server.close()
      server.closeAllConnections()
      await once(server, 'close')
      if (done) await stopRun(shown.source, done)
    })()
    return closing
  }
  return { url: urlFor(config.host, port, config.token), token: config.token, exited: done, close }
}

module.exports = { createTerminalServer }
