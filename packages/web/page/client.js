// The web terminal's page: an xterm.js terminal that mirrors the server's session over a WebSocket
// (protocol: packages/web/lib/viewers.js). Every connection starts with a snapshot that replaces
// what the terminal shows, so a page that reconnects (with backoff, by itself) is repainted from the
// session's own screen rather than from replayed output. `window.term` is the xterm.js Terminal.
'use strict'
;(function () {
  const RETRY_FIRST_MS = 250
  const RETRY_MAX_MS = 8000
  /** Acknowledge written output at least this often, so the server keeps streaming. */
  const ACK_EVERY_BYTES = 64 * 1024
  const RESIZE_DEBOUNCE_MS = 100

  const token = new URLSearchParams(location.search).get('token')
  const stateView = document.getElementById('state')
  const readOnlyView = document.getElementById('read-only')
  const titleView = document.getElementById('title')

  const term = new Terminal({
    cursorBlink: true,
    scrollback: 10000,
    fontSize: 14,
    fontFamily: '"DejaVu Sans Mono", "Liberation Mono", ui-monospace, monospace',
    theme: { background: '#1e1e1e' },
  })
  const fit = new FitAddon.FitAddon()
  term.loadAddon(fit)
  term.open(document.getElementById('terminal'))
  term.focus()
  window.term = term

  let connection = null
  let failures = 0
  let readOnly = false
  /** Why the server refused the last connection, shown until the next one succeeds. */
  let refusal = null
  /** Snapshots painted since the page loaded (one per connection, plus one per resync). */
  let snapshots = 0

  function showState(state, text) {
    document.body.dataset.state = state
    stateView.textContent = text
  }

  /** The size that fills the window, or null before layout. */
  function fittedSize() {
    const size = fit.proposeDimensions()
    return size && size.cols > 0 && size.rows > 0 ? { cols: size.cols, rows: size.rows } : null
  }

  function send(message) {
    if (connection && connection.socket.readyState === WebSocket.OPEN) connection.socket.send(JSON.stringify(message))
  }

  function connect() {
    const url = new URL('ws', location.href)
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:'
    url.search = ''
    if (token) url.searchParams.set('token', token)
    const size = fittedSize()
    if (size) {
      url.searchParams.set('cols', size.cols)
      url.searchParams.set('rows', size.rows)
    }
    const socket = new WebSocket(url)
    socket.binaryType = 'arraybuffer'
    // Bytes of output received and written by xterm.js over this connection.
    const current = { socket, received: 0, written: 0, acked: 0 }
    connection = current
    showState('connecting', failures ? `reconnecting (attempt ${failures + 1})…` : 'connecting…')
    socket.onmessage = (event) => {
      if (connection === current) receive(current, event.data)
    }
    socket.onclose = () => {
      if (connection === current) retry()
    }
  }

  function retry() {
    connection = null
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures)
    failures++
    const why = refusal ?? 'disconnected'
    showState(refusal ? 'error' : 'disconnected', `${why}, reconnecting in ${(delay / 1000).toFixed(1)} s`)
    setTimeout(connect, delay)
  }

  function receive(current, data) {
    if (typeof data === 'string') return control(JSON.parse(data))
    const bytes = new Uint8Array(data)
    current.received += bytes.length
    term.write(bytes, () => {
      current.written += bytes.length
      acknowledge(current)
    })
  }

  function acknowledge(current) {
    const caughtUp = current.written === current.received
    if (connection !== current || (!caughtUp && current.written - current.acked < ACK_EVERY_BYTES)) return
    current.acked = current.written
    send({ type: 'ack', bytes: current.written })
  }

  function control(message) {
    if (message.type === 'snapshot') paint(message)
    else if (message.type === 'exit') {
      const how = message.signal ? `by ${message.signal}` : `with code ${message.exitCode}`
      showState('exited', `the program exited ${how}`)
    } else if (message.type === 'error') {
      refusal = message.message
      showState('error', message.message)
    }
  }

  /** Replaces the screen with a snapshot, after whatever xterm.js still has queued. */
  function paint({ data, cols, rows, readOnly: viewOnly }) {
    snapshots++
    readOnly = viewOnly
    term.options.disableStdin = viewOnly
    readOnlyView.hidden = !viewOnly
    term.write('', () => {
      term.reset()
      if (cols && rows) term.resize(cols, rows)
      else fit.fit()
    })
    term.write(data)
    failures = 0
    refusal = null
    showState('connected', 'connected')
  }

  term.onData((data) => {
    if (!readOnly) send({ type: 'input', data })
  })
  term.onTitleChange((title) => {
    titleView.textContent = title || 'Shellwright'
    document.title = title ? `${title} — Shellwright` : 'Shellwright'
  })

  let resizeTimer = null
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer)
    resizeTimer = setTimeout(() => {
      const size = fittedSize()
      if (size && !readOnly) send({ type: 'resize', cols: size.cols, rows: size.rows })
    }, RESIZE_DEBOUNCE_MS)
  })

  // For tests and the curious: the live socket and the connection state.
  window.shellwright = {
    get socket() {
      return connection && connection.socket
    },
    get state() {
      return document.body.dataset.state
    },
    get snapshots() {
      return snapshots
    },
  }

  connect()
})()
