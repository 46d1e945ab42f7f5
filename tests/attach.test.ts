// PtySession.attach: the seam between a viewer's snapshot and its stream, proved by replaying
// viewers that attach and detach at random moments of a mixed stream into fresh @xterm/headless and
// VirtualTerminal instances; attaching after exit; many viewers; detach; the queue bound's resync;
// resizes; answered queries; callback errors; how the run ended (onEnd); the screen alone
// (screenSnapshot); argument errors.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Terminal as XtermTerminal } from '@xterm/headless'
import { afterAll, describe, expect, it } from 'vitest'
import { type AttachmentEnd, PtySession, type TerminalAttachment, type TerminalScreen, VirtualTerminal } from '../index.js'
import { collector, expectTypeError, waitUntil } from './helpers.js'

type Xterm = InstanceType<typeof XtermTerminal>

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-attach-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const COLS = 60
const ROWS = 16

/** A small deterministic generator (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number): (n: number) => number {
  let state = seed >>> 0
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
  }
}

/**
 * A mixed workload: text (wide, combining, two- to four-byte UTF-8), SGR colours, cursor moves, erasing,
 * scroll regions, the alternate screen on and off, titles, a cursor-position query, DECSC/DECRC and
 * line-drawing character sets. It ends on
 * the normal screen with no scroll region. `forXterm` leaves out scroll regions and the erase,
 * insert and delete sequences, on which xterm.js and our emulator disagree over the stream itself
 * (not over any seam; `CSI 3 J` even throws inside xterm.js): its rounds check the xterm replays
 * too, after checking that xterm.js shows that stream as the session does.
 */
function workload(below: (n: number) => number, pieces: number, forXterm: boolean): string {
  let out = ''
  let alternate = false
  for (let i = 0; i < pieces; i++) {
    switch (below(forXterm ? 14 : 17)) {
      case 14: out += '\x1b7'; break
      case 15: out += '\x1b8'; break
      case 16: out += ['\x1b(0lqqk', '\x1b(B', '\x1b)0'][below(3)]; break
      case 0: out += `\x1b[${1 + below(ROWS)};${1 + below(80)}H`; break
      case 1: out += `\x1b[${[1, 4, 7, 31, 42, 0, 22][below(7)]}m`; break
      case 2: out += `\x1b[38;5;${below(256)}m\x1b[48;2;${below(256)};20;30m`; break
      // 𝐀 is four bytes of UTF-8 and one column wide in both emulators (xterm.js gives emoji one).
      case 3: out += '日本語の文字𝐀 wide '; break
      case 4: out += 'cafe\u0301 naïve €uro '; break
      case 5: out += '\r\n'.repeat(1 + below(3)); break
      case 6: out += forXterm ? '' : `\x1b[${1 + below(5)};${8 + below(8)}r`; break
      case 7: out += '\x1b[r'; break
      case 8: out += alternate ? '\x1b[?1049l' : '\x1b[?1049h'; alternate = !alternate; break
      case 9: out += `\x1b]0;title ${below(100)} 題\x07`; break
      case 10: out += '\x1b[6n'; break
      case 11: out += `\x1b[${1 + below(5)}${(forXterm ? 'ABCDABCD' : 'ABCDKJLM')[below(8)]}`; break
      default: out += `line ${below(1000)} of the stream with some words to wrap around\r\n`
    }
  }
  return out + '\x1b[?1049l\x1b[r\x1b[0m\x1b(B'
}

function xtermWrite(term: Xterm, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve))
}

/** The visible rows of an xterm, trailing blanks trimmed, and its cursor. */
function xtermScreen(term: Xterm) {
  const buffer = term.buffer.active
  const lines: string[] = []
  for (let row = 0; row < term.rows; row++) {
    lines.push((buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? '').trimEnd())
  }
  return { lines, cursor: { row: buffer.cursorY, col: Math.min(buffer.cursorX, term.cols - 1) } }
}

/** A viewer replayed into a fresh VirtualTerminal and a fresh @xterm/headless. */
class Replay {
  readonly attachment: TerminalAttachment
  vt: VirtualTerminal
  xterm: Xterm
  chunks = 0
  resyncs = 0
  private writes: Promise<void> = Promise.resolve()

  constructor(session: PtySession) {
    this.attachment = session.attach((chunk) => this.write(chunk))
    const { cols, rows, snapshot } = this.attachment
    this.vt = new VirtualTerminal({ cols, rows, answerQueries: false })
    this.xterm = new XtermTerminal({ cols, rows, scrollback: 1000, allowProposedApi: true })
    this.vt.write(snapshot)
    this.writes = xtermWrite(this.xterm, snapshot)
  }

  private write(chunk: string): void {
    this.chunks++
    const { cols, rows } = this.attachment
    if (cols !== this.vt.screen().cols || rows !== this.vt.screen().rows) {
      // A resync drawn for a new size: the viewer takes the size on first.
      this.vt.resize(cols, rows)
      this.xterm.resize(cols, rows)
    }
    if (chunk.startsWith('\x1bc')) this.resyncs++
    this.vt.write(chunk)
    this.writes = this.writes.then(() => xtermWrite(this.xterm, chunk))
  }

  /** The replays (the xterm one too when `withXterm`) show exactly what the session shows. */
  async expectSame(screen: TerminalScreen, what: string, withXterm = true): Promise<void> {
    const mine = this.vt.screen()
    expect({ what, lines: mine.lines, cursor: mine.cursor, altScreen: mine.altScreen, title: mine.title }).toEqual({
      what,
      lines: screen.lines,
      cursor: screen.cursor,
      altScreen: screen.altScreen,
      title: screen.title,
    })
    await this.writes
    if (!withXterm) return
    const theirs = xtermScreen(this.xterm)
    expect({ what, ...theirs }).toEqual({
      what,
      lines: screen.lines,
      cursor: { row: screen.cursor.row, col: screen.cursor.col },
    })
  }

  matches(screen: TerminalScreen): boolean {
    const mine = this.vt.screen()
    return JSON.stringify([mine.lines, mine.cursor]) === JSON.stringify([screen.lines, screen.cursor])
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('PtySession.attach', () => {
  it('paints every viewer, attached and detached at random moments of a mixed stream, as the session', async () => {
    const below = random(0x5eed)
    let attachPoints = 0
    let compared = 0
    for (let round = 0; round < 40 && attachPoints < 240; round++) {
      const forXterm = round % 2 === 1
      const file = join(scratch, `workload-${round}`)
      writeFileSync(file, workload(below, 6000, forXterm))
      const session = new PtySession()
      let ended = false
      const whole = collector()
      // Echo off: the terminal would echo each answered query's reply (`^[[12;5R`) into the output
      // wherever the program's writes stand, even between an ESC and the rest of its sequence, and
      // `ESC ^` opens a PM string that xterm.js and our emulator end differently.
      const options = { command: `stty -echo; cat '${file}'`, cols: COLS, rows: ROWS, scrollback: 1000 }
      const done = session.start(options, whole.push).then((result) => {
        ended = true
        return result
      })
      const viewers: { replay: Replay; detached: boolean }[] = []
      while (!ended && viewers.length < 40) {
        viewers.push({ replay: new Replay(session), detached: false })
        attachPoints++
        if (below(5) === 0) {
          const victim = viewers[below(viewers.length)]
          victim.replay.attachment.detach()
          victim.detached = true
        }
        // A random pause of zero to a few turns of the event loop, while the stream flows.
        for (let i = below(4); i > 0; i--) await tick()
      }
      expect((await done).exitCode).toBe(0)
      const screen = session.screen()
      if (forXterm) {
        // xterm.js itself agrees with the session on this stream, so its replays can be compared.
        const reference = new XtermTerminal({ cols: COLS, rows: ROWS, scrollback: 1000, allowProposedApi: true })
        await xtermWrite(reference, whole.text)
        expect(xtermScreen(reference)).toEqual({ lines: screen.lines, cursor: { row: screen.cursor.row, col: screen.cursor.col } })
      }
      const live = viewers.filter((viewer) => !viewer.detached)
      await waitUntil(() => live.every(({ replay }) => replay.matches(screen)), 10_000, 'viewers to catch up').catch(() => {})
      for (const [index, { replay }] of live.entries()) {
        await replay.expectSame(screen, `round ${round} viewer ${index}`, forXterm)
        compared++
      }
    }
    expect(attachPoints).toBeGreaterThanOrEqual(200)
    expect(compared).toBeGreaterThan(100)
  }, 60_000)

  it('gives a viewer attached after exit the snapshot only', async () => {
    const session = new PtySession()
    await session.start({ command: "printf 'done\\033[31m red\\033]2;finished\\007'", cols: 30, rows: 5 })
    const out = collector()
    const attachment = session.attach(out.push)
    expect([attachment.cols, attachment.rows]).toEqual([30, 5])
    const view = new VirtualTerminal({ cols: 30, rows: 5 })
    view.write(attachment.snapshot)
    expect(view.screen()).toEqual(session.screen())
    // Let any queued delivery reach JS: none may come.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(out.chunks).toBe(0)
  })

  it('keeps many viewers in step', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'stty -echo; read line; seq 1 3000; printf "\\033[2J\\033[Hend"', cols: 40, rows: 10 })
    const replays = Array.from({ length: 25 }, () => new Replay(session))
    session.write('go\r')
    expect((await done).exitCode).toBe(0)
    const screen = session.screen()
    await waitUntil(() => replays.every((replay) => replay.matches(screen)), 10_000, 'viewers to catch up').catch(() => {})
    for (const [index, replay] of replays.entries()) await replay.expectSame(screen, `viewer ${index}`)
    expect(screen.lines[0]).toBe('end')
  })

  it('stops delivering on detach, and detach is idempotent', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'cat', cols: 40, rows: 10 })
    const out = collector()
    const attachment = session.attach(out.push)
    session.write('one\r')
    await waitUntil(() => out.text.includes('one'), 5000, 'the first line')
    attachment.detach()
    attachment.detach()
    const before = out.text
    session.write('two\r')
    await waitUntil(() => session.screen().lines.some((line) => line === 'two'), 5000, 'the second line')
    session.write('\x04')
    await done
    await tick()
    expect(out.text).toBe(before)
  })

  it('resynchronises a viewer whose callback cannot keep up, instead of buffering the stream', async () => {
    const session = new PtySession()
    const bytes = 40_000_000
    // More than the viewer's 8 MB queue bound is through the terminal once `past` exists.
    const past = join(scratch, 'past-the-bound')
    const line = "yes 'a line of the fast stream' | head -c"
    const done = session.start({
      command: `${line} 12000000; touch '${past}'; ${line} ${bytes - 12_000_000}`,
      cols: 60,
      rows: 10,
    })
    let delivered = 0
    let resyncs = 0
    let blocked = false
    let stalledPastTheBound = false
    const view = new VirtualTerminal({ cols: 60, rows: 10 })
    const attachment = session.attach((chunk) => {
      delivered += chunk.length
      if (chunk.startsWith('\x1bc')) resyncs++
      view.write(chunk)
      if (!blocked) {
        // The viewer stalls the JS thread while the program streams on past the queue bound.
        blocked = true
        const nap = new Int32Array(new SharedArrayBuffer(4))
        const deadline = Date.now() + 20_000
        while (!existsSync(past) && Date.now() < deadline) Atomics.wait(nap, 0, 0, 10)
        stalledPastTheBound = existsSync(past)
      }
    })
    view.write(attachment.snapshot)
    expect((await done).exitCode).toBe(0)
    const screen = session.screen()
    await waitUntil(() => JSON.stringify(view.screen().lines) === JSON.stringify(screen.lines), 10_000, 'the viewer to catch up')
    expect(stalledPastTheBound).toBe(true)
    expect(resyncs).toBeGreaterThanOrEqual(1)
    expect(delivered).toBeLessThan(bytes)
    expect(view.screen().lines).toEqual(screen.lines)
    expect(view.screen().cursor).toEqual(screen.cursor)
  }, 30_000)

  it('resynchronises every viewer at the new size on resize', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'cat', cols: 40, rows: 10 })
    const replay = new Replay(session)
    session.write('a line that is long enough to wrap at thirty columns\r')
    await waitUntil(() => replay.vt.screen().lines.join('').includes('columns'), 5000, 'the line')
    session.resize(30, 8)
    await waitUntil(() => replay.resyncs === 1, 5000, 'the resync')
    expect([replay.attachment.cols, replay.attachment.rows]).toEqual([30, 8])
    session.write('after\r')
    await waitUntil(() => session.screen().lines.includes('after') && replay.matches(session.screen()), 5000, 'after')
    session.write('\x04')
    await done
    await replay.expectSame(session.screen(), 'after resize')
  })

  it('leaves answered queries out of viewer chunks', async () => {
    const session = new PtySession()
    const done = session.start({ command: "stty -echo; printf ready; read line; printf '\\r\\033[Kx\\033[6ny\\033[c z'", cols: 40, rows: 5 })
    const out = collector()
    session.attach(out.push)
    await waitUntil(() => out.text.includes('ready'), 5000, 'the prompt')
    session.write('go\r')
    await done
    await waitUntil(() => out.text.includes('z'), 5000, 'the output')
    expect(out.text).toBe('ready\r\x1b[Kxy z')
    expect(session.screen().lines[0]).toBe('xy z')
  })

  it('survives a callback that throws: the viewer is detached and the error becomes a warning', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'cat', cols: 40, rows: 5 })
    let calls = 0
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve))
    session.attach(() => {
      calls++
      throw new Error('viewer failed')
    })
    const out = collector()
    session.attach(out.push)
    session.write('one\r')
    expect((await warned).message).toBe('viewer failed')
    session.write('two\r')
    await waitUntil(() => out.text.includes('two'), 5000, 'the other viewer')
    session.write('\x04')
    expect((await done).exitCode).toBe(0)
    expect(calls).toBe(1)
  })

  it('tells onEnd how the run ended, once, after the last chunk; a viewer attached later too', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'read line; echo "got $line"; exit 3', cols: 40, rows: 5 })
    const events: string[] = []
    const ended = new Promise<AttachmentEnd>((resolve) =>
      session.attach(
        (chunk) => events.push(chunk),
        (end) => {
          events.push('<end>')
          resolve(end)
        },
      ),
    )
    session.write('x\r')
    expect(await ended).toEqual({ exitCode: 3, cancelled: false, timedOut: false })
    expect(events.join('')).toBe('x\r\ngot x\r\n<end>')
    expect(await done).toEqual({ exitCode: 3, cancelled: false, timedOut: false })
    const endOf = () => new Promise<AttachmentEnd>((resolve) => session.attach(() => {}, resolve))
    expect(await endOf()).toEqual({ exitCode: 3, cancelled: false, timedOut: false })

    // Every way a run ends: a signal, a kill, a timeout, a start that fails.
    await session.start({ command: 'kill -9 $$' })
    expect(await endOf()).toEqual({ exitCode: 137, signal: 'SIGKILL', cancelled: false, timedOut: false })
    const killed = session.start({ command: 'exec sleep 30' })
    const killedEnd = endOf()
    session.kill()
    await killed
    expect(await killedEnd).toEqual({ cancelled: true, timedOut: false })
    await session.start({ command: 'exec sleep 30', timeoutMs: 100 })
    expect(await endOf()).toEqual({ cancelled: false, timedOut: true })
    await expect(session.start({ command: 'true', cwd: join(scratch, 'missing') })).rejects.toThrow(/^Failed to set cwd: /)
    expect(await endOf()).toEqual({ cancelled: false, timedOut: false, error: expect.stringMatching(/^Failed to set cwd: /) })
  })

  it('does not call onEnd after detach()', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'cat', cols: 40, rows: 5 })
    let ends = 0
    const attachment = session.attach(
      () => {},
      () => ends++,
    )
    const other = new Promise((resolve) => session.attach(() => {}, resolve))
    attachment.detach()
    session.write('\x04')
    await done
    await other
    await tick()
    expect(ends).toBe(0)
  })

  it('gives the screen alone, at the same cut, in screenSnapshot', async () => {
    const session = new PtySession()
    const done = session.start({ command: 'seq 1 2000; read line; echo "got $line"', cols: 30, rows: 5 })
    await waitUntil(() => session.screen().lines.includes('2000'), 5000, 'the numbers')
    const out = collector()
    const attachment = session.attach(out.push)
    expect(attachment.snapshot.length).toBeGreaterThan(10_000)
    expect(attachment.screenSnapshot.length).toBeLessThan(200)
    const screenOnly = new VirtualTerminal({ cols: 30, rows: 5 })
    screenOnly.write(attachment.screenSnapshot)
    expect(screenOnly.screen()).toEqual(session.screen())
    expect(screenOnly.snapshot()).toBe(screenOnly.snapshot({ scrollback: 0 }))
    session.write('y\r')
    await done
    await waitUntil(() => out.text.includes('got y'), 5000, 'the stream')
    screenOnly.write(out.text)
    expect(screenOnly.screen()).toEqual(session.screen())
  })

  it('checks its argument and the session', () => {
    const session = new PtySession()
    expectTypeError(() => session.attach('nope' as never), 'onData must be a function')
    expectTypeError(() => session.attach(() => {}, 5 as never), 'onEnd must be a function')
    let thrown: unknown
    try {
      session.attach(() => {})
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ code: 'ERR_PTY_NOT_RUNNING', message: 'PTY session is not running' })
  })
})
