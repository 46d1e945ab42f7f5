// VirtualTerminal from JS: screen, query replies, snapshots checked against
// @xterm/headless, command records, and argument errors.
import { describe, expect, it } from 'vitest'
import * as sw from '../index.js'
import { expectRangeError, expectTypeError } from './helpers.js'
import { xterm, xtermLines, xtermWrite } from './xterm.js'

describe('VirtualTerminal', () => {
  it('defaults to 80x24 and shows what was written', () => {
    const term = new sw.VirtualTerminal()
    expect(term.write('hello \x1b[1;31mworld\x1b[0m\r\n\x1b]2;the title\x07')).toBe('')
    const screen = term.screen()
    expect(screen.cols).toBe(80)
    expect(screen.rows).toBe(24)
    expect(screen.lines.length).toBe(24)
    expect(screen.lines.slice(0, 3)).toEqual(['hello world', '', ''])
    expect(screen.cursor).toEqual({ row: 1, col: 0, visible: true })
    expect(screen.title).toBe('the title')
    expect(screen.altScreen).toBe(false)
  })

  it('accepts bytes, joining UTF-8 split across writes', () => {
    const term = new sw.VirtualTerminal({ cols: 20, rows: 3 })
    const bytes = Buffer.from('café 日本')
    term.write(bytes.subarray(0, 4))
    term.write(new Uint8Array(bytes.subarray(4)))
    expect(term.screen().lines[0]).toBe('café 日本')
    expect(term.screen().cursor).toEqual({ row: 0, col: 9, visible: true })
  })

  it('switches to the alternate screen and back', () => {
    const term = new sw.VirtualTerminal({ cols: 10, rows: 3 })
    term.write('shell$ ')
    term.write('\x1b[?1049h\x1b[?25l\x1b[2;3Hvim')
    expect(term.screen()).toEqual({
      cols: 10,
      rows: 3,
      lines: ['', '  vim', ''],
      cursor: { row: 1, col: 5, visible: false },
      title: '',
      altScreen: true,
      bells: 0,
      modes: {
        applicationCursorKeys: false,
        applicationKeypad: false,
        bracketedPaste: false,
        altScreen: true,
        mouseTracking: 'none',
        sgrMouse: false,
        focusEvents: false,
        insert: false,
        autoWrap: true,
      },
    })
    term.write('\x1b[?1049l\x1b[?25h')
    expect(term.screen().lines).toEqual(['shell$', '', ''])
    expect(term.screen().cursor).toEqual({ row: 0, col: 7, visible: true })
  })

  it('answers queries from the real state and returns the replies', () => {
    const term = new sw.VirtualTerminal({ cols: 100, rows: 30 })
    expect(term.write('\x1b[c')).toBe('\x1b[?62;22c')
    expect(term.write('\x1b[>c')).toBe('\x1b[>1;10;0c')
    expect(term.write('\x1b[=c')).toBe('\x1bP!|00000000\x1b\\')
    expect(term.write('\x1b[5n')).toBe('\x1b[0n')
    expect(term.write('\x1b[7;9H\x1b[6n')).toBe('\x1b[7;9R')
    expect(term.write('ab\x1b[?6n')).toBe('\x1b[?7;11;1R')
    expect(term.write('\x1b[>0q')).toBe('\x1bP>|shellwright(0.1.0)\x1b\\')
    expect(term.write('\x1b[?2004$p')).toBe('\x1b[?2004;2$y')
    expect(term.write('\x1b[?2004h\x1b[?2004$p')).toBe('\x1b[?2004;1$y')
    expect(term.write('\x1b[?4242$p')).toBe('\x1b[?4242;0$y')
    expect(term.write('\x1b[?u')).toBe('\x1b[?0u')
    expect(term.write('\x1b]11;?\x07')).toBe('\x1b]11;rgb:0000/0000/0000\x07')
    expect(term.write('\x1b]10;?\x1b\\')).toBe('\x1b]10;rgb:e5e5/e5e5/e5e5\x1b\\')
    expect(term.write('\x1bP+q544e\x1b\\')).toBe('\x1bP0+r544e\x1b\\')
    expect(term.write('\x1bP$qm\x1b\\')).toBe('\x1bP0$r\x1b\\')
    expect(term.write('\x1b[18t')).toBe('\x1b[8;30;100t')
    // Split across writes: nothing until the query is complete.
    expect(term.write('\x1b[')).toBe('')
    expect(term.write('6')).toBe('')
    expect(term.write('n')).toBe('\x1b[7;11R')
  })

  it('answers nothing with answerQueries: false', () => {
    const term = new sw.VirtualTerminal({ answerQueries: false })
    expect(term.write('\x1b[c\x1b[6n\x1b]11;?\x07')).toBe('')
  })

  it('keeps scrollback and round-trips it through snapshot()', () => {
    const term = new sw.VirtualTerminal({ cols: 30, rows: 5, scrollback: 100 })
    for (let i = 0; i < 40; i++) term.write(`\x1b[3${i % 8}mrow ${i}\x1b[0m\r\n`)
    term.write('\x1b[?1h\x1b[?2004h\x1b]2;snap\x07tail')
    const copy = new sw.VirtualTerminal({ cols: 30, rows: 5, scrollback: 100 })
    copy.write(term.snapshot())
    expect(copy.screen()).toEqual(term.screen())
    expect(copy.snapshot()).toBe(term.snapshot())
    expect(term.screen().lines).toEqual(['row 36', 'row 37', 'row 38', 'row 39', 'tail'])
  })

  it('writes a snapshot that @xterm/headless shows as the raw stream did', async () => {
    let stream = ''
    for (let i = 0; i < 60; i++) {
      stream += `\x1b[1;38;5;${i}mline ${i}\x1b[0m ${'x'.repeat(i % 7)}\x1b[48;2;10;20;30m bg \x1b[0m\r\n`
    }
    stream += 'a line long enough to wrap past the forty column edge of this terminal\r\n'
    stream += 'wide 日本語 text\r\n\x1b[3;5Hover\x1b[8;1H\x1b[2Kprompt$ '
    const raw = xterm(40, 10)
    await xtermWrite(raw, stream)
    const term = new sw.VirtualTerminal({ cols: 40, rows: 10 })
    term.write(stream)
    const restored = xterm(40, 10)
    await xtermWrite(restored, term.snapshot())
    expect(xtermLines(restored)).toEqual(xtermLines(raw))
    // 60 rows, the wrapped line (2 rows), the wide line and the empty row after it.
    expect(xtermLines(raw).length).toBe(64)
    expect(restored.buffer.active.cursorY).toBe(raw.buffer.active.cursorY)
    expect(restored.buffer.active.cursorX).toBe(raw.buffer.active.cursorX)
    // The screen part agrees with VirtualTerminal's own view too.
    expect(xtermLines(restored).slice(-10)).toEqual(term.screen().lines)
  })

  it('restores the alternate screen into @xterm/headless', async () => {
    const stream = 'before\r\n$ less\r\n\x1b[?1049h\x1b[H\x1b[2Jpage one\r\npage two\x1b[?1h\x1b[?1000h'
    const raw = xterm(20, 4)
    await xtermWrite(raw, stream)
    const term = new sw.VirtualTerminal({ cols: 20, rows: 4 })
    term.write(stream)
    const restored = xterm(20, 4)
    await xtermWrite(restored, term.snapshot())
    expect(restored.buffer.active.type).toBe('alternate')
    expect(xtermLines(restored)).toEqual(xtermLines(raw))
    expect(restored.modes.applicationCursorKeysMode).toBe(true)
    expect(restored.modes.mouseTrackingMode).toBe(raw.modes.mouseTrackingMode)
    await xtermWrite(raw, '\x1b[?1049l')
    await xtermWrite(restored, '\x1b[?1049l')
    expect(xtermLines(restored)).toEqual(xtermLines(raw))
  })

  it('records commands from OSC 133 marks', () => {
    const term = new sw.VirtualTerminal()
    const before = Date.now()
    term.write('\x1b]7;file://host/work%20dir\x07\x1b]133;A\x07$ \x1b]133;B\x07')
    term.write('make\r\n\x1b]133;C\x07building\r\nfailed\r\n\x1b]133;D;2\x07')
    term.write('\x1b]133;A\x07$ \x1b]133;B\x07')
    const commands = term.commands()
    expect(commands.length).toBe(1)
    const [record] = commands
    expect(record.command).toBe('make')
    expect(record.output).toBe('building\nfailed')
    expect(record.exitCode).toBe(2)
    expect(record.cwd).toBe('/work dir')
    expect(record.startedAt).toBeGreaterThanOrEqual(before)
    expect(record.finishedAt).toBeGreaterThanOrEqual(record.startedAt)
  })

  it('records commands from the prompt fallback without exit codes', () => {
    const term = new sw.VirtualTerminal()
    term.write('sh-5.2$ ')
    term.write('echo hi\r\n')
    term.write('hi\r\nsh-5.2$ ')
    const commands = term.commands()
    expect(commands.map((c) => [c.command, c.output, c.exitCode])).toEqual([['echo hi', 'hi', undefined]])
  })

  it('rejects bad arguments with TypeErrors and RangeErrors naming them', () => {
    expectTypeError(() => new sw.VirtualTerminal({ cols: '80' } as never), 'options.cols must be a number')
    expectTypeError(() => new sw.VirtualTerminal({ answerQueries: 1 } as never), 'options.answerQueries must be a boolean')
    expectTypeError(() => new sw.VirtualTerminal(5 as never), 'options must be an object')
    const term = new sw.VirtualTerminal()
    expectTypeError(() => term.write(42 as never), 'data must be a string or a Uint8Array')
    expectTypeError(() => term.write({} as never), 'data must be a string or a Uint8Array')
    expectTypeError(() => term.resize('a' as never, 5), 'cols must be a number')
    expectRangeError(() => term.resize(5, NaN), 'rows must be a finite number')
  })

  it('frees itself on dispose(), after which every call throws ERR_TERMINAL_DISPOSED', () => {
    const term = new sw.VirtualTerminal({ cols: 10, rows: 2 })
    term.write('hi')
    expect(term.screen().lines).toEqual(['hi', ''])
    term.dispose()
    term.dispose()
    const calls: Array<() => unknown> = [
      () => term.write('x'),
      () => term.resize(20, 5),
      () => term.screen(),
      () => term.snapshot(),
      () => term.commands(),
    ]
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'ERR_TERMINAL_DISPOSED', message: 'the terminal was disposed' }))
    }
    // Arguments are still checked first.
    expectRangeError(() => term.resize(5, NaN), 'rows must be a finite number')
    expectTypeError(() => term.write(42 as never), 'data must be a string or a Uint8Array')
  })

  it('clamps sizes instead of failing', () => {
    const term = new sw.VirtualTerminal({ cols: 0, rows: -5, scrollback: -1 })
    expect([term.screen().cols, term.screen().rows]).toEqual([2, 1])
    term.resize(1e9, 3.7)
    expect([term.screen().cols, term.screen().rows]).toEqual([1000, 3])
  })

  it('reports the input modes a client needs', () => {
    const term = new sw.VirtualTerminal({ cols: 20, rows: 4 })
    term.write('\x1b[?1h\x1b=\x1b[?2004h\x1b[?1003h\x1b[?1006h\x1b[?1004h\x1b[4h\x1b[?7l')
    expect(term.screen().modes).toEqual({
      applicationCursorKeys: true,
      applicationKeypad: true,
      bracketedPaste: true,
      altScreen: false,
      mouseTracking: 'motion',
      sgrMouse: true,
      focusEvents: true,
      insert: true,
      autoWrap: false,
    })
    term.write('\x1b[?1l\x1b[?1003l\x1b[?1000h')
    expect(term.screen().modes.applicationCursorKeys).toBe(false)
    expect(term.screen().modes.mouseTracking).toBe('click')
  })

  it('shows tabs as blanks, and its snapshot replays them and the tab stops in @xterm/headless', async () => {
    const term = new sw.VirtualTerminal({ cols: 30, rows: 3 })
    term.write('a\tb\r\n\x1b[3g\x1b[5G\x1bH\r\tX')
    expect(term.screen().lines).toEqual(['a       b', '    X', ''])
    const copy = xterm(30, 3)
    await xtermWrite(copy, term.snapshot())
    expect(xtermLines(copy)).toEqual(['a       b', '    X', ''])
    // The replayed tab stops: a tab from column 0 lands on column 4, as in the source.
    await xtermWrite(copy, '\r\n\tY')
    term.write('\r\n\tY')
    expect(xtermLines(copy)[2]).toBe(term.screen().lines[2])
    expect(term.screen().lines[2]).toBe('    Y')
  })

  it('matches xterm on ?1049l from the normal screen and on the pending wrap after a snapshot', async () => {
    const input = '\x1b[?1049h\x1b[?1049l\x1b[4;1Hprompt\x1b[?1049l'
    const term = new sw.VirtualTerminal({ cols: 20, rows: 6 })
    term.write(input)
    const reference = xterm(20, 6)
    await xtermWrite(reference, input)
    const { cursorY, cursorX } = reference.buffer.active
    expect(term.screen().cursor).toEqual({ row: cursorY, col: cursorX, visible: true })
    expect(term.screen().cursor).toEqual({ row: 0, col: 0, visible: true })

    const wrapped = new sw.VirtualTerminal({ cols: 10, rows: 3 })
    wrapped.write('0123456789')
    const replayed = xterm(10, 3)
    await xtermWrite(replayed, wrapped.snapshot() + 'Z')
    expect(xtermLines(replayed)).toEqual(['0123456789', 'Z', ''])
  })

  it('bounds what one sequence costs: huge counts show what the screen can show', () => {
    const term = new sw.VirtualTerminal({ cols: 10, rows: 3, scrollback: 0 })
    const started = Date.now()
    term.write('x\x1b[65535b'.repeat(200))
    expect(Date.now() - started).toBeLessThan(2000)
    // 200 × 65536 x's: every row full, and 13,107,200 mod 10 = 0 leaves the cursor waiting to wrap.
    expect(term.screen().lines).toEqual(['xxxxxxxxxx', 'xxxxxxxxxx', 'xxxxxxxxxx'])
    expect(term.screen().cursor).toEqual({ row: 2, col: 9, visible: true })
  })
})
