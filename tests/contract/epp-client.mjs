// epp-client.mjs — a minimal host around an EPP/1 dispatcher, with no Node API:
// what the browser runner and the no-Node loading test use where the reference
// host (host/reference/host.mjs, which needs Node) cannot run. It does what the
// contract asks of a host: sends initialize with the config, gates every call
// by the declared features (E8004 without calling the plugin), maps errors to
// SDK codes, masks the secrets in the messages it shows, keeps a traffic log.
//
//   import { createEppClient } from './epp-client.mjs'
//   const dispatcher = await createDispatcher({ fetch })   // js-shim/dispatcher.mjs
//   const client = await createEppClient({ dispatcher, config: { api_key, api_url, sandbox_url } })
//   // client: the shape tests/contract/cases.mjs documents (call, raw, onNotification,
//   //         features, declared, offered, initializeResult, traffic, secrets, close)
//
// Options: declared (features the host allows; default: what initialize offers),
// providerId (default 'e2b-wasm'), secrets (default [config.api_key]),
// callTimeoutMs (default 120000: a call never answered rejects instead of hanging).

export class EppError extends Error {
  constructor(code, message, rpc) {
    super(message)
    this.name = 'EppError'
    this.code = code
    this.rpc = rpc || null
  }
}

// The seed's method → feature table (§2; templates.* for the templates.build its create flow names).
export const METHOD_FEATURE = Object.freeze({
  'sandbox.create': 'sandbox.lifecycle', 'sandbox.get': 'sandbox.lifecycle', 'sandbox.list': 'sandbox.lifecycle',
  'sandbox.kill': 'sandbox.lifecycle', 'sandbox.connect': 'sandbox.lifecycle',
  'sandbox.set_timeout': 'sandbox.timeout', 'sandbox.pause': 'sandbox.pause', 'sandbox.resume': 'sandbox.pause',
  'exec.run': 'exec.run', 'exec.start': 'exec.stream',
  'process.list': 'process.manage', 'process.kill': 'process.manage', 'process.signal': 'process.manage',
  'process.stdin': 'process.manage', 'process.attach': 'process.manage',
  'files.read': 'files.rw', 'files.write': 'files.rw', 'files.list': 'files.rw', 'files.stat': 'files.rw',
  'files.mkdir': 'files.rw', 'files.remove': 'files.rw', 'files.move': 'files.rw', 'files.search': 'files.rw',
  'files.chmod': 'files.rw', 'files.watch': 'files.rw', 'files.unwatch': 'files.rw', 'files.url': 'files.rw',
  'ports.url': 'ports.url',
  'templates.build': 'templates.build', 'templates.get': 'templates.build', 'templates.list': 'templates.build',
  'templates.delete': 'templates.build',
  // docs/plugin-contract.md, "Methods and features": pty.* are optional methods of exec plugins, gated as exec.stream (no "pty" feature)
  'pty.open': 'exec.stream', 'pty.input': 'exec.stream', 'pty.resize': 'exec.stream', 'pty.close': 'exec.stream',
  // docs/code-interpreter.md: code.* are optional methods too, gated as exec.run
  'code.run': 'exec.run', 'code.context.create': 'exec.run', 'code.context.list': 'exec.run',
  'code.context.restart': 'exec.run', 'code.context.remove': 'exec.run',
})

const sdkCodeOf = (e) => (e.data && e.data.sdk_code) || (e.code === -32003 ? 'E8004' : 'E8005')

export async function createEppClient({ dispatcher, config, declared, providerId = 'e2b-wasm', secrets, callTimeoutMs = 120000 }) {
  const masked = (secrets || [config && config.api_key]).filter((s) => typeof s === 'string' && s)
  const mask = (text) => masked.reduce((t, s) => t.split(s).join('****'), String(text))
  const traffic = []
  const pending = new Map()
  const listeners = new Set()
  let nextId = 1
  let closed = false

  dispatcher.onMessage = (text) => {
    let msg
    try { msg = JSON.parse(text) } catch { traffic.push({ dir: 'in', garbage: text }); return }
    traffic.push({ dir: 'in', msg })
    const p = msg.id !== undefined && msg.id !== null ? pending.get(msg.id) : undefined
    if (p) {
      pending.delete(msg.id)
      clearTimeout(p.timer)
      if (msg.error) p.reject(new EppError(sdkCodeOf(msg.error), mask(`${p.method}: ${msg.error.message}`), msg.error))
      else p.resolve(msg.result)
    } else if (msg.method) {
      for (const fn of listeners) fn(msg)
    }
  }

  function request(method, params = {}) {
    if (closed) return Promise.reject(new EppError('E8005', 'provider session is closed'))
    const id = nextId++
    const msg = { jsonrpc: '2.0', id, method, params }
    traffic.push({ dir: 'out', msg })
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new EppError('E8005', `${method}: no answer within ${callTimeoutMs} ms`))
      }, callTimeoutMs)
      pending.set(id, { resolve, reject, method, timer })
      dispatcher.send(JSON.stringify(msg)) // the answer may come synchronously: registered first
    })
  }

  const initializeResult = await request('initialize', {
    protocol: 'node/1', host: { name: 'e2b-wasm-epp-client', version: '0' }, provider_id: providerId,
    config: { ...config }, core: {}, locale: 'en',
  })
  const offered = [...(initializeResult.features || [])]
  const allowed = declared ? [...declared] : offered
  const features = allowed.filter((f) => offered.includes(f))

  return {
    initializeResult,
    declared: allowed,
    offered,
    features,
    traffic,
    secrets: masked,
    async call(method, params = {}) {
      const feature = METHOD_FEATURE[method]
      if (!feature || !features.includes(feature))
        throw new EppError('E8004', `Provider '${providerId}' does not support '${feature || method}'`)
      return request(method, params)
    },
    raw: (method, params) => request(method, params),
    onNotification: (fn) => { listeners.add(fn) },
    async close() {
      if (closed) return
      try { await request('shutdown', {}) } catch { /* already gone */ }
      closed = true
      for (const p of pending.values()) { clearTimeout(p.timer); p.reject(new EppError('E8005', 'provider session is closed')) }
      pending.clear()
      dispatcher.close()
    },
  }
}
