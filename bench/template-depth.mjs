#!/usr/bin/env node
// What a deep stack costs a sandbox of it (docs/templates.md, "Depth"):
// templates of --steps RUN steps each (one layer per step, on base), then
// create -> first output (POST /v2/sandboxes, then envd's Start until its
// first output chunk) from each of them, alternating between them run after
// run so that the machine's load falls on all alike; medians over --runs
// sandboxes each, each killed after (off the clock). And what a lookup of a
// name that no layer has costs inside, in /opt, the directory every step's
// layer has (a stat of 20000 distinct missing paths in one python3, median
// of 5 rounds per template; a directory only the bottom layer has costs
// the same at any depth: overlay looks only into the layers that have the
// directory). The stack each template
// got is read from its record (a state directory of the bench's own): past
// TEMPLATES_STACK_MAX the build squashes it.
//
//   node bench/template-depth.mjs [--steps 4,19,39,63] [--runs 21] [--json]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { startBackend } from '../host/backend.mjs'
import { createFirstOutput } from './lib/first-output.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox, Template } = await import('e2b')

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const STEPS = arg('steps', '4,19,39,63').split(',').map(Number)
const RUNS = Number(arg('runs', 21))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-bench-depth-'))
const backend = await startBackend({ stateDir })
const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 }

const firstOutput = (templateID) => createFirstOutput(backend, { templateID, timeout: 60 })

try {
  if (backend.isolation !== 'full') throw new Error(`templates with layers need isolation full, not ${backend.isolation}`)
  const templates = []
  for (const steps of STEPS) {
    let t = Template().fromTemplate('base')
    for (let i = 0; i < steps; i++) t = t.runCmd(`echo layer-${i} > /opt/depth-${i}`, { user: 'root' })
    const built = await Template.build(t, `bench-depth-${steps}-${process.pid}`, opts)
    const record = JSON.parse(readFileSync(path.join(stateDir, 'records', 'templates', `${built.templateId}.json`), 'utf8'))
    templates.push({ steps, name: built.templateId, layers: record.builds[0].config.layers.length, times: [] })
  }
  // Misses: every layer with /opt is looked into (overlay caches a miss per
  // name, so each name is new).
  const missCmd = 'python3 -c "import os,time\nt=time.perf_counter()\nfor i in range(20000): os.path.exists(\'/opt/x%d\' % i)\nprint((time.perf_counter()-t)/20000*1e6)"'
  const baseTpl = { name: 'base', layers: 1 }
  for (const t of [baseTpl, ...templates]) {
    const sb = await Sandbox.create(t.name, opts)
    const rounds = []
    for (let i = 0; i < 5; i++) rounds.push(Number((await sb.commands.run(missCmd.replaceAll('x%d', `x${i}-%d`))).stdout))
    t.miss_us = median(rounds)
    await sb.kill()
  }
  const base = []
  for (let i = 0; i < RUNS; i++) {
    base.push(await firstOutput('base'))
    for (const t of templates) t.times.push(await firstOutput(t.name))
  }
  const result = {
    runs: RUNS, base_ms: median(base), base_miss_us: baseTpl.miss_us,
    templates: templates.map((t) => ({ steps: t.steps, layers: t.layers, first_output_ms: median(t.times), miss_us: t.miss_us })),
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(`create -> first output, medians of ${RUNS}: base (1 layer, no stack, the warm pool's) ${result.base_ms.toFixed(1)} ms; a missing name ${result.base_miss_us.toFixed(2)} µs`)
    for (const t of result.templates)
      console.log(`  ${t.steps} steps: a stack of ${t.layers} layers, ${t.first_output_ms.toFixed(1)} ms; a missing name ${t.miss_us.toFixed(2)} µs`)
  }
} finally {
  await backend.stop()
  rmSync(stateDir, { recursive: true, force: true })
}
