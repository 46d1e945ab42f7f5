// Folds the rows that repeated runs of the benchmarks print (bench/lib.mjs `report`) into one row
// per benchmark with the median and min–max of every figure, and renders the table of budgets as
// Markdown. Used by bench/run.mjs (console summary, results.json) and tools/bench-report.mjs (README).
import { execFileSync } from 'node:child_process'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { meets } from './lib.mjs'

/** The median, min and max of a list of numbers (the lower median for an even count). */
export function spread(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return { median: sorted[Math.floor((sorted.length - 1) / 2)], min: sorted[0], max: sorted.at(-1), values }
}

/**
 * Groups rows by their `bench` name (in order of first appearance) and summarises each figure
 * across the repetitions: `results` and `ratios` map names to a spread; each budget gets the
 * spread of its measured figure, whether its median meets the bound, and in how many runs it did.
 */
export function summarize(rows) {
  const groups = new Map()
  for (const row of rows) {
    if (!groups.has(row.bench)) groups.set(row.bench, [])
    groups.get(row.bench).push(row)
  }
  return [...groups.values()].map((group) => {
    const [first] = group
    const figures = (key) =>
      Object.fromEntries(Object.keys(first[key] ?? {}).map((name) => [name, spread(group.map((r) => r[key][name]))]))
    const budgets = (first.budgets ?? []).map((budget, i) => {
      const measured = spread(group.map((r) => r.budgets[i].measured))
      const { label, unit, atLeast, atMost } = budget
      const bound = atLeast !== undefined ? { atLeast } : { atMost }
      const metRuns = group.filter((r) => r.budgets[i].met).length
      return { label, unit, ...bound, measured, met: meets(measured.median, bound), metRuns }
    })
    return {
      bench: first.bench,
      file: first.file,
      unit: first.unit,
      better: first.better,
      runs: group.length,
      results: figures('results'),
      ratios: figures('ratios'),
      budgets,
    }
  })
}

/** What the figures were measured on; `loadAtStart` is the 1-minute load average when the run began. */
export function machine(loadAtStart) {
  const cores = cpus()
  const git = (...args) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    } catch {
      return undefined
    }
  }
  const dirty = git('status', '--porcelain', '--untracked-files=no')
  return {
    cpu: cores[0]?.model.trim() ?? 'unknown',
    cores: cores.length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${release()}`,
    node: process.version,
    commit: git('rev-parse', '--short', 'HEAD'),
    dirty: Boolean(dirty),
    date: new Date().toISOString(),
    load: { start: loadAtStart, end: Number(loadavg()[0].toFixed(1)) },
  }
}

/** A figure as printed: three significant digits at most. */
function num(x) {
  if (Math.abs(x) >= 100) return String(Math.round(x))
  return String(Number(x.toPrecision(3)))
}

function withUnit(x, unit) {
  return unit === '×' ? `${num(x)}×` : `${num(x)} ${unit}`
}

function bound({ atLeast, atMost, unit }) {
  return atLeast !== undefined ? `≥ ${withUnit(atLeast, unit)}` : `≤ ${withUnit(atMost, unit)}`
}

const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ')

/** Medians of a row's results, e.g. "shellwright 250 MB/s, node-pty 266 MB/s". */
function figuresOf(row) {
  return Object.entries(row.results)
    .map(([name, s]) => `${name} ${num(s.median)}${row.unit === '×' ? '×' : ` ${row.unit}`}`)
    .join(', ')
}

/** The Markdown table of every budget, then the rows that have none, with the machine and run. */
export function budgetTable({ machine: m, reps, seconds, rows }) {
  const lines = [
    `Measured on ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}, Node ${m.node}, commit ${m.commit ?? '?'}` +
      `${m.dirty ? ' (with local changes)' : ''}, ${m.date.slice(0, 10)}` +
      `${m.load ? ` (load average ${m.load.start} at the start, ${m.load.end} at the end)` : ''}: ` +
      `${reps} repetition(s) of every benchmark ` +
      `(${seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`} in all); each figure is the median of the repetitions, the spread their min–max.`,
    '',
    '| benchmark | budget | measured | spread | met | figures (medians) |',
    '|---|---|---|---|---|---|',
  ]
  for (const row of rows) {
    for (const b of row.budgets) {
      const met = b.met ? 'met' : '**not met**'
      const runs = b.metRuns === row.runs ? '' : ` (${b.metRuns}/${row.runs} runs)`
      lines.push(
        `| ${cell(row.bench)} | ${cell(`${b.label} ${bound(b)}`)} | ${withUnit(b.measured.median, b.unit)} | ` +
          `${num(b.measured.min)}–${withUnit(b.measured.max, b.unit)} | ${met}${runs} | ${cell(figuresOf(row))} |`,
      )
    }
  }
  for (const row of rows.filter((r) => r.budgets.length === 0)) {
    const spreads = Object.entries(row.results)
      .map(([name, s]) => `${name} ${num(s.min)}–${withUnit(s.max, row.unit)}`)
      .join(', ')
    lines.push(`| ${cell(row.bench)} | — | — | ${cell(spreads)} | — | ${cell(figuresOf(row))} |`)
  }
  return lines.join('\n')
}
