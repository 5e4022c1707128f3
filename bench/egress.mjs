#!/usr/bin/env node
// The egress proxy of transform rules (docs/backend/networking.md, "Transform
// rules"), measured in a test-made world (host/world.mjs: two network
// namespaces, nothing leaves the machine; root needed) whose HTTPS server
// has a CA of its own. From inside a sandbox, with curl, three ways to the
// same server, alternated in rounds:
//   direct       — a sandbox without rules: no proxy at all (the limit)
//   passed       — a sandbox with a rule for another name: its port 443 goes
//                  through the proxy, which reads the ClientHello and passes
//                  the bytes on
//   intercepted  — a sandbox with a rule for this name: TLS ends at the
//                  proxy, which sets the rule's header on every request
//   named        — a sandbox whose allowOut names it (denyOut everything):
//                  the proxy reads the server name, resolves it from the
//                  backend and opens the sandbox's chain to that address
//                  (one nftables element) before passing the bytes on
// For each: a new connection per request (TLS handshake included: curl's
// time_total), R requests per round; requests on one kept-alive connection;
// the download rate of one M MiB body, and the upload rate of one (a PUT of
// a file in the sandbox's /tmp), with the backend's CPU time per MiB moved
// (utime + stime of its process during the transfer: the proxy's own cost,
// steady on a loaded machine where rates are not). Medians over all rounds,
// and ratios against direct.
//
//   node bench/egress.mjs [--rounds 5] [--requests 40] [--mib 64] [--json] [--baseline BINARY]
//   (--requests 0: the transfer rates only; --baseline: a second backend from
//   another build, e.g. main's, whose four ways alternate with these in the
//   same rounds, reported as "<way> (baseline)")
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const self = fileURLToPath(import.meta.url)
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}

if (!process.env.E2BW_BENCH_INSIDE) {
  const { makeWorld } = await import('../host/world.mjs')
  const world = await makeWorld()
  try {
    process.exitCode = world.runNode(self, process.argv.slice(2), { E2BW_BENCH_INSIDE: '1' })
  } finally {
    world.remove()
  }
} else {
  const { startBackend } = await import('../host/backend.mjs')
  const { Sandbox } = await import('e2b')
  const ROUNDS = Number(arg('rounds', 5))
  const REQUESTS = Number(arg('requests', 40))
  const MIB = Number(arg('mib', 64))
  const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] }
  const round = (x) => Math.round(x * 1000) / 1000
  const median = (xs) => round(quantile(xs, 0.5))

  const extraArgs = ['--egress-ca-file', process.env.E2BW_WORLD_CA]
  const backends = { '': await startBackend({ extraArgs }) }
  if (arg('baseline')) backends[' (baseline)'] = await startBackend({ extraArgs, binary: arg('baseline') })
  const rule = (host) => ({ [host]: [{ transform: { headers: { 'X-Bench': 'on' } } }] })
  const ways = {}
  const pidOf = {}
  for (const [suffix, backend] of Object.entries(backends)) {
    const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
    const made = {
      direct: await Sandbox.create('base', opts),
      passed: await Sandbox.create('base', { ...opts, network: { rules: rule('other.world.test') } }),
      intercepted: await Sandbox.create('base', { ...opts, network: { rules: rule('api.world.test') } }),
      named: await Sandbox.create('base', { ...opts, network: { allowOut: ['api.world.test'], denyOut: ['0.0.0.0/0'] } }),
    }
    for (const [way, s] of Object.entries(made)) {
      ways[way + suffix] = s
      pidOf[way + suffix] = backend.pid
    }
  }
  // The backend's CPU time so far, in ms (clock ticks of /proc/<pid>/stat: 10 ms each).
  const cpuMs = (pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
  // Every sandbox trusts the world's CA through the system bundle, as the
  // intercepted one trusts the egress CA there: each curl reads the same file.
  const ca = readFileSync(process.env.E2BW_WORLD_CA, 'utf8')
  for (const s of Object.values(ways)) {
    await s.files.write('/tmp/world-ca.pem', ca)
    await s.commands.run('cat /tmp/world-ca.pem >> /etc/ssl/certs/ca-certificates.crt', { user: 'root' })
    await s.commands.run(`head -c ${MIB << 20} /dev/zero > /tmp/upload.bin`)
  }
  const url = 'https://api.world.test'
  const curl = async (way, args) => {
    const r = await ways[way].commands.run(`curl -sS -o /dev/null ${args}`, { timeoutMs: 300000 })
    return r.stdout.trim().split('\n').map(Number)
  }
  const results = Object.fromEntries(Object.keys(ways).map((w) => [w, { fresh_ms: [], kept_ms: [], mib_per_s: [], up_mib_per_s: [], cpu: [], up_cpu: [] }]))
  for (let r = 0; r < ROUNDS; r++) {
    for (const way of Object.keys(ways)) {
      if (REQUESTS > 0) { // --requests 0: the transfer rates only
        const fresh = await ways[way].commands.run(
          `for i in $(seq ${REQUESTS}); do curl -sS -o /dev/null -w '%{time_total}\\n' ${url}/fresh; done`, { timeoutMs: 300000 })
        results[way].fresh_ms.push(...fresh.stdout.trim().split('\n').map((x) => Number(x) * 1000))
        // one connection: the first transfer carries the handshake, the others only their request
        const kept = await curl(way, `-w '%{time_total}\\n' ${Array.from({ length: REQUESTS }, (_, i) => `${url}/kept-${i} -o /dev/null`).join(' ')}`)
        results[way].kept_ms.push(...kept.slice(1).map((t) => t * 1000))
      }
      let cpu0 = cpuMs(pidOf[way])
      const [speed] = await curl(way, `-w '%{speed_download}\\n' ${url}/bytes/${MIB << 20}`)
      results[way].mib_per_s.push(speed / (1 << 20))
      results[way].cpu.push((cpuMs(pidOf[way]) - cpu0) / MIB)
      cpu0 = cpuMs(pidOf[way])
      const [up] = await curl(way, `-w '%{speed_upload}\\n' -T /tmp/upload.bin ${url}/sink`)
      results[way].up_mib_per_s.push(up / (1 << 20))
      results[way].up_cpu.push((cpuMs(pidOf[way]) - cpu0) / MIB)
    }
  }
  const out = {}
  for (const [way, r] of Object.entries(results)) {
    out[way] = { fresh_ms_median: median(r.fresh_ms), kept_ms_median: median(r.kept_ms), mib_per_s_median: median(r.mib_per_s),
      up_mib_per_s_median: median(r.up_mib_per_s), backend_cpu_ms_per_mib: median(r.cpu), up_backend_cpu_ms_per_mib: median(r.up_cpu),
      requests: r.fresh_ms.length }
  }
  for (const suffix of Object.keys(backends)) {
    const direct = out['direct' + suffix]
    for (const way of ['passed', 'intercepted', 'named'].map((w) => w + suffix)) {
      out[way].fresh_vs_direct = round(out[way].fresh_ms_median / direct.fresh_ms_median)
      out[way].kept_vs_direct = round(out[way].kept_ms_median / direct.kept_ms_median)
      out[way].rate_vs_direct = round(out[way].mib_per_s_median / direct.mib_per_s_median)
      out[way].up_vs_direct = round(out[way].up_mib_per_s_median / direct.up_mib_per_s_median)
    }
  }
  for (const s of Object.values(ways)) await s.kill().catch(() => {})
  for (const backend of Object.values(backends)) await backend.stop()
  if (process.argv.includes('--json')) console.log(JSON.stringify({ rounds: ROUNDS, requests: REQUESTS, mib: MIB, ...out }))
  else {
    for (const [way, o] of Object.entries(out)) console.log(way.padEnd(24), JSON.stringify(o))
  }
}
