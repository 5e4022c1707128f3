// The lifecycle demo (demo/lifecycle.mjs), run as `./build.sh demo` runs it:
// the sizes it shows say whether the backend enforces them (demo/limits.mjs,
// from the ready line's `limits`, a boolean or an object), and Ctrl-C, from
// a terminal (the whole process group) or to the demo alone, says what was
// cleaned up and leaves nothing. The rootless run is tests/rootless/demo-rootless.test.mjs.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { until } from '../../host/wait.mjs'
import { describeLimits, enforcedLimits, limitsLine } from '../../demo/limits.mjs'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const rec = { cpu: 2, memory: 512, disk: 1024 }

function runDemo({ env = {}, command = [process.execPath, path.join(repo, 'demo', 'lifecycle.mjs')], detached = false } = {}) {
  const child = spawn(command[0], command.slice(1), { cwd: repo, env: { ...process.env, E2BW_BUILD: process.env.E2BW_BUILD || path.join(repo, 'build'), ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stderr.setEncoding('utf8')
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { out += d })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return { child, exited, output: () => out }
}

test('limits: the ready line\'s boolean or object, to what applies', () => {
  assert.equal(describeLimits(rec, true), '2 vCPU / 512 MiB / 1024 MiB (enforced)')
  assert.equal(describeLimits(rec, false), 'none enforced by this backend (asked: 2 vCPU / 512 MiB / 1024 MiB)')
  assert.equal(describeLimits(rec, undefined), 'none enforced by this backend (asked: 2 vCPU / 512 MiB / 1024 MiB)')
  assert.equal(describeLimits(rec, { memory: true, pids: true, cpu: false, disk: false }), '2 vCPU (not enforced) / 512 MiB / 1024 MiB (not enforced)')
  assert.equal(describeLimits(rec, { cpu: { max: '200000 100000' }, memory_mb: 512, disk: 'off' }), '2 vCPU / 512 MiB / 1024 MiB (not enforced)')
  assert.equal(describeLimits(rec, { cpu: { enforced: false }, memory: true, disk: true }), '2 vCPU (not enforced) / 512 MiB / 1024 MiB')
  assert.deepEqual(enforcedLimits({ memory: true, pids: true }), { cpu: false, memory: true, pids: true, disk: false })
  assert.equal(limitsLine(true), 'cpu, memory, pids and disk limits enforced')
  assert.equal(limitsLine(false), 'no cpu, memory, pids or disk limits')
  assert.equal(limitsLine({ memory: true, pids: true, cpu: true }), 'cpu, memory and pids limits only')
})

test('the demo end to end: the sizes as this backend enforces them', async () => {
  const demo = runDemo()
  const { code } = await demo.exited
  const out = demo.output()
  assert.equal(code, 0, out)
  const isolation = out.match(/isolation (\w+) \(([^)]*)\)/)
  assert.ok(isolation, out)
  const sizes = out.match(/cpu \/ memory \/ disk +(.*)$/m)[1]
  if (isolation[1] === 'full') {
    assert.equal(isolation[2], 'cpu, memory, pids and disk limits enforced')
    assert.equal(sizes, '2 vCPU / 512 MiB / 1024 MiB (enforced)')
  } else {
    assert.equal(sizes, 'none enforced by this backend (asked: 2 vCPU / 512 MiB / 1024 MiB)')
  }
  assert.match(out, /\ndone\.\n$/)
})

for (const [how, group] of [['to the demo alone', false], ['from a terminal: the demo and its backend together', true]]) {
  test(`Ctrl-C ${how}: it says what was cleaned up, and nothing is left`, async () => {
    const demo = runDemo({ detached: group })
    const id = await until(() => demo.output().match(/created e2b-wasm:(\w+)/)?.[1], () => `a sandbox created:\n${demo.output()}`, 60000)
    if (group) process.kill(-demo.child.pid, 'SIGINT')
    else demo.child.kill('SIGINT')
    const { code } = await demo.exited
    const out = demo.output()
    assert.equal(code, 130, out)
    const said = out.match(/\ninterrupted: stopped the local backend \(exit 0\), which removed sandbox e2b-wasm:(\w+) and its state directory (\S+): nothing of the demo is left\n$/)
    assert.ok(said, out)
    assert.equal(said[1], id)
    assert.ok(!existsSync(said[2]), `${said[2]} is gone`)
    assert.doesNotMatch(out, /exited unexpectedly|Error/)
  })
}
