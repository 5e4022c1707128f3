#!/usr/bin/env node
// State that lasts, against one backend with a --state-dir of its
// own, each figure against the backend's own create from the same template in
// the same run:
//   create    — POST /v2/sandboxes of `base` until its 201: median, p90
//   fork      — POST /sandboxes/{id}/fork {count: 1} of a sandbox that wrote
//               10 MiB, until its 201 (the fork is running): median, p90, and
//               its ratio to create (target: within 3x)
//   snapshot  — POST /sandboxes/{id}/snapshots of that sandbox until its 201:
//               median, p90 (target: median under 100 ms)
//   restart   — a backend holding P paused sandboxes stopped (SIGTERM) and
//               started again on the same directory: spawn to its ready line
//               (every sandbox is back by then), and to a listing of all P
//               (target: within 1 s)
//
//   node bench/state.mjs [--runs 20] [--paused 100] [--json]
//
// With --checkpoint, pause with a checkpoint instead (bench/lib/state-checkpoint.mjs;
// where CRIU works: the cgroup v2 guest), as ratios to a create in the same run:
//   node bench/state.mjs --checkpoint [--runs 3] [--paused 20] [--mib 200] [--drop-caches] [--only fork] [--json]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBackend } from '../host/backend.mjs'
import { envdClient } from '../host/connect.mjs'

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
if (process.argv.includes('--checkpoint')) {
  const { checkpointBench } = await import('./lib/state-checkpoint.mjs')
  await checkpointBench({ runs: Number(arg('runs', 3)), paused: Number(arg('paused', 20)), mib: Number(arg('mib', 200)), json: process.argv.includes('--json'), drop: process.argv.includes('--drop-caches'), only: arg('only', '') })
  process.exit(0)
}
const RUNS = Number(arg('runs', 20))
const PAUSED = Number(arg('paused', 100))
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
}
const round = (x) => Math.round(x * 100) / 100
const stats = (xs) => ({ median: round(quantile(xs, 0.5)), p90: round(quantile(xs, 0.9)) })

const dir = mkdtempSync(path.join(tmpdir(), 'e2b-bench-state-'))
const apiKey = `e2b_local_${randomBytes(16).toString('hex')}`
let backend = await startBackend({ apiKey, stateDir: dir })
const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' }
const call = async (method, p, body, want) => {
  const res = await fetch(`${backend.apiUrl}${p}`, { method, headers, body: body ? JSON.stringify(body) : undefined })
  const text = await res.text()
  if (res.status !== want) throw new Error(`${method} ${p}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}
const create = () => call('POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600 }, 201)
const kill = (id) => call('DELETE', `/sandboxes/${id}`, undefined, 204)
const timed = async (fn) => {
  const t0 = performance.now()
  const value = await fn()
  return [performance.now() - t0, value]
}

try {
  // The sandbox that wrote 10 MiB.
  const source = await create()
  const client = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: source.sandboxID, token: source.envdAccessToken })
  await client.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', 'head -c 10485760 /dev/urandom > /home/user/blob && sync'] } })

  const creates = [], forks = [], snapshots = []
  for (let i = 0; i < RUNS; i++) {
    const [tc, sb] = await timed(create)
    creates.push(tc)
    await kill(sb.sandboxID)
    const [tf, results] = await timed(() => call('POST', `/sandboxes/${source.sandboxID}/fork`, { count: 1 }, 201))
    if (!results[0].sandbox) throw new Error(`fork: ${JSON.stringify(results[0])}`)
    forks.push(tf)
    await kill(results[0].sandbox.sandboxID)
    const [ts, snap] = await timed(() => call('POST', `/sandboxes/${source.sandboxID}/snapshots`, {}, 201))
    snapshots.push(ts)
    await call('DELETE', `/templates/${encodeURIComponent(snap.snapshotID)}`, undefined, 204)
  }
  await kill(source.sandboxID)

  // Restart with PAUSED paused sandboxes.
  for (let i = 0; i < PAUSED; i++) {
    const sb = await create()
    await call('POST', `/sandboxes/${sb.sandboxID}/pause`, undefined, 204)
  }
  const stopped = await backend.stop()
  if (stopped.code !== 0) throw new Error(`stop: ${JSON.stringify(stopped)}`)
  const t0 = performance.now()
  backend = await startBackend({ apiKey, stateDir: dir })
  const ready = performance.now() - t0
  const listed = await call('GET', '/v2/sandboxes?state=paused&limit=100', undefined, 200)
  const listedAt = performance.now() - t0
  if (listed.length !== Math.min(PAUSED, 100)) throw new Error(`listed ${listed.length} of ${PAUSED}`)
  for (const sb of listed) await kill(sb.sandboxID)

  const result = {
    runs: RUNS,
    create: stats(creates),
    fork: stats(forks),
    forkOverCreate: round(quantile(forks, 0.5) / quantile(creates, 0.5)),
    snapshot: stats(snapshots),
    restart: { paused: PAUSED, readyMs: round(ready), listedMs: round(listedAt) },
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(`create   median ${result.create.median} ms, p90 ${result.create.p90} ms (${RUNS} runs)`)
    console.log(`fork     median ${result.fork.median} ms, p90 ${result.fork.p90} ms: ${result.forkOverCreate} x create (target within 3 x)`)
    console.log(`snapshot median ${result.snapshot.median} ms, p90 ${result.snapshot.p90} ms (target median under 100 ms)`)
    console.log(`restart  ${PAUSED} paused: ready line after ${result.restart.readyMs} ms, all listed after ${result.restart.listedMs} ms (target within 1 s)`)
  }
} finally {
  await backend.stop()
  rmSync(dir, { recursive: true, force: true })
}
