// Reproducible synthetic terminal stream for the terminal benchmarks: what a busy session looks like
// (plain log lines, SGR 16/256/truecolour runs, cursor addressing, erase, scroll regions, wide characters
// and full-screen redraws on the alternate screen), driven by a fixed-seed xorshift generator so every run
// and every contender parse exactly the same bytes.

/** Returns a Buffer of about `size` bytes for a `cols`×`rows` terminal, the same for the same arguments. */
export function generateStream({ size = 8 << 20, cols = 120, rows = 40, seed = 0x5eed } = {}) {
  const rand = randomBelow(seed)
  const words = ['build', 'cargo', 'error', 'warning:', 'ok', 'test', 'running', 'finished', 'src/lib.rs', '→', '✓', '日本語', 'λ', 'emoji🙂', 'done']
  const word = () => words[rand(words.length)]
  const sgr = () => {
    switch (rand(4)) {
      case 0: return `\x1b[${30 + rand(8)}m`
      case 1: return `\x1b[1;38;5;${rand(256)}m`
      case 2: return `\x1b[38;2;${rand(256)};${rand(256)};${rand(256)};48;2;${rand(256)};${rand(256)};${rand(256)}m`
      default: return '\x1b[0m'
    }
  }
  const parts = []
  let length = 0
  const push = (s) => { parts.push(s); length += Buffer.byteLength(s) }
  while (length < size) {
    const kind = rand(100)
    if (kind < 55) {
      // log line with a few coloured words
      let line = ''
      const n = 3 + rand(12)
      for (let i = 0; i < n; i++) line += (rand(3) === 0 ? sgr() : '') + word() + ' '
      push(line + '\x1b[0m\r\n')
    } else if (kind < 75) {
      // status line rewritten in place
      push(`\r\x1b[2K${sgr()}[${rand(100)}%] ${word()} ${word()}\x1b[0m`)
      push('\r\n')
    } else if (kind < 90) {
      // cursor addressing and erase
      push(`\x1b[${1 + rand(rows)};${1 + rand(cols)}H${sgr()}${word()}\x1b[K\x1b[0m\x1b[${rows};1H\r\n`)
    } else if (kind < 97) {
      // scroll region work
      push(`\x1b[${2 + rand(5)};${rows - rand(5)}r\x1b[${rows - 5};1H${word()}\n${word()}\x1bM\x1b[r\x1b[${rows};1H\r\n`)
    } else {
      // full-screen redraw on the alternate screen (like top or vim), then back
      let screen = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J'
      for (let r = 1; r <= rows; r++) {
        screen += `\x1b[${r};1H${sgr()}`
        let line = ''
        while (line.length < cols - 12) line += word() + ' '
        screen += line + '\x1b[0m'
      }
      push(screen + '\x1b[?25h\x1b[?1049l')
    }
  }
  return Buffer.from(parts.join(''))
}

/**
 * A Buffer of about `size` bytes dense in escape sequences, the same for the same arguments: every
 * word of a log line in its own colour (16, 256 or truecolour, foreground and background), `\r`
 * progress bars redrawn a step at a time, relative cursor moves with erases in line and display,
 * and alternate-screen redraws inside scroll regions that scroll up and down, with wide characters
 * (CJK, emoji) throughout.
 */
export function generateEscapeHeavyStream({ size = 8 << 20, cols = 120, rows = 40, seed = 0xe5c } = {}) {
  const rand = randomBelow(seed)
  const words = ['build', 'error', 'warn', 'ok', '日本語', '漢字テスト', '🙂', '✓', 'λx', 'src/main.rs:42', '한국어', '→']
  const word = () => words[rand(words.length)]
  const colour = () => {
    switch (rand(5)) {
      case 0: return `\x1b[${30 + rand(8)};${40 + rand(8)}m`
      case 1: return `\x1b[${90 + rand(8)}m`
      case 2: return `\x1b[38;5;${rand(256)};48;5;${rand(256)}m`
      case 3: return `\x1b[1;3;4;38;2;${rand(256)};${rand(256)};${rand(256)}m`
      default: return `\x1b[0;2;7m`
    }
  }
  const parts = []
  let length = 0
  const push = (s) => { parts.push(s); length += Buffer.byteLength(s) }
  while (length < size) {
    const kind = rand(100)
    if (kind < 40) {
      let line = ''
      for (let i = 3 + rand(10); i > 0; i--) line += `${colour()}${word()}\x1b[0m `
      push(`${line}\x1b[K\r\n`)
    } else if (kind < 65) {
      // a progress bar drawn step by step on one line
      const steps = 4 + rand(12)
      for (let step = 1; step <= steps; step++) {
        const done = Math.floor((step / steps) * 30)
        push(`\r${colour()}[${'█'.repeat(done)}${' '.repeat(30 - done)}]\x1b[0m ${Math.floor((step / steps) * 100)}% ${word()}\x1b[K`)
      }
      push('\r\n')
    } else if (kind < 85) {
      // relative moves and erases, as a line editor or a test runner's live summary does
      push(`\x1b[${1 + rand(5)}A\x1b[${1 + rand(40)}C${colour()}${word()}\x1b[0m\x1b[${rand(3)}K\x1b[${1 + rand(10)}D\x1b[1P\x1b[2@${word()}\x1b[${1 + rand(5)}B\r\x1b[J\n`)
    } else {
      // a full-screen program: alternate screen, a scroll region scrolled both ways, status lines
      const top = 2 + rand(4)
      const bottom = rows - 1 - rand(4)
      let screen = `\x1b[?1049h\x1b[H\x1b[2J\x1b[${top};${bottom}r`
      for (let r = top; r <= bottom; r++) screen += `\x1b[${r};1H${colour()}${word()} ${word()} ${word()}\x1b[0m\x1b[K`
      for (let i = 0; i < 6; i++) {
        screen += rand(2) ? `\x1b[${bottom};1H\n${colour()}${word()}\x1b[0m` : `\x1b[${top};1H\x1bM${colour()}${word()}\x1b[0m`
        screen += `\x1b[${1 + rand(3)}S\x1b[${1 + rand(3)}T`
      }
      screen += `\x1b[r\x1b[1;1H${colour()}${'─'.repeat(cols - 1)}\x1b[0m\x1b[${rows};1H${colour()}-- INSERT --\x1b[0m\x1b[?1049l`
      push(screen)
    }
  }
  return Buffer.from(parts.join(''))
}

/** About `size` bytes of plain text lines (ASCII words, `\r\n`), the same for the same arguments. */
export function generatePlainText({ size = 8 << 20, seed = 0x7e47 } = {}) {
  const rand = randomBelow(seed)
  const words = ['the', 'build', 'finished', 'in', 'seconds', 'with', 'no', 'warnings', 'compiling', 'crate', 'test', 'passed']
  const lines = []
  let length = 0
  while (length < size) {
    let line = ''
    for (let i = 4 + rand(14); i > 0; i--) line += `${words[rand(words.length)]} `
    lines.push(`${line}\r\n`)
    length += line.length + 2
  }
  return Buffer.from(lines.join(''))
}

/** A deterministic source of integers below `n` (xorshift32), the same sequence for the same seed. */
function randomBelow(seed) {
  let state = seed >>> 0 || 1
  return (n) => {
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state % n
  }
}
