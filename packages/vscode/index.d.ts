import type { Shell } from '../../index.js'

/** A VS Code `Disposable`. */
export interface Disposable {
  dispose(): void
}

/** A VS Code `Event<T>`: subscribe with a listener, unsubscribe with the returned Disposable. */
export type Event<T> = (listener: (value: T) => unknown, thisArgs?: unknown, disposables?: Disposable[]) => Disposable

/** VS Code's `TerminalDimensions`. */
export interface TerminalDimensions {
  readonly columns: number
  readonly rows: number
}

export interface ShellPseudoterminalOptions {
  /** The terminal's name, default "Shellwright" (fired through `onDidChangeName` on open). */
  name?: string
  /** Lines of each transcript replayed on open, as `ShellMirror`'s option (default 1000). */
  scrollback?: number
}

/** An object of VS Code's `Pseudoterminal` shape, with no dependency on the `vscode` module. */
export interface ShellPseudoterminal {
  readonly name: string
  /** The terminal's output: shell-integration marks (OSC 633), prompts, commands and their output. */
  readonly onDidWrite: Event<string>
  /** Fires once when the view is closed. */
  readonly onDidClose: Event<void | number>
  readonly onDidChangeName: Event<string>
  /** Starts the view: the history is replayed, then the runs follow live. */
  open(initialDimensions: TerminalDimensions | undefined): void
  /** Stops the view (the Shell goes on) and fires `onDidClose`. */
  close(): void
  /** Ctrl+C cancels the running command; anything else is ignored (the view is read-only). */
  handleInput(data: string): void
  setDimensions(dimensions: TerminalDimensions): void
}

/**
 * A read-only terminal showing `shell`'s runs, for `window.createTerminal({ name, pty })`.
 *
 * ```ts
 * import * as vscode from 'vscode'
 * import { Shell } from 'shellwright'
 * import { createShellPseudoterminal } from 'shellwright/vscode'
 *
 * const shell = new Shell()
 * const pty = createShellPseudoterminal(shell, { name: 'Agent shell' })
 * vscode.window.createTerminal({ name: pty.name, pty }).show()
 * await shell.run({ command: 'npm test' })
 * ```
 */
export declare function createShellPseudoterminal(shell: Shell, options?: ShellPseudoterminalOptions): ShellPseudoterminal
