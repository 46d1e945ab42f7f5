// The benchmarks' reporting (bench/lib.mjs `report`, bench/summary.mjs): budgets judged per row,
// repetitions folded into median and min–max, and the Markdown table README.md gets.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'

interface Spread {
  median: number
  min: number
  max: number
  values: number[]
}
interface Budget {
  label: string
  unit: string
  measured: number
  atLeast?: number
  atMost?: number
  met: boolean
}
interface Row {
  bench: string
  unit: string
  better: string
  results: Record<string, number>
  ratios: Record<string, number>
  budgets?: Budget[]
}
interface Lib {
  report(row: {
    bench: string
    unit: string
    subject: string
    results: Record<string, number>
    better?: 'lower' | 'higher'
    budget?: object | object[]
  }): void
}
interface Summary {
  spread(values: number[]): Spread
  summarize(rows: Row[]): Array<{ bench: string; runs: number; budgets: Array<{ measured: Spread; met: boolean; metRuns: number }> }>
  budgetTable(results: object): string
}

const load = async <T>(file: string): Promise<T> => import(pathToFileURL(join(__dirname, '..', 'bench', file)).href)

/** The JSON rows `report` prints for `rows`. */
async function reported(rows: Parameters<Lib['report']>[0][]): Promise<Row[]> {
  const { report } = await load<Lib>('lib.mjs')
  const printed: string[] = []
  vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line))
  vi.spyOn(console, 'table').mockImplementation(() => {})
  for (const row of rows) report(row)
  vi.restoreAllMocks()
  return printed.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Row)
}

const pty = (mine: number, theirs: number) => ({
  bench: 'pty cooked',
  unit: 'MB/s',
  better: 'higher' as const,
  subject: 'shellwright',
  results: { shellwright: mine, 'node-pty': theirs },
  budget: { vs: 'node-pty', atLeast: 0.9 },
})

describe('benchmark reporting', () => {
  afterEach(() => vi.restoreAllMocks())

  it('judges a ratio budget, a result budget and a derived one in the printed row', async () => {
    const [ratio, result] = await reported([
      pty(90, 100),
      {
        bench: 'attach',
        unit: 'ms',
        subject: 'catch-up p50',
        results: { 'catch-up p50': 25 },
        budget: [
          { result: 'catch-up p50', atMost: 20 },
          { label: 'viewers off', value: 0, unit: 'viewers', atMost: 0 },
        ],
      },
    ])
    expect(ratio.ratios).toEqual({ 'shellwright vs node-pty': 0.9 })
    expect(ratio.budgets).toEqual([{ label: 'shellwright vs node-pty', unit: '×', measured: 0.9, atLeast: 0.9, met: true }])
    expect(result.budgets).toEqual([
      { label: 'catch-up p50', unit: 'ms', measured: 25, atMost: 20, met: false },
      { label: 'viewers off', unit: 'viewers', measured: 0, atMost: 0, met: true },
    ])
  })

  it('rejects a budget without a bound, and one whose figure was not measured', async () => {
    await expect(reported([{ ...pty(1, 1), budget: { vs: 'node-pty' } }])).rejects.toThrow('a budget needs atLeast or atMost')
    await expect(reported([{ ...pty(1, 1), budget: { vs: 'xterm', atLeast: 1 } }])).rejects.toThrow(
      'budget shellwright vs xterm: no figure measured',
    )
  })

  it('folds repetitions into median and min–max, and judges the median', async () => {
    const { summarize, spread } = await load<Summary>('summary.mjs')
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, values: [3, 1, 2] })
    const rows = await reported([pty(80, 100), pty(95, 100), pty(120, 100)])
    const [row] = summarize(rows)
    expect(row.runs).toBe(3)
    expect(row.budgets[0].measured).toEqual({ median: 0.95, min: 0.8, max: 1.2, values: [0.8, 0.95, 1.2] })
    expect(row.budgets[0].met).toBe(true)
    expect(row.budgets[0].metRuns).toBe(2)
  })

  it('renders each budget as a table row with spread, verdict and figures', async () => {
    const { summarize, budgetTable } = await load<Summary>('summary.mjs')
    const rows = summarize(await reported([pty(80, 100), pty(85, 100), pty(88, 100)]))
    const machine = { cpu: 'CPU', cores: 2, memoryGb: 8, os: 'linux 6', node: 'v20', commit: 'abc1234', dirty: false, date: '2026-01-02T00:00:00Z' }
    const table = budgetTable({ machine, reps: 3, seconds: 90, rows }).split('\n')
    expect(table[0]).toBe(
      'Measured on CPU, 2 cores, 8 GB, linux 6, Node v20, commit abc1234, 2026-01-02: 3 repetition(s) of every benchmark ' +
        '(90 s in all); each figure is the median of the repetitions, the spread their min–max.',
    )
    expect(table.slice(2)).toEqual([
      '| benchmark | budget | measured | spread | met | figures (medians) |',
      '|---|---|---|---|---|---|',
      '| pty cooked | shellwright vs node-pty ≥ 0.9× | 0.85× | 0.8–0.88× | **not met** (0/3 runs) | shellwright 85 MB/s, node-pty 100 MB/s |',
    ])
  })
})
