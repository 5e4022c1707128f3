// The local backend against a hostile HTTP client: each attack of a
// red-team run, scaled down, measured by what it would break (the backend's
// RSS from /proc, the control plane's /health while the attack runs) with bounds far from both the
// broken numbers and the healthy ones: "not 1.5 GiB", "not 5 s".
// docs/backend/threat-model.md, "Threat model", describes each defence.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { execFileSync } from 'node:child_process'
import http from 'node:http'
import { createGzip, gunzipSync } from 'node:zlib'
import { Sandbox } from 'e2b'
import { startBackend, api } from '../../host/backend.mjs'
import { envdClient, encodeEnvelope } from '../../host/connect.mjs'
import { until, sleep } from '../../host/wait.mjs'
import { MiB, rssKiB, sign, watchBackend, pushBody, sh, readPort } from '../lib/hostile.mjs'

const T = { timeout: 120_000 }

const probe = await startBackend()
const skip = probe.isolation === 'full' ? false
  : `needs full sandbox isolation; the backend runs with isolation "${probe.isolation}"`
await probe.stop()

// A gzip stream of prefix, n zero bytes and suffix, made piece by piece.
async function gzipOfZeros(prefix, n, suffix) {
  const gz = createGzip({ level: 9 })
  const out = []
  gz.on('data', (d) => out.push(d))
  const ended = new Promise((resolve) => gz.on('end', resolve))
  const zeros = Buffer.alloc(MiB)
  gz.write(prefix)
  for (let left = n; left > 0; left -= zeros.length) {
    if (!gz.write(left >= zeros.length ? zeros : zeros.subarray(0, left))) await new Promise((r) => gz.once('drain', r))
  }
  gz.end(suffix)
  await ended
  return Buffer.concat(out)
}

describe('a hostile client', { skip }, () => {
  let backend
  let sb
  let envd
  const envdHead = (method, path, extra) =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\n${extra}\r\n`

  before(async () => {
    backend = await startBackend({ extraArgs: ['--max-upload-mb', '64'] })
    sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 600 })).json
    envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
  })
  after(async () => {
    const { code } = await backend.stop()
    assert.equal(code, 0, backend.stderr())
    assert.ok(!backend.stderr().includes(sb.envdAccessToken), 'tokens are never logged')
  })

  test('item 1: bodies without a key, token or signature are answered at once, never read into memory', T, async () => {
    const before = rssKiB(backend.pid)
    const stop = watchBackend(backend.apiUrl, backend.pid)
    const declared = 250 * MiB
    const attacks = []
    // Six unauthenticated connections promising 250 MiB each, as in the
    // run, pushing 32 MiB each without finishing: three envd routes, the
    // control plane, and a token holder over the 1 MiB limit of an RPC.
    for (let i = 0; i < 2; i++) {
      attacks.push(['Start without a token', 401, pushBody(backend.sandboxUrl,
        envdHead('POST', '/process.Process/Start', `Content-Type: application/connect+json\r\nContent-Length: ${declared}\r\n`), 32 * MiB)])
      attacks.push(['/files without a signature', 401, pushBody(backend.sandboxUrl,
        envdHead('POST', '/files?path=/tmp/x', `Content-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n`), 32 * MiB)])
    }
    attacks.push(['the control plane without a key', 401, pushBody(backend.apiUrl,
      `POST /v2/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`, 32 * MiB)])
    attacks.push(['chunked, no path anyone serves', 404, pushBody(backend.sandboxUrl,
      envdHead('POST', '/no/such/route', 'Transfer-Encoding: chunked\r\n'), 32 * MiB, { chunked: true })])
    attacks.push(['a token holder over the RPC limit', 413, pushBody(backend.sandboxUrl,
      envdHead('POST', '/process.Process/List', `X-Access-Token: ${sb.envdAccessToken}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n`), 32 * MiB)])
    for (const [what, status, pending] of attacks) {
      const r = await pending
      assert.equal(r.status, status, `${what}: ${r.answer.slice(0, 200)}`)
      // Answered while the body was still coming: at most the 4 MiB the
      // gate drops after a refusal, plus what the kernel buffers.
      assert.ok(r.sent < 24 * MiB, `${what}: answered only after ${r.sent / MiB} MiB`)
      assert.match(r.answer, /\r\n\r\n\{"code":/, `${what}: a JSON error`)
    }
    const seen = await stop()
    const grown = (seen.peakRss - before) / 1024
    assert.ok(grown < 64, `the backend's RSS grew by ${grown.toFixed(0)} MiB (issue: 1.5 GiB for six connections)`)
    assert.equal(seen.unanswered, 0, '/health went unanswered')
  })

  test('item 1: the answer to a refused body reaches a client that keeps sending (the close lingers instead of resetting the connection)', T, async () => {
    // A close with unread input resets the connection, and a client whose
    // write meets the reset loses the answer it had not read yet: about one
    // connection in twelve, until the backend lingered (CI saw it).
    const lost = []
    for (let round = 0; round < 50; round++) {
      const pending = []
      for (let i = 0; i < 4; i++) {
        pending.push(pushBody(backend.sandboxUrl, envdHead('POST', '/process.Process/Start',
          `Content-Type: application/connect+json\r\nContent-Length: ${250 * MiB}\r\n`), 32 * MiB))
      }
      for (const r of await Promise.all(pending)) if (r.status !== 401) lost.push(`${r.status} after ${r.sent / MiB} MiB`)
    }
    assert.deepEqual(lost, [], `${lost.length} of 200 answers lost`)
  })

  test('item 1: a refused request without a body keeps its connection; one with a body is read, dropped and the next request parses', T, async () => {
    const reply = await new Promise((resolve) => {
      const { hostname, port } = new URL(backend.sandboxUrl)
      const s = net.connect(Number(port), hostname, () => s.write(
        envdHead('POST', '/process.Process/List', 'Content-Type: application/json\r\nContent-Length: 5\r\n') + 'abcde' +
        envdHead('GET', '/health', 'Connection: close\r\n')))
      let buf = ''
      s.on('data', (d) => { buf += d })
      s.on('close', () => resolve(buf))
    })
    const statuses = [...reply.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))
    assert.deepEqual(statuses, [401, 204], reply)
  })

  test('item 2: a gzip bomb in a multipart upload through a signed URL stops at --max-upload-mb, in little memory', T, async () => {
    const inflated = 256 * MiB
    const path = '/home/user/bomb.bin'
    const boundary = 'B0undary'
    const body = await gzipOfZeros(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bomb.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      inflated, `\r\n--${boundary}--\r\n`)
    assert.ok(body.length < 2 * MiB, `the bomb is small (${body.length} bytes)`)
    const before = rssKiB(backend.pid)
    const stop = watchBackend(backend.apiUrl, backend.pid)
    const q = new URLSearchParams({ path, username: 'user', signature: sign(path, 'write', 'user', sb.envdAccessToken) })
    // The SDK's uploadUrl names no sandbox: the signature finds it.
    const res = await fetch(`${backend.sandboxUrl}/files?${q}`, {
      method: 'POST', body,
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Encoding': 'gzip' },
    })
    const json = await res.json()
    const seen = await stop()
    assert.equal(res.status, 413, JSON.stringify(json))
    assert.match(json.message, /larger than the limit of 67108864 bytes/)
    const grown = (seen.peakRss - before) / 1024
    assert.ok(grown < 64, `the backend's RSS grew by ${grown.toFixed(0)} MiB while inflating (issue: about 1 GiB)`)
    assert.equal(seen.unanswered, 0, '/health went unanswered while inflating')
  })

  test('item 2: a 1 GiB gzip octet-stream upload is written in slices: /health keeps answering, the file is whole', T, async () => {
    const b2 = await startBackend() // the default --max-upload-mb (4096)
    try {
      // Room for the 1 GiB file: the default disk is 1024 MiB, less ext4's tables.
      const s2 = (await api(b2, 'POST', '/v2/sandboxes', { templateID: 'base', diskSizeMB: 2048 })).json
      const e2 = envdClient({ sandboxUrl: b2.sandboxUrl, sandboxId: s2.sandboxID, token: s2.envdAccessToken })
      const body = await gzipOfZeros('', 1024 * MiB, '')
      const stop = watchBackend(b2.apiUrl, b2.pid)
      const res = await fetch(`${b2.sandboxUrl}/files?path=/home/user/zeros.bin`, {
        method: 'POST', body,
        headers: { 'E2b-Sandbox-Id': s2.sandboxID, 'X-Access-Token': s2.envdAccessToken,
          'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' },
      })
      const seen = await stop()
      assert.equal(res.status, 200, await res.text())
      assert.equal((await sh(e2, 'stat -c %s /home/user/zeros.bin; rm /home/user/zeros.bin')).trim(), String(1024 * MiB))
      // Written in 1 MiB slices, other requests in between: the old code
      // wrote it all in one turn of the loop (a 3.3 s stall), which let
      // two or three /health calls through, before and after.
      assert.equal(seen.unanswered, 0)
      assert.ok(seen.count >= 8, `/health was answered only ${seen.count} times while 1 GiB was written`)
    } finally {
      assert.equal((await b2.stop()).code, 0, b2.stderr())
    }
  })

  describe('item 15: the port proxy', () => {
    let port
    let server
    // A server in the sandbox that records every byte it receives on a
    // connection to /tmp/got, answers one request and keeps reading.
    const recorder = [
      'import socket,threading,time',
      's=socket.socket(); s.bind(("127.0.0.1", 8000)); s.listen(16)',
      'print("port", s.getsockname()[1], flush=True)',
      'def serve(c):',
      '  got=b""; answered=False; end=time.time()+3',
      '  c.settimeout(0.2)',
      '  while time.time()<end:',
      '    try: d=c.recv(65536)',
      '    except socket.timeout: d=None',
      '    if d == b"": break',
      '    if d: got+=d; open("/tmp/got","wb").write(got)',
      '    if not answered and b"\\r\\n\\r\\n" in got:',
      '      c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok"); answered=True',
      '  c.close()',
      'while True:',
      '  c,_=s.accept(); threading.Thread(target=serve,args=(c,)).start()',
    ].join('\n')
    before(async () => {
      server = await envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-c', recorder] } })
      port = await readPort(server)
    })
    after(() => server?.cancel())

    // Sends raw bytes to the proxy and returns everything until it closes.
    const exchange = (bytes) => new Promise((resolve) => {
      const { hostname, port: p } = new URL(backend.sandboxUrl)
      const s = net.connect(Number(p), hostname, () => s.write(bytes))
      let buf = ''
      s.on('data', (d) => { buf += d })
      s.on('error', () => {})
      s.on('close', () => resolve(buf))
    })
    const got = () => sh(envd, 'cat /tmp/got; rm -f /tmp/got')

    test('E2b-Sandbox-Port outside 1..65535 is a 400, never truncated to 16 bits', T, async () => {
      // 73536 is 8000 + 65536: the run reached port 8000 with it.
      assert.equal(port, 8000)
      for (const bad of ['73536', '0', '65536', '99999', '-1', '008000x']) {
        const res = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'E2b-Sandbox-Port': bad } })
        assert.equal(res.status, 400, `port ${bad}`)
        assert.equal((await res.json()).message, 'Invalid E2b-Sandbox-Port header')
      }
      const { hostname, port: p } = new URL(backend.sandboxUrl)
      const viaHost = await new Promise((resolve) => {
        const s = net.connect(Number(p), hostname, () => s.write(`GET / HTTP/1.1\r\nHost: ${port + 65536}-${sb.sandboxID}.e2b.local\r\nConnection: close\r\n\r\n`))
        let buf = ''
        s.on('data', (d) => { buf += d })
        s.on('close', () => resolve(buf))
      })
      assert.match(viaHost, /^HTTP\/1\.1 400 /)
      assert.equal((await got()).length, 0, 'nothing reached the port')
      const ok = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'E2b-Sandbox-Port': String(port) } })
      assert.equal(await ok.text(), 'ok', 'the real port still works')
      await got()
    })

    test('one exchange per connection: pipelined requests and raw bytes after a body never reach the port', T, async () => {
      const head = (method, extra = '') => `${method} /first HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\nE2b-Sandbox-Port: ${port}\r\n${extra}`
      const answer = await exchange(`${head('GET')}Connection: close\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\nRAW BYTES`)
      assert.match(answer, /^HTTP\/1\.1 200 OK[\s\S]*ok$/)
      await until(async () => (await sh(envd, 'cat /tmp/got 2>/dev/null || true')).includes('\r\n\r\n'), 'the port got the request')
      let seen = await got()
      assert.match(seen, /^GET \/first HTTP\/1\.1\r\n/)
      assert.ok(!seen.includes('/second') && !seen.includes('RAW'), `more than one request reached the port: ${JSON.stringify(seen)}`)
      // A body is forwarded exactly, chunked or not; what follows it is not.
      for (const [framing, body] of [['Content-Length: 3\r\n', 'abc'], ['Transfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\n']]) {
        await exchange(`${head('POST', framing)}\r\n${body}GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n`)
        await until(async () => (await sh(envd, 'cat /tmp/got 2>/dev/null || true')).includes('abc'), 'the body reached the port')
        seen = await got()
        assert.ok(seen.endsWith(`\r\n\r\n${body}`), `the port got ${JSON.stringify(seen)}`)
        assert.ok(!seen.includes('smuggled'), 'a request after the body reached the port')
      }
    })
  })
})

// GET of a URL with the given headers: { status, bytes, ended, data } once
// the body ends or fails; bytes counts what was read, onBytes(bytes) is
// called as it comes, data is the body when keep is set.
function download(url, headers, { keep = false, onBytes = () => {} } = {}) {
  return new Promise((resolve) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      let bytes = 0
      const kept = []
      const body = res
      body.on('data', (d) => { bytes += d.length; if (keep) kept.push(d); onBytes(bytes) })
      body.on('end', () => resolve({ status: res.statusCode, bytes, ended: 'end', data: Buffer.concat(kept) }))
      body.on('error', () => resolve({ status: res.statusCode, bytes, ended: 'error' }))
      res.on('aborted', () => resolve({ status: res.statusCode, bytes, ended: 'aborted' }))
    })
    req.on('error', () => resolve({ status: null, bytes: 0, ended: 'error' }))
  })
}

describe('a hostile client: streams, connections and kill', { skip }, () => {
  test('item 4: a gzip download of a sparse file is deflated in bounded steps: /health keeps answering', T, async () => {
    const backend = await startBackend()
    try {
      const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
      // 192 MiB of zeros gzip (zlib's fastest level) to less than 1 MiB.
      await sh(envd, 'truncate -s 192M /home/user/sparse')
      let body = 'waiting' // then 'flowing', then 'ended'
      const stop = watchBackend(backend.apiUrl, backend.pid, () => body === 'flowing')
      const r = await download(`${backend.sandboxUrl}/files?path=/home/user/sparse`,
        { 'E2b-Sandbox-Id': sb.sandboxID, 'X-Access-Token': sb.envdAccessToken, 'Accept-Encoding': 'gzip' },
        { keep: true, onBytes: () => { body = 'flowing' } })
      body = 'ended'
      const seen = await stop()
      assert.equal(r.status, 200)
      assert.equal(gunzipSync(r.data).length, 192 * MiB, 'the whole file')
      // One step deflates at most 4 MiB of the file, other requests in
      // between. The old code deflated until 1 MiB of output was queued,
      // that is the whole file in one turn of the loop: its body came all
      // at once, and no /health call was answered while it came.
      assert.ok(seen.countDuring >= 3, `/health was answered ${seen.countDuring} times while the body came`)
      assert.equal(seen.unanswered, 0)
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr())
    }
  })

  test('item 14: killing a sandbox cuts its download, its upload and its proxied connections at once', T, async () => {
    const backend = await startBackend()
    try {
      const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
      await sh(envd, 'truncate -s 8G /home/user/big')
      const holder = await envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-c',
        'import socket,time\ns=socket.socket(); s.bind(("127.0.0.1", 8000)); s.listen(64); print("port 8000", flush=True)\nheld=[]\nwhile True: held.append(s.accept())'] } })
      await readPort(holder)
      const hdr = { 'E2b-Sandbox-Id': sb.sandboxID, 'X-Access-Token': sb.envdAccessToken }
      let received = 0
      const downloading = download(`${backend.sandboxUrl}/files?path=/home/user/big`, { ...hdr, 'Accept-Encoding': 'identity' },
        { onBytes: (n) => { received = n } })
      const uploading = pushBody(backend.sandboxUrl, `POST /files?path=/home/user/up HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\nX-Access-Token: ${sb.envdAccessToken}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`,
        1024 * MiB, { chunked: true, overallMs: 60000 })
      const proxied = pushBody(backend.sandboxUrl, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\nE2b-Sandbox-Port: 8000\r\n\r\n`, 0, { overallMs: 60000 })
      await until(() => received >= 64 * MiB, 'the download is under way')
      await sleep(300) // the upload and the proxied request are in
      await Sandbox.kill(sb.sandboxID, { apiKey: backend.apiKey, apiUrl: backend.apiUrl })
      const atKill = received
      const t0 = Date.now()
      const [d, u, p] = await Promise.all([downloading, uploading, proxied])
      const after = d.bytes - atKill
      assert.notEqual(d.ended, 'end', 'the download was cut, not finished')
      assert.ok(after < 32 * MiB, `${(after / MiB).toFixed(0)} MiB were served after the kill (issue: 746 MB in 3 s)`)
      assert.ok(Date.now() - t0 < 10000, 'every connection ended soon after the kill')
      assert.equal(u.status, null, 'the upload got no answer: its connection was cut')
      assert.equal(p.status, null, 'the proxied request got no answer: its connection was cut')
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr())
    }
  })

  // A close after a kill must not be a FIN queued behind what the kernel
  // still holds to send (up to tcp_wmem's maximum): it is a reset, and
  // only what the client's own socket had already received is left to read.
  // Through sandbox_url and through the sandbox's own envd port.
  for (const way of ['sandbox_url', 'envdUrl']) {
    test(`killing a sandbox resets its download through ${way}: nothing the backend still held to send reaches the client`, T, async () => {
      const backend = await startBackend()
      try {
        const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
        const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
        await sh(envd, 'truncate -s 1G /home/user/big')
        assert.ok(sb.envdUrl, 'the sandbox has a port of its own')
        const { hostname, port } = new URL(way === 'envdUrl' ? sb.envdUrl : backend.sandboxUrl)
        const sock = net.connect(Number(port), hostname)
        let received = 0
        sock.on('data', (d) => { received += d.length })
        sock.on('error', () => {}) // the reset (or its end: Node may read it as either)
        const closed = new Promise((resolve) => sock.on('close', resolve))
        sock.write(`GET /files?path=/home/user/big HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\n` +
          `X-Access-Token: ${sb.envdAccessToken}\r\nAccept-Encoding: identity\r\n\r\n`)
        await until(() => received >= 16 * MiB, 'the download is under way')
        // The client stops reading: its socket's receive queue and the
        // backend's send queue fill, and then nothing moves.
        sock.pause()
        await sleep(1000)
        const queued = Number(execFileSync('ss', ['-Htn', `sport = :${sock.localPort}`], { encoding: 'utf8' }).trim().split(/\s+/)[1])
        assert.ok(Number.isInteger(queued), 'the client socket\'s receive queue')
        const atKill = received
        await Sandbox.kill(sb.sandboxID, { apiKey: backend.apiKey, apiUrl: backend.apiUrl })
        sock.resume()
        await closed
        const after = received - atKill
        // What the client's socket held, and no more (the backend's send
        // queue was dropped): the old close let it all through, MiBs of it.
        assert.ok(after <= queued + 64 * 1024, `${after} bytes reached the client after the kill, its socket held ${queued}`)
        assert.ok(received < 1024 * MiB, 'the download was cut')
      } finally {
        assert.equal((await backend.stop()).code, 0, backend.stderr())
      }
    })
  }

  test('item 6: held proxied connections and streams are capped per sandbox, time out when idle, and never lock out the control plane', T, async () => {
    const backend = await startBackend({ extraArgs: ['--max-connections', '160', '--max-sandbox-requests', '48', '--proxy-idle-timeout', '3'] })
    const sockets = []
    try {
      const silent = 'import socket\ns=socket.socket(); s.bind(("127.0.0.1", 8000)); s.listen(256); print("port 8000", flush=True)\nheld=[]\nwhile True: held.append(s.accept())'
      const boxes = []
      for (let i = 0; i < 3; i++) {
        const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
        const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
        const server = await envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-c', silent] } })
        await readPort(server)
        boxes.push({ sb, envd, server })
      }
      const stop = watchBackend(backend.apiUrl)
      // 100 connections to a port that never answers in the first sandbox,
      // 48 in each of the others: more than envd's share of the cap.
      const { hostname, port } = new URL(backend.sandboxUrl)
      const answers = []
      const open = (sb, n) => {
        for (let i = 0; i < n; i++) {
          const s = net.connect(Number(port), hostname, () => s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\nE2b-Sandbox-Port: 8000\r\n\r\n`))
          const entry = { sb: sb.sandboxID, text: '', closed: false }
          s.on('data', (d) => { entry.text += d })
          s.on('error', () => {})
          s.on('close', () => { entry.closed = true })
          sockets.push(s)
          answers.push(entry)
        }
      }
      // The server's Start stream is one of the sandbox's 48: 47 proxied
      // connections fit, 53 are refused.
      open(boxes[0].sb, 100)
      const refused = () => answers.filter((a) => a.sb === boxes[0].sb.sandboxID && /^HTTP\/1\.1 429 /.test(a.text)).length
      await until(() => refused() === 53, () => `53 of 100 refused with 429 (${refused()} so far)`, 30000)
      assert.match(answers.find((a) => a.text.startsWith('HTTP/1.1 429')).text, /too many requests in progress for sandbox/)
      open(boxes[1].sb, 48)
      open(boxes[2].sb, 48)
      await sleep(1000)
      // The control plane answers throughout, and an SDK kill works.
      assert.equal(await Sandbox.kill(boxes[0].sb.sandboxID, { apiKey: backend.apiKey, apiUrl: backend.apiUrl }), true)
      const seen = await stop()
      assert.equal(seen.unanswered, 0, `${seen.unanswered} of ${seen.count} /health calls went unanswered (issue: half of them)`)
      // Idle proxied connections (the port never answers) are closed.
      await until(() => answers.every((a) => a.closed), `every proxied connection closed (${answers.filter((a) => !a.closed).length} open)`, 30000)
      assert.match(backend.stderr(), /at most 160 connections \(40 of them for the API only\)/)
    } finally {
      for (const s of sockets) s.destroy()
      assert.equal((await backend.stop()).code, 0, backend.stderr())
    }
  })

  test('item 6: a token holder\'s Connect streams are capped per sandbox with a 429', T, async () => {
    const backend = await startBackend({ extraArgs: ['--max-sandbox-requests', '20'] })
    const streams = []
    try {
      const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
      const sleeper = await envd.open('process.Process/Start', { process: { cmd: 'sleep', args: ['600'] } })
      const pid = (await sleeper.next()).message.event.start.pid
      streams.push(sleeper)
      const statuses = []
      for (let i = 0; i < 25; i++) {
        const res = await fetch(`${backend.sandboxUrl}/process.Process/Connect`, {
          method: 'POST',
          headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'X-Access-Token': sb.envdAccessToken, 'Content-Type': 'application/connect+json' },
          body: encodeEnvelope({ process: { pid } }),
        })
        statuses.push(res.status)
        if (res.status === 200) streams.push({ cancel: () => res.body.cancel() })
        else assert.match((await res.json()).message, /too many requests in progress/)
      }
      assert.equal(statuses.filter((s) => s === 200).length, 19, statuses.join(' '))
      assert.equal(statuses.filter((s) => s === 429).length, 6, statuses.join(' '))
      assert.equal((await fetch(`${backend.apiUrl}/health`)).status, 204)
    } finally {
      for (const s of streams) s.cancel()
      assert.equal((await backend.stop()).code, 0, backend.stderr())
    }
  })
})


// Memory a burst took comes back once the burst is over: glibc keeps what
// the backend frees, scattered between blocks still in use, unless it is
// trimmed (lib/mem_trim.h). The margins are generous: the backend's RSS
// outside a burst is about 15 MiB, and the bounds are far from what the
// backend kept before (155 MiB after the SendInputs, 45 MiB after the
// watchers) and from what it keeps now (1 or 2 MiB).
describe('a hostile client: memory that comes back', { skip }, () => {
  test('300 concurrent 700 KiB SendInputs: each a 200 or a 429, bodies bounded per sandbox, the memory given back', T, async () => {
    const backend = await startBackend({ extraArgs: ['--warm-pool', '0'] })
    try {
      const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
      // Reads nothing for 4 s, so that input queues up to its bound, then all.
      const reader = await envd.open('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', 'sleep 4; cat > /dev/null'] }, stdin: true })
      const pid = (await reader.next()).message.event.start.pid
      const body = JSON.stringify({ process: { pid }, input: { stdin: Buffer.alloc(700 * 1024, 0x61).toString('base64') } })
      const { hostname, port } = new URL(backend.sandboxUrl)
      const agent = new http.Agent({ keepAlive: false, maxSockets: 1000 })
      const send = () => new Promise((resolve) => {
        const req = http.request({ agent, host: hostname, port, method: 'POST', path: '/process.Process/SendInput',
          headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': sb.sandboxID, 'X-Access-Token': sb.envdAccessToken,
            'Content-Length': Buffer.byteLength(body) } }, (res) => {
          let text = ''
          res.on('data', (c) => { text += c })
          res.on('end', () => resolve({ status: res.statusCode, text }))
        })
        req.on('error', (e) => resolve({ status: e.code, text: '' }))
        req.end(body)
      })
      const before = rssKiB(backend.pid)
      const stop = watchBackend(backend.apiUrl, backend.pid)
      const answers = await Promise.all(Array.from({ length: 300 }, send))
      const seen = await stop()
      const count = (s) => answers.filter((a) => a.status === s).length
      assert.equal(count(200) + count(429), 300, `each a 200 or a 429: ${[...new Set(answers.map((a) => `${a.status} ${a.text.slice(0, 90)}`))].join(' | ')}`)
      assert.ok(count(200) >= 20, `${count(200)} written (16 MiB of queue and of bodies, at least)`)
      assert.ok(seen.peakRss - before < 96 * 1024, `the RSS rose by ${((seen.peakRss - before) / 1024).toFixed(0)} MiB (at most 16 MiB of bodies and 16 MiB of queue)`)
      await sleep(1500) // the trim comes within a second
      const after = rssKiB(backend.pid)
      assert.ok(after - before < 24 * 1024, `${((after - before) / 1024).toFixed(0)} MiB stayed after every answer`)
      // Refused on their heads: too many bodies being received at once, or
      // too much input queued for the sandbox's processes.
      for (const a of answers.filter((x) => x.status === 429)) assert.match(a.text, /too many request bodies being received|too much input waiting/)
      reader.cancel()
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr())
    }
  })

  test('40 watchers\' full queues: their memory comes back once the sandbox is killed', T, async () => {
    const backend = await startBackend({ extraArgs: ['--warm-pool', '0'] })
    try {
      const sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
      await sh(envd, 'mkdir -p /home/user/w')
      const before = rssKiB(backend.pid)
      for (let i = 0; i < 40; i++) {
        const r = await envd.call('filesystem.Filesystem/CreateWatcher', { path: '/home/user/w', includeEntry: true })
        assert.equal(r.status, 200, r.text)
      }
      // Events with entries and names of 200 bytes, until the sandbox's
      // watchers hold their bound of 20,000 between them.
      await sh(envd, 'cd /home/user/w && for i in $(seq 600); do echo x > "$(printf \'f%0200d\' $i)"; done')
      await until(() => rssKiB(backend.pid) - before > 16 * 1024, 'the queues filled', 30000)
      assert.equal((await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`)).status, 204)
      await sleep(1500) // the trim comes within a second
      const after = rssKiB(backend.pid)
      assert.ok(after - before < 8 * 1024, `${((after - before) / 1024).toFixed(0)} MiB stayed after the kill`)
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr())
    }
  })
})
