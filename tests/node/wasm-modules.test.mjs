// The two WebAssembly builds of the core (Emscripten: the committed
// wasm/core.wasm; clang + wasi-libc: build/wasm/core-wasi.wasm) import
// nothing, export the ABI, and behave identically, byte for byte.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ACTION, Core } from '../../js-shim/core-module.mjs'
import { methodsDoc } from '../lib/epp-schema.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const build = process.env.E2BW_BUILD || path.join(root, 'build')
const MODULES = {
  committed: path.join(root, 'wasm', 'core.wasm'),
  emscripten: path.join(build, 'wasm', 'core.wasm'),
  wasi: path.join(build, 'wasm', 'core-wasi.wasm'),
}
const ABI = ['memory', 'core_new', 'core_free', 'input_buffer', 'submit', 'ndjson_feed', 'ndjson_end', 'http_head', 'http_body',
  'http_end', 'http_fail', 'http_hold', 'next_deadline', 'tick', 'next_action', 'action_op', 'action_text', 'action_text_len', 'action_body',
  'action_body_len', 'is_shut_down', 'describe_methods']

test('committed wasm/core.wasm is byte-identical to a fresh build', () => {
  assert.deepEqual(readFileSync(MODULES.committed), readFileSync(MODULES.emscripten),
    'wasm/core.wasm is stale: run ./build.sh update-wasm and commit it')
})

for (const [name, file] of Object.entries(MODULES)) {
  test(`${name}: no imports, the whole ABI exported`, () => {
    const mod = new WebAssembly.Module(readFileSync(file))
    assert.deepEqual(WebAssembly.Module.imports(mod), [])
    const exported = new Set(WebAssembly.Module.exports(mod).map((e) => e.name))
    for (const fn of ABI) assert.ok(exported.has(fn), `${name} lacks export ${fn}`)
  })
}

const T0 = 1767225600000
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { config: { api_key: 'sk-wasm-SECRET-77', api_url: 'http://api.test', sandbox_url: 'http://envd.test', request_timeout: 5 } } }

// A scripted session: every input kind, with HTTP answered by hand. Its
// transcript (every action, in order) must be the same for both modules.
function script(core) {
  const log = []
  const drain = () => { for (const a of core.drain()) log.push([a.kind, a.op, a.text, a.body ? Buffer.from(a.body).toString() : null]); return log.at(-1) }
  const send = (m) => { core.submit(typeof m === 'string' ? m : JSON.stringify(m), T0); return drain() }
  send('garbage')
  send(INIT)
  send({ jsonrpc: '2.0', id: 2, method: 'files.read', params: {} })
  send({ jsonrpc: '2.0', id: 3, method: 'sandbox.get', params: { sandbox_id: 'abc' } })
  const getOp = log.at(-1)[1]
  core.httpHead(getOp, 404, 'content-type: application/json\n', T0)
  core.httpBody(getOp, new TextEncoder().encode('{"code":404,"message":"Sandbox \\"abc\\" doesn\'t exist"}'), T0)
  core.httpEnd(getOp, T0)
  drain()
  send({ jsonrpc: '2.0', id: 4, method: 'sandbox.create', params: { template: 'base', timeout: 30, metadata: { a: 'é' } } })
  const createOp = log.at(-1)[1]
  assert.equal(core.nextDeadline(), T0 + 5000)
  core.tick(T0 + 5000)
  drain()
  send({ jsonrpc: '2.0', id: 5, method: 'sandbox.list', params: { limit: 2 } })
  const listOp = log.at(-1)[1]
  core.httpHead(listOp, 200, 'x-next-token: n2\n', T0)
  core.httpBody(listOp, new TextEncoder().encode('[{"sandboxID":"s1","templateID":"base","state":"running","metadata":{}}'), T0)
  core.httpBody(listOp, new TextEncoder().encode(']'), T0)
  core.httpEnd(listOp, T0)
  drain()
  // an envd stream: the sandbox is learned, then a Start answer split mid-frame
  send({ jsonrpc: '2.0', id: 8, method: 'exec.start', params: { sandbox_id: 'sbx1', command: 'echo é' } })
  const learnOp = log.at(-1)[1]
  core.httpHead(learnOp, 200, '', T0)
  core.httpBody(learnOp, new TextEncoder().encode('{"sandboxID":"sbx1","state":"running","envdAccessToken":"tok-wasm-SECRET"}'), T0)
  core.httpEnd(learnOp, T0)
  drain()
  const startOp = log.at(-1)[1]
  const frame = (flags, obj) => {
    const body = new TextEncoder().encode(JSON.stringify(obj))
    const f = new Uint8Array(5 + body.length)
    f[0] = flags
    new DataView(f.buffer).setUint32(1, body.length)
    f.set(body, 5)
    return f
  }
  const wire = Buffer.concat([frame(0, { event: { start: { pid: 9 } } }), frame(0, { event: { data: { stdout: Buffer.from('é\n').toString('base64') } } }),
    frame(0, { event: { keepalive: {} } }), frame(0, { event: { end: { exited: true, status: 'exit status 0' } } }), frame(2, {})])
  core.httpHead(startOp, 200, 'content-type: application/connect+json\n', T0)
  core.httpBody(startOp, wire.subarray(0, 7), T0)
  core.httpBody(startOp, wire.subarray(7), T0)
  core.httpEnd(startOp, T0)
  drain()
  core.ndjsonFeed(new TextEncoder().encode('{"jsonrpc":"2.0","id":6,"meth'), T0)
  core.ndjsonFeed(new TextEncoder().encode('od":"no.such"}\n{"jsonrpc":"2.0","id":7,"method":"shutdown"}\n'), T0)
  drain()
  return { log, createOp }
}

test('both modules give the same transcript for the same session', async () => {
  const results = {}
  for (const name of ['emscripten', 'wasi']) {
    const core = await Core.create(pathToFileURL(MODULES[name]))
    results[name] = script(core)
    core.free()
  }
  assert.deepEqual(results.wasi.log, results.emscripten.log)

  const msgs = results.emscripten.log.filter((a) => a[0] === ACTION.SEND).map((a) => JSON.parse(a[2]))
  const byId = (id) => msgs.find((m) => m.id === id)
  assert.equal(msgs[0].error.code, -32700)
  assert.equal(msgs[0].id, null)
  assert.deepEqual(byId(1).result.features, ['sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause', 'exec.run', 'exec.stream', 'process.manage'])
  assert.equal(byId(2).error.code, -32003)
  assert.equal(byId(2).error.data.sdk_code, 'E8004')
  assert.equal(byId(3).error.code, -32002)
  assert.equal(byId(3).error.data.sdk_code, 'E2009')
  assert.ok(results.emscripten.log.some((a) => a[0] === ACTION.CANCEL && a[1] === results.emscripten.createOp))
  // the timed-out create looks for the sandbox it may have made (by its own
  // key); shutdown comes first and answers it
  assert.ok(results.emscripten.log.some((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).url.includes('e2bw_create_key')))
  assert.equal(byId(4).error.data.kind, 'canceled')
  assert.equal(byId(5).result.next_token, 'n2')
  assert.equal(byId(6).error.code, -32601)
  assert.deepEqual(byId(7).result, {})
  assert.equal(byId(8).result.pid, 9)
  const notes = msgs.filter((m) => m.method)
  assert.deepEqual(notes.map((m) => m.method), ['exec.output', 'exec.exit'])
  assert.equal(notes[0].params.data, 'é\n')
  assert.equal(notes[0].params.length, 3)
  assert.equal(notes[1].params.exit_code, 0)
  const create = results.emscripten.log.find((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).url.endsWith('/v2/sandboxes'))
  assert.deepEqual(JSON.parse(create[3]), { templateID: 'base', timeout: 30, metadata: { a: 'é', e2bw_create_key: '1767225600000.000-2' } }) // the create's own key: host time + counter
  for (const a of results.emscripten.log) if (a[0] === ACTION.SEND) assert.ok(!a[2].includes('sk-wasm-SECRET-77') && !a[2].includes('tok-wasm-SECRET'))
  const start = results.emscripten.log.find((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).url.endsWith('/process.Process/Start'))
  assert.deepEqual(JSON.parse(start[2]).headers.find(([k]) => k === 'X-Access-Token'), ['X-Access-Token', 'tok-wasm-SECRET'])
})

test('large messages and memory growth: 8 MiB of metadata round-trips', async () => {
  const core = await Core.create(pathToFileURL(MODULES.committed))
  core.submit(JSON.stringify(INIT), T0)
  core.drain()
  const big = 'x'.repeat(8 << 20)
  core.submit(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'sandbox.create', params: { metadata: { big } } }), T0)
  const [http] = core.drain()
  assert.equal(http.kind, ACTION.HTTP)
  assert.equal(JSON.parse(Buffer.from(http.body).toString()).metadata.big.length, big.length)
  core.free()
})

test('oversized NDJSON line: -32600 without buffering it, the stream continues', async () => {
  const core = await Core.create(pathToFileURL(MODULES.committed))
  const chunk = new Uint8Array(1 << 20).fill(0x20)
  for (let i = 0; i < 17; i++) core.ndjsonFeed(chunk, T0)
  core.ndjsonFeed(new TextEncoder().encode('\n' + JSON.stringify(INIT) + '\n'), T0)
  const msgs = core.drain().map((a) => JSON.parse(a.text))
  assert.equal(msgs[0].error.code, -32600)
  assert.equal(msgs[0].id, null)
  assert.ok(msgs[1].result)
  core.free()
})

// The number-typed branch of a param's schema, $refs followed.
function numericSchema(schema) {
  for (let i = 0; schema && i < 5; i++) {
    if (schema.$ref) schema = methodsDoc.definitions[schema.$ref.split('/').pop()]
    else if (schema.oneOf) schema = schema.oneOf.find((s) => s.type === 'integer' || s.type === 'number' || s.$ref)
    else return schema
  }
  return schema || {}
}

test('docs/epp-methods.json matches the core method table', async () => {
  const core = await Core.create(pathToFileURL(MODULES.committed))
  const described = core.describeMethods()
  core.free()
  assert.deepEqual(described.methods.map((m) => m.name), methodsDoc.methods.map((m) => m.name))
  for (const m of described.methods) {
    const doc = methodsDoc.methods.find((d) => d.name === m.name)
    assert.equal(doc.feature, m.feature, m.name)
    assert.equal(doc.implemented, m.implemented, m.name)
    assert.equal(Boolean(doc.optional), m.optional, m.name)
    if (!m.implemented) continue
    const props = Object.keys(doc.params.properties || {}).sort()
    assert.deepEqual(m.params.map((p) => p.name).sort(), props, `${m.name} params`)
    assert.deepEqual(m.params.filter((p) => p.required).map((p) => p.name).sort(), [...(doc.params.required || [])].sort(), `${m.name} required`)
    // numeric ranges come from the core's table, not from memory
    for (const p of m.params.filter((p) => 'minimum' in p)) {
      const schema = numericSchema(doc.params.properties[p.name])
      assert.deepEqual([schema.minimum, schema.maximum], [p.minimum, p.maximum], `${m.name} ${p.name} range`)
    }
  }
  // the manifest declares exactly the features the core derives
  const toml = readFileSync(path.join(root, 'abx-provider.toml'), 'utf8')
  const declared = JSON.parse(toml.match(/^supported\s*=\s*(\[.*\])/m)[1])
  assert.deepEqual(declared, described.features)
})
