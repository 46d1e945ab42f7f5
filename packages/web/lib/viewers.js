'use strict'
// The viewers of one terminal: every WebSocket is a `Viewer` with its own attachment to the
// session, and the `ViewerHub` routes their input and sizes.
//
// Wire protocol (one WebSocket per page, at /ws):
//   server → page  text frames are JSON control messages:
//                    {"type":"snapshot","data":ANSI,"cols":C,"rows":R,"readOnly":B}
//                        reset the terminal, size it C × R (absent: fit the window), write ANSI;
//                        the first message of every connection, and again after any resync
//                    {"type":"exit","exitCode":N,"signal":S}  the program ended (servers that started it)
//                    {"type":"error","message":M}             the session cannot be shown; the socket closes
//                  binary frames are terminal output (UTF-8), written after the last snapshot
//   page → server  text frames, JSON:
//                    {"type":"input","data":S}           keys typed (dropped when read-only)
//                    {"type":"resize","cols":C,"rows":R} the size that fits the page's window
//                    {"type":"ack","bytes":N}            output bytes the page has written so far
//                  anything else, or malformed, is ignored
// The upgrade URL may carry `cols` and `rows` (the page's fitted size) so that a connecting viewer
// sizes the terminal before its first snapshot.
//
// Flow control is the tmux model: a viewer whose page has not acknowledged more than
// BACKLOG_LIMIT bytes of output is detached, and once the page has caught up it is attached again
// and repainted from a fresh snapshot. A slow page never slows the program or grows the server's
// memory; it skips to the current screen.

const BACKLOG_LIMIT = 4 * 1024 * 1024
const MAX_SIZE = 1000

function isSize(cols, rows) {
  const ok = (n) => Number.isInteger(n) && n >= 1 && n <= MAX_SIZE
  return ok(cols) && ok(rows)
}

class Viewer {
  constructor(socket, hub, size) {
    this.socket = socket
    this.hub = hub
    /** The size that fits the page's window, as the page last reported it. */
    this.size = size
    this.attachment = null
    /** The size the page was last told to take. */
    this.cols = undefined
    this.rows = undefined
    this.sent = 0
    this.acked = 0
    this.behind = false
  }

  /** Paints the page from a fresh snapshot and follows the live stream from there. */
  sync() {
    this.detach()
    this.behind = false
    let attachment
    try {
      // Chunks come on later turns of the event loop, after the snapshot has been sent.
      attachment = this.hub.source.attach((chunk) => {
        if (this.attachment === attachment) this.forward(chunk)
      })
    } catch (error) {
      this.refuse(error)
      return
    }
    this.attachment = attachment
    this.paint(attachment.snapshot, attachment.cols, attachment.rows)
    if (this.hub.exit) this.control({ type: 'exit', ...this.hub.exit })
  }

  /** Tells the page to reset, take the size `cols` × `rows` and write `data`. */
  paint(data, cols, rows) {
    this.cols = cols
    this.rows = rows
    if (isSize(cols, rows)) this.hub.size = { cols, rows }
    this.control({ type: 'snapshot', data, cols, rows, readOnly: this.hub.readOnly })
  }

  forward(chunk) {
    if (this.behind) return
    const { cols, rows } = this.attachment
    // After a resize the session sends each viewer a resync: a fresh snapshot drawn for the new
    // size, which the attachment's size announces. The page must take that size first.
    if (cols !== this.cols || rows !== this.rows) return this.paint(chunk, cols, rows)
    const bytes = Buffer.from(chunk, 'utf8')
    this.sent += bytes.length
    this.socket.send(bytes, { binary: true })
    if (this.sent - this.acked > BACKLOG_LIMIT) {
      // Stop following; the page repaints from a snapshot once it has caught up.
      this.detach()
      this.behind = true
    }
  }

  acknowledge(bytes) {
    if (bytes < this.acked || bytes > this.sent) return
    this.acked = bytes
    if (this.behind && this.acked === this.sent) this.sync()
  }

  control(message) {
    this.socket.send(JSON.stringify(message))
  }

  /** Tells the page why the session cannot be shown, and closes (the page retries later). */
  refuse(error) {
    this.control({ type: 'error', message: error && error.message ? error.message : String(error) })
    this.socket.close(1011, 'session unavailable')
  }

  detach() {
    const attachment = this.attachment
    this.attachment = null
    if (attachment) attachment.detach()
  }

  receive(data, isBinary) {
    if (isBinary) return
    let message
    try {
      message = JSON.parse(data.toString('utf8'))
    } catch {
      return
    }
    if (message === null || typeof message !== 'object') return
    if (message.type === 'input' && typeof message.data === 'string') this.hub.input(this, message.data)
    else if (message.type === 'resize' && isSize(message.cols, message.rows)) {
      this.hub.resize(this, { cols: message.cols, rows: message.rows })
    } else if (message.type === 'ack' && Number.isSafeInteger(message.bytes)) this.acknowledge(message.bytes)
  }
}

class ViewerHub {
  /**
   * `source` has `attach(onData)`, `write(data)` and `resize(cols, rows)` (a PtySession has
   * exactly these).
   */
  constructor(source, { readOnly }) {
    this.source = source
    this.readOnly = readOnly
    this.viewers = new Set()
    /** The viewer that typed or resized last: the terminal takes its size. */
    this.active = null
    /** The terminal's size as the last snapshot gave it, and the size last asked for. */
    this.size = null
    this.requested = null
    /** How the program ended, once it has (servers that started it). */
    this.exit = null
  }

  /** Takes a new WebSocket; `size` is the page's fitted size from the upgrade URL, if any. */
  add(socket, size) {
    const viewer = new Viewer(socket, this, size)
    this.viewers.add(viewer)
    // A broken or hostile client costs its own connection only: ws reports bad frames and
    // oversized messages as an error followed by a close.
    socket.on('error', () => {})
    socket.on('message', (data, isBinary) => viewer.receive(data, isBinary))
    socket.on('close', () => this.remove(viewer))
    if (size && !this.readOnly) this.activate(viewer)
    viewer.sync()
  }

  remove(viewer) {
    viewer.detach()
    this.viewers.delete(viewer)
    if (this.active === viewer) this.active = null
  }

  input(viewer, data) {
    if (this.readOnly) return
    this.activate(viewer)
    try {
      this.source.write(data)
    } catch {
      // The program has ended: there is nobody to type to.
    }
  }

  resize(viewer, size) {
    viewer.size = size
    if (this.readOnly) return
    if (this.active === null || this.active === viewer) this.activate(viewer)
  }

  /** Makes `viewer` the active one and gives the terminal its size (repainting every viewer). */
  activate(viewer) {
    this.active = viewer
    const size = viewer.size
    const current = this.requested ?? this.size
    if (!size || (current && current.cols === size.cols && current.rows === size.rows)) return
    this.requested = size
    try {
      // Every attachment then gets a resync drawn for the new size (see Viewer.forward): xterm.js
      // would reflow the old lines differently from the session's emulator.
      this.source.resize(size.cols, size.rows)
    } catch {
      // The program has ended: its size no longer matters.
    }
  }

  /** Records how the program ended and tells every viewer. */
  ended(exit) {
    this.exit = exit
    for (const viewer of this.viewers) viewer.control({ type: 'exit', ...exit })
  }

  /** Detaches and drops every viewer's connection. */
  close() {
    for (const viewer of this.viewers) {
      viewer.detach()
      viewer.socket.terminate()
    }
    this.viewers.clear()
    this.active = null
  }
}

module.exports = { ViewerHub, isSize }
