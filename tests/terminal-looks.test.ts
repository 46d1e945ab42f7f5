// What a viewer reads beyond the text, from JS: bells, styled runs checked cell by cell against
// @xterm/headless on output recorded from real colourful programs, the rows that changed, and
// snapshots with less (or no) scrollback.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PtySession, type StyledRun, VirtualTerminal } from '../index.js'
import { expectRangeError, expectTypeError, waitUntil } from './helpers.js'
import { type Xterm, xterm, xtermLines, xtermWrite } from './xterm.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-looks-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A fixed terminal and HOME, so the host's settings cannot change what the programs draw. */
const env = { TERM: 'xterm-256color', COLORTERM: 'truecolor', HOME: scratch, LANG: 'C.UTF-8' }

/** One cell's look, in the terms of StyledRun. */
interface CellLook {
  fg?: string | number
  bg?: string | number
  bold?: boolean
  italic?: boolean
  underline?: boolean
  inverse?: boolean
  dim?: boolean
  strikethrough?: boolean
}

type XtermCell = NonNullable<ReturnType<NonNullable<ReturnType<Xterm['buffer']['active']['getLine']>>['getCell']>>

function xtermColor(mode: 'fg' | 'bg', cell: XtermCell): string | number | undefined {
  const [isDefault, isRgb, color] =
    mode === 'fg' ? [cell.isFgDefault(), cell.isFgRGB(), cell.getFgColor()] : [cell.isBgDefault(), cell.isBgRGB(), cell.getBgColor()]
  if (isDefault) return undefined
  return isRgb ? `#${color.toString(16).padStart(6, '0')}` : color
}

function xtermLook(cell: XtermCell): CellLook {
  const look: CellLook = { fg: xtermColor('fg', cell), bg: xtermColor('bg', cell) }
  if (cell.isBold()) look.bold = true
  if (cell.isItalic()) look.italic = true
  if (cell.isUnderline()) look.underline = true
  if (cell.isInverse()) look.inverse = true
  if (cell.isDim()) look.dim = true
  if (cell.isStrikethrough()) look.strikethrough = true
  return look
}

function runLook(run: StyledRun): CellLook {
  const { text: _text, ...look } = run
  return { fg: undefined, bg: undefined, ...look }
}

/** A blank that shows nothing: what a row's runs leave out at its end. */
function isPlainBlank(chars: string, look: CellLook): boolean {
  return (chars === '' || chars === ' ') && look.bg === undefined && !look.inverse && !look.underline && !look.strikethrough
}

/**
 * Compares `runs` with xterm's visible row `row`, cell by cell: each cell's characters and look
 * against the run that holds them, and every cell past the runs must be a blank that shows
 * nothing. Returns the number of cells compared.
 */
function compareRow(term: Xterm, row: number, runs: StyledRun[]): number {
  const buffer = term.buffer.active
  const line = buffer.getLine(buffer.baseY + row)
  if (!line) throw new Error(`xterm has no row ${row}`)
  const cells: Array<{ chars: string; look: CellLook }> = []
  for (const run of runs) {
    for (const chars of [...new Intl.Segmenter().segment(run.text)].map((s) => s.segment)) {
      cells.push({ chars, look: runLook(run) })
    }
  }
  let next = 0
  for (let col = 0; col < term.cols; col++) {
    const cell = line.getCell(col)
    if (!cell) throw new Error(`xterm has no cell ${row},${col}`)
    if (cell.getWidth() === 0) continue
    const chars = cell.getChars() || ' '
    const where = `row ${row} col ${col} (${JSON.stringify(xtermLines(term)[buffer.baseY + row])})`
    if (next < cells.length) {
      expect({ chars: cells[next].chars, ...cells[next].look }, where).toEqual({ chars, ...xtermLook(cell) })
      next++
    } else {
      expect(isPlainBlank(chars, xtermLook(cell)), `${where}: past the runs, ${JSON.stringify(xtermLook(cell))}`).toBe(true)
    }
  }
  expect(next, `row ${row}: every run's text has a cell`).toBe(cells.length)
  return term.cols
}

/** Runs `command` in a session of `cols` × `rows`, drives it with `steps`, and returns everything it wrote. */
async function record(command: string, cols: number, rows: number, steps: (session: PtySession) => Promise<void>) {
  const session = new PtySession()
  let stream = ''
  const done = session.start({ command, cols, rows, env, timeoutMs: 30_000 }, (chunk) => (stream += chunk))
  try {
    await steps(session)
  } finally {
    await done.catch(() => {})
  }
  return { stream, session }
}

const screenShows = (session: PtySession, text: string) => () => session.screen().lines.some((line) => line.includes(text))

describe('styledLines', () => {
  it('agrees with @xterm/headless cell by cell on htop, its setup menu, and coloured ls, grep and git output', async () => {
    const htop = await record('htop', 100, 30, async (session) => {
      await waitUntil(screenShows(session, 'F10Quit'), 15_000, 'htop drew')
      await session.waitForInput({ timeoutMs: 10_000 })
      session.write('\x1bOQ')
      await waitUntil(screenShows(session, 'Display options'), 10_000, 'the setup screen')
      await session.waitForInput({ timeoutMs: 10_000 })
      session.write('\x1b[B\x1b[B')
      await session.waitForInput({ timeoutMs: 10_000 })
      session.write('\x1bq')
    })
    const script = [
      `cd '${scratch}' && git init -q repo && cd repo && git config user.email a@b && git config user.name A`,
      'echo one > a.txt && git add a.txt && git commit -qm "first: add a"',
      'echo two >> a.txt && mkdir d && touch d/x.sh && chmod +x d/x.sh && git add -A && git commit -qm "second"',
      'git log --color=always --graph --decorate --stat',
      'git diff --color=always HEAD~1 -- a.txt',
      'ls --color=always -la / d',
      'printf "error here\\nwarn\\n" | grep --color=always -E "error|warn"',
      `printf '\\033[1;2;3;4;9mall\\033[22;23;24;29m \\033[4:3mcurly\\033[0m \\033[38;2;255;128;0;48;5;17mtrue\\033[7m inv \\033[27;39;49m\\n'`,
      `printf '\\033[44m\\033[Kbar to the edge\\033[0m\\n\\033[97;100m bright \\033[0m 日本語 e\\314\\201\\n'`,
    ].join('; ')
    const shell = await record(script, 100, 30, async () => {})
    let cells = 0
    for (const { stream, session } of [htop, shell]) {
      const ours = new VirtualTerminal({ cols: 100, rows: 30 })
      ours.write(stream)
      const theirs = xterm(100, 30)
      await xtermWrite(theirs, stream)
      const lines = ours.styledLines()
      expect(lines.length).toBe(30)
      // The session's own terminal saw the same bytes.
      expect(session.styledLines()).toEqual(lines)
      lines.forEach((runs, row) => (cells += compareRow(theirs, row, runs)))
    }
    expect(cells).toBe(2 * 30 * 100)
    // The streams were colourful: palette, direct colours and every attribute showed up.
    const all = [htop, shell].flatMap(({ session }) => session.styledLines().flat())
    expect(all.some((run) => typeof run.fg === 'number' && run.fg < 16)).toBe(true)
    expect(all.some((run) => typeof run.bg === 'number')).toBe(true)
    expect(all.some((run) => run.fg === '#ff8000' && run.bg === 17)).toBe(true)
    for (const flag of ['bold', 'italic', 'underline', 'inverse', 'dim', 'strikethrough'] as const) {
      expect(all.some((run) => run[flag] === true), flag).toBe(true)
    }
  }, 60_000)

  it('gives plain text one run with no style fields, and a highlighted entry its colours', () => {
    const term = new VirtualTerminal({ cols: 20, rows: 3 })
    term.write('plain\r\n\x1b[30;46m Item two \x1b[0m  \x1b[38;2;1;2;3mx')
    expect(term.styledLines()).toEqual([
      [{ text: 'plain' }],
      [{ text: ' Item two ', fg: 0, bg: 6 }, { text: '  ' }, { text: 'x', fg: '#010203' }],
      [],
    ])
  })
})

describe('bells', () => {
  it('counts BEL, not the BEL that ends an OSC, from the start of the terminal or run', async () => {
    const term = new VirtualTerminal()
    term.write('\x07a\x1b]2;title\x07b\x07')
    expect(term.screen().bells).toBe(2)
    const session = new PtySession()
    await session.start({ command: "printf 'x\\a\\033]0;t\\a\\a'" })
    expect(session.screen().bells).toBe(2)
    await session.start({ command: 'true' })
    expect(session.screen().bells).toBe(0)
  })
})

describe('changedRows', () => {
  it('reports every row first, then exactly the rows whose text or look changed', () => {
    const term = new VirtualTerminal({ cols: 20, rows: 4 })
    expect(term.changedRows()).toEqual([0, 1, 2, 3])
    expect(term.changedRows()).toEqual([])
    term.write('\x1b[2;1Hsecond\x1b[4;1Hfourth')
    expect(term.changedRows()).toEqual([1, 3])
    // Only the colour changes: that is a change too.
    term.write('\x1b[2;1H\x1b[7msecond\x1b[0m')
    expect(term.changedRows()).toEqual([1])
    // Written over with what it already showed: nothing changed.
    term.write('\x1b[4;1Hfourth')
    expect(term.changedRows()).toEqual([])
    term.write('\x1b[?1049h')
    expect(term.changedRows()).toEqual([1, 3])
  })

  it('follows a PtySession run and starts over with the next', async () => {
    const session = new PtySession()
    await session.start({ command: "printf 'a\\nb\\n'", cols: 20, rows: 5 })
    expect(session.changedRows()).toEqual([0, 1, 2, 3, 4])
    expect(session.changedRows()).toEqual([])
    await session.start({ command: 'true', cols: 20, rows: 6 })
    expect(session.changedRows()).toEqual([0, 1, 2, 3, 4, 5])
  })
})

describe('snapshot({ scrollback })', () => {
  function filled(lines: number) {
    const term = new VirtualTerminal({ cols: 120, rows: 40 })
    for (let i = 1; i <= lines; i++) term.write(`\x1b[3${i % 8}m${i}\x1b[0m ${'-'.repeat(i % 50)}\r\n`)
    term.write('\x1b]2;title\x07\x1b[?2004h$ ')
    return term
  }

  it('repaints the same screen with the newest scrollback rows kept, in our terminal and in xterm', async () => {
    const term = filled(20_000)
    const full = term.snapshot()
    expect(term.snapshot({})).toBe(full)
    expect(term.snapshot({ scrollback: 1e9 })).toBe(full)
    for (const scrollback of [0, 25]) {
      const snapshot = term.snapshot({ scrollback })
      const copy = new VirtualTerminal({ cols: 120, rows: 40 })
      copy.write(snapshot)
      expect(copy.screen()).toEqual(term.screen())
      expect(copy.styledLines()).toEqual(term.styledLines())
      const theirs = xterm(120, 40)
      await xtermWrite(theirs, snapshot)
      const lines = xtermLines(theirs)
      expect(lines.length).toBe(40 + scrollback)
      expect(lines.slice(-40)).toEqual(term.screen().lines)
      expect(theirs.buffer.active.cursorX).toBe(2)
    }
    const kept = new VirtualTerminal({ cols: 120, rows: 40 })
    kept.write(term.snapshot({ scrollback: 25 }))
    const restored = xterm(120, 40)
    await xtermWrite(restored, kept.snapshot())
    // The screen shows 19962 to 20000 and the prompt; the 25 rows before it were kept.
    expect(xtermLines(restored)[0]).toBe(`19937 ${'-'.repeat(19937 % 50)}`)
  })

  it('keeps a screen-only snapshot small however long the history', () => {
    const term = filled(20_000)
    const full = term.snapshot().length
    const screen = term.snapshot({ scrollback: 0 }).length
    expect(full).toBeGreaterThan(300_000)
    expect(screen).toBeLessThan(8 * 1024)
  })

  it('is read from PtySession too, after the run', async () => {
    const session = new PtySession()
    await session.start({ command: 'seq 1 500', cols: 30, rows: 5 })
    const copy = new VirtualTerminal({ cols: 30, rows: 5 })
    copy.write(session.snapshot({ scrollback: 3 }))
    expect(copy.screen().lines).toEqual(session.screen().lines)
    const theirs = xterm(30, 5)
    await xtermWrite(theirs, session.snapshot({ scrollback: 3 }))
    // The screen shows 497 to 500 and an empty row; the 3 rows before them were kept.
    expect(xtermLines(theirs)).toEqual(['494', '495', '496', '497', '498', '499', '500', ''])
  })

  it('rejects options of the wrong type', () => {
    const term = new VirtualTerminal()
    expectTypeError(() => term.snapshot('all' as never), 'options must be an object')
    expectTypeError(() => term.snapshot({ scrollback: '5' as never }), 'options.scrollback must be a number')
    expectRangeError(() => term.snapshot({ scrollback: Number.NaN }), 'options.scrollback must be a finite number')
    expect(term.snapshot({ scrollback: -4 })).toBe(term.snapshot({ scrollback: 0 }))
  })
})
