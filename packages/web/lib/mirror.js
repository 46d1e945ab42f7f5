'use strict'
// A Shell shown through ShellMirror, in the shape the viewers expect of a session: every viewer
// opens its own mirror (which replays the Shell's history, then follows its runs live). A mirror
// has no screen of its own, so there is no snapshot and no size: the page fits its window. Shown
// read-only: a Shell has no terminal to type into.
const { ShellMirror } = require('../../../index.js')

function mirrorSource(shell) {
  return {
    attach(onData) {
      const mirror = new ShellMirror(shell)
      // open() hands the replay of the history to the callback before it returns: that replay is
      // the view's snapshot, and only what comes after is the live stream.
      let replay = ''
      let live = false
      mirror.open((data) => (live ? onData(data) : (replay += data)))
      live = true
      return { snapshot: replay, cols: undefined, rows: undefined, detach: () => mirror.close() }
    },
    write() {},
    resize() {},
  }
}

module.exports = { mirrorSource }
