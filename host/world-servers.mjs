// The servers of the test "world" (tests/node/net-world.test.mjs), started
// with `ip netns exec <ns> node world-servers.mjs <mode>` inside namespaces
// the test made, so whatever they answer never leaves this machine.
//
//   world  an HTTP server on port 80 (answers {"server":"world","local","remote",
//          "host","path"}) and a TCP echo on port 7007, on every address of the
//          world namespace; HTTPS on port 443 (the certificates of the TLS
//          directory, the third argument): on WORLD.web for the names of
//          world.test, on WORLD.echo with a certificate for another name;
//          it answers like port 80 with "server":"world-tls", and logs the
//          request's headers (the answer carries none of them); /bytes/N
//          answers N zero bytes, /random/N N random bytes whose SHA-256 (hex)
//          is its x-body-sha256 header, /sink reads a request's body and
//          answers {"received":N}, /digest the same with "sha256":hex; on the gateway's address, port 443, a TCP server
//          that reads until its client ends its writing (a half close) and
//          then answers "received N" and closes; a SOCKS5 proxy on port 1080 (RFC 1928, CONNECT by
//          address or by a name of NAMES; no authentication) and on port 1081
//          (world.mjs's SOCKS username and password, RFC 1929), and on port
//          1083 one whose CONNECT answer takes 18 s, a byte every 2 s; whose
//          targets are in the world itself;
//   dns    a DNS server on 127.0.0.53:53 (UDP and TCP) answering A records of
//          NAMES below, NXDOMAIN for anything else: the host's resolver on its
//          own loopback, as systemd-resolved's is.
//
// Each connection (and each DNS question) is appended to the log file named
// by the second argument as one JSON line, so a test can tell what reached
// the world; "ready" is printed on stdout once every server listens.
import { createHash, randomBytes } from 'node:crypto'
import dgram from 'node:dgram'
import { SOCKS } from './world.mjs'
import { appendFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { readFileSync } from 'node:fs'

export const NAMES = {
  'world.test': '203.0.113.10',
  'echo.world.test': '203.0.113.11',
  'lan.world.test': '10.99.0.1',
  'api.world.test': '203.0.113.10',
  'other.world.test': '203.0.113.10',
  'bad.world.test': '203.0.113.11',
}

const [mode, logPath, tlsDir] = process.argv.slice(2)
const log = (o) => appendFileSync(logPath, JSON.stringify({ ...o, mode }) + '\n')

function listen(server, port, host) {
  return new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve) })
}

// One DNS answer for a query message: the question echoed, A records from NAMES.
function answer(query) {
  let i = 12
  const labels = []
  while (i < query.length && query[i] !== 0) { labels.push(query.subarray(i + 1, i + 1 + query[i]).toString()); i += query[i] + 1 }
  const qEnd = i + 5
  const name = labels.join('.').toLowerCase()
  const qtype = query.readUInt16BE(i + 1)
  log({ kind: 'dns', name, qtype })
  const ip = NAMES[name]
  const header = Buffer.from(query.subarray(0, 12))
  header[2] = 0x84 | (query[2] & 0x01) // QR, AA, RD as asked
  header[3] = ip ? 0x00 : 0x03 // NOERROR or NXDOMAIN
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(ip && qtype === 1 ? 1 : 0, 6)
  header.writeUInt16BE(0, 8)
  header.writeUInt16BE(0, 10)
  const parts = [header, query.subarray(12, qEnd)]
  if (ip && qtype === 1) {
    const rr = Buffer.alloc(16)
    rr.writeUInt16BE(0xc00c, 0); rr.writeUInt16BE(1, 2); rr.writeUInt16BE(1, 4)
    rr.writeUInt32BE(60, 6); rr.writeUInt16BE(4, 10)
    ip.split('.').forEach((b, k) => { rr[12 + k] = Number(b) })
    parts.push(rr)
  }
  return Buffer.concat(parts)
}

const { user: SOCKS_USER, password: SOCKS_PASSWORD } = SOCKS

// A SOCKS5 server, as small as the tests need: one CONNECT per connection.
// slowMs: its CONNECT answer goes a byte at a time, slowMs apart (a proxy
// that keeps a dial waiting without ever falling silent for long).
function socks5(authed, slowMs = 0) {
  return net.createServer((c) => {
    c.on('error', () => {})
    let buf = Buffer.alloc(0)
    let step = 'greeting'
    let user = null
    const take = (n) => { const b = buf.subarray(0, n); buf = buf.subarray(n); return b }
    c.on('data', function onData(d) {
      buf = Buffer.concat([buf, d])
      if (step === 'greeting' && buf.length >= 2 && buf.length >= 2 + buf[1]) {
        const methods = [...take(2 + buf[1]).subarray(2)]
        const want = authed ? 2 : 0
        if (!methods.includes(want)) return c.end(Buffer.from([5, 0xff]))
        c.write(Buffer.from([5, want]))
        step = authed ? 'auth' : 'request'
      }
      if (step === 'auth' && buf.length >= 2 && buf.length >= 3 + buf[1] && buf.length >= 3 + buf[1] + buf[2 + buf[1]]) {
        const ulen = buf[1]
        const u = buf.subarray(2, 2 + ulen).toString()
        const p = buf.subarray(3 + ulen, 3 + ulen + buf[2 + ulen]).toString()
        take(3 + ulen + buf[2 + ulen])
        const ok = u === SOCKS_USER && p === SOCKS_PASSWORD
        log({ kind: 'socks-auth', user: u, ok })
        if (!ok) return c.end(Buffer.from([1, 1]))
        user = u
        c.write(Buffer.from([1, 0]))
        step = 'request'
      }
      if (step === 'request' && buf.length >= 5) {
        const atyp = buf[3]
        const len = atyp === 1 ? 10 : atyp === 3 ? 7 + buf[4] : 0
        if (!len) return c.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]))
        if (buf.length < len) return
        const req = take(len)
        const target = atyp === 1 ? [...req.subarray(4, 8)].join('.') : req.subarray(5, 5 + req[4]).toString()
        const port = req.readUInt16BE(len - 2)
        const addr = atyp === 1 ? target : NAMES[target]
        log({ kind: 'socks', target, port, user, local: `${c.localAddress}:${c.localPort}` })
        step = 'open'
        c.removeListener('data', onData)
        if (!addr) return c.end(Buffer.from([5, 4, 0, 1, 0, 0, 0, 0, 0, 0]))
        const up = net.connect(port, addr, async () => {
          const ok = Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
          for (let i = 0; slowMs && i < ok.length - 1 && !c.destroyed; i++) {
            c.write(ok.subarray(i, i + 1))
            await new Promise((resolve) => setTimeout(resolve, slowMs))
          }
          if (c.destroyed) return up.destroy()
          c.write(slowMs ? ok.subarray(ok.length - 1) : ok)
          if (buf.length) up.write(buf)
          c.pipe(up).pipe(c)
        })
        up.on('error', () => c.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])))
      }
    })
  })
}

if (mode === 'world') {
  const web = http.createServer((req, res) => {
    const o = { server: 'world', local: `${req.socket.localAddress}:${req.socket.localPort}`, remote: req.socket.remoteAddress, host: req.headers.host, path: req.url }
    log({ kind: 'http', ...o, headers: req.headers })
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(o))
  })
  const echo = net.createServer((c) => {
    log({ kind: 'tcp', local: `${c.localAddress}:${c.localPort}`, remote: c.remoteAddress })
    c.on('error', () => {})
    c.pipe(c)
  })
  await listen(web, 80, '0.0.0.0')
  await listen(echo, 7007, '0.0.0.0')
  const counter = net.createServer({ allowHalfOpen: true }, (c) => {
    let received = 0
    c.on('error', () => {})
    c.on('data', (d) => { received += d.length })
    c.on('end', () => c.end(`received ${received}\n`))
  })
  await listen(counter, 443, '203.0.113.2')
  await listen(socks5(false), 1080, '0.0.0.0')
  await listen(socks5(true), 1081, '0.0.0.0')
  await listen(socks5(false, 2000), 1083, '0.0.0.0')
  const tlsFiles = (name) => ({ key: readFileSync(path.join(tlsDir, `${name}.key`)), cert: readFileSync(path.join(tlsDir, `${name}.pem`)) })
  for (const [name, addr] of [['web', '203.0.113.10'], ['wrong', '203.0.113.11']]) {
    const server = https.createServer(tlsFiles(name), (req, res) => {
      const bytes = /^\/bytes\/(\d+)$/.exec(req.url)
      if (bytes) { // a body of that many zero bytes, for throughput (bench/egress.mjs); not logged
        res.setHeader('content-length', bytes[1])
        const chunk = Buffer.alloc(1 << 16)
        let left = Number(bytes[1])
        const more = () => {
          while (left > 0) {
            const n = Math.min(left, chunk.length)
            left -= n
            if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return res.once('drain', more)
          }
          res.end()
        }
        return more()
      }
      const random = /^\/random\/(\d+)$/.exec(req.url)
      if (random) { // a body whose bytes a relay cannot get wrong unseen (tests/net/egress-cases.mjs); not logged
        const body = randomBytes(Number(random[1]))
        res.setHeader('content-length', body.length)
        res.setHeader('x-body-sha256', createHash('sha256').update(body).digest('hex'))
        return res.end(body)
      }
      if (req.url === '/sink' || req.url === '/digest') { // a body read and dropped, for throughput (bench/egress.mjs); not logged
        let received = 0
        const hash = req.url === '/digest' ? createHash('sha256') : null
        req.on('data', (d) => { received += d.length; if (hash) hash.update(d) })
        req.on('end', () => {
          res.setHeader('content-type', 'application/json')
          res.end(JSON.stringify(hash ? { received, sha256: hash.digest('hex') } : { received }))
        })
        return
      }
      const o = { server: 'world-tls', local: `${req.socket.localAddress}:${req.socket.localPort}`, remote: req.socket.remoteAddress, host: req.headers.host, path: req.url }
      log({ kind: 'https', ...o, headers: req.headers, servername: req.socket.servername })
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(o))
    })
    await listen(server, 443, addr)
  }
} else if (mode === 'dns') {
  const udp = dgram.createSocket('udp4')
  udp.on('message', (msg, rinfo) => { try { udp.send(answer(msg), rinfo.port, rinfo.address) } catch { /* not a query */ } })
  await new Promise((resolve, reject) => { udp.once('error', reject); udp.bind(53, '127.0.0.53', resolve) })
  const tcp = net.createServer((c) => {
    let buf = Buffer.alloc(0)
    c.on('error', () => {})
    c.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const a = answer(buf.subarray(2, 2 + buf.readUInt16BE(0)))
        buf = buf.subarray(2 + buf.readUInt16BE(0))
        const len = Buffer.alloc(2); len.writeUInt16BE(a.length)
        c.write(Buffer.concat([len, a]))
      }
    })
  })
  await listen(tcp, 53, '127.0.0.53')
} else {
  process.stderr.write('usage: world-servers.mjs world|dns LOGFILE\n')
  process.exit(2)
}
process.stdout.write('ready\n')
