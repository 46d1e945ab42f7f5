'use strict'
// Watching a running PtySession from JS: quiet periods in its output, text on its screen, its end.
// The CLI's `tui` and the MCP server's TUI tools both wait on it.

/** Watches a running session's output: quiet periods, screen text and the end of the run. */
class Watch {
  constructor(session) {
    this.session = session
    this.lastOutput = Date.now()
    this.ended = false
    this.waiters = new Set()
  }

  onChunk() {
    this.lastOutput = Date.now()
    this.wake()
  }

  end() {
    this.ended = true
    this.wake()
  }

  wake() {
    for (const waiter of this.waiters) waiter()
  }

  /** Resolves true once `test()` holds (checked on output, on end and every `pollMs`), false at `deadline`. */
  until(test, deadline, pollMs) {
    return new Promise((resolve) => {
      let timer
      const check = () => {
        if (test()) return finish(true)
        if (Date.now() >= deadline) return finish(false)
        clearTimeout(timer)
        timer = setTimeout(check, Math.max(1, Math.min(pollMs, deadline - Date.now())))
      }
      const finish = (value) => {
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve(value)
      }
      this.waiters.add(check)
      check()
    })
  }

  quiet(quietMs, deadline) {
    return this.until(() => this.ended || Date.now() - this.lastOutput >= quietMs, deadline, quietMs)
  }

  text(text, deadline) {
    return this.until(() => this.session.screen().lines.join('\n').includes(text), deadline, 50)
  }
}

module.exports = { Watch }
