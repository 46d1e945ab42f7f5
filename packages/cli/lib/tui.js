'use strict'
// `shellwright tui [options] -- <command…>`: runs a TUI in a PtySession, sends keys, waits for text
// or until the program waits for input, prints the screen as text (or the ANSI snapshot with --ansi),
// then kills the program. Steps run in the order given on the command line.
const { parseArgs } = require('node:util')
const { PtySession } = require('../../../index.js')
const { parseKeys } = require('../../common/key-spec.js')
const { Watch } = require('../../common/screen-watch.js')

const HELP = `usage: shellwright tui [--cols N] [--rows N] [--keys SPEC]... [--wait-for TEXT]...
                      [--quiet MS] [--timeout MS] [--ansi] -- <command…>

Runs <command> (through sh -c) in an 80×24 pseudo-terminal, waits until it waits for input, then runs
the --keys and --wait-for steps in the order given, and prints the screen: one line per row, trailing
blank rows dropped (--ansi: a self-contained ANSI snapshot instead). The program is then killed.
"Waits for input" is the kernel's word on Linux (the program is asleep reading its terminal);
elsewhere it means no output for --quiet MS.

  --cols N, --rows N  terminal size (default 80 × 24; clamped to 20..400 × 5..200)
  --keys SPEC         type SPEC, then wait until the program waits for input again
  --wait-for TEXT     wait until TEXT appears on the screen
  --quiet MS          where the kernel cannot tell (not Linux): no output for MS ms (default 200)
  --timeout MS        limit for the whole run (default 10000)
  --ansi              print the ANSI snapshot instead of plain text

SPEC is literal text with key names in angle brackets:
  <enter> <tab> <esc> <space> <backspace> <delete> <insert> <up> <down> <left> <right>
  <home> <end> <pageup> <pagedown> <f1>…<f12> <ctrl+KEY> <alt+KEY> <shift+KEY>, any key id
  parseKey returns (e.g. <ctrl+shift+up>), and <lt> for a literal '<'.
  Example: --keys 'ihello<esc>:wq<enter>'

Exit status: 0 after printing the screen; 1 when a --wait-for text did not appear in time (the
screen is printed anyway) or the program could not start; 2 for bad arguments.`

const DEFAULT_QUIET_MS = 200
const DEFAULT_TIMEOUT_MS = 10_000

const OPTIONS = {
  cols: { type: 'string' },
  rows: { type: 'string' },
  keys: { type: 'string', multiple: true },
  'wait-for': { type: 'string', multiple: true },
  quiet: { type: 'string' },
  timeout: { type: 'string' },
  ansi: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
}

/**
 * Splits the arguments at the command: after `--`, or at the first argument that is neither an
 * option nor an option's value (so `tui less -N file` keeps `-N` for less).
 */
function splitAtCommand(args) {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === '--') return [args.slice(0, i), args.slice(i + 1)]
    if (!arg.startsWith('-')) return [args.slice(0, i), args.slice(i)]
    const name = arg.replace(/^--?/, '')
    if (OPTIONS[name]?.type === 'string') i++ // the next argument is this option's value
  }
  return [args, []]
}

/** Reads the command line into options and an ordered list of steps; throws on bad arguments. */
function parseCommandLine(args) {
  const [own, command] = splitAtCommand(args)
  const { tokens } = parseArgs({ args: own, options: OPTIONS, strict: true, tokens: true })
  const options = { cols: 80, rows: 24, quietMs: DEFAULT_QUIET_MS, timeoutMs: DEFAULT_TIMEOUT_MS, ansi: false }
  const steps = []
  const number = (flag, value) => {
    const n = Number(value)
    if (value === '' || !Number.isFinite(n) || n < 0) {
      throw new Error(`${flag} must be a non-negative number, got '${value}'`)
    }
    return n
  }
  const numeric = { cols: 'cols', rows: 'rows', quiet: 'quietMs', timeout: 'timeoutMs' }
  // Tokens keep the command line's order, which is the order the steps run in.
  for (const token of tokens) {
    if (token.kind !== 'option') continue
    const { name, value } = token
    if (name === 'help') return { help: true }
    if (name === 'ansi') options.ansi = true
    else if (numeric[name]) options[numeric[name]] = number(`--${name}`, value)
    else if (name === 'keys') {
      parseKeys(value) // validate key names now
      steps.push({ keys: value })
    } else if (name === 'wait-for') {
      if (value === '') throw new Error('--wait-for needs a non-empty text')
      steps.push({ waitFor: value })
    }
  }
  return { options, steps, command: command.join(' ') }
}

function render(session, ansi) {
  if (ansi) return session.snapshot()
  const lines = session.screen().lines
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines.map((line) => line + '\n').join('')
}

async function main(args) {
  let parsed
  try {
    parsed = parseCommandLine(args)
  } catch (error) {
    process.stderr.write(`shellwright tui: ${error.message}\n${HELP}\n`)
    return 2
  }
  if (parsed.help) {
    process.stdout.write(HELP + '\n')
    return 0
  }
  const { options, steps, command } = parsed
  if (!command) {
    process.stderr.write(`shellwright tui: missing command\n${HELP}\n`)
    return 2
  }

  const session = new PtySession()
  const watch = new Watch(session)
  const deadline = Date.now() + options.timeoutMs
  let done
  try {
    done = session.start({ command, cols: options.cols, rows: options.rows }, () => watch.onChunk())
  } catch (error) {
    process.stderr.write(`shellwright tui: ${error.message}\n`)
    return 1
  }
  let failure
  done.then(
    () => watch.end(),
    (error) => {
      failure = error
      watch.end()
    },
  )

  let code = 0
  const settle = () => watch.settle(deadline, { quietMs: options.quietMs })
  await settle()
  for (const step of steps) {
    if (step.keys !== undefined) {
      if (watch.ended) break
      // Arrow keys follow the program's cursor-key mode (DECCKM), as a real terminal's do.
      session.write(parseKeys(step.keys, session.screen().modes.applicationCursorKeys))
      watch.lastOutput = Date.now()
      await settle()
      // A trailing Escape: the program waits a moment, asleep in its read, for the rest of a key
      // sequence (its own timer); only its output going quiet says it took the Escape alone.
      if (/<esc>$/i.test(step.keys)) await watch.quiet(options.quietMs, deadline)
    } else if (!(await watch.text(step.waitFor, deadline))) {
      process.stderr.write(
        `shellwright tui: timed out after ${options.timeoutMs} ms waiting for ${JSON.stringify(step.waitFor)}\n`,
      )
      code = 1
      break
    }
  }

  // Captured before the kill: a program that gets SIGTERM may restore the terminal on its way out.
  const screen = failure ? '' : render(session, options.ansi)
  if (!watch.ended) session.kill()
  await done.catch(() => {})
  if (failure) {
    process.stderr.write(`shellwright tui: ${failure.message}\n`)
    return 1
  }
  process.stdout.write(screen)
  return code
}

module.exports = { main, parseCommandLine }
