// The consumer test: proves that the published packages work for a project that has no Rust
// toolchain. It builds the release addon, moves it into its platform package with `napi
// artifacts`, packs the main package as the publish step writes it (tools/pack-release.mjs: no
// scripts) and the host's platform package, and installs both tarballs offline into a fresh
// project whose PATH holds no cargo or rustc. There the slim core alone: CommonJS, ES modules,
// `shellwright/vscode`, the CLI, and the errors of the MCP server and the web terminal, whose
// packages are not installed; then with the MCP server's packages, the server embedded and as
// `shellwright mcp` (and through `npx -p`, as the README configures it); then with the web
// terminal's, its page and xterm.js, and TypeScript (node16 and bundler resolution,
// isolatedModules); last the error for a missing addon. Prints the installed sizes. Run with
// `npm run test:package`.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packMain, packPlatform } from '../../tools/pack-release.mjs'

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

function describePack({ tarball, size, unpackedSize }) {
  console.log(`   ${tarball.split('/').at(-1)}: ${mib(size)} packed, ${mib(unpackedSize)} unpacked`)
}

/** The packages installed in `project`, by name. */
function installedPackages(project) {
  const modules = join(project, 'node_modules')
  return readdirSync(modules)
    .filter((entry) => !entry.startsWith('.'))
    .flatMap((entry) => (entry.startsWith('@') ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`) : [entry]))
    .sort()
}

/** The optional packages of one part, as `npm install` arguments with the ranges package.json asks for. */
function peerSpecs(names) {
  return names.map((name) => `${name}@${pkg.peerDependencies[name]}`)
}

const MCP_PEERS = ['@modelcontextprotocol/sdk', 'zod']
const WEB_PEERS = ['ws', '@xterm/xterm', '@xterm/addon-fit']

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

  step('pack the packages as published')
  const main = packMain(work)
  const platform = packPlatform(target, work)
  describePack(main)
  describePack(platform)
  assert.ok(!main.files.some((f) => f.endsWith('.node') || f.startsWith('crates/')), `main package ships ${main.files}`)
  assert.deepEqual(platform.files.sort(), ['LICENSE', 'README.md', addon, 'package.json'].sort())
  const published = JSON.parse(run('tar', ['-xOzf', main.tarball, 'package/package.json']).stdout)
  assert.equal(published.scripts, undefined, 'the published manifest has no scripts')
  assert.equal(published.devDependencies, undefined)
  assert.equal(published.dependencies, undefined, 'the core depends on nothing but its platform packages')
  assert.deepEqual(Object.keys(published.optionalDependencies), Object.keys(pkg.optionalDependencies))
  assert.ok(published.repository && published.homepage && published.bugs, 'repository, homepage and bugs')
  const readme = run('tar', ['-xOzf', main.tarball, 'package/README.md']).stdout
  assert.deepEqual(readme.match(/\]\((?![a-z]+:|#)[^)]*\)/g), null, 'every README link is absolute')

  // The consumer installs are offline, so the npm cache must already hold the optional packages
  // (their metadata too, which installing from this repo's lockfile does not fetch): an online
  // install of exactly those puts them there, resolved as the consumer will resolve them.
  step('fetch the optional packages into the npm cache')
  const deps = join(work, 'deps')
  mkdirSync(deps)
  writeFileSync(join(deps, 'package.json'), JSON.stringify({ name: 'deps', private: true, dependencies: pkg.peerDependencies }))
  run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--package-lock=false'], { cwd: deps })

  step('install both tarballs offline into a fresh project, without cargo or rustc')
  const env = consumerEnv()
  for (const tool of ['cargo', 'rustc']) assert.equal(spawnSync(tool, ['--version'], { env }).error?.code, 'ENOENT', tool)
  const project = join(work, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  const install = (...specs) => run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...specs], { cwd: project, env })
  install(main.tarball, platform.tarball)
  for (const file of readdirSync(fixture)) copyFileSync(join(fixture, file), join(project, file))
  assert.deepEqual(installedPackages(project), [pkg.name, platformPackage].sort(), 'the core installs nothing else')
  const core = diskUsage(join(project, 'node_modules'))
  console.log(`   installed, core alone: ${mib(core)} (${pkg.name} and ${platformPackage})`)

  step('CommonJS require')
  assert.equal(run('node', ['check.cjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'cjs ok\n')

  step('ES module named imports')
  assert.equal(run('node', ['check.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'esm ok\n')

  step('shellwright/vscode')
  assert.equal(run('node', ['vscode.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'vscode ok\n')

  step('npx shellwright run, --version')
  const npx = (...args) => run('npx', ['--offline', 'shellwright', ...args], { cwd: project, env, timeout: 60_000 }).stdout
  assert.equal(npx('run', 'echo ok'), 'ok\n')
  assert.equal(npx('--version'), `${pkg.version}\n`)

  step('without their packages, shellwright/mcp, shellwright/web, mcp and serve say what to install')
  const [sdk, zod, ws, xterm, fit] = peerSpecs([...MCP_PEERS, ...WEB_PEERS])
  const mcpMissing =
    `shellwright/mcp needs @modelcontextprotocol/sdk and zod, which are not installed. Install them next to ` +
    `shellwright: npm install ${sdk} ${zod} (or run the command with npx: npx -p shellwright -p ${sdk} -p ${zod} ` +
    `shellwright mcp)`
  const webMissing =
    `shellwright/web needs ws, @xterm/xterm and @xterm/addon-fit, which are not installed. Install them next to ` +
    `shellwright: npm install ${ws} ${xterm} ${fit} (or run the command with npx: npx -p shellwright -p ${ws} ` +
    `-p ${xterm} -p ${fit} shellwright serve)`
  assert.deepEqual(JSON.parse(run('node', ['missing-peers.cjs'], { cwd: project, env }).stdout), {
    'shellwright/mcp': { code: 'ERR_MISSING_PEER', missing: MCP_PEERS, message: mcpMissing },
    'shellwright/web': { code: 'ERR_MISSING_PEER', missing: WEB_PEERS, message: webMissing },
  })
  const npxFails = (...args) => {
    const result = run('npx', ['--offline', 'shellwright', ...args], { cwd: project, env, timeout: 60_000, allowFailure: true })
    return { status: result.status, stderr: result.stderr }
  }
  assert.deepEqual(npxFails('mcp'), { status: 1, stderr: `${mcpMissing}\n` })
  assert.deepEqual(npxFails('serve'), { status: 1, stderr: `${webMissing}\n` })

  step('with the MCP server\'s packages: shellwright/mcp embedded, and shellwright mcp over stdio')
  install(...peerSpecs(MCP_PEERS))
  const withMcp = diskUsage(join(project, 'node_modules'))
  console.log(`   installed, core with the MCP server: ${mib(withMcp)} (${installedPackages(project).length} packages)`)
  assert.equal(run('node', ['check-mcp.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'mcp ok\n')
  assert.equal(run('node', ['check-mcp-cli.mjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'mcp cli ok\n')

  step('npx -p: the MCP server as the README configures it, from an empty directory')
  const elsewhere = join(work, 'elsewhere')
  mkdirSync(elsewhere)
  const viaNpx = ['--offline', '--yes', '-p', main.tarball, '-p', platform.tarball, ...peerSpecs(MCP_PEERS).flatMap((spec) => ['-p', spec])]
  assert.match(run('npx', [...viaNpx, 'shellwright', 'mcp', '--help'], { cwd: elsewhere, env, timeout: 120_000 }).stdout, /^usage: shellwright mcp/)

  step('with the web terminal\'s packages: its page and xterm.js')
  install(...peerSpecs(WEB_PEERS))
  assert.equal(run('node', ['check-web.cjs'], { cwd: project, env, timeout: 60_000 }).stdout, 'web ok\n')
  console.log(`   installed, core with the MCP server and the web terminal: ${mib(diskUsage(join(project, 'node_modules')))}`)

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

  step('npx shellwright mcp and serve, with their packages')
  assert.match(npx('mcp', '--help'), /^usage: shellwright mcp/)
  assert.match(npx('serve', '--help'), /^usage: shellwright serve /)

  step('a missing platform package is an error naming the target')
  rmSync(join(project, 'node_modules', platformPackage), { recursive: true })
  const missing = JSON.parse(run('node', ['missing-addon.cjs'], { cwd: project, env }).stdout)
  assert.equal(missing.code, 'ERR_ADDON_LOAD')
  assert.match(missing.message, new RegExp(`^shellwright: cannot load the native addon for ${target}\\. .*${platformPackage}`))
  assert.deepEqual(npxFails('run', 'true'), { status: 1, stderr: `${missing.message}\n` }, 'the CLI says it once')

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
