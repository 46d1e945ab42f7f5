'use strict'
// The program a terminal viewer shows when it is given none — the user's shell, interactive (bash,
// zsh and fish get the shell-integration hooks), or a command line run through `sh -c` — and its
// end. The web terminal and the CLI's `serve` start and stop programs with it.

/** The environment of a program shown in xterm.js. */
const BROWSER_TERMINAL_ENV = { TERM: 'xterm-256color', COLORTERM: 'truecolor' }

/** The start options for `command`, or for the user's shell when `command` is undefined. */
function startOptions(command) {
  if (command === undefined) {
    return { interactive: true, shell: process.env.SHELL || '/bin/sh', env: BROWSER_TERMINAL_ENV }
  }
  return { command, env: BROWSER_TERMINAL_ENV }
}

/**
 * How a run ended, as the page's `exit` message says it: a `PtyResult` (or an attachment's end,
 * which may carry the `error` that ended the run instead).
 */
function describeExit(result) {
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    cancelled: result.cancelled === true,
    timedOut: result.timedOut === true,
    error: result.error ?? null,
  }
}

/** Kills a run this code started and waits until it has ended (`done` is its start promise). */
async function stopRun(session, done) {
  try {
    session.kill()
  } catch {
    // It has already ended.
  }
  await done.catch(() => {})
}

module.exports = { startOptions, describeExit, stopRun }
