// Reproducible synthetic terminal stream for the terminal benchmarks: what a busy session looks like
// (plain log lines, SGR 16/256/truecolour runs, cursor addressing, erase, scroll regions, wide characters
// and full-screen redraws on the alternate screen), driven by a fixed-seed xorshift generator so every run
// and every contender parse exactly the same bytes.

/** Returns a Buffer of about `size` bytes for a `cols`×`rows` terminal, the same for the same arguments. */
export function generateStream({ size = 8 << 20, cols = 120, rows = 40, seed = 0x5eed } = {}) {
  let state = seed >>> 0 || 1
  const rand = (n) => {
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state % n
  }
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
