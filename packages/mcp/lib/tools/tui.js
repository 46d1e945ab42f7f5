'use strict'
// The terminal tools: `tui_start`, `tui_send`, `tui_screen`, `tui_wait_for`, `tui_exec`,
// `tui_resize`, `tui_kill` and `tui_list`, over the server's TUI sessions (../sessions.js).
const { z } = require('zod')
const { ToolError } = require('../sessions.js')
const { tail } = require('../text.js')
const {
  LIMITS,
  DEFAULT_QUIET_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  DEFAULT_EXEC_TIMEOUT_MS,
  id,
  quietMs,
  timeoutMs,
  result,
  transcript,
} = require('./common.js')

/** A session's screen as structuredContent (see TuiSession.view). */
const screenShape = {
  id: z.string(),
  status: z
    .string()
    .describe('What the program does: "waiting for keys", "waiting for a line", "running", or how it ended.'),
  running: z.boolean(),
  cols: z.number().int(),
  rows: z.number().int(),
  cursor: z.object({ row: z.number().int(), col: z.number().int(), visible: z.boolean() }).describe('0-based.'),
  title: z.string(),
  lines: z
    .array(z.string())
    .describe('The rows as the terminal shows them (their styles marked with format "styled"), trailing blank rows dropped.'),
}

/** A result showing a session's screen: the text under its status line, and the same as facts. */
function screenResult(session, before = '', extra = {}, how = {}) {
  const { text, facts } = session.view(how)
  return result(before + text, { ...facts, ...extra })
}

function registerTuiTools(mcp, sessions, watching) {
  mcp.registerTool(
    'tui_start',
    {
      title: 'Start a terminal program',
      description:
        'Starts a program in its own pseudo-terminal with a terminal emulator (a full-screen TUI such as htop, vim, ' +
        'less, a Textual or curses app, a REPL, or with interactive: true a bash shell for tui_exec) and returns a ' +
        'session id and the first screen as soon as the program waits for input — the kernel reports it asleep ' +
        'reading its terminal with everything it printed on the screen — or has exited (at most ' +
        `${LIMITS.settleMs / 1000} s; a program still busy then is returned as "running"). The screen is plain text ` +
        'under a status line that says what the program does ("waiting for keys": a TUI or a REPL reads key by ' +
        'key; "waiting for a line": a prompt reads a line, "(typed text not shown)" at a password prompt; "running": ' +
        'busy; or how it exited), the size and the cursor position (row,col from 0). The terminal answers the queries programs send (cursor position, device ' +
        'attributes) unless answer_queries is false. The program runs until it exits or tui_kill; at most ' +
        `${LIMITS.maxSessions} sessions run at once.`,
      inputSchema: {
        command: z
          .string()
          .min(1)
          .optional()
          .describe('The command line, run through sh -c. Required unless interactive is true.'),
        cwd: z.string().optional().describe('Working directory (default: the server’s).'),
        cols: z.number().int().min(20).max(400).optional().describe('Columns (default 80).'),
        rows: z.number().int().min(5).max(200).optional().describe('Rows (default 24).'),
        answer_queries: z
          .boolean()
          .optional()
          .describe('Answer terminal queries like a real terminal (default true); false shows how a program behaves without answers.'),
        interactive: z
          .boolean()
          .optional()
          .describe('Start an interactive bash with shell integration instead of a command; use tui_exec to run commands in it.'),
        quiet_ms: quietMs,
      },
      outputSchema: { ...screenShape, command: z.string(), url: z.string().optional().describe('Where a person can watch it.') },
    },
    async (args) => {
      if (args.interactive && args.command !== undefined) {
        throw new ToolError('command must be omitted when interactive is true: use tui_exec or tui_send to run commands in the shell')
      }
      if (!args.interactive && args.command === undefined) throw new ToolError('command is required unless interactive is true')
      const options = {
        command: args.command,
        cwd: args.cwd,
        cols: args.cols ?? 80,
        rows: args.rows ?? 24,
        answerQueries: args.answer_queries ?? true,
        interactive: args.interactive === true,
      }
      const session = await sessions.open(options, args.quiet_ms ?? DEFAULT_QUIET_MS)
      const servers = watching()
      if (servers) session.url = await servers.add(session)
      const watch = session.url ? `watch it at ${session.url}\n` : ''
      const started = `started ${session.id}: ${session.command}\n${watch}`
      return screenResult(session, started, { command: session.command, ...(session.url && { url: session.url }) })
    },
  )

  mcp.registerTool(
    'tui_send',
    {
      title: 'Type into a terminal program',
      description:
        'Sends input to a running session and returns its screen as soon as the program waits for input again (or ' +
        `exits; at most ${LIMITS.settleMs / 1000} s). ` +
        '`text` is typed literally; `keys` is text with key names in angle brackets, typed after `text`: <enter> ' +
        '<tab> <esc> <space> <backspace> <delete> <up> <down> <left> <right> <home> <end> <pageup> <pagedown> ' +
        '<f1>…<f12>, modifiers as <ctrl+c>, <alt+x>, <shift+tab>, and <lt> for a literal "<" (e.g. ' +
        '"ihello<esc>:wq<enter>" in vim). Arrow keys follow the cursor-key mode the program asked for.',
      inputSchema: {
        id,
        text: z.string().optional().describe('Typed as is, before keys.'),
        keys: z.string().optional().describe('Text with <key> names, e.g. "q", "<down><down><enter>", "<ctrl+c>".'),
        quiet_ms: quietMs,
      },
      outputSchema: screenShape,
    },
    async (args) => {
      if (args.text === undefined && args.keys === undefined) throw new ToolError('give text, keys or both')
      const session = sessions.get(args.id)
      await session.send(args.text, args.keys, args.quiet_ms ?? DEFAULT_QUIET_MS)
      return screenResult(session)
    },
  )

  mcp.registerTool(
    'tui_screen',
    {
      title: 'Read a terminal screen',
      description:
        'Returns what a session’s terminal shows now, without sending anything: by default plain text under a ' +
        'status line (session, whether the program waits for input, is running or how it exited, size, cursor ' +
        'position). Format "styled" is the same text with colours and attributes marked where they change, for ' +
        'menus and lists whose selection is only a colour or reverse video: "⟦inverse⟧ Open ⟦/⟧ Save" (⟦/⟧: plain ' +
        'again; words: inverse bold dim italic underline strike, fg=COLOR, bg=COLOR with COLOR a name such as red ' +
        'or bright-blue, a palette number 16-255 or #rrggbb). Format "ansi" returns a self-contained ANSI snapshot ' +
        '(scrollback, colours, cursor) for a program that renders terminals. Ended sessions keep their last screen ' +
        'until tui_kill.',
      inputSchema: {
        id,
        format: z.enum(['text', 'styled', 'ansi']).optional().describe('"text" (default), "styled" or "ansi".'),
      },
      outputSchema: { ...screenShape, ansi: z.string().optional().describe('With format "ansi": the snapshot.') },
    },
    async (args) => {
      const session = sessions.get(args.id)
      if (args.format !== 'ansi') return screenResult(session, '', {}, { styled: args.format === 'styled' })
      const snapshot = session.pty.snapshot()
      const bytes = Buffer.byteLength(snapshot)
      if (bytes > LIMITS.maxSnapshotBytes) {
        throw new ToolError(
          `the ANSI snapshot of ${args.id} is ${Math.ceil(bytes / 1024)} KB, over the ${LIMITS.maxSnapshotBytes / 1024} KB limit; use format "text"`,
        )
      }
      return result(snapshot, { ...session.view().facts, ansi: snapshot })
    },
  )

  mcp.registerTool(
    'tui_wait_for',
    {
      title: 'Wait for text on a terminal screen',
      description:
        'Waits until a session’s screen shows `text` (or matches `regex`, a JavaScript regular expression tested ' +
        'against the screen rows joined by newlines, with ^ and $ matching at each row) and returns the screen. Fails with the screen as it is when ' +
        `timeout_ms (default ${DEFAULT_WAIT_TIMEOUT_MS / 1000} s) passes or the program ends first. Use it after ` +
        'tui_send for output a program prints while it stays busy (tui_send returns when it waits for input).',
      inputSchema: {
        id,
        text: z.string().min(1).optional().describe('Literal text to wait for.'),
        regex: z.string().min(1).optional().describe('A regular expression to wait for, e.g. "\\\\d+ tasks".'),
        timeout_ms: timeoutMs(DEFAULT_WAIT_TIMEOUT_MS, 120_000),
      },
      outputSchema: screenShape,
    },
    async (args, extra) => {
      if ((args.text === undefined) === (args.regex === undefined)) throw new ToolError('give exactly one of text or regex')
      let pattern
      try {
        pattern = args.regex === undefined ? undefined : new RegExp(args.regex, 'm')
      } catch (error) {
        throw new ToolError(`regex is not a valid regular expression: ${error.message}`)
      }
      const session = sessions.get(args.id)
      const shows = () => {
        const screen = session.pty.screen().lines.join('\n')
        return pattern ? pattern.test(screen) : screen.includes(args.text)
      }
      const limit = args.timeout_ms ?? DEFAULT_WAIT_TIMEOUT_MS
      const what = pattern ? `regex ${pattern}` : JSON.stringify(args.text)
      const found = await session.watch.until(
        () => shows() || !session.running || extra.signal.aborted,
        Date.now() + limit,
        50,
      )
      if (found && shows()) return screenResult(session)
      const why = extra.signal.aborted ? 'cancelled' : session.running ? `timed out after ${limit} ms` : 'the program ended'
      throw new ToolError(`${why} waiting for ${what}\n${session.render()}`)
    },
  )

  mcp.registerTool(
    'tui_exec',
    {
      title: 'Run a command in an interactive shell session',
      description:
        'Types a command into a session started with tui_start interactive: true (a bash with shell integration), ' +
        'waits for it to finish and returns its output as plain text and its exit code, read from the shell’s ' +
        'command-boundary marks rather than guessed from the screen. Use it when a command must run in a real ' +
        'terminal, or in the same shell a person watches. When the command stops to ask for input (a prompt, a ' +
        'password, a pager) the call returns at once with the screen and says so: answer with tui_send, then call ' +
        'tui_screen or tui_wait_for. On timeout_ms ' +
        `(default ${DEFAULT_EXEC_TIMEOUT_MS / 1000} s) the command gets Ctrl+C and the call fails. Output longer than ` +
        `${LIMITS.maxOutputBytes / 1024} KB keeps its end.`,
      inputSchema: {
        id,
        command: z.string().min(1).describe('One command line; bash syntax.'),
        timeout_ms: timeoutMs(DEFAULT_EXEC_TIMEOUT_MS, 3_600_000),
      },
      outputSchema: {
        exit_code: z.number().int().optional().describe('The command’s exit code, when the shell reported it.'),
        output: z.string().optional().describe('Its output as plain text, when it finished.'),
        asks: z.string().optional().describe('When it stopped to ask for input: what it waits for.'),
        screen: z.object(screenShape).optional().describe('When it stopped to ask for input: the screen.'),
      },
    },
    async (args, extra) => {
      const session = sessions.get(args.id)
      if (!session.interactive) {
        throw new ToolError(`session ${args.id} runs ${JSON.stringify(session.command)}, not an interactive shell: start one with tui_start interactive: true`)
      }
      session.ensureRunning()
      const limit = args.timeout_ms ?? DEFAULT_EXEC_TIMEOUT_MS
      const stopAsking = new AbortController()
      const execution = session.pty.exec(args.command, { timeoutMs: limit, signal: extra.signal })
      let record
      try {
        const first = await Promise.race([execution, session.commandAsks(stopAsking.signal)])
        if (first?.asks) {
          execution.catch(() => {}) // it resolves once the command ends, after the agent's answers
          const { text, facts } = session.view()
          const asks = `the command is waiting for input (${first.asks}); answer with tui_send\n`
          return result(asks + text, { asks: first.asks, screen: facts })
        }
        record = first
      } catch (error) {
        const sent = error.code === 'ERR_EXEC_TIMEOUT' || error.code === 'ABORT_ERR' ? ' (Ctrl+C was sent)' : ''
        throw new ToolError(`${error.message}${sent}`)
      } finally {
        stopAsking.abort()
      }
      const ending = record.exitCode === undefined ? 'exit code unknown' : `exit code ${record.exitCode}`
      const output = tail(record.output, LIMITS.maxOutputBytes)
      return result(transcript(output, ending), { output, ...(record.exitCode !== undefined && { exit_code: record.exitCode }) })
    },
  )

  mcp.registerTool(
    'tui_resize',
    {
      title: 'Resize a terminal',
      description:
        'Changes a running session’s terminal size (the program gets SIGWINCH and redraws) and returns the screen ' +
        'once the program waits for input again.',
      inputSchema: {
        id,
        cols: z.number().int().min(20).max(400).describe('Columns, 20 to 400.'),
        rows: z.number().int().min(5).max(200).describe('Rows, 5 to 200.'),
        quiet_ms: quietMs,
      },
      outputSchema: screenShape,
    },
    async (args) => {
      const session = sessions.get(args.id)
      session.ensureRunning()
      session.pty.resize(args.cols, args.rows)
      session.watch.lastOutput = Date.now()
      await session.settle(args.quiet_ms ?? DEFAULT_QUIET_MS)
      return screenResult(session)
    },
  )

  mcp.registerTool(
    'tui_kill',
    {
      title: 'End a terminal session',
      description:
        'Ends a session: a running program gets SIGTERM, then SIGKILL after a grace period, with everything it ' +
        'started; the call returns once it is reaped, with its last screen and how it ended. Also removes an ended ' +
        'session from tui_list.',
      inputSchema: { id },
      outputSchema: {
        id: z.string(),
        status: z.string().describe('How the program ended.'),
        last_screen: z.object(screenShape).describe('The screen just before the kill.'),
      },
    },
    async (args) => {
      const session = sessions.get(args.id)
      // Read before the kill: a program that gets SIGTERM may clear its screen on the way out.
      const screen = session.view()
      await sessions.kill(args.id)
      const status = session.status()
      return result(`${args.id} ${status}\nlast screen:\n${screen.text}`, { id: args.id, status, last_screen: screen.facts })
    },
  )

  mcp.registerTool(
    'tui_list',
    {
      title: 'List terminal sessions',
      description:
        'Lists the terminal sessions, one a line with tab-separated fields: id, state (running, or how the program ' +
        'ended, e.g. "exited with code 0"), size as COLSxROWS, the command, and when a person can watch, the ' +
        'URL of its web terminal. Ended sessions stay listed, with their last screen readable, until tui_kill.',
      inputSchema: {},
      outputSchema: {
        sessions: z.array(
          z.object({
            id: z.string(),
            status: z.string(),
            running: z.boolean(),
            cols: z.number().int(),
            rows: z.number().int(),
            command: z.string(),
            url: z.string().optional(),
          }),
        ),
      },
    },
    async () => {
      const listed = sessions.list().map((s) => {
        const { cols, rows } = s.pty.screen()
        return { id: s.id, status: s.status(), running: s.running, cols, rows, command: s.command, ...(s.url && { url: s.url }) }
      })
      if (listed.length === 0) return result('no sessions', { sessions: [] })
      const line = (s) => [s.id, s.status, `${s.cols}x${s.rows}`, s.command, ...(s.url ? [s.url] : [])].join('\t')
      return result(listed.map(line).join('\n'), { sessions: listed })
    },
  )
}

module.exports = { registerTuiTools }
