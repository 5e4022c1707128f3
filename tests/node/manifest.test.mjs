// abx-provider.toml uses only what the seed shows (docs/plugin-contract.md): known
// feature names, no [provider] description, config field types "string" and
// "enum"; the numbers and booleans those strings carry are parsed by the
// core, which names the field when one is wrong.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse } from 'smol-toml'
import { createDispatcher } from '../../js-shim/dispatcher.mjs'
import { loadProvider } from '../../host/reference/host.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const manifest = parse(readFileSync(path.join(root, 'abx-provider.toml'), 'utf8'))
const SEED_FEATURES = ['sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause', 'exec.run', 'exec.stream', 'process.manage', 'files.rw', 'ports.url']

test('declared features are all seed feature names (case 1 of abx provider test)', () => {
  for (const f of manifest.features.supported) assert.ok(SEED_FEATURES.includes(f), f)
})

test('only the keys and field types the seed shows', () => {
  assert.deepEqual(Object.keys(manifest.provider).sort(), ['id', 'name', 'version'])
  for (const [key, spec] of Object.entries(manifest.config.fields)) {
    assert.ok(['string', 'enum'].includes(spec.type), `${key}: ${spec.type}`)
    if (spec.type === 'enum') assert.ok(spec.choices.includes(spec.default), key)
    if (spec.default !== undefined) assert.equal(typeof spec.default, 'string', key)
  }
})

test('numbers and booleans from string fields are parsed by the core; a bad one names its field', async () => {
  const env = { ABX_E2B_WASM_API_KEY: 'sk-manifest-1234', ABX_E2B_WASM_API_URL: 'http://127.0.0.1:9' }
  const infra = await loadProvider(root, { env: { ...env, ABX_E2B_WASM_REQUEST_TIMEOUT: '2.5', ABX_E2B_WASM_ENVD_PASSTHROUGH: 'true' } })
  assert.equal(infra.initializeResult.limits.request_timeout, 2.5)
  await infra.close()
  for (const [name, value, field] of [['REQUEST_TIMEOUT', 'soon', 'config.request_timeout'], ['KEEPALIVE_INTERVAL', '-1', 'config.keepalive_interval'],
    ['ENVD_PASSTHROUGH', 'maybe', 'config.envd_passthrough']]) {
    const d = await createDispatcher()
    const answers = []
    d.onMessage = (t) => answers.push(JSON.parse(t))
    const config = { api_key: 'sk-manifest-1234', request_timeout: '60', keepalive_interval: '15', envd_passthrough: 'false' }
    config[name.toLowerCase()] = value
    d.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { config } })
    assert.equal(answers[0].error?.code, -32602, JSON.stringify(answers[0]))
    assert.equal(answers[0].error.data.field, field)
    d.close()
  }
})
