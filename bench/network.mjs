#!/usr/bin/env node
// Sandbox networking, measured in a test-made world
// (host/world.mjs: two network namespaces, nothing leaves the machine;
// root needed). The script makes the world, then runs itself inside the
// world's "host" namespace, where it starts its backends:
//   create   — POST /v2/sandboxes, then envd Start `echo hi` until its first
//              output: median and p99 over N sandboxes, with networking on
//              and with --sandbox-network off, alternating, in the same run
//   iperf3   — TCP throughput to an iperf3 server in the world: from a
//              sandbox (NAT, nftables) and from the backend's own namespace,
//              alternating, R runs of S seconds each; the ratio of the medians
//   update   — PUT /sandboxes/{id}/network (allowOut + denyOut) round trip,
//              median and p99 of U updates, while M other sandboxes have rules
//
//   --gap-ms G waits G ms (off the clock) before each create: someone
//   creating a sandbox now and then rather than a burst (the default, 0).
//
//   node bench/network.mjs [--sandboxes 60] [--runs 5] [--seconds 3] [--updates 100] [--others 50] [--gap-ms G] [--json]
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const self = fileURLToPath(import.meta.url)
const root = path.resolve(path.dirname(self), '..')
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}

if (!process.env.E2BW_BENCH_INSIDE) {
  const { makeWorld } = await import('../host/world.mjs')
  const world = await makeWorld()
  const iperf = spawn('ip', ['netns', 'exec', world.world, 'iperf3', '-s', '-B', '203.0.113.11'], { stdio: 'ignore' })
  try {
    process.exitCode = world.runNode(self, process.argv.slice(2), { E2BW_BENCH_INSIDE: '1' })
  } finally {
    iperf.kill('SIGKILL')
    world.remove()
  }
} else {
  const { startBackend, api } = await import('../host/backend.mjs')
  const { createFirstOutput } = await import('./lib/first-output.mjs')
  const { Sandbox } = await import('e2b')
  const N = Number(arg('sandboxes', 60))
  const RUNS = Number(arg('runs', 5))
  const SECONDS = Number(arg('seconds', 3))
  const UPDATES = Number(arg('updates', 100))
  const OTHERS = Number(arg('others', 50))
  const GAP_MS = Number(arg('gap-ms', 0))
  const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] }
  const round = (x) => Math.round(x * 100) / 100
  const stats = (xs) => ({ median: round(quantile(xs, 0.5)), p99: round(quantile(xs, 0.99)), n: xs.length })

  const on = await startBackend()
  const off = await startBackend({ extraArgs: ['--sandbox-network', 'off'] })
  const createAndFirstOutput = async (backend) => {
    if (GAP_MS > 0) await new Promise((resolve) => setTimeout(resolve, GAP_MS))
    return createFirstOutput(backend, { templateID: 'base' })
  }
  const created = { on: [], off: [] }
  for (let i = 0; i < N; i++) {
    created.on.push(await createAndFirstOutput(on))
    created.off.push(await createAndFirstOutput(off))
  }
  await off.stop()

  // iperf3 in a sandbox: the host's own binary and the libraries the template lacks.
  const opts = { apiKey: on.apiKey, apiUrl: on.apiUrl, sandboxUrl: on.sandboxUrl }
  const sandbox = await Sandbox.create('base', opts)
  for (const [from, to] of [['/usr/bin/iperf3', 'iperf3'], ['/lib/x86_64-linux-gnu/libiperf.so.0', 'libiperf.so.0'], ['/lib/x86_64-linux-gnu/libsctp.so.1', 'libsctp.so.1']])
    await sandbox.files.write(`/tmp/iperf/${to}`, readFileSync(from))
  await sandbox.commands.run('chmod +x /tmp/iperf/iperf3')
  const bits = (json) => JSON.parse(json).end.sum_received.bits_per_second / 1e9
  const throughput = { sandbox: [], backend: [] }
  for (let i = 0; i < RUNS; i++) {
    const inSandbox = await sandbox.commands.run(`LD_LIBRARY_PATH=/tmp/iperf /tmp/iperf/iperf3 -J -c 203.0.113.11 -t ${SECONDS}`, { timeoutMs: (SECONDS + 30) * 1000 })
    throughput.sandbox.push(bits(inSandbox.stdout))
    const here = spawnSync('iperf3', ['-J', '-c', '203.0.113.11', '-t', String(SECONDS)], { encoding: 'utf8' })
    throughput.backend.push(bits(here.stdout))
  }

  // updateNetwork while OTHERS sandboxes have rules of their own.
  const others = []
  for (let i = 0; i < OTHERS; i++) others.push(await Sandbox.create('base', { ...opts, network: { denyOut: [`198.18.${i}.0/24`] } }))
  const updates = []
  for (let i = 0; i < UPDATES; i++) {
    const body = { allowOut: ['203.0.113.10', `10.${i % 250}.0.0/16`], denyOut: ['0.0.0.0/0'] }
    const t0 = performance.now()
    const r = await api(on, 'PUT', `/sandboxes/${sandbox.sandboxId}/network`, body)
    updates.push(performance.now() - t0)
    if (r.status !== 204) throw new Error(`update: ${r.status}`)
  }
  for (const s of [sandbox, ...others]) await s.kill()
  await on.stop()

  const med = (xs) => quantile(xs, 0.5)
  const result = {
    create_first_output_ms: { network_on: stats(created.on), network_off: stats(created.off), gap_ms: GAP_MS },
    tcp_gbit_s: {
      sandbox: throughput.sandbox.map(round), backend_namespace: throughput.backend.map(round),
      ratio_of_medians: round(med(throughput.sandbox) / med(throughput.backend)),
    },
    update_network_ms: { ...stats(updates), other_sandboxes_with_rules: OTHERS },
  }
  console.log(JSON.stringify(result, null, 2))
}
