// The key parser's exports from JS: exact ids, booleans and Kitty fields.
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as sw from '../index.js'
import { expectRangeError, expectTypeError, waitUntil } from './helpers.js'

describe('parseKey', () => {
  it('answers a sequence seen before as the first time, per Kitty mode, also past the memo it keeps', () => {
    const sequences = ['\x1ba', '\x1b[1;5A', 'hello', '\x1b[99;5:3u', '\x1b[97;5u']
    const first = sequences.flatMap((s) => [sw.parseKey(s, false), sw.parseKey(s, true)])
    expect(first).toEqual(['alt+a', null, 'ctrl+up', 'ctrl+up', null, null, null, null, 'ctrl+a', 'ctrl+a'])
    // More distinct sequences than the memo keeps, then the first ones again.
    const distinct = new Set<string | null>()
    for (let i = 0; i < 5000; i++) distinct.add(sw.parseKey(`\x1b[${0x4e00 + i};5u`, false))
    expect(distinct.size).toBe(5000)
    expect(sequences.flatMap((s) => [sw.parseKey(s, false), sw.parseKey(s, true)])).toEqual(first)
    expectTypeError(() => sw.parseKey(42 as unknown as string, false), 'data must be a string')
    expectTypeError(() => sw.parseKey('a', 'yes' as unknown as boolean), 'kittyProtocolActive must be a boolean')
  })

  const legacy: [string, string | null][] = [
    ['\r', 'enter'],
    ['\n', 'enter'],
    ['\t', 'tab'],
    ['\x7f', 'backspace'],
    ['\x08', 'backspace'],
    ['\x1b', 'escape'],
    ['\x00', 'ctrl+space'],
    ['\x03', 'ctrl+c'],
    ['\x1c', 'ctrl+\\'],
    [' ', 'space'],
    ['a', 'a'],
    ['A', 'A'],
    ['é', 'é'],
    ['\x1b[A', 'up'],
    ['\x1bOB', 'down'],
    ['\x1b[1;5C', 'ctrl+right'],
    ['\x1b[1;4D', 'shift+alt+left'],
    ['\x1b[5~', 'pageUp'],
    ['\x1b[6;2~', 'shift+pageDown'],
    ['\x1b[Z', 'shift+tab'],
    ['\x1b[[A', 'f1'],
    ['\x1b[a', 'shift+up'],
    ['\x1b[7^', 'ctrl+home'],
    ['\x1b[24;5~', 'ctrl+f12'],
    ['\x1b[27;5;109~', 'ctrl+m'],
    ['\x1ba', 'alt+a'],
    ['\x1bA', 'shift+alt+a'],
    ['\x1b\x01', 'ctrl+alt+a'],
    ['\x1b\x1b[A', 'alt+up'],
    ['\x1b[97;5u', 'ctrl+a'],
    ['\x1b[97;16u', 'shift+ctrl+alt+super+a'],
    ['\x1b[1089::99;5u', 'ctrl+c'],
    ['\x1b[57399;129u', '0'],
    ['\x1b[99;5:2u', 'ctrl+c'],
    ['\x1b[99;5:3u', null],
    ['\x1b[?1u', null],
    ['\x1b[200~', null],
    ['ab', null],
    ['', null],
    ['\ud800', null],
  ]
  it.each(legacy)('parseKey(%j, false) is %j', (data, id) => {
    expect(sw.parseKey(data, false)).toBe(id)
  })

  it('does not read ESC + printable as alt while the Kitty protocol is active', () => {
    expect(sw.parseKey('\x1ba', true)).toBe(null)
    expect(sw.parseKey('\x1b ', true)).toBe(null)
    expect(sw.parseKey('\x1bB', true)).toBe(null)
    expect(sw.parseKey('\x1bF', true)).toBe(null)
    expect(sw.parseKey('\x1b\r', true)).toBe('alt+enter')
    expect(sw.parseKey('\x1b[97;3u', true)).toBe('alt+a')
  })

  it('names an alt-prefixed Kitty capital as shift+alt, consistently with matchesKey', () => {
    expect(sw.parseKey('\x1b\x1b[82u', true)).toBe('shift+alt+r')
    expect(sw.matchesKey('\x1b\x1b[82u', sw.parseKey('\x1b\x1b[82u', true) ?? '', true)).toBe(true)
  })

  it('returns null for every malformed sequence it is fed', () => {
    for (const data of ['\x1b[1;', '\x1b[99999999999u', '\x1b[97;0u', '\x1b[97;5:9u', '\x1b]0;t\x07']) {
      expect(sw.parseKey(data, false)).toBe(null)
      expect(sw.parseKey(data, true)).toBe(null)
    }
  })
})

describe('matchesKey', () => {
  const rows: [string, string, boolean, boolean][] = [
    ['\x03', 'ctrl+c', false, true],
    ['\x03', 'CTRL+C', false, true],
    ['\x03', ' ctrl + c ', false, true],
    ['\x1b', 'esc', false, true],
    ['\r', 'return', false, true],
    ['+', 'plus', false, true],
    ['\x1b[43;5u', 'ctrl++', true, true],
    ['\x1bOP', 'F1', false, true],
    ['\x1b[1;5P', 'ctrl+f1', false, true],
    ['\x1b[15;5~', 'ctrl+f5', false, true],
    ['\x1b[24;5~', 'ctrl+f12', false, true],
    ['\x1b[1;5E', 'ctrl+f5', false, false],
    ['a', 'super+a', false, false],
    ['\x03', 'hyper+c', false, false],
    ['\r', 'ctrl+m', false, false],
    ['\t', 'ctrl+i', false, false],
    ['\x08', 'ctrl+h', false, false],
    ['\x1b', 'ctrl+[', false, false],
    ['\x1b[109;5u', 'ctrl+m', true, true],
    ['A', 'shift+a', false, true],
    ['\x1b[1;4A', 'alt+shift+up', false, true],
    // The id parseKey gives for an alt-prefixed Kitty capital matches its input.
    ['\x1b\x1b[82u', 'shift+alt+r', true, true],
    ['\x1b\x1b[82u', 'alt+R', true, false],
  ]
  it.each(rows)('matchesKey(%j, %j, %j) is %j', (data, id, kitty, want) => {
    expect(sw.matchesKey(data, id, kitty)).toBe(want)
  })
})

describe('parseKittySequence', () => {
  it('returns the raw fields', () => {
    expect(sw.parseKittySequence('\x1b[97u')).toStrictEqual({ codepoint: 97, modifier: 0 })
    expect(sw.parseKittySequence('\x1b[97:65;2u')).toStrictEqual({ codepoint: 97, shiftedKey: 65, modifier: 1 })
    expect(sw.parseKittySequence('\x1b[1089::99;5u')).toStrictEqual({ codepoint: 1089, baseLayoutKey: 99, modifier: 4 })
    expect(sw.parseKittySequence('\x1b[1089:1057:99;6:2u')).toStrictEqual({
      codepoint: 1089,
      shiftedKey: 1057,
      baseLayoutKey: 99,
      modifier: 5,
      eventType: sw.KeyEventType.Repeat,
    })
    // Caps-lock (64) and num-lock (128) bits are masked.
    expect(sw.parseKittySequence('\x1b[99;197:3u')).toStrictEqual({ codepoint: 99, modifier: 4, eventType: 3 })
    // Legacy-form keys carry Kitty's own numbers (up 57352, delete 57349, F1 57364).
    expect(sw.parseKittySequence('\x1b[1;5A')).toStrictEqual({ codepoint: 57352, modifier: 4 })
    expect(sw.parseKittySequence('\x1b[3;2:1~')).toStrictEqual({ codepoint: 57349, modifier: 1, eventType: 1 })
    expect(sw.parseKittySequence('\x1b[1;5P')).toStrictEqual({ codepoint: 57364, modifier: 4 })
  })

  it('returns null for anything else', () => {
    for (const data of ['a', '\x03', '\x1bOA', '\x1b[27;5;99~', '\x1b[?1u', '\x1b[u', '\x1b[97;0u', '\x1b[55296u', '']) {
      expect(sw.parseKittySequence(data)).toBe(null)
    }
  })
})

describe('matchesKittySequence', () => {
  it('compares codepoint and modifier bits', () => {
    expect(sw.matchesKittySequence('\x1b[99;5u', 99, 4)).toBe(true)
    expect(sw.matchesKittySequence('\x1b[99;133u', 99, 4)).toBe(true)
    expect(sw.matchesKittySequence('\x1b[99;5:2u', 99, 4)).toBe(true)
    expect(sw.matchesKittySequence('\x1b[99;5:3u', 99, 4)).toBe(false)
    expect(sw.matchesKittySequence('\x1b[99;5u', 99, 0)).toBe(false)
    expect(sw.matchesKittySequence('\x1b[1089::99;5u', 99, 4)).toBe(true)
    expect(sw.matchesKittySequence('\x1b[1;5A', 57352, 4)).toBe(true)
    expect(sw.matchesKittySequence('\x03', 99, 4)).toBe(false)
    expect(sw.matchesKittySequence('\x1b[99;5u', -1, 4)).toBe(false)
    expect(sw.matchesKittySequence('\x1b[99;5u', 99.5, 4)).toBe(false)
    // A finite number that is no code point matches nothing; NaN is a bad argument everywhere.
    expectRangeError(() => sw.matchesKittySequence('\x1b[99;5u', Number.NaN, 4), 'expectedCodepoint must be a finite number')
  })
})

describe('matchesLegacySequence', () => {
  it('matches the fixed legacy sequences of a key', () => {
    expect(sw.matchesLegacySequence('\x1b[A', 'up')).toBe(true)
    expect(sw.matchesLegacySequence('\x1bOA', 'up')).toBe(true)
    expect(sw.matchesLegacySequence('\x1bOa', 'ctrl+up')).toBe(true)
    expect(sw.matchesLegacySequence('\x1b[[A', 'f1')).toBe(true)
    expect(sw.matchesLegacySequence('\r', 'enter')).toBe(true)
    expect(sw.matchesLegacySequence('\x1b[1;5A', 'ctrl+up')).toBe(false)
    expect(sw.matchesLegacySequence('\x1b[A', 'down')).toBe(false)
    expect(sw.matchesLegacySequence('\x1b[A', 'bogus')).toBe(false)
  })
})

describe('KeyEventType', () => {
  it('has the wire values', () => {
    expect(sw.KeyEventType.Press).toBe(1)
    expect(sw.KeyEventType.Repeat).toBe(2)
    expect(sw.KeyEventType.Release).toBe(3)
  })
})

describe('argument types', () => {
  it('throws a TypeError naming the argument', () => {
    const untyped = sw as unknown as Record<string, (...args: unknown[]) => unknown>
    expectTypeError(() => untyped.parseKey(5, false), 'data must be a string')
    expectTypeError(() => untyped.parseKey('a', 'yes'), 'kittyProtocolActive must be a boolean')
    expectTypeError(() => untyped.parseKey('a'), 'kittyProtocolActive must be a boolean')
    expectTypeError(() => untyped.matchesKey('a', null, false), 'keyId must be a string')
    expectTypeError(() => untyped.parseKittySequence(undefined), 'data must be a string')
    expectTypeError(() => untyped.matchesKittySequence('a', '99', 4), 'expectedCodepoint must be a number')
    expectTypeError(() => untyped.matchesKittySequence('a', 99, null), 'expectedModifier must be a number')
    expectTypeError(() => untyped.matchesLegacySequence('a', 1), 'keyName must be a string')
    expectTypeError(() => untyped.encodeKey(1), 'keyId must be a string')
    expectTypeError(() => untyped.encodeKey('up', 'app'), 'options must be an object')
    expectTypeError(
      () => untyped.encodeKey('up', { applicationCursorKeys: 1 }),
      'options.applicationCursorKeys must be a boolean',
    )
  })
})

describe('encodeKey', () => {
  const rows: [string, boolean, string][] = [
    ['up', false, '\x1b[A'],
    ['up', true, '\x1bOA'],
    ['ctrl+up', true, '\x1b[1;5A'],
    ['f1', false, '\x1bOP'],
    ['f5', false, '\x1b[15~'],
    ['shift+f5', false, '\x1b[15;2~'],
    ['pageDown', false, '\x1b[6~'],
    ['enter', false, '\r'],
    ['shift+tab', false, '\x1b[Z'],
    ['ctrl+c', false, '\x03'],
    ['CTRL+C', false, '\x03'],
    ['alt+x', false, '\x1bx'],
    ['shift+a', false, 'A'],
    ['ctrl+shift+a', false, '\x1b[27;6;97~'],
    ['ctrl+i', false, '\x1b[27;5;105~'],
    ['é', false, 'é'],
  ]
  it.each(rows)('encodeKey(%j, { applicationCursorKeys: %j }) is %j', (id, app, want) => {
    expect(sw.encodeKey(id, { applicationCursorKeys: app })).toBe(want)
  })

  it('gives bytes parseKey reads back as the same key, for every named key and modifier set', () => {
    const names = ['escape', 'tab', 'enter', 'space', 'backspace', 'insert', 'delete', 'home', 'end', 'pageUp',
      'pageDown', 'clear', 'up', 'down', 'left', 'right', 'f1', 'f4', 'f5', 'f12', 'a', 'z', '1', '[', 'é']
    const modifiers = ['shift', 'ctrl', 'alt', 'super']
    for (let bits = 0; bits < 16; bits++) {
      const chord = modifiers.filter((_, i) => bits & (1 << i))
      for (const name of names) {
        const id = [...chord, name].join('+')
        for (const applicationCursorKeys of [false, true]) {
          const bytes = sw.encodeKey(id, { applicationCursorKeys })
          expect(sw.matchesKey(bytes, id, false), `${id} → ${JSON.stringify(bytes)}`).toBe(true)
        }
      }
    }
    expect(sw.encodeKey('up')).toBe('\x1b[A')
  })

  it('rejects an id that names no key with a RangeError', () => {
    for (const id of ['nope', 'ctrl+', '', 'hyper+a']) {
      let thrown: unknown
      try {
        sw.encodeKey(id)
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(RangeError)
      expect((thrown as RangeError & { code: string }).code).toBe('ERR_INVALID_ARG_VALUE')
      expect((thrown as RangeError).message).toBe(`keyId must name a key a terminal can send, got ${JSON.stringify(id)}`)
    }
  })
})

describe('shellwright keys', () => {
  const cli = join(__dirname, '..', 'packages', 'cli', 'bin', 'shellwright.js')
  // util-linux `script` gives the command a pseudo-terminal and forwards our stdin into it.
  const hasScript = spawnSync('script', ['--version']).status === 0

  it('splits a read holding several keys and escapes their bytes', () => {
    const { splitKeys, escapeBytes } = require('../packages/cli/lib/keys.js') as {
      splitKeys: (text: string, kitty: boolean) => string[]
      escapeBytes: (sequence: string) => string
    }
    expect(splitKeys('\x1b[1;5A', false)).toStrictEqual(['\x1b[1;5A'])
    expect(splitKeys('ab\x1b[Aé\x1bOP\x1b[97;5u\x1b\x1b[B\x1b[[A\r😀', false)).toStrictEqual([
      'a', 'b', '\x1b[A', 'é', '\x1bOP', '\x1b[97;5u', '\x1b\x1b[B', '\x1b[[A', '\r', '😀',
    ])
    expect(splitKeys('\x1b[1;5', false)).toStrictEqual(['\x1b[1;5'])
    expect(escapeBytes('\x1b[A')).toBe('\\x1b[A')
    expect(escapeBytes('a\\é\r')).toBe('a\\\\\\xc3\\xa9\\x0d')
  })

  it('refuses to run without a terminal', async () => {
    const child = spawn(process.execPath, [cli, 'keys'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise((resolve) => child.on('close', resolve))
    expect(code).toBe(2)
    expect(stderr).toBe('shellwright keys: stdin is not a terminal\n')
  })

  it.skipIf(!hasScript)('prints each key in raw mode and quits on Ctrl+C twice', async () => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} keys --kitty`
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    try {
      await waitUntil(() => out.includes('Ctrl+C twice quits.'), 10_000, 'the keys header')
      expect(out.startsWith('\x1b[>1u')).toBe(true)
      const typed: [string, string][] = [
        ['a', 'a                            a'],
        ['\x1b[99;5u', 'ctrl+c                       \\x1b[99;5u'],
        ['\x1b[1;5A', 'ctrl+up                      \\x1b[1;5A'],
        ['\x03', 'ctrl+c                       \\x03'],
      ]
      for (const [bytes, line] of typed) {
        child.stdin.write(bytes)
        await waitUntil(() => out.includes(line), 5000, JSON.stringify(line))
      }
      // The ctrl+up in between reset the first Ctrl+C; this one is the second in a row.
      expect(out).toContain('(press Ctrl+C again to quit)')
      child.stdin.write('\x03')
      expect(await closed).toBe(0)
      const lines = out.replace(/\r/g, '').split('\n')
      expect(lines.filter((l) => l === '(press Ctrl+C again to quit)')).toHaveLength(2)
      // The Kitty flags pushed at start are popped on the way out.
      expect(out).toContain('\x1b[<u')
    } finally {
      child.stdin.end()
      child.kill('SIGKILL')
      await closed
    }
  })
})
