// The publish step's rules (tools/pack-release.mjs): README links made absolute for the registry's
// page, and manifests that would run anything at install refused. `npm run test:package` packs and
// installs what it writes.
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain ES module of the repo's tools, without types
import { absoluteLinks, checkManifest, repositoryUrl } from '../tools/pack-release.mjs'

const pkg = {
  name: 'shellwright',
  version: '1.2.3',
  license: 'MIT',
  repository: { type: 'git', url: 'git+https://github.com/owner/repo.git' },
  homepage: 'https://github.com/owner/repo#readme',
  bugs: { url: 'https://github.com/owner/repo/issues' },
}

describe('the publish step', () => {
  it('reads the GitHub repository from package.json', () => {
    expect(repositoryUrl(pkg)).toBe('https://github.com/owner/repo')
    expect(repositoryUrl({ repository: 'github.com:owner/repo' })).toBe('https://github.com/owner/repo')
    expect(() => repositoryUrl({ repository: 'https://example.com/x.git' })).toThrow(
      'package.json repository is not a GitHub repository: https://example.com/x.git',
    )
  })

  it('makes links to repository files absolute at the release tag, and leaves the others', () => {
    const readme = [
      'See [docs/mcp.md](docs/mcp.md) and [the layout](./docs/architecture.md#crates).',
      '![The page](docs/web-terminal.png)',
      '[brush](https://crates.io/crates/brush-core), [below](#set-up), [root](/x), [mail](mailto:a@b.c)',
    ].join('\n')
    expect(absoluteLinks(readme, pkg)).toBe(
      [
        'See [docs/mcp.md](https://github.com/owner/repo/blob/v1.2.3/docs/mcp.md) and ' +
          '[the layout](https://github.com/owner/repo/blob/v1.2.3/docs/architecture.md#crates).',
        '![The page](https://github.com/owner/repo/raw/v1.2.3/docs/web-terminal.png)',
        '[brush](https://crates.io/crates/brush-core), [below](#set-up), [root](/x), [mail](mailto:a@b.c)',
      ].join('\n'),
    )
  })

  it('refuses a manifest that runs anything at install or lacks the repository links', () => {
    expect(() => checkManifest({ ...pkg, scripts: { test: 'vitest', build: 'napi build' } })).not.toThrow()
    expect(() => checkManifest({ ...pkg, scripts: { prepare: 'npm run build', postinstall: 'x' } })).toThrow(
      'shellwright: published with install scripts: prepare, postinstall',
    )
    const { bugs, ...withoutBugs } = pkg
    expect(bugs).toBeDefined()
    expect(() => checkManifest(withoutBugs)).toThrow('shellwright: no bugs')
  })
})
