// A private little internet for the networking tests and benchmarks, made of
// two network namespaces this process creates (root is required: CI is root):
//
//   host   where the backend runs (`ip netns exec`): its only route is a veth
//          to the world (203.0.113.1/24, default via 203.0.113.2), and its
//          resolver is a DNS server on its own loopback (127.0.0.53, through
//          /etc/netns/<host>/resolv.conf), as with systemd-resolved;
//   world  203.0.113.2/24 on the veth and, on its loopback, 203.0.113.10 and
//          203.0.113.11 (TEST-NET-3), 10.99.0.1 (an RFC 1918 address) and
//          169.254.169.254 (a cloud metadata address), all served by one HTTP
//          server (port 80) and one TCP echo (port 7007).
//
// No packet can leave: neither namespace has a link to anything but the
// other. Everything is removed by world.remove(), and at process exit if the
// caller could not (a failed test); the worlds of a test process that was
// killed are removed by the next makeWorld().
//
//   const world = await makeWorld()
//   world.host / world.world    namespace names
//   world.exec(ns, cmd, args)   runs a command in a namespace, returns stdout
//   world.inHost(cmd, args)     [command, args] that run cmd in the host namespace with its
//                               resolv.conf, keeping the machine's /sys (cgroups): `ip netns
//                               exec` would remount /sys and hide /sys/fs/cgroup
//   world.caFile                the world's CA (PEM), for whoever should trust its TLS
//   world.seen()                the servers' log so far: [{kind, local, remote, path, name, ...}]
//   world.runTests(file)        runs a node:test file in the host namespace: { code, out }
//                               (E2BW_WORLD_LOG names the servers' log there,
//                               E2BW_WORLD_CA the world's CA)
//   world.runNode(file, argv, env)  runs a node script there, its output inherited, with the
//                               same two variables and env added; its exit status
//   world.remove()
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const SERVERS = path.join(here, 'world-servers.mjs')

// The world's SOCKS5 proxy's credentials on port 1081 (world-servers.mjs).
export const SOCKS = { user: 'proxy-user', password: 'proxy-password' }

export const WORLD = {
  hostAddress: '203.0.113.1',
  gateway: '203.0.113.2',
  web: '203.0.113.10',
  echo: '203.0.113.11',
  lan: '10.99.0.1',
  metadata: '169.254.169.254',
  echoPort: 7007,
}

// The world's TLS (port 443): a CA of its own (tls/ca.pem) that only whoever
// is told trusts, a certificate for the names of world.test on WORLD.web,
// and one for a name nobody asks for on WORLD.echo (a server whose
// certificate does not match).
function makeTls(dir) {
  const tls = path.join(dir, 'tls')
  mkdirSync(tls)
  const ssl = (...args) => execFileSync('openssl', args, { cwd: tls, stdio: ['ignore', 'pipe', 'pipe'] })
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=world test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-keyout', 'ca.key', '-out', 'ca.pem')
  for (const [name, san] of [['web', 'DNS:world.test,DNS:api.world.test,DNS:other.world.test'], ['wrong', 'DNS:wrong.invalid']]) {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`)
    writeFileSync(path.join(tls, `${name}.ext`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`)
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`)
  }
  return tls
}

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString()

function startServers(ns, mode, logPath, tlsDir) {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, SERVERS, mode, logPath, tlsDir ?? ''], { stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve(child))
    child.once('exit', (code) => reject(new Error(`world servers (${mode}) exited with ${code}: ${err}`)))
  })
}

// Namespaces e2bw-{h,w}-<pid in base 36><4 characters> of processes that are gone.
function removeStaleWorlds() {
  let names = []
  try { names = ip('netns', 'list').split('\n').map((l) => l.split(' ')[0]) } catch { return }
  for (const name of names) {
    const m = /^e2bw-[hw]-([0-9a-z]+)[0-9a-z]{4}$/.exec(name)
    if (!m || existsSync(`/proc/${parseInt(m[1], 36)}`)) continue
    try { ip('netns', 'del', name) } catch { /* gone meanwhile */ }
    rmSync(`/etc/netns/${name}`, { recursive: true, force: true })
  }
}

export async function makeWorld() {
  if (process.getuid() !== 0)
    throw new Error('the world-namespace tests make network namespaces and need root (CI runs as root); they fail rather than skip')
  removeStaleWorlds()
  const id = `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}`
  const host = `e2bw-h-${id}`
  const world = `e2bw-w-${id}`
  const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-world-'))
  const logPath = path.join(dir, 'seen.jsonl')
  writeFileSync(logPath, '')
  const children = []
  let tlsDir
  let removed = false
  const remove = () => {
    if (removed) return
    removed = true
    for (const c of children) c.kill('SIGKILL')
    for (const ns of [host, world]) { try { ip('netns', 'del', ns) } catch { /* not made */ } }
    rmSync(`/etc/netns/${host}`, { recursive: true, force: true })
    rmSync(dir, { recursive: true, force: true })
  }
  process.on('exit', remove)
  try {
    ip('netns', 'add', host)
    ip('netns', 'add', world)
    ip('-n', host, 'link', 'add', 'up0', 'type', 'veth', 'peer', 'name', 'down0', 'netns', world)
    for (const ns of [host, world]) ip('-n', ns, 'link', 'set', 'lo', 'up')
    ip('-n', host, 'addr', 'add', `${WORLD.hostAddress}/24`, 'dev', 'up0')
    ip('-n', host, 'link', 'set', 'up0', 'up')
    ip('-n', host, 'route', 'add', 'default', 'via', WORLD.gateway)
    ip('-n', world, 'addr', 'add', `${WORLD.gateway}/24`, 'dev', 'down0')
    ip('-n', world, 'link', 'set', 'down0', 'up')
    for (const a of [WORLD.web, WORLD.echo, WORLD.lan, WORLD.metadata]) ip('-n', world, 'addr', 'add', `${a}/32`, 'dev', 'lo')
    mkdirSync(`/etc/netns/${host}`, { recursive: true })
    writeFileSync(`/etc/netns/${host}/resolv.conf`, 'nameserver 127.0.0.53\n')
    tlsDir = makeTls(dir)
    children.push(await startServers(world, 'world', logPath, tlsDir))
    children.push(await startServers(host, 'dns', logPath))
  } catch (err) {
    remove()
    throw err
  }
  const inHost = (cmd, args = []) => ['nsenter', [`--net=/run/netns/${host}`, 'unshare', '-m', '--propagation', 'private', 'sh', '-c',
    `mount --bind /etc/netns/${host}/resolv.conf /etc/resolv.conf && exec "$0" "$@"`, cmd, ...args]]
  return {
    host,
    world,
    logPath,
    caFile: path.join(tlsDir, 'ca.pem'), // the world's CA: trust it to reach its port 443
    exec: (ns, cmd, args = []) => execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString(),
    inHost,
    seen: () => readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    runTests: (file) => runTestsIn(inHost, logPath, path.join(tlsDir, 'ca.pem'), file),
    runNode: (file, argv = [], env = {}) => {
      const [cmd, args] = inHost(process.execPath, [file, ...argv])
      const r = spawnSync(cmd, args, { stdio: 'inherit',
        env: { ...process.env, E2BW_WORLD_LOG: logPath, E2BW_WORLD_CA: path.join(tlsDir, 'ca.pem'), ...env } })
      return r.status ?? 1
    },
    remove,
  }
}

function runTestsIn(inHost, logPath, caFile, file) {
  const [cmd, args] = inHost(process.execPath, ['--test', '--test-reporter=tap', file])
  const env = { ...process.env, E2BW_WORLD_LOG: logPath, E2BW_WORLD_CA: caFile }
  delete env.NODE_TEST_CONTEXT // else the inner runner sees a parent and runs nothing
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { out += d })
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })))
}
