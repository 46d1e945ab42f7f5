// Shared helpers for the benchmarks: timing, statistics and the two output forms every benchmark
// prints: one JSON line per comparison (for machines) and a table (for people).
import { performance } from 'node:perf_hooks'

/** Runs `fn` (sync or async) `warmup` times untimed, then `iterations` times; returns per-call ms samples. */
export async function sample(fn, { iterations = 200, warmup = 20 } = {}) {
  for (let i = 0; i < warmup; i++) await fn()
  const samples = []
  for (let i = 0; i < iterations; i++) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  return samples
}

/**
 * Latency samples (ms) of several contenders taken in turn, one call of each per round, so that
 * whatever changes on the machine during the run (load, memory, caches) falls on all of them
 * alike. Returns the samples under each contender's name.
 */
export async function sampleInTurn(contenders, { iterations = 200, warmup = 20 } = {}) {
  const names = Object.keys(contenders)
  const samples = Object.fromEntries(names.map((name) => [name, []]))
  for (let round = 0; round < warmup + iterations; round++) {
    for (const name of names) {
      const start = performance.now()
      await contenders[name]()
      if (round >= warmup) samples[name].push(performance.now() - start)
    }
  }
  return samples
}

/**
 * Resolves once `condition()` holds, looking every 5 ms (a set-up step, never a timed one); throws
 * an error saying `failure` after `timeoutMs`.
 */
export async function until(condition, { timeoutMs, failure }) {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(failure)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Summary statistics (ms) of a sample array. */
export function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  const pick = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  const mean = sorted.reduce((s, x) => s + x, 0) / sorted.length
  return { n: sorted.length, mean, p50: pick(0.5), p90: pick(0.9), min: sorted[0] }
}

/**
 * Prints one comparison: a JSON line `{bench, unit, better, results, ratios, budgets}` and a table.
 * `results` maps each contender to its figure; `better` says whether lower or higher figures win;
 * each ratio is how many times better Shellwright (`subject`) is than that alternative.
 *
 * `budget` (one or a list) is what the row is held to; bench/run.mjs gathers them into the table of
 * budgets. Each names the figure it judges and a bound, `atLeast` or `atMost`:
 *   `{ vs: 'node-pty', atLeast: 0.9 }`          the ratio of `subject` to that contender (×)
 *   `{ result: 'catch-up p50', atMost: 20 }`   a result, in the row's unit
 *   `{ label, value, unit, atMost: 5 }`        a figure derived from the results
 */
export function report({ bench, unit, subject, results, better = 'lower', notes, budget }) {
  const ratios = {}
  for (const [name, value] of Object.entries(results)) {
    if (name === subject) continue
    const mine = results[subject]
    ratios[`${subject} vs ${name}`] = round(better === 'lower' ? value / mine : mine / value)
  }
  const budgets = [budget ?? []].flat().map((b) => judge(b, { unit, subject, results, ratios }))
  const line = { bench, unit, better, results: mapValues(results, round), ratios }
  if (budgets.length) line.budgets = budgets
  if (notes) line.notes = notes
  console.log(JSON.stringify(line))
  console.log(`\n${bench} (${unit}, ${better} is better)`)
  console.table(
    Object.entries(results).map(([name, value]) => ({
      contender: name,
      [unit]: round(value),
      'shellwright is … better': name === subject ? '' : `${ratios[`${subject} vs ${name}`]}×`,
    })),
  )
  for (const b of budgets) console.log(`budget ${b.label}: ${b.measured} ${b.unit}, ${b.met ? 'met' : 'NOT met'}`)
}

/** A budget with its measured figure: `{label, unit, measured, atLeast|atMost, met}`. */
function judge(budget, { unit, subject, results, ratios }) {
  const { vs, result, atLeast, atMost } = budget
  if ((atLeast === undefined) === (atMost === undefined)) throw new Error('a budget needs atLeast or atMost')
  let figure
  if (vs !== undefined) {
    figure = { label: `${subject} vs ${vs}`, unit: '×', measured: ratios[`${subject} vs ${vs}`] }
  } else if (result !== undefined) {
    figure = { label: result, unit, measured: round(results[result]) }
  } else {
    figure = { label: budget.label, unit: budget.unit, measured: round(budget.value) }
  }
  if (!Number.isFinite(figure.measured)) throw new Error(`budget ${figure.label}: no figure measured`)
  const bound = atLeast !== undefined ? { atLeast } : { atMost }
  return { ...figure, ...bound, met: meets(figure.measured, bound) }
}

/** Whether `value` is within the bound `{atLeast}` or `{atMost}`. */
export function meets(value, { atLeast, atMost }) {
  return atLeast !== undefined ? value >= atLeast : value <= atMost
}

function round(x) {
  return Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 1000) / 1000
}

function mapValues(obj, f) {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, f(v)]))
}
