'use strict'
// The exec tools: `exec_command` and `write_stdin`, with Codex's argument names and defaults, over
// the server's ExecSessions: a command in a pseudo-terminal of its own, and every call returns as
// soon as the program exits, waits for input (the kernel's word) or has run for yield_time_ms, with
// what its terminal shows that is new since the previous call.
const { z } = require('zod')
const { describeListening, whyReturned } = require('../../../common/exec-update.js')
const { ToolError } = require('../sessions.js')
const { LIMITS, result } = require('./common.js')

/** Output budgets are given in tokens, as Codex's are; a token is taken as 4 bytes of output. */
const BYTES_PER_TOKEN = 4
const DEFAULT_MAX_OUTPUT_TOKENS = 10_000
const MAX_OUTPUT_TOKENS = 250_000
/** exec_command waits this long by default; write_stdin 250 ms after typing, 5 s for an empty poll. */
const START_YIELD_MS = 10_000
const WRITE_YIELD_MS = 250
const POLL_YIELD_MS = 5_000
/** The longest wait of one call (beyond it, poll again: MCP clients time calls out after about a minute). */
const MAX_YIELD_MS = 30_000

const yieldTimeMs = (what) =>
  z
    .number()
    .int()
    .min(0)
    .max(MAX_YIELD_MS)
    .optional()
    .describe(
      `Milliseconds to wait at most (${what}, at most ${MAX_YIELD_MS}). The call returns earlier as soon as the ` +
        'program exits or waits for input.',
    )
const maxOutputTokens = z
  .number()
  .int()
  .min(1)
  .max(MAX_OUTPUT_TOKENS)
  .optional()
  .describe(
    `Output budget in tokens (default ${DEFAULT_MAX_OUTPUT_TOKENS}; a token counts as ${BYTES_PER_TOKEN} bytes). ` +
      'Longer new output keeps its end; the first line of the output then says how many bytes were dropped.',
  )

/** What every call returns, as structuredContent. */
const updateShape = {
  returned: z
    .enum(['exited', 'waiting_for_input', 'still_running'])
    .describe('Why the call returned: the program ended, it waits for input, or the wait ran out.'),
  session_id: z.number().int().optional().describe('While the program runs: the id to pass to write_stdin.'),
  exit_code: z.number().int().optional().describe('Once it exited (128+N after a death by signal N).'),
  signal: z.string().optional().describe('The signal it died of, e.g. "SIGKILL".'),
  prompt: z.string().optional().describe('While it waits for input: its cursor row up to the cursor.'),
  input_mode: z.enum(['line', 'keys']).optional().describe('While it waits: a line (a prompt) or keys (a TUI, a REPL).'),
  echo: z.boolean().optional().describe('While it waits for a line: false when typed text is not shown (a password).'),
  listening: z.array(z.number().int()).describe('TCP ports its processes listen on.'),
  output: z.string().describe('Rendered terminal text new since the previous call (the end of it, within the budget).'),
  truncated_bytes: z.number().int().describe('Bytes of new output dropped from the beginning to fit the budget.'),
  wall_time_ms: z.number().int().describe('How long this call waited.'),
  elapsed_ms: z.number().int().describe('How long the session has existed.'),
}

const OUTPUT_DESCRIPTION =
  'The result’s first line says why the call returned — "exited N", "waiting for input: <prompt>" or "still running ' +
  'after N ms" — then, while the program runs, its session_id, and the TCP ports its processes listen on ("listening ' +
  'on :5173"), so a dev server being up needs no reading of its log. Then the output: what the terminal shows that is ' +
  'new since the previous call, rendered as a person sees it (no escape sequences; a line rewritten in place, like a ' +
  'progress bar, comes again with its new text; a full-screen program such as vim or less gives its whole screen).'

function registerExecTools(mcp, sessions) {
  mcp.registerTool(
    'exec_command',
    {
      title: 'Run a command in a terminal',
      description:
        'Runs a command through bash in its own pseudo-terminal (programs see a real terminal: colours, prompts, ' +
        'REPLs, pagers and TUIs work) and returns as soon as it exits, stops to wait for input (read from the kernel, ' +
        `not guessed from silence), or has run for yield_time_ms (default ${START_YIELD_MS / 1000} s). A program ` +
        'still running keeps running: answer its prompts, type into it or poll it with write_stdin and its ' +
        'session_id; a server started here stays up until it exits. ' +
        OUTPUT_DESCRIPTION +
        ` At most ${LIMITS.maxExecSessions} sessions at once; a session is gone once a call reported its exit. For ` +
        'plain one-shot commands whose cd and variables should persist, shell_run is the lighter tool.',
      inputSchema: {
        cmd: z.string().min(1).describe('The command line, run by bash -c.'),
        workdir: z.string().optional().describe('Working directory (default: the server’s).'),
        yield_time_ms: yieldTimeMs(`default ${START_YIELD_MS}`),
        max_output_tokens: maxOutputTokens,
      },
      outputSchema: updateShape,
    },
    async (args) => {
      const started = Date.now()
      const update = await sessions()
        .start({
          command: args.cmd,
          cwd: args.workdir,
          yieldMs: args.yield_time_ms ?? START_YIELD_MS,
          maxOutputBytes: outputBytes(args.max_output_tokens),
        })
        .catch(explained)
      return report(update, Date.now() - started)
    },
  )

  mcp.registerTool(
    'write_stdin',
    {
      title: 'Type into a running command, or poll it',
      description:
        'Sends chars to the terminal of a session exec_command started, then returns like exec_command: as soon as ' +
        'the program exits, waits for input again, or yield_time_ms passed (default 250 ms after typing; 5 s when ' +
        'chars is empty, which only polls for new output). chars are typed as is: "\\r" is Enter (end an answer to a ' +
        'prompt with it), "\\u0003" Ctrl+C, "\\u0004" Ctrl+D, "\\u001b" Escape. ' +
        OUTPUT_DESCRIPTION +
        ' An unknown or finished session_id is an error that lists the running sessions.',
      inputSchema: {
        session_id: z.number().int().min(0).describe('The session_id exec_command (or an earlier write_stdin) returned.'),
        chars: z.string().optional().describe('Characters to type; empty or omitted: only wait and read new output.'),
        yield_time_ms: yieldTimeMs(`default ${WRITE_YIELD_MS} after typing, ${POLL_YIELD_MS} for a poll`),
        max_output_tokens: maxOutputTokens,
      },
      outputSchema: updateShape,
    },
    async (args) => {
      const chars = args.chars ?? ''
      const started = Date.now()
      const update = await sessions()
        .write(args.session_id, chars, {
          yieldMs: args.yield_time_ms ?? (chars === '' ? POLL_YIELD_MS : WRITE_YIELD_MS),
          maxOutputBytes: outputBytes(args.max_output_tokens),
        })
        .catch(explained)
      return report(update, Date.now() - started)
    },
  )
}

function outputBytes(tokens) {
  return (tokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * BYTES_PER_TOKEN
}

/** The addon's rejection as the tool error the model reads (the limit names a way out). */
function explained(error) {
  if (error.code === 'ERR_EXEC_LIMIT') {
    throw new ToolError(
      `too many exec sessions (the limit is ${LIMITS.maxExecSessions}): end one first, e.g. write_stdin chars ` +
        '"\\u0003" (Ctrl+C) to a server you no longer need',
    )
  }
  throw new ToolError(error.message)
}

/** An ExecUpdate as the text a model reads and the structuredContent a client reads. */
function report(update, wallMs) {
  const waiting = update.running ? update.waitingForInput : undefined
  const returned = !update.running ? 'exited' : waiting ? 'waiting_for_input' : 'still_running'
  const facts = {
    returned,
    ...(update.running && { session_id: update.id }),
    ...(update.exitCode !== undefined && { exit_code: update.exitCode }),
    ...(update.signal && { signal: update.signal }),
    ...(waiting && { prompt: waiting.prompt ?? '', input_mode: waiting.mode, echo: waiting.echo }),
    listening: update.listening ?? [],
    output: update.output,
    truncated_bytes: update.truncatedBytes,
    wall_time_ms: wallMs,
    elapsed_ms: Math.round(update.elapsedMs),
  }
  const status = [whyReturned(update, wallMs)]
  if (update.running) status.push(`session_id ${update.id}`)
  const listening = describeListening(update)
  if (listening) status.push(listening)
  const dropped = facts.truncated_bytes > 0 ? `[${facts.truncated_bytes} bytes of earlier output dropped]\n` : ''
  const body = facts.output === '' ? '(no new output)' : facts.output
  return result(`${status.join(' · ')}\n${dropped}${body}`, facts)
}

module.exports = { registerExecTools }
