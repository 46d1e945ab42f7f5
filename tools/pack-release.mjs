// The publish step: writes the packages as they are published and packs them, without publishing
// anything (`npm run pack:release`, then `npm publish <tarball>` for each). The repository's
// package.json keeps its development scripts (`prepare` builds the addon on `npm install` in a
// clone); the published one has no scripts and no devDependencies, so nothing runs when a user
// installs it. Its README's links to the repository's files become absolute GitHub URLs at the
// release's tag (`v<version>`), since the registry's page cannot follow relative ones.
//
// Main package: the files npm would pack from the repository, with that manifest and README.
// Platform packages: each npm/<target>/ whose `.node` is there (tools/build-targets.sh, or a Mac
// for darwin), with the repository's links added. Everything goes to target/release-packages
// (`--out DIR` to change); the tarballs' paths are printed, one a line.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Lifecycle scripts npm runs when a package is installed. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare', 'prepublish']

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})\n${result.stderr}`)
  }
  return result.stdout
}

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'))
const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`)

/** `https://github.com/owner/name` from package.json's `repository`. */
export function repositoryUrl(pkg) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url
  const match = /github\.com[/:]([^/]+\/[^/.]+)/.exec(url ?? '')
  if (!match) throw new Error(`package.json repository is not a GitHub repository: ${url}`)
  return `https://github.com/${match[1]}`
}

/** `markdown` with its links to repository files (`[x](docs/a.md)`, `![x](docs/a.png)`) absolute. */
export function absoluteLinks(markdown, pkg) {
  const base = repositoryUrl(pkg)
  const tag = `v${pkg.version}`
  return markdown.replace(/(!?)\[([^\]]*)\]\(([^)\s]+)\)/g, (link, image, text, target) => {
    if (/^([a-z]+:|#|\/)/i.test(target)) return link
    const path = target.replace(/^\.\//, '')
    return `${image}[${text}](${base}/${image ? 'raw' : 'blob'}/${tag}/${path})`
  })
}

/** Fails when a manifest about to be published would run anything at install. */
export function checkManifest(manifest) {
  const scripts = Object.keys(manifest.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))
  if (scripts.length > 0) throw new Error(`${manifest.name}: published with install scripts: ${scripts.join(', ')}`)
  for (const field of ['repository', 'homepage', 'bugs', 'license']) {
    if (!manifest[field]) throw new Error(`${manifest.name}: no ${field}`)
  }
}

/** `npm pack` of `dir` into `out`: the tarball's path and the files it holds. */
function pack(dir, out) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], dir))
  return { tarball: join(out, info.filename), files: info.files.map((file) => file.path), size: info.size, unpackedSize: info.unpackedSize }
}

/** Writes the main package as published into `out/shellwright` and packs it into `out`. */
export function packMain(out) {
  const pkg = readJson(join(repo, 'package.json'))
  const stage = join(out, pkg.name)
  rmSync(stage, { recursive: true, force: true })
  const [listing] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], repo))
  for (const { path } of listing.files) {
    mkdirSync(dirname(join(stage, path)), { recursive: true })
    copyFileSync(join(repo, path), join(stage, path))
  }
  const { scripts, devDependencies, ...manifest } = pkg
  checkManifest(manifest)
  writeJson(join(stage, 'package.json'), manifest)
  writeFileSync(join(stage, 'README.md'), absoluteLinks(readFileSync(join(repo, 'README.md'), 'utf8'), pkg))
  return pack(stage, out)
}

/** Writes platform package `target` as published into `out/<package name>` and packs it. */
export function packPlatform(target, out) {
  const root = readJson(join(repo, 'package.json'))
  const dir = join(repo, 'npm', target)
  const pkg = readJson(join(dir, 'package.json'))
  const stage = join(out, pkg.name)
  rmSync(stage, { recursive: true, force: true })
  mkdirSync(stage, { recursive: true })
  for (const file of ['README.md', ...pkg.files]) {
    if (!existsSync(join(dir, file))) throw new Error(`npm/${target}/${file} is missing (build it first)`)
    copyFileSync(join(dir, file), join(stage, file))
  }
  copyFileSync(join(repo, 'LICENSE'), join(stage, 'LICENSE'))
  const manifest = { ...pkg, repository: root.repository, homepage: root.homepage, bugs: root.bugs }
  checkManifest(manifest)
  writeJson(join(stage, 'package.json'), manifest)
  return pack(stage, out)
}

/** The platform packages whose addon is built. */
export function builtTargets() {
  return readdirSync(join(repo, 'npm')).filter((target) => {
    const pkg = readJson(join(repo, 'npm', target, 'package.json'))
    return existsSync(join(repo, 'npm', target, pkg.main))
  })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out')
  const out = resolve(at > 0 ? process.argv[at + 1] : join(repo, 'target', 'release-packages'))
  mkdirSync(out, { recursive: true })
  const packed = [packMain(out), ...builtTargets().map((target) => packPlatform(target, out))]
  for (const { tarball } of packed) console.log(tarball)
}
