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
import { validateManifest, validateTemplate } from '../../host/reference/manifest.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const manifest = parse(readFileSync(path.join(root, 'abx-provider.toml'), 'utf8'))
const SEED_FEATURES = ['sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause', 'exec.run', 'exec.stream', 'process.manage', 'files.rw', 'ports.url',
  'templates.build'] // the last from the seed's create flow ("a provider without templates.build ...")

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

// [template] (seed 003 section 5; docs/plugin-contract.md, "Template table").
// The seed's two examples, field for field.
const IMAGE_CMD = {
  base_image: 'python:3.12-slim', entrypoint_replaceable: true, server_start: 'image_cmd', cmd: ['python3', 'commands.py'],
  arch: 'linux/amd64', workdir: '/app', reserved_ports: [], registry: 'pull by image URI; private registry auth stays in the provider config',
}
const PLATFORM = {
  base_image: 'registry.example/runtime/base:1', entrypoint_replaceable: false, server_start: 'platform_start_cmd',
  start_cmd: 'agent-sandbox-server serve --port 9000 --commands /opt/app/commands.py', ready_cmd: 'agent-sandbox-server healthcheck --port 9000',
  arch: 'linux/amd64', workdir: '/opt/app', reserved_ports: [5000], registry: 'pull by image URI; private registry auth stays in the provider config',
}
const withChange = (base, change) => {
  const t = { ...base, ...change }
  for (const [k, v] of Object.entries(change)) if (v === undefined) delete t[k]
  return t
}

test('[template]: the seed\'s examples, and what each may leave out or empty, are accepted', () => {
  for (const t of [IMAGE_CMD, PLATFORM,
    withChange(IMAGE_CMD, { reserved_ports: undefined, start_cmd: '', ready_cmd: '' }),
    withChange(IMAGE_CMD, { start_cmd: undefined, ready_cmd: 'curl -sf localhost:9000' }),
    withChange(PLATFORM, { cmd: [], ready_cmd: undefined, reserved_ports: [1, 65535] }),
    withChange(PLATFORM, { cmd: undefined, reserved_ports: undefined })]) {
    assert.doesNotThrow(() => validateTemplate(t), JSON.stringify(t))
  }
})

test('[template]: every rule of the seed refuses with E8014, naming the field', () => {
  const refused = [
    // required fields, and their types
    [IMAGE_CMD, { base_image: undefined }, 'base_image'], [IMAGE_CMD, { base_image: '' }, 'base_image'], [IMAGE_CMD, { base_image: 3 }, 'base_image'],
    [IMAGE_CMD, { entrypoint_replaceable: undefined }, 'entrypoint_replaceable'], [IMAGE_CMD, { entrypoint_replaceable: 'true' }, 'entrypoint_replaceable'],
    [IMAGE_CMD, { server_start: undefined }, 'server_start'], [IMAGE_CMD, { server_start: 'docker_cmd' }, 'server_start'],
    [IMAGE_CMD, { arch: undefined }, 'arch'], [PLATFORM, { arch: '' }, 'arch'], [PLATFORM, { arch: ['linux/amd64'] }, 'arch'],
    [IMAGE_CMD, { workdir: undefined }, 'workdir'], [PLATFORM, { workdir: '' }, 'workdir'],
    [IMAGE_CMD, { registry: undefined }, 'registry'], [PLATFORM, { registry: '' }, 'registry'], [PLATFORM, { registry: true }, 'registry'],
    // image_cmd: cmd a non-empty array of strings; start_cmd left out or empty
    [IMAGE_CMD, { cmd: undefined }, 'cmd'], [IMAGE_CMD, { cmd: [] }, 'cmd'], [IMAGE_CMD, { cmd: 'python3 commands.py' }, 'cmd'],
    [IMAGE_CMD, { cmd: ['python3', 1] }, 'cmd'], [IMAGE_CMD, { start_cmd: 'serve' }, 'start_cmd'],
    // platform_start_cmd: start_cmd a non-empty string; cmd left out or empty
    [PLATFORM, { start_cmd: undefined }, 'start_cmd'], [PLATFORM, { start_cmd: '' }, 'start_cmd'], [PLATFORM, { start_cmd: ['serve'] }, 'start_cmd'],
    [PLATFORM, { cmd: ['python3', 'commands.py'] }, 'cmd'], [PLATFORM, { cmd: '' }, 'cmd'],
    // ready_cmd a string or nothing; reserved_ports integers 1..65535
    [PLATFORM, { ready_cmd: 9000 }, 'ready_cmd'], [IMAGE_CMD, { ready_cmd: null }, 'ready_cmd'],
    [PLATFORM, { reserved_ports: 5000 }, 'reserved_ports'], [PLATFORM, { reserved_ports: [0] }, 'reserved_ports'],
    [PLATFORM, { reserved_ports: [65536] }, 'reserved_ports'], [PLATFORM, { reserved_ports: [80.5] }, 'reserved_ports'],
    [PLATFORM, { reserved_ports: ['80'] }, 'reserved_ports'], [PLATFORM, { reserved_ports: [-1] }, 'reserved_ports'],
  ]
  for (const [base, change, field] of refused) {
    const t = withChange(base, change)
    assert.throws(() => validateTemplate(t), (e) => {
      assert.equal(e.code, 'E8014', JSON.stringify(change))
      assert.equal(e.field, `template.${field}`, JSON.stringify(change))
      assert.ok(e.message.startsWith(`Invalid abx-provider.toml: [template] ${field} `), e.message)
      return true
    }, JSON.stringify(change))
  }
  assert.throws(() => validateTemplate('e2bdev/base'), /Invalid abx-provider\.toml: \[template\] \(table\) must be a table/)
})

test('[template] in a whole manifest: optional, checked when present, and this provider\'s values', async () => {
  const doc = parse(readFileSync(path.join(root, 'abx-provider.toml'), 'utf8'))
  assert.deepEqual({ ...doc.template, registry: undefined }, {
    base_image: 'e2bdev/base', entrypoint_replaceable: false, server_start: 'platform_start_cmd', start_cmd: 'python3 /home/user/commands.py',
    ready_cmd: 'python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 9000), 1)"', arch: 'linux/amd64', workdir: '/home/user',
    reserved_ports: [49983, 50005], registry: undefined,
  })
  await validateManifest(doc, root)
  await validateManifest({ ...doc, template: undefined }, root)
  await assert.rejects(validateManifest({ ...doc, template: { ...doc.template, reserved_ports: [49983, 70000] } }, root),
    (e) => e.code === 'E8014' && e.message.startsWith('Invalid abx-provider.toml: [template] reserved_ports'))
  await assert.rejects(validateManifest({ ...doc, template: { ...doc.template, cmd: ['sh'] } }, root),
    (e) => e.code === 'E8014' && e.field === 'template.cmd')
})
