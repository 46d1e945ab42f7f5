#!/usr/bin/env node
// Finds import circles: files that reach each other through their imports. A pair of files that
// use each other (a module and its parent, say) is allowed; a circle through three or more files
// is what this reports, for every crate under crates/ and for packages/.
//
//   node tools/import-cycles.mjs          prints each circle; exit status 1 when there is one
//
// Rust: a file depends on the module files its `crate::…`, `super::…` and `self::…` paths (and
// its own child modules' `name::…` paths) name; a path is resolved to the deepest module file it
// reaches, and through a `pub use` re-export to the module that defines the item. JavaScript: a
// file depends on the files its relative `require(…)` calls load.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

function walk(dir, ext, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'target') continue
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) walk(full, ext, out)
    else if (full.endsWith(ext)) out.push(full)
  }
  return out
}

/** The module path (`['session', 'queued']`) of a file under a crate's `src/`. */
function modulePath(src, file) {
  const parts = path.relative(src, file).replace(/\.rs$/, '').split(path.sep)
  const last = parts.at(-1)
  if (last === 'mod' || (parts.length === 1 && (last === 'lib' || last === 'main'))) parts.pop()
  return parts
}

/**
 * `code` without its `#[cfg(test)]` modules: unit tests may use any module of their crate, as
 * integration tests do, and are no part of how the crate's own modules depend on each other.
 */
function withoutTests(code) {
  let out = code
  for (;;) {
    const match = out.match(/#\[cfg\(test\)\]\s*mod\s+\w+\s*\{/)
    if (!match) return out
    const open = match.index + match[0].length - 1
    out = out.slice(0, match.index) + out.slice(open + braceGroup(out, open).length + 2)
  }
}

/** The spans of the inline modules (`mod tests { … }`) in `code`. */
function inlineModules(code) {
  const spans = []
  for (const match of code.matchAll(/\bmod\s+\w+\s*\{/g)) {
    const open = match.index + match[0].length - 1
    spans.push([open, open + braceGroup(code, open).length + 1])
  }
  return spans
}

/**
 * Every path a file names after `crate::`, `super::` or `self::`, with `{…}` groups expanded.
 * Inside an inline module, each `super` first leaves one inline module: `super::x` in a file's
 * `mod tests { … }` names the file's own module, written here as `self::x`.
 */
function namedPaths(text) {
  const code = withoutTests(text.replace(/\/\/.*$/gm, '').replace(/"(?:[^"\\]|\\.)*"/g, '""'))
  const spans = inlineModules(code)
  const paths = []
  const re = /\b(crate|super|self)((?:::(?:super|\w+))*)::(\{|\w+)/g
  let match
  while ((match = re.exec(code))) {
    let prefix = [match[1], ...match[2].split('::').filter(Boolean)]
    let depth = spans.filter(([from, to]) => from < match.index && match.index < to).length
    while (depth > 0 && prefix[0] === 'super') {
      prefix = prefix.length > 1 && prefix[1] === 'super' ? prefix.slice(1) : ['self', ...prefix.slice(1)]
      depth--
    }
    if (match[3] === '{') {
      const group = braceGroup(code, re.lastIndex - 1)
      for (const item of splitTop(group)) paths.push([...prefix, ...item.split('::').map((s) => s.trim()).filter(Boolean)])
    } else {
      const tail = code.slice(re.lastIndex).match(/^(?:::\w+)*/)[0]
      paths.push([...prefix, match[3], ...tail.split('::').filter(Boolean)])
    }
  }
  return paths
}

function braceGroup(code, open) {
  let depth = 0
  for (let i = open; i < code.length; i++) {
    if (code[i] === '{') depth++
    else if (code[i] === '}' && --depth === 0) return code.slice(open + 1, i)
  }
  return ''
}

function splitTop(group) {
  const items = []
  let depth = 0
  let start = 0
  for (let i = 0; i <= group.length; i++) {
    const c = group[i]
    if (c === '{') depth++
    else if (c === '}') depth--
    else if ((c === ',' || c === undefined) && depth === 0) {
      const item = group.slice(start, i).trim()
      if (item) {
        const brace = item.indexOf('{')
        if (brace >= 0) {
          const head = item.slice(0, brace).replace(/::\s*$/, '')
          for (const inner of splitTop(braceGroup(item, brace))) items.push(`${head}::${inner}`)
        } else items.push(item.replace(/\s+as\s+\w+$/, ''))
      }
      start = i + 1
    }
  }
  return items
}

function rustGraph(crate) {
  const src = path.join(crate, 'src')
  const files = walk(src, '.rs')
  const byModule = new Map(files.map((f) => [modulePath(src, f).join('::'), f]))
  const graph = new Map(files.map((f) => [f, new Set()]))
  // `pub use a::b::Item;` in a module file: Item → the module path it comes from.
  const reexports = new Map()
  const absolute = (here, p) => {
    let base = p[0] === 'crate' ? [] : [...here]
    let rest = p.slice(1)
    if (p[0] === 'super') base.pop()
    while (rest[0] === 'super') {
      base.pop()
      rest = rest.slice(1)
    }
    if (rest[0] === 'self') rest = rest.slice(1)
    return [...base, ...rest]
  }
  for (const file of files) {
    const here = modulePath(src, file)
    const items = new Map()
    const text = readFileSync(file, 'utf8')
    for (const [statement] of text.matchAll(/^\s*pub(?:\([^)]*\))?\s+use\s+[^;]+;/gm)) {
      const body = statement.replace(/^\s*pub(?:\([^)]*\))?\s+use\s+/, '').replace(/;$/, '')
      const rooted = /^(crate|super|self)::/.test(body) ? body : `self::${body}`
      for (const p of namedPaths(rooted)) {
        const full = absolute(here, p)
        items.set(full.at(-1), full.slice(0, -1))
      }
    }
    reexports.set(here.join('::'), items)
  }
  const resolve = (segments, seen = 0) => {
    for (let n = segments.length; n >= 0; n--) {
      const key = segments.slice(0, n).join('::')
      const file = byModule.get(key)
      if (!file) continue
      const from = reexports.get(key)?.get(segments[n])
      if (from && seen < 8) return resolve([...from, ...segments.slice(n)], seen + 1) ?? file
      return file
    }
    return undefined
  }
  for (const file of files) {
    const here = modulePath(src, file)
    const text = readFileSync(file, 'utf8')
    const targets = []
    for (const p of namedPaths(text)) {
      targets.push(absolute(here, p))
    }
    // A child module named without a prefix: `mod queued;` … `queued::run(…)`.
    for (const [, child] of withoutTests(text).matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm)) {
      if (new RegExp(`\\b${child}::`).test(withoutTests(text).replace(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;/gm, ''))) {
        targets.push([...here, child])
      }
    }
    for (const t of targets) {
      const target = resolve(t)
      if (target && target !== file) {
        graph.get(file).add(target)
        if (process.env.WHY) console.error(`${path.relative(root, file)} -> ${path.relative(root, target)}  (${t.join('::')})`)
      }
    }
  }
  return graph
}

function jsGraph(dir) {
  const files = walk(dir, '.js')
  const graph = new Map(files.map((f) => [f, new Set()]))
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const [, spec] of text.matchAll(/require\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) {
      const target = path.resolve(path.dirname(file), spec)
      const candidate = [target, `${target}.js`, path.join(target, 'index.js')].find((f) => graph.has(f))
      if (candidate && candidate !== file) graph.get(file).add(candidate)
    }
  }
  return graph
}

/**
 * A circle through three or more files, if the graph has one: an edge u → v and a path back from
 * v to u that does not take the edge v → u (so the circle is not just the pair u ↔ v).
 */
function circleOfThree(graph) {
  for (const [u, targets] of graph) {
    for (const v of targets) {
      const before = new Map([[v, null]])
      const queue = [v]
      while (queue.length > 0) {
        const x = queue.shift()
        for (const y of graph.get(x) ?? []) {
          if ((x === v && y === u) || before.has(y)) continue
          before.set(y, x)
          if (y === u) {
            const path = [u]
            for (let at = before.get(u); at !== null; at = before.get(at)) path.unshift(at)
            return [u, ...path]
          }
          queue.push(y)
        }
      }
    }
  }
  return undefined
}

/** Pairs of files that use each other. */
function pairs(graph) {
  const found = []
  for (const [u, targets] of graph) for (const v of targets) if (u < v && graph.get(v)?.has(u)) found.push([u, v])
  return found
}

export function importCircles() {
  const graphs = []
  for (const name of readdirSync(path.join(root, 'crates'))) {
    const crate = path.join(root, 'crates', name)
    if (existsSync(path.join(crate, 'src'))) graphs.push(rustGraph(crate))
  }
  graphs.push(jsGraph(path.join(root, 'packages')))
  const relative = (files) => files.map((f) => path.relative(root, f))
  return {
    circles: graphs.map(circleOfThree).filter(Boolean).map(relative),
    pairs: graphs.flatMap(pairs).map(relative),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { circles, pairs: found } = importCircles()
  for (const pair of found) console.log(`pair   ${pair.join(' ↔ ')}`)
  for (const circle of circles) console.log(`circle ${circle.join(' → ')}`)
  console.log(`${circles.length} circle(s) through three or more files; ${found.length} pair(s)`)
  process.exit(circles.length > 0 ? 1 : 0)
}
