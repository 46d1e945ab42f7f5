'use strict'
// The files the page needs, all served from the installed packages (no CDN: the page works
// offline): the page itself and its script, and xterm.js with its fit addon and stylesheet,
// found with require.resolve wherever npm installed them. Read once, when a server starts.
const { readFile } = require('node:fs/promises')
const path = require('node:path')

const page = (name) => path.join(__dirname, '..', 'page', name)

const FILES = {
  '/': { file: page('index.html'), type: 'text/html; charset=utf-8' },
  '/client.js': { file: page('client.js'), type: 'text/javascript; charset=utf-8' },
  '/page.css': { file: page('page.css'), type: 'text/css; charset=utf-8' },
  '/xterm.js': { file: require.resolve('@xterm/xterm/lib/xterm.js'), type: 'text/javascript; charset=utf-8' },
  '/xterm.css': { file: require.resolve('@xterm/xterm/css/xterm.css'), type: 'text/css; charset=utf-8' },
  '/addon-fit.js': { file: require.resolve('@xterm/addon-fit/lib/addon-fit.js'), type: 'text/javascript; charset=utf-8' },
}

/** Every asset by URL path: `{ body: Buffer, type }`. */
async function loadAssets() {
  const entries = await Promise.all(
    Object.entries(FILES).map(async ([url, { file, type }]) => [url, { body: await readFile(file), type }]),
  )
  return new Map(entries)
}

module.exports = { loadAssets }
