// provider.mjs, the entry hosts import, is js-shim/ bundled into one module
// by ./build.sh (bundle_provider, esbuild): committed like wasm/core.wasm, so
// it must be what a fresh bundle of today's js-shim/ gives, and stay one
// module (no import of a file of its own; node: builtins only, lazily).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

test('provider.mjs is byte-identical to a fresh bundle of js-shim/', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-bundle-'))
  try {
    const out = path.join(dir, 'provider.mjs')
    const r = spawnSync('bash', ['-c', `. ./build.sh && bundle_provider ${out}`], { cwd: root, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    assert.ok(readFileSync(out, 'utf8') === readFileSync(path.join(root, 'provider.mjs'), 'utf8'),
      'provider.mjs is stale: run ./build.sh update-wasm and commit it')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('provider.mjs is one module: it imports no file, and finds wasm/core.wasm beside itself', async () => {
  const text = readFileSync(path.join(root, 'provider.mjs'), 'utf8')
  const specifiers = [...text.matchAll(/\bimport\s*(?:[\w{}\s,*]+from\s*)?\(?\s*["']([^"']+)["']/g)].map((m) => m[1])
  assert.deepEqual(specifiers.filter((s) => !s.startsWith('node:')), [])
  const { compileCore } = await import('../../js-shim/core-module.mjs')
  const plugin = await import('../../provider.mjs')
  assert.deepEqual(Object.keys(plugin).sort(), ['default', 'useCoreModule'])
  // the bundle's own default module: the same bytes as the sources' default
  let d
  await plugin.default({ epp: { infra: async (ctx, f) => (d = await f(ctx)) } }).buildInfra({ options: {} })
  const answer = await d.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { config: { api_key: 'k' } } })
  assert.ok(answer.result, JSON.stringify(answer))
  d.close()
  assert.ok(await compileCore() instanceof WebAssembly.Module)
})
