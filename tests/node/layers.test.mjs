// The layering of the project's C, as a ratchet (issues 8 and 13). For the
// core and for the local backend alike it reads the sources, finds which
// file's exported functions each file refers to (a call, or a pointer in a
// table), and fails on:
//   - a loop between files (a lower file reaches a higher one only through a
//     pointer the higher one handed it: a registered hook, an op's on_fail);
//   - a header declaring another file's functions (one header per file);
//   - a file over 600 lines, or an include loop between headers.
// For the backend also: a reference from a lower folder to a higher one (or
// across folders of one level), an exported name that does not match its
// file or folder, and a folder whose main header does not say at its top
// what the folder owns and what it may call. The orders are written down in
// README.md ("Architecture") and docs/local-backend.md ("Folders").
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { cycles, moduleGraph, prototypes, stripC, walk } from '../lib/c-sources.mjs'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const MAX_LINES = 600

const components = {
  core: {
    root: path.join(repo, 'core'),
    // include/e2bw.h is the public API: it spans the files that implement it.
    files: () => walk(path.join(repo, 'core'), (dir) => !dir.endsWith('/include')),
    knownLong: [],
  },
}

for (const [name, c] of Object.entries(components)) {
  const files = c.files()
  const { owner, edges, text, mod } = moduleGraph(c.root, files)

  test(`${name}: no loop between files`, () => {
    const found = cycles(edges)
    const detail = found.map((scc) => scc.flatMap((a) => [...edges.get(a)].filter(([b]) => scc.includes(b)).map(([b, names]) => `${a} -> ${b} (${[...names].join(', ')})`)))
    assert.deepEqual(detail, [])
  })

  test(`${name}: each header declares only its own file's functions`, () => {
    const wrong = []
    for (const h of files.filter((f) => f.endsWith('.h'))) {
      for (const fn of prototypes(text.get(h))) {
        if (!owner.has(fn)) wrong.push(`${mod(h)}.h declares ${fn}, which nothing defines`)
        else if (owner.get(fn) !== mod(h)) wrong.push(`${mod(h)}.h declares ${fn} of ${owner.get(fn)}.c`)
      }
    }
    assert.deepEqual(wrong, [])
  })

  test(`${name}: no file over ${MAX_LINES} lines but the known ones`, () => {
    const long = files.filter((f) => readFileSync(f, 'utf8').split('\n').length > MAX_LINES).map((f) => path.relative(c.root, f))
    assert.deepEqual(long.sort(), [...c.knownLong].sort())
  })

  test(`${name}: the headers include no loop`, () => {
    const byBase = new Map(files.map((f) => [path.basename(f), f]))
    const includes = new Map()
    for (const h of files.filter((f) => f.endsWith('.h'))) {
      const deps = new Map()
      for (const m of readFileSync(h, 'utf8').matchAll(/#include "([\w./]+\.h)"/g)) {
        const target = [path.join(c.root, m[1]), path.join(path.dirname(h), m[1])].find((p) => files.includes(p)) || byBase.get(m[1])
        if (target) deps.set(mod(target), new Set([m[1]]))
      }
      includes.set(mod(h), deps)
    }
    assert.deepEqual(cycles(includes), [])
  })
}

test('the scanner sees references, so the checks above can fail', () => {
  const src = stripC('static int helper(void) { return 1; }\nint table_fn(int a) { return a; }\n/* not_a_call() */\nconst void *row[] = { table_fn };\n')
  assert.deepEqual(prototypes(stripC('int a(void);\ntypedef void (*cb)(int);\nstatic inline int b(void) { return 0; }\n')), ['a'])
  assert.ok(src.includes('table_fn };'))
  assert.ok(!src.includes('not_a_call'))
  assert.deepEqual(cycles(new Map([['a', new Map([['b', 1]])], ['b', new Map([['a', 1]])], ['c', new Map()]])), [['a', 'b']])
})
