// Real programs nobody here wrote, run under PtySession: each is driven by keys to a known screen and
// quit cleanly. The crossterm fixture asks for the cursor position and blocks until it is answered.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PtySession, type TerminalScreen } from '../index.js'
import { waitUntil } from './helpers.js'

const root = join(__dirname, '..')
const scratch = mkdtempSync(join(tmpdir(), 'shellwright-tui-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A fixed environment, so the host's TERM, LESS or vim settings cannot change the screens. */
const env = { TERM: 'xterm-256color', LESS: '', LESSHISTFILE: '-', HOME: scratch }

/** Starts `command` in a 40×10 session. */
function launch(command: string, extra: { answerQueries?: boolean; env?: Record<string, string> } = {}) {
  const session = new PtySession()
  const done = session.start({ command, cols: 40, rows: 10, env: { ...env, ...extra.env }, ...extra, timeoutMs: 20_000 })
  return { session, done }
}

async function screenWhen(session: PtySession, what: string, test: (s: TerminalScreen) => boolean) {
  await waitUntil(() => test(session.screen()), 10_000, what)
  return session.screen()
}

const tildes = (n: number) => Array.from({ length: n }, () => '~')

describe('real TUI programs under PtySession', () => {
  it('vim -u NONE: insert text, check the screen, :q!', async () => {
    const { session, done } = launch('vim -u NONE -i NONE -N -n')
    await screenWhen(session, 'vim started', (s) => s.lines[1] === '~')
    session.write('ihello world\x1b')
    const screen = await screenWhen(session, 'text inserted', (s) => s.lines[0] === 'hello world' && s.lines[9] === '' && s.cursor.col === 10)
    expect(screen).toEqual({
      cols: 40,
      rows: 10,
      lines: ['hello world', ...tildes(8), ''],
      cursor: { row: 0, col: 10, visible: true },
      title: '',
      altScreen: true,
      bells: 0,
      // Full-screen programs switch to the alternate screen and application cursor keys.
      modes: expect.objectContaining({ altScreen: true, applicationCursorKeys: true, mouseTracking: 'none' }),
    })
    session.write(':q!\r')
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(session.screen().altScreen).toBe(false)
  })

  it('less: page down, check the screen, q', async () => {
    const file = join(scratch, 'lines.txt')
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')
    const { session, done } = launch(`less '${file}'`)
    const first = await screenWhen(session, 'first page', (s) => s.lines[0] === 'line 1' && s.lines[9] !== '')
    expect(first.lines).toEqual([...Array.from({ length: 9 }, (_, i) => `line ${i + 1}`), file])
    expect(first.altScreen).toBe(true)
    session.write(' ')
    const second = await screenWhen(session, 'second page', (s) => s.lines[0] === 'line 10' && s.lines[9] === ':')
    expect(second).toEqual({
      cols: 40,
      rows: 10,
      lines: [...Array.from({ length: 9 }, (_, i) => `line ${i + 10}`), ':'],
      cursor: { row: 9, col: 1, visible: true },
      title: '',
      altScreen: true,
      bells: 0,
      // Full-screen programs switch to the alternate screen and application cursor keys.
      modes: expect.objectContaining({ altScreen: true, applicationCursorKeys: true, mouseTracking: 'none' }),
    })
    session.write('q')
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(session.screen().altScreen).toBe(false)
  })

  it("Python's curses: draws, waits for q, restores the screen", async () => {
    const script = [
      'import curses',
      'def main(w):',
      '    curses.curs_set(0)',
      '    w.addstr(2, 4, "curses ok")',
      '    w.addstr(3, 4, "press q")',
      '    w.refresh()',
      '    while w.getch() != ord("q"):',
      '        pass',
      'curses.wrapper(main)',
    ].join('\n')
    const { session, done } = launch('exec python3 -c "$SW_SCRIPT"', { env: { SW_SCRIPT: script } })
    const screen = await screenWhen(session, 'curses drew', (s) => s.lines[3] === '    press q')
    expect(screen).toEqual({
      cols: 40,
      rows: 10,
      lines: ['', '', '    curses ok', '    press q', '', '', '', '', '', ''],
      cursor: { row: 3, col: 11, visible: false },
      title: '',
      altScreen: true,
      bells: 0,
      // Full-screen programs switch to the alternate screen and application cursor keys.
      modes: expect.objectContaining({ altScreen: true, applicationCursorKeys: true, mouseTracking: 'none' }),
    })
    session.write('q')
    expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
    expect(session.screen()).toMatchObject({ altScreen: false, cursor: { visible: true } })
  })

  describe('a crossterm program that asks for the cursor position', () => {
    const binary = join(root, 'target', 'fixtures', 'debug', 'crossterm-cpr')

    beforeAll(() => {
      const build = spawnSync(
        'cargo',
        [
          'build',
          '--quiet',
          '--manifest-path',
          join(root, 'tests', 'fixtures', 'crossterm-cpr', 'Cargo.toml'),
          '--target-dir',
          join(root, 'target', 'fixtures'),
        ],
        { encoding: 'utf8', timeout: 300_000 },
      )
      if (build.status !== 0) throw new Error(`building the crossterm fixture failed: ${build.error ?? build.stderr}`)
    }, 310_000)

    it('gets the real cursor position and exits', async () => {
      const { session, done } = launch(`'${binary}'`)
      expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      expect(session.screen().lines.slice(3, 5)).toEqual(['', 'position col=7 row=3'])
    })

    it('without answers it gets none (crossterm gives up after its 2 s timeout)', async () => {
      const { session, done } = launch(`'${binary}'`, { answerQueries: false })
      expect(await done).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      expect(session.screen().lines[4]).toMatch(/^no position: /)
    })
  })
})
