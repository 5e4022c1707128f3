#!/usr/bin/env node
// E2B's code interpreter on the local backend (docs/code-interpreter.md),
// beside running Python as a command, against one backend:
//   round trip — '1+1' as a cell of a warm kernel: the official SDK's
//                runCode, and the plugin's code.run (reference host,
//                in-process); beside them exec.run `python3 -c 'print(1+1)'`
//                through the plugin and the SDK's commands.run of the same
//                (a new interpreter each time); medians over --runs, after
//                a few runs that warm the JIT and the connections
//   create     — Sandbox.create() of code-interpreter-v1, then runCode('1+1')
//                until its result: claimed from the warm pool (each create
//                waits, off the clock, until the pool has a sandbox ready
//                again) and started (a second backend with --warm-templates
//                0: the server and its kernel come up inside the create);
//                beside them create of base then exec.run python3 -c; each
//                sandbox is killed after, off the clock
//
//   node bench/code-interpreter.mjs [--runs 50] [--creates 10] [--json]
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { api, startBackend } from '../host/backend.mjs'
import { loadProvider } from '../host/reference/host.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const RUNS = Number(arg('runs', 50))
const CREATES = Number(arg('creates', 10))
const WARMUP = 5
for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox } = await import('@e2b/code-interpreter')

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? Math.round(s[Math.floor((s.length - 1) / 2)] * 100) / 100 : null
}
async function timed(n, fn) {
  const times = []
  for (let i = 0; i < n + WARMUP; i++) {
    const t0 = performance.now()
    await fn()
    if (i >= WARMUP) times.push(performance.now() - t0)
  }
  return median(times)
}
const PYTHON = "python3 -c 'print(1+1)'"
const check = (ok, what) => { if (!ok) throw new Error(`unexpected answer: ${what}`) }

async function roundTrips(backend) {
  const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, requestTimeoutMs: 300_000 }
  const sbx = await Sandbox.create({ ...opts, timeoutMs: 3_600_000 })
  const env = { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl }
  const infra = await loadProvider(root, { env })
  const sandbox_id = sbx.sandboxId
  const result = {
    sdk_run_code: await timed(RUNS, async () => check((await sbx.runCode('1+1')).text === '2', 'runCode')),
    plugin_code_run: await timed(RUNS, async () => {
      const r = await infra.call('code.run', { sandbox_id, code: '1+1' })
      check(r.results[0].text === '2', JSON.stringify(r))
    }),
    plugin_exec_run_python: await timed(RUNS, async () => {
      const r = await infra.call('exec.run', { sandbox_id, command: PYTHON })
      check(r.stdout === '2\n', JSON.stringify(r))
    }),
    sdk_commands_run_python: await timed(RUNS, async () => check((await sbx.commands.run(PYTHON)).stdout === '2\n', 'commands.run')),
  }
  await infra.sandbox_protocol.kill(sandbox_id)
  return result
}

// Create -> the first result, CREATES times; pooled: wait until the
// backend's pool has a code-interpreter-v1 sandbox ready before each.
async function creates(backend, pooled) {
  const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, requestTimeoutMs: 300_000 }
  const health = async () => (await api(backend, 'GET', '/health/details')).json.warm
  const times = []
  let claimed = 0
  const first = await Sandbox.create(opts) // makes the template's pool
  await first.kill()
  for (let i = 0; i < CREATES; i++) {
    if (pooled) while ((await health()).templates_ready < 1) await new Promise((r) => setTimeout(r, 100))
    const taken = (await health()).taken
    const t0 = performance.now()
    const sbx = await Sandbox.create(opts)
    check((await sbx.runCode('1+1')).text === '2', 'runCode')
    times.push(performance.now() - t0)
    claimed += (await health()).taken - taken
    await sbx.kill()
  }
  return { median_ms: median(times), claimed }
}

async function baseCreates(backend) {
  const env = { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl }
  const infra = await loadProvider(root, { env })
  const times = []
  for (let i = 0; i < CREATES; i++) {
    while ((await api(backend, 'GET', '/health/details')).json.warm.ready < 1) await new Promise((r) => setTimeout(r, 100))
    const t0 = performance.now()
    const { sandbox_id } = await infra.sandbox_protocol.create({ template: 'base', timeout: 600 })
    const r = await infra.call('exec.run', { sandbox_id, command: PYTHON })
    times.push(performance.now() - t0)
    check(r.stdout === '2\n', JSON.stringify(r))
    await infra.sandbox_protocol.kill(sandbox_id)
  }
  return median(times)
}

const warm = await startBackend()
let result
try {
  result = {
    round_trip_ms: await roundTrips(warm),
    create_first_result_ms: {
      pooled: await creates(warm, true),
      base_exec_run_python: await baseCreates(warm),
    },
  }
} finally {
  await warm.stop()
}
const cold = await startBackend({ extraArgs: ['--warm-templates', '0'] })
try {
  result.create_first_result_ms.started = await creates(cold, false)
} finally {
  await cold.stop()
}
result.runs = RUNS
result.creates = CREATES

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(result, null, 2))
} else {
  const r = result.round_trip_ms
  const c = result.create_first_result_ms
  console.log(`round trip of '1+1' (median of ${RUNS}): SDK runCode ${r.sdk_run_code} ms, plugin code.run ${r.plugin_code_run} ms;` +
    ` python3 -c through plugin exec.run ${r.plugin_exec_run_python} ms, SDK commands.run ${r.sdk_commands_run_python} ms`)
  console.log(`create -> first result (median of ${CREATES}): from the pool ${c.pooled.median_ms} ms (${c.pooled.claimed} claimed),` +
    ` started ${c.started.median_ms} ms; base + exec.run python3 -c ${c.base_exec_run_python} ms`)
}
