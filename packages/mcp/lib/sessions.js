'use strict'
// The MCP server's TUI sessions: each a PtySession under an id ("t1", "t2", …), watched for the
// moments its program waits for input, bounded in number, and all killed and reaped by `closeAll()`
// when the client goes away.
const { PtySession } = require('../../../index.js')
const { parseKeys } = require('../../common/key-spec.js')
const { Watch, describeWait } = require('../../common/screen-watch.js')
const { describeExit, renderScreen, screenFacts } = require('./text.js')

/** A tool error: the message is what the model reads. */
class ToolError extends Error {}

class TuiSession {
  constructor(id, options, limits) {
    this.id = id
    this.command = options.interactive ? 'bash (interactive)' : options.command
    this.interactive = options.interactive === true
    this.limits = limits
    this.pty = new PtySession()
    this.watch = new Watch(this.pty)
    this.outputSeen = false
    this.result = undefined
    const onChunk = () => {
      this.outputSeen = true
      this.watch.onChunk()
    }
    const start = {
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      answerQueries: options.answerQueries,
      scrollback: limits.scrollbackLines,
    }
    if (this.interactive) Object.assign(start, { shell: 'bash', interactive: true })
    else start.command = options.command
    // A bad option throws here; a failed spawn (bad cwd, missing program) rejects, and `open`
    // reports it. Either way the model gets the addon's message as the tool error.
    this.done = this.pty.start(start, onChunk).then(
      (result) => this.end(result),
      (error) => this.end({ error }),
    )
  }

  end(result) {
    this.result = result
    this.watch.end()
  }

  get running() {
    return this.result === undefined
  }

  /** "waiting for keys", "waiting for a line", "running" (busy), or how it ended. */
  status() {
    if (this.running) return describeWait(this.pty.inputState()) ?? 'running'
    if (this.result.error) return `failed: ${this.result.error.message}`
    return describeExit(this.result)
  }

  /**
   * Resolves once the program waits for input (the kernel's word, see the screen watch) or has
   * ended, within `limits.settleMs`. Where the kernel cannot tell, once it has been quiet (no
   * output for `quietMs`; before its first output only after `limits.silentStartMs`, so one that
   * takes a moment to load is not caught before it draws).
   */
  settle(quietMs) {
    return this.watch.settle(Date.now() + this.limits.settleMs, {
      quietMs,
      silentStartMs: this.limits.silentStartMs,
      outputSeen: this.outputSeen,
    })
  }

  /**
   * Types literal `text`, then the keys of `keys` (the CLI's `--keys` SPEC), and waits until the
   * program waits for input. Keys are sent in parts that end at each `<esc>`, each after the
   * program took the part before: an Escape with more bytes right behind it reads as Alt+key (or a
   * broken sequence) to a terminal program.
   */
  async send(text, keys, quietMs) {
    this.ensureRunning()
    const parts = keys === undefined ? [] : keys.split(/(?<=<esc>)/i).filter((part) => part !== '')
    // Parsed before anything is written, so an unknown key sends nothing.
    parts.forEach((part) => parseKeys(part))
    if (text) this.write(text)
    for (const part of parts) {
      // The program may have ended on the keys before (e.g. <esc> closing it): the rest go nowhere.
      if (!this.running) break
      // Arrow keys follow the cursor-key mode (DECCKM) the program asked for, as a real terminal's do.
      this.write(parseKeys(part, this.pty.screen().modes.applicationCursorKeys))
      await this.settle(quietMs)
      if (/<esc>$/i.test(part)) {
        // After an Escape a program waits a moment for the rest of a key sequence (its own timer:
        // ncurses' ESCDELAY, vim's ttimeoutlen), asleep in its read: only its output going quiet
        // says it gave up waiting and took the Escape alone.
        await this.watch.quiet(quietMs, Date.now() + this.limits.settleMs)
      }
    }
    if (parts.length === 0) await this.settle(quietMs)
  }

  write(bytes) {
    this.ensureRunning()
    this.pty.write(bytes)
    this.watch.lastOutput = Date.now()
  }

  /**
   * Resolves `{ asks }` (what it waits for, in words) once a command typed into this interactive
   * shell stops to ask for input: the terminal's reader is another process than the shell, or
   * the shell itself reads a line (`read`) rather than keys at its prompt (readline). Looks every
   * 20 ms until `signal` aborts; never rejects.
   */
  commandAsks(signal) {
    const shell = this.pty.pid
    return new Promise((resolve) => {
      const look = () => {
        if (signal.aborted || !this.running) return clearInterval(timer)
        const state = this.pty.inputState()
        if (state.waiting && (state.foreground?.pid !== shell || state.mode === 'line')) {
          clearInterval(timer)
          resolve({ asks: describeWait(state) + (state.prompt ? `: ${JSON.stringify(state.prompt.trimEnd())}` : '') })
        }
      }
      const timer = setInterval(look, 20)
      signal.addEventListener('abort', () => clearInterval(timer), { once: true })
    })
  }

  ensureRunning() {
    if (!this.running) {
      throw new ToolError(`session ${this.id} has ended (${this.status()}); tui_screen still shows its last screen`)
    }
  }

  render() {
    return this.view().text
  }

  /** The screen under its status line (the text a model reads) and as facts (a tool's structuredContent). */
  view({ styled = false } = {}) {
    const screen = this.pty.screen()
    const status = this.status()
    const styles = styled ? this.pty.styledLines() : undefined
    return {
      text: renderScreen(this.id, status, screen, styles),
      facts: { id: this.id, status, running: this.running, ...screenFacts(screen, styles) },
    }
  }

  /** Cancels the program (SIGTERM, then SIGKILL after a grace) and resolves once it is reaped. */
  async kill() {
    if (this.running) this.pty.kill()
    await this.done
  }
}

class TuiSessions {
  constructor(limits) {
    this.limits = limits
    this.sessions = new Map()
    this.nextId = 1
    this.closed = false
    /** Told of every session that leaves the table (killed, failed to start, or forgotten). */
    this.onRemove = async () => {}
  }

  /** Resolves once `onRemove` is done with it. */
  async remove(session) {
    this.sessions.delete(session.id)
    await this.onRemove(session)
  }

  start(options) {
    if (this.closed) throw new ToolError('the server is shutting down')
    const live = [...this.sessions.values()].filter((s) => s.running).length
    if (live >= this.limits.maxSessions) {
      throw new ToolError(
        `too many running sessions (the limit is ${this.limits.maxSessions}); end one with tui_kill first`,
      )
    }
    this.pruneEnded()
    const id = `t${this.nextId}`
    const session = new TuiSession(id, options, this.limits)
    this.nextId++
    this.sessions.set(id, session)
    return session
  }

  /** Starts a session and waits for its first screen; a program that could not start is an error. */
  async open(options, quietMs) {
    const session = this.start(options)
    await session.settle(quietMs)
    if (session.result?.error) {
      await this.remove(session)
      throw new ToolError(session.result.error.message)
    }
    return session
  }

  /** Ended sessions stay readable until killed; beyond the limit the oldest are forgotten. */
  pruneEnded() {
    const ended = [...this.sessions.values()].filter((s) => !s.running)
    for (const session of ended.slice(0, Math.max(0, ended.length - this.limits.maxSessions + 1))) {
      void this.remove(session)
    }
  }

  get(id) {
    const session = this.sessions.get(id)
    if (!session) {
      const known = [...this.sessions.keys()]
      const list = known.length ? `the sessions are ${known.join(', ')}` : 'there are no sessions; start one with tui_start'
      throw new ToolError(`no TUI session with id ${JSON.stringify(id)}: ${list}`)
    }
    return session
  }

  async kill(id) {
    const session = this.get(id)
    await session.kill()
    await this.remove(session)
    return session
  }

  list() {
    return [...this.sessions.values()]
  }

  /** Kills every session and resolves once all are reaped; later starts are refused. */
  async closeAll() {
    this.closed = true
    await Promise.all([...this.sessions.values()].map((s) => s.kill()))
  }
}

module.exports = { TuiSessions, ToolError }
