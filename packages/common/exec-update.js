'use strict'
// An ExecSessions update in words, as the CLI's `exec` and the MCP server's exec tools both say it:
// why it returned ("exited 3", "waiting for input: \">>> \"", "still running after 250 ms") and
// where the session's processes listen.

/** Why `update` returned, in words; `waitedMs` is how long the call that got it waited. */
function whyReturned(update, waitedMs) {
  if (!update.running) {
    if (update.exitCode === undefined) return 'killed'
    return update.signal ? `exited ${update.exitCode} (killed by ${update.signal})` : `exited ${update.exitCode}`
  }
  const waiting = update.waitingForInput
  if (!waiting) return `still running after ${waitedMs} ms`
  const hidden = waiting.mode === 'line' && waiting.echo === false ? ' (typed text not shown)' : ''
  return `waiting for input${hidden}: ${JSON.stringify(waiting.prompt ?? '')}`
}

/** "listening on :5173, :24678", or undefined when the session listens on no port. */
function describeListening(update) {
  if (!update.listening?.length) return undefined
  return `listening on ${update.listening.map((port) => `:${port}`).join(', ')}`
}

module.exports = { whyReturned, describeListening }
