// Lifecycle contract cases (seed 003 §3, the cases for the features this
// release declares), run twice against the real local backend: in-process
// through the reference host (node/1, kit.epp.infra) and through the exec
// form (node js-shim/epp-stdio.mjs over NDJSON). All traffic is validated
// against docs/epp-methods.json.
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadProvider, startStdioProvider } from '../../host/reference/host.mjs'
import { api, startBackend } from '../../host/backend.mjs'
import { validateTraffic } from '../lib/epp-schema.mjs'
import { rejects } from '../lib/host-assert.mjs'
import { until } from '../../host/wait.mjs'

const pluginDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const MODES = {
  'in-process': (opts) => loadProvider(pluginDir, opts),
  stdio: (opts) => startStdioProvider(pluginDir, opts),
}

const seconds = (iso) => Date.parse(iso) / 1000
const nowS = () => Date.now() / 1000

for (const [mode, start] of Object.entries(MODES)) {
  describe(`lifecycle contract (${mode})`, () => {
    let backend, infra, sp
    const errorsSeen = []
    // Every error message the plugin produced, raw (before host masking).
    const remember = (err) => { errorsSeen.push(JSON.stringify(err.rpc || err.message)); return err }

    before(async () => {
      // The strict backend: a connect that would shorten the lifetime does,
      // so the case below proves the plugin never sends one by accident.
      backend = await startBackend({ extraArgs: ['--connect-may-shorten', '--metrics-interval', '1'] })
      // Config arrives the way abx resolves it: ABX_E2B_WASM_API_KEY and declared aliases.
      infra = await start({ env: { ABX_E2B_WASM_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
      sp = infra.sandbox_protocol
    })

    after(async () => {
      const problems = validateTraffic(infra.traffic)
      await infra.close()
      await backend.stop()
      assert.deepEqual(problems, [], 'traffic must match docs/epp-methods.json')
      for (const text of errorsSeen) assert.ok(!text.includes(backend.apiKey), `secret leaked in ${text}`)
    })

    test('declared features are known, and equal what initialize offers', () => {
      for (const f of ['sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause']) assert.ok(infra.declared.includes(f), f)
      assert.deepEqual([...infra.offered].sort(), [...infra.declared].sort())
      assert.equal(infra.initializeResult.provider.id, 'e2b-wasm')
    })

    test('create, get, list, connect, kill twice', async () => {
      const rec = await sp.create({ template: 'base', timeout: 120, metadata: { suite: mode, n: '1' }, envs: { A: '1' } })
      assert.match(rec.sandbox_id, /^[a-z0-9]+$/)
      assert.equal(rec.status, 'running')
      assert.equal(rec.template, 'base')
      assert.deepEqual(rec.metadata, { suite: mode, n: '1' })
      assert.equal(rec.envd_access_token, undefined, 'no envd token without passthrough')
      // like sandbox.get: when it was created and when it expires
      assert.ok(Math.abs(seconds(rec.expires_at) - seconds(rec.created_at) - 120) <= 1, JSON.stringify(rec))

      const got = await sp.get(rec.sandbox_id)
      assert.equal(got.sandbox_id, rec.sandbox_id)
      assert.equal(got.status, 'running')
      assert.deepEqual(got.metadata, { suite: mode, n: '1' })
      assert.ok(Math.abs(seconds(got.expires_at) - seconds(got.created_at) - 120) <= 1)

      const listed = await sp.list({ metadata: { suite: mode } })
      assert.deepEqual(listed.sandboxes.map((s) => s.sandbox_id), [rec.sandbox_id])
      assert.equal(listed.next_token, null)
      const none = await sp.list({ metadata: { suite: 'nobody' } })
      assert.deepEqual(none.sandboxes, [])

      const connected = await sp.connect(rec.sandbox_id)
      assert.equal(connected.status, 'running')

      assert.deepEqual(await sp.kill(rec.sandbox_id), { sandbox_id: rec.sandbox_id, killed: true })
      assert.deepEqual(await sp.kill(rec.sandbox_id), { sandbox_id: rec.sandbox_id, killed: false }, 'killing twice is not an error')
      await rejects(sp.get(rec.sandbox_id), (err) => {
        remember(err)
        assert.equal(err.code, 'E2009')
        assert.equal(err.rpc.code, -32002)
      })
    })

    test('list follows every page, or returns one page with a cursor', async () => {
      const ids = []
      for (let i = 0; i < 5; i++) ids.push((await sp.create({ metadata: { paging: mode } })).sandbox_id)
      const all = await sp.list({ metadata: { paging: mode } })
      assert.deepEqual(all.sandboxes.map((s) => s.sandbox_id).sort(), [...ids].sort())
      const seen = []
      let token
      do {
        const page = await sp.list({ metadata: { paging: mode }, limit: 2, ...(token ? { next_token: token } : {}) })
        assert.ok(page.sandboxes.length <= 2)
        seen.push(...page.sandboxes.map((s) => s.sandbox_id))
        token = page.next_token
      } while (token)
      assert.deepEqual(seen.sort(), [...ids].sort())
      await sp.pause(ids[0])
      const paused = await sp.list({ metadata: { paging: mode }, state: 'paused' })
      assert.deepEqual(paused.sandboxes.map((s) => s.sandbox_id), [ids[0]])
      for (const id of ids) await sp.kill(id)
    })

    test('set_timeout moves expires_at', async () => {
      const { sandbox_id } = await sp.create({ timeout: 60 })
      const before = nowS()
      assert.deepEqual(await sp.setTimeout(sandbox_id, 600.2), { sandbox_id, timeout: 601 })
      const got = await sp.get(sandbox_id)
      assert.ok(Math.abs(seconds(got.expires_at) - (before + 601)) <= 2, `expires_at ${got.expires_at}`)
      await sp.kill(sandbox_id)
    })

    test('pause and resume; pausing twice is idempotent', async () => {
      const { sandbox_id } = await sp.create({ timeout: 120 })
      assert.deepEqual(await sp.pause(sandbox_id), { sandbox_id, status: 'paused', changed: true })
      assert.equal((await sp.get(sandbox_id)).status, 'paused')
      assert.deepEqual(await sp.pause(sandbox_id), { sandbox_id, status: 'paused', changed: false })
      const resumed = await sp.resume(sandbox_id)
      assert.equal(resumed.status, 'running')
      assert.equal((await sp.get(sandbox_id)).status, 'running')
      const again = await sp.resume(sandbox_id) // resuming a running sandbox changes nothing
      assert.equal(again.status, 'running')
      await sp.kill(sandbox_id)
    })

    test('connect and resume without a timeout never shorten the lifetime (E2B would reset it to 300 s)', async () => {
      const { sandbox_id } = await sp.create({ timeout: 3600 })
      const c = await sp.connect(sandbox_id)
      assert.ok(seconds(c.expires_at) - nowS() > 3500, `connect shortened the lifetime: ${c.expires_at}`)
      // A paused sandbox's clock stands still: resuming without a timeout
      // gives back what it had left (the next test shows it exactly).
      await sp.pause(sandbox_id)
      const r = await sp.resume(sandbox_id)
      assert.equal(r.status, 'running')
      assert.ok(seconds(r.expires_at) - nowS() > 3500, `resume shortened the lifetime: ${r.expires_at}`)
      const c2 = await sp.connect(sandbox_id, 3600)
      assert.ok(seconds(c2.expires_at) - nowS() > 3500)
      const c3 = await sp.connect(sandbox_id)
      assert.ok(seconds(c3.expires_at) - nowS() > 3500, `connect shortened the lifetime: ${c3.expires_at}`)
      // An explicit timeout is the caller's choice and is applied.
      const short = await sp.connect(sandbox_id, 100)
      assert.ok(Math.abs(seconds(short.expires_at) - nowS() - 100) <= 2, `explicit timeout not applied: ${short.expires_at}`)
      await sp.kill(sandbox_id)
    })

    test('resume without a timeout gives back the lifetime left at the pause (not 300 s); a paused record says when it paused and what it has left', async () => {
      const { sandbox_id } = await sp.create({ timeout: 600 })
      const running = await sp.get(sandbox_id)
      await sp.pause(sandbox_id)
      const paused = await sp.get(sandbox_id)
      assert.equal(paused.status, 'paused')
      assert.equal(paused.expires_at, undefined, 'a paused sandbox does not expire')
      assert.equal(paused.created_at, running.created_at)
      // Exactly what was left: the end it had, minus the moment it paused.
      assert.equal(Math.round(paused.lifetime_left * 1000), Date.parse(running.expires_at) - Date.parse(paused.paused_at), JSON.stringify(paused))
      assert.ok(paused.lifetime_left > 500, JSON.stringify(paused))
      // Its clock stands still while it is paused.
      await until(() => Date.now() > Date.parse(paused.paused_at) + 3000, 'three seconds paused')
      assert.equal((await sp.get(sandbox_id)).lifetime_left, paused.lifetime_left)
      const listed = (await sp.list({ state: 'paused' })).sandboxes.find((s) => s.sandbox_id === sandbox_id)
      assert.equal(listed.lifetime_left, paused.lifetime_left)
      const from = Date.now()
      const r = await sp.resume(sandbox_id)
      const to = Date.now()
      assert.equal(r.status, 'running')
      assert.equal(r.lifetime_left, undefined)
      assert.equal(r.paused_at, undefined)
      // The backend set endAt = its now + the whole seconds left (rounded up), its now within [from, to].
      const kept = Math.ceil(paused.lifetime_left) * 1000
      const end = Date.parse(r.expires_at)
      assert.ok(end >= from + kept - 1 && end <= to + kept + 1,
        `expires_at ${r.expires_at} should be ${kept / 1000} s after the resume (between ${new Date(from).toISOString()} and ${new Date(to).toISOString()})`)
      // created_at is the latest start: E2B starts a resumed sandbox afresh.
      assert.ok(Date.parse(r.created_at) >= from - 1 && Date.parse(r.created_at) <= to + 1, `created_at ${r.created_at}`)
      await sp.kill(sandbox_id)
    })

    test('a paused sandbox is unavailable with data.status "paused" for data-plane calls; a gone one is E2009', async () => {
      const { sandbox_id } = await sp.create({ timeout: 120 })
      assert.equal((await infra.call('exec.run', { sandbox_id, command: 'true' })).exit_code, 0)
      await sp.pause(sandbox_id)
      const paused = (err) => {
        remember(err)
        assert.equal(err.rpc.code, -32015, JSON.stringify(err.rpc))
        assert.equal(err.rpc.data.kind, 'unavailable')
        assert.equal(err.rpc.data.status, 'paused')
        assert.match(err.rpc.message, /is paused: resume it/)
      }
      // this client knows the sandbox: envd's proxy answers "not found", the core asks the control plane
      await rejects(infra.call('exec.run', { sandbox_id, command: 'true' }), paused)
      await rejects(infra.call('exec.start', { sandbox_id, command: 'true' }), paused)
      await rejects(infra.call('process.list', { sandbox_id }), paused)
      await rejects(infra.call('files.read', { sandbox_id, path: '/etc/hostname' }), paused)
      await rejects(infra.call('files.write', { sandbox_id, path: '/tmp/x', content: 'x' }), paused)
      // a client that never saw it learns the state first
      const other = await start({ env: { ABX_E2B_WASM_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
      try {
        await rejects(other.call('exec.run', { sandbox_id, command: 'true' }), paused)
      } finally {
        await other.close()
      }
      await sp.resume(sandbox_id)
      assert.equal((await infra.call('exec.run', { sandbox_id, command: 'echo back' })).stdout, 'back\n')
      // killed behind this client's back: the proxy and the control plane both say gone
      assert.equal((await api(backend, 'DELETE', `/sandboxes/${sandbox_id}`)).status, 204)
      await rejects(infra.call('exec.run', { sandbox_id, command: 'true' }), (err) => {
        remember(err)
        assert.equal(err.rpc.code, -32002)
        assert.equal(err.rpc.data.sdk_code, 'E2009')
        assert.equal(err.rpc.data.status, undefined)
      })
    })

    test('a missing sandbox is E2009 (-32002) for get, connect, set_timeout, pause, resume', async () => {
      for (const call of [() => sp.get('missing0'), () => sp.connect('missing0'), () => sp.setTimeout('missing0', 10),
        () => sp.pause('missing0'), () => sp.resume('missing0'), () => sp.connect('missing0', 30)]) {
        await rejects(call(), (err) => {
          remember(err)
          assert.equal(err.code, 'E2009')
          assert.equal(err.rpc.code, -32002)
          assert.match(err.rpc.message, /Sandbox 'missing0' not found/)
        })
      }
    })

    test('sandbox.metrics (ours): the samples in a range; sandbox.get with metrics: true adds the latest to a running sandbox\'s record', async () => {
      const { sandbox_id } = await sp.create({ template: 'base', timeout: 120 })
      const metrics = (p) => infra.raw('sandbox.metrics', { sandbox_id, ...p })
      if (!backend.limits.memory) { // no memory cgroup of its own: no samples (docs/backend/cgroups-and-limits.md, "Metrics")
        assert.deepEqual(await metrics({}), { sandbox_id, metrics: [] })
        await sp.kill(sandbox_id)
        return
      }
      const { metrics: all } = await until(async () => { const r = await metrics({}); return r.metrics.length >= 3 ? r : null }, 'three samples')
      const m = all[0]
      assert.deepEqual(Object.keys(m).sort(), ['cpu_count', 'cpu_used_pct', 'disk_total', 'disk_used', 'mem_cache', 'mem_total', 'mem_used', 'timestamp', 'timestamp_unix'])
      assert.equal(m.cpu_count, 2)
      assert.equal(m.mem_total, 512 * 1024 * 1024)
      assert.equal(m.timestamp_unix, Math.floor(Date.parse(m.timestamp) / 1000))
      // a range by RFC 3339 time (rounded down) and by Unix seconds (inclusive)
      const from = await metrics({ start: all[1].timestamp })
      assert.ok(from.metrics.length >= 2 && from.metrics.every((s) => s.timestamp_unix >= all[1].timestamp_unix))
      const upTo = await metrics({ end: all[1].timestamp_unix })
      assert.deepEqual(upTo.metrics.map((s) => s.timestamp), all.filter((s) => s.timestamp_unix <= all[1].timestamp_unix).map((s) => s.timestamp))
      await rejects(metrics({ start: '2026-01-01T00:00:00+02:00' }), (err) => assert.equal(remember(err).rpc.data.field, 'start'))
      await rejects(metrics({ end: -1 }), (err) => assert.equal(remember(err).rpc.data.field, 'end'))

      const rec = await infra.raw('sandbox.get', { sandbox_id, metrics: true })
      assert.equal(rec.metrics.cpu_count, 2)
      assert.ok(rec.metrics.timestamp_unix >= all.at(-1).timestamp_unix, 'the latest sample')
      assert.equal((await sp.get(sandbox_id)).metrics, undefined, 'only when asked: one request otherwise')
      await sp.pause(sandbox_id)
      const paused = await infra.raw('sandbox.get', { sandbox_id, metrics: true })
      assert.equal(paused.status, 'paused')
      assert.equal(paused.metrics, undefined, 'a paused sandbox has no current figures')
      assert.ok((await metrics({})).metrics.length >= 3, 'its history stays')
      await sp.kill(sandbox_id)
      await rejects(metrics({}), (err) => assert.equal(remember(err).rpc.code, -32002))
    })

    test('every EPP/1 feature is declared: the plugin has no -32003 left to give', async () => {
      for (const f of ['files.rw', 'ports.url']) assert.ok(infra.features.includes(f), f)
      await rejects(infra.raw('files.read', { sandbox_id: 'x', path: 'etc/hostname' }), (err) => {
        assert.equal(err.rpc.code, -32602, 'a relative path is refused by the plugin, not the host')
        assert.equal(err.rpc.data.field, 'path')
      })
    })

    test('bad params are -32602 naming the field, before any request', async () => {
      await rejects(infra.call('sandbox.create', { timeout: 'soon' }), (err) => {
        assert.equal(err.rpc.code, -32602)
        assert.equal(err.rpc.data.field, 'timeout')
      })
      await rejects(infra.call('sandbox.get', { sandbox_id: '../../etc' }), (err) => assert.equal(err.rpc.data.field, 'sandbox_id'))
      await rejects(infra.call('sandbox.create', { gpu: 1 }), (err) => assert.equal(err.rpc.data.field, 'gpu')) // cannot be honoured
    })
  })

  describe(`error kinds stay distinct (${mode})`, () => {
    test('refused key, unreachable backend, request timeout: three errors, never the secret', async () => {
      const backend = await startBackend()
      const wrongKey = 'sk-wrong-DO-NOT-LEAK-0123456789'
      const bad = await start({ env: { E2B_API_KEY: wrongKey, E2B_API_URL: backend.apiUrl } })
      const auth = await rejects(bad.sandbox_protocol.create({}), (err) => {
        assert.equal(err.rpc.code, -32010)
        assert.equal(err.rpc.data.kind, 'unauthenticated')
        assert.equal(err.rpc.data.http_status, 401)
      })
      assert.ok(!JSON.stringify(auth.rpc).includes(wrongKey) && !auth.message.includes(wrongKey))
      assert.deepEqual(validateTraffic(bad.traffic), [])
      await bad.close()

      const good = await start({ env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, ABX_E2B_WASM_REQUEST_TIMEOUT: '1' } })
      const { sandbox_id } = await good.sandbox_protocol.create({})
      process.kill(backend.pid, 'SIGSTOP') // the backend stops answering
      try {
        await rejects(good.sandbox_protocol.get(sandbox_id), (err) => {
          assert.equal(err.rpc.code, -32013)
          assert.equal(err.rpc.data.kind, 'timeout')
          assert.match(err.rpc.message, /did not answer GET \/sandboxes\/\w+ within 1 s/)
        })
      } finally {
        process.kill(backend.pid, 'SIGCONT')
      }
      assert.equal((await good.sandbox_protocol.get(sandbox_id)).status, 'running', 'the plugin recovers')
      await backend.stop()
      await rejects(good.sandbox_protocol.get(sandbox_id), (err) => {
        assert.equal(err.rpc.code, -32012)
        assert.equal(err.rpc.data.kind, 'unreachable')
        assert.match(err.rpc.message, /connection refused/)
        assert.ok(!err.rpc.message.includes(backend.apiKey))
      })
      assert.deepEqual(validateTraffic(good.traffic), [])
      await good.close()
    })
  })
}
