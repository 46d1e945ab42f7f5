#!/usr/bin/env node
// Takes the README's picture of the web terminal (docs/web-terminal.png): starts an interactive
// bash in the repository through `shellwright/web`, opens the page in Debian's headless Chromium
// (playwright-core), types a few commands in the page itself, and screenshots it.
//
// Usage: node tools/web-screenshot.mjs [OUTPUT.png]   (default docs/web-terminal.png; needs the
// built addon and /usr/bin/chromium)
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const require = createRequire(import.meta.url)
const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const { PtySession } = require(join(repo, 'index.js'))
const { createTerminalServer } = require(join(repo, 'packages', 'web', 'index.js'))
const output = process.argv[2] ?? join(repo, 'docs', 'web-terminal.png')

const home = mkdtempSync(join(tmpdir(), 'shellwright-screenshot-'))
const session = new PtySession()
const done = session.start({
  interactive: true,
  shell: 'bash',
  cwd: repo,
  env: { TERM: 'xterm-256color', HOME: home },
})
// A short, coloured prompt (the system's bashrc sets its own), on a clear screen.
await session.exec(String.raw`PS1='\[\e[1;32m\]agent\[\e[0m\]:\[\e[1;34m\]\W\[\e[0m\]$ '; clear`, { timeoutMs: 10_000 })
const server = await createTerminalServer({ session })
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] })
try {
  const page = await browser.newPage({ viewport: { width: 960, height: 540 }, deviceScaleFactor: 1 })
  await page.goto(server.url)
  await page.waitForFunction(() => globalThis.shellwright?.state === 'connected', null, { timeout: 10_000 })
  await page.click('#terminal')
  for (const command of ['ls --color=always packages/*', 'git log --oneline --color=always -8', 'echo "$TERM, $(tput cols)×$(tput lines)"']) {
    await page.keyboard.type(command)
    await page.keyboard.press('Enter')
    await waitForPrompt(page, session)
  }
  await page.screenshot({ path: output })
  console.log(`wrote ${output}`)
} finally {
  await browser.close()
  await server.close()
  session.kill()
  await done
  rmSync(home, { recursive: true, force: true })
}

/** Waits (bounded) until the command's end is recorded and the page shows the session's last line. */
async function waitForPrompt(page, session) {
  const before = session.commands().length
  const deadline = Date.now() + 10_000
  for (;;) {
    const screen = session.screen()
    const ended = session.commands().length > before
    const shown = await page.evaluate(() => {
      const buffer = globalThis.term.buffer.active
      return buffer.getLine(buffer.baseY + buffer.cursorY)?.translateToString(true).trimEnd()
    })
    if (ended && shown === screen.lines[screen.cursor.row]) return
    if (Date.now() > deadline) throw new Error('the command did not finish in 10 s')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
