'use strict'
// What the MCP tools share: the documented bounds, the defaults, the argument schemas several tools
// take, and how a result's text is put together.
const { z } = require('zod')

/** The documented bounds: every tool result and every wait has one. */
const LIMITS = Object.freeze({
  /**
   * Running TUI sessions at once. Ended ones stay readable until tui_kill; a start forgets the
   * oldest ended ones beyond maxSessions - 1.
   */
  maxSessions: 8,
  /** exec_command sessions at once (running, or ended with their end not yet reported). */
  maxExecSessions: 16,
  /** Bytes of a shell_run or tui_exec transcript returned; the beginning of longer ones is dropped. */
  maxOutputBytes: 32 * 1024,
  /** Bytes of an ANSI snapshot returned by tui_screen. */
  maxSnapshotBytes: 256 * 1024,
  /** Scrollback lines each TUI session keeps (they are part of its ANSI snapshot). */
  scrollbackLines: 1000,
  /** The longest tui_start/tui_send/tui_resize wait for the program to wait for input. */
  settleMs: 10_000,
  /** Where the kernel cannot tell: how long a program that has printed nothing yet must stay silent to count as quiet. */
  silentStartMs: 2_000,
})

const DEFAULT_QUIET_MS = 300
const DEFAULT_RUN_TIMEOUT_MS = 120_000
const DEFAULT_WAIT_TIMEOUT_MS = 10_000
const DEFAULT_EXEC_TIMEOUT_MS = 60_000

const id = z.string().describe('The session id tui_start returned, e.g. "t1".')
const quietMs = z
  .number()
  .int()
  .min(50)
  .max(5000)
  .optional()
  .describe(
    `Only where the server cannot read input waits from the kernel (not Linux): the program counts as done for now ` +
      `after this many milliseconds without output (default ${DEFAULT_QUIET_MS}).`,
  )
const timeoutMs = (fallback, max) =>
  z.number().int().min(1).max(max).optional().describe(`Milliseconds (default ${fallback}, at most ${max}).`)

/** A tool result: `value` for the model to read, the same facts as `structuredContent` for a client. */
const result = (value, structured) => ({ content: [{ type: 'text', text: value }], structuredContent: structured })

/** "…output\n[exit code 0]": the transcript, then how the command ended. */
function transcript(output, ending) {
  const body = output === '' ? '(no output)\n' : output.endsWith('\n') ? output : `${output}\n`
  return `${body}[${ending}]`
}


module.exports = {
  LIMITS,
  DEFAULT_QUIET_MS,
  DEFAULT_RUN_TIMEOUT_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  DEFAULT_EXEC_TIMEOUT_MS,
  id,
  quietMs,
  timeoutMs,
  result,
  transcript,
}
