#!/usr/bin/env node
// Templates on the layer store, with the official e2b SDK against
// one local backend:
//   build  — a template of --steps RUN steps (default 5; each writes a
//            file: one layer each on base): cold (skipCache, every step runs and is sealed) and fully
//            cached (every step a cache hit); medians over --builds runs
//   create — Sandbox.create + commands.run('true') from that
//            template and from base, and create -> first output of
//            envd's Start without the SDK: medians over --runs sandboxes each,
//            alternating, each killed after (off the clock); the latter also
//            split by whether a pooled sandbox of its shape was ready
//            (/health's warm counts before the create; warm/: a built
//            template gets a pool once created from)
//
//   one shape at a time — the same create -> first output, --paced creates
//            of one shape back to back, then as many --paced-gap-ms apart
//            (off the clock; --paced 0 skips both)
//
//   node bench/templates.mjs [--steps 5] [--builds 5] [--runs 20] [--paced 20] [--paced-gap-ms 250] [--warm-pool N] [--json]
import { startBackend } from '../host/backend.mjs'
import { createFirstOutput as firstOutput } from './lib/first-output.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox, Template } = await import('e2b')

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const BUILDS = Number(arg('builds', 5))
const RUNS = Number(arg('runs', 20))
const STEPS = Number(arg('steps', 5))
const PACED = Number(arg('paced', 20))
const PACED_GAP = Number(arg('paced-gap-ms', 250))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = () => Number(process.hrtime.bigint()) / 1e6

const WARM = arg('warm-pool', undefined) // the backend's default unless given
const backend = await startBackend({ extraArgs: WARM === undefined ? [] : ['--warm-pool', WARM] })
const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 }
try {
  if (backend.isolation !== 'full') throw new Error(`templates with layers need isolation full, not ${backend.isolation}`)
  const name = `bench-layers-${process.pid}`
  // A new builder object each time: the SDK's build with skipCache marks the object itself forced.
  const template = () => {
    let t = Template().fromTemplate('base')
    for (let i = 0; i < STEPS; i++) t = t.runCmd(`echo layer-${i} > /opt/bench-${i}`, { user: 'root' })
    return t
  }
  const cold = [], cached = []
  for (let i = 0; i < BUILDS; i++) {
    let t0 = ms()
    await Template.build(template(), name, { ...opts, skipCache: true })
    cold.push(ms() - t0)
    t0 = ms()
    const logs = []
    await Template.build(template(), name, { ...opts, onBuildLogs: (e) => logs.push(e.message) })
    cached.push(ms() - t0)
    if (logs.filter((m) => m.startsWith('CACHED ')).length !== STEPS) throw new Error(`not cached:\n${logs.join('\n')}`)
  }
  const create = { base: [], layers: [] }
  const raw = { base: [], layers: [] }
  const pooled = { base: [], layers: [] } // per raw create: a pooled sandbox was ready
  const createFirstOutput = (tpl) => firstOutput(backend, { templateID: tpl, timeout: 60 })
  for (let i = 0; i < RUNS; i++) {
    for (const [key, tpl] of [['base', 'base'], ['layers', name]]) {
      const t0 = ms()
      const sb = await Sandbox.create(tpl, { ...opts, timeoutMs: 60_000 })
      await sb.commands.run('true')
      create[key].push(ms() - t0)
      await sb.kill()
      // The same without the SDK: POST /v2/sandboxes, then envd's Start until its first output.
      const { warm } = await (await fetch(`${backend.apiUrl}/health/details`)).json()
      pooled[key].push((key === 'base' ? warm?.ready : warm?.templates_ready) > 0)
      raw[key].push(await createFirstOutput(tpl))
    }
  }
  // One shape at a time: --paced creates back to back, then as many
  // PACED_GAP ms after the last one's kill (off the clock: someone starting
  // a sandbox now and then, as bench/sandbox-runtime.mjs's --paced does).
  const oneShape = async (tpl, gap) => {
    const xs = []
    for (let i = 0; i < PACED; i++) {
      if (gap) await new Promise((resolve) => setTimeout(resolve, gap))
      xs.push(await createFirstOutput(tpl))
    }
    return xs.length ? median(xs) : null
  }
  const single = {}
  for (const [key, tpl] of [['base', 'base'], ['layers', name]]) {
    single[`${key}_back_to_back`] = await oneShape(tpl, 0)
    single[`${key}_paced`] = await oneShape(tpl, PACED_GAP)
  }
  const split = (key, ready) => {
    const xs = raw[key].filter((_, i) => pooled[key][i] === ready)
    return xs.length ? median(xs) : null
  }
  const result = {
    build_cold_ms: median(cold), build_cached_ms: median(cached),
    sdk_create_run_base_ms: median(create.base), sdk_create_run_layers_ms: median(create.layers),
    create_first_output_base_ms: median(raw.base), create_first_output_layers_ms: median(raw.layers),
    pooled_base: pooled.base.filter(Boolean).length, pooled_layers: pooled.layers.filter(Boolean).length,
    create_first_output_one_shape_ms: single,
    create_first_output_layers_pooled_ms: split('layers', true), create_first_output_layers_not_pooled_ms: split('layers', false),
    steps: STEPS, builds: BUILDS, runs: RUNS, paced: PACED, paced_gap_ms: PACED_GAP,
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(`build of ${STEPS} RUN steps: cold ${result.build_cold_ms.toFixed(0)} ms, fully cached ${result.build_cached_ms.toFixed(0)} ms (medians of ${BUILDS})`)
    console.log(`SDK create + commands.run('true'): base ${result.sdk_create_run_base_ms.toFixed(1)} ms, ${STEPS}-layer template ${result.sdk_create_run_layers_ms.toFixed(1)} ms (medians of ${RUNS})`)
    console.log(`create -> first output (REST + envd Start): base ${result.create_first_output_base_ms.toFixed(1)} ms, ${STEPS}-layer template ${result.create_first_output_layers_ms.toFixed(1)} ms (medians of ${RUNS})`)
    const f = (x) => (x === null ? '-' : x.toFixed(1))
    if (PACED) {
      console.log(`  one shape at a time, back to back: base ${f(single.base_back_to_back)} ms, ${STEPS}-layer template ${f(single.layers_back_to_back)} ms (medians of ${PACED})`)
      console.log(`  one shape at a time, ${PACED_GAP} ms apart: base ${f(single.base_paced)} ms, ${STEPS}-layer template ${f(single.layers_paced)} ms (medians of ${PACED})`)
    }
    console.log(`  pooled sandbox ready: base ${result.pooled_base}/${RUNS}, template ${result.pooled_layers}/${RUNS}; template from the pool ${f(result.create_first_output_layers_pooled_ms)} ms, not ${f(result.create_first_output_layers_not_pooled_ms)} ms`)
  }
} finally {
  await backend.stop()
}
