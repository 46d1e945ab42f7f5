'use strict'
// `shellwright serve [--host H] [--port P] [--read-only] [-- command…]`: starts the user's shell (or
// the command) in a pseudo-terminal and serves it to browsers (shellwright/web), printing the URL
// with its token. Ends when the program exits, or on Ctrl+C / SIGTERM, which kill it.
const { parseArgs } = require('node:util')
const { createTerminalServer } = require('../../web/index.js')

const HELP = `usage: shellwright serve [--host H] [--port P] [--read-only] [-- command…]

Starts your shell ($SHELL, interactive) or <command> (through sh -c) in a pseudo-terminal and
serves it as a web page; open the printed URL (it holds the access token) in a browser. Several
browsers may watch at once; the terminal takes the size of the one that typed last.

  --host H      address to listen on (default 127.0.0.1: this machine only)
  --port P      port to listen on (default: any free port)
  --read-only   browsers watch only: their keys are ignored

Exit status: the program's when it ends, 0 after Ctrl+C or SIGTERM (which kill it), 1 when the
server or the program cannot start, 2 for bad arguments.`

function parseCommandLine(args) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'read-only': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const port = values.port === undefined ? 0 : Number(values.port)
  if (values.port === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535, got '${values.port}'`)
  }
  const command = positionals.length > 0 ? positionals.join(' ') : undefined
  return { help: values.help, host: values.host, port, readOnly: values['read-only'] ?? false, command }
}

/** Resolves with the name of the first of `signals` the process receives, and stops listening for them. */
function firstSignal(signals) {
  let stop
  const received = new Promise((resolve) => {
    const handlers = signals.map((signal) => [signal, () => resolve(signal)])
    for (const [signal, handler] of handlers) process.on(signal, handler)
    stop = () => handlers.forEach(([signal, handler]) => process.off(signal, handler))
  })
  return { received, stop }
}

async function main(args) {
  let options
  try {
    options = parseCommandLine(args)
  } catch (error) {
    process.stderr.write(`shellwright serve: ${error.message}\n${HELP}\n`)
    return 2
  }
  if (options.help) {
    process.stdout.write(HELP + '\n')
    return 0
  }

  const signals = firstSignal(['SIGINT', 'SIGTERM'])
  let server
  try {
    // The server starts the program and owns it: the pages are told how it ended before it closes.
    server = await createTerminalServer({
      command: options.command,
      host: options.host,
      port: options.port,
      readOnly: options.readOnly,
    })
  } catch (error) {
    signals.stop()
    process.stderr.write(`shellwright serve: ${error.message}\n`)
    return 1
  }
  process.stdout.write(`${server.url}\n`)
  process.stderr.write('Serving the terminal at the URL above; Ctrl+C stops.\n')

  const exited = server.exited.then((result) => ({ result }), (error) => ({ error }))
  const ended = await Promise.race([exited, signals.received])
  signals.stop()
  // Closing kills the program when a signal came first.
  await server.close()
  if (typeof ended === 'string') return 0
  if (ended.error) {
    process.stderr.write(`shellwright serve: ${ended.error.message}\n`)
    return 1
  }
  return ended.result.exitCode ?? 1
}

module.exports = { main }
