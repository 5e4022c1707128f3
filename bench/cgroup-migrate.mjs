#!/usr/bin/env node
// What moving a process into a cgroup costs after a pause (root, cgroup v1).
// Every sandbox init and every command the backend starts is moved into its
// sandbox's cgroups by a write to cgroup.procs; the kernel takes its global
// threadgroup lock for writing, and the first writer after a pause waits for
// an RCU grace period unless some mounted hierarchy asks for favordynmods
// (docs/backend/cgroups-and-limits.md, "Cgroup migrations"). This writes a sleeping
// process's pid into a test cgroup and back, with gaps of G ms between
// moves, and prints the median time of a write for each gap. Run it with no
// backend running to see the machine's own mode; the kernel may keep the
// mode after the hierarchy that asked for it is gone.
//
//   node bench/cgroup-migrate.mjs [--controller memory] [--moves 12] [--json]
import { spawn } from 'node:child_process'
import { mkdirSync, openSync, readFileSync, rmdirSync, writeSync, closeSync } from 'node:fs'

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : def
}
const controller = arg('controller', 'memory')
const MOVES = Number(arg('moves', 12))
const root = `/sys/fs/cgroup/${controller}`
const dir = `${root}/e2bw-bench-migrate-${process.pid}`
const sleeper = spawn('sleep', ['600'], { stdio: 'ignore' })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const move = (procs) => {
  const fd = openSync(procs, 'w')
  const t0 = process.hrtime.bigint()
  writeSync(fd, String(sleeper.pid))
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  closeSync(fd)
  return ms
}
mkdirSync(dir)
const result = { controller, favordynmods_mounted: /favordynmods/.test(readFileSync('/proc/mounts', 'utf8')), write_ms: {} }
try {
  for (const gap of [0, 5, 20, 50, 200]) {
    const times = []
    for (let i = 0; i < MOVES; i++) {
      await sleep(gap)
      times.push(move(`${dir}/cgroup.procs`))
      move(`${root}/cgroup.procs`)
    }
    result.write_ms[`gap_${gap}ms`] = Math.round(median(times) * 1000) / 1000
  }
} finally {
  sleeper.kill('SIGKILL')
  await sleep(100)
  rmdirSync(dir)
}
if (process.argv.includes('--json')) console.log(JSON.stringify(result))
else console.log(JSON.stringify(result, null, 2))
