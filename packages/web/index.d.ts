// Types of `shellwright/web`, the web terminal server.
import type { PtyResult, PtySession, Shell } from '../../index.js'

export interface TerminalServerOptions {
  /** An existing session to show (never killed by `close()`). Give at most one of `session`, `command`, `mirror`. */
  session?: PtySession
  /**
   * A command line to start in a new session (through `sh -c`), killed by `close()`. Without `session` and
   * `command`, the server starts the user's shell (`$SHELL`, else `/bin/sh`), interactive.
   */
  command?: string
  /**
   * A Shell to show read-only through a `ShellMirror`: each page replays its history, then follows its runs as they
   * happen. Always read-only; `close()` leaves the Shell alone.
   */
  mirror?: Shell
  /** Address to listen on, default "127.0.0.1" (loopback only). */
  host?: string
  /** Port to listen on, default 0 (any free port). */
  port?: number
  /**
   * The secret every request must present (`?token=` or the cookie the page sets), default 32 random hex
   * characters; 8 to 256 characters from `A-Z a-z 0-9 . _ ~ -`.
   */
  token?: string
  /** Viewers watch only: their keys and window sizes are dropped. Default false. */
  readOnly?: boolean
}

export interface TerminalServer {
  /** The page's address, token included: `http://127.0.0.1:PORT/?token=TOKEN`. */
  readonly url: string
  readonly token: string
  /**
   * For a server that started its program (`command`, or the user's shell): settles as the run does, once every
   * page has been told how it ended. `undefined` when the server was given a `session` or a `mirror`.
   */
  readonly exited: Promise<PtyResult> | undefined
  /**
   * Disconnects every viewer (a page told that the program ended gets a clean close and stays on its last screen;
   * others reconnect by themselves), stops listening and kills the session the server started (not one it was
   * given); resolves once all of it is done.
   */
  close(): Promise<void>
}

/**
 * Serves a terminal in the browser: a page with xterm.js (served from the installed package, no CDN) that is
 * painted from the session's snapshot — the screen first, the scrollback after — and then follows its output;
 * keys and the window's size go back to the session. Several pages may watch one session; the terminal takes the
 * size of the page that typed last. When the program ends every page says how ("exited with 3").
 * Rejects with a `code`d error for bad options (`ERR_INVALID_ARG_TYPE`, `ERR_INVALID_ARG_VALUE`) and with the
 * listen error (e.g. `EADDRINUSE`).
 *
 * @example
 * import { createTerminalServer } from 'shellwright/web'
 * const server = await createTerminalServer({ command: 'htop', readOnly: true })
 * console.log(`watch it at ${server.url}`)
 * await server.close()
 */
export function createTerminalServer(options?: TerminalServerOptions): Promise<TerminalServer>
