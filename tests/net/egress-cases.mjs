// Transform rules (E2B's network.rules) and the egress proxy, run by
// tests/net/net-world.test.mjs inside the "host" namespace of a test world
// (host/world.mjs): the world serves HTTPS on port 443 with a CA of its own
// (E2BW_WORLD_CA), which the backend is told to trust upstream
// (--egress-ca-file) and the sandboxes are not. Driven by the official e2b
// SDK: Secret.create / Secret.fill, Sandbox.create({ network: { rules } }),
// sandbox.updateNetwork. What reached the world, headers included, is in
// the world servers' log (E2BW_WORLD_LOG); the test secret's value is never
// printed, not even by a failing assertion.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'

import { Secret } from 'e2b'

import { api, startBackend } from '../../host/backend.mjs'
import { run, sandboxMaker, seen, tag } from './world-sandboxes.mjs'

const atWorld = (path) => seen().find((e) => e.kind === 'https' && e.path === path)
const SECRET_VALUE = `test-secret-${randomBytes(12).toString('hex')}`

let backend
let opts
const sandboxes = sandboxMaker()
const sandbox = (extra) => sandboxes.create(extra)

// curl inside s: { code, body } (code: curl's exit status; body: what it printed).
async function curl(s, args) {
  const r = await run(s, `curl -sS -m 15 ${args}`)
  return { code: r.exitCode, body: r.stdout, err: r.stderr }
}

const rules = (headers, host = 'api.world.test') => ({ [host]: [{ transform: { headers } }] })

before(async () => {
  backend = await startBackend({ extraArgs: ['--egress-ca-file', process.env.E2BW_WORLD_CA] })
  assert.equal(backend.isolation, 'full', 'the egress cases need an isolating backend')
  opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
  sandboxes.opts = opts
  await Secret.create('world-token', SECRET_VALUE, opts)
})

after(async () => {
  await sandboxes.killAll()
  if (backend) {
    assert.ok(!backend.stderr().includes(SECRET_VALUE), 'the secret\'s value is never logged')
    assert.deepEqual(await backend.stop(), { code: 0, signal: null })
  }
})

describe('transform rules', () => {
  test('set a rule\'s headers on every request, the secret resolved outside the sandbox, over TLS the sandbox trusts', async () => {
    const s = await sandbox({ network: { rules: rules({ Authorization: `Bearer ${Secret.fill('world-token')}`, 'X-Fixed': 'yes' }) } })
    const [a, b] = [tag('first'), tag('second')]
    // Two requests on one connection (curl reuses it), the sandbox's own Authorization replaced.
    const r = await curl(s, `-H 'Authorization: Bearer from-the-sandbox' https://api.world.test${a} https://api.world.test${b}`)
    assert.equal(r.code, 0, r.err)
    assert.ok(!r.body.includes(SECRET_VALUE), 'the answer carries no secret')
    for (const p of [a, b]) {
      const got = atWorld(p)
      assert.ok(got, `${p} reached the world`)
      assert.ok(got.headers.authorization === `Bearer ${SECRET_VALUE}`, 'the secret replaced the sandbox\'s Authorization')
      assert.equal(got.headers['x-fixed'], 'yes')
      assert.equal(got.servername, 'api.world.test', 'the proxy asked the world for the same name')
    }
    assert.equal(new Set([a, b].map((p) => atWorld(p).remote + atWorld(p).local)).size, 1)
    // The sandbox has no copy of the value anywhere it can read.
    const grep = await run(s, `grep -rsl '${SECRET_VALUE}' /etc /home /tmp /root /proc/self/environ; true`)
    assert.equal(grep.stdout, '', 'no file in the sandbox holds the secret')
    assert.deepEqual((await s.getInfo()).network.rules, rules({ Authorization: `Bearer ${Secret.fill('world-token')}`, 'X-Fixed': 'yes' }),
      'getInfo shows the rules as given, placeholders unresolved')
  })

  test('leave other names alone: the TLS of a name without a rule is passed through untouched', async () => {
    const s = await sandbox({ network: { rules: rules({ 'X-Fixed': 'yes' }) } })
    await s.files.write('/tmp/world-ca.pem', readFileSync(process.env.E2BW_WORLD_CA, 'utf8'))
    const p = tag('other')
    // Trusting only the world's CA: a certificate the proxy made would fail.
    const r = await curl(s, `--cacert /tmp/world-ca.pem https://other.world.test${p}`)
    assert.equal(r.code, 0, r.err)
    assert.equal(atWorld(p).headers['x-fixed'], undefined)
    // The rule's name is intercepted: with only the world's CA trusted, curl refuses the proxy's certificate.
    const mitm = await curl(s, `--cacert /tmp/world-ca.pem https://api.world.test${tag('strict')}`)
    assert.notEqual(mitm.code, 0, 'intercepted: the certificate is the backend\'s egress CA\'s')
  })

  test('a passed connection carries 32 MiB each way intact, and a half close: the answer after it still comes back', async () => {
    const s = await sandbox({ network: { rules: rules({ 'X-Fixed': 'yes' }) } })
    await s.files.write('/tmp/world-ca.pem', readFileSync(process.env.E2BW_WORLD_CA, 'utf8'))
    await run(s, 'head -c 33554432 /dev/urandom > /tmp/up.bin')
    // TLS end to end: a byte changed on the way fails the record's check
    const down = await curl(s, `--cacert /tmp/world-ca.pem -o /dev/null -w '%{size_download}' https://other.world.test/bytes/33554432`)
    assert.equal(down.code, 0, down.err)
    assert.equal(down.body, '33554432')
    const up = await curl(s, `--cacert /tmp/world-ca.pem -T /tmp/up.bin https://other.world.test/sink`)
    assert.equal(up.code, 0, up.err)
    assert.deepEqual(JSON.parse(up.body), { received: 33554432 })
    // Not TLS at all on port 443: passed on unnamed. The sandbox ends its
    // writing; the world's server answers only then.
    await s.files.write('/tmp/half.py', [
      'import socket',
      "s = socket.create_connection(('203.0.113.2', 443), timeout=10)",
      "s.sendall(b'x' * 100000)",
      's.shutdown(socket.SHUT_WR)',
      "got = b''",
      'while True:',
      '    chunk = s.recv(65536)',
      '    if not chunk: break',
      '    got += chunk',
      'print(got.decode().strip())',
    ].join('\n'))
    const half = await run(s, 'python3 /tmp/half.py')
    assert.equal(half.stdout.trim(), 'received 100000', half.stderr)
  })

  test('an intercepted connection carries 32 MiB each way intact, and the requests after them on it', async () => {
    const s = await sandbox({ network: { rules: rules({ 'X-Fixed': 'yes' }) } })
    await run(s, 'head -c 33554432 /dev/urandom > /tmp/up.bin')
    // The proxy decrypts and encrypts again: only the bytes' digest can tell
    // a relay that lost, doubled or reordered some.
    const [before, after] = [tag('before'), tag('after')]
    const down = await curl(s, `-D /tmp/down.head -o /tmp/down.bin https://api.world.test/random/33554432 --next -sS -o /dev/null https://api.world.test${before}`)
    assert.equal(down.code, 0, down.err)
    const sent = /x-body-sha256: ([0-9a-f]{64})/i.exec((await run(s, 'cat /tmp/down.head')).stdout)
    assert.ok(sent, 'the world said what it sent')
    const got = await run(s, 'stat -c %s /tmp/down.bin; sha256sum < /tmp/down.bin')
    assert.deepEqual(got.stdout.split(/\s+/).slice(0, 2), ['33554432', sent[1]])
    const up = await curl(s, `-T /tmp/up.bin https://api.world.test/digest --next -sS -o /dev/null https://api.world.test${after}`)
    assert.equal(up.code, 0, up.err)
    const upSum = (await run(s, 'sha256sum < /tmp/up.bin')).stdout.split(/\s+/)[0]
    assert.deepEqual(JSON.parse(up.body), { received: 33554432, sha256: upSum })
    // Each a request of its own on the same kept connection, the rule's header set.
    for (const p of [before, after]) assert.equal(atWorld(p).headers['x-fixed'], 'yes', `${p} reached the world rewritten`)
  })

  test('a sandbox without rules is not intercepted; updateNetwork adds rules and clearing them stops it', async () => {
    const s = await sandbox()
    await s.files.write('/tmp/world-ca.pem', readFileSync(process.env.E2BW_WORLD_CA, 'utf8'))
    const plain = tag('plain')
    assert.equal((await curl(s, `--cacert /tmp/world-ca.pem https://api.world.test${plain}`)).code, 0)
    assert.equal(atWorld(plain).headers['x-later'], undefined)
    await s.updateNetwork({ rules: rules({ 'X-Later': 'on' }) })
    const later = tag('later')
    const r = await curl(s, `https://api.world.test${later}`)
    assert.equal(r.code, 0, r.err)
    assert.equal(atWorld(later).headers['x-later'], 'on')
    await s.updateNetwork({})
    const cleared = tag('cleared')
    assert.equal((await curl(s, `--cacert /tmp/world-ca.pem https://api.world.test${cleared}`)).code, 0)
    assert.equal(atWorld(cleared).headers['x-later'], undefined)
  })

  test('answer 502 with why: an unknown secret, a destination whose certificate does not verify, one the rules refuse', async () => {
    const s = await sandbox({ network: { rules: { ...rules({ 'X-Key': Secret.fill('no-such-secret') }), ...rules({ 'X-A': 'b' }, 'bad.world.test') } } })
    const unknown = await curl(s, `-w '%{http_code}' https://api.world.test${tag('unknown')}`)
    assert.match(unknown.body, /secret 'no-such-secret' is not defined/)
    assert.match(unknown.body, /502$/)
    const bad = await curl(s, `-w '%{http_code}' https://bad.world.test${tag('bad')}`)
    assert.match(bad.body, /cannot reach bad\.world\.test: its certificate does not verify/)
    assert.match(bad.body, /502$/)
    // Rules grant no access: with everything denied but another name (on another
    // address), the rule's name stays out of reach.
    const closed = await sandbox({ network: { denyOut: ['0.0.0.0/0'], allowOut: ['echo.world.test'], rules: rules({ 'X-A': 'b' }) } })
    await run(closed, 'getent hosts api.world.test echo.world.test')
    const p = tag('closed')
    const refused = await curl(closed, `-w '%{http_code}' https://api.world.test${p}`)
    assert.notEqual(refused.code, 0, 'the connection is refused: api.world.test is not in allowOut')
    assert.equal(atWorld(p), undefined, 'nothing reached the world')
  })

  test('set a rule\'s headers on plain HTTP too (port 80), for the connection\'s own host only', async () => {
    const s = await sandbox({ network: { rules: rules({ 'X-Plain': Secret.fill('world-token') }) } })
    const p = tag('plain-rule')
    assert.equal((await curl(s, `http://api.world.test${p}`)).code, 0)
    const got = seen().find((e) => e.kind === 'http' && e.path === p)
    assert.ok(got, 'the request reached the world')
    assert.ok(got.headers['x-plain'] === SECRET_VALUE, 'the secret, filled in outside the sandbox, reached its host over HTTP')
    // Sent to another address under the rule's name, it still goes to the name's own server:
    // no certificate would tell an address the sandbox chose from it.
    const f = tag('plain-fronted')
    assert.equal((await curl(s, `--resolve api.world.test:80:203.0.113.11 http://api.world.test${f}`)).code, 0)
    const fronted = seen().find((e) => e.kind === 'http' && e.path === f)
    assert.equal(fronted.local, '203.0.113.10:80')
    assert.ok(fronted.headers['x-plain'] === SECRET_VALUE)
    const q = tag('plain-other')
    assert.equal((await curl(s, `http://other.world.test${q}`)).code, 0)
    assert.equal(seen().find((e) => e.kind === 'http' && e.path === q).headers['x-plain'], undefined, 'another host: untouched')
    // A kept-alive connection made for the rule's host cannot carry a request
    // for another host to that server: refused with the proxy's 502.
    const [k1, k2] = [tag('keep-1'), tag('keep-2')]
    const r = await run(s, `python3 - <<'EOF'
import socket
c = socket.create_connection(('api.world.test', 80), timeout=10)
f = c.makefile('rb')
def answer():
    status = f.readline().split()[1].decode()
    length = 0
    while True:
        line = f.readline()
        if line in (b'\\r\\n', b''): break
        if line.lower().startswith(b'content-length:'): length = int(line.split(b':')[1])
    f.read(length)
    return status
c.sendall(b'GET ${k1} HTTP/1.1\\r\\nHost: api.world.test\\r\\n\\r\\n')
print(answer())
c.sendall(b'GET ${k2} HTTP/1.1\\r\\nHost: other.world.test\\r\\n\\r\\n')
print(answer())
EOF`)
    assert.equal(r.stdout.trim(), '200\n502', r.stderr)
    assert.ok(seen().some((e) => e.kind === 'http' && e.path === k1))
    assert.equal(seen().some((e) => e.kind === 'http' && e.path === k2), false, 'the second request never left')
  })

  test('domain names in allowOut match the TLS server name on port 443, as on E2B', async () => {
    const s = await sandbox({ network: { allowOut: ['api.world.test'], denyOut: ['0.0.0.0/0'] } })
    await s.files.write('/tmp/world-ca.pem', readFileSync(process.env.E2BW_WORLD_CA, 'utf8'))
    const p = tag('sni-allowed')
    const ok = await curl(s, `--cacert /tmp/world-ca.pem https://api.world.test${p}`)
    assert.equal(ok.code, 0, ok.err)
    assert.equal(atWorld(p)?.servername, 'api.world.test', 'passed through: the world saw the sandbox\'s own TLS')
    // other.world.test is served from the same address: refused by its name.
    const q = tag('sni-other')
    const other = await curl(s, `--cacert /tmp/world-ca.pem https://other.world.test${q}`)
    assert.notEqual(other.code, 0)
    assert.equal(atWorld(q), undefined, 'nothing reached the world')
    // No server name at all (an address): refused.
    const r = tag('sni-none')
    const none = await curl(s, `-k https://203.0.113.10${r}`)
    assert.notEqual(none.code, 0)
    assert.equal(atWorld(r), undefined)
    // A rule's name needs allowOut too, then both apply: allowed and rewritten.
    await s.updateNetwork({ allowOut: ['api.world.test'], denyOut: ['0.0.0.0/0'], rules: rules({ 'X-Both': 'yes' }) })
    const b = tag('sni-rule')
    const both = await curl(s, `https://api.world.test${b}`)
    assert.equal(both.code, 0, both.err)
    assert.equal(atWorld(b)?.headers['x-both'], 'yes')
  })

  test('refuse what cannot be honoured, with E2B\'s 400', async () => {
    const create = (network) => api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', network })
    for (const [network, why] of [
      [{ rules: { '*': [{}] } }, /is not a domain name/],
      [{ rules: { 'api.world.test': {} } }, /must be a list of rules/],
      [{ rules: { 'api.world.test': [{ transform: { headers: { 'Bad Name': 'x' } } }] } }, /is not a header name/],
      [{ rules: { 'api.world.test': [{ transform: { headers: { A: 'line\nbreak' } } }] } }, /must be a string of at most/],
      [{ rules: { 'api.world.test': [{ transform: { headers: { A: '${e2b.identity.tokens.aws}' } } }] } }, /workload identity tokens/],
    ]) {
      const r = await create(network)
      assert.equal(r.status, 400, JSON.stringify(network))
      assert.match(r.json.message, why)
    }
  })
})
