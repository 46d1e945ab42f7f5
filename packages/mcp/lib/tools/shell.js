'use strict'
// The shell tool: `shell_run`, one persistent Shell per server.
const { z } = require('zod')
const { OutputTail, plainText, tail } = require('../text.js')
const { LIMITS, DEFAULT_RUN_TIMEOUT_MS, timeoutMs, text, transcript } = require('./common.js')

function registerShellTools(mcp, shell, options) {
  mcp.registerTool(
    'shell_run',
    {
      title: 'Run a shell command',
      description:
        'Runs a command in one persistent bash-compatible shell and returns its combined stdout and stderr (colour ' +
        'and other escape sequences left out), then a ' +
        'line with its exit code. The shell is shared by every call: `cd`, `export`, variables and functions ' +
        `persist. Use it for non-interactive commands (builds, tests, git, file edits). Output longer than ` +
        `${LIMITS.maxOutputBytes / 1024} KB keeps its end and starts with a "[Terminal output truncated: ~N KB ` +
        `dropped from beginning]" line. A command still running after timeout_ms (default ${DEFAULT_RUN_TIMEOUT_MS / 1000} s) ` +
        'is stopped with everything it started and reported as timed out. Programs that need a terminal or keyboard ' +
        '(editors, pagers, htop, REPLs) belong in tui_start instead.' +
        (options.minimizer?.enabled
          ? ' Output of known programs (cargo, git, npm, make, test runners, …) is condensed: errors, warnings ' +
            'and summaries are kept, noise is dropped.'
          : ''),
      inputSchema: {
        command: z.string().min(1).describe('The command line, in bash syntax.'),
        cwd: z.string().optional().describe('Directory to run in; it stays the current directory afterwards, like cd.'),
        timeout_ms: timeoutMs(DEFAULT_RUN_TIMEOUT_MS, 3_600_000),
      },
    },
    async ({ command, cwd, timeout_ms }, extra) => {
      const out = new OutputTail(LIMITS.maxOutputBytes)
      const run = { command, cwd, timeoutMs: timeout_ms ?? DEFAULT_RUN_TIMEOUT_MS, signal: extra.signal }
      const result = await shell().run(run, (chunk) => out.push(chunk))
      // With the minimizer on, a filter's rewrite (errors and summaries kept) replaces the transcript.
      // The model reads text, not colours: escapes are left out here (the Shell's history keeps them).
      const output = plainText(result.minimized ? tail(result.minimized.text, LIMITS.maxOutputBytes) : out.text())
      if (result.timedOut) {
        return text(transcript(output, `timed out after ${run.timeoutMs} ms: the command and everything it started were stopped`))
      }
      if (result.cancelled) return text(transcript(output, 'cancelled'))
      return text(transcript(output, `exit code ${result.exitCode}`))
    },
  )
}

module.exports = { registerShellTools }
