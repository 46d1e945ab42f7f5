'use strict'
// The MCP server's TUI sessions: each a PtySession under an id ("t1", "t2", …), watched for quiet
// periods, bounded in number, and all killed and reaped by `closeAll()` when the client goes away.
const { PtySession } = require('../../../index.js')
const { parseKeys } = require('../../common/key-spec.js')
const { Watch } = require('../../common/screen-watch.js')
const { describeExit, renderScreen } = require('./text.js')

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

  status() {
    if (this.running) return 'running'
    if (this.result.error) return `failed: ${this.result.error.message}`
    return describeExit(this.result)
  }

  /**
   * Resolves once the program has been quiet (no output for `quietMs`) or has ended, within
   * `limits.settleMs`. Before its first output a program counts as quiet only after
   * `limits.silentStartMs`, so one that takes a moment to load is not caught before it draws.
   */
  settle(quietMs) {
    const threshold = () => (this.outputSeen ? quietMs : Math.max(quietMs, this.limits.silentStartMs))
    const quiet = () => Date.now() - this.watch.lastOutput >= threshold()
    return this.watch.until(() => this.watch.ended || quiet(), Date.now() + this.limits.settleMs, quietMs)
  }

  /**
   * Types literal `text`, then the keys of `keys` (the CLI's `--keys` SPEC), and waits for quiet.
   * Keys are sent in parts that end at each `<esc>`, each after the program went quiet: an Escape
   * with more bytes right behind it reads as Alt+key (or a broken sequence) to a terminal program.
   */
  async send(text, keys, quietMs) {
    this.ensureRunning()
    const parts = keys === undefined ? [] : keys.split(/(?<=<esc>)/i).filter((part) => part !== '')
    // Parsed before anything is written, so an unknown key sends nothing.
    parts.forEach((part) => parseKeys(part))
    if (text) this.write(text)
    for (const [i, part] of parts.entries()) {
      if (i > 0) await this.settle(quietMs)
      // The program may have ended on the keys before (e.g. <esc> closing it): the rest go nowhere.
      if (!this.running) break
      // Arrow keys follow the cursor-key mode (DECCKM) the program asked for, as a real terminal's do.
      this.write(parseKeys(part, this.pty.screen().modes.applicationCursorKeys))
    }
    await this.settle(quietMs)
  }

  write(bytes) {
    this.ensureRunning()
    this.pty.write(bytes)
    this.watch.lastOutput = Date.now()
  }

  ensureRunning() {
    if (!this.running) {
      throw new ToolError(`session ${this.id} has ended (${this.status()}); tui_screen still shows its last screen`)
    }
  }

  render() {
    return renderScreen(this.id, this.status(), this.pty.screen())
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
