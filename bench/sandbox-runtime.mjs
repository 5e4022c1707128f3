#!/usr/bin/env node
// The local backend as a sandbox runtime, four measurements in one
// run against one backend:
//   create   — POST /v2/sandboxes, then envd Start `echo hi` until its first
//              output arrives: median and p99 over N sandboxes (each killed
//              after, off the clock); and per create-and-kill cycle the wall
//              time, the CPU time of the whole machine (/proc/stat) and of
//              this client, and how busy the CPUs were: back to back on a
//              small machine the cycle is bound by CPU, not by waiting
//   exec.run — `true` through the e2b-wasm plugin (reference host,
//              in-process), round trip of exec.run; and the same command as a
//              raw envd Start stream for comparison (and `bash -l -c true`,
//              what exec.run starts), back to back and after
//              200 ms of nothing (a person typing; the first cgroup move
//              after a pause used to wait for an RCU grace period)
//   floor    — what no runtime on this machine goes below, in the same run:
//              a raw fetch to the backend (GET /health, no sandbox work),
//              back to back and after 200 ms of nothing; a bare spawn of
//              `true` and of `bash -l -c true` in the base template's root as
//              uid 1000 (bench/spawn_floor.c: no namespaces, cgroups, seccomp
//              or protocol; needs root); and one CPUID instruction's cost
//              (glibc's start-up runs dozens; on a VM each one traps)
//   idle     — M sandboxes alive at once, each with a `sleep` running: the
//              backend's RSS growth plus every sandbox init's RSS, per sandbox
//
//   --gap-ms G: wait G ms between creates (off the clock), so that the warm
//   pool refills: the latency of a create on a backend that is not already
//   busy creating; with 0 (the default) creates follow each other at once
//   and, beyond the pool's size, mostly start a sandbox while the pool's
//   refill competes for the CPU. Either way the result says how many creates
//   found a pooled sandbox ready (/health's warm.ready before the create).
//   Then --paced P more creates (default 40; 0: none), each --paced-gap-ms
//   (default 250) after the last one's kill: someone creating a sandbox now
//   and then, the pool refilled in between.
//
//   --small: a short run for a slow machine (the cgroup v2 guest, docs/testing.md):
//   --sandboxes 10 --runs 20 --idle 3 --idle-starts 5 --paced 5, each unless given.
//   create_over_spawn_floor is the create -> first output median over the bare
//   spawn floor's (null without root): a ratio, meaningful in one run on any
//   machine, emulated or not.
//
//   node bench/sandbox-runtime.mjs [--small] [--sandboxes 100] [--runs 200] [--idle 50] [--idle-starts 30] [--isolation auto|full|none] [--warm-pool N] [--gap-ms G] [--paced P] [--paced-gap-ms G] [--json]
import path from 'node:path'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { loadProvider } from '../host/reference/host.mjs'
import { startBackend, backendBinary } from '../host/backend.mjs'
import { envdClient } from '../host/connect.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const small = process.argv.includes('--small')
const N = Number(arg('sandboxes', small ? 10 : 100))
const RUNS = Number(arg('runs', small ? 20 : 200))
const IDLE = Number(arg('idle', small ? 3 : 50))
const GAP_MS = Number(arg('gap-ms', 0))
const PACED = Number(arg('paced', small ? 5 : 40))
const PACED_GAP_MS = Number(arg('paced-gap-ms', 250))
const IDLE_STARTS = Number(arg('idle-starts', small ? 5 : 30))

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
}
const round = (x) => Math.round(x * 100) / 100
const medianOf = (xs) => (xs.length ? round(quantile(xs, 0.5)) : null)
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])

const ISOLATION = arg('isolation', 'auto')
const WARM = arg('warm-pool', undefined) // the backend's default (3) unless given
const backend = await startBackend({ extraArgs: ['--isolation', ISOLATION, ...(WARM === undefined ? [] : ['--warm-pool', WARM])] })
const headers = { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' }
const create = async () => {
  const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, { method: 'POST', headers, body: JSON.stringify({ templateID: 'base', timeout: 3600 }) })
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`)
  return res.json()
}
const kill = (id) => fetch(`${backend.apiUrl}/sandboxes/${id}`, { method: 'DELETE', headers })
const client = (sb) => envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })

// --- create -> first output -------------------------------------------------
// What the whole machine spent: busy time of every CPU from /proc/stat (all
// but idle, iowait and steal), in ms.
const machineBusyMs = () => {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const [user, nice, system, , , irq, softirq] = f
  return (user + nice + system + irq + softirq) * 10 // USER_HZ is 100 on Linux
}
const measureCreates = async (n, gapMs) => {
  const firstOutput = []
  const fromPool = [] // whether /health said a pooled sandbox was ready before each create
  const takenBefore = (await (await fetch(`${backend.apiUrl}/health/details`)).json()).warm?.taken ?? 0
  const busy0 = machineBusyMs()
  const clientCpu0 = process.cpuUsage()
  const wall0 = performance.now()
  for (let i = 0; i < n; i++) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs))
    const health = await (await fetch(`${backend.apiUrl}/health/details`)).json()
    fromPool.push(health.warm?.ready > 0)
    const t0 = performance.now()
    const sb = await create()
    const s = await client(sb).open('process.Process/Start', { process: { cmd: 'echo', args: ['hi'] } })
    for (;;) {
      const f = await s.next()
      if (!f || f.end) throw new Error('no output')
      if (f.message.event?.data) break
    }
    firstOutput.push(performance.now() - t0)
    s.cancel()
    await kill(sb.sandboxID)
  }
  // Where the machine's time went: a loop whose CPU time nears ncpu x its
  // wall time was bound by CPU (the creates, their refills and removals and
  // this client all shared the CPUs), not by waiting.
  const wallMs = performance.now() - wall0
  const busyMs = machineBusyMs() - busy0
  const clientCpu = process.cpuUsage(clientCpu0)
  const cpus = availableParallelism()
  // What the pool says it did: creates served by a pooled sandbox.
  const { warm: poolAfter } = await (await fetch(`${backend.apiUrl}/health/details`)).json()
  return { median: round(quantile(firstOutput, 0.5)), p99: round(quantile(firstOutput, 0.99)), n,
    gap_ms: gapMs, pool_ready: fromPool.filter(Boolean).length,
    pool_taken: poolAfter ? poolAfter.taken - takenBefore : null,
    // the same split by whether a pooled sandbox was ready (null: none of that kind)
    from_pool_median: medianOf(firstOutput.filter((_, i) => fromPool[i])),
    not_from_pool_median: medianOf(firstOutput.filter((_, i) => !fromPool[i])),
    // per create, kill and (with a gap) pause included: wall time, CPU time of
    // the whole machine and of this client, and how busy the CPUs were
    cycle_wall_ms: round((wallMs - gapMs * n) / n), cycle_cpu_ms: round(busyMs / n),
    cycle_client_cpu_ms: round((clientCpu.user + clientCpu.system) / 1000 / n),
    machine_busy: round(busyMs / (wallMs * cpus)), cpus }
}
const creates = await measureCreates(N, GAP_MS)
const createsPaced = PACED > 0 ? await measureCreates(PACED, PACED_GAP_MS) : null

// --- exec.run true through the plugin ----------------------------------------
const env = { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl }
const infra = await loadProvider(root, { env })
const { sandbox_id: sid } = await infra.sandbox_protocol.create({ timeout: 3600 })
const execRun = []
for (let i = 0; i < RUNS + 10; i++) {
  const t0 = performance.now()
  const r = await infra.call('exec.run', { sandbox_id: sid, command: 'true' })
  if (r.exit_code !== 0) throw new Error(`exec.run: ${JSON.stringify(r)}`)
  if (i >= 10) execRun.push(performance.now() - t0) // the first few warm the JIT and connections
}
const detail = await (await fetch(`${backend.apiUrl}/sandboxes/${sid}`, { headers })).json()
const raw = []
const rawClient = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sid, token: detail.envdAccessToken })
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now()
  await rawClient.stream('process.Process/Start', { process: { cmd: 'true' } })
  raw.push(performance.now() - t0)
}
// What exec.run starts (E2B's commands.run does the same): a login shell.
const rawBash = []
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now()
  await rawClient.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-l', '-c', 'true'] } })
  rawBash.push(performance.now() - t0)
}
const afterIdle = []
for (let i = 0; i < IDLE_STARTS; i++) {
  await new Promise((resolve) => setTimeout(resolve, 200))
  const t0 = performance.now()
  await rawClient.stream('process.Process/Start', { process: { cmd: 'true' } })
  afterIdle.push(performance.now() - t0)
}
await infra.sandbox_protocol.kill(sid)

// --- the floor -------------------------------------------------------------------
const rtt = []
const rttAfterIdle = []
const health = async () => {
  const t0 = performance.now()
  await (await fetch(`${backend.apiUrl}/health`)).arrayBuffer()
  return performance.now() - t0
}
for (let i = 0; i < RUNS; i++) rtt.push(await health())
for (let i = 0; i < IDLE_STARTS; i++) {
  await new Promise((resolve) => setTimeout(resolve, 200))
  rttAfterIdle.push(await health())
}
const build = path.dirname(path.dirname(backendBinary()))
const spawnFloor = (...argv) => {
  if (process.getuid?.() !== 0) return null // chroot needs root
  const out = execFileSync(path.join(build, 'bin', 'spawn-floor'),
    [path.join(build, 'templates', 'base', 'rootfs'), '1000', String(RUNS), ...argv], { encoding: 'utf8' })
  return JSON.parse(out)
}
const spawnTrue = spawnFloor('/bin/true')
const spawnBash = spawnFloor('/bin/bash', '-l', '-c', 'true')

// --- idle sandboxes -------------------------------------------------------------
await new Promise((resolve) => setTimeout(resolve, 500)) // let the removals above finish
const before = rssKiB(backend.pid)
const idle = []
for (let i = 0; i < IDLE; i++) {
  const sb = await create()
  const s = await client(sb).open('process.Process/Start', { process: { cmd: 'sleep', args: ['3600'] } })
  await s.next()
  idle.push({ sb, s })
}
const backendGrowth = rssKiB(backend.pid) - before
let initKiB = 0
let initsFound = 0 // none where the backend's hostPids cannot find a sandbox's processes
for (const { sb } of idle) {
  const init = backend.hostPids(sb.sandboxID).find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('e2b-sandbox-ini'))
  if (init) {
    initKiB += rssKiB(init)
    initsFound++
  }
}
for (const { sb, s } of idle) {
  s.cancel()
  await kill(sb.sandboxID)
}
await backend.stop()

const result = {
  isolation: backend.isolation,
  warm_pool: WARM === undefined ? 'default (3)' : Number(WARM),
  create_first_output_ms: creates,
  create_first_output_paced_ms: createsPaced,
  exec_run_true_ms: { plugin_median: round(quantile(execRun, 0.5)), plugin_p99: round(quantile(execRun, 0.99)),
    raw_start_median: round(quantile(raw, 0.5)), raw_start_bash_login_median: medianOf(rawBash), n: RUNS,
    raw_start_after_200ms_idle_median: round(quantile(afterIdle, 0.5)), n_after_idle: IDLE_STARTS },
  floor_ms: { fetch_rtt_median: medianOf(rtt), fetch_rtt_after_200ms_idle_median: medianOf(rttAfterIdle),
    spawn_true_median: spawnTrue?.median_ms ?? null, spawn_bash_login_median: spawnBash?.median_ms ?? null,
    cpuid_us: spawnTrue?.cpuid_us ?? null },
  create_over_spawn_floor: spawnTrue ? round(creates.median / spawnTrue.median_ms) : null,
  idle_sandbox_kib: { backend_per_sandbox: round(backendGrowth / IDLE), init_per_sandbox: initsFound ? round(initKiB / initsFound) : null,
    total_per_sandbox: initsFound ? round((backendGrowth + initKiB) / IDLE) : null, sandboxes: IDLE, inits_found: initsFound },
}
if (process.argv.includes('--json')) console.log(JSON.stringify(result))
else console.log(JSON.stringify(result, null, 2))
