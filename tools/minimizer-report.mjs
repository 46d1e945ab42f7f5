// Regenerates the minimizer's savings table in README.md (between the minimizer-savings markers)
// from the recorded corpus in tests/fixtures/transcripts, by running the corpus test, which
// computes the figures with the real minimizer and checks that every important line is kept.
//
//   node tools/minimizer-report.mjs
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { replaceGeneratedSection } from './generated-section.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dir = mkdtempSync(join(tmpdir(), 'sw-minimizer-report-'))
try {
  const report = join(dir, 'report.md')
  execFileSync('cargo', ['test', '-q', '-p', 'shellwright-minimize', '--test', 'corpus'], {
    cwd: root,
    env: { ...process.env, MINIMIZER_REPORT: report },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const table = readFileSync(report, 'utf8').trim()
  replaceGeneratedSection(join(root, 'README.md'), 'minimizer-savings', 'tools/minimizer-report.mjs', table)
  console.log(table)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
