// transport.mjs — how the shim performs the HTTP requests the core asks for.
// A transport is fetch-shaped: (url, init) → Promise<Response-like> with
// status, headers (iterable of [name, value]) and body (a ReadableStream of
// bytes, or null). See docs/host-contract.md for the shapes of ctx.http.
import { NET } from './core-module.mjs'

// A client as ctx.http(opts) may return it: a fetch-like function, an object
// with fetch(url, init), or an object with request(init) (init carries url
// and the path relative to the client's base URL). null: none of these.
function asFetch(client, baseUrl) {
  if (typeof client === 'function') return (u, i) => client(u, i)
  if (client && typeof client.fetch === 'function') return (u, i) => client.fetch(u, i)
  if (client && typeof client.request === 'function') {
    return (u, i) => {
      const url = new URL(u)
      return client.request({ ...i, url: u, path: url.pathname + url.search, base_url: baseUrl })
    }
  }
  return null
}

/** The transport: the host's ctx.http when it has one, else fetch.
 *  ctx.http(opts) is called once per origin the core talks to (the control
 *  plane, and each envd), with that origin as base_url, so the host's
 *  proxy, TLS and envd_dial settings apply to each; the core adds its own
 *  credentials, so auth is ctx.noAuth(). log(line) says which transport each
 *  origin uses (origins only: no paths, no credentials). */
export function pickTransport(ctx, fallback = globalThis.fetch, log = () => {}) {
  if (ctx && ctx.http !== undefined && ctx.http !== null) {
    if (typeof ctx.http !== 'function') throw new Error('e2b-wasm: ctx.http is not a function (expected ctx.http(opts) → client)')
    const options = ctx.options || {}
    const domain = String(options.domain || 'e2b.app')
    const apiBase = String(options.api_url || `https://api.${domain}`).replace(/\/+$/, '')
    const clients = new Map() // origin → fetch-shaped function
    const clientFor = (origin) => {
      if (!clients.has(origin)) {
        const auth = typeof ctx.noAuth === 'function' ? ctx.noAuth() : undefined
        const client = asFetch(ctx.http({ base_url: origin, domain, auth }), origin)
        if (!client) throw new Error('e2b-wasm: ctx.http(opts) returned neither a fetch function nor a client with fetch() or request()')
        clients.set(origin, client)
        log(`e2b-wasm: ${origin} via ctx.http`)
      }
      return clients.get(origin)
    }
    clientFor(new URL(apiBase).origin) // the shape is checked now, not at the first request
    return { fetch: (u, i) => clientFor(new URL(u).origin)(u, i), source: 'ctx.http' }
  }
  if (typeof fallback !== 'function') throw new Error('e2b-wasm: no fetch available and the host gives no ctx.http')
  log('e2b-wasm: every origin via fetch (the host gives no ctx.http)')
  // Called through a closure: a browser's fetch throws "Illegal invocation"
  // when `this` is anything but the window.
  return { fetch: (u, i) => fallback(u, i), source: 'fetch' }
}

/** Maps a thrown fetch error to the core's transport failure kinds. */
export function classifyFailure(err) {
  const codes = []
  for (let e = err, i = 0; e && i < 5; e = e.cause, i++) if (e.code) codes.push(String(e.code))
  const has = (...names) => codes.some((c) => names.includes(c))
  if (has('ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL')) return NET.REFUSED
  if (has('ENOTFOUND', 'EAI_AGAIN')) return NET.DNS
  if (codes.some((c) => c.startsWith('HPE_')) || has('UND_ERR_INFO', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH')) return NET.PROTOCOL
  if (has('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ABORT_ERR')) return NET.RESET
  if (codes.some((c) => c.startsWith('ERR_TLS') || c.includes('CERT') || c.startsWith('ERR_SSL'))) return NET.TLS
  if (err && /terminated|socket|closed/i.test(String(err.message))) return NET.RESET
  return NET.OTHER
}
