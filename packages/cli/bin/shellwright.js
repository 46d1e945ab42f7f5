#!/usr/bin/env node
'use strict'
// The `shellwright` command: dispatches `shellwright <subcommand> …` to packages/cli/lib/<subcommand>.js,
// each of which exports `main(args: string[]): Promise<number>` resolving to the process exit code.
const path = require('node:path')
const fs = require('node:fs')

const USAGE = `usage: shellwright <command> [options]

commands:
  run <command>        run a command in Shellwright's shell and stream its output
  exec -- <command>    run a command as an agent's exec_command does, until it exits or waits for input
  keys [--kitty]       print the id and bytes of each key pressed
  tui -- <command>     run a TUI in a pseudo-terminal and print its screen
  mcp                  serve the shell and terminal tools to an MCP client over stdio
                       (needs @modelcontextprotocol/sdk and zod installed next to shellwright)
  serve [-- <command>] serve your shell (or a command) as a web terminal
                       (needs ws, @xterm/xterm and @xterm/addon-fit)

Run 'shellwright <command> --help' for a command's options.`

async function dispatch(argv) {
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(USAGE + '\n')
    return name ? 0 : 2
  }
  if (name === '--version') {
    process.stdout.write(`${require('../../../package.json').version}\n`)
    return 0
  }
  const file = path.join(__dirname, '..', 'lib', `${name}.js`)
  if (!/^[a-z]+$/.test(name) || !fs.existsSync(file)) {
    process.stderr.write(`shellwright: unknown command '${name}'\n${USAGE}\n`)
    return 2
  }
  return require(file).main(rest)
}

dispatch(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err) => {
    const message = String(err && err.message ? err.message : err)
    // The package's own load errors (no addon, a missing optional package) name it already.
    process.stderr.write(/^shellwright\b/.test(message) ? `${message}\n` : `shellwright: ${message}\n`)
    process.exitCode = 1
  },
)
