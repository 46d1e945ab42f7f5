'use strict'
// Key specs, as the CLI's `--keys` and the MCP server's `tui_send` take them: literal text with key
// names in angle brackets (`ihello<esc>:wq<enter>`), turned into the bytes a terminal sends.
const { encodeKey } = require('../../index.js')

/** Names the CLI accepts besides key ids (`<bs>`, `<pgdn>`, `<c-d>`, `<m-x>`, `<lt>`). */
const NAME_ALIASES = { bs: 'backspace', del: 'delete', pgup: 'pageUp', pgdn: 'pageDown', lt: '<' }
const MODIFIER_ALIASES = { c: 'ctrl', m: 'alt', meta: 'alt' }

/** The bytes of one key name (`up`, `ctrl+c`, `c-d`, `alt+x`), from the addon's key tables. */
function keyBytes(name, applicationCursorKeys) {
  const parts = name.split(/[+-](?=.)/)
  const key = parts.pop()
  const modifiers = parts.map((word) => MODIFIER_ALIASES[word.toLowerCase()] ?? word)
  const id = [...modifiers, NAME_ALIASES[key.toLowerCase()] ?? key].join('+')
  try {
    return encodeKey(id, { applicationCursorKeys })
  } catch {
    throw new Error(`unknown key <${name}>`)
  }
}

/** Splits SPEC into literal text and `<key>` names and returns the bytes to type. */
function parseKeys(spec, applicationCursorKeys = false) {
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
    out += keyBytes(spec.slice(open + 1, close), applicationCursorKeys)
    i = close + 1
  }
  return out
}

module.exports = { parseKeys }
