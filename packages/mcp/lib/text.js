'use strict'
// What the MCP tools hand back to a model: bounded text. A transcript longer than its budget loses
// its beginning (the end of a command's output is where its result and errors are) and says so in a
// header; a screen is its rows, exactly as shown, under a status line that says where the cursor is.

/** The header put in front of a transcript whose beginning was dropped. */
function truncationHeader(droppedBytes) {
  return `[Terminal output truncated: ~${Math.ceil(droppedBytes / 1024)} KB dropped from beginning]\n`
}

/** Whether `byte` continues a UTF-8 sequence (so a cut before it would split a character). */
const isContinuation = (byte) => (byte & 0xc0) === 0x80

/**
 * Keeps the last `limit` bytes of a stream of chunks, counting what it drops, so a command that
 * prints gigabytes holds no more than its budget while it runs.
 */
class OutputTail {
  constructor(limit) {
    this.limit = limit
    this.chunks = []
    this.bytes = 0
    this.dropped = 0
  }

  push(chunk) {
    const buffer = Buffer.from(chunk, 'utf8')
    this.chunks.push(buffer)
    this.bytes += buffer.length
    while (this.chunks.length > 1 && this.bytes - this.chunks[0].length >= this.limit) {
      const [first] = this.chunks.splice(0, 1)
      this.bytes -= first.length
      this.dropped += first.length
    }
  }

  /** The kept text, with the truncation header when anything was dropped. */
  text() {
    let buffer = Buffer.concat(this.chunks)
    let dropped = this.dropped
    if (buffer.length > this.limit) {
      let cut = buffer.length - this.limit
      while (cut < buffer.length && isContinuation(buffer[cut])) cut++
      dropped += cut
      buffer = buffer.subarray(cut)
    }
    const text = buffer.toString('utf8')
    return dropped > 0 ? truncationHeader(dropped) + text : text
  }
}

/** `text` cut to its last `limit` bytes, with the truncation header when it was longer. */
function tail(text, limit) {
  const out = new OutputTail(limit)
  out.push(text)
  return out.text()
}

/** How a PTY run ended, in words: "exited with code 0", "killed by SIGTERM", "cancelled". */
function describeExit(result) {
  if (result.cancelled) return 'cancelled'
  if (result.timedOut) return 'timed out'
  if (result.signal) return `killed by ${result.signal} (exit code ${result.exitCode})`
  return `exited with code ${result.exitCode}`
}

/**
 * A screen as facts: its size, the cursor (0-based row,col), its title and its rows as the terminal
 * shows them, trailing blank rows dropped. Nothing is inserted into the rows: the text a model reads
 * is the program's.
 */
function screenFacts(screen) {
  const lines = [...screen.lines]
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  const { row, col, visible } = screen.cursor
  return { cols: screen.cols, rows: screen.rows, cursor: { row, col, visible }, title: screen.title, lines }
}

/** A screen as text: a status line (the session, what its program does, the size, the cursor), then its rows. */
function renderScreen(id, status, screen) {
  const { cols, rows, cursor, title, lines } = screenFacts(screen)
  const where = `cursor ${cursor.row},${cursor.col}${cursor.visible ? '' : ' hidden'}`
  const titled = title ? ` · title ${JSON.stringify(title)}` : ''
  const header = `[${id} · ${status} · ${cols}x${rows} · ${where}${titled}]`
  return [header, ...lines].join('\n')
}

module.exports = { OutputTail, tail, truncationHeader, describeExit, renderScreen, screenFacts }
