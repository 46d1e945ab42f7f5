// Shell integration for zsh and fish under PtySession({ interactive: true }): exec reads each
// command's exit code, output and cwd from the marks the shell's own hooks send (zsh precmd and
// preexec; fish's fish_preexec, fish_postexec and fish_prompt events), the user's startup files are
// still read (their prompt, functions and hooks keep working, zsh's ZDOTDIR is given back), and
// the generated files are gone when the run ends. Outside CI a missing shell skips its tests with
// a message; in CI (npm test provisions both: tools/provision-tests.sh) it fails them.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PtySession, type PtyResult } from '../index.js'
import { waitUntil } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-integration-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Whether `shell` runs here; in CI a missing one is an error, elsewhere its tests are skipped. */
function installed(shell: string): boolean {
  if (spawnSync(shell, ['--version']).status === 0) return true
  const why = `${shell} is not installed (apt-get install ${shell})`
  if (process.env.CI) throw new Error(`${why}: CI must provide it (tools/provision-tests.sh installs it)`)
  console.warn(`skipping the ${shell} integration tests: ${why}`)
  return false
}

/** A HOME (and its config directories) holding `files`, paths relative to it. */
function home(name: string, files: Record<string, string> = {}): string {
  const dir = join(scratch, name)
  mkdirSync(dir)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

/** An interactive `shell` in a fresh HOME; `env` is overlaid. */
function interactive(shell: string, dir: string, env: Record<string, string> = {}) {
  const session = new PtySession()
  const done = session.start({
    interactive: true,
    shell,
    cwd: dir,
    env: { HOME: dir, XDG_CONFIG_HOME: join(dir, '.config'), TERM: 'xterm-256color', ...env },
    cols: 80,
    rows: 16,
  })
  return { session, done }
}

/** Types `exit 0` and waits for the end; kills the run if an assertion left it running. */
async function finish(session: PtySession, done: Promise<PtyResult>) {
  try {
    session.write('exit 0\r')
  } catch {
    // already ended
  }
  const timer = setTimeout(() => session.kill(), 5000)
  const result = await done
  clearTimeout(timer)
  return result
}

for (const shell of ['zsh', 'fish'] as const) {
  describe.skipIf(!installed(shell))(`${shell}: interactive sessions with shell integration`, () => {
    it('exec reports output, exit codes and cwd from the hooks', async () => {
      const dir = home(`${shell}-exec`)
      const { session, done } = interactive(shell, dir)
      try {
        const first = await session.exec('echo hi; false', { timeoutMs: 10_000 })
        expect(first).toMatchObject({ command: 'echo hi; false', output: 'hi', exitCode: 1, cwd: dir })
        const cd = await session.exec('cd / && pwd')
        expect(cd).toMatchObject({ command: 'cd / && pwd', output: '/', exitCode: 0 })
        // A semicolon and a backslash in the command line, as its mark carries them (escaped).
        const quoted = "printf '%s\\n' 'a;b' 'back\\slash'; sh -c 'exit 7'"
        expect(await session.exec(quoted)).toMatchObject({ command: quoted, output: 'a;b\nback\\slash', exitCode: 7, cwd: '/' })
        expect(session.commands().map((c) => [c.command, c.exitCode])).toEqual([
          ['echo hi; false', 1],
          ['cd / && pwd', 0],
          [quoted, 7],
        ])
        // An empty line is no command.
        session.write('\r')
        const after = await session.exec('echo after')
        expect(after).toMatchObject({ output: 'after', exitCode: 0 })
        expect(session.commands()).toHaveLength(4)
        expect(await finish(session, done)).toEqual({ exitCode: 0, cancelled: false, timedOut: false })
      } finally {
        await finish(session, done)
      }
    })

    it('exec timeout sends Ctrl+C, the command ends with 130 and the shell goes on', async () => {
      const dir = home(`${shell}-cancel`)
      const { session, done } = interactive(shell, dir)
      try {
        await expect(session.exec('sleep 30', { timeoutMs: 300 })).rejects.toThrowError(/^exec timed out after 300 ms$/)
        const back = await session.exec('echo back')
        expect(back).toMatchObject({ output: 'back', exitCode: 0 })
        expect(session.commands().map((c) => [c.command, c.exitCode])).toEqual([
          ['sleep 30', 130],
          ['echo back', 0],
        ])
      } finally {
        await finish(session, done)
      }
    })
  })
}

describe.skipIf(!installed('zsh'))("zsh: the user's startup files", () => {
  it('reads .zshenv, .zshrc (prompt, functions, precmd with the right $?), and gives ZDOTDIR back', async () => {
    const dir = home('zsh-rc', {
      '.zshenv': 'export FROM_ZSHENV=yes\n',
      '.zshrc': [
        'setopt prompt_subst',
        "PROMPT='[pc:$LAST]my> '",
        'greet() { print -r -- "hello $1" }',
        'precmd() { LAST=$? }',
        '',
      ].join('\n'),
    })
    const { session, done } = interactive('zsh', dir)
    try {
      const record = await session.exec('false')
      expect(record.exitCode).toBe(1)
      await waitUntil(() => session.screen().lines.some((l) => l === '[pc:1]my>'), 5000, "the user's prompt and precmd")
      expect(await session.exec('greet you; print -r -- $FROM_ZSHENV')).toMatchObject({ output: 'hello you\nyes', exitCode: 0 })
      // ZDOTDIR was unset: it is unset again, and the generated files are not the user's.
      expect(await session.exec('print -r -- "[${ZDOTDIR-unset}][${SHELLWRIGHT_ZDOTDIR-unset}]"')).toMatchObject({
        output: '[unset][unset]',
      })
      const whence = (await session.exec('whence -v __sw_precmd')).output
      expect(whence).toMatch(/^__sw_precmd is a shell function from .*\/\.zshrc$/)
      const generated = whence.match(/from (.*)\/\.zshrc$/)![1]
      expect(existsSync(generated)).toBe(true)
      expect(await finish(session, done)).toMatchObject({ exitCode: 0 })
      expect(existsSync(generated)).toBe(false)
    } finally {
      await finish(session, done)
    }
  })

  it("reads the files of the user's own ZDOTDIR, for a login shell too", async () => {
    const dir = home('zsh-zdotdir', {
      'zdot/.zshenv': 'export FROM_ZSHENV=yes\n',
      'zdot/.zprofile': 'export FROM_ZPROFILE=yes\n',
      'zdot/.zshrc': "PROMPT='zdot> '\n",
      'zdot/.zlogin': 'export FROM_ZLOGIN=yes\n',
      '.zshrc': "PROMPT='wrong> '\n",
    })
    const session = new PtySession()
    const done = session.start({
      interactive: true,
      login: true,
      shell: 'zsh',
      cwd: dir,
      env: { HOME: dir, ZDOTDIR: join(dir, 'zdot'), TERM: 'xterm-256color' },
    })
    try {
      const record = await session.exec('print -r -- "$FROM_ZSHENV $FROM_ZPROFILE $FROM_ZLOGIN $ZDOTDIR"; [[ -o login ]]')
      expect(record).toMatchObject({ output: `yes yes yes ${join(dir, 'zdot')}`, exitCode: 0 })
      expect(session.screen().lines.some((l) => l.startsWith('zdot> '))).toBe(true)
    } finally {
      await finish(session, done)
    }
  })
})

describe.skipIf(!installed('fish'))("fish: the user's config", () => {
  it('reads config.fish (prompt showing $status, functions) and removes the generated script at the end', async () => {
    const dir = home('fish-rc', {
      '.config/fish/config.fish': [
        'set -gx FROM_CONFIG yes',
        'function greet; echo "hello $argv[1]"; end',
        'function fish_prompt; printf "[st:%s]my> " $status; end',
        '',
      ].join('\n'),
    })
    const { session, done } = interactive('fish', dir)
    try {
      const record = await session.exec('false')
      expect(record.exitCode).toBe(1)
      await waitUntil(() => session.screen().lines.some((l) => l === '[st:1]my>'), 5000, "the user's prompt with the status")
      expect(await session.exec('greet you; echo $FROM_CONFIG')).toMatchObject({ output: 'hello you\nyes', exitCode: 0 })
      const args = (await session.exec('ps -ww -o args= -p $fish_pid')).output
      const script = args.match(/--init-command source '(.*)'$/)?.[1]
      expect(script, args).toBeDefined()
      expect(existsSync(script!)).toBe(true)
      expect(await finish(session, done)).toMatchObject({ exitCode: 0 })
      expect(existsSync(script!)).toBe(false)
    } finally {
      await finish(session, done)
    }
  })
})
