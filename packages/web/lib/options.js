'use strict'
// Checks createTerminalServer's options. A wrong type is a TypeError (ERR_INVALID_ARG_TYPE), a
// value out of range a RangeError (ERR_INVALID_ARG_VALUE); every message names the field, with the
// wording the addon uses for its own options (`options.port must be an integer from 0 to 65535`).
const { randomBytes } = require('node:crypto')
const { PtySession, Shell } = require('../../../index.js')

/** Tokens travel in URLs and cookies: characters that need no escaping in either. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~-]{8,256}$/

function typeError(message) {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' })
}

function rangeError(message) {
  return Object.assign(new RangeError(message), { code: 'ERR_INVALID_ARG_VALUE' })
}

/** `options[field]` when it has `type` (`undefined` and `null` count as absent). */
function optional(options, field, type) {
  const value = options[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== type) throw typeError(`options.${field} must be a ${type}`)
  return value
}

function readPort(options) {
  const port = optional(options, 'port', 'number')
  if (port === undefined) return 0
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw rangeError('options.port must be an integer from 0 to 65535')
  }
  return port
}

function readToken(options) {
  const token = optional(options, 'token', 'string')
  if (token === undefined) return randomBytes(16).toString('hex')
  if (!TOKEN_PATTERN.test(token)) {
    throw rangeError('options.token must be 8 to 256 characters from A-Z a-z 0-9 . _ ~ -')
  }
  return token
}

/** What to show: exactly one of `session`, `command` and `mirror`; none means the user's shell. */
function readSource(options) {
  const given = ['session', 'command', 'mirror'].filter((field) => options[field] != null)
  if (given.length > 1) {
    throw rangeError(`options.${given[0]} and options.${given[1]} cannot be used together: give one`)
  }
  if (options.session != null) {
    if (!(options.session instanceof PtySession)) throw typeError('options.session must be a PtySession')
    return { session: options.session }
  }
  if (options.mirror != null) {
    if (!(options.mirror instanceof Shell)) throw typeError('options.mirror must be a Shell')
    return { mirror: options.mirror }
  }
  const command = optional(options, 'command', 'string')
  if (command === '') throw rangeError('options.command must not be empty')
  return { command }
}

/** The checked options with their defaults filled in. */
function readServerOptions(options) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object') throw typeError('options must be an object')
  const host = optional(options, 'host', 'string') ?? '127.0.0.1'
  if (host === '') throw rangeError('options.host must not be empty')
  return {
    ...readSource(options),
    host,
    port: readPort(options),
    token: readToken(options),
    // A mirror has nothing to type into: it is always read-only.
    readOnly: (optional(options, 'readOnly', 'boolean') ?? false) || options.mirror != null,
  }
}

module.exports = { readServerOptions }
