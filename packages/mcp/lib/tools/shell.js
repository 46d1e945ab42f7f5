'use strict'
// The shell tools: `shell_run` and `shell_jobs`, over one persistent Shell per server.
const { z } = require('zod')
const { OutputTail, plainText, tail } = require('../text.js')
const { ToolError } = require('../sessions.js')
const { LIMITS, DEFAULT_RUN_TIMEOUT_MS, timeoutMs, result, transcript } = require('./common.js')

function registerShellTools(mcp, shell, options) {
  mcp.registerTool(
    'shell_run',
    {
      title: 'Run a shell command',
      description:
        'Runs a command in one persistent bash-compatible shell and returns its combined stdout and stderr (colour ' +
        'and other escape sequences left out), then a line with its exit code. The shell is shared by every call: ' +
        '`cd`, `export`, variables, functions and background jobs persist, also across a timeout; only `exit` (or ' +
        '`exec`) ends the shell, which the result says, and the next call starts a fresh one. Use it for ' +
        `non-interactive commands (builds, tests, git, file edits). Output longer than ` +
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
      outputSchema: {
        exit_code: z.number().int().optional().describe('How the command exited; absent when it timed out or was cancelled.'),
        timed_out: z.boolean(),
        cancelled: z.boolean(),
        cwd: z.string().describe('Where the shell is now: where the next command starts.'),
        session_reset: z.boolean().optional().describe('Present when the command ended the shell (exit): the next one starts fresh.'),
        output: z.string().describe('Its combined stdout and stderr without escape sequences (the end of it, under a truncation header when longer).'),
        minimized: z.boolean().describe('Whether the output is the minimizer’s rewrite.'),
      },
    },
    async ({ command, cwd, timeout_ms }, extra) => {
      const out = new OutputTail(LIMITS.maxOutputBytes)
      const request = { command, cwd, timeoutMs: timeout_ms ?? DEFAULT_RUN_TIMEOUT_MS, signal: extra.signal }
      const run = await shell().run(request, (chunk) => out.push(chunk))
      // With the minimizer on, a filter's rewrite (errors and summaries kept) replaces the transcript.
      // The model reads text, not colours: escapes are left out here (the Shell's history keeps them).
      const output = plainText(run.minimized ? tail(run.minimized.text, LIMITS.maxOutputBytes) : out.text())
      const facts = {
        ...(run.exitCode != null && { exit_code: run.exitCode }),
        timed_out: run.timedOut,
        cancelled: run.cancelled,
        cwd: run.cwd,
        ...(run.sessionReset && { session_reset: true }),
        output,
        minimized: Boolean(run.minimized),
      }
      if (run.timedOut) {
        const stopped = `timed out after ${request.timeoutMs} ms: the command and everything it started were stopped`
        return result(transcript(output, `${stopped}; the shell is still in ${run.cwd}`), facts)
      }
      if (run.cancelled) return result(transcript(output, 'cancelled'), facts)
      const ended = run.sessionReset
        ? `; the shell ended, the next command starts a fresh one in ${run.cwd} (variables and functions are gone)`
        : ''
      return result(transcript(output, `exit code ${run.exitCode}${ended}`), facts)
    },
  )

  mcp.registerTool(
    'shell_jobs',
    {
      title: 'Read background jobs',
      description:
        'Lists the background jobs (`cmd &`) that shell_run commands started — a dev server, a watcher, a long build — ' +
        'with whether each still runs or how it exited, and what each wrote after the shell_run that started it ' +
        'returned (while that call runs, a job\'s output is part of its transcript). Each job keeps its last 1 MiB; ' +
        `this returns at most ${LIMITS.maxOutputBytes / 1024} KB in all, each job's end. Stop a job with shell_run ` +
        '`kill %N`, wait for it with `wait %N`. The shell forgets its jobs when it ends (exit).',
      inputSchema: {
        job: z.number().int().min(1).optional().describe('Only this job number (as in `jobs` and `%N`).'),
      },
      outputSchema: {
        jobs: z.array(
          z.object({
            id: z.number().int(),
            command: z.string(),
            running: z.boolean(),
            exit_code: z.number().int().optional().describe('Its status once it ended (128 + N when signal N ended it).'),
            pid: z.number().int().optional().describe('Its oldest process still running.'),
            output: z.string().describe('What it wrote after its shell_run returned, without escape sequences (its end).'),
          }),
        ),
      },
    },
    async ({ job }) => {
      const all = shell().jobs()
      const shown = job === undefined ? all : all.filter((j) => j.id === job)
      if (job !== undefined && shown.length === 0) {
        const known = all.map((j) => `%${j.id}`).join(', ') || 'none'
        throw new ToolError(`no job ${job}; the shell's jobs: ${known}`)
      }
      // Each job gets an equal share of the budget: a chatty server does not hide a quiet build's end.
      const budget = Math.floor(LIMITS.maxOutputBytes / Math.max(1, shown.length))
      const jobs = shown.map((j) => ({
        id: j.id,
        command: j.command,
        running: j.running,
        ...(j.exitCode != null && { exit_code: j.exitCode }),
        ...(j.pid != null && { pid: j.pid }),
        output: plainText(tail(j.output, budget, j.truncatedBytes)),
      }))
      return result(jobs.length === 0 ? 'no background jobs' : jobs.map(describeJob).join('\n'), { jobs })
    },
  )
}

/** "[1] running · npm run dev &" then its output, as the shell_jobs text shows a job. */
function describeJob({ id, command, running, exit_code, output }) {
  const state = running ? 'running' : `exited ${exit_code}`
  const body = output === '' ? '(no output since its shell_run returned)' : output.replace(/\n$/, '')
  return `[${id}] ${state} · ${command}\n${body}`
}

module.exports = { registerShellTools }
