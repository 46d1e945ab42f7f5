// Runs every bench/*.bench.mjs in its own Node process, one after another, so that one benchmark's
// garbage and threads never skew the next. Pass names to run a subset: `node bench/run.mjs shell keys`.
import { readdirSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const wanted = process.argv.slice(2)
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort()

let failed = 0
for (const file of files) {
  const { status } = spawnSync(process.execPath, ['--expose-gc', join(here, file)], { stdio: 'inherit' })
  if (status !== 0) {
    console.error(`bench ${file} failed with exit code ${status}`)
    failed++
  }
}
process.exit(failed ? 1 : 0)
