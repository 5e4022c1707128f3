#!/usr/bin/env node
// One ranged read of a large file in a fresh process, for
// bench/files-throughput.mjs: the memory a way adds is measured from a
// process that did nothing else (RSS grown by an earlier phase would hide
// it). The parent passes where to read in the environment:
//   E2BW_BENCH = JSON {way: 'plugin'|'fetch', apiUrl, sandboxUrl, sid, token, path, bytes, range, form}
//   E2BW_BENCH_KEY = the API key (never on argv)
// Prints one JSON line: {seconds, extra_rss, baseline_rss}.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadProvider } from '../host/reference/host.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cfg = JSON.parse(process.env.E2BW_BENCH)
const key = process.env.E2BW_BENCH_KEY
let readRange
if (cfg.way === 'plugin') {
  const infra = await loadProvider(root, { env: { E2B_API_KEY: key, E2B_API_URL: cfg.apiUrl, E2B_SANDBOX_URL: cfg.sandboxUrl }, form: cfg.form })
  readRange = async (offset) => {
    const r = await infra.call('files.read', { sandbox_id: cfg.sid, path: cfg.path, encoding: 'base64', offset, length: cfg.range })
    infra.traffic.length = 0 // the reference host's log is not the plugin's memory
    return r.size
  }
} else {
  const url = `${cfg.sandboxUrl}/files?path=${encodeURIComponent(cfg.path)}&username=user`
  const headers = { 'E2b-Sandbox-Id': cfg.sid, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': cfg.token }
  readRange = async (offset) => (await (await fetch(url, { headers: { ...headers, Range: `bytes=${offset}-${offset + cfg.range - 1}` } })).arrayBuffer()).byteLength
}
const baseline = process.memoryUsage().rss
let peak = baseline
const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
const t = performance.now()
let total = 0
for (let offset = 0; offset < cfg.bytes; offset += cfg.range) {
  total += await readRange(offset)
  peak = Math.max(peak, process.memoryUsage().rss)
}
clearInterval(sampler)
if (total !== cfg.bytes) throw new Error(`read ${total} of ${cfg.bytes} bytes`)
console.log(JSON.stringify({ seconds: (performance.now() - t) / 1000, extra_rss: peak - baseline, baseline_rss: baseline }))
process.exit(0)
