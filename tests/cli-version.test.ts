// `shellwright --version` prints the version of the package it belongs to.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'

const root = join(__dirname, '..')
const cli = join(root, 'packages', 'cli', 'bin', 'shellwright.js')

it('prints the package version and exits 0', () => {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
  const stdout = execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8', timeout: 10_000 })
  expect(version).toMatch(/^\d+\.\d+\.\d+/)
  expect(stdout).toBe(`${version}\n`)
})
