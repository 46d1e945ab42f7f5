'use strict'
// Watching a running PtySession from JS: whether the program waits for input, text on its screen,
// its end. The CLI's `tui` and the MCP server's TUI tools both wait on it.
//
// "The program is done for now" is the kernel's word where it can give it (Linux): the session's
// `waitForInput()` resolves when the program is asleep reading its terminal with everything it
// printed on the screen. Elsewhere it falls back to a quiet period in the output (`quietMs`).

/** Whether `waitForInput` reads the kernel here, rather than guessing from quiet output. */
const KERNEL_TELLS = process.platform === 'linux'

/** Watches a running session's output: input waits, quiet periods, screen text and the end of the run. */
class Watch {
  constructor(session) {
    this.session = session
    this.lastOutput = Date.now()
    this.ended = false
    this.waiters = new Set()
    /** Resolves when the run ends (see `end`). */
    this.endedPromise = new Promise((resolve) => (this.resolveEnded = resolve))
  }

  onChunk() {
    this.lastOutput = Date.now()
    this.wake()
  }

  end() {
    this.ended = true
    this.resolveEnded()
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

  /**
   * Resolves once the program is done for now, by `deadline`: `'waiting'` (it waits for input),
   * `'ended'` (it exited) or `'busy'` (neither, at the deadline). Where the kernel cannot tell,
   * `'waiting'` means no output for `quietMs` (after `silentStartMs` when it has printed nothing).
   */
  async settle(deadline, { quietMs, silentStartMs = 0, outputSeen = true }) {
    if (this.ended) return 'ended'
    if (!KERNEL_TELLS) {
      const threshold = () => (outputSeen ? quietMs : Math.max(quietMs, silentStartMs))
      const quiet = await this.until(() => this.ended || Date.now() - this.lastOutput >= threshold(), deadline, quietMs)
      return this.ended ? 'ended' : quiet ? 'waiting' : 'busy'
    }
    const timeoutMs = Math.max(1, deadline - Date.now())
    const waited = this.session.waitForInput({ timeoutMs }).then(
      // Not waiting: the run ended; its result comes right after its last output.
      (state) => (state.waiting ? 'waiting' : this.endedPromise.then(() => 'ended')),
      (error) => {
        if (error.code === 'ERR_EXEC_TIMEOUT') return 'busy'
        throw error
      },
    )
    // A wait still pending when the run ended resolves on its own: nothing is left behind.
    return Promise.race([waited, this.endedPromise.then(() => 'ended')])
  }

  /** Resolves true once the program has been quiet for `quietMs` (or ended), false at `deadline`. */
  quiet(quietMs, deadline) {
    return this.until(() => this.ended || Date.now() - this.lastOutput >= quietMs, deadline, quietMs)
  }

  text(text, deadline) {
    return this.until(() => this.session.screen().lines.join('\n').includes(text), deadline, 50)
  }
}

/** What a waiting program waits for, in words: "waiting for keys", "waiting for a line (not echoed)". */
function describeWait(state) {
  if (!state.waiting) return undefined
  if (state.mode === 'keys') return 'waiting for keys'
  return state.echo === false ? 'waiting for a line (typed text not shown)' : 'waiting for a line'
}

module.exports = { Watch, describeWait, KERNEL_TELLS }
