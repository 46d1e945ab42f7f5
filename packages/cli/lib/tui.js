'use strict'
// `shellwright tui [options] -- <command…>`: runs a TUI in a PtySession, sends keys, waits for text
// or for quiet, prints the screen as text (or the ANSI snapshot with --ansi), then kills the program.
// Steps run in the order given on the command line.
const { PtySession } = require('../../../index.js')

const HELP = `usage: shellwright tui [--cols N] [--rows N] [--keys SPEC]... [--wait-for TEXT]...
                      [--quiet MS] [--timeout MS] [--ansi] -- <command…>

Runs <command> (through sh -c) in an 80×24 pseudo-terminal, waits until it is quiet, then runs the
--keys and --wait-for steps in the order given, and prints the screen: one line per row, trailing
blank rows dropped (--ansi: a self-contained ANSI snapshot instead). The program is then killed.

  --cols N, --rows N  terminal size (default 80 × 24; clamped to 20..400 × 5..200)
  --keys SPEC         type SPEC, then wait until the program is quiet
  --wait-for TEXT     wait until TEXT appears on the screen
  --quiet MS          quiet means no output for MS milliseconds (default 200)
  --timeout MS        limit for the whole run (default 10000)
  --ansi              print the ANSI snapshot instead of plain text

SPEC is literal text with key names in angle brackets:
  <enter> <tab> <esc> <space> <backspace> <delete> <insert> <up> <down> <left> <right>
  <home> <end> <pageup> <pagedown> <f1>…<f12> <ctrl+KEY> <alt+KEY>   and  <lt> for a literal '<'.
  Example: --keys 'ihello<esc>:wq<enter>'

Exit status: 0 after printing the screen; 1 when a --wait-for text did not appear in time (the
screen is printed anyway) or the program could not start; 2 for bad arguments.`

const DEFAULT_QUIET_MS = 200
const DEFAULT_TIMEOUT_MS = 10_000

/** xterm sequences for named keys: [normal, application-cursor-mode] (DECCKM changes arrows). */
const KEYS = {
  enter: ['\r'],
  return: ['\r'],
  tab: ['\t'],
  esc: ['\x1b'],
  escape: ['\x1b'],
  space: [' '],
  backspace: ['\x7f'],
  bs: ['\x7f'],
  delete: ['\x1b[3~'],
  del: ['\x1b[3~'],
  insert: ['\x1b[2~'],
  up: ['\x1b[A', '\x1bOA'],
  down: ['\x1b[B', '\x1bOB'],
  right: ['\x1b[C', '\x1bOC'],
  left: ['\x1b[D', '\x1bOD'],
  home: ['\x1b[H', '\x1bOH'],
  end: ['\x1b[F', '\x1bOF'],
  pageup: ['\x1b[5~'],
  pgup: ['\x1b[5~'],
  pagedown: ['\x1b[6~'],
  pgdn: ['\x1b[6~'],
  f1: ['\x1bOP'],
  f2: ['\x1bOQ'],
  f3: ['\x1bOR'],
  f4: ['\x1bOS'],
  f5: ['\x1b[15~'],
  f6: ['\x1b[17~'],
  f7: ['\x1b[18~'],
  f8: ['\x1b[19~'],
  f9: ['\x1b[20~'],
  f10: ['\x1b[21~'],
  f11: ['\x1b[23~'],
  f12: ['\x1b[24~'],
  lt: ['<'],
}

/** The bytes of one key name (`up`, `ctrl+c`, `alt+x`); throws on an unknown name. */
function keyBytes(name, appCursor) {
  const lower = name.toLowerCase()
  const ctrl = /^(?:ctrl|c)[+-](.)$/i.exec(name)
  if (ctrl) {
    const ch = ctrl[1]
    if (ch === '?') return '\x7f'
    const code = ch.toUpperCase().charCodeAt(0)
    if (code >= 0x40 && code <= 0x5f) return String.fromCharCode(code & 0x1f)
    if (ch === ' ' || ch === '2') return '\x00'
    throw new Error(`unknown key <${name}>`)
  }
  const alt = /^(?:alt|meta|m)[+-](.+)$/i.exec(name)
  if (alt) return '\x1b' + (alt[1].length === 1 ? alt[1] : keyBytes(alt[1], appCursor))
  const sequences = KEYS[lower]
  if (!sequences) throw new Error(`unknown key <${name}>`)
  return appCursor && sequences[1] ? sequences[1] : sequences[0]
}

/** Splits SPEC into literal text and `<key>` names and returns the bytes to type. */
function parseKeys(spec, appCursor = false) {
  let out = ''
  let i = 0
  while (i < spec.length) {
    const open = spec.indexOf('<', i)
    if (open < 0) {
      out += spec.slice(i)
      break
    }
    out += spec.slice(i, open)
    const close = spec.indexOf('>', open + 1)
    // A '<' that does not start a <name> (e.g. "a < b") is literal.
    if (close < 0 || !/^[a-z0-9]+([+-].+)?$/i.test(spec.slice(open + 1, close))) {
      out += '<'
      i = open + 1
      continue
    }
    out += keyBytes(spec.slice(open + 1, close), appCursor)
    i = close + 1
  }
  return out
}

/** Reads the command line into options and an ordered list of steps; throws on bad arguments. */
function parseArgs(args) {
  const options = { cols: 80, rows: 24, quietMs: DEFAULT_QUIET_MS, timeoutMs: DEFAULT_TIMEOUT_MS, ansi: false }
  const steps = []
  const number = (flag, value) => {
    const n = Number(value)
    if (value === undefined || value === '' || !Number.isFinite(n) || n < 0) {
      throw new Error(`${flag} must be a non-negative number, got '${value ?? ''}'`)
    }
    return n
  }
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]
    if (arg === '--') {
      i++
      break
    }
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = () => {
      if (inline !== undefined) return inline
      if (i + 1 >= args.length) throw new Error(`${flag} needs a value`)
      return args[++i]
    }
    switch (flag) {
      case '--help':
      case '-h':
        return { help: true }
      case '--cols':
        options.cols = number(flag, value())
        break
      case '--rows':
        options.rows = number(flag, value())
        break
      case '--quiet':
        options.quietMs = number(flag, value())
        break
      case '--timeout':
        options.timeoutMs = number(flag, value())
        break
      case '--ansi':
        options.ansi = true
        break
      case '--keys': {
        const spec = value()
        parseKeys(spec) // validate key names now
        steps.push({ keys: spec })
        break
      }
      case '--wait-for': {
        const text = value()
        if (text === '') throw new Error('--wait-for needs a non-empty text')
        steps.push({ waitFor: text })
        break
      }
      default:
        if (arg.startsWith('-')) throw new Error(`unknown option '${arg}'`)
        // The command starts at the first positional argument.
        return { options, steps, command: args.slice(i).join(' ') }
    }
  }
  return { options, steps, command: args.slice(i).join(' ') }
}

/** Watches a running session's output: quiet periods, screen text and the end of the run. */
class Watch {
  constructor(session) {
    this.session = session
    this.lastOutput = Date.now()
    this.ended = false
    this.waiters = new Set()
  }

  onChunk() {
    this.lastOutput = Date.now()
    this.wake()
  }

  end() {
    this.ended = true
    this.wake()
  }

  wake() {
    for (const waiter of this.waiters) waiter()
  }

  /** Resolves true once `test()` holds (checked on output, on end and every `pollMs`), false at `deadline`. */
  until(test, deadline, pollMs) {
    return new Promise((resolve) => {
      let timer
      const check = () => {
        if (test()) return finish(true)
        if (Date.now() >= deadline) return finish(false)
        clearTimeout(timer)
        timer = setTimeout(check, Math.max(1, Math.min(pollMs, deadline - Date.now())))
      }
      const finish = (value) => {
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve(value)
      }
      this.waiters.add(check)
      check()
    })
  }

  quiet(quietMs, deadline) {
    return this.until(() => this.ended || Date.now() - this.lastOutput >= quietMs, deadline, quietMs)
  }

  text(text, deadline) {
    return this.until(() => this.session.screen().lines.join('\n').includes(text), deadline, 50)
  }
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
    parsed = parseArgs(args)
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
  await watch.quiet(options.quietMs, deadline)
  for (const step of steps) {
    if (step.keys !== undefined) {
      if (watch.ended) break
      // Arrow keys follow the program's cursor-key mode (DECCKM), as a real terminal's do.
      const appCursor = session.snapshot().includes('\x1b[?1h')
      session.write(parseKeys(step.keys, appCursor))
      watch.lastOutput = Date.now()
      await watch.quiet(options.quietMs, deadline)
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

module.exports = { main, parseKeys, parseArgs }
