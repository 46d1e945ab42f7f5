// The consumer test: proves that the published packages work for a project that has no Rust
// toolchain. It builds the release addon, moves it into its platform package with `napi
// artifacts`, packs the main package and the host's platform package, installs both tarballs
// offline into a fresh project whose PATH holds no cargo or rustc, and there checks CommonJS,
// ES modules, TypeScript (node16 and bundler resolution, isolatedModules), the `shellwright/web`
// subpath (its page and xterm.js served from the installed dependencies), the CLI, and the error
// for a missing addon. Prints the installed size. Run with `npm run test:package`.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const fixture = join(repo, 'tests', 'package', 'fixture')
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const target = hostTarget()
const platformPackage = `${pkg.name}-${target}`
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc')

/** Runs a command to completion (bounded), failing with its output when it exits non-zero. */
function run(command, args, { cwd = repo, env = process.env, timeout = 600_000, allowFailure = false } = {}) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout })
  if (!allowFailure && result.status !== 0) {
    const why = result.error ? result.error.message : `exit ${result.status ?? result.signal}`
    throw new Error(`${command} ${args.join(' ')} failed (${why})\n${result.stdout}\n${result.stderr}`)
  }
  return result
}

function step(name) {
  console.log(`-- ${name}`)
}

/** napi-rs's name for this machine's target (`linux-x64-gnu`), as the loader uses it. */
function hostTarget() {
  const { platform, arch } = process
  if (platform !== 'linux') return platform === 'win32' ? `${platform}-${arch}-msvc` : `${platform}-${arch}`
  return `${platform}-${arch}-${process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl'}`
}

/** The environment of a user without Rust: no PATH entry holding cargo or rustc, no npm run state. */
function consumerEnv() {
  const hasRust = (dir) => ['cargo', 'rustc'].some((tool) => isFile(join(dir, tool)))
  const path = process.env.PATH.split(delimiter).filter((dir) => dir && !hasRust(dir))
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|CARGO|RUSTUP)/i.test(name)))
  return { ...env, PATH: path.join(delimiter) }
}

function isFile(path) {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

function diskUsage(path) {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.size
  return readdirSync(path).reduce((sum, entry) => sum + diskUsage(join(path, entry)), 0)
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** `npm pack` of `dir` into `into`; returns the tarball's path and its file list. */
function pack(dir, into) {
  // --ignore-scripts: `prepare` would rebuild the addon that was just built.
  const out = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', into], { cwd: dir })
  const [info] = JSON.parse(out.stdout)
  console.log(`   ${info.filename}: ${mib(info.size)} packed, ${mib(info.unpackedSize)} unpacked`)
  return { tarball: join(into, info.filename), files: info.files.map((f) => f.path) }
}

const work = mkdtempSync(join(tmpdir(), 'shellwright-package-'))
try {
  step('release build')
  run('npm', ['run', 'build'])

  step(`napi artifacts into npm/${target}`)
  // `napi artifacts` expects an artifact for every configured target; CI builds only the host's,
  // so it runs with a config naming just that one.
  const triple = pkg.napi.targets.find((t) => targetOf(t) === target)
  assert.ok(triple, `${target} is not in package.json napi.targets`)
  const artifacts = join(work, 'artifacts')
  const config = join(work, 'napi.json')
  writeFileSync(config, JSON.stringify({ ...pkg.napi, packageName: pkg.name, targets: [triple] }))
  mkdirSync(artifacts)
  const addon = `${pkg.napi.binaryName}.${target}.node`
  copyFileSync(join(repo, addon), join(artifacts, addon))
  run('npx', ['napi', 'artifacts', '--output-dir', artifacts, '--npm-dir', 'npm', '--config-path', config])

  step('npm pack')
  const main = pack(repo, work)
  const platform = pack(join(repo, 'npm', target), work)
  assert.ok(!main.files.some((f) => f.endsWith('.node') || f.startsWith('crates/')), `main package ships ${main.files}`)
  assert.deepEqual(platform.files.sort(), ['README.md', addon, 'package.json'].sort())

  // The consumer install is offline, so its npm cache must already hold the runtime dependencies
  // (their metadata too, which installing from this repo's lockfile does not fetch): an online
  // install of exactly those puts them there, resolved as the consumer will resolve them.
  step('fetch the runtime dependencies into the npm cache')
  const deps = join(work, 'deps')
  mkdirSync(deps)
  writeFileSync(join(deps, 'package.json'), JSON.stringify({ name: 'deps', private: true, dependencies: pkg.dependencies }))
  run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--package-lock=false'], { cwd: deps })

  step('install both tarballs offline into a fresh project, without cargo or rustc')
  const env = consumerEnv()
  for (const tool of ['cargo', 'rustc']) assert.equal(spawnSync(tool, ['--version'], { env }).error?.code, 'ENOENT', tool)
  const project = join(work, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', main.tarball, platform.tarball], { cwd: project, env })
  for (const file of readdirSync(fixture)) copyFileSync(join(fixture, file), join(project, file))

  const installed = diskUsage(join(project, 'node_modules', pkg.name))
  const installedAddon = diskUsage(join(project, 'node_modules', platformPackage))
  console.log(
    `   installed: ${pkg.name} ${mib(installed)} + ${platformPackage} ${mib(installedAddon)} = ${mib(installed + installedAddon)}`,
  )

  step('CommonJS require')
  assert.equal(run('node', ['check.cjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'cjs ok\n')

  step('ES module named imports')
  assert.equal(run('node', ['check.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'esm ok\n')

  step('shellwright/mcp: a client lists the tools and runs shell_run')
  assert.equal(run('node', ['check-mcp.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'mcp ok\n')

  step('shellwright/vscode')
  assert.equal(run('node', ['vscode.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'vscode ok\n')

  step('TypeScript: node16 (built and run) and bundler resolution, isolatedModules')
  const compilerOptions = {
    target: 'ES2022',
    strict: true,
    isolatedModules: true,
    skipLibCheck: false,
    types: ['node'],
    typeRoots: [join(repo, 'node_modules', '@types')],
  }
  const tsconfig = (name, options) =>
    writeFileSync(join(project, name), JSON.stringify({ compilerOptions: { ...compilerOptions, ...options }, files: ['app.ts', 'vscode-app.ts'] }))
  tsconfig('tsconfig.node16.json', { module: 'node16', moduleResolution: 'node16', outDir: 'dist' })
  tsconfig('tsconfig.bundler.json', { module: 'esnext', moduleResolution: 'bundler', noEmit: true })
  run('node', [tsc, '-p', 'tsconfig.node16.json'], { cwd: project, env })
  run('node', [tsc, '-p', 'tsconfig.bundler.json'], { cwd: project, env })
  const app = JSON.parse(run('node', ['dist/app.js'], { cwd: project, env, timeout: 60_000 }).stdout)
  assert.deepEqual(app, {
    shellOutput: 'hello from the shell\n',
    shellResult: { exitCode: 0, cancelled: false, timedOut: false, cwd: project, durationMs: 'number' },
    ptyResult: { exitCode: 0, cancelled: false, timedOut: false },
    ptyLine: 'pty ok',
    cursor: { row: 0, col: 6, visible: true },
    commands: [{ command: 'ls', output: 'a.txt', exitCode: 0 }],
    released: true,
    selfRunning: true,
    typeOnly: [1000, 0],
    mcp: { connected: false, maxSessions: 8 },
    webPage: 200,
  })

  step('npx shellwright')
  const npx = (...args) => run('npx', ['--offline', 'shellwright', ...args], { cwd: project, env, timeout: 60_000 }).stdout
  assert.equal(npx('run', 'echo ok'), 'ok\n')
  assert.equal(npx('--version'), `${pkg.version}\n`)
  assert.match(npx('mcp', '--help'), /^usage: shellwright mcp/)
  assert.match(npx('serve', '--help'), /^usage: shellwright serve /)

  step('a missing platform package is an error naming the target')
  rmSync(join(project, 'node_modules', platformPackage), { recursive: true })
  const missing = JSON.parse(run('node', ['missing-addon.cjs'], { cwd: project, env }).stdout)
  assert.equal(missing.code, 'ERR_ADDON_LOAD')
  assert.match(missing.message, new RegExp(`^shellwright: cannot load the native addon for ${target}\\. .*${platformPackage}`))

  console.log('package test passed')
} finally {
  rmSync(work, { recursive: true, force: true })
}

/** `x86_64-unknown-linux-gnu` → `linux-x64-gnu`, for the triples package.json lists. */
function targetOf(triple) {
  const [cpu, , os, abi] = triple.split('-')
  const arch = { x86_64: 'x64', aarch64: 'arm64' }[cpu] ?? cpu
  return abi ? `${os}-${arch}-${abi}` : `${os}-${arch}`
}
