// Reads the project's own C sources the way a linker sees them, for the
// layering test (tests/node/layers.test.mjs): which file defines each exported
// function, and which exported functions each file refers to — by a call or by
// naming it (a pointer in a table is a dependency too). A module is a .c file
// with the header of the same name beside it.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

export function walk(dir, keep = () => true, files = /\.[ch]$/) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name)
    if (statSync(p).isDirectory()) { if (keep(p) && name !== 'node_modules') out.push(...walk(p, keep, files)) } else if (files.test(name)) out.push(p)
  }
  return out
}

// Comments, string and character literals, and preprocessor lines become
// blanks (newlines kept), so identifiers in them are not references.
export function stripC(src) {
  let out = ''
  let i = 0
  while (i < src.length) {
    const c = src[i]
    const n = src[i + 1]
    if (c === '/' && n === '*') {
      const end = src.indexOf('*/', i + 2)
      const seg = src.slice(i, end < 0 ? src.length : end + 2)
      out += seg.replace(/[^\n]/g, ' ')
      i += seg.length
    } else if (c === '/' && n === '/') {
      while (i < src.length && src[i] !== '\n') i++
    } else if (c === '"' || c === "'") {
      let j = i + 1
      while (j < src.length && src[j] !== c) j += src[j] === '\\' ? 2 : 1
      out += c + c
      i = j + 1
    } else if (c === '#' && (i === 0 || src[i - 1] === '\n')) {
      while (i < src.length && src[i] !== '\n') i += src[i] === '\\' && src[i + 1] === '\n' ? 2 : 1
    } else {
      out += c
      i++
    }
  }
  return out
}

// Top-level pieces of a stripped file: { head, body } (body null for a
// declaration ending in ';').
function topLevel(text) {
  const out = []
  let depth = 0
  let start = 0
  let head = null
  let bodyStart = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '{') {
      if (depth === 0) { head = text.slice(start, i); bodyStart = i }
      depth++
    } else if (c === '}') {
      depth--
      if (depth === 0) { out.push({ head, body: text.slice(bodyStart, i + 1) }); start = i + 1 }
    } else if (c === ';' && depth === 0) {
      out.push({ head: text.slice(start, i), body: null })
      start = i + 1
    }
  }
  return out
}

const FUNCTION_HEAD = /(\w+)\s*\(([^()]|\([^()]*\))*\)\s*(__attribute__\s*\(\(.*\)\)\s*)?$/s

// Function definitions of a stripped file: { name, exported, body }.
export function definitions(text) {
  const out = []
  for (const { head, body } of topLevel(text)) {
    if (!body) continue
    const m = head.match(FUNCTION_HEAD)
    if (!m || /=\s*$/.test(head) || /\b(struct|enum|union)\s+\w*\s*$/.test(head)) continue
    out.push({ name: m[1], exported: !/\bstatic\b/.test(head), body })
  }
  return out
}

// Function prototypes of a stripped header.
export function prototypes(text) {
  const out = []
  for (const { head, body } of topLevel(text)) {
    if (body) continue
    const m = head.match(FUNCTION_HEAD)
    if (m && !/\btypedef\b/.test(head) && !/\(\s*\*\s*\w+\s*\)\s*\(/.test(head)) out.push(m[1])
  }
  return out
}

// The module graph of the C files under root: modules (relative path without
// extension), owner (exported function → module), edges (module → Map of
// module → Set of names it refers to). Only the bodies of a header's inline
// functions count as references of the header.
export function moduleGraph(root, files) {
  const mod = (f) => path.relative(root, f).replace(/\.[ch]$/, '')
  const text = new Map(files.map((f) => [f, stripC(readFileSync(f, 'utf8'))]))
  const owner = new Map()
  for (const f of files.filter((x) => x.endsWith('.c'))) {
    for (const d of definitions(text.get(f))) if (d.exported && d.name !== 'main') owner.set(d.name, mod(f))
  }
  const edges = new Map()
  for (const f of files) {
    const me = mod(f)
    if (!edges.has(me)) edges.set(me, new Map())
    const deps = edges.get(me)
    const scan = f.endsWith('.c') ? text.get(f) : definitions(text.get(f)).map((d) => d.body).join('\n')
    // a struct, enum or union tag is a type, not a reference to a function
    for (const m of scan.matchAll(/(?<!\b(?:struct|enum|union)\s+)\b[A-Za-z_]\w*\b/g)) {
      const o = owner.get(m[0])
      if (!o || o === me) continue
      if (!deps.has(o)) deps.set(o, new Set())
      deps.get(o).add(m[0])
    }
  }
  return { owner, edges, text, mod }
}

// The names a header declares for others to use, from its raw text:
// { tags } (struct, union and enum tags it defines with a body) and
// { names } (macros, typedefs, enum constants).
export function declarations(raw) {
  const tags = new Set()
  const names = new Set()
  for (const m of raw.matchAll(/^[ \t]*#[ \t]*define[ \t]+(\w+)/gm)) names.add(m[1])
  const text = stripC(raw)
  for (const m of text.matchAll(/\b(?:struct|union|enum)\s+(\w+)\s*\{/g)) tags.add(m[1])
  for (const m of text.matchAll(/\benum\b[^;{]*\{([^}]*)\}/g)) {
    for (const item of m[1].split(',')) {
      const name = item.trim().match(/^[A-Za-z_]\w*/)
      if (name) names.add(name[0])
    }
  }
  for (const m of text.matchAll(/\btypedef\b[^;]*;/g)) {
    const name = m[0].match(/\(\s*\*\s*(\w+)\s*\)/) || m[0].match(/(\w+)\s*(?:\[[^\]]*\]\s*)*;$/)
    if (name) names.add(name[1])
  }
  return { tags, names }
}

// Uses of declared names in a stripped file: tags used as more than an
// opaque pointer or a forward declaration ("struct x *p", "struct x;" are
// not uses: they need nothing of the type), and other identifiers.
export function nameUses(text) {
  const tags = new Set()
  for (const m of text.matchAll(/\b(struct|union|enum)\s+(\w+)\b(?!\s*[*;])/g)) tags.add(m[2])
  for (const m of text.matchAll(/\benum\s+(\w+)\b/g)) tags.add(m[1])
  const names = new Set(text.match(/\b[A-Za-z_]\w*\b/g) || [])
  return { tags, names }
}

// Strongly connected components with more than one member (Tarjan).
export function cycles(edges) {
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const on = new Set()
  const out = []
  const visit = (v) => {
    idx.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    on.add(v)
    for (const w of edges.get(v)?.keys() || []) {
      if (!edges.has(w)) continue
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const scc = []
      let w
      do {
        w = stack.pop()
        on.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1) out.push(scc.sort())
    }
  }
  for (const v of edges.keys()) if (!idx.has(v)) visit(v)
  return out
}
