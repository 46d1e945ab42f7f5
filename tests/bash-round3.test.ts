// Differences from bash that bash's own test suite found in the embedding (round 3). Each case
// states bash's transcript and exit status exactly (checked against `bash --norc --noprofile -c`);
// where bash words an error differently from version to version, the message is ours, in bash's
// `bash: line N:` style.
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { executeShell } from '../index.js'
import { collector } from './helpers.js'

const scratch = mkdtempSync(join(tmpdir(), 'shellwright-round3-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

async function run(command: string, timeoutMs = 10_000) {
  const out = collector()
  const result = await executeShell({ command, cwd: scratch, timeoutMs }, out.push)
  return { text: out.text, exitCode: result.exitCode ?? null, timedOut: result.timedOut }
}

/** Asserts `command`'s whole transcript and exit status. */
async function expectRun(command: string, text: string, exitCode = 0) {
  expect(await run(command)).toEqual({ text, exitCode, timedOut: false })
}

describe('a pipeline stage reports 141 only after writing to a pipe whose reader is gone', () => {
  it('a failing function stage keeps its own status', async () => {
    await expectRun(
      'binfalse() { /bin/false || return 1; }; set -o pipefail; true | binfalse | true; echo "$? -- ${PIPESTATUS[@]}"',
      '1 -- 0 1 0\n',
    )
  })

  it('a stage that fails after its reader left still runs to its end', async () => {
    await expectRun('{ sleep 0.2; false; echo reached >&2; exit 7; } | true; echo "${PIPESTATUS[@]}"', 'reached\n7 0\n')
  })

  it('a stage that writes to a reader that left still stops with 141', async () => {
    await expectRun('while :; do echo x; done | head -1; echo "${PIPESTATUS[@]}"', 'x\n141 0\n')
  })
})
