// The code's layout rules, checked on the source tree: no import circle through three or more
// files in any crate or package (a pair of files that use each other is allowed).
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain ES module of the repo's tools, without types
import { importCircles } from '../tools/import-cycles.mjs'

describe('layout', () => {
  it('has no import circle through three or more files in any crate or package', () => {
    const { circles } = importCircles() as { circles: string[][] }
    expect(circles).toEqual([])
  })
})
