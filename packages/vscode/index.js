// `shellwright/vscode`: a VS Code Pseudoterminal that shows a Shell's runs read-only, over a ShellMirror.
// It has VS Code's Pseudoterminal shape but does not depend on the `vscode` module, so an extension passes it
// straight to `window.createTerminal({ name, pty })`.
'use strict'

const { ShellMirror } = require('../../index.js')

/** A VS Code-style event: `event(listener, thisArgs?, disposables?)` returns a Disposable. */
function createEmitter() {
  const listeners = new Set()
  const event = (listener, thisArgs, disposables) => {
    const entry = { call: (value) => listener.call(thisArgs, value) }
    listeners.add(entry)
    const disposable = { dispose: () => listeners.delete(entry) }
    if (Array.isArray(disposables)) disposables.push(disposable)
    return disposable
  }
  const fire = (value) => {
    for (const entry of [...listeners]) entry.call(value)
  }
  return { event, fire }
}

/**
 * A Pseudoterminal showing `shell`'s runs: the history when the terminal opens, then each command as it
 * runs. Ctrl+C in the terminal cancels the running command; other typing is ignored.
 */
function createShellPseudoterminal(shell, options = {}) {
  if (options === null || typeof options !== 'object') {
    throw Object.assign(new TypeError('options must be an object'), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  const { name = 'Shellwright', scrollback } = options
  if (typeof name !== 'string') {
    throw Object.assign(new TypeError('options.name must be a string'), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  const mirror = new ShellMirror(shell, { scrollback })
  const write = createEmitter()
  const closed = createEmitter()
  const renamed = createEmitter()
  let state = 'new'
  return {
    name,
    onDidWrite: write.event,
    onDidClose: closed.event,
    onDidChangeName: renamed.event,
    open(_initialDimensions) {
      if (state !== 'new') return
      state = 'open'
      renamed.fire(name)
      mirror.open((data) => write.fire(data))
    },
    close() {
      if (state === 'closed') return
      state = 'closed'
      mirror.close()
      closed.fire(undefined)
    },
    handleInput(data) {
      if (state === 'open') mirror.handleInput(data)
    },
    // The mirror's stream does not depend on the terminal's size: nothing to do.
    setDimensions(_dimensions) {},
  }
}

module.exports = { createShellPseudoterminal }
