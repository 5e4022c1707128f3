// Redirects are not followed: neither the API key nor the envd token goes to
// another origin, and an envd cannot make the host fetch an internal URL.
// Real HTTP servers play the control plane, envd and the redirect targets.
import assert from 'node:assert/strict'
import http from 'node:http'
import { test } from 'node:test'
import { createDispatcher } from '../../js-shim/dispatcher.mjs'

async function server(handler) {
  const seen = []
  const s = http.createServer((req, res) => { seen.push({ method: req.method, url: req.url, headers: req.headers }); handler(req, res) })
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${s.address().port}`, seen, close: () => new Promise((r) => { s.closeAllConnections(); s.close(r) }) }
}

function client(d) {
  let id = 0
  const pending = new Map()
  d.onMessage = (text) => { const m = JSON.parse(text); pending.get(m.id)?.(m); pending.delete(m.id) }
  return (method, params = {}) => new Promise((resolve) => { const n = ++id; pending.set(n, resolve); d.send({ jsonrpc: '2.0', id: n, method, params }) })
}

const KEY = 'sk-3xx-SECRET-123456'
const TOKEN = 'tok-3xx-ENVD-SECRET'

for (const status of [307, 303, 302]) {
  test(`a control plane answering ${status} to another origin gets no request sent there`, async () => {
    const elsewhere = await server((req, res) => res.end('{"sandboxID":"stolen"}'))
    const api = await server((req, res) => { res.writeHead(status, { location: `${elsewhere.url}/collect?x=1` }); res.end() })
    const d = await createDispatcher()
    const call = client(d)
    await call('initialize', { config: { api_key: KEY, api_url: api.url } })
    for (const [method, params] of [['sandbox.create', {}], ['sandbox.get', { sandbox_id: 'abc' }]]) {
      const answer = await call(method, params)
      assert.equal(answer.error?.data.kind, 'bad_response', JSON.stringify(answer))
      assert.equal(answer.error.data.redirect, `${elsewhere.url}/collect`)
      assert.match(answer.error.message, /redirects are not followed/)
      assert.ok(!JSON.stringify(answer).includes(KEY))
    }
    assert.equal(elsewhere.seen.length, 0, 'the other origin received nothing')
    d.close()
    await api.close()
    await elsewhere.close()
  })
}

test('an envd answering 303 to an internal URL: not fetched, not read back, token not sent', async () => {
  const internal = await server((req, res) => res.end('INTERNAL-METADATA-DO-NOT-READ'))
  const envd = await server((req, res) => { res.writeHead(303, { location: `${internal.url}/latest/meta-data` }); res.end() })
  const api = await server((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ sandboxID: 'sbx1', state: 'running', envdAccessToken: TOKEN }))
  })
  const d = await createDispatcher()
  const call = client(d)
  await call('initialize', { config: { api_key: KEY, api_url: api.url, sandbox_url: envd.url } })
  const ran = await call('exec.run', { sandbox_id: 'sbx1', command: 'true' })
  assert.equal(ran.error?.data.kind, 'bad_response', JSON.stringify(ran))
  assert.equal(ran.error.data.redirect, `${internal.url}/latest/meta-data`)
  const listed = await call('process.list', { sandbox_id: 'sbx1' })
  assert.equal(listed.error?.data.kind, 'bad_response', JSON.stringify(listed))
  const text = JSON.stringify([ran, listed])
  assert.ok(!text.includes('INTERNAL-METADATA') && !text.includes(TOKEN))
  assert.equal(internal.seen.length, 0, 'the internal URL was never fetched')
  assert.equal(envd.seen[0].headers['x-access-token'], TOKEN) // envd itself did get it
  d.close()
  await Promise.all([api.close(), envd.close(), internal.close()])
})
