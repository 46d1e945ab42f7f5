'use strict'
// `shellwright keys [--kitty]`: puts the terminal in raw mode and prints, for each key pressed,
// its key id (parseKey) and its bytes, escaped. With --kitty it pushes the Kitty keyboard
// protocol's "disambiguate" flags (CSI > 1 u) and pops them (CSI < u) on exit. Ctrl+C twice in a
// row quits. The terminal is restored on every exit path: quit, signals, exceptions, exit.
const { parseArgs } = require('node:util')
const { parseKey, matchesKey } = require('../../../index.js')

const HELP = `usage: shellwright keys [--kitty]

Prints the id and the bytes of each key pressed. Press Ctrl+C twice to quit.
  --kitty   enable the Kitty keyboard protocol (CSI > 1 u) while running`

const KITTY_PUSH = '\x1b[>1u'
const KITTY_POP = '\x1b[<u'
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }

async function main(args) {
  let values
  try {
    ;({ values } = parseArgs({ args, options: { kitty: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }))
  } catch (error) {
    process.stderr.write(`shellwright keys: ${error.message}\n${HELP}\n`)
    return 2
  }
  if (values.help) {
    process.stdout.write(HELP + '\n')
    return 0
  }
  const { stdin, stdout } = process
  if (!stdin.isTTY) {
    process.stderr.write('shellwright keys: stdin is not a terminal\n')
    return 2
  }
  return run(stdin, stdout, Boolean(values.kitty))
}

/** Reads keys until Ctrl+C twice, a signal or an error; resolves to the exit code. */
function run(stdin, stdout, kitty) {
  return new Promise((resolve, reject) => {
    let restored = false
    let pendingQuit = false

    const restore = () => {
      if (restored) return
      restored = true
      stdin.off('data', onData)
      for (const signal of Object.keys(SIGNAL_EXIT_CODES)) process.off(signal, onSignal)
      process.off('exit', restore)
      if (kitty) stdout.write(KITTY_POP)
      stdin.setRawMode(false)
      stdin.pause()
    }
    const finish = (code) => {
      restore()
      resolve(code)
    }
    const onSignal = (signal) => {
      restore()
      stdout.write(`\r\nshellwright keys: ${signal}\r\n`)
      resolve(SIGNAL_EXIT_CODES[signal])
    }
    const onData = (chunk) => {
      try {
        for (const sequence of splitKeys(chunk.toString('utf8'), kitty)) {
          const id = parseKey(sequence, kitty)
          stdout.write(`${(id ?? '(not a key)').padEnd(28)} ${escapeBytes(sequence)}\r\n`)
          if (!matchesKey(sequence, 'ctrl+c', kitty)) {
            pendingQuit = false
          } else if (pendingQuit) {
            return finish(0)
          } else {
            pendingQuit = true
            stdout.write('(press Ctrl+C again to quit)\r\n')
          }
        }
      } catch (error) {
        restore()
        reject(error)
      }
    }

    for (const signal of Object.keys(SIGNAL_EXIT_CODES)) process.on(signal, onSignal)
    // Last resort: a process.exit() elsewhere still leaves the terminal usable.
    process.on('exit', restore)
    try {
      stdin.setRawMode(true)
      if (kitty) stdout.write(KITTY_PUSH)
      stdout.write(`Press keys to see their ids${kitty ? ' (Kitty keyboard protocol on)' : ''}. Ctrl+C twice quits.\r\n`)
      stdin.on('data', onData)
      stdin.resume()
    } catch (error) {
      restore()
      reject(error)
    }
  })
}

/**
 * Splits one read into key sequences. A read is usually exactly one key; when it is not (a paste,
 * keys typed faster than they are read) it is cut at escape-sequence boundaries (ECMA-48: CSI
 * parameters 0x30–0x3F, intermediates 0x20–0x2F, final 0x40–0x7E; SS3 + one byte; ESC + one key).
 */
function splitKeys(text, kitty) {
  if (parseKey(text, kitty) !== null) return [text]
  const keys = []
  let i = 0
  while (i < text.length) {
    const end = sequenceEnd(text, i)
    keys.push(text.slice(i, end))
    i = end
  }
  return keys
}

function sequenceEnd(text, start) {
  const at = (i) => (i < text.length ? text.charCodeAt(i) : -1)
  if (at(start) !== 0x1b) return start + (text.codePointAt(start) > 0xffff ? 2 : 1)
  let i = start + 1
  if (at(i) === 0x1b && (at(i + 1) === 0x5b || at(i + 1) === 0x4f)) i++ // ESC ESC [ …: alt + sequence
  if (at(i) === 0x4f) return Math.min(text.length, i + 2) // SS3 X
  if (at(i) !== 0x5b) return i < text.length ? i + 1 : i // ESC + one character
  i++
  if (at(i) === 0x5b) return Math.min(text.length, i + 2) // Linux console ESC [ [ A
  while (at(i) >= 0x30 && at(i) <= 0x3f) i++
  while (at(i) >= 0x20 && at(i) <= 0x2f) i++
  return at(i) >= 0x40 && at(i) <= 0x7e ? i + 1 : i
}

/** The bytes of a sequence as a readable string: printable ASCII as is, the rest escaped. */
function escapeBytes(sequence) {
  let out = ''
  for (const byte of Buffer.from(sequence, 'utf8')) {
    if (byte === 0x5c) out += '\\\\'
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte)
    else out += `\\x${byte.toString(16).padStart(2, '0')}`
  }
  return out
}

module.exports = { main, splitKeys, escapeBytes }
