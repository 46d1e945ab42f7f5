'use strict'
// What the MCP tools hand back to a model: bounded text. A transcript longer than its budget loses
// its beginning (the end of a command's output is where its result and errors are) and says so in a
// header; a screen is its rows, exactly as shown, under a status line that says where the cursor is.

/**
 * What colours text and moves the cursor rather than what it says: escape sequences (CSI; OSC,
 * DCS, APC, PM and SOS strings up to BEL or ST, or to the end when cut off; two-byte escapes; a
 * lone ESC) and C0 controls other than tab, newline and carriage return.
 */
const ESCAPES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~])?|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g

/** `text` without escape sequences and control characters, as a person reads it off a terminal. */
function plainText(text) {
  return text.replace(ESCAPES, '')
}

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

/**
 * `text` cut to its last `limit` bytes, with the truncation header when it was longer or when
 * `droppedBefore` bytes were already dropped from its front.
 */
function tail(text, limit, droppedBefore = 0) {
  const out = new OutputTail(limit)
  out.dropped = droppedBefore
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

const COLOR_NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white']

/** A run's colour in words: the 16 ANSI colours by name, other palette entries by number, '#rrggbb'. */
function colorName(color) {
  if (typeof color === 'string' || color >= 16) return String(color)
  return color < 8 ? COLOR_NAMES[color] : `bright-${COLOR_NAMES[color - 8]}`
}

const FLAG_WORDS = [
  ['inverse', 'inverse'],
  ['bold', 'bold'],
  ['dim', 'dim'],
  ['italic', 'italic'],
  ['underline', 'underline'],
  ['strikethrough', 'strike'],
]

/** How a styled run looks, in words ("inverse fg=red bg=#202020"); '' for plain text. */
function styleWords(run) {
  const words = FLAG_WORDS.filter(([flag]) => run[flag]).map(([, word]) => word)
  if (run.fg !== undefined) words.push(`fg=${colorName(run.fg)}`)
  if (run.bg !== undefined) words.push(`bg=${colorName(run.bg)}`)
  return words.join(' ')
}

/**
 * One row's styled runs as text with its styles marked: `⟦inverse⟧ Open ⟦/⟧` — a mark where the
 * look changes, `⟦/⟧` where plain text resumes (and at the end of a row left styled). Brackets a
 * screen hardly ever shows, so the program's own `[` and `{` need no escaping.
 */
function markStyles(runs) {
  let out = ''
  let styled = false
  for (const run of runs) {
    const words = styleWords(run)
    if (words) out += `⟦${words}⟧`
    else if (styled) out += '⟦/⟧'
    styled = words !== ''
    out += run.text
  }
  return styled ? `${out}⟦/⟧` : out
}

/**
 * A screen as facts: its size, the cursor (0-based row,col), its title and its rows as the terminal
 * shows them, trailing blank rows dropped. Nothing is inserted into the rows — the text a model reads
 * is the program's — unless `styled` (the screen's `styledLines()`) is given: then each row marks its
 * styles (see markStyles).
 */
function screenFacts(screen, styled) {
  const lines = styled ? styled.map(markStyles) : [...screen.lines]
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  const { row, col, visible } = screen.cursor
  return { cols: screen.cols, rows: screen.rows, cursor: { row, col, visible }, title: screen.title, lines }
}

/** A screen as text: a status line (the session, what its program does, the size, the cursor), then its rows. */
function renderScreen(id, status, screen, styled) {
  const { cols, rows, cursor, title, lines } = screenFacts(screen, styled)
  const where = `cursor ${cursor.row},${cursor.col}${cursor.visible ? '' : ' hidden'}`
  const titled = title ? ` · title ${JSON.stringify(title)}` : ''
  const header = `[${id} · ${status} · ${cols}x${rows} · ${where}${titled}]`
  return [header, ...lines].join('\n')
}

module.exports = { OutputTail, tail, truncationHeader, describeExit, renderScreen, screenFacts, markStyles, plainText }
