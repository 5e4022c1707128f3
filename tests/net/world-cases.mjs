// The networking cases, run by tests/net/net-world.test.mjs inside the
// "host" namespace of a test world (host/world.mjs): the backend started
// here has no route but the one to the world, so nothing a sandbox sends can
// leave this machine. Every sandbox is driven by the official e2b SDK
// (Sandbox.create({ allowInternetAccess, network }), sandbox.updateNetwork),
// which is the parity the issue asks for. E2BW_WORLD_LOG names the world
// servers' log: what reached the world, and what did not.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'

import { Sandbox } from 'e2b'

import { api, startBackend } from '../../host/backend.mjs'
import { run, sandboxMaker, seen, tag } from './world-sandboxes.mjs'
import { SOCKS, WORLD } from '../../host/world.mjs'
import { until } from '../../host/wait.mjs'

const CONN_LIMIT = 16
const reachedWorld = (path) => seen().some((e) => e.kind === 'http' && e.path === path)

let backend
let opts
const sandboxes = sandboxMaker()
const sandbox = (extra) => sandboxes.create(extra)

// GET http://<addr><path> from inside s: the world's JSON, or null when the
// connection failed (curl: at most 3 s; a refused one fails at once).
async function get(s, addr, path) {
  const r = await run(s, `curl -sS -m 3 http://${addr}${path}`)
  return r.exitCode === 0 ? JSON.parse(r.stdout) : null
}

async function assertReaches(s, addr, what) {
  const path = tag(what)
  const got = await get(s, addr, path)
  assert.ok(got, `${what}: ${addr} should be reachable`)
  assert.equal(got.path, path)
  assert.equal(got.remote, WORLD.hostAddress, 'the world sees the backend\'s address (NAT)')
}

async function assertBlocked(s, addr, what) {
  const path = tag(what)
  assert.equal(await get(s, addr, path), null, `${what}: ${addr} should be unreachable`)
  assert.equal(reachedWorld(path), false, `${what}: nothing reached the world`)
}

before(async () => {
  backend = await startBackend({ extraArgs: ['--listen', '0.0.0.0:0', '--allow-remote', '--sandbox-conn-limit', String(CONN_LIMIT)] })
  assert.equal(backend.isolation, 'full', 'the networking cases need an isolating backend')
  opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
  sandboxes.opts = opts
})

after(async () => {
  await sandboxes.killAll()
  if (backend) assert.deepEqual(await backend.stop(), { code: 0, signal: null })
})

describe('egress', () => {
  test('is on by default: NAT to the world, and names resolve through the relay while the host resolver is on its own loopback', async () => {
    const s = await sandbox()
    await assertReaches(s, WORLD.web, 'default')
    const conf = await run(s, 'cat /etc/resolv.conf')
    assert.match(conf.stdout, /^nameserver 127\.0\.0\.53$/m)
    const name = `world.test`
    const got = await get(s, name, tag('dns'))
    assert.ok(got, `${name} resolves and answers`)
    assert.equal(got.local, `${WORLD.web}:80`)
    assert.ok(seen().some((e) => e.kind === 'dns' && e.name === name), 'the question reached the host\'s resolver')
    const tcp = await run(s, `python3 - <<'EOF'
import socket, struct
q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b'\\x05world\\x04test\\x00' + struct.pack('>HH', 1, 1)
c = socket.create_connection(('127.0.0.53', 53), timeout=5)
c.sendall(struct.pack('>H', len(q)) + q)
n = struct.unpack('>H', c.recv(2))[0]
a = c.recv(n)
print('.'.join(str(b) for b in a[-4:]))
EOF`)
    assert.equal(tcp.stdout.trim(), WORLD.web, 'DNS over TCP is relayed too')
  })

  test('allowInternetAccess: false sends nothing anywhere, DNS included; loopback and ingress still work', async () => {
    // From the warm pool (attached with open rules): the request's replace them.
    await until(async () => (await (await fetch(`${backend.apiUrl}/health/details`)).json()).warm.ready > 0, 'a warm sandbox is ready')
    const s = await sandbox({ allowInternetAccess: false })
    await assertBlocked(s, WORLD.web, 'off')
    const name = `off-${randomBytes(3).toString('hex')}.world.test`
    const r = await run(s, `getent hosts ${name}`)
    assert.notEqual(r.exitCode, 0)
    assert.equal(seen().some((e) => e.kind === 'dns' && e.name === name), false, 'no question left the sandbox')
    await s.commands.run('python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1', { background: true })
    await until(async () => (await run(s, 'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/')).stdout === '200', 'loopback inside the sandbox')
    const res = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': s.sandboxId, 'E2b-Sandbox-Port': '8000' } })
    assert.equal(res.status, 200, 'ingress through the proxy')
    const info = await api(backend, 'GET', `/sandboxes/${s.sandboxId}`)
    assert.equal(info.json.allowInternetAccess, false)
  })

  test('denyOut blocks one address and not another', async () => {
    const s = await sandbox({ network: { denyOut: [`${WORLD.web}/32`] } })
    await assertBlocked(s, WORLD.web, 'denied')
    await assertReaches(s, WORLD.echo, 'not-denied')
    const info = await Sandbox.getInfo(s.sandboxId, opts)
    assert.deepEqual(info.network?.denyOut, [`${WORLD.web}/32`])
  })

  test('an address both lists match is allowed: allowOut beats denyOut, and 0.0.0.0/0 in denyOut means "only these"', async () => {
    const s = await sandbox({ network: { allowOut: [WORLD.web], denyOut: ['0.0.0.0/0'] } })
    await assertReaches(s, WORLD.web, 'allowed')
    await assertBlocked(s, WORLD.echo, 'only-these')
  })

  test('domain names in allowOut match the HTTP Host on port 80, as on E2B: not the address, not another name on it, not other ports', async () => {
    const s = await sandbox({ network: { allowOut: ['world.test'], denyOut: ['0.0.0.0/0'] } })
    await assertBlocked(s, WORLD.web, 'by-address')
    await assertReaches(s, 'world.test', 'by-name')
    // other.world.test has world.test's address (one server, many names, as at a CDN).
    await assertBlocked(s, 'other.world.test', 'same-address-other-name')
    await assertBlocked(s, 'echo.world.test', 'other-name')
    // An allowed name cannot be taken to another address: the proxy goes to the name's own.
    const fronted = await run(s, `curl -sS -m 3 --resolve world.test:80:${WORLD.echo} http://world.test${tag('fronted')}`)
    assert.equal(fronted.exitCode, 0, fronted.stderr)
    assert.equal(JSON.parse(fronted.stdout).local, `${WORLD.web}:80`)
    // Other ports go by address only, whatever the name.
    const echo = await run(s, `timeout 3 bash -c 'exec 3<>/dev/tcp/world.test/${WORLD.echoPort}; echo hi >&3; head -c 3 <&3'`)
    assert.notEqual(echo.exitCode, 0, 'port 7007 of an allowed name stays closed')
    // Addresses beside names keep their meaning, on every port.
    const m = await sandbox({ network: { allowOut: ['world.test', WORLD.echo], denyOut: ['0.0.0.0/0'] } })
    await assertReaches(m, WORLD.echo, 'address-beside-names')
    const w = await sandbox({ network: { allowOut: ['*.world.test'], denyOut: ['0.0.0.0/0'] } })
    await assertReaches(w, 'echo.world.test', 'below-wildcard')
    await assertBlocked(w, 'world.test', 'wildcard-apex')
    await s.updateNetwork({ denyOut: ['0.0.0.0/0'] })
    await assertBlocked(s, 'world.test', 'domain-dropped')
    await s.updateNetwork({ allowOut: ['other.world.test'], denyOut: ['0.0.0.0/0'] })
    await assertReaches(s, 'other.world.test', 'domain-added')
  })

  test('a request head sent a byte at a time gets 10 s in all, not 10 s a byte', async () => {
    // The proxy waits for a whole head to read its Host; each byte must not
    // start that wait again. A byte every 2 s for 24 s: closed on the way.
    const s = await sandbox({ network: { allowOut: ['world.test'], denyOut: ['0.0.0.0/0'] } })
    const script = [
      'import socket, time',
      "c = socket.create_connection(('world.test', 80), timeout=5)",
      "head = b'GET /slow HTTP/1.1\\r\\nHost: world.test\\r\\n'",
      'for i in range(12):',
      '    try:',
      '        c.send(head[i:i + 1])',
      '        time.sleep(2)',
      '        c.setblocking(False)',
      "        if c.recv(1) == b'': print('closed after', i + 1); break",
      '    except BlockingIOError: c.setblocking(True)',
      "    except OSError: print('closed after', i + 1); break",
      "else: print('open')",
    ].join('\n')
    const r = await run(s, `python3 -c "${script}"`)
    assert.match(r.stdout, /^closed after ([1-9]|1[01])\b/, `the proxy kept waiting: ${r.stdout} ${r.stderr}`)
  })

  test('updateNetwork replaces the rules for the next connection; fields left out are cleared', async () => {
    const s = await sandbox()
    await assertReaches(s, WORLD.web, 'before')
    await s.updateNetwork({ denyOut: [WORLD.web] })
    await assertBlocked(s, WORLD.web, 'after-deny')
    await assertReaches(s, WORLD.echo, 'after-deny-other')
    await s.updateNetwork({ allowInternetAccess: false })
    await assertBlocked(s, WORLD.echo, 'after-off')
    await s.updateNetwork({})
    await assertReaches(s, WORLD.web, 'cleared')
  })

  test('connections per sandbox are capped (--sandbox-conn-limit)', async () => {
    const s = await sandbox()
    const r = await run(s, `python3 - <<'EOF'
import socket
held = []
for i in range(${CONN_LIMIT + 8}):
    try:
        held.append(socket.create_connection(('${WORLD.echo}', ${WORLD.echoPort}), timeout=3))
    except OSError:
        pass
print(len(held))
EOF`)
    // The kernel's count (nf_conncount, nft's `ct count`) lets one more
    // through now and then on a loaded machine (seen once in a full run:
    // 17 of 16); never more, and never fewer than the limit.
    const held = Number(r.stdout.trim())
    assert.ok(held === CONN_LIMIT || held === CONN_LIMIT + 1, `${held} connections held, limit ${CONN_LIMIT}`)
  })

  test('IPv6: none (no address but loopback\'s, no route)', async () => {
    const s = await sandbox()
    const r = await run(s, 'ip -6 route show; ip -6 addr show scope global')
    assert.equal(r.stdout.trim(), '')
  })
})

describe('rules that last', () => {
  test('updateNetwork\'s rules are recorded: a backend killed and started again on its --state-dir sets them up again, and forks get them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-net-state-'))
    const apiKey = `e2b_local_${randomBytes(16).toString('hex')}`
    let b = await startBackend({ apiKey, stateDir: dir })
    const o = () => ({ apiKey, apiUrl: b.apiUrl, sandboxUrl: b.sandboxUrl })
    try {
      const s = await Sandbox.create('base', { ...o(), timeoutMs: 600_000, network: { denyOut: [`${WORLD.echo}/32`] } })
      await assertBlocked(s, WORLD.echo, 'create-deny')
      await s.updateNetwork({ denyOut: [`${WORLD.web}/32`] })
      await assertBlocked(s, WORLD.web, 'updated-deny')
      await assertReaches(s, WORLD.echo, 'updated-allow')
      // Killed: only what was recorded at the update can bring the rules back.
      assert.equal((await b.stop('SIGKILL')).signal, 'SIGKILL')
      b = await startBackend({ apiKey, stateDir: dir })
      const back = await Sandbox.connect(s.sandboxId, o())
      await assertBlocked(back, WORLD.web, 'kept-deny')
      await assertReaches(back, WORLD.echo, 'kept-allow')
      assert.deepEqual((await Sandbox.getInfo(s.sandboxId, o())).network?.denyOut, [`${WORLD.web}/32`])
      const [fork] = await back.fork({ count: 1 })
      assert.ok(fork instanceof Sandbox, String(fork))
      await assertBlocked(fork, WORLD.web, 'fork-deny')
      await assertReaches(fork, WORLD.echo, 'fork-allow')
      await Promise.all([fork.kill(), back.kill()])
      assert.deepEqual(await b.stop(), { code: 0, signal: null }, b.stderr())
    } finally {
      await b.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('egressProxy: a SOCKS5 tunnel', () => {
  const proxy = `${WORLD.echo}:1080`
  // GET through the tunnel: the world's JSON, or null; the world sees the proxy, never the backend.
  const viaTunnel = async (s, addr, what) => {
    const path = tag(what)
    const got = await get(s, addr, path)
    return { got, path }
  }

  test('carries every TCP connection, after the sandbox\'s own rules, and fails closed', async () => {
    const s = await sandbox({ network: { egressProxy: { address: proxy }, denyOut: [`${WORLD.echo}/32`] } })
    const info = await Sandbox.getInfo(s.sandboxId, opts)
    assert.deepEqual(info.network?.egressProxy, { address: proxy })
    const { got, path } = await viaTunnel(s, WORLD.web, 'tunnel-http')
    assert.ok(got, 'reached through the proxy')
    assert.notEqual(got.remote, WORLD.hostAddress, 'the world sees its own proxy, not the backend\'s NAT')
    assert.ok(seen().some((e) => e.kind === 'socks' && e.target === WORLD.web && e.port === 80), 'the proxy was asked for it')
    assert.ok(reachedWorld(path))
    // Another port goes through it too.
    const echo = await run(s, `timeout 5 bash -c 'exec 3<>/dev/tcp/${WORLD.web}/${WORLD.echoPort}; echo tunneled >&3; head -c 8 <&3'`)
    assert.equal(echo.stdout, 'tunneled')
    // denyOut first: the proxy is never asked for a denied address; nor for what is never reachable.
    const before = seen().filter((e) => e.kind === 'socks').length
    await assertBlocked(s, WORLD.echo, 'tunnel-denied')
    await assertBlocked(s, WORLD.metadata, 'tunnel-metadata')
    await assertBlocked(s, WORLD.lan, 'tunnel-lan')
    assert.equal(seen().filter((e) => e.kind === 'socks').length, before, 'nothing refused reached the proxy')
    // A proxy that is not there: nothing leaves, not even directly.
    await s.updateNetwork({ egressProxy: { address: `${WORLD.echo}:1082` } })
    await assertBlocked(s, WORLD.web, 'tunnel-down')
    // updateNetwork without it: straight out again, through the backend's NAT.
    await s.updateNetwork({})
    await assertReaches(s, WORLD.web, 'tunnel-off')
    assert.equal((await Sandbox.getInfo(s.sandboxId, opts)).network?.egressProxy, undefined)
  })

  test('authenticates with a username and password that never show', async () => {
    const s = await sandbox({ network: { egressProxy: { address: `${WORLD.echo}:1081`, username: SOCKS.user, password: SOCKS.password } } })
    assert.deepEqual((await Sandbox.getInfo(s.sandboxId, opts)).network?.egressProxy, { address: `${WORLD.echo}:1081`, username: SOCKS.user })
    const { got } = await viaTunnel(s, WORLD.web, 'tunnel-auth')
    assert.ok(got)
    assert.ok(seen().some((e) => e.kind === 'socks' && e.user === SOCKS.user))
    await s.updateNetwork({ egressProxy: { address: `${WORLD.echo}:1081`, username: SOCKS.user, password: 'wrong' } })
    await assertBlocked(s, WORLD.web, 'tunnel-bad-password')
    assert.ok(!backend.stderr().includes(SOCKS.password), 'the password is never logged')
    const list = await api(backend, 'GET', `/sandboxes/${s.sandboxId}`)
    assert.ok(!JSON.stringify(list.json).includes('wrong') && !JSON.stringify(list.json).includes(SOCKS.password))
  })

  test('gives a proxy 10 s for the whole dial, however slowly it answers', async () => {
    // Port 1083 answers CONNECT a byte every 2 s: whole after 18 s, never
    // silent for 10. The dial's time is one budget, not renewed by each byte.
    const s = await sandbox({ network: { egressProxy: { address: `${WORLD.echo}:1083` } } })
    const path = tag('tunnel-slow')
    const r = await run(s, `curl -sS -m 25 http://${WORLD.web}${path}`)
    assert.notEqual(r.exitCode, 0, `the tunnel gave up before the proxy's answer was whole: ${r.stdout}`)
    assert.ok(seen().some((e) => e.kind === 'socks' && e.target === WORLD.web && e.port === 80), 'the proxy was asked')
    assert.equal(reachedWorld(path), false, 'nothing reached the world')
  })

  test('with domain names in allowOut, asks the proxy for the name', async () => {
    const s = await sandbox({ network: { egressProxy: { address: proxy }, allowOut: ['world.test'], denyOut: ['0.0.0.0/0'] } })
    const { got } = await viaTunnel(s, 'world.test', 'tunnel-name')
    assert.ok(got)
    assert.ok(seen().some((e) => e.kind === 'socks' && e.target === 'world.test' && e.port === 80), 'CONNECT by name')
    await assertBlocked(s, 'echo.world.test', 'tunnel-other-name')
    await assertBlocked(s, 'other.world.test', 'tunnel-same-address-other-name')
  })

  test('E2B\'s 400s for a bad egressProxy', async () => {
    for (const [egressProxy, why] of [
      [{ address: 'no-port' }, /invalid egress proxy address no-port/],
      [{ address: '[::1]:1080' }, /invalid egress proxy address/],
      [{ address: 'proxy.test:70000' }, /invalid egress proxy address/],
      [{ address: proxy, password: 'x' }, /password" needs a username/],
      [{ address: proxy, username: 'u'.repeat(256) }, /must be a string of 1 to 255 bytes/],
      ['socks5://x', /must be an object/],
    ]) {
      const r = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', network: { egressProxy } })
      assert.equal(r.status, 400, JSON.stringify(egressProxy))
      assert.match(r.json.message, why)
    }
  })
})

describe('never reachable', () => {
  test('the backend\'s API and envd ports, through the gateway and the host\'s world address, even with allowOut 0.0.0.0/0', async () => {
    const s = await sandbox({ network: { allowOut: ['0.0.0.0/0'] } })
    const gateway = (await run(s, "ip route show default | awk '{print $3}'")).stdout.trim()
    assert.match(gateway, /^100\.9[6-9]\./)
    const apiPort = new URL(backend.apiUrl).port
    const envdPort = new URL(backend.sandboxUrl).port
    for (const host of [gateway, WORLD.hostAddress])
      for (const port of [apiPort, envdPort]) {
        const r = await run(s, `curl -sS -m 3 -o /dev/null -w '%{http_code}' http://${host}:${port}/health`)
        assert.notEqual(r.exitCode, 0, `${host}:${port} must not answer`)
      }
    // ... while the same ports answer from the backend's own namespace.
    assert.equal((await fetch(`http://${WORLD.hostAddress}:${apiPort}/health`)).status, 204)
  })

  test('another sandbox', async () => {
    const a = await sandbox({ network: { allowOut: ['0.0.0.0/0'] } })
    const b = await sandbox()
    await b.commands.run('python3 -m http.server 8000 --bind 0.0.0.0 >/tmp/served.log 2>&1', { background: true })
    await until(async () => (await run(b, 'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/')).stdout === '200', 'b serves')
    const bAddress = (await run(b, "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1")).stdout.trim()
    const r = await run(a, `curl -sS -m 3 http://${bAddress}:8000/from-a`)
    assert.notEqual(r.exitCode, 0)
    assert.doesNotMatch((await run(b, 'cat /tmp/served.log')).stdout, /from-a/)
  })

  test('169.254.169.254, even when allowOut names it', async () => {
    const s = await sandbox({ network: { allowOut: [WORLD.metadata, '169.254.0.0/16'] } })
    await assertBlocked(s, WORLD.metadata, 'metadata')
  })

  test('an RFC 1918 address is blocked by default and reached once allowOut names it', async () => {
    const s = await sandbox()
    await assertBlocked(s, WORLD.lan, 'lan-default')
    const t = await sandbox({ network: { allowOut: ['10.99.0.0/16'] } })
    await assertReaches(t, WORLD.lan, 'lan-allowed')
  })
})

describe('rules the backend refuses', () => {
  test('with E2B\'s messages, before anything is created', async () => {
    const cases = [
      [{ network: { denyOut: ['example.com'] } }, /invalid denied CIDR example\.com/],
      [{ network: { allowOut: ['example.com'] } }, /you must include 'ALL_TRAFFIC' in deny out/],
      [{ network: { allowOut: ['bad_name!'], denyOut: ['0.0.0.0/0'] } }, /invalid allowed address bad_name!/],
      [{ network: { allowOut: ['2001:db8::1'] } }, /IPv6 is not routed/],
      [{ network: { denyOut: ['0.0.0.0'] } }, /invalid denied CIDR 0\.0\.0\.0/],
      [{ network: { maskRequestHost: 'a b' } }, /mask request host is not valid/],
      [{ network: { httpsPorts: [0] } }, /network\.httpsPorts" must be an array of ports/],
    ]
    for (const [extra, message] of cases) {
      const r = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', ...extra })
      assert.equal(r.status, 400, JSON.stringify(extra))
      assert.match(r.json.message, message)
    }
    const missing = await api(backend, 'PUT', '/sandboxes/nosuchsandbox000000/network', {})
    assert.equal(missing.status, 404)
    const s = await sandbox()
    await s.pause()
    const paused = await api(backend, 'PUT', `/sandboxes/${s.sandboxId}/network`, { denyOut: ['0.0.0.0/0'] })
    assert.equal(paused.status, 409)
  })
})

describe('what the backend leaves', () => {
  const tables = () => execFileSync('nft', ['list', 'tables', 'inet']).toString()
  const claims = () => execFileSync('ip', ['-4', 'route', 'show', 'proto', '226']).toString()

  test('nothing after it exits, and nothing of a killed one after the next start', async () => {
    const first = await startBackend()
    const s = await Sandbox.create('base', { apiKey: first.apiKey, apiUrl: first.apiUrl, sandboxUrl: first.sandboxUrl })
    assert.equal((await s.commands.run('echo up')).stdout, 'up\n')
    assert.match(tables(), new RegExp(`e2b_local_${first.pid}\\b`))
    await first.stop('SIGKILL')
    const next = await startBackend()
    assert.match(next.stderr(), new RegExp(`removing the nftables table left by backend ${first.pid}`))
    assert.doesNotMatch(tables(), new RegExp(`e2b_local_${first.pid}\\b`))
    // Also while the killed backend's sandbox routes still hold its block.
    assert.match(next.stderr(), new RegExp(`removing the address claim \\S+ left by backend ${first.pid}`))
    const exit = await next.stop()
    assert.deepEqual(exit, { code: 0, signal: null }, `the backend exits cleanly on SIGTERM:\n${next.stderr()}`)
    await until(() => !new RegExp(`e2b_local_${next.pid}\\b`).test(tables()), 'the table of a stopped backend is gone')
    const left = claims()
    assert.doesNotMatch(left, new RegExp(`metric ${first.pid}\\b|metric ${next.pid}\\b`),
      `address claims of backends ${first.pid} (killed) and ${next.pid} (stopped) are gone; the second one's log:\n${next.stderr()}`)
  })
})
