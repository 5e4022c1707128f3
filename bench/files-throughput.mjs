#!/usr/bin/env node
// File throughput and small-call latency against one local backend, in one run:
//   1. write then read the largest file one EPP message carries as base64
//      (12,579,840 bytes, just under 12 MiB) three ways: the plugin
//      (files.write + files.read, base64, decoded to bytes by the host), the
//      official e2b SDK (files.write + files.read format bytes), and raw
//      fetch of envd's /files (octet-stream POST, GET) — the limit;
//   2. read a large file (1 GiB by default) through files.read in 8 MiB
//      ranges, and the same ranges with raw fetch, each in a fresh process
//      (bench/ranged-read.mjs), sampling its RSS: the extra memory is the
//      peak above the RSS before the first read;
//   3. files.stat × N against the SDK's files.getInfo × N (median latency).
// Runs alternate (plugin, sdk, fetch, …) so drift hits all alike.
//
//   node bench/files-throughput.mjs [--runs 5] [--gib 1] [--stats 1000] [--json]
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { createHash } from 'node:crypto'
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
const RUNS = Number(arg('runs', 5))
const GIB = Number(arg('gib', 1))
const STATS = Number(arg('stats', 1000))
const SIZE = 12_579_840 // E2BW_FILES_MAX_READ: base64 of it fits one 16 MiB EPP message
const RANGE = 8 << 20

const backend = await startBackend()
const env = { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl }
// --form text: the reference host speaks JSON text (send/onMessage) instead of objects
const infra = await loadProvider(root, { env, form: arg('form', 'objects') })
const { sandbox_id: sid } = await infra.sandbox_protocol.create({ timeout: 3600 })
const sdk = await Sandbox.connect(sid, { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl })
const detail = await (await fetch(`${backend.apiUrl}/sandboxes/${sid}`, { headers: { 'X-API-Key': backend.apiKey } })).json()
const envdHeaders = { 'E2b-Sandbox-Id': sid, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': detail.envdAccessToken }
// The reference host logs every message for the tests' schema checks; a
// benchmark must not measure that log (it would keep every answer alive).
const call = async (method, p) => {
  const r = await infra.call(method, { sandbox_id: sid, ...p })
  infra.traffic.length = 0
  return r
}

const payload = Buffer.alloc(SIZE)
for (let i = 0; i < SIZE; i++) payload[i] = (i * 2654435761) >>> 24
const want = createHash('sha256').update(payload).digest('hex')
const check = (name, bytes) => {
  if (createHash('sha256').update(bytes).digest('hex') !== want) throw new Error(`${name}: the bytes read differ from those written`)
}

const ways = {
  async plugin(p) {
    await call('files.write', { path: p, content: payload.toString('base64'), encoding: 'base64' })
    const r = await call('files.read', { path: p, encoding: 'base64' })
    check('plugin', Buffer.from(r.content, 'base64'))
  },
  async sdk(p) {
    await sdk.files.write(p, payload.buffer.slice(payload.byteOffset, payload.byteOffset + payload.length))
    check('sdk', Buffer.from(await sdk.files.read(p, { format: 'bytes' })))
  },
  async fetch(p) {
    const q = `${backend.sandboxUrl}/files?path=${encodeURIComponent(p)}&username=user`
    const put = await fetch(q, { method: 'POST', headers: { ...envdHeaders, 'Content-Type': 'application/octet-stream' }, body: payload })
    if (put.status !== 200) throw new Error(`fetch: POST ${put.status}`)
    await put.arrayBuffer()
    const got = await fetch(q, { headers: envdHeaders })
    check('fetch', Buffer.from(await got.arrayBuffer()))
  },
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const mib = (n) => n / (1 << 20)

// 1. write + read, alternating
// This process's CPU per write + read is steadier than the wall clock on a
// shared machine (the backend's share is in its own process, the same for all).
const rates = { plugin: [], sdk: [], fetch: [] }
const cpu = { plugin: [], sdk: [], fetch: [] }
for (let i = 0; i < RUNS; i++) {
  for (const [name, fn] of Object.entries(ways)) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    await fn(`/tmp/bench-${name}.bin`)
    const c = process.cpuUsage(c0)
    rates[name].push((2 * mib(SIZE)) / ((performance.now() - t0) / 1000)) // MiB moved (written + read) per second
    cpu[name].push((c.user + c.system) / 1000)
  }
}

// 2. a large file in ranges: peak RSS above the baseline
const BIG = Math.round(GIB * (1 << 30)) // --gib may be a fraction (a quick run)
const made = await call('exec.run', { command: `head -c ${BIG} /dev/zero > /tmp/big.bin && sync`, user: 'root', timeout: 600 })
if (made.exit_code !== 0) throw new Error(`cannot make the big file: ${made.stderr}`)
// The same ranges through files.read (each range's base64 content, as the
// caller gets it) and with raw fetch (each range's bytes, as arrayBuffer()):
// what moving 1 GiB in 8 MiB pieces costs any JavaScript caller in garbage,
// so the difference is what the plugin adds. Each read runs in a fresh
// process (bench/ranged-read.mjs), alternating, so no phase inherits the
// RSS another grew; the plugin's baseline is taken before its first read,
// so the core's memory growth counts.
const BIG_RUNS = Number(arg('big-runs', 2))
async function rangedRead(way) {
  const cfg = { way, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, sid, token: detail.envdAccessToken, path: '/tmp/big.bin', bytes: BIG, range: RANGE, form: arg('form', 'objects') }
  // async: the backend's output pipes are this process's to drain meanwhile
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'bench', 'ranged-read.mjs')], {
    env: { ...process.env, E2BW_BENCH: JSON.stringify(cfg), E2BW_BENCH_KEY: backend.apiKey }, encoding: 'utf8', maxBuffer: 1 << 20,
  })
  return JSON.parse(stdout.trim().split('\n').at(-1))
}
const ranged = { plugin: [], fetch: [] }
for (let i = 0; i < BIG_RUNS; i++) for (const way of ['plugin', 'fetch']) ranged[way].push(await rangedRead(way))
const pluginRanges = { seconds: median(ranged.plugin.map((r) => r.seconds)), extra: median(ranged.plugin.map((r) => r.extra_rss)) }
const rawRanges = { seconds: median(ranged.fetch.map((r) => r.seconds)), extra: median(ranged.fetch.map((r) => r.extra_rss)) }
const bigSeconds = pluginRanges.seconds
await call('files.remove', { path: '/tmp/big.bin' })

// 3. small calls
const lat = { plugin: [], sdk: [] }
for (let i = 0; i < STATS; i++) {
  let t = performance.now()
  await call('files.stat', { path: '/tmp/bench-plugin.bin' })
  lat.plugin.push(performance.now() - t)
  t = performance.now()
  await sdk.files.getInfo('/tmp/bench-plugin.bin')
  lat.sdk.push(performance.now() - t)
}

const med = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, median(v)]))
const result = {
  node: process.version, runs: RUNS, file_bytes: SIZE,
  write_read_median_cpu_ms: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Number(median(v).toFixed(1))])),
  write_read_median_mib_per_s: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, Number(v.toFixed(1))])),
  ratios: { plugin_vs_fetch: Number((med.plugin / med.fetch).toFixed(3)), plugin_vs_sdk: Number((med.plugin / med.sdk).toFixed(3)) },
  big_read: { bytes: BIG, range: RANGE, mib_per_s: Number((mib(BIG) / bigSeconds).toFixed(1)), extra_rss_mib: Number(mib(pluginRanges.extra).toFixed(1)),
    fetch_extra_rss_mib: Number(mib(rawRanges.extra).toFixed(1)), fetch_mib_per_s: Number((mib(BIG) / rawRanges.seconds).toFixed(1)) },
  stat_median_ms: { plugin: Number(median(lat.plugin).toFixed(3)), sdk_getInfo: Number(median(lat.sdk).toFixed(3)), calls: STATS },
}
if (process.argv.includes('--json')) console.log(JSON.stringify(result))
else {
  console.log(`write + read of ${SIZE} bytes, ${RUNS} runs each, median MiB/s (written + read):`)
  for (const [k, v] of Object.entries(result.write_read_median_mib_per_s)) console.log(`  ${k.padEnd(7)} ${String(v).padStart(7)}   (${rates[k].map((x) => x.toFixed(1)).join(', ')})`)
  console.log(`  plugin / fetch = ${result.ratios.plugin_vs_fetch}   plugin / sdk = ${result.ratios.plugin_vs_sdk}`)
  console.log(`  this process's CPU per write + read, median ms: ${Object.entries(result.write_read_median_cpu_ms).map(([k, v]) => `${k} ${v}`).join(', ')}`)
  console.log(`${GIB} GiB through files.read in ${RANGE >> 20} MiB ranges: ${result.big_read.mib_per_s} MiB/s, peak RSS +${result.big_read.extra_rss_mib} MiB` +
    ` (raw fetch of the same ranges: ${result.big_read.fetch_mib_per_s} MiB/s, +${result.big_read.fetch_extra_rss_mib} MiB)`)
  console.log(`files.stat x${STATS}: median ${result.stat_median_ms.plugin} ms   SDK getInfo: ${result.stat_median_ms.sdk_getInfo} ms`)
}
await infra.sandbox_protocol.kill(sid)
await infra.close()
await backend.stop()
