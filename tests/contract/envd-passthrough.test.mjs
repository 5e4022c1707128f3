// envd_passthrough against the real local backend: the sandbox.create record
// carries the sandbox's own envd URL (the backend's envdUrl), which a host
// calls with plain fetch and only X-Access-Token, no routing header, in both
// host forms (in-process node/1 and the exec form over NDJSON).
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadProvider, startStdioProvider } from '../../host/reference/host.mjs'
import { startBackend } from '../../host/backend.mjs'
import { validateTraffic } from '../lib/epp-schema.mjs'
import { envdClient } from '../../host/connect.mjs'

const pluginDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const MODES = {
  'in-process': (opts) => loadProvider(pluginDir, opts),
  stdio: (opts) => startStdioProvider(pluginDir, opts),
}

for (const [mode, start] of Object.entries(MODES)) {
  describe(`envd_passthrough (${mode})`, () => {
    let backend, infra
    before(async () => {
      backend = await startBackend()
      infra = await start({ env: {
        ABX_E2B_WASM_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl,
        ABX_E2B_WASM_ENVD_PASSTHROUGH: 'true',
      } })
    })
    after(async () => {
      const problems = validateTraffic(infra.traffic)
      await infra.close()
      await backend.stop()
      assert.deepEqual(problems, [], 'traffic must match docs/epp-methods.json')
    })

    test('the create record carries the per-sandbox envd_url, callable with only X-Access-Token', async () => {
      const rec = await infra.sandbox_protocol.create({ template: 'base', timeout: 120 })
      const detail = await (await fetch(`${backend.apiUrl}/sandboxes/${rec.sandbox_id}`,
        { headers: { 'X-API-Key': backend.apiKey } })).json()
      assert.equal(rec.envd_url, detail.envdUrl, "the backend's own URL")
      assert.notEqual(rec.envd_url, backend.sandboxUrl, 'not the shared, header-routed URL')
      assert.match(rec.envd_access_token, /^[0-9a-f]{64}$/)
      assert.equal((await infra.sandbox_protocol.get(rec.sandbox_id)).envd_url, rec.envd_url)

      // Plain fetch, one header: envd's token. No E2b-Sandbox-Id anywhere.
      const list = await fetch(`${rec.envd_url}/process.Process/List`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Access-Token': rec.envd_access_token },
        body: '{}',
      })
      assert.equal(list.status, 200)
      assert.deepEqual(await list.json(), {})
      const envd = envdClient({ sandboxUrl: rec.envd_url, sandboxId: null, token: rec.envd_access_token })
      const run = await envd.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', 'printf passthrough'] } })
      assert.deepEqual(run.end, {})
      const out = run.messages.map((m) => m.event?.data?.stdout).filter(Boolean)
        .map((b) => Buffer.from(b, 'base64').toString()).join('')
      assert.equal(out, 'passthrough')
      const refused = await fetch(`${rec.envd_url}/process.Process/List`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })
      assert.equal(refused.status, 401)
      await infra.sandbox_protocol.kill(rec.sandbox_id)
    })
  })
}
