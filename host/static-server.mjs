// static-server.mjs — a tiny read-only static file server for the playground,
// the browser tests and the manual demo page. Serves the repository root on loopback (port 0 unless
// given), GET/HEAD only, with the MIME types a browser needs for ES modules and
// WebAssembly. Paths outside the root (.., encoded ..), symlinks leading out of
// it, and dot-files/dot-directories (.git, .ci, ...) are refused.
//
//   import { startStaticServer } from './static-server.mjs'
//   const server = await startStaticServer()      // { url, port, close() }
//
// Its command line (playground/serve.mjs, tests/browser/server.mjs) is serve-cli.mjs.
import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const MIME = {
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.toml': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
}

export function mimeType(file) {
  return MIME[path.extname(file).toLowerCase()] || 'application/octet-stream'
}

// Maps a request target to a file inside root, or returns an HTTP status.
async function resolveTarget(root, target) {
  let pathname
  try {
    pathname = new URL(target, 'http://localhost').pathname
  } catch {
    return 400
  }
  // The raw target is checked too: URL parsing already folds '/../' away.
  const raw = target.split(/[?#]/, 1)[0]
  let decoded
  try {
    decoded = decodeURIComponent(pathname)
    decodeURIComponent(raw)
  } catch {
    return 400
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return 400
  const segments = [...decodeURIComponent(raw).split('/'), ...decoded.split('/')]
  if (segments.some((s) => s === '..')) return 403
  if (decoded.split('/').some((s) => s.startsWith('.'))) return 403
  const file = path.resolve(root, '.' + decoded)
  if (file !== root && !file.startsWith(root + path.sep)) return 403
  let real
  try {
    real = await realpath(file)
  } catch {
    return 404
  }
  if (real !== root && !real.startsWith(root + path.sep)) return 403 // a symlink leading out
  const info = await stat(real).catch(() => null)
  if (!info || !info.isFile()) return 404
  return { file: real, size: info.size }
}

/**
 * Starts the server; resolves to { url, port, close() }.
 * json: optional { '/exact/path': value } served as JSON before any file (the
 * serve-cli.mjs hands a page its local backend, key included, this way). It
 * may be filled after the start. Only requests whose Host is this server's own
 * loopback address get it: a page of another site that rebinds its DNS name
 * to 127.0.0.1 is refused, and cross-origin pages cannot read it (no CORS).
 * index: where `/` redirects (none: `/` is a 404).
 */
export async function startStaticServer({ root = repoRoot, port = 0, host = '127.0.0.1', json = {}, index = null } = {}) {
  const realRoot = await realpath(root)
  const ownHosts = new Set() // Host headers of this server, known once it listens
  const server = http.createServer(async (req, res) => {
    const send = (status, text) => {
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' })
      res.end(req.method === 'HEAD' ? undefined : `${status} ${text}\n`)
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD')
      return send(405, 'read-only')
    }
    const pathname = (req.url || '/').split(/[?#]/, 1)[0]
    if (Object.hasOwn(json, pathname)) {
      if (!ownHosts.has(req.headers.host)) return send(403, 'only for this loopback origin')
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' })
      return res.end(req.method === 'HEAD' ? undefined : JSON.stringify(json[pathname]))
    }
    if ((req.url === '/' || req.url === '') && index) {
      res.writeHead(302, { Location: index, 'Cache-Control': 'no-store' })
      return res.end()
    }
    const target = await resolveTarget(realRoot, req.url || '/')
    if (typeof target === 'number') return send(target, http.STATUS_CODES[target])
    res.writeHead(200, {
      'Content-Type': mimeType(target.file),
      'Content-Length': target.size,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    })
    if (req.method === 'HEAD') return res.end()
    const stream = createReadStream(target.file)
    stream.on('error', () => res.destroy())
    stream.pipe(res)
  })
  const sockets = new Set()
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const actual = server.address().port
  ownHosts.add(`${host}:${actual}`).add(`localhost:${actual}`)
  return {
    url: `http://${host}:${actual}`,
    port: actual,
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve())
        for (const s of sockets) s.destroy() // keep-alive connections from the browser
      })
    },
  }
}
