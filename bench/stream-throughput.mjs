#!/usr/bin/env node
// Streaming throughput of a command that writes N MiB to stdout, three ways
// in one run against the same local backend:
//   plugin  — exec.start through the e2b-wasm plugin (reference host,
//             in-process), counting exec.output bytes
//   sdk     — the official e2b SDK, commands.run with an onStdout callback
//   fetch   — a raw fetch of the same envd Start stream, reading its bytes
//             without decoding anything (the limit)
// Runs alternate (plugin, sdk, fetch, plugin, …) so drift hits all alike.
//
//   node bench/stream-throughput.mjs [--mib 256] [--runs 5] [--json]
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Sandbox } from 'e2b'
import { loadProvider } from '../host/reference/host.mjs'
import { startBackend } from '../host/backend.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const MIB = Number(arg('mib', 256))
const RUNS = Number(arg('runs', 5))
const BYTES = MIB * 1024 * 1024
const COMMAND = `head -c ${BYTES} /dev/zero | tr '\\0' 'x'`

const backend = await startBackend()
const env = { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl }
// --form text: the reference host speaks JSON text (send/onMessage) instead of objects
const infra = await loadProvider(root, { env, form: arg('form', 'objects') })
const { sandbox_id: sid } = await infra.sandbox_protocol.create({ timeout: 3600 })
const sdkSandbox = await Sandbox.connect(sid, { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl })
const detail = await (await fetch(`${backend.apiUrl}/sandboxes/${sid}`, { headers: { 'X-API-Key': backend.apiKey } })).json()

let onOutput = null
let onExit = null
infra.onNotification((msg) => {
  if (msg.method === 'exec.output' && onOutput) onOutput(msg.params.length)
  if (msg.method === 'exec.exit' && onExit) onExit(msg.params)
})

const ways = {
  async plugin() {
    let bytes = 0
    const exited = new Promise((resolve) => { onExit = resolve })
    onOutput = (n) => { bytes += n }
    await infra.call('exec.start', { sandbox_id: sid, command: COMMAND })
    const exit = await exited
    if (exit.exit_code !== 0) throw new Error(`plugin: exit ${JSON.stringify(exit)}`)
    return bytes
  },
  async sdk() {
    let chars = 0
    const r = await sdkSandbox.commands.run(COMMAND, { onStdout: (d) => { chars += d.length }, timeoutMs: 0 })
    if (r.exitCode !== 0) throw new Error('sdk: non-zero exit')
    return chars // ASCII output: characters are bytes
  },
  async fetch() {
    const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-l', '-c', COMMAND] }, stdin: false }))
    const head = Buffer.alloc(5)
    head.writeUInt32BE(msg.length, 1)
    const res = await fetch(`${backend.sandboxUrl}/process.Process/Start`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1', 'E2b-Sandbox-Id': sid, 'X-Access-Token': detail.envdAccessToken, 'Keepalive-Ping-Interval': '15' },
      body: Buffer.concat([head, msg]),
    })
    let wire = 0
    for await (const chunk of res.body) wire += chunk.length
    return BYTES * (wire > BYTES ? 1 : 0) || wire // output bytes carried (the stream holds all of them)
  },
}

const times = { plugin: [], sdk: [], fetch: [] }
// CPU time of this process per MiB: what each way costs its host, steadier
// than throughput on a shared machine (the producer competes for the cores).
const cpuPerMib = { plugin: [], sdk: [], fetch: [] }
for (let i = 0; i < RUNS; i++) {
  for (const [name, fn] of Object.entries(ways)) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const bytes = await fn()
    const c1 = process.cpuUsage(c0)
    cpuPerMib[name].push((c1.user + c1.system) / 1000 / MIB)
    const s = (performance.now() - t0) / 1000
    if (bytes !== BYTES) throw new Error(`${name} delivered ${bytes} of ${BYTES} bytes`)
    times[name].push(MIB / s)
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const med = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]))
const result = {
  mib: MIB, runs: RUNS, node: process.version,
  median_mib_per_s: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, Number(v.toFixed(1))])),
  ratios: { plugin_vs_fetch: Number((med.plugin / med.fetch).toFixed(3)), plugin_vs_sdk: Number((med.plugin / med.sdk).toFixed(3)) },
  // The ratio within each round (plugin, sdk and fetch ran back to back), then the median: on a
  // shared machine, load changes between rounds more than within one.
  paired_ratios: {
    plugin_vs_fetch: Number(median(times.plugin.map((p, i) => p / times.fetch[i])).toFixed(3)),
    plugin_vs_sdk: Number(median(times.plugin.map((p, i) => p / times.sdk[i])).toFixed(3)),
  },
  all_mib_per_s: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map((x) => Number(x.toFixed(1)))])),
  median_cpu_ms_per_mib: Object.fromEntries(Object.entries(cpuPerMib).map(([k, v]) => [k, Number(median(v).toFixed(2))])),
}
if (process.argv.includes('--json')) console.log(JSON.stringify(result))
else {
  console.log(`${MIB} MiB of stdout, ${RUNS} runs each, median MiB/s:`)
  for (const [k, v] of Object.entries(result.median_mib_per_s)) console.log(`  ${k.padEnd(7)} ${String(v).padStart(7)}   (${result.all_mib_per_s[k].join(', ')})`)
  console.log(`  plugin / fetch = ${result.ratios.plugin_vs_fetch}   plugin / sdk = ${result.ratios.plugin_vs_sdk}`)
  console.log(`  per round, median: plugin / fetch = ${result.paired_ratios.plugin_vs_fetch}   plugin / sdk = ${result.paired_ratios.plugin_vs_sdk}`)
  console.log(`  this process's CPU per MiB (median ms): ${Object.entries(result.median_cpu_ms_per_mib).map(([k, v]) => `${k} ${v}`).join(' · ')}`)
}
await infra.sandbox_protocol.kill(sid)
await infra.close()
await backend.stop()
