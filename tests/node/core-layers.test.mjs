// The core's layering, as a ratchet (issue 8 §13): which core files call
// functions of which others, from the declarations in core/*.h (and the
// per-file sections of core_internal.h). The core has no call cycle: HTTP
// ops fail through the on_fail their starter set (never up from
// http_ops.c), a call's teardown runs a hook streams register (never into
// streams from calls.c), and no file passes 600 lines. Both lists stay empty.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const core = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../core')
const KNOWN_CYCLE = []
const KNOWN_LONG = []

function owners() {
  const owner = new Map() // function name → module
  for (const file of readdirSync(core).filter((f) => f.endsWith('.h'))) {
    let module = file.replace(/\.h$/, '')
    for (const line of readFileSync(path.join(core, file), 'utf8').split('\n')) {
      const section = line.match(/^\/\* --- (?:calls \()?(\w+)\.c/)
      if (section) module = section[1]
      const decl = line.match(/^[\w\s*]*?\b(e2bw_\w+)\s*\(/)
      if (decl && !line.startsWith('#') && !line.includes('static inline')) owner.set(decl[1], module)
    }
  }
  // handlers declared in methods.h live in the files that define them
  for (const file of readdirSync(core).filter((f) => f.endsWith('.c'))) {
    for (const m of readFileSync(path.join(core, file), 'utf8').matchAll(/^(?:[\w*]+\s+)+\*?(e2bw_\w+)\s*\([^;]*\)\s*\{/gm)) owner.set(m[1], file.replace(/\.c$/, ''))
  }
  return owner
}

function graph() {
  const owner = owners()
  const edges = new Map()
  for (const file of readdirSync(core).filter((f) => f.endsWith('.c'))) {
    const me = file.replace(/\.c$/, '')
    const deps = new Set()
    for (const m of readFileSync(path.join(core, file), 'utf8').matchAll(/\b(e2bw_\w+)\s*\(/g)) {
      const o = owner.get(m[1])
      if (o && o !== me && o !== 'core_internal') deps.add(o)
    }
    edges.set(me, deps)
  }
  return edges
}

// Strongly connected components with more than one member (Tarjan).
function cycles(edges) {
  let index = 0
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), out = []
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v)
    for (const w of edges.get(v) || []) {
      if (!edges.has(w)) continue
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))) } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const scc = []
      let w
      do { w = stack.pop(); on.delete(w); scc.push(w) } while (w !== v)
      if (scc.length > 1) out.push(scc.sort())
    }
  }
  for (const v of edges.keys()) if (!idx.has(v)) visit(v)
  return out
}

test('the core\'s call graph has no cycle beyond the known one, and it does not grow', () => {
  const found = cycles(graph())
  assert.ok(found.length <= 1, `more than one cycle: ${JSON.stringify(found)}`)
  for (const member of found[0] || []) assert.ok(KNOWN_CYCLE.includes(member), `${member} joined the cycle ${JSON.stringify(found[0])}`)
})

test('no core file passes 600 lines but the known one', () => {
  for (const file of readdirSync(core).filter((f) => /\.[ch]$/.test(f))) {
    const lines = readFileSync(path.join(core, file), 'utf8').split('\n').length
    if (!KNOWN_LONG.includes(file)) assert.ok(lines <= 600, `${file}: ${lines} lines`)
  }
})

test('the headers include no cycle', () => {
  const includes = new Map()
  for (const file of readdirSync(core).filter((f) => f.endsWith('.h'))) {
    includes.set(file, new Set([...readFileSync(path.join(core, file), 'utf8').matchAll(/#include "([\w.]+\.h)"/g)].map((m) => m[1])))
  }
  assert.deepEqual(cycles(includes), [])
})
