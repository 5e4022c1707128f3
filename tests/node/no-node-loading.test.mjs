// The plugin loads and works with no Node-only API on its own code path
// (provider.mjs, js-shim/ except the stdio runner and the Node file loader):
// the sandbox lifecycle and a command run (a) in a Worker whose process, Buffer
// and fetch globals are removed before the plugin is imported, and (b) in a
// node:vm context that never had process, require, fs, Buffer or fetch, whose
// imports are served only from the plugin's files. Both get the bytes of
// core.wasm injected (useCoreModule) and a ctx.http that is not fetch itself.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { startBackend } from '../../host/backend.mjs'

let backend, config
before(async () => {
  backend = await startBackend()
  config = { api_key: backend.apiKey, api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl }
})
after(() => backend.stop())

function checkSummary(s) {
  assert.equal(s.transport, 'ctx.http', 'every request went through ctx.http')
  assert.ok(s.requests >= 6, `ctx.http carried the requests (${s.requests})`)
  assert.equal(s.created, 'running')
  assert.equal(s.got, 'running')
  assert.deepEqual(s.listed, [true])
  assert.deepEqual(s.exec, { stdout: 'héllo 42\n', exit_code: 0 })
  assert.equal(s.kill, true)
  assert.equal(s.killAgain, false)
  assert.equal(s.afterKill, 'E2009')
  assert.deepEqual(s.globals, { process: 'undefined', require: 'undefined', Buffer: 'undefined', fetch: 'undefined' })
}

// Runs in the Worker: takes the Node globals away, then imports the plugin.
// Its ctx.http has no network of its own: each request is sent to the main
// thread over a MessagePort and the answer streamed back (head, chunks, end),
// so the plugin sees only the documented Response-like shape.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
for (const name of ['process', 'Buffer', 'fetch', 'require']) delete globalThis[name]
const open = new Map()
let next = 1
parentPort.on('message', (m) => {
  const r = open.get(m.id)
  if (!r) return
  if (m.head) r.resolve({ status: m.head.status, headers: m.head.headers, body: new ReadableStream({ start(c) { r.body = c } }) })
  else if (m.chunk) r.body.enqueue(m.chunk)
  else if (m.end) { open.delete(m.id); r.body.close() }
  else if (m.error) { open.delete(m.id); const e = Object.assign(new Error(m.error.message), { code: m.error.code }); r.body ? r.body.error(e) : r.reject(e) }
})
const http = () => ({
  fetch(url, init) {
    const id = next++
    return new Promise((resolve, reject) => {
      open.set(id, { resolve, reject })
      if (init.signal) init.signal.addEventListener('abort', () => parentPort.postMessage({ id, abort: true }))
      parentPort.postMessage({ id, request: { url, method: init.method, headers: init.headers, body: init.body } })
    })
  },
})
import(workerData.entry)
  .then((m) => m.lifecycle({ coreBytes: workerData.coreBytes, http, config: workerData.config }))
  .then((summary) => parentPort.postMessage({ summary }), (err) => parentPort.postMessage({ error: String(err && err.stack || err) }))
`

// The main thread's side of the Worker's ctx.http: performs the requests.
function serveHttp(worker) {
  const aborts = new Map()
  worker.on('message', async ({ id, request, abort }) => {
    if (abort) { aborts.get(id)?.abort(); return }
    if (!request) return
    const ctrl = new AbortController()
    aborts.set(id, ctrl)
    try {
      const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal: ctrl.signal })
      worker.postMessage({ id, head: { status: res.status, headers: [...res.headers] } })
      if (res.body) for await (const chunk of res.body) worker.postMessage({ id, chunk })
      worker.postMessage({ id, end: true })
    } catch (err) {
      const code = err.cause?.code || err.code || (err.name === 'AbortError' ? 'ABORT_ERR' : undefined)
      worker.postMessage({ id, error: { message: String(err.message), code } })
    } finally {
      aborts.delete(id)
    }
  })
}

test('lifecycle in a Worker without process, Buffer, require or fetch', async () => {
  const coreBytes = new Uint8Array(readFileSync(new URL('../../wasm/core.wasm', import.meta.url)))
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { entry: new URL('./no-node/lifecycle.mjs', import.meta.url).href, coreBytes, config },
  })
  serveHttp(worker)
  const answer = await Promise.race([
    new Promise((resolve) => worker.on('message', (m) => { if (m.summary || m.error) resolve(m) })),
    new Promise((_, reject) => worker.once('error', reject)),
  ])
  await worker.terminate()
  assert.equal(answer.error, undefined, answer.error)
  checkSummary(answer.summary)
})

test('lifecycle in a node:vm context with no process, require or fs, imports served from the plugin only', async () => {
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['--experimental-vm-modules', new URL('./no-node/vm-host.mjs', import.meta.url).pathname, JSON.stringify(config)],
      { timeout: 60000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)))
  })
  const summary = JSON.parse(out)
  checkSummary(summary)
  // What was loaded: the plugin (one bundled module) and the test's own two modules, no Node file loader.
  assert.deepEqual(summary.loaded.sort(), ['provider.mjs', 'tests/contract/epp-client.mjs', 'tests/node/no-node/lifecycle.mjs'].sort())
})
