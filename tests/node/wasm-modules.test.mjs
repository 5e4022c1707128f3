// The two WebAssembly builds of the core (Emscripten: the committed
// wasm/core.wasm; clang + wasi-libc: build/wasm/core-wasi.wasm) import
// nothing, export the ABI, and behave identically, byte for byte.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ACTION, Core, DETACHED, MESSAGE } from '../../js-shim/core-module.mjs'
import { methodsDoc } from '../lib/epp-schema.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const build = path.resolve(process.env.E2BW_BUILD || path.join(root, 'build'))
const MODULES = {
  committed: path.join(root, 'wasm', 'core.wasm'),
  emscripten: path.join(build, 'wasm', 'core.wasm'),
  wasi: path.join(build, 'wasm', 'core-wasi.wasm'),
}
const ABI = ['memory', 'core_new', 'core_free', 'input_buffer', 'submit', 'ndjson_feed', 'ndjson_end', 'http_head', 'http_body',
  'http_end', 'http_fail', 'http_hold', 'next_deadline', 'tick', 'next_action', 'action_op', 'action_text', 'action_text_len', 'action_body',
  'action_body_len', 'action_message', 'is_shut_down', 'describe_methods', 'submit_detached', 'set_detach', 'set_key_hint', 'set_host_config']

test('committed wasm/core.wasm is byte-identical to a fresh build', () => {
  assert.deepEqual(readFileSync(MODULES.committed), readFileSync(MODULES.emscripten),
    'wasm/core.wasm is stale: run ./build.sh update-wasm and commit it')
})

// The module's limit: templates.build alone costs about 25.7 KB of it
// (docs/PERFORMANCE.md, "core.wasm size").
test('committed wasm/core.wasm stays within 128 KiB', () => {
  const size = readFileSync(MODULES.committed).length
  assert.ok(size <= 128 * 1024, `core.wasm is ${size} bytes, over 131,072`)
})

// The module's size as the docs quote it: bytes in the benchmark tables,
// KiB there and in README's opening line. A core change that moves the size
// fails here until the docs say the new one.
test('README and docs/PERFORMANCE.md quote the committed module\'s size', () => {
  const size = readFileSync(MODULES.committed).length
  const kib = size / 1024
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
  const perf = readFileSync(path.join(root, 'docs', 'PERFORMANCE.md'), 'utf8')
  const rows = [['README.md', readme.match(/^\| `core\.wasm` size .*$/m)], ['docs/PERFORMANCE.md', perf.match(/^\| core\.wasm size .*$/m)]]
  for (const [file, row] of rows) {
    assert.ok(row, `${file} has its core.wasm size row`)
    const quoted = row[0].match(/\*\*([\d,]+) bytes\*\* \(([\d.]+) KiB/)
    assert.ok(quoted, `${file}: the row quotes '**N bytes** (K KiB': ${row[0]}`)
    assert.equal(Number(quoted[1].replace(/,/g, '')), size, `${file} quotes ${quoted[1]} bytes; wasm/core.wasm has ${size}`)
    assert.equal(quoted[2], kib.toFixed(1), `${file}: ${size} bytes are ${kib.toFixed(1)} KiB`)
  }
  const opening = readme.match(/compiled to an? (\d+) KiB WebAssembly module/)
  assert.ok(opening, 'README opens with the module\'s size in KiB')
  assert.equal(Number(opening[1]), Math.round(kib), `README's opening says ${opening[1]} KiB; the module has ${kib.toFixed(1)}`)
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
  const drain = () => { for (const a of core.drain()) log.push([a.kind, a.op, a.text, a.body ? Buffer.from(a.body).toString() : null, a.message]); return log.at(-1) }
  const send = (m) => { core.submit(typeof m === 'string' ? m : JSON.stringify(m), T0); return drain() }
  send('garbage')
  send(INIT)
  send({ jsonrpc: '2.0', id: 2, method: 'files.read', params: { sandbox_id: 'x', path: 'rel' } })
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
  assert.deepEqual(byId(1).result.features, ['sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause', 'exec.run', 'exec.stream', 'process.manage', 'files.rw', 'ports.url', 'templates.build'])
  assert.equal(byId(2).error.code, -32602) // a relative path
  assert.equal(byId(2).error.data.field, 'path')
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
  // what each message is, as the core marks it: every answer ends its call
  // but exec.start's, whose stream goes on to exec.exit
  const sends = results.emscripten.log.filter((a) => a[0] === ACTION.SEND)
  const marks = Object.fromEntries(sends.map((a) => JSON.parse(a[2])).map((m, i) => ['id' in m ? m.id : m.method, sends[i][4]]))
  const { ANSWER, NOTIFICATION, LAST } = MESSAGE
  assert.deepEqual(marks, { null: ANSWER | LAST, 1: ANSWER | LAST, 2: ANSWER | LAST, 3: ANSWER | LAST, 4: ANSWER | LAST, 5: ANSWER | LAST,
    6: ANSWER | LAST, 7: ANSWER | LAST, 8: ANSWER, 'exec.output': NOTIFICATION, 'exec.exit': NOTIFICATION | LAST })
  for (const a of results.emscripten.log) if (a[0] !== ACTION.SEND) assert.equal(a[4], 0)
  assert.equal(notes[0].params.data, 'é\n')
  assert.equal(notes[0].params.length, 3)
  assert.equal(notes[1].params.exit_code, 0)
  const create = results.emscripten.log.find((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).url.endsWith('/v2/sandboxes'))
  assert.deepEqual(JSON.parse(create[3]), { templateID: 'base', timeout: 30, metadata: { a: 'é', e2bw_create_key: '1767225600000.000-2' } }) // the create's own key: host time + counter
  for (const a of results.emscripten.log) if (a[0] === ACTION.SEND) assert.ok(!a[2].includes('sk-wasm-SECRET-77') && !a[2].includes('tok-wasm-SECRET'))
  const start = results.emscripten.log.find((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).url.endsWith('/process.Process/Start'))
  assert.deepEqual(JSON.parse(start[2]).headers.find(([k]) => k === 'X-Access-Token'), ['X-Access-Token', 'tok-wasm-SECRET'])
})

// Detached strings and the secret scan, whose WebAssembly build runs SIMD
// code (class_mask16, plain_blocks) where core-wasi.wasm runs scalar code:
// file content and output detached, a file write sent detached, and a piece
// of the key planted at every offset of backend text that reaches an error.
function detachedScript(core) {
  const log = []
  const drain = () => { for (const a of core.drain()) log.push([a.kind, a.op, a.text, a.body ? Buffer.from(a.body).toString() : null, a.value ?? null]); return log.at(-1) }
  const answer = (op, status, body, headers = '') => {
    core.httpHead(op, status, headers, T0)
    core.httpBody(op, typeof body === 'string' ? new TextEncoder().encode(body) : body, T0)
    core.httpEnd(op, T0)
    return drain()
  }
  core.setDetach(1)
  core.submit(JSON.stringify(INIT), T0)
  drain()
  core.submit(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'files.read', params: { sandbox_id: 'sbx1', path: '/a', encoding: 'base64' } }), T0)
  const learn = drain()
  const read = answer(learn[1], 200, '{"sandboxID":"sbx1","state":"running","envdAccessToken":"tok-wasm-SECRET","envdVersion":"0.6.13"}')
  const bytes = new Uint8Array(1000).map((_, i) => (i * 131) & 255)
  answer(read[1], 200, bytes, 'content-length: 1000\n')
  for (const text of ['plain ascii text '.repeat(5), 'é ü € 😀 and "quotes" \\ and \n new lines '.repeat(3)]) {
    core.submit(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'files.read', params: { sandbox_id: 'sbx1', path: '/t' } }), T0)
    answer(drain()[1], 200, text)
  }
  const content = Buffer.from(bytes).toString('base64')
  core.submitDetached(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'files.write', params: { sandbox_id: 'sbx1', path: '/w', encoding: 'base64', content: '' } }), 'content', content, T0)
  drain()
  core.submitDetached(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'files.write', params: { sandbox_id: 'sbx1', path: '/w', content: '' } }), 'content', 'a\u0000b', T0)
  drain()
  // core.wasm's strlen and memchr go 16 aligned bytes a step: contents of
  // every length 0..99, after paths that move where the string starts, in
  // text (strlen, the backslash scan) and detached (memchr for a NUL)
  for (let n = 0; n < 100; n++) {
    const content = 'ab\\"c'.repeat(20).slice(0, n)
    const path = '/w' + 'x'.repeat(n % 17)
    core.submit(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'files.write', params: { sandbox_id: 'sbx1', path, content } }), T0)
    drain()
    core.submitDetached(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'files.write', params: { sandbox_id: 'sbx1', path, content: '' } }), 'content', content + (n % 3 ? '' : '\u0000'), T0)
    drain()
  }
  // the parameter check validates base64 16 characters a step in core.wasm:
  // a stray character at every position of 64, then the same text intact
  const good = Buffer.from(bytes.subarray(0, 48)).toString('base64')
  for (let at = 0; at <= good.length; at++) {
    const content = at < good.length ? good.slice(0, at) + '*' + good.slice(at + 1) : good
    core.submit(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'files.write', params: { sandbox_id: 'sbx1', path: '/b', encoding: 'base64', content } }), T0)
    drain()
  }
  const key = INIT.params.config.api_key
  for (let at = 0; at < 40; at++) {
    core.submit(JSON.stringify({ jsonrpc: '2.0', id: 100 + at, method: 'sandbox.get', params: { sandbox_id: 'sbx2' } }), T0)
    const body = 'x'.repeat(at) + key.slice(at % 6, (at % 6) + 8 + (at % 5)) + '-'.repeat(40 - at)
    answer(drain()[1], 500, JSON.stringify({ code: 500, message: body }), 'content-type: application/json\n')
  }
  return { log, content }
}

test('both modules agree on detached strings and the secret scan at every offset', async () => {
  const results = {}
  for (const name of ['emscripten', 'wasi']) {
    const core = await Core.create(pathToFileURL(MODULES[name]))
    results[name] = detachedScript(core)
    core.free()
  }
  assert.deepEqual(results.wasi.log, results.emscripten.log)
  const { log, content } = results.emscripten
  const sends = log.filter((a) => a[0] === ACTION.SEND)
  const byId = (id) => sends.find((a) => JSON.parse(a[2]).id === id)
  assert.equal(byId(2)[1], DETACHED.CONTENT | DETACHED.ASCII)
  assert.equal(JSON.parse(byId(2)[2]).result.content, '')
  assert.equal(byId(2)[4], Buffer.from(new Uint8Array(1000).map((_, i) => (i * 131) & 255)).toString('base64'))
  const texts = sends.filter((a) => JSON.parse(a[2]).id === 3)
  assert.deepEqual(texts.map((a) => a[1]), [DETACHED.CONTENT | DETACHED.ASCII, DETACHED.CONTENT])
  assert.equal(texts[1][4], 'é ü € 😀 and "quotes" \\ and \n new lines '.repeat(3))
  const upload = log.find((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).method === 'POST')
  assert.equal(Buffer.from(upload[3], 'binary').length > 0, true)
  assert.equal(JSON.parse(byId(5)[2]).error.data.field, 'content')
  const uploads = log.filter((a) => a[0] === ACTION.HTTP && JSON.parse(a[2]).method === 'POST').slice(1).map((a) => a[3] ?? '')
  const written = []
  for (let n = 0; n < 100; n++) written.push('ab\\"c'.repeat(20).slice(0, n), ...(n % 3 ? ['ab\\"c'.repeat(20).slice(0, n)] : []))
  assert.deepEqual(uploads.slice(0, written.length), written, 'each content uploaded whole, a detached one with a NUL refused')
  const checks = sends.filter((a) => JSON.parse(a[2]).id === 8).map((a) => JSON.parse(a[2]))
  assert.equal(checks.length, 64, 'the 64 writes with a stray character are refused at once')
  for (const m of checks) assert.equal(m.error.data.field, 'content')
  assert.equal(uploads.length, written.length + 1, 'the intact one is uploaded')
  for (let at = 0; at < 40; at++) {
    const msg = JSON.parse(byId(100 + at)[2])
    assert.match(msg.error.message, /\*\*\*/, `offset ${at}: the key's piece was not replaced`)
    const key = INIT.params.config.api_key
    for (let i = 0; i + 8 <= key.length; i++) assert.ok(!msg.error.message.includes(key.slice(i, i + 8)), `offset ${at}`)
  }
  assert.ok(content.length > 1000)
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

// The Emscripten build decodes base64 and scans output text with WebAssembly
// SIMD; the wasi build (and the native unit tests) run the scalar code. Both
// must give the same exec.output for any output: random bytes of every length
// around the 16-byte blocks, URL-safe and unpadded base64, characters that are
// not base64 at every position of a block, and text that needs escaping.
function outputsOf(core, chunks, encoding) {
  core.submit(JSON.stringify(INIT), T0)
  core.drain()
  core.submit(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'exec.start', params: { sandbox_id: 'sbx1', command: 'x', encoding } }), T0)
  const learnOp = core.drain().at(-1).op
  core.httpHead(learnOp, 200, '', T0)
  core.httpBody(learnOp, new TextEncoder().encode('{"sandboxID":"sbx1","state":"running","envdAccessToken":"t"}'), T0)
  core.httpEnd(learnOp, T0)
  const startOp = core.drain().at(-1).op
  const frame = (flags, text) => {
    const body = new TextEncoder().encode(text)
    const f = new Uint8Array(5 + body.length)
    f[0] = flags
    new DataView(f.buffer).setUint32(1, body.length)
    f.set(body, 5)
    return f
  }
  const wire = Buffer.concat([frame(0, '{"event":{"start":{"pid":9}}}'),
    ...chunks.map((b64) => frame(0, `{"event":{"data":{"stdout":"${b64}"}}}`)),
    frame(0, '{"event":{"end":{"exited":true,"status":"exit status 0"}}}'), frame(2, '{}')])
  core.httpHead(startOp, 200, 'content-type: application/connect+json\n', T0)
  core.httpBody(startOp, wire, T0)
  core.httpEnd(startOp, T0)
  return core.drain().filter((a) => a.kind === ACTION.SEND).map((a) => JSON.parse(a.text)).filter((m) => m.method)
}

test('SIMD and scalar builds decode and escape output identically', async () => {
  let seed = 7
  const random = (n) => Uint8Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24)
  const sessions = []
  const lengths = [...Array(70).keys(), 95, 96, 97, 1000, 65536 + 5]
  // valid standard base64, padded: every length around the blocks
  sessions.push({ encoding: 'base64', chunks: lengths.map((n) => Buffer.from(random(n)).toString('base64')), check: true })
  // URL-safe and unpadded: not the SIMD alphabet, still accepted
  sessions.push({ encoding: 'base64', chunks: lengths.map((n) => Buffer.from(random(n)).toString('base64url')), check: true })
  // one character that is not base64, at each position of the first blocks
  for (let at = 0; at < 40; at += 3) {
    const b64 = Buffer.from(random(60)).toString('base64')
    sessions.push({ encoding: 'base64', chunks: [b64.slice(0, at) + '*' + b64.slice(at + 1)] })
  }
  // text: plain runs broken by quotes, backslashes, controls, UTF-8 (valid and not) at each offset
  const specials = ['"', '\\', '\n', '\x01', '\x7f', 'é', '€', '😀', '\xff', '\xc3']
  const texts = []
  for (const sp of specials) for (let at = 0; at < 34; at += 5) texts.push(Buffer.concat([Buffer.from('a'.repeat(at)), Buffer.from(sp, sp.length === 1 && sp.charCodeAt(0) > 0x7f && sp !== 'é' ? 'latin1' : 'utf8'), Buffer.from('b'.repeat(40))]))
  sessions.push({ encoding: 'utf8', chunks: texts.map((b) => b.toString('base64')), texts })

  for (const s of sessions) {
    const results = {}
    for (const name of ['emscripten', 'wasi']) {
      const core = await Core.create(pathToFileURL(MODULES[name]))
      results[name] = outputsOf(core, s.chunks, s.encoding)
      core.free()
    }
    assert.deepEqual(results.emscripten, results.wasi)
    const outputs = results.emscripten.filter((m) => m.method === 'exec.output')
    const exit = results.emscripten.find((m) => m.method === 'exec.exit')
    if (s.check) {
      const want = s.chunks.filter((c) => c.length).map((c) => Buffer.from(c, 'base64').toString('base64'))
      assert.deepEqual(outputs.map((o) => o.params.data), want)
      assert.equal(exit.params.exit_code, 0)
    } else if (s.texts) {
      assert.equal(exit.params.exit_code, 0)
      const valid = s.texts.filter((b) => Buffer.from(b.toString('utf8')).equals(b))
      for (const b of valid) assert.ok(outputs.some((o) => o.params.data.includes(b.toString('utf8'))), JSON.stringify(b.toString('utf8')))
    } else {
      assert.equal(exit.params.failure.data.kind, 'bad_response')
      assert.match(exit.params.failure.message, /not base64/)
    }
  }
})

// core.wasm scans numbers with wasm/numbers_small.c, the wasi build with
// libc's strtod/sscanf: the same numbers must come out the same, in ids
// echoed back, in parameters turned into requests, and in printed results.
test('numbers: the small strtod of core.wasm agrees with libc (the wasi build)', async () => {
  const ids = [0, 1, -7, 42.5, 1e3, 1.5e-7, 123456789012, 9007199254740993, 12345678901234567890, 1e300, 0.1, 600.2, 2.5e-320]
  const rawIds = ['1e400', '-1e-400', '0.30000000000000004', '123456789012345678901234567890', '1.7976931348623157e308', '4.9e-324', '1E+2', '-0.0e-0']
  const timeouts = ['0.25', '1', '7.5e1', ' 3', '1e2', 'inf', 'nan', '', '2.', '.5', '1e', '-1', '36000000', 7.25, 0.001, '0x10']
  const run = async (name) => {
    const out = []
    const open = async () => Core.create(pathToFileURL(MODULES[name]))
    const send = (core, text) => { core.submit(text, T0); for (const a of core.drain()) out.push([a.kind, a.text, a.body ? Buffer.from(a.body).toString() : null]) }
    const core = await open()
    send(core, JSON.stringify(INIT))
    for (const id of [...ids.map((x) => JSON.stringify(x)), ...rawIds]) send(core, `{"jsonrpc":"2.0","id":${id},"method":"no.such"}`)
    for (const t of [1, 59.9, 600.2, 3600, 1e-3, 86400.5]) send(core, JSON.stringify({ jsonrpc: '2.0', id: 'c', method: 'sandbox.create', params: { timeout: t } }))
    core.free()
    for (const t of timeouts) { // option values: strings are scanned by strtod
      const c = await open()
      send(c, JSON.stringify({ jsonrpc: '2.0', id: 't', method: 'initialize', params: { config: { api_key: 'k', request_timeout: t } } }))
      c.free()
    }
    return out
  }
  const emscripten = await run('emscripten')
  const wasi = await run('wasi')
  // The one intended difference: hexadecimal is not a JSON number, and "0x10"
  // seconds is refused by core.wasm where libc's strtod reads 16.
  assert.deepEqual(emscripten.slice(0, -1), wasi.slice(0, -1))
  assert.equal(JSON.parse(emscripten.at(-1)[1]).error.data.field, 'config.request_timeout')
  assert.equal(JSON.parse(wasi.at(-1)[1]).result.limits.request_timeout, 16)
  const answers = emscripten.filter(([kind, text]) => kind === ACTION.SEND && JSON.parse(text).error?.code === -32601).map(([, text]) => JSON.parse(text).id)
  assert.equal(answers.length, ids.length + rawIds.length, 'every id answered, its text echoed exactly (1e400 too)')
  for (const [i, id] of ids.entries()) assert.equal(answers[i], id, `id ${id}`)
  const bodies = emscripten.filter(([kind, text]) => kind === ACTION.HTTP && text.includes('/sandboxes')).map(([, , body]) => JSON.parse(body).timeout)
  assert.deepEqual(bodies, [1, 60, 601, 3600, 1, 86401])
  const configs = emscripten.slice(-timeouts.length).map(([, text]) => JSON.parse(text))
  assert.equal(configs[0].result.limits.request_timeout, 0.25)
  assert.equal(configs[2].result.limits.request_timeout, 75)
})

// core.wasm encodes base64 with WebAssembly SIMD (12 bytes a step, the rest
// like the scalar code of the wasi build and the unit tests). files.read in
// base64 is the cheapest real path through it: envd's answer is fed by hand,
// and the `offset` of a whole-file (200) answer moves where the encoded bytes
// start, so every length 0..300 is encoded from every offset 0..15 of the
// input buffer; bodies cut in pieces add the carried 1- and 2-byte groups;
// then a few MiB. Each answer must equal Node's own encoding.
function fileReader(core) {
  let id = 10
  core.submit(JSON.stringify(INIT), T0)
  core.drain()
  return (body, { offset = 0, pieces = [body.length] } = {}) => {
    core.submit(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'files.read', params: { sandbox_id: 'sbx1', path: '/f', encoding: 'base64', offset } }), T0)
    let http = core.drain().at(-1)
    if (JSON.parse(http.text).url.includes('/sandboxes/')) { // the sandbox is learned once
      core.httpHead(http.op, 200, '', T0)
      core.httpBody(http.op, new TextEncoder().encode('{"sandboxID":"sbx1","state":"running","envdAccessToken":"t"}'), T0)
      core.httpEnd(http.op, T0)
      http = core.drain().at(-1)
    }
    core.httpHead(http.op, 200, `content-type: application/octet-stream\ncontent-length: ${body.length}\n`, T0)
    let at = 0
    for (const n of pieces) core.httpBody(http.op, body.subarray(at, (at += n)), T0)
    core.httpBody(http.op, body.subarray(at), T0)
    core.httpEnd(http.op, T0)
    const msg = JSON.parse(core.drain().find((a) => a.kind === ACTION.SEND).text)
    assert.equal(msg.id, id)
    assert.ok(msg.result, JSON.stringify(msg.error))
    return msg.result.content
  }
}

test('files.read in base64: every length at every offset, pieces and MiB, as Node encodes them', async () => {
  let seed = 11
  const random = (n) => Buffer.from(Uint8Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24))
  const data = random(316)
  const big = random(3 << 20)
  for (const name of ['emscripten', 'wasi']) {
    const core = await Core.create(pathToFileURL(MODULES[name]))
    const read = fileReader(core)
    for (let offset = 0; offset < 16; offset++) {
      for (let n = 0; n <= 300; n++) {
        const body = data.subarray(0, offset + n)
        assert.equal(read(body, { offset }), body.subarray(offset).toString('base64'), `${name}: ${n} bytes at offset ${offset}`)
      }
    }
    // pieces: 1 and 2 bytes carried into the next piece, at every block position
    const body = data.subarray(0, 300)
    for (let cut = 1; cut < 40; cut++) {
      for (const pieces of [[cut], [cut, 1], [cut, 2], [cut, 13, 1, 17]]) {
        assert.equal(read(body, { pieces }), body.toString('base64'), `${name}: pieces ${pieces}`)
      }
    }
    // sizes around the steps of larger bodies, then 3 MiB in 64 KiB pieces and whole
    for (const n of [4095, 4096, 4097, 65535, 65536, 65537, (1 << 20) - 1, (1 << 20) + 1]) {
      assert.equal(read(big.subarray(0, n)), big.subarray(0, n).toString('base64'), `${name}: ${n} bytes`)
    }
    assert.equal(read(big, { pieces: Array(48).fill(65536) }), big.toString('base64'), `${name}: 3 MiB in pieces`)
    assert.equal(read(big, { offset: 5 }), big.subarray(5).toString('base64'), `${name}: 3 MiB at offset 5`)
    core.free()
  }
})

// core.wasm prints numbers with wasm/printf_small.c and reads them with
// wasm/numbers_small.c, the wasi build with libc's: a seconds option given as
// a JSON number or as text (1 to 19 digits), read, and printed back in
// limits.request_timeout through cJSON's "%1.15g" / sscanf / "%1.17g", must
// come out the same, and within cJSON's tolerance (it keeps 15 digits when
// they read back within one DBL_EPSILON) of the double the host computes.
test('numbers: the small printf and strtod of core.wasm agree with libc over many values', async () => {
  let seed = 11
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32
  const inputs = []
  for (let i = 0; i < 1200; i++) {
    const v = 10 ** (-3 + rnd() * 6.55) // 0.001 .. 3548: the option's whole range, every magnitude
    if (i % 3 === 0) inputs.push(v) // shortest round-trip text, read by cJSON's strtod
    else if (i % 3 === 1) inputs.push(v.toPrecision(1 + (i % 19))) // text, read by the core's strtod
    else inputs.push(Math.round(v * 2 ** 20) / 2 ** 20) // dyadic: exact ties at some precisions
  }
  inputs.push(0.1 + 0.2, 1.005, 2.675, 0.001, 3600, '3599.9999999999999999', '0.0010000000000000002', 1 / 3, 2 / 3)
  const run = async (name) => {
    const out = []
    for (const t of inputs) {
      const core = await Core.create(pathToFileURL(MODULES[name]))
      core.submit(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { config: { api_key: 'k', request_timeout: t } } }), T0)
      out.push(...core.drain().map((a) => a.text))
      core.free()
    }
    return out
  }
  const emscripten = await run('emscripten')
  assert.deepEqual(emscripten, await run('wasi'))
  for (const [i, text] of emscripten.entries()) {
    const want = (Number(inputs[i]) * 1000) / 1000, got = JSON.parse(text).result.limits.request_timeout
    assert.ok(Math.abs(got - want) <= want * Number.EPSILON, `${inputs[i]} printed as ${got}`)
  }
})
