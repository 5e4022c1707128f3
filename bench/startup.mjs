#!/usr/bin/env node
// Start-up cost, in one run, alternating fresh Node processes:
//   plugin — import provider.mjs, instantiate core.wasm (through kit.epp.infra)
//            and answer `initialize`
//   sdk    — import the official e2b SDK (nothing else)
//   bare   — node -e 0
//   esm    — node --input-type=module -e 0 (the ESM loader's own start-up)
//   emptyfile — node bench/empty.mjs: an empty ES module file, the ESM file
//            loader's own cost (resolve, read, compile, link one file)
//   emptyplugin — the plugin's process with an empty ES module in its place:
//            the same entry, warm-up import, timing and report, and an
//            import() of an empty module where the plugin is imported, made
//            and asked; what the plugin costs "over an empty ES module" is
//            plugin − emptyplugin, and the SDK's sdk − emptyplugin
// Reported: medians of wall time from spawn to exit, (plugin − bare) and
// (sdk − bare), their ratio, the same over emptyplugin; core.wasm's size; and the plugin's extra peak
// memory (max RSS after the plugin answered minus max RSS before importing it,
// in the same process, once Node's ESM file loader is up: bench/empty.mjs is
// imported first). No backend is needed: initialize sends no request.
//
//   node bench/startup.mjs [--runs 30] [--json] [--provider path/to/provider.mjs]
//                          [--baseline path/to/provider.mjs]
//   (--provider: another tree's plugin under the same harness; default this
//   tree's provider.mjs. --baseline: one more way, "baseline", the plugin's
//   process with that plugin, alternated with the others: a before/after in
//   one run, e.g. against a checkout of main)
import { spawnSync } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const RUNS = Number(arg('runs', 30))
const providerFile = path.resolve(arg('provider', path.join(root, 'provider.mjs')))
const provider = pathToFileURL(providerFile).href
const baselineFile = arg('baseline') && path.resolve(arg('baseline'))

// The plugin's process: what a host does to get a working provider, and no
// more. With plugin false, the same process with an empty ES module (the
// warm-up file under another URL, so loaded again) where the plugin is.
const warmup = pathToFileURL(path.join(root, 'bench', 'empty.mjs')).href
const processScript = (plugin, provider) => `
const atStart = process.resourceUsage().maxRSS
await import(${JSON.stringify(warmup)})
const before = process.resourceUsage().maxRSS
// process.hrtime, not performance.now(): the first touch of \`performance\` loads Node's perf_hooks,
// which is the plugin's cost to measure, not the harness's.
const ms = () => Number(process.hrtime.bigint()) / 1e6
// CPU of every thread of the process (V8's compile threads too), in µs: steadier than wall time on a shared machine.
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3 }
const c0 = cpu()
const t0 = ms()
${plugin ? `const { default: create } = await import(${JSON.stringify(provider)})
const t1 = ms(), c1 = cpu()
let d
const kit = { epp: { infra: async (ctx, factory) => (d = await factory(ctx)) } }
await create(kit).buildInfra({ options: {}, noAuth: () => ({}) })
const t2 = ms(), c2 = cpu()
const answer = await new Promise((resolve) => {
  d.onMessage = resolve
  d.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol":"node/1","config":{"api_key":"k"}}}')
})
const t3 = ms(), c3 = cpu()
if (!JSON.parse(answer).result) throw new Error(answer)
d.close()` : `await import(${JSON.stringify(warmup + '?in-place-of-the-plugin')})
const t1 = ms(), t2 = ms(), t3 = ms(), c1 = cpu(), c2 = c1, c3 = c1`}
const peak = process.resourceUsage().maxRSS
// Written to fd 2 through the fs Node has loaded at boot: process.stderr
// would build a stream (6–8 ms of CPU) that is the harness's cost, not the plugin's.
process.getBuiltinModule('node:fs').writeSync(2, JSON.stringify({ extraKiB: peak - before, withLoaderKiB: peak - atStart, phases: [t1 - t0, t2 - t1, t3 - t2], phasesCpu: [c1 - c0, c2 - c1, c3 - c2] }))
`
const WAYS = {
  plugin: ['--input-type=module', '-e', processScript(true, provider)],
  ...(baselineFile ? { baseline: ['--input-type=module', '-e', processScript(true, pathToFileURL(baselineFile).href)] } : {}),
  sdk: ['--input-type=module', '-e', "await import('e2b')"],
  bare: ['-e', '0'],
  // Not a target, for reading the others: what any ES-module host pays before
  // its first line (Node's ESM loader), plugin or not.
  esm: ['--input-type=module', '-e', '0'],
  // (d): one empty ES module file. The plugin's process imports files, so
  // this is the baseline that isolates what only the plugin adds.
  emptyfile: [path.join(root, 'bench', 'empty.mjs')],
  // (e): the plugin's process with an empty ES module in its place: the
  // baseline of "over an empty ES module", harness and all.
  emptyplugin: ['--input-type=module', '-e', processScript(false, provider)],
}

// Each process runs under bash so that its CPU time (user + system, all its
// threads, from getrusage of the reaped child) can be read from `times`: on a
// shared machine CPU time is far steadier than wall time.
function once(name) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync('bash', ['-c', '"$@"; rc=$?; times; exit $rc', 'bash', process.execPath, ...WAYS[name]], { cwd: root, encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stderr}`)
  const [user, sys] = r.stdout.trim().split('\n').at(-1).split(' ').map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t)
    return (Number(m[1]) * 60 + Number(m[2])) * 1000
  })
  return { ms, cpu: user + sys, ...(name === 'plugin' || name === 'baseline' ? JSON.parse(r.stderr) : {}) }
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const times = Object.fromEntries(Object.keys(WAYS).map((k) => [k, []]))
const cpu = Object.fromEntries(Object.keys(WAYS).map((k) => [k, []]))
const extra = []
const withLoader = []
const phases = [[], [], []] // in the plugin's process: import, buildInfra, first initialize
const phasesCpu = [[], [], []]
const baselinePhases = [[], [], []]
const baselinePhasesCpu = [[], [], []]
for (const name of Object.keys(WAYS)) once(name) // warm the file cache; not counted
for (let i = 0; i < RUNS; i++) {
  for (const name of Object.keys(WAYS)) {
    const r = once(name)
    times[name].push(r.ms)
    cpu[name].push(r.cpu)
    if (name === 'baseline') {
      r.phases.forEach((ms, k) => baselinePhases[k].push(ms))
      r.phasesCpu.forEach((ms, k) => baselinePhasesCpu[k].push(ms))
    } else if (r.extraKiB !== undefined) {
      r.phasesCpu.forEach((ms, k) => phasesCpu[k].push(ms))
      extra.push(r.extraKiB)
      withLoader.push(r.withLoaderKiB)
      r.phases.forEach((ms, k) => phases[k].push(ms))
    }
  }
}

const med = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]))
const medCpu = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, median(v)]))
const result = {
  runs: RUNS,
  median_ms: med,
  plugin_minus_bare_ms: med.plugin - med.bare,
  sdk_minus_bare_ms: med.sdk - med.bare,
  ratio: (med.sdk - med.bare) / (med.plugin - med.bare),
  plugin_minus_esm_ms: med.plugin - med.esm,
  plugin_minus_emptyfile_ms: med.plugin - med.emptyfile,
  emptyfile_minus_bare_ms: med.emptyfile - med.bare,
  plugin_minus_emptyplugin_ms: med.plugin - med.emptyplugin,
  sdk_minus_emptyplugin_ms: med.sdk - med.emptyplugin,
  ratio_over_emptyplugin: (med.sdk - med.emptyplugin) / (med.plugin - med.emptyplugin),
  median_cpu_ms: medCpu,
  cpu_plugin_minus_bare_ms: medCpu.plugin - medCpu.bare,
  cpu_sdk_minus_bare_ms: medCpu.sdk - medCpu.bare,
  cpu_ratio: (medCpu.sdk - medCpu.bare) / (medCpu.plugin - medCpu.bare),
  cpu_plugin_minus_esm_ms: medCpu.plugin - medCpu.esm,
  cpu_plugin_minus_emptyfile_ms: medCpu.plugin - medCpu.emptyfile,
  cpu_emptyfile_minus_bare_ms: medCpu.emptyfile - medCpu.bare,
  cpu_plugin_minus_emptyplugin_ms: medCpu.plugin - medCpu.emptyplugin,
  cpu_sdk_minus_emptyplugin_ms: medCpu.sdk - medCpu.emptyplugin,
  cpu_ratio_over_emptyplugin: (medCpu.sdk - medCpu.emptyplugin) / (medCpu.plugin - medCpu.emptyplugin),
  core_wasm_bytes: statSync(path.join(path.dirname(providerFile), 'wasm', 'core.wasm')).size,
  extra_peak_kib_median: median(extra),
  extra_peak_with_esm_loader_kib_median: median(withLoader),
  plugin_phases_median_ms: { import: median(phases[0]), build_infra: median(phases[1]), first_initialize: median(phases[2]) },
  plugin_phases_cpu_median_ms: { import: median(phasesCpu[0]), build_infra: median(phasesCpu[1]), first_initialize: median(phasesCpu[2]),
    all: median(phasesCpu[0].map((x, i) => x + phasesCpu[1][i] + phasesCpu[2][i])) },
  node: process.version,
}
if (baselineFile) {
  result.baseline = baselineFile
  result.baseline_minus_emptyplugin_ms = med.baseline - med.emptyplugin
  result.cpu_baseline_minus_emptyplugin_ms = medCpu.baseline - medCpu.emptyplugin
  result.baseline_phases_median_ms = { import: median(baselinePhases[0]), build_infra: median(baselinePhases[1]), first_initialize: median(baselinePhases[2]) }
  result.baseline_phases_cpu_median_ms = { import: median(baselinePhasesCpu[0]), build_infra: median(baselinePhasesCpu[1]),
    first_initialize: median(baselinePhasesCpu[2]), all: median(baselinePhasesCpu[0].map((x, i) => x + baselinePhasesCpu[1][i] + baselinePhasesCpu[2][i])) }
  result.baseline_core_wasm_bytes = statSync(path.join(path.dirname(baselineFile), 'wasm', 'core.wasm')).size
}

if (process.argv.includes('--json')) {
  process.stdout.write(JSON.stringify(result, null, 2) + '\n')
} else {
  const f = (x) => x.toFixed(1)
  process.stdout.write(`start-up, ${RUNS} alternating runs each, Node ${process.version}\n`)
  process.stdout.write(`  way        wall median   CPU median (ms)\n`)
  for (const k of Object.keys(WAYS)) process.stdout.write(`  ${k.padEnd(9)} ${f(med[k]).padStart(11)} ${f(medCpu[k]).padStart(12)}\n`)
  process.stdout.write(`  wall: plugin − bare ${f(result.plugin_minus_bare_ms)} ms · sdk − bare ${f(result.sdk_minus_bare_ms)} ms · ratio ${f(result.ratio)}× · plugin − esm ${f(result.plugin_minus_esm_ms)} ms · plugin − emptyfile ${f(result.plugin_minus_emptyfile_ms)} ms · emptyfile − bare ${f(result.emptyfile_minus_bare_ms)} ms\n`)
  process.stdout.write(`  CPU:  plugin − bare ${f(result.cpu_plugin_minus_bare_ms)} ms · sdk − bare ${f(result.cpu_sdk_minus_bare_ms)} ms · ratio ${f(result.cpu_ratio)}× · plugin − esm ${f(result.cpu_plugin_minus_esm_ms)} ms · plugin − emptyfile ${f(result.cpu_plugin_minus_emptyfile_ms)} ms · emptyfile − bare ${f(result.cpu_emptyfile_minus_bare_ms)} ms\n`)
  process.stdout.write(`  over an empty ES module (plugin's process with an empty module in its place): plugin ${f(result.plugin_minus_emptyplugin_ms)} ms · sdk ${f(result.sdk_minus_emptyplugin_ms)} ms · ratio ${f(result.ratio_over_emptyplugin)}× (CPU: ${f(result.cpu_plugin_minus_emptyplugin_ms)} · ${f(result.cpu_sdk_minus_emptyplugin_ms)} ms · ${f(result.cpu_ratio_over_emptyplugin)}×)\n`)
  const ph = result.plugin_phases_median_ms
  const pc = result.plugin_phases_cpu_median_ms
  process.stdout.write(`  inside the plugin's process: import ${f(ph.import)} ms · buildInfra (read, compile, instantiate) ${f(ph.build_infra)} ms · first initialize ${f(ph.first_initialize)} ms\n`)
  process.stdout.write(`    the same in CPU (all threads): ${f(pc.import)} · ${f(pc.build_infra)} · ${f(pc.first_initialize)} ms, ${f(pc.all)} ms in all\n`)
  process.stdout.write(`  core.wasm ${result.core_wasm_bytes} bytes (${f(result.core_wasm_bytes / 1024)} KiB)\n`)
  if (baselineFile) {
    const bp = result.baseline_phases_median_ms
    const bc = result.baseline_phases_cpu_median_ms
    process.stdout.write(`  baseline (${baselineFile}) over an empty ES module: ${f(result.baseline_minus_emptyplugin_ms)} ms (CPU ${f(result.cpu_baseline_minus_emptyplugin_ms)}) · import ${f(bp.import)} · buildInfra ${f(bp.build_infra)} · first initialize ${f(bp.first_initialize)} ms · core.wasm ${result.baseline_core_wasm_bytes} bytes\n`)
    process.stdout.write(`    its phases in CPU: ${f(bc.import)} · ${f(bc.build_infra)} · ${f(bc.first_initialize)} ms, ${f(bc.all)} ms in all\n`)
  }
  process.stdout.write(`  plugin's extra peak memory ${f(result.extra_peak_kib_median / 1024)} MiB (median; ${f(result.extra_peak_with_esm_loader_kib_median / 1024)} MiB counting Node's ESM file loader)\n`)
}
