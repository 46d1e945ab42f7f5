// The output minimizer through the napi layer: options on ShellOptions / ShellExecuteOptions,
// `result.minimized` only when a filter rewrote the output, onChunk still raw, user rules from a
// file, and validation errors that name the field. Filters themselves are tested in crates/shell.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Shell, executeShell } from '../index.js'
import { collector, expectRangeError, expectTypeError } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sw-minimizer-'))
const repo = join(dir, 'repo')
const gitEnv = {
  GIT_AUTHOR_NAME: 'Ann',
  GIT_AUTHOR_EMAIL: 'ann@example.com',
  GIT_AUTHOR_DATE: '2026-01-05T10:00:00+0000',
  GIT_COMMITTER_NAME: 'Ann',
  GIT_COMMITTER_EMAIL: 'ann@example.com',
  GIT_COMMITTER_DATE: '2026-01-05T10:00:00+0000',
}
let shas: string[] = []

beforeAll(() => {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, ...args], { env: { ...process.env, ...gitEnv }, encoding: 'utf8' })
  execFileSync('git', ['init', '-q', repo])
  git('commit', '-q', '--allow-empty', '-m', 'first')
  git('commit', '-q', '--allow-empty', '-m', 'second')
  shas = git('log', '--format=%H').trim().split('\n')
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('minimizer', () => {
  it('rewrites git log for the agent while onChunk streams the raw transcript', async () => {
    const out = collector()
    const result = await executeShell({ command: 'git log', cwd: repo, minimizer: { enabled: true } }, out.push)
    expect(result.exitCode).toBe(0)
    const date = 'Mon Jan 5 10:00:00 2026 +0000'
    expect(out.text).toBe(
      `commit ${shas[0]}\nAuthor: Ann <ann@example.com>\nDate:   ${date}\n\n    second\n\n` +
        `commit ${shas[1]}\nAuthor: Ann <ann@example.com>\nDate:   ${date}\n\n    first\n`,
    )
    expect(result.minimized).toEqual({
      filter: 'git',
      text:
        '[day, time zone and author shown only where they change]\n' +
        `commit ${shas[0].slice(0, 8)} · 2026-01-05 10:00 +0000 · Ann\n    second\n` +
        `commit ${shas[1].slice(0, 8)} · 10:00\n    first\n`,
      originalText: out.text,
      inputBytes: Buffer.byteLength(out.text),
      outputBytes: Buffer.byteLength(result.minimized!.text),
    })
  })

  it('summarises git log --stat of 200 commits to each subject and its totals, in under half the bytes', async () => {
    // 200 commits with a body and one to five changed files each, one body naming an error.
    const history = join(dir, 'history')
    execFileSync('git', ['init', '-q', '-b', 'main', history])
    const files = new Map<string, string>()
    let stream = ''
    for (let i = 1; i <= 200; i++) {
      const body = i === 100 ? 'error: the old parser dropped the last line' : 'Why: the reader kept one byte too many.'
      const message = `module ${i % 7}: change ${i} to the parser\n\n${body}\nRefs #${i}\n`
      stream += `commit refs/heads/main\ncommitter Ann <ann@example.com> ${1_767_607_200 + i * 60} +0000\n`
      stream += `data ${Buffer.byteLength(message)}\n${message}`
      for (let f = 1; f <= 1 + (i % 5); f++) {
        const path = `src/m${i % 7}/file${f}.rs`
        const content = `${files.get(path) ?? ''}line ${i}\n`
        files.set(path, content)
        stream += `M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}`
      }
    }
    execFileSync('git', ['-C', history, 'fast-import', '--quiet'], { input: stream })
    const result = await executeShell({ command: 'git log --stat', cwd: history, minimizer: { enabled: true } })
    expect(result.exitCode).toBe(0)
    const { text, inputBytes, outputBytes } = result.minimized!
    expect(outputBytes).toBeLessThan(inputBytes / 2)
    const lines = text.split('\n')
    expect(lines.slice(0, 2)).toEqual([
      '[day, time zone and author shown only where they change]',
      "[git log --stat summarised: each commit's subject and totals; 399 message body lines and 600 per-file lines omitted (git show --stat <commit> shows one whole)]",
    ])
    expect(lines.filter((line) => line.startsWith('commit '))).toHaveLength(200)
    expect(lines.filter((line) => / change \d+ to the parser$/.test(line))).toHaveLength(200)
    expect(lines.filter((line) => /^ \d+ files? changed, \d+ insertions?\(\+\)$/.test(line))).toHaveLength(200)
    // The newest commit, whole: header, subject, totals; the body naming an error is kept.
    expect(lines.slice(2, 5)).toEqual([
      expect.stringMatching(/^commit [0-9a-f]{8} · 2026-01-05 \d\d:\d\d \+0000 · Ann$/),
      '    module 4: change 200 to the parser',
      ' 1 file changed, 1 insertion(+)',
    ])
    expect(lines).toContain('    error: the old parser dropped the last line')
    expect(text).not.toContain('Why: the reader')
  })

  it('minimizes a run done in place from the transcript it collected, with and without onChunk', async () => {
    const shell = new Shell({ minimizer: { enabled: true } })
    const names = Array.from({ length: 30 }, (_, i) => `SW_SAME_${i + 1}`)
    await shell.run({ command: `export ${names.map((name) => `${name}=x`).join(' ')}` })
    const chunks: string[] = []
    const running = shell.run({ command: `declare -p ${names.join(' ')}` }, (chunk) => chunks.push(chunk))
    // In place: the whole transcript reaches onChunk in the microtask after run() returned.
    await Promise.resolve()
    const kept = (name: string) => `declare -x ${name}="x"\n`
    const raw = names.map(kept).join('')
    expect(chunks).toEqual([raw])
    const omitted = '[… 25 similar lines omitted]\n'
    const text = [...names.slice(0, 3).map(kept), omitted, ...names.slice(28).map(kept)].join('')
    const expected = {
      filter: 'generic',
      text,
      originalText: raw,
      inputBytes: Buffer.byteLength(raw),
      outputBytes: Buffer.byteLength(text),
    }
    expect({ ...(await running).minimized }).toEqual(expected)
    expect({ ...(await shell.run({ command: `declare -p ${names.join(' ')}` })).minimized }).toEqual(expected)
  })

  it('makes originalText a string only when it is first read, then keeps it as a plain value', async () => {
    const shell = new Shell({ minimizer: { enabled: true } })
    const command = 'for i in $(seq 30); do echo "line $i"; done; echo "error: boom"'
    const out = collector()
    const { minimized } = await shell.run({ command }, out.push)
    expect(Object.keys(minimized!)).toEqual(['filter', 'text', 'originalText', 'inputBytes', 'outputBytes'])
    const before = Object.getOwnPropertyDescriptor(minimized, 'originalText')!
    expect([typeof before.get, before.enumerable, before.configurable]).toEqual(['function', true, true])
    expect(JSON.parse(JSON.stringify(minimized)).originalText).toBe(out.text)
    const after = Object.getOwnPropertyDescriptor(minimized, 'originalText')!
    expect(after).toEqual({ value: out.text, writable: true, enumerable: true, configurable: true })
    // A frozen result cannot take the plain value: the getter goes on answering.
    const frozen = Object.freeze((await shell.run({ command })).minimized!)
    expect([frozen.originalText, frozen.originalText]).toEqual([out.text, out.text])
  })

  it('keeps make errors and collapses echoed commands', async () => {
    const project = join(dir, 'make')
    const recipe = [1, 2, 3, 4, 5, 6].map((i) => `\tmkdir -p d${i}\n`).join('')
    execFileSync('mkdir', ['-p', project])
    writeFileSync(join(project, 'Makefile'), `all:\n${recipe}\tfalse\n`)
    const result = await executeShell({ command: 'make', cwd: project, minimizer: { enabled: true } })
    expect(result.exitCode).toBe(2)
    expect(result.minimized?.filter).toBe('make')
    expect(result.minimized?.text).toBe(
      'mkdir -p d1\nmkdir -p d2\n[… 3 build commands omitted]\nmkdir -p d6\nfalse\nmake: *** [Makefile:8: all] Error 1\n',
    )
  })

  it('is off unless enabled, and absent when nothing was rewritten', async () => {
    expect((await executeShell({ command: 'git log', cwd: repo })).minimized).toBeUndefined()
    expect((await executeShell({ command: 'git log', cwd: repo, minimizer: {} })).minimized).toBeUndefined()
    expect((await executeShell({ command: 'echo hi', minimizer: { enabled: true } })).minimized).toBeUndefined()
    const small = { enabled: true, maxCaptureBytes: 100 }
    expect((await executeShell({ command: 'git log', cwd: repo, minimizer: small })).minimized).toBeUndefined()
  })

  it('applies a Shell’s options to each run, with only and except', async () => {
    const onlyCargo = new Shell({ minimizer: { enabled: true, only: ['cargo'] } })
    expect((await onlyCargo.run({ command: 'git log', cwd: repo })).minimized).toBeUndefined()
    const exceptGit = new Shell({ minimizer: { enabled: true, except: ['git'] } })
    expect((await exceptGit.run({ command: 'git log', cwd: repo })).minimized).toBeUndefined()
    const onlyGit = new Shell({ minimizer: { enabled: true, only: ['git'] } })
    expect((await onlyGit.run({ command: 'git log', cwd: repo })).minimized?.filter).toBe('git')
  })

  it('runs user rules from filtersPath before the built-in filters', async () => {
    const rules = join(dir, 'rules.json')
    writeFileSync(
      rules,
      JSON.stringify({
        rules: [
          {
            name: 'seq',
            match: '^seq\\b',
            head: 2,
            tail: 1,
            examples: [{ input: '1\n2\n3\n4\n', expected: '1\n2\n[… 1 more line omitted]\n4\n' }],
          },
        ],
      }),
    )
    const result = await executeShell({ command: 'seq 1 100', minimizer: { enabled: true, filtersPath: rules } })
    expect(result.minimized?.filter).toBe('rule:seq')
    expect(result.minimized?.text).toBe('1\n2\n[… 97 more lines omitted]\n100\n')
  })

  it('rejects bad options with a coded error naming the field', () => {
    expectTypeError(() => new Shell({ minimizer: 5 as never }), 'options.minimizer must be an object')
    expectTypeError(
      () => new Shell({ minimizer: { enabled: 'yes' as never } }),
      'options.minimizer.enabled must be a boolean',
    )
    expectTypeError(
      () => executeShell({ command: 'true', minimizer: { only: 'git' as never } }),
      'options.minimizer.only must be an array of strings',
    )
    expectTypeError(
      () => executeShell({ command: 'true', minimizer: { except: [1] as never } }),
      'options.minimizer.except must be an array of strings',
    )
    expectRangeError(
      () => new Shell({ minimizer: { maxCaptureBytes: Number.NaN } }),
      'options.minimizer.maxCaptureBytes must be a finite number',
    )
    const missing = join(dir, 'missing.json')
    expectRangeError(
      () => new Shell({ minimizer: { enabled: true, filtersPath: missing } }),
      `options.minimizer.filtersPath: ${missing}: No such file or directory (os error 2)`,
    )
    const failing = join(dir, 'failing.json')
    writeFileSync(
      failing,
      JSON.stringify({ rules: [{ name: 'x', match: 'x', strip: ['^a'], examples: [{ input: 'a\nb\n', expected: 'a\n' }] }] }),
    )
    expectRangeError(
      () => executeShell({ command: 'true', minimizer: { enabled: true, filtersPath: failing } }),
      `options.minimizer.filtersPath: ${failing}: rule 1 ("x"): example 1 does not pass: expected "a\\n", got "b\\n"`,
    )
  })
})
