'use strict'
// `shellwright mcp --serve PORT`: lets a person watch what the agent does, in a browser. The shell's
// runs are served read-only (a ShellMirror) on PORT; each TUI session gets a web terminal of its
// own on a free port, which the person can type into to take over. All share one token.
// shellwright/web is loaded only here, when serving: the server without --serve needs none of the
// web terminal's packages.
function createTerminalServer(options) {
  return require('../../web/index.js').createTerminalServer(options)
}

class WatchServers {
  /** Serves `shell`'s mirror on `port` of `host` (default loopback); resolves once it listens. */
  static async start(shell, { port, host }) {
    const mirror = await createTerminalServer({ mirror: shell, port, host })
    return new WatchServers(mirror, host)
  }

  constructor(mirror, host) {
    this.mirror = mirror
    this.host = host
    this.sessions = new Map()
  }

  get shellUrl() {
    return this.mirror.url
  }

  /** Serves a TUI session; resolves with its page's URL. */
  async add(session) {
    const server = await createTerminalServer({ session: session.pty, port: 0, host: this.host, token: this.mirror.token })
    this.sessions.set(session.id, server)
    return server.url
  }

  /** Stops serving a session (its viewers are disconnected; the session itself is not touched). */
  async remove(id) {
    const server = this.sessions.get(id)
    this.sessions.delete(id)
    await server?.close()
  }

  async close() {
    const servers = [this.mirror, ...this.sessions.values()]
    this.sessions.clear()
    await Promise.all(servers.map((server) => server.close()))
  }
}

module.exports = { WatchServers }
