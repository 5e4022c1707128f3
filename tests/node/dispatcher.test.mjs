// The JavaScript side: which transport the dispatcher uses, and what reaches
// the EPP caller when the backend misbehaves at the HTTP level (the local
// backend never does, so small raw-TCP servers play those parts).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { after, before, test } from 'node:test'
import { createDispatcher } from '../../js-shim/dispatcher.mjs'
import { startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'
import { methodsDoc } from '../lib/epp-schema.mjs'

let backend
before(async () => { backend = await startBackend() })
after(async () => { await backend.stop() })

// A tiny EPP caller over the dispatcher's message interface.
function client(d) {
  let id = 0
  const pending = new Map()
  d.onMessage = (text) => {
    const msg = JSON.parse(text)
    pending.get(msg.id)?.(msg)
    pending.delete(msg.id)
  }
  return (method, params = {}) => new Promise((resolve) => {
    const n = ++id
    pending.set(n, resolve)
    d.send({ jsonrpc: '2.0', id: n, method, params })
  })
}

const config = (extra = {}) => ({ config: { api_key: backend.apiKey, api_url: backend.apiUrl, ...extra } })

test('a fetch-shaped ctx.http carries every request', async () => {
  const seen = []
  const ctx = {
    options: { api_url: backend.apiUrl },
    http: (opts) => ({ fetch: (url, init) => { seen.push([init.method, url, opts.base_url]); return fetch(url, init) } }),
    noAuth: () => ({ kind: 'none' }),
  }
  const d = await createDispatcher({ ctx })
  assert.equal(d.transport, 'ctx.http')
  const call = client(d)
  await call('initialize', config())
  const rec = (await call('sandbox.create', {})).result
  await call('sandbox.kill', { sandbox_id: rec.sandbox_id })
  assert.deepEqual(seen.map((s) => s[0]), ['POST', 'GET', 'DELETE']) // create, its detail, kill
  assert.equal(seen[0][2], new URL(backend.apiUrl).origin) // one client per origin, made for that origin
  d.close()
})

test('a ctx.http of no usable shape is refused clearly; only an absent one falls back to fetch', async () => {
  for (const http of [() => ({ get() {} }), () => { throw new Error('not this way') }, 'not a function']) {
    await assert.rejects(createDispatcher({ ctx: { options: {}, http } }), /ctx\.http|not this way/)
  }
  const d = await createDispatcher({ ctx: { options: {} } })
  assert.equal(d.transport, 'fetch')
  const call = client(d)
  await call('initialize', config())
  assert.ok((await call('sandbox.list', {})).result)
  d.close()
})

// A raw TCP server that answers every connection with `reply(socket)`.
async function rawServer(reply) {
  const sockets = new Set()
  const server = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); s.once('data', (d) => reply(s, d.toString('latin1'))) })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => { for (const s of sockets) s.destroy(); return new Promise((resolve) => server.close(resolve)) },
  }
}

const misbehaviours = [
  ['cut mid-body', (s) => s.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"sandboxID":"ab'), 'unreachable', /cut while reading/],
  ['closed before any response', (s) => s.destroy(), 'unreachable', /closed before a response|cut/],
  ['not HTTP at all', (s) => s.end('\x00\x01\x02 SSH-2.0-garbage\r\n\r\n'), 'bad_response', /malformed HTTP response/],
  ['200 with a body that is not JSON', (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nnot json'), 'bad_response', /expected a JSON object/],
  ['200 with JSON of the wrong shape', (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]'), 'bad_response', /expected a JSON object/],
  ['an HTML 502 page', (s) => s.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 13\r\n\r\n<html></html>'), 'unavailable', /unavailable \(HTTP 502\)/],
  ['never answers', () => {}, 'timeout', /did not answer GET \/sandboxes\/abc within 0.5 s/],
]

for (const [name, reply, kind, message] of misbehaviours) {
  test(`backend ${name} → ${kind}`, async () => {
    const server = await rawServer(reply)
    const d = await createDispatcher()
    const call = client(d)
    await call('initialize', { config: { api_key: 'sk-never-SHOWN-1234', api_url: server.url, request_timeout: 0.5 } })
    const answer = await call('sandbox.get', { sandbox_id: 'abc' })
    assert.equal(answer.error.data.kind, kind, JSON.stringify(answer))
    assert.match(answer.error.message, message)
    assert.ok(!JSON.stringify(answer).includes('sk-never-SHOWN-1234'))
    // the dispatcher is still usable afterwards
    const again = await call('sandbox.get', { sandbox_id: 'abc' })
    assert.equal(again.error.data.kind, kind)
    d.close()
    await server.close()
  })
}

test('send() from inside onMessage: messages still arrive in the order the core made them', async () => {
  const server = await rawServer(() => {}) // never answers: the get stays in flight
  const d = await createDispatcher()
  const seen = []
  d.onMessage = (text) => {
    const m = JSON.parse(text)
    seen.push(m.id)
    if (m.id === 2) d.send({ jsonrpc: '2.0', id: 'inner', method: 'no.such' }) // re-entrant send
  }
  d.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { config: { api_key: 'k-123456', api_url: server.url } } })
  d.send({ jsonrpc: '2.0', id: 2, method: 'sandbox.get', params: { sandbox_id: 'abc' } })
  // shutdown answers the get (canceled) and then itself, in one go; the host's
  // send from inside the first answer comes after both
  d.send({ jsonrpc: '2.0', id: 3, method: 'shutdown' })
  assert.deepEqual(seen, [1, 2, 3, 'inner'])
  d.close()
  await server.close()
})

test('close() with calls in flight aborts them: the server sees the connection end, the caller hears nothing', async () => {
  let requests = 0
  let ended = 0
  const server = await rawServer((s) => { requests++; s.on('close', () => ended++) })
  const d = await createDispatcher()
  const call = client(d)
  await call('initialize', { config: { api_key: 'k-123456', api_url: server.url } })
  let answered = false
  call('sandbox.get', { sandbox_id: 'abc' }).then(() => { answered = true })
  await until(() => requests === 1, 'the request reached the server')
  d.close()
  await until(() => ended === 1, 'the server saw the aborted request\'s connection close')
  await d.idle()
  assert.equal(answered, false, 'a closed dispatcher sends nothing more')
  await server.close()
})

// An "envd" that misbehaves mid-stream, behind a control plane that knows the sandbox.
const frame = (flags, obj) => {
  const body = Buffer.from(typeof obj === 'string' ? obj : JSON.stringify(obj))
  const head = Buffer.alloc(5)
  head[0] = flags
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}
const streamHead = 'HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\nTransfer-Encoding: chunked\r\n\r\n'
const chunk = (buf) => Buffer.concat([Buffer.from(buf.length.toString(16) + '\r\n'), buf, Buffer.from('\r\n')])
const started = frame(0, { event: { start: { pid: 42 } } })

const envdMisbehaviours = [
  ['cut in the middle of a frame', (s) => { s.write(streamHead); s.write(chunk(Buffer.concat([started, frame(0, { event: { keepalive: {} } }).subarray(0, 7)]))); s.end('0\r\n\r\n') }, 'bad_response', /cut in the middle of a frame/],
  ['ended without an end-of-stream frame', (s) => { s.write(streamHead); s.write(chunk(started)); s.end('0\r\n\r\n') }, 'bad_response', /without an end-of-stream frame/],
  ['garbage frames', (s) => { s.write(streamHead); s.write(chunk(Buffer.concat([started, frame(0, 'not json at all')]))); s.end('0\r\n\r\n') }, 'bad_response', /not a JSON object/],
  ['a compressed frame', (s) => { s.write(streamHead); s.write(chunk(Buffer.concat([started, frame(1, '{}')]))); s.end('0\r\n\r\n') }, 'bad_response', /compressed frame/],
  ['connection dropped after start', (s) => { s.write(streamHead); s.write(chunk(started)); setTimeout(() => s.destroy(), 50) }, 'unreachable', /Cannot reach|cut/],
  ['silence after start (no keepalives)', (s) => { s.write(streamHead); s.write(chunk(started)) }, 'unreachable', /not even a keepalive, for 0.6 s/],
]

for (const [name, reply, kind, message] of envdMisbehaviours) {
  test(`envd ${name} → ${kind}, for exec.run and as exec.exit for exec.start`, async () => {
    const server = await rawServer((s, request) => {
      if (request.startsWith('GET /sandboxes/')) {
        const body = JSON.stringify({ sandboxID: 'sbx1', state: 'running', envdAccessToken: 'tok-never-SHOWN' })
        s.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
      } else reply(s)
    })
    const d = await createDispatcher()
    const exits = []
    const call = client(d)
    const onMessage = d.onMessage
    d.onMessage = (text) => { const m = JSON.parse(text); if (m.method === 'exec.exit') exits.push(m.params); onMessage(text) }
    await call('initialize', { config: { api_key: 'sk-never-SHOWN-1234', api_url: server.url, sandbox_url: server.url, keepalive_interval: 0.2, request_timeout: 2 } })
    const ran = await call('exec.run', { sandbox_id: 'sbx1', command: 'true' })
    assert.equal(ran.error?.data.kind, kind, JSON.stringify(ran))
    assert.match(ran.error.message, message)
    const start = await call('exec.start', { sandbox_id: 'sbx1', command: 'true' })
    assert.equal(start.result.pid, 42)
    await until(() => exits.length, 'exec.exit')
    assert.equal(exits.length, 1, 'exactly one exec.exit')
    assert.equal(exits[0].exit_code, null)
    assert.equal(exits[0].failure.data.kind, kind)
    assert.ok(!JSON.stringify([ran, exits]).match(/never-SHOWN/))
    d.close()
    await server.close()
  })
}

// An envd whose /files misbehaves: a partial body or a dropped upload is a
// typed error, never content or a success.
const filesMisbehaviours = [
  ['GET /files cut short of its Content-Length', 'files.read', { path: '/a.txt' },
    (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b'), ['unreachable', 'bad_response']],
  ['POST /files connection dropped mid-upload', 'files.write', { path: '/a.bin', content: Buffer.alloc(4 << 20, 1).toString('base64'), encoding: 'base64' },
    (s) => s.destroy(), ['unreachable']],
  ['POST /files 200 without confirming the file', 'files.write', { path: '/a.txt', content: 'x' },
    (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]'), ['bad_response']],
]

for (const [name, method, params, reply, kinds] of filesMisbehaviours) {
  test(`envd ${name} → ${kinds.join(' or ')}`, async () => {
    const server = await rawServer((s, request) => {
      if (request.startsWith('GET /sandboxes/')) {
        const body = JSON.stringify({ sandboxID: 'sbx1', state: 'running', envdVersion: '0.6.13', envdAccessToken: 'tok-never-SHOWN' })
        s.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
      } else reply(s)
    })
    const d = await createDispatcher()
    const call = client(d)
    await call('initialize', { config: { api_key: 'sk-never-SHOWN-1234', api_url: server.url, sandbox_url: server.url, request_timeout: 5 } })
    const answer = await call(method, { sandbox_id: 'sbx1', ...params })
    assert.equal(answer.result, undefined, `no success: ${JSON.stringify(answer).slice(0, 200)}`)
    assert.ok(kinds.includes(answer.error?.data.kind), JSON.stringify(answer).slice(0, 300))
    assert.ok(!JSON.stringify(answer).match(/never-SHOWN/))
    d.close()
    await server.close()
  })
}

// The shim moves bytes: whether a message is an answer or a notification,
// and whether it ends its call, is the core's word on each message
// (e2bw.h, e2bw_message), not a list of methods kept here.
test('js-shim names no EPP method and reads no JSON text to route a message', () => {
  const names = [...methodsDoc.methods, ...methodsDoc.notifications].map((m) => m.name)
  for (const file of ['dispatcher.mjs', 'core-module.mjs', 'transport.mjs', 'epp-stdio.mjs']) {
    const code = readFileSync(new URL(`../../js-shim/${file}`, import.meta.url), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').replace(/\s\/\/ .*$/gm, '')
    for (const name of names) assert.ok(!new RegExp(`['"\`]${name.replace('.', '\\.')}['"\`]`).test(code), `js-shim/${file} names '${name}'`)
    assert.ok(!/startsWith\(\s*['"`]\{/.test(code), `js-shim/${file} probes JSON text`)
  }
})

test('handle() with a stream: its notifications carry the caller\'s id up to the one that ends it', async () => {
  const wire = Buffer.concat([started, frame(0, { event: { data: { stdout: Buffer.from('hi\n').toString('base64') } } }),
    frame(0, { event: { end: { exited: true, status: 'exit status 3', exitCode: 3 } } }), frame(2, {})])
  const server = await rawServer((s, request) => {
    if (request.startsWith('GET /sandboxes/')) {
      const body = JSON.stringify({ sandboxID: 'sbx1', state: 'running', envdAccessToken: 'tok-never-SHOWN' })
      s.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
    } else { s.write(streamHead); s.write(chunk(wire)); s.end('0\r\n\r\n') }
  })
  const d = await createDispatcher()
  const notes = []
  d.onNotification = (msg) => notes.push(msg)
  const init = await d.handle({ jsonrpc: '2.0', id: 'i', method: 'initialize', params: { config: { api_key: 'sk-never-SHOWN-1234', api_url: server.url, sandbox_url: server.url } } })
  assert.ok(init.result, JSON.stringify(init))
  for (const id of [41, 'same-id']) {
    notes.length = 0
    const answer = await d.handle({ jsonrpc: '2.0', id, method: 'exec.start', params: { sandbox_id: 'sbx1', command: 'x' } })
    assert.deepEqual([answer.id, answer.result.pid], [id, 42])
    await until(() => notes.some((n) => n.method === 'exec.exit'), 'exec.exit')
    assert.deepEqual(notes.map((n) => [n.method, n.params.request_id]), [['exec.output', id], ['exec.exit', id]])
    assert.equal(notes[1].params.exit_code, 3)
  }
  d.close()
  await server.close()
})

test('a host that never sends initialize, with options the core cannot use: the request that needed them says why', async () => {
  const logged = []
  const d = await createDispatcher({ ctx: { options: { api_url: backend.apiUrl } }, keyHint: 'set it in the test host', log: (l) => logged.push(l) })
  const answer = await d.handle({ jsonrpc: '2.0', id: 1, method: 'sandbox.list', params: {} })
  assert.equal(answer.error?.code, -32602, JSON.stringify(answer))
  assert.equal(answer.error.data.field, 'config.api_key')
  assert.match(answer.error.message, /'api_key' is required: set it in the test host/)
  // the host may still initialize itself, and then works
  const init = await d.handle({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { config: { api_key: backend.apiKey, api_url: backend.apiUrl } } })
  assert.ok(init.result, JSON.stringify(init))
  assert.ok((await d.handle({ jsonrpc: '2.0', id: 3, method: 'sandbox.list', params: {} })).result)
  d.close()
})

test('ctx.options that are no JSON object: the dispatcher is made, says so in its log, and initialize still works', async () => {
  const logged = []
  const d = await createDispatcher({ ctx: { options: { n: 1n } }, log: (l) => logged.push(l) }) // a BigInt has no JSON
  assert.ok(logged.some((l) => /ctx\.options is not a JSON object/.test(l)), JSON.stringify(logged))
  const init = await d.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: config() })
  assert.ok(init.result, JSON.stringify(init))
  d.close()
})
