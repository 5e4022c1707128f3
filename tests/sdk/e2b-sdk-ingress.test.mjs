// Ingress by host name, as on E2B, with the official SDK: the `domain` the
// create answer carries makes sandbox.getHost(port) "<port>-<id>.<domain>"
// (default localhost:<envd port>), which the envd listener routes by Host;
// network.allowPublicTraffic false gives a trafficAccessToken that every
// request to a sandbox port must carry in e2b-traffic-access-token (403
// otherwise, before anything reaches the sandbox); maskRequestHost is the
// Host the sandbox's server sees. Requests go to 127.0.0.1 with that Host:
// the name resolution a browser does itself for *.localhost (the Chromium
// case in tests/browser/net-ingress.test.mjs fetches the URL plainly).
import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, describe, test } from 'node:test'

import { startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'

const { Sandbox } = await import('e2b')
const T = { timeout: 60_000 }

// A server in the sandbox answering with the Host it saw and whether the
// traffic token reached it; an Upgrade gets 101 and an echo.
const SERVER = `python3 -u - <<'EOF'
import http.server, json
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get('Upgrade'):
            self.send_response(101); self.send_header('Upgrade', 'echo'); self.send_header('Connection', 'Upgrade'); self.end_headers()
            self.wfile.flush()
            while True:
                b = self.rfile.read1(4096)
                if not b: return
                self.wfile.write(b); self.wfile.flush()
        body = json.dumps({'host': self.headers.get('Host'), 'token': self.headers.get('e2b-traffic-access-token')}).encode()
        self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(('0.0.0.0', 8000), H).serve_forever()
EOF`

let backend
const sandboxes = []
before(async () => { backend = await startBackend() })
after(async () => {
  for (const s of sandboxes) await s.kill().catch(() => {})
  await backend.stop()
})

// One request to the envd listener with Host = host (raw, so any header goes).
function request(host, headers = {}, extra = '') {
  const u = new URL(backend.sandboxUrl)
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname)
    let data = ''
    sock.setEncoding('utf8')
    sock.on('data', (d) => { data += d; if (extra && data.includes('\r\n\r\n') && data.endsWith(extra)) sock.end() })
    sock.on('end', () => resolve(data))
    sock.on('error', reject)
    const lines = [`GET /x HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
    if (!extra) lines.push('Connection: close')
    sock.write(lines.join('\r\n') + '\r\n\r\n' + extra)
  })
}
const status = (raw) => Number(/^HTTP\/1\.[01] (\d+)/.exec(raw)?.[1])
const body = (raw) => raw.slice(raw.indexOf('\r\n\r\n') + 4)

async function serving(sandbox, host, headers) {
  await sandbox.commands.run(SERVER, { background: true })
  return until(async () => { const r = await request(host, headers); return status(r) === 200 && r }, 'the server in the sandbox')
}

describe('ingress by host name', () => {
  test('domain and getHost: <port>-<id>.<domain>, routed by the envd listener', T, async () => {
    const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
    const sandbox = await Sandbox.create('base', opts)
    sandboxes.push(sandbox)
    assert.equal(backend.domain, `localhost:${new URL(backend.sandboxUrl).port}`)
    assert.equal(sandbox.sandboxDomain, backend.domain)
    assert.equal(sandbox.trafficAccessToken, undefined, 'public by default: no token')
    const host = sandbox.getHost(8000)
    assert.equal(host, `8000-${sandbox.sandboxId}.${backend.domain}`)
    const r = await serving(sandbox, host, {})
    assert.deepEqual(JSON.parse(body(r)), { host, token: null }, 'the Host as sent')
    const info = await Sandbox.getInfo(sandbox.sandboxId, opts)
    assert.equal(info.sandboxDomain, backend.domain)
  })

  test('allowPublicTraffic: false needs e2b-traffic-access-token on every port but envd\'s; maskRequestHost rewrites Host; WebSocket upgrades pass', T, async () => {
    const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
    const sandbox = await Sandbox.create('base', { ...opts, network: { allowPublicTraffic: false, maskRequestHost: 'localhost:${PORT}' } })
    sandboxes.push(sandbox)
    const token = sandbox.trafficAccessToken
    assert.match(token, /^[0-9a-f]{64}$/)
    const host = sandbox.getHost(8000)
    const r = await serving(sandbox, host, { 'e2b-traffic-access-token': token })
    assert.deepEqual(JSON.parse(body(r)), { host: 'localhost:8000', token: null }, 'masked Host; the token stays at the proxy')

    const missing = await request(host)
    assert.equal(status(missing), 403)
    assert.deepEqual(JSON.parse(body(missing)), { sandboxId: sandbox.sandboxId, code: 403,
      message: "Sandbox is secured with traffic access token. Token header 'e2b-traffic-access-token' is missing" })
    const wrong = await request(host, { 'e2b-traffic-access-token': 'x'.repeat(64) })
    assert.equal(status(wrong), 403)
    assert.match(JSON.parse(body(wrong)).message, /Provided token is invalid/)
    assert.doesNotMatch(JSON.stringify([missing, wrong]), new RegExp(token), 'the token is never echoed')
    // Header routing is held to the same rule.
    const headerRouted = await request('127.0.0.1', { 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': '8000' })
    assert.equal(status(headerRouted), 403)

    // envd's own port takes its access token instead: the SDK works as ever.
    assert.equal((await sandbox.commands.run('echo ok')).stdout, 'ok\n')

    const echoed = await request(host, { 'e2b-traffic-access-token': token, Connection: 'Upgrade', Upgrade: 'echo' }, 'ping-through-the-tunnel')
    assert.equal(status(echoed), 101)
    assert.ok(echoed.endsWith('ping-through-the-tunnel'))

    const info = await Sandbox.getInfo(sandbox.sandboxId, opts)
    assert.equal(info.network?.allowPublicTraffic, false)
    assert.equal(info.network?.maskRequestHost, 'localhost:${PORT}')
  })

  test('httpsPorts: the hop into the sandbox is TLS (a self-signed server), the client still speaks plain HTTP to the edge', T, async () => {
    const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
    const sandbox = await Sandbox.create('base', { ...opts, network: { httpsPorts: [8443, 8443] } })
    sandboxes.push(sandbox)
    assert.deepEqual((await Sandbox.getInfo(sandbox.sandboxId, opts)).network?.httpsPorts, [8443])
    await sandbox.commands.run('cd /tmp && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 ' +
      '-subj /CN=self-signed -keyout key.pem -out cert.pem 2>/dev/null')
    await sandbox.commands.run(`python3 -u - <<'EOF'
import http.server, ssl
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'over tls: ' + self.path.encode()
        self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('0.0.0.0', 8443), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain('/tmp/cert.pem', '/tmp/key.pem')
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()
EOF`, { background: true })
    const host = sandbox.getHost(8443)
    const r = await until(async () => { const x = await request(host); return status(x) === 200 && x }, 'the TLS server in the sandbox')
    assert.equal(body(r), 'over tls: /x')
    // Ports not listed stay plain: the cases above serve plain HTTP on 8000.
    for (const [httpsPorts, why] of [[[0], /must be an array of ports/], [['443'], /must be an array of ports/], [443, /must be an array of ports/], [[1e300], /must be an array of ports/], [[80.5], /must be an array of ports/]]) {
      const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, { method: 'POST', headers: { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ templateID: 'base', network: { httpsPorts } }) })
      assert.equal(res.status, 400)
      assert.match((await res.json()).message, why)
    }
  })
})
