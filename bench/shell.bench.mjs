// Shell benchmarks: Shell.run latency for builtins (one run in place, one queued) and an external
// command, and streaming throughput, each against what a Node user would use instead, in the same
// process.
import { execFile, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { cLoop } from './c-loop.mjs'
import { report, sample, stats } from './lib.mjs'

const require = createRequire(import.meta.url)
const { Shell } = require('../index.js')
const execFileAsync = promisify(execFile)

/** A persistent bash fed commands over a pipe; each command ends with a marker line. */
function persistentBash() {
  const bash = spawn('bash', ['--norc', '--noprofile'], { stdio: ['pipe', 'pipe', 'inherit'] })
  bash.stdout.setEncoding('utf8')
  let buffer = ''
  let waiting = null
  // The marker line counts only once it is whole: a read that ends inside it must not leave it in
  // the buffer, where it would end the next command at once.
  const marker = /__SW_END__\d+\n/
  bash.stdout.on('data', (chunk) => {
    buffer += chunk
    const end = buffer.match(marker)
    if (end && waiting) {
      const done = waiting
      waiting = null
      buffer = buffer.slice(end.index + end[0].length)
      done()
    }
  })
  return {
    run: (command) =>
      new Promise((resolve) => {
        waiting = resolve
        bash.stdin.write(`${command}\necho __SW_END__$?\n`)
      }),
    close: () => bash.kill(),
  }
}

async function latency() {
  const shell = new Shell()
  const bash = persistentBash()
  const opts = { iterations: 500, warmup: 50 }

  const builtin = {
    'Shell.run': stats(await sample(() => shell.run({ command: 'echo hi' }, () => {}), opts)).p50,
    'persistent bash over a pipe': stats(await sample(() => bash.run('echo hi'), opts)).p50,
    'child_process.execFile(bash -c)': stats(await sample(() => execFileAsync('bash', ['-c', 'echo hi']), { iterations: 100, warmup: 10 })).p50,
  }
  report({
    bench: 'shell.run echo hi (builtin), p50 latency',
    unit: 'ms',
    subject: 'Shell.run',
    results: builtin,
    budget: [
      { vs: 'persistent bash over a pipe', atLeast: 10 },
      { vs: 'child_process.execFile(bash -c)', atLeast: 100 },
    ],
  })

  // The builtins agents run between commands. `cd DIR` stats its directory, so it runs in place
  // only where that lookup cannot hang on a mount (a local filesystem, no symbolic link on the way).
  for (const command of ['cd /tmp', 'export X=1', 'pwd']) {
    const results = {
      'Shell.run': stats(await sample(() => shell.run({ command }), opts)).p50,
      'persistent bash over a pipe': stats(await sample(() => bash.run(command), opts)).p50,
    }
    report({
      bench: `shell.run ${command} (builtin), p50 latency`,
      unit: 'ms',
      subject: 'Shell.run',
      results,
      budget: { vs: 'persistent bash over a pipe', atLeast: 3 },
    })
  }

  // A loop of builtins, queued (a loop is never run in place): every simple command of it passes
  // through the session's per-command hook (cancellation, limits, the user's traps), which bash
  // does not have. No budget: the row shows what a script's commands cost against bash's.
  const loop = 'for ((i = 0; i < 2000; i++)); do [ "$i" -ge 0 ] && :; done'
  const loopOptions = { iterations: 20, warmup: 3 }
  report({
    bench: 'shell.run of a 2,000-iteration loop of builtins, p50 latency',
    unit: 'ms',
    subject: 'Shell.run',
    results: {
      'Shell.run': stats(await sample(() => shell.run({ command: loop }), loopOptions)).p50,
      'persistent bash over a pipe': stats(await sample(() => bash.run(loop), loopOptions)).p50,
    },
  })

  const spawnTrue = () => new Promise((resolve) => spawn('/bin/true', { stdio: 'ignore' }).on('exit', resolve))
  const trueOptions = { iterations: 200, warmup: 20 }
  const external = {
    'Shell.run': stats(await sample(() => shell.run({ command: '/bin/true' }), trueOptions)).p50,
    'child_process.spawn': stats(await sample(spawnTrue, trueOptions)).p50,
  }
  // The same spawn and wait with no runtime in the way: a C loop (bench/c-loops/spawn-true.c).
  const spawnLoop = cLoop('spawn-true', trueOptions)
  if (spawnLoop) external['C loop (posix_spawn + waitpid)'] = stats(spawnLoop).p50
  report({
    bench: 'shell.run /bin/true (external), p50 latency',
    unit: 'ms',
    subject: 'Shell.run',
    results: external,
    budget: { vs: 'child_process.spawn', atLeast: 2.5 },
  })
  bash.close()
}

async function streaming() {
  const command = 'head -c 200M /dev/zero'
  const shell = new Shell()
  const viaShell = async () => {
    let chars = 0
    const start = performance.now()
    await shell.run({ command }, (chunk) => (chars += chunk.length))
    return { ms: performance.now() - start, chars }
  }
  const viaSpawn = () =>
    new Promise((resolve) => {
      let chars = 0
      const start = performance.now()
      const child = spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'inherit'] })
      child.stdout.setEncoding('utf8')
      child.stdout.on('data', (chunk) => (chars += chunk.length))
      child.on('close', () => resolve({ ms: performance.now() - start, chars }))
    })
  const best = async (fn) => {
    let top = null
    for (let i = 0; i < 3; i++) {
      const r = await fn()
      if (!top || r.ms < top.ms) top = r
    }
    return top
  }
  const mine = await best(viaShell)
  const theirs = await best(viaSpawn)
  const mbps = (r) => r.chars / (1024 * 1024) / (r.ms / 1000)
  report({
    bench: 'shell streaming 200 MB (decoded to strings), best of 3',
    unit: 'MB/s',
    better: 'higher',
    subject: 'Shell.run',
    results: { 'Shell.run': mbps(mine), 'child_process.spawn': mbps(theirs) },
    notes: `chars delivered: Shell.run ${mine.chars}, spawn ${theirs.chars}`,
    budget: { vs: 'child_process.spawn', atLeast: 1.2 },
  })
}

await latency()
await streaming()
