// transport.mjs — how the shim performs the HTTP requests the core asks for.
// A transport is fetch-shaped: (url, init) → Promise<Response-like> with
// status, headers (iterable of [name, value]) and body (a ReadableStream of
// bytes, or null). See docs/host-contract.md for the rules on ctx.http.
import { NET } from './core-module.mjs'

/** Picks the host's ctx.http when it yields a fetch-shaped client, else fetch. */
export function pickTransport(ctx, fallback = globalThis.fetch) {
  if (ctx && typeof ctx.http === 'function') {
    try {
      const options = ctx.options || {}
      const domain = String(options.domain || 'e2b.app')
      const base_url = String(options.api_url || `https://api.${domain}`)
      // The core adds its own X-API-Key header, so the host must add none.
      const auth = typeof ctx.noAuth === 'function' ? ctx.noAuth() : undefined
      const client = ctx.http({ base_url, domain, auth })
      if (client && typeof client.fetch === 'function') return { fetch: (u, i) => client.fetch(u, i), source: 'ctx.http' }
      if (typeof client === 'function') return { fetch: (u, i) => client(u, i), source: 'ctx.http' }
    } catch {
      // A ctx.http of another shape: the fallback below is the documented behaviour.
    }
  }
  if (typeof fallback !== 'function') throw new Error('e2b-wasm: no fetch available and ctx.http is not fetch-shaped')
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
