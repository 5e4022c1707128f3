// Every benchmark in bench/ still runs: each is started as docs/PERFORMANCE.md
// shows, with the smallest workload it takes, and its --json result must hold
// the figures the docs quote, as numbers. Nothing is timed here (the figures
// come from quick runs on a busy machine and mean nothing); what fails is a
// bench that no longer starts, throws, or has lost a figure, so that the
// commands in docs/PERFORMANCE.md keep working between measurements.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const isRoot = process.getuid?.() === 0
const T = { timeout: 300_000 }

/** node bench/<file> args --json: its result (the JSON printed last; some print it indented). */
function runBench(file, args) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env }
    for (const name of Object.keys(env)) if (name.startsWith('E2B_')) delete env[name]
    const child = spawn(process.execPath, [path.join(root, 'bench', file), ...args, '--json'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`bench/${file} ended with ${code ?? signal}:\n${err.slice(-3000)}`))
      // The last line that opens an object at its start opens the result.
      const lines = out.split('\n')
      const start = lines.findLastIndex((line) => line.startsWith('{'))
      try {
        resolve(JSON.parse(lines.slice(Math.max(start, 0)).join('\n')))
      } catch (e) {
        reject(new Error(`bench/${file} printed no JSON result (${e.message}):\n${out.slice(-2000)}`))
      }
    })
  })
}

/** Each dotted path names a finite number in result, >= 0 but for a
 *  difference or a ratio of differences (of a run this short, noise can make
 *  one negative). */
function assertFigures(result, paths, file) {
  for (const p of paths) {
    const value = p.split('.').reduce((v, k) => (v == null ? undefined : v[k]), result)
    const signed = /_minus_|^ratio_over_/.test(p)
    assert.ok(typeof value === 'number' && Number.isFinite(value) && (signed || value >= 0),
      `bench/${file}: ${p} is ${JSON.stringify(value)} in ${JSON.stringify(result).slice(0, 1500)}`)
  }
}

// file, smallest args, figures, whether it needs root (cgroups, sandboxes with layers, namespaces)
const BENCHES = [
  ['startup.mjs', ['--runs', '2'], ['median_ms.plugin', 'median_ms.sdk', 'median_cpu_ms.plugin', 'core_wasm_bytes', 'plugin_minus_emptyplugin_ms', 'ratio_over_emptyplugin'], false],
  ['stream-throughput.mjs', ['--mib', '2', '--runs', '1'], ['median_mib_per_s.plugin', 'median_mib_per_s.sdk', 'median_mib_per_s.fetch', 'ratios.plugin_vs_fetch'], false],
  ['files-throughput.mjs', ['--runs', '1', '--gib', '0.01', '--stats', '10', '--big-runs', '1'],
    ['write_read_median_mib_per_s.plugin', 'ratios.plugin_vs_fetch', 'big_read.mib_per_s', 'big_read.extra_rss_mib'], false],
  ['sandbox-runtime.mjs', ['--sandboxes', '2', '--runs', '2', '--idle', '2', '--idle-starts', '2', '--paced', '2', '--paced-gap-ms', '10'],
    ['create_first_output_ms.median', 'create_first_output_paced_ms.median', 'exec_run_true_ms.plugin_median', 'exec_run_true_ms.raw_start_median',
      'exec_run_true_ms.raw_start_bash_login_median', 'floor_ms.fetch_rtt_median', 'create_first_output_ms.cycle_cpu_ms',
      'create_first_output_ms.machine_busy'], false],
  ['state.mjs', ['--runs', '2', '--paused', '2'], ['create.median', 'fork.median', 'snapshot.median', 'restart.readyMs'], true],
  ['cgroup-migrate.mjs', ['--moves', '2'], ['write_ms.gap_0ms', 'write_ms.gap_200ms'], true],
  ['templates.mjs', ['--steps', '1', '--builds', '1', '--runs', '1', '--paced', '1', '--paced-gap-ms', '10'],
    ['build_cold_ms', 'build_cached_ms', 'create_first_output_layers_ms', 'create_first_output_one_shape_ms.layers_back_to_back',
      'create_first_output_one_shape_ms.layers_paced'], true],
  ['template-depth.mjs', ['--steps', '1', '--runs', '1'], ['base_ms', 'templates.0.first_output_ms'], true],
  ['image-pull.mjs', ['--mib', '1', '--runs', '1'], ['template_pull_ms', 'skopeo_copy_ms', 'ratio'], true],
  ['network.mjs', ['--sandboxes', '2', '--runs', '1', '--seconds', '1', '--updates', '2', '--others', '1'],
    ['create_first_output_ms.network_on.median', 'create_first_output_ms.network_off.median', 'tcp_gbit_s.sandbox.0', 'update_network_ms.median'], true],
  ['code-interpreter.mjs', ['--runs', '1', '--creates', '1'],
    ['round_trip_ms.sdk_run_code', 'round_trip_ms.plugin_code_run', 'round_trip_ms.plugin_exec_run_python', 'round_trip_ms.sdk_commands_run_python',
      'create_first_result_ms.pooled.median_ms', 'create_first_result_ms.started.median_ms', 'create_first_result_ms.base_exec_run_python'], true],
  ['egress.mjs', ['--rounds', '1', '--requests', '2', '--mib', '1'],
    ['direct.fresh_ms_median', 'intercepted.fresh_ms_median', 'intercepted.kept_vs_direct', 'passed.rate_vs_direct', 'passed.up_vs_direct'], true],
]

for (const [file, args, figures, needsRoot] of BENCHES) {
  test(`bench/${file} ${args.join(' ')} runs and reports its figures`, T, async (t) => {
    if (needsRoot && !isRoot) { t.skip('needs root'); return }
    assertFigures(await runBench(file, args), figures, file)
  })
}
