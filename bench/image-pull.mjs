#!/usr/bin/env node
// Pulling an image from a loopback registry, against skopeo copy of the same
// image to a directory in the same run (target: within 1.5x).
// The image: one layer of --mib MiB of random (incompressible) bytes, pushed
// gzip-compressed to a docker-registry on 127.0.0.1 made here. Alternating:
//   template — a template build with fromImage and no steps against a fresh
//              backend and state directory (so the layer is not in the store):
//              from the build request to status ready (the raw API, polled
//              every 10 ms), i.e. skopeo's inspections and copy, the layer
//              unpacked and its diff id checked, the layer published
//   skopeo   — skopeo copy docker://... dir:<fresh directory>
// Medians over --runs each, and their ratio. --logs prints each build's log
// (where the pull's time goes: manifest and config, download, unpack).
// --compare BINARY adds a third, alternating: the same template build with
// another e2b-local-backend (an A/B against an older build of it).
//
//   node bench/image-pull.mjs [--mib 100] [--runs 5] [--json] [--logs] [--compare BINARY]
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { api, startBackend } from '../host/backend.mjs'
import { ociLayout, push, startRegistry, tarOf } from '../host/registry.mjs'
import { sleep } from '../host/wait.mjs'

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const MIB = Number(arg('mib', 100))
const RUNS = Number(arg('runs', 5))
const COMPARE = arg('compare', null)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = () => Number(process.hrtime.bigint()) / 1e6

const work = mkdtempSync(path.join(tmpdir(), 'e2bw-bench-pull-'))
const registry = await startRegistry()
try {
  const tree = path.join(work, 'tree')
  mkdirSync(tree)
  const fd = openSync(path.join(tree, 'random.bin'), 'w')
  for (let i = 0; i < MIB; i++) writeSync(fd, randomBytes(1 << 20))
  closeSync(fd)
  const image = await ociLayout(path.join(work, 'oci'), { layers: [{ tar: tarOf(tree, path.join(work, 'l.tar'), { ownerRoot: true }) }] })
  rmSync(tree, { recursive: true })
  push(`oci:${image.dir}:latest`, registry, 'bench/random:v1')
  const ref = `${registry.host}/bench/random:v1`

  const template = async (binary) => {
    const stateDir = mkdtempSync(path.join(work, 'state-'))
    const backend = await startBackend({ stateDir, ...(binary ? { binary } : {}) })
    try {
      if (backend.isolation !== 'full') throw new Error(`images need isolation full, not ${backend.isolation}`)
      const created = await api(backend, 'POST', '/v3/templates', { name: `bench-pull-${process.pid}` })
      const { templateID, buildID } = created.json
      const t0 = ms()
      const started = await api(backend, 'POST', `/v2/templates/${templateID}/builds/${buildID}`, { fromImage: ref, steps: [] })
      if (started.status !== 202) throw new Error(`build: ${started.status} ${JSON.stringify(started.json)}`)
      for (;;) {
        const s = await api(backend, 'GET', `/templates/${templateID}/builds/${buildID}/status`)
        if (s.json.status === 'ready') {
          if (process.argv.includes('--logs')) console.error(s.json.logEntries.map((e) => e.message).join('\n'))
          return ms() - t0
        }
        if (s.json.status === 'error') throw new Error(`build failed: ${s.json.reason.message}`)
        await sleep(10)
      }
    } finally {
      await backend.stop()
      rmSync(stateDir, { recursive: true, force: true })
    }
  }
  const skopeo = () => {
    const dest = path.join(work, `dir-${Date.now()}`)
    const t0 = ms()
    const r = spawnSync('skopeo', ['--insecure-policy', 'copy', '--quiet', '--src-tls-verify=false', '--src-no-creds', `docker://${ref}`, `dir:${dest}`], { encoding: 'utf8' })
    const t = ms() - t0
    rmSync(dest, { recursive: true, force: true })
    if (r.status !== 0) throw new Error(`skopeo copy: ${r.stderr}`)
    return t
  }
  const pulls = [], copies = [], compared = []
  for (let i = 0; i < RUNS; i++) {
    copies.push(skopeo())
    pulls.push(await template())
    if (COMPARE) compared.push(await template(COMPARE))
  }
  const result = {
    mib: MIB, runs: RUNS, load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    template_pull_ms: median(pulls), skopeo_copy_ms: median(copies), ratio: median(pulls) / median(copies),
    all: { template: pulls.map(Math.round), skopeo: copies.map(Math.round) },
  }
  if (COMPARE) {
    Object.assign(result, { compare_binary: COMPARE, compare_pull_ms: median(compared), compare_ratio: median(compared) / median(copies) })
    result.all.compare = compared.map(Math.round)
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(`image: one layer of ${MIB} MiB random bytes (gzip), loopback docker-registry; load ${result.load}`)
    console.log(`template build fromImage (pull + unpack + publish): median ${result.template_pull_ms.toFixed(0)} ms  ${JSON.stringify(result.all.template)}`)
    console.log(`skopeo copy docker:// -> dir:                      median ${result.skopeo_copy_ms.toFixed(0)} ms  ${JSON.stringify(result.all.skopeo)}`)
    if (COMPARE) console.log(`the same with ${COMPARE}: median ${result.compare_pull_ms.toFixed(0)} ms  ${JSON.stringify(result.all.compare)}, ratio ${result.compare_ratio.toFixed(2)}`)
    console.log(`ratio ${result.ratio.toFixed(2)} (target: within 1.5x)`)
  }
} finally {
  await registry.stop()
  rmSync(work, { recursive: true, force: true })
}
