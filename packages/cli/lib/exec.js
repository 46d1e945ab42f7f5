'use strict'
// `shellwright exec [--yield MS] [--json] [--] <command…>`: runs a command the way an agent's
// exec_command does — through bash in a pseudo-terminal, stepped in updates that return when it exits,
// when it waits for input, or after --yield MS — and prints every update until it exits or waits.
const { parseArgs } = require('node:util')
const { ExecSessions } = require('../../../index.js')
const { describeListening, whyReturned } = require('../../common/exec-update.js')

const HELP = `usage: shellwright exec [--yield MS] [--json] [--] <command…>

Runs <command> through bash -c in a pseudo-terminal as an agent's exec_command does, and prints its
updates: each returns when the program exits, when it waits for input (the kernel's word: it is asleep
reading its terminal), or after --yield MS, with what the terminal shows that is new since the update
before (rendered text: a line rewritten in place comes again, a full-screen program gives its screen).
It goes on until the program exits or waits for input; a status line on stderr then says which
("[exited 3]", "[waiting for input: \\">>> \\"]"), and a program that waits is killed.

  --yield MS   how long one update waits at most (default 10000)
  --json       print each update as a JSON line instead (ExecUpdate: output, running, exitCode,
               waitingForInput, listening, truncatedBytes, elapsedMs); no status line

Exit status: the program's exit code (128+N after signal N); 0 when it stopped to wait for input;
130 after Ctrl+C (the program is killed); 1 when it could not start; 2 for bad arguments.`

const DEFAULT_YIELD_MS = 10_000

function parseCommandLine(args) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { yield: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) return { help: true }
  if (positionals.length === 0) throw new Error('missing command')
  const yieldMs = values.yield === undefined ? DEFAULT_YIELD_MS : Number(values.yield)
  if (values.yield === '' || !Number.isFinite(yieldMs) || yieldMs < 0) {
    throw new Error(`--yield must be a number of milliseconds, got '${values.yield}'`)
  }
  return { command: positionals.join(' '), yieldMs, json: values.json === true }
}

async function main(args) {
  let options
  try {
    options = parseCommandLine(args)
  } catch (error) {
    process.stderr.write(`shellwright exec: ${error.message}\n${HELP}\n`)
    return 2
  }
  if (options.help) {
    process.stdout.write(HELP + '\n')
    return 0
  }
  const sessions = new ExecSessions({ maxSessions: 1 })
  let interrupted = false
  let id
  const onSigint = () => {
    interrupted = true
    if (id !== undefined) sessions.kill(id).catch(() => {})
  }
  process.on('SIGINT', onSigint)
  try {
    const step = { yieldMs: options.yieldMs }
    let asked = Date.now()
    let update = await sessions.start({ command: options.command, ...step })
    id = update.id
    for (;;) {
      print(update, Date.now() - asked, options.json)
      if (!update.running) return interrupted ? 130 : (update.exitCode ?? 1)
      if (update.waitingForInput) return 0
      asked = Date.now()
      update = await sessions.write(id, '', step)
    }
  } catch (error) {
    process.stderr.write(`shellwright exec: ${error.message}\n`)
    return 1
  } finally {
    process.off('SIGINT', onSigint)
    await sessions.close()
  }
}

/** One update: its output (or its JSON line), and at the end a status line on stderr. */
function print(update, waitedMs, json) {
  if (json) {
    process.stdout.write(`${JSON.stringify(update)}\n`)
    return
  }
  if (update.truncatedBytes > 0) process.stdout.write(`[${update.truncatedBytes} bytes of earlier output dropped]\n`)
  if (update.output !== '') process.stdout.write(`${update.output}\n`)
  const done = !update.running || update.waitingForInput
  const listening = describeListening(update)
  if (done) process.stderr.write(`[${[whyReturned(update, waitedMs), listening].filter(Boolean).join(' · ')}]\n`)
}

module.exports = { main }
