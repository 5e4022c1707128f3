// lifecycle.mjs — the sandbox lifecycle through provider.mjs, written for a host
// with no Node API (no process, require, fs, Buffer, fetch): what a Worker or a
// node:vm context runs in no-node-loading.test.mjs. The host side (kit.epp.infra)
// is the environment-neutral client of tests/contract/epp-client.mjs.
//
//   lifecycle({ coreBytes, http, config }) → a summary of what happened
//   coreBytes: the bytes of wasm/core.wasm (the plugin reads no file here)
//   http:      the host's ctx.http(opts) → { fetch(url, init) } (never globalThis.fetch)
import create, { useCoreModule } from '../../../provider.mjs'
import { createEppClient } from '../../contract/epp-client.mjs'

export async function lifecycle({ coreBytes, http, config }) {
  await useCoreModule(coreBytes)
  let requests = 0
  const ctx = {
    id: 'e2b-wasm', features: [], options: config, core: {},
    http(opts) {
      const client = http(opts)
      return { fetch: (url, init) => { requests++; return client.fetch(url, init) } }
    },
    noAuth: () => ({ kind: 'none' }),
  }
  let dispatcher
  const kit = { epp: { async infra(c, factory) { dispatcher = await factory(c); return createEppClient({ dispatcher, config }) } } }
  const client = await create(kit).buildInfra(ctx)
  const out = { transport: dispatcher.transport, features: client.features }
  const rec = await client.call('sandbox.create', { timeout: 60, metadata: { via: 'no-node' } })
  out.created = rec.status
  out.got = (await client.call('sandbox.get', { sandbox_id: rec.sandbox_id })).status
  out.listed = (await client.call('sandbox.list', { metadata: { via: 'no-node' } })).sandboxes.map((s) => s.sandbox_id === rec.sandbox_id)
  const run = await client.call('exec.run', { sandbox_id: rec.sandbox_id, command: 'echo "héllo $((6*7))"' })
  out.exec = { stdout: run.stdout, exit_code: run.exit_code }
  out.kill = (await client.call('sandbox.kill', { sandbox_id: rec.sandbox_id })).killed
  out.killAgain = (await client.call('sandbox.kill', { sandbox_id: rec.sandbox_id })).killed
  try {
    await client.call('sandbox.get', { sandbox_id: rec.sandbox_id })
    out.afterKill = 'found'
  } catch (err) {
    out.afterKill = err.code
  }
  await client.close()
  out.requests = requests
  out.globals = { process: typeof process, require: typeof require, Buffer: typeof Buffer, fetch: typeof fetch }
  return out
}
