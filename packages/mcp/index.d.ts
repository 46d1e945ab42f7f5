// Types of `shellwright/mcp`: an MCP server that gives an agent one persistent shell, commands it steps
// through and terminal programs.
// The SDK's CommonJS type files import an ES-module-only package, which strict CommonJS projects
// reject; its ES-module types work from either kind of project.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js' with { 'resolution-mode': 'import' }

import type { MinimizerOptions } from '../../index.js'

export interface McpServerOptions {
  /** The shell_run shell's output minimizer (`{ enabled: true }` condenses known programs' output). */
  minimizer?: MinimizerOptions
}

/** The bounds every tool result and wait keeps (see docs/mcp.md). */
export declare const LIMITS: {
  /** Running TUI sessions at once. */
  readonly maxSessions: number
  /** exec_command sessions at once. */
  readonly maxExecSessions: number
  /** Bytes of a shell_run or tui_exec transcript returned; longer ones lose their beginning. */
  readonly maxOutputBytes: number
  /** Bytes of an ANSI snapshot returned by tui_screen. */
  readonly maxSnapshotBytes: number
  /** Scrollback lines each TUI session keeps. */
  readonly scrollbackLines: number
  /** The longest wait for a program to go quiet. */
  readonly settleMs: number
}

/**
 * An MCP server with the tools shell_run, exec_command, write_stdin, tui_start, tui_send, tui_screen,
 * tui_wait_for, tui_exec, tui_resize, tui_kill and tui_list, ready to `connect()` to a transport. Every
 * result carries `structuredContent` matching the tool's `outputSchema`. Its `close()` also kills and
 * reaps every program it started; so does the client closing the connection.
 *
 * @example
 * import { createMcpServer } from 'shellwright/mcp'
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
 * await createMcpServer().connect(new StdioServerTransport())
 */
export declare function createMcpServer(options?: McpServerOptions): McpServer
