#!/usr/bin/env node
// The main job, end to end: start the embedded local E2B-compatible backend,
// load e2b-wasm the way abx does (reference host, node/1, kit.epp.infra),
// and walk a sandbox through its life: create, show, list, pause, resume,
// kill, with a command run and one streamed on the way. Run it with
// ./build.sh demo (which builds first).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadProvider } from '../host/reference/host.mjs'
import { startBackend } from '../host/backend.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const step = (s) => console.log(`\n${bold('▸ ' + s)}`)
const show = (rec) => {
  const rows = [['sandbox_id', rec.sandbox_id], ['template', rec.template], ['status', rec.status],
    ['metadata', JSON.stringify(rec.metadata ?? {})], ['created_at', rec.created_at], ['expires_at', rec.expires_at],
    ['paused_at', rec.paused_at], ['lifetime_left', rec.lifetime_left !== undefined ? `${rec.lifetime_left} s (kept while paused)` : undefined],
    ['cpu / memory / disk', rec.cpu !== undefined ? sizes(rec) : undefined],
    ['envd_version', rec.envd_version]]
  for (const [k, v] of rows) if (v !== undefined) console.log(`  ${k.padEnd(20)} ${v}`)
}

const backend = await startBackend()
// What the backend enforces (its ready line), not what a create asks for.
const limits = backend.limits
const enforced = [limits.memory && 'memory', limits.pids && 'pids (1024)', limits.cpu && 'cpu', limits.disk && 'disk',
  limits.devices && `devices (${limits.devices})`].filter(Boolean)
function sizes(rec) {
  const mark = (ok, text) => (ok ? text : `${text} (not enforced)`)
  return `${mark(limits.cpu, `${rec.cpu} vCPU`)} / ${mark(limits.memory, `${rec.memory} MiB`)} / ${mark(limits.disk, `${rec.disk} MiB`)}`
}
console.log(`local E2B backend: api ${backend.apiUrl}, envd ${backend.sandboxUrl}, isolation ${backend.isolation}` +
  `${backend.cgroup ? ` (cgroup ${backend.cgroup})` : ''}`)
console.log(`  limits enforced: ${enforced.length ? enforced.join(', ') : 'none'}`)
let infra
try {
  infra = await loadProvider(root, {
    env: { ABX_E2B_WASM_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl },
  })
  const sp = infra.sandbox_protocol
  console.log(`provider e2b-wasm ${infra.initializeResult.provider.version} (core.wasm via ${infra.transport}); features: ${infra.features.join(', ')}`)

  step('create --template base --timeout 600 --metadata owner=demo')
  const created = await sp.create({ template: 'base', timeout: 600, metadata: { owner: 'demo' }, envs: { GREETING: 'hello' } })
  console.log(`  created e2b-wasm:${created.sandbox_id}`)

  step('get')
  show(await sp.get(created.sandbox_id))

  step('list --metadata owner=demo')
  for (const s of (await sp.list({ metadata: { owner: 'demo' } })).sandboxes) console.log(`  ${s.sandbox_id}  ${s.status}  expires ${s.expires_at}`)

  step(`exec.run 'echo "$GREETING from $(uname -s)"; exit 3'`)
  const ran = await infra.call('exec.run', { sandbox_id: created.sandbox_id, command: 'echo "$GREETING from $(uname -s)"; exit 3' })
  console.log(`  stdout: ${JSON.stringify(ran.stdout)}  exit_code: ${ran.exit_code} (a non-zero exit is data)`)

  step(`exec.run 'whoami; hostname; ps -e | wc -l' (a sandbox of its own: user, hostname, processes)`)
  const inside = await infra.call('exec.run', { sandbox_id: created.sandbox_id, command: 'whoami; hostname; ps -e | wc -l' })
  const [who, host, procs] = inside.stdout.trim().split('\n')
  console.log(`  user: ${who}  hostname: ${host}  processes it can see: ${Number(procs) - 1}`)

  step('files.write /home/user/notes/hello.txt, then files.list and files.read')
  await infra.call('files.write', { sandbox_id: created.sandbox_id, path: '/home/user/notes/hello.txt', content: 'written by the demo\n', mode: 0o640 })
  for (const e of (await infra.call('files.list', { sandbox_id: created.sandbox_id, path: '/home/user/notes' })).entries)
    console.log(`  ${e.permissions}  ${e.owner}:${e.group}  ${String(e.size).padStart(5)}  ${e.path}`)
  const read = await infra.call('files.read', { sandbox_id: created.sandbox_id, path: '/home/user/notes/hello.txt' })
  console.log(`  content: ${JSON.stringify(read.content)}`)

  step("exec.start 'for i in 1 2 3; do echo tick $i; sleep 0.2; done' (streamed)")
  const done = new Promise((resolve) => infra.onNotification((msg) => {
    if (msg.method === 'exec.output') process.stdout.write(`  [${msg.params.stream} @${msg.params.offset}] ${msg.params.data}`)
    if (msg.method === 'exec.exit') resolve(msg.params)
  }))
  const started = await infra.call('exec.start', { sandbox_id: created.sandbox_id, command: 'for i in 1 2 3; do echo tick $i; sleep 0.2; done' })
  console.log(`  pid ${started.pid}`)
  console.log(`  exit_code: ${(await done).exit_code}`)

  step('pause')
  const paused = await sp.pause(created.sandbox_id)
  console.log(`  ${paused.sandbox_id} is ${paused.status}`)
  show(await sp.get(created.sandbox_id))

  step('resume (without a timeout: the lifetime it had left when it paused)')
  show(await sp.resume(created.sandbox_id))

  step('kill')
  console.log(`  killed: ${(await sp.kill(created.sandbox_id)).killed}`)
  console.log(`  killed again: ${(await sp.kill(created.sandbox_id)).killed} (already gone; not an error)`)
  try {
    await sp.get(created.sandbox_id)
  } catch (err) {
    console.log(`  get afterwards: ${err.code} ${err.message}`)
  }
  console.log('\ndone.')
} finally {
  if (infra) await infra.close()
  await backend.stop()
}
