#!/usr/bin/env node
// Templates on the layer store (issue 15), with the official e2b SDK against
// one local backend:
//   build  — a template of 5 RUN steps (each writes a file: 5 layers on
//            base): cold (skipCache, every step runs and is sealed) and fully
//            cached (every step a cache hit); medians over --builds runs
//   create — Sandbox.create + commands.run('true') from that 5-layer
//            template and from base: medians over --runs sandboxes each,
//            alternating, each killed after (off the clock)
//
//   node bench/templates.mjs [--builds 5] [--runs 20] [--json]
import { startBackend } from '../host/backend.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox, Template } = await import('e2b')

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const BUILDS = Number(arg('builds', 5))
const RUNS = Number(arg('runs', 20))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = () => Number(process.hrtime.bigint()) / 1e6

const backend = await startBackend()
const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 }
try {
  if (backend.isolation !== 'full') throw new Error(`templates with layers need isolation full, not ${backend.isolation}`)
  const name = `bench-layers-${process.pid}`
  // A new builder object each time: the SDK's build with skipCache marks the object itself forced.
  const template = () => {
    let t = Template().fromTemplate('base')
    for (let i = 0; i < 5; i++) t = t.runCmd(`echo layer-${i} > /opt/bench-${i}`, { user: 'root' })
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
    if (logs.filter((m) => m.startsWith('CACHED ')).length !== 5) throw new Error(`not cached:\n${logs.join('\n')}`)
  }
  const create = { base: [], layers5: [] }
  for (let i = 0; i < RUNS; i++) {
    for (const [key, tpl] of [['base', 'base'], ['layers5', name]]) {
      const t0 = ms()
      const sb = await Sandbox.create(tpl, { ...opts, timeoutMs: 60_000 })
      await sb.commands.run('true')
      create[key].push(ms() - t0)
      await sb.kill()
    }
  }
  const result = {
    build_cold_ms: median(cold), build_cached_ms: median(cached),
    create_first_output_base_ms: median(create.base), create_first_output_5_layers_ms: median(create.layers5),
    builds: BUILDS, runs: RUNS,
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(`build of 5 RUN steps: cold ${result.build_cold_ms.toFixed(0)} ms, fully cached ${result.build_cached_ms.toFixed(0)} ms (medians of ${BUILDS})`)
    console.log(`create + first command: base ${result.create_first_output_base_ms.toFixed(1)} ms, 5-layer template ${result.create_first_output_5_layers_ms.toFixed(1)} ms (medians of ${RUNS})`)
  }
} finally {
  await backend.stop()
}
