// The layering of the project's C, as a ratchet. For the
// core and for the local backend alike it reads the sources, finds which
// file's exported functions each file refers to (a call, or a pointer in a
// table), and fails on:
//   - a loop between files (a lower file reaches a higher one only through a
//     pointer the higher one handed it: a registered hook, an op's on_fail);
//   - a header declaring another file's functions (one header per file);
//   - a file over 600 lines, or an include loop between headers.
// For the backend also: a reference from a lower folder to a higher one (or
// across folders of one level), be it a call, an #include of its header or
// a use of what that header declares (a type, a macro, a constant), an
// #include of another folder's private header, an exported name that does not match its
// file or folder, and a folder whose main header does not say at its top
// what the folder owns and what it may call. The orders are written down in
// docs/architecture.md and docs/backend/extending.md ("Folders").
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { cycles, declarations, moduleGraph, nameUses, prototypes, stripC, walk } from '../lib/c-sources.mjs'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const MAX_LINES = 600

const components = {
  core: {
    root: path.join(repo, 'core'),
    // include/e2bw.h is the public API: it spans the files that implement it.
    files: () => walk(path.join(repo, 'core'), (dir) => !dir.endsWith('/include')),
    knownLong: [],
  },
  backend: {
    root: path.join(repo, 'backend'),
    files: () => walk(path.join(repo, 'backend')),
    knownLong: [],
  },
}

// The backend's folders, top to bottom (docs/backend/extending.md, "Folders").
// A file may refer to files of its own folder and of any lower level, never
// to a higher level nor to another folder of its own level. The empty
// folders are the ones the design keeps room for. Each folder has one
// prefix: its files are named with it, and so is every function they export
// (or with the file's name: http/http_reply.c exports reply_*; lib/ has no
// prefix of its own, each file names its functions).
const LEVELS = [
  { '': { prefix: '' } }, // main.c, options.c, state_dir.c: the program
  { api: { prefix: 'api_', main: 'api_routes.h' }, envd: { prefix: 'envd_', main: 'envd_routes.h' } },
  { templates: { prefix: 'templates_' }, snapshots: { prefix: 'snapshots_', main: 'snapshots.h' }, volumes: { prefix: 'volumes_', main: 'volumes.h' }, secrets: { prefix: 'secrets_', main: 'secrets.h' }, warm: { prefix: 'warm_', main: 'warm.h' } },
  {
    'envd/process': { prefix: 'process_', main: 'process_rpc.h' },
    'envd/fs': { prefix: 'fs_', main: 'fs_rpc.h' },
    net: { prefix: 'net_', main: 'net.h' },
    metrics: { prefix: 'metrics_', main: 'metrics.h' },
    images: { prefix: 'images_', main: 'images.h' },
  },
  { registry: { prefix: 'registry_', main: 'registry.h' } },
  {
    runtime: { prefix: 'runtime_', main: 'runtime.h' },
    'runtime/init': { prefix: '' }, // pid 1 of a sandbox: a program of its own
    store: { prefix: 'store_', main: 'store_layers.h' },
    http: { prefix: 'http_', main: 'http_server.h' },
    egress: { prefix: 'egress_', main: 'egress.h' },
  },
  { lib: { prefix: '' } },
]
const FOLDERS = new Map(LEVELS.flatMap((level, rank) => Object.entries(level).map(([dir, f]) => [dir, { ...f, rank }])))
const folderOf = (module) => path.dirname(module) === '.' ? '' : path.dirname(module)

test('backend: every file is in a folder of the order', () => {
  const files = components.backend.files().map((f) => path.relative(components.backend.root, f))
  assert.deepEqual(files.filter((f) => !FOLDERS.has(folderOf(f))), [])
})

test('backend: no reference from a lower folder to a higher one, nor across folders of one level', () => {
  const { edges } = moduleGraph(components.backend.root, components.backend.files())
  const wrong = []
  for (const [from, deps] of edges) {
    const a = FOLDERS.get(folderOf(from))
    for (const [to, names] of deps) {
      const b = FOLDERS.get(folderOf(to))
      if (folderOf(from) !== folderOf(to) && a.rank >= b.rank) wrong.push(`${from} -> ${to} (${[...names].join(', ')})`)
    }
  }
  assert.deepEqual(wrong, [])
})

// A lower floor must not need a higher one's header either: neither include
// it nor use what it declares (a type beyond an opaque pointer, a macro, an
// enum constant, a typedef), even when a header in between brings it along.
// Known exceptions, to be moved down: none.
const knownUp = []
// Headers private to their folder: the runtime's state (struct runtime and
// each sandbox's struct sandbox_rt) is reached from outside only through
// runtime/'s functions.
const PRIVATE = { 'runtime/runtime_state.h': 'runtime' }
const above = (from, to) => folderOf(from) !== folderOf(to) && FOLDERS.get(folderOf(from)).rank >= FOLDERS.get(folderOf(to)).rank

test('backend: no header included from a higher folder, nor across folders of one level', () => {
  const root = components.backend.root
  const files = components.backend.files()
  const wrong = []
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/#\s*include\s+"([\w./-]+\.h)"/g)) {
      const target = [path.join(root, m[1]), path.join(path.dirname(f), m[1])].find((p) => files.includes(p))
      if (target && above(path.relative(root, f), path.relative(root, target))) wrong.push(`${path.relative(root, f)} includes ${m[1]}`)
      // a folder's private state: its own files only
      const own = PRIVATE[m[1]]
      if (own !== undefined && folderOf(path.relative(root, f)) !== own) wrong.push(`${path.relative(root, f)} includes ${m[1]}, private to ${own}/`)
    }
  }
  assert.deepEqual(wrong.filter((w) => !knownUp.includes(w)), [])
  // a known exception that is gone leaves the list
  assert.deepEqual(knownUp.filter((k) => k.includes(' includes ') && !wrong.includes(k)), [])
})

test('backend: no type, macro or constant of a higher folder used in a lower one', () => {
  const root = components.backend.root
  const files = components.backend.files()
  // name -> the folders whose headers declare it (a lower one makes it fine)
  const tagHome = new Map()
  const nameHome = new Map()
  const add = (map, name, file) => { if (!map.has(name)) map.set(name, []); map.get(name).push(file) }
  for (const h of files.filter((f) => f.endsWith('.h'))) {
    const { tags, names } = declarations(readFileSync(h, 'utf8'))
    for (const t of tags) add(tagHome, t, path.relative(root, h))
    for (const n of names) add(nameHome, n, path.relative(root, h))
  }
  const wrong = []
  for (const f of files) {
    const me = path.relative(root, f)
    const uses = nameUses(stripC(readFileSync(f, 'utf8')))
    for (const [kind, used, home] of [['type', uses.tags, tagHome], ['name', uses.names, nameHome]]) {
      for (const n of used) {
        const homes = home.get(n)
        if (homes && homes.every((h) => above(me, h))) wrong.push(`${me} uses ${kind} ${n} of ${homes.join(', ')}`)
      }
    }
  }
  assert.deepEqual(wrong.filter((w) => !knownUp.includes(w)).sort(), [])
  assert.deepEqual(knownUp.filter((k) => k.includes(' uses ') && !wrong.includes(k)), [])
})

test('backend: files and exported functions carry their folder\'s prefix or their file\'s name', () => {
  const { owner, mod } = moduleGraph(components.backend.root, components.backend.files())
  const wrong = []
  for (const f of components.backend.files()) {
    const { prefix } = FOLDERS.get(folderOf(mod(f)))
    const stem = path.basename(f).replace(/\.[ch]$/, '')
    if (prefix && !(stem + '_').startsWith(prefix)) wrong.push(`${mod(f)}: file name without ${prefix}`)
  }
  for (const [fn, module] of owner) {
    const { prefix } = FOLDERS.get(folderOf(module))
    const stem = path.basename(module)
    const names = [stem, prefix && stem.startsWith(prefix) ? stem.slice(prefix.length) : null].filter(Boolean)
    const ok = (prefix && fn.startsWith(prefix)) || names.some((n) => fn === n || fn.startsWith(n + '_'))
    if (!ok) wrong.push(`${fn} in ${module}.c`)
  }
  assert.deepEqual(wrong.sort(), [])
})

test('backend: each folder\'s main header says what the folder owns and what it may call', () => {
  const root = components.backend.root
  for (const [dir, { main }] of FOLDERS) {
    if (!main) continue
    const top = readFileSync(path.join(root, dir, main), 'utf8').match(/^\/\*[\s\S]*?\*\//)?.[0] || ''
    assert.match(top, /\bowns\b/i, `${dir}/${main}: no "owns" in its first comment`)
    assert.match(top, /\bmay call\b/i, `${dir}/${main}: no "may call" in its first comment`)
  }
})

// The backend's one error convention is lib/err.h's struct err. None of the
// shapes a reason used to travel in may come back: a reason buffer and its
// size as parameters, a struct <x>_error of a module's own, a static reason
// buffer, a reason handed out through a const char ** parameter, a reason
// a call returned as a string (const char *why = f(...)), a reason handed to a
// completion callback as a string (const char *error; it takes a
// const struct err *, NULL on success), or a local char why[] it was built in.
const REASON = String.raw`\w*(?:why|reason|refusal|error|err|msg|message)\w*`
const ERROR_SHAPES = [
  [/(?<!const\s+)\bchar\s*\*\s*(?:\w*(?:why|reason)\w*|err)\s*,\s*size_t\s+\w+/g, 'reason buffer parameter'],
  [/\bstruct\s+\w+_error\s*\{/g, 'struct *_error'],
  [new RegExp(String.raw`\bstatic\s+char\s+${REASON}\s*\[`, 'g'), 'static reason buffer'],
  [new RegExp(String.raw`\bconst\s+char\s*\*\s*\*\s*(?:${REASON}|step)\s*[,)]`, 'g'), 'const char ** reason parameter'],
  [/\bconst\s+char\s*\*\s*(?:why|refusal)\w*\s*=\s*\w+\s*\(/g, 'reason returned as a string'],
  [/\bconst\s+char\s*\*\s*error\s*[,)]/g, 'const char *error parameter'],
  [/\bchar\s+why\s*\[/g, 'char why[] buffer'],
]
const errorShapes = (src) => ERROR_SHAPES.flatMap(([re, what]) => [...stripC(src).matchAll(re)].map(() => what))

test('backend: reasons travel up in struct err only, never in the older shapes', () => {
  const found = []
  for (const f of components.backend.files()) {
    for (const what of errorShapes(readFileSync(f, 'utf8'))) found.push(`${path.relative(components.backend.root, f)}: ${what}`)
  }
  assert.deepEqual(found, [])
})

test('the error-shape scanner sees each old shape', () => {
  assert.deepEqual(errorShapes('int f(const char *p, char *why, size_t why_len);\nstruct body_error {\n\tint status;\n};\n' +
    'static const char *g(void) { static char why[512]; return why; }\n/* char *why, size_t n */\nint h(struct err *e);\n' +
    'int p(const char *text, struct ref *r, const char **why);\nstatic char refusal[320];\nint q(int fd, const char **step);\n' +
    'void r(void) { const char *why = g(); const char *name = h2(); static char buf[64]; }\n' +
    'int s(const char *const *layers, const char **leaf, char *out, size_t size);\n' +
    'typedef void (*done_fn)(void *ctx, const char *error);\nstatic void t(void *ctx, int n, const char *error) {}\n' +
    'void u(void) { char why[700]; char pause_why[8]; const char *errors = v(); }\nvoid w(const struct err *error);\n'),
  ['reason buffer parameter', 'struct *_error', 'static reason buffer', 'static reason buffer',
    'const char ** reason parameter', 'const char ** reason parameter', 'reason returned as a string',
    'const char *error parameter', 'const char *error parameter', 'char why[] buffer', 'char why[] buffer'])
})

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
  const decl = declarations('#define LIMIT 1\nstruct rec { int x; };\nenum mode { MODE_A, MODE_B = 2 };\ntypedef void (*done_fn)(int);\nstruct opaque;\n')
  assert.deepEqual([[...decl.tags].sort(), [...decl.names].sort()], [['mode', 'rec'], ['LIMIT', 'MODE_A', 'MODE_B', 'done_fn']])
  const uses = nameUses(stripC('struct rec *p; struct opaque; struct other v; enum mode m; int n = sizeof(struct big);'))
  assert.deepEqual([...uses.tags].sort(), ['big', 'mode', 'other'])
  assert.deepEqual(cycles(new Map([['a', new Map([['b', 1]])], ['b', new Map([['a', 1]])], ['c', new Map()]])), [['a', 'b']])
})

// The JS side: what the demo, the
// benchmarks, the playground and host/ run is a component, never a test
// file, so nothing outside tests/ imports from tests/.
test('no module outside tests/ imports from tests/', () => {
  const offenders = []
  for (const dir of ['bench', 'demo', 'host', 'playground', 'js-shim', 'wasm']) {
    for (const file of walk(path.join(repo, dir), () => true, /\.(mjs|js)$/)) {
      const text = readFileSync(file, 'utf8')
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.[^'"]+)['"]/g)) {
        const target = path.relative(repo, path.resolve(path.dirname(file), m[1]))
        if (target.startsWith('tests/')) offenders.push(`${path.relative(repo, file)} -> ${target}`)
      }
    }
  }
  assert.deepEqual(offenders, [])
})
