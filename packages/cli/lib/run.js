'use strict'
// `shellwright run [--cwd DIR] [--timeout MS] [--] <command…>`: runs a command in Shellwright's
// in-process shell, streams its output, and exits with its exit code (124 after a timeout, 130
// after Ctrl+C, which cancels the run and everything it started).
const { parseArgs } = require('node:util')
const { executeShell } = require('../../../index.js')

const HELP = `usage: shellwright run [--cwd DIR] [--timeout MS] [--] <command…>

Runs <command> in Shellwright's bash-compatible shell and streams its output.
Exit status: the command's, 124 after --timeout, 130 after Ctrl+C.`

async function main(args) {
  let parsed
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { cwd: { type: 'string' }, timeout: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (error) {
    process.stderr.write(`shellwright run: ${error.message}\n${HELP}\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help) {
    process.stdout.write(HELP + '\n')
    return 0
  }
  if (positionals.length === 0) {
    process.stderr.write(`shellwright run: missing command\n${HELP}\n`)
    return 2
  }
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout)
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
    process.stderr.write(`shellwright run: --timeout must be a number of milliseconds, got '${values.timeout}'\n`)
    return 2
  }

  const controller = new AbortController()
  const onSigint = () => controller.abort()
  process.on('SIGINT', onSigint)
  try {
    const result = await executeShell(
      { command: positionals.join(' '), cwd: values.cwd, timeoutMs, signal: controller.signal },
      (chunk) => process.stdout.write(chunk),
    )
    if (result.timedOut) {
      process.stderr.write(`shellwright run: timed out after ${timeoutMs} ms\n`)
      return 124
    }
    if (result.cancelled) return 130
    return result.exitCode ?? 1
  } catch (error) {
    process.stderr.write(`shellwright run: ${error.message}\n`)
    return 1
  } finally {
    process.off('SIGINT', onSigint)
  }
}

module.exports = { main }
