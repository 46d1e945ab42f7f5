// Regenerates the table of performance budgets in README.md (between the bench-budgets markers)
// from the results bench/run.mjs wrote: every budget with its measured figure (median of the
// repetitions), the spread and whether it is met, and the machine it ran on.
//
//   npm run bench                              build (release), run everything 3×, then this
//   node tools/bench-report.mjs [results.json] only this, from bench/results.json by default
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { budgetTable } from '../bench/summary.mjs'
import { replaceGeneratedSection } from './generated-section.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const resultsPath = process.argv[2] ?? join(root, 'bench', 'results.json')
const results = JSON.parse(readFileSync(resultsPath, 'utf8'))
const table = budgetTable(results)
replaceGeneratedSection(join(root, 'README.md'), 'bench-budgets', 'tools/bench-report.mjs from bench/results.json', table)
console.log(table)
