// The host shapes the seed leaves open (docs/host-contract.md), each driven by
// its own small host around provider.mjs and the real local backend:
//   kit.epp.infra with a push dispatcher (send + onMessage) or a
//   request/response one (handle() + onNotification), a host that never
//   sends initialize (the dispatcher takes its config from ctx.options), and
//   ctx.http as a factory of per-origin clients with fetch() or request().
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import create from '../../provider.mjs'
import { startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'

let backend
before(async () => { backend = await startBackend() })
after(async () => { await backend.stop() })

const options = () => ({ api_key: backend.apiKey, api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl })

// A host whose kit.epp.infra hands back the dispatcher itself.
async function buildWith(ctx) {
  const kit = { epp: { infra: async (infraCtx, factory) => factory(infraCtx) } }
  return create(kit).buildInfra(ctx)
}

test('request/response host that never sends initialize: handle() answers, notifications keep the caller\'s ids', async () => {
  const d = await buildWith({ options: options() })
  const notes = []
  d.onNotification = (msg) => notes.push(msg)
  const created = await d.handle({ jsonrpc: '2.0', id: 'c-1', method: 'sandbox.create', params: {} })
  assert.equal(created.id, 'c-1')
  assert.ok(created.result?.sandbox_id, JSON.stringify(created))
  const sid = created.result.sandbox_id
  const started = await d.handle({ jsonrpc: '2.0', id: 77, method: 'exec.start', params: { sandbox_id: sid, command: 'echo one; echo two' } })
  assert.equal(started.id, 77)
  await until(() => notes.some((n) => n.method === 'exec.exit'), 'exec.exit')
  assert.ok(notes.length >= 2)
  for (const n of notes) assert.equal(n.params.request_id, 77) // the host's id, not ours
  assert.equal(notes.filter((n) => n.method === 'exec.output').map((n) => n.params.data).join(''), 'one\ntwo\n')
  const bad = await d.handle(JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'sandbox.get', params: { sandbox_id: '../x' } }))
  assert.equal(bad.id, 'x')
  assert.equal(bad.error.code, -32602)
  await d.handle({ jsonrpc: '2.0', id: 'k', method: 'sandbox.kill', params: { sandbox_id: sid } })
  d.close()
})

test('push host that never sends initialize: the first call works from ctx.options', async () => {
  const d = await buildWith({ options: options() })
  const answers = []
  d.onMessage = (text) => answers.push(JSON.parse(text))
  d.send({ jsonrpc: '2.0', id: 1, method: 'sandbox.list', params: {} })
  await until(() => answers.length, 'the answer')
  assert.deepEqual(answers.map((a) => a.id), [1], 'only the host\'s own answers reach it')
  assert.ok(answers[0].result, JSON.stringify(answers[0]))
  d.close()
})

test('a host that sends initialize itself gets no second one', async () => {
  const d = await buildWith({ options: options() })
  const answers = []
  d.onMessage = (text) => answers.push(JSON.parse(text))
  d.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { config: options() } })
  d.send({ jsonrpc: '2.0', id: 2, method: 'sandbox.list', params: {} })
  await until(() => answers.length === 2, 'both answers')
  assert.ok(answers[0].result && answers[1].result, JSON.stringify(answers))
  d.close()
})

test('a missing api_key names the host\'s config, where a node/1 host takes it from', async () => {
  const d = await buildWith({ options: {} })
  const answer = await d.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol: 'node/1', config: { api_url: backend.apiUrl } } })
  assert.equal(answer.error.code, -32602)
  assert.equal(answer.error.data.field, 'config.api_key')
  assert.match(answer.error.message, /'api_key' is required: set it in the host's config: 'abx config set providers\.e2b-wasm\.api_key', or ABX_E2B_WASM_API_KEY or E2B_API_KEY/)
  d.close()
})

for (const shape of ['fetch', 'request']) {
  test(`ctx.http(opts) as a factory of per-origin clients with ${shape}(): each origin gets its own client`, async () => {
    const made = [] // base_url of each client the plugin asked for
    const used = [] // [client base_url, request origin]
    const http = (opts) => {
      made.push(opts.base_url)
      assert.equal(opts.auth?.kind, 'none') // the core sends its own credentials
      const go = (url, init) => { used.push([opts.base_url, new URL(url).origin]); return fetch(url, init) }
      return shape === 'fetch' ? { fetch: go } : { request: (init) => go(init.url, init) }
    }
    const ctx = { options: options(), http, noAuth: () => ({ kind: 'none' }) }
    const kit = { epp: { infra: async (infraCtx, factory) => factory(infraCtx) } }
    const d = await create(kit).buildInfra(ctx)
    assert.equal(d.transport, 'ctx.http')
    const call = (method, params) => d.handle({ jsonrpc: '2.0', id: method, method, params })
    const sid = (await call('sandbox.create', {})).result.sandbox_id
    const ran = await call('exec.run', { sandbox_id: sid, command: 'echo via-ctx-http' })
    assert.equal(ran.result?.stdout, 'via-ctx-http\n', JSON.stringify(ran))
    await call('sandbox.kill', { sandbox_id: sid })
    const api = new URL(backend.apiUrl).origin
    const envd = new URL(backend.sandboxUrl).origin
    assert.deepEqual([...new Set(made)].sort(), [...new Set([api, envd])].sort())
    for (const [base, origin] of used) assert.equal(base, origin, 'a client only ever serves its own origin')
    assert.ok(used.some(([, o]) => o === envd))
    d.close()
  })
}
