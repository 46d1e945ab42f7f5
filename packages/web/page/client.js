// The web terminal's page: an xterm.js terminal that mirrors the server's session over a WebSocket
// (protocol: packages/web/lib/viewers.js). Every connection starts with a snapshot that replaces
// what the terminal shows, so a page that reconnects (with backoff, by itself) is repainted from the
// session's own screen rather than from replayed output: the screen first, then the scrollback,
// which is written behind synchronized output (mode 2026) so the screen stays as it is until the
// whole history is in. A terminal whose size the page does not set (read-only, or another page
// typed last) is scaled down to fit the window, never scrolled. Once the program has ended the page
// says how and stays. `window.term` is the xterm.js Terminal.
'use strict'
;(function () {
  const RETRY_FIRST_MS = 250
  const RETRY_MAX_MS = 8000
  /** Acknowledge written output at least this often, so the server keeps streaming. */
  const ACK_EVERY_BYTES = 64 * 1024
  const RESIZE_DEBOUNCE_MS = 100
  /** RIS, which every snapshot starts with. */
  const RESET = '\x1bc'
  const SYNC_START = '\x1b[?2026h'
  const SYNC_END = '\x1b[?2026l'

  const token = new URLSearchParams(location.search).get('token')
  const container = document.getElementById('terminal')
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
  term.open(container)
  term.focus()
  window.term = term

  let connection = null
  let failures = 0
  let readOnly = false
  /** Why the server refused the last connection, shown until the next one succeeds. */
  let refusal = null
  /** Snapshots painted since the page loaded (one per connection, plus one per resync). */
  let snapshots = 0
  /**
   * While the scrollback of the last snapshot comes in: its pieces so far and the output written
   * since the snapshot (written again after the history, which repaints from the snapshot's point).
   */
  let history = null
  /** How the program ended, once the server said so: the page stays on it. */
  let exited = null
  /** Whether the terminal's size came from the server rather than from fitting the window. */
  let sized = false

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
      if (connection !== current) return
      if (exited) connection = null
      else retry()
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
    if (history) history.replay.push(bytes)
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
    else if (message.type === 'history') addHistory(message)
    else if (message.type === 'exit') {
      exited = message
      showState('exited', describeExit(message))
    } else if (message.type === 'error') {
      refusal = message.message
      showState('error', message.message)
    }
  }

  /** How the program ended, in words. */
  function describeExit({ exitCode, signal, cancelled, timedOut, error }) {
    if (error) return `the program could not run: ${error}`
    if (timedOut) return 'the program timed out'
    if (cancelled) return 'the program was stopped'
    if (signal) return `the program was killed by ${signal}`
    return `the program exited with ${exitCode}`
  }

  /** Replaces the screen with a snapshot, after whatever xterm.js still has queued. */
  function paint({ data, cols, rows, readOnly: viewOnly, history: more }) {
    snapshots++
    readOnly = viewOnly
    term.options.disableStdin = viewOnly
    readOnlyView.hidden = !viewOnly
    history = more ? { pieces: [], replay: [] } : null
    term.write('', () => {
      term.reset()
      sized = Boolean(cols && rows)
      if (sized) term.resize(cols, rows)
      else fit.fit()
      requestAnimationFrame(fitView)
    })
    term.write(data)
    failures = 0
    refusal = null
    if (!exited) showState('connected', 'connected')
  }

  /**
   * Takes a piece of the full repaint; with the last, repaints from it and writes again what came
   * since, all inside synchronized output, so the screen shown does not change until it is done.
   */
  function addHistory({ data, last }) {
    if (!history) return
    history.pieces.push(data)
    if (!last) return
    const full = history.pieces.join('')
    const replay = history.replay
    history = null
    const body = full.startsWith(RESET) ? full.slice(RESET.length) : full
    // RIS ends synchronized output, so it is entered right after.
    term.write(RESET + SYNC_START + body)
    for (const bytes of replay) term.write(bytes)
    term.write(SYNC_END)
  }

  /**
   * Scales the terminal down to fit the window when its size is not the window's (read-only, or
   * another page typed last), so nothing is ever scrolled out of view.
   */
  function fitView() {
    const screen = term.element && term.element.querySelector('.xterm-screen')
    if (!screen) return
    term.element.style.transform = ''
    if (!sized) return
    const style = getComputedStyle(container)
    const width = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
    const height = container.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)
    const scale = Math.min(1, width / screen.offsetWidth, height / screen.offsetHeight)
    if (scale < 1) term.element.style.transform = `scale(${scale})`
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
      fitView()
    }, RESIZE_DEBOUNCE_MS)
  })
  // xterm.js lays out a new size on its next frame: measure after it.
  term.onResize(() => requestAnimationFrame(fitView))

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
