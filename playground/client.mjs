// client.mjs — the playground's EPP/1 client. It loads the plugin exactly as a
// host does (provider.mjs → buildInfra → the dispatcher over wasm/core.wasm),
// with a minimal in-page "host" whose ctx has no http(): the shim then uses the
// browser's own fetch. Everything the page does goes through call() below.
import createProvider from '/provider.mjs'

/** An EPP error answer, with the method it answered and a readable message. */
export class EppError extends Error {
  constructor(method, error) {
    const kind = error?.data?.kind ? `, ${error.data.kind}` : ''
    const sdk = error?.data?.sdk_code ? ` ${error.data.sdk_code}` : ''
    super(`${method}: ${error?.message || 'failed'} (${error?.code}${kind}${sdk})`)
    this.name = 'EppError'
    this.method = method
    this.code = error?.code
    this.data = error?.data || {}
  }
}

// The smallest node/1 host the provider accepts: it runs the dispatcher in-process.
const pageKit = { epp: { infra: (ctx, makeDispatcher) => makeDispatcher(ctx) } }

/** The plugin as this page loads it: provider.mjs → an EPP dispatcher on core.wasm. */
export function openDispatcher() {
  return createProvider(pageKit).buildInfra({})
}

/**
 * connect({ api_key, api_url?, sandbox_url?, domain? }) → Client
 *   client.features            what initialize declared
 *   client.has(feature)        true when declared
 *   client.call(method, params) → result, or throws EppError
 *   client.stream(method, params, onNotification) → result; notifications that
 *       carry this request's id are passed to onNotification (registered before
 *       the request is sent, so none is missed)
 *   client.onTraffic           (dir, msg) => void, every EPP message (for tests)
 *   client.close()
 */
export async function connect(config) {
  const dispatcher = await openDispatcher()
  const pending = new Map() // id → { resolve, method }
  const listeners = new Map() // request id → (notification) => void
  let nextId = 1
  let closed = false

  const client = {
    features: [],
    limits: {},
    onTraffic: null,
    has: (feature) => client.features.includes(feature),
    call: (method, params) => request(method, params, null),
    stream: (method, params, onNotification) => request(method, params, onNotification),
    async close() {
      if (closed) return
      try {
        if (!dispatcher.isShutDown()) await client.call('shutdown', {})
      } catch {
        // Closing anyway: the page is leaving this backend.
      }
      closed = true
      dispatcher.close()
      for (const { reject, method } of pending.values()) reject(new Error(`${method}: connection closed`))
      pending.clear()
    },
  }

  // Objects both ways (the dispatcher's handle() / onNotification): file
  // content and command output reach the page without being written as JSON
  // text and parsed back (docs/host-contract.md).
  dispatcher.onNotification = (msg) => {
    client.onTraffic?.('in', msg)
    const listener = listeners.get(msg.params?.request_id)
    if (listener) listener(msg)
  }
  function answered(msg) {
    if (!msg) return
    client.onTraffic?.('in', msg)
    const waiter = pending.get(msg.id)
    if (!waiter) return
    pending.delete(msg.id)
    if (msg.error) waiter.reject(new EppError(waiter.method, msg.error))
    else waiter.resolve(msg.result)
  }

  function request(method, params, onNotification) {
    if (closed) return Promise.reject(new Error(`${method}: not connected`))
    const id = nextId++
    const msg = { jsonrpc: '2.0', id, method, params: params ?? {} }
    if (onNotification) {
      listeners.set(id, (n) => {
        // exec.exit is always the last one for a request: forget the listener after it.
        if (n.method === 'exec.exit' || n.method === 'files.watch_end') listeners.delete(id)
        onNotification(n)
      })
    }
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, method })
      client.onTraffic?.('out', msg)
      dispatcher.handle(msg).then(answered, (err) => {
        pending.delete(id)
        listeners.delete(id)
        reject(err)
      })
    }).catch((err) => {
      listeners.delete(id)
      throw err
    })
  }

  try {
    const init = await client.call('initialize', { protocol: 'epp/1', config })
    client.features = init.features
    client.limits = init.limits
    client.provider = init.provider
  } catch (err) {
    closed = true
    dispatcher.close()
    throw err
  }
  return client
}
