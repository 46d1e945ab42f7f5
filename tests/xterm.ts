// @xterm/headless as the reference terminal the tests compare ours with.
import { Terminal as XtermTerminal } from '@xterm/headless'

export type Xterm = InstanceType<typeof XtermTerminal>

export function xterm(cols: number, rows: number, scrollback = 10_000): Xterm {
  return new XtermTerminal({ cols, rows, scrollback, allowProposedApi: true })
}

export function xtermWrite(term: Xterm, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve))
}

/**
 * Every line of the xterm buffer (scrollback and screen), trailing blanks trimmed: a snapshot
 * leaves out blanks at the end of a row (the emulator does not tell a written space from an empty
 * cell), so only the text is compared.
 */
export function xtermLines(term: Xterm): string[] {
  const buffer = term.buffer.active
  const lines: string[] = []
  for (let i = 0; i < buffer.length; i++) lines.push((buffer.getLine(i)?.translateToString(true) ?? '').trimEnd())
  return lines
}
