'use strict'
// The viewers of one terminal: every WebSocket is a `Viewer` with its own attachment to the
// session, and the `ViewerHub` routes their input and sizes.
//
// Wire protocol (one WebSocket per page, at /ws):
//   server → page  text frames are JSON control messages:
//                    {"type":"snapshot","data":ANSI,"cols":C,"rows":R,"readOnly":B,"history":H}
//                        reset the terminal, size it C × R (absent: fit the window), write ANSI;
//                        the first message of every connection, and again after any resync. With
//                        H true, ANSI repaints the screen alone (a screenful, so the screen is
//                        right after a few KB) and "history" messages follow
//                    {"type":"history","data":ANSI,"last":B}
//                        a piece of the full repaint (scrollback and screen) cut at the same
//                        point of the stream as the last snapshot; pieces are sent one after the
//                        other as the socket takes them, with live output in between. With the
//                        last piece the page repaints from the whole, then writes again the
//                        output that came since the snapshot
//                    {"type":"exit","exitCode":N,"signal":S,"cancelled":B,"timedOut":B,"error":M}
//                        the program ended (N and S null unless it exited or died of a signal; M
//                        the error that kept it from running, else null); after it the server may
//                        close the socket with 1000, and the page does not reconnect
//                    {"type":"error","message":M}             the session cannot be shown; the socket closes
//                  binary frames are terminal output (UTF-8), written after the last snapshot
//   page → server  text frames, JSON:
//                    {"type":"input","data":S}           keys typed (dropped when read-only)
//                    {"type":"resize","cols":C,"rows":R} the size that fits the page's window
//                    {"type":"ack","bytes":N}            output bytes the page has written so far
//                  anything else, or malformed, is ignored
// The upgrade URL may carry `cols` and `rows` (the page's fitted size) so that the first viewer
// sizes the terminal before its first snapshot.
//
// Sizes: the terminal takes the size of the page that typed (or was resized) last; a page that
// only opens takes it only when no page is driving the size yet, so opening a second page never
// resizes the terminal under the first.
//
// Flow control is the tmux model: a viewer whose page has not acknowledged more than
// BACKLOG_LIMIT bytes of output is detached, and once the page has caught up it is attached again
// and repainted from a fresh snapshot. A slow page never slows the program or grows the server's
// memory; it skips to the current screen.

const { describeExit } = require('../../common/terminal-program.js')

const BACKLOG_LIMIT = 4 * 1024 * 1024
const MAX_SIZE = 1000
/** Characters of the full repaint per `history` message. */
const HISTORY_PIECE = 64 * 1024

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
    /** The page was told how the program ended. */
    this.toldExit = false
  }

  /** Paints the page from a fresh snapshot and follows the live stream from there. */
  sync() {
    this.detach()
    this.behind = false
    let attachment
    try {
      // Chunks and the end come on later turns of the event loop, after the snapshot was sent.
      attachment = this.hub.source.attach(
        (chunk) => {
          if (this.attachment === attachment) this.forward(chunk)
        },
        (end) => this.tellExit(describeExit(end)),
      )
    } catch (error) {
      this.refuse(error)
      return
    }
    this.attachment = attachment
    const { snapshot, screenSnapshot } = attachment
    const history = screenSnapshot !== undefined && screenSnapshot !== snapshot
    this.paint(history ? screenSnapshot : snapshot, attachment.cols, attachment.rows, history)
    if (history) this.sendHistory(attachment, snapshot, 0)
    if (this.hub.exit) this.tellExit(this.hub.exit)
  }

  /** Tells the page to reset, take the size `cols` × `rows` and write `data`. */
  paint(data, cols, rows, history = false) {
    this.cols = cols
    this.rows = rows
    if (isSize(cols, rows)) this.hub.size = { cols, rows }
    this.control({ type: 'snapshot', data, cols, rows, readOnly: this.hub.readOnly, history })
  }

  /**
   * Sends the full repaint from `at` in pieces, the next once the socket has taken the last, so
   * live output goes out in between; stops when the viewer follows another attachment.
   */
  sendHistory(attachment, snapshot, at) {
    if (this.attachment !== attachment || this.socket.readyState !== this.socket.OPEN) return
    let end = Math.min(at + HISTORY_PIECE, snapshot.length)
    // Never between the two halves of a surrogate pair.
    if (end < snapshot.length && /[\ud800-\udbff]/.test(snapshot[end - 1])) end++
    const last = end === snapshot.length
    this.socket.send(JSON.stringify({ type: 'history', data: snapshot.slice(at, end), last }), (error) => {
      if (!error && !last) this.sendHistory(attachment, snapshot, end)
    })
  }

  /** Tells the page how the program ended, once. */
  tellExit(exit) {
    if (this.toldExit || this.socket.readyState !== this.socket.OPEN) return
    this.toldExit = true
    this.control({ type: 'exit', ...exit })
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

  /** Disconnects the page: after the program's end has been told, a clean close it does not retry. */
  disconnect() {
    this.detach()
    if (this.toldExit) this.socket.close(1000, 'the program ended')
    else this.socket.terminate()
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
   * `source` has `attach(onData, onEnd)`, `write(data)` and `resize(cols, rows)` (a PtySession
   * has exactly these); its attachments may have a `screenSnapshot` to paint first.
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
    /** How the program ended, once it has (servers that started it; others learn it per viewer). */
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
    // Opening a page takes the size only when no page drives it yet: the size is the one of the
    // page that typed last, and a second page must not resize the terminal under the first.
    if (size && !this.readOnly && this.active === null) this.activate(viewer)
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
    for (const viewer of this.viewers) viewer.tellExit(exit)
  }

  /**
   * Detaches and disconnects every viewer: those told that the program ended get a clean close
   * after that message; the others are dropped.
   */
  close() {
    for (const viewer of this.viewers) viewer.disconnect()
    this.viewers.clear()
    this.active = null
  }
}

module.exports = { ViewerHub, isSize }
