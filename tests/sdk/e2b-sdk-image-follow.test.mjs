// Image layers unpacked while skopeo still downloads them (docs/templates.md,
// "Images from registries": backend/images/images_follow.c), through the
// official e2b SDK's Template().fromImage. The registry is a docker-registry
// on 127.0.0.1 behind a proxy made here that holds, cuts or alters the
// image's layer blobs, so the test decides when each blob's bytes arrive:
// two layers fetched at once are both unpacked while both downloads are
// still open; a follower that dies leaves its layer to be unpacked from the
// blob afterwards; a cut download and a blob whose digest skopeo rejects fail
// the build and leave no layer, no scratch directory and no process.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { startBackend } from '../../host/backend.mjs'
import { ociLayout, push, startRegistry, tarOf } from '../../host/registry.mjs'
import { until } from '../../host/wait.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Template, BuildError } = await import('e2b')

const T = { timeout: 300_000 }
const HELD = 1 << 20 // what the proxy sends of a held blob before it waits

// The processes whose command line or name says what, among pids.
const procs = () => readdirSync('/proc').filter((n) => /^\d+$/.test(n))
const comm = (pid) => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() } catch { return '' } }
const skopeoFor = (hostPort) => procs().filter((pid) => {
  try { const c = readFileSync(`/proc/${pid}/cmdline`, 'utf8'); return c.startsWith('skopeo\0') && c.includes(hostPort) } catch { return false }
})

describe('official e2b SDK: image layers unpacked while skopeo downloads them', () => {
  let backend, opts, stateDir, work, registry, proxy, via, image
  const uniq = `${process.pid}-${Date.now().toString(36)}`
  const layersDir = () => path.join(stateDir, 'layers')
  const layerIds = () => readdirSync(layersDir()).filter((n) => !n.startsWith('.')).sort()
  const leftovers = () => readdirSync(layersDir()).filter((n) => n.startsWith('.tmp-'))
  // The followers of this backend's pulls: <scratch>/follow-<pid>/root.
  const followDirs = () => leftovers().flatMap((s) => {
    try { return readdirSync(path.join(layersDir(), s)).filter((n) => n.startsWith('follow-')).map((n) => path.join(layersDir(), s, n)) } catch { return [] }
  })
  const followersAlive = () => followDirs().map((d) => path.basename(d).slice(7)).filter((pid) => comm(pid) === 'e2b-img-follow')
  // How the proxy serves each layer blob: (digest, body, res) => void; none: as the registry does.
  let shape = null
  const requested = []

  const build = async (name) => {
    const logs = []
    const built = await Template.build(Template().fromImage(`${via}/e2bw/follow:v1`), name, { ...opts, onBuildLogs: (e) => logs.push(e.message) })
    return { built, logs: logs.join('\n') }
  }
  const buildFails = async (name) => {
    let error
    await assert.rejects(build(name), (err) => { error = err; return err instanceof BuildError })
    return error.message
  }
  // Sends the first HELD bytes, then the rest once gate resolves.
  const held = (gate) => (digest, body, res) => {
    res.write(body.subarray(0, HELD))
    gate.then(() => res.end(body.subarray(HELD)))
  }
  const nothingLeft = async (before) => {
    await until(() => leftovers().length === 0, () => `scratch directories left: ${leftovers()}`)
    assert.deepEqual(layerIds(), before, 'no layer made by a failed pull')
    await until(() => skopeoFor(via).length === 0, 'skopeo to end')
  }

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'e2bw-follow-'))
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-follow-state-'))
    registry = await startRegistry()
    // Two layers, each a small file first (its tar entry comes first: the
    // follower has it on disk after the first bytes) and 3 MiB of random
    // bytes (gzip cannot shrink them, so HELD bytes are about HELD of tar).
    const layers = []
    for (const n of [1, 2]) {
      const tree = path.join(work, `tree${n}`)
      mkdirSync(tree)
      writeFileSync(path.join(tree, 'a-first.txt'), `layer ${n} ${uniq}\n`)
      writeFileSync(path.join(tree, 'z-random.bin'), randomBytes(3 << 20))
      layers.push({ tar: tarOf(tree, path.join(work, `l${n}.tar`), { ownerRoot: true }), compress: 'gzip' })
    }
    image = await ociLayout(path.join(work, 'oci'), { layers })
    image.randomSha = [1, 2].map((n) => createHash('sha256').update(readFileSync(path.join(work, `tree${n}`, 'z-random.bin'))).digest('hex'))
    push(`oci:${image.dir}:latest`, registry, 'e2bw/follow:v1')
    const [regHost, regPort] = registry.host.split(':')
    proxy = http.createServer((req, res) => {
      const digest = image.layerDigests.find((d) => req.url.includes(d))
      const up = http.request({ host: regHost, port: Number(regPort), path: req.url, method: req.method, headers: { ...req.headers, host: registry.host } }, (r) => {
        if (!(req.method === 'GET' && digest && shape && r.statusCode === 200)) {
          res.writeHead(r.statusCode, r.headers)
          r.pipe(res)
          return
        }
        requested.push(digest)
        const chunks = []
        r.on('data', (c) => chunks.push(c))
        r.on('end', () => { res.writeHead(200, r.headers); shape(digest, Buffer.concat(chunks), res) })
      })
      up.on('error', () => res.destroy())
      req.pipe(up)
    })
    await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    via = `127.0.0.1:${proxy.address().port}`
    backend = await startBackend({ stateDir })
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 }
  }, T)

  after(async () => {
    proxy.closeAllConnections()
    proxy.close()
    const { code } = await backend.stop()
    await registry.stop()
    rmSync(work, { recursive: true, force: true })
    rmSync(stateDir, { recursive: true, force: true })
    // Last: a failed assertion must not leave the registry running, which
    // would keep this file from ever ending.
    assert.equal(code, 0, backend.stderr())
  })

  test('a cut download fails the build; no layer, scratch directory or follower is left', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const before = layerIds()
    requested.length = 0
    shape = (digest, body, res) => { res.write(body.subarray(0, HELD)); setTimeout(() => res.destroy(), 50) }
    try {
      const msg = await buildFails(`follow-cut-${uniq}`)
      assert.match(msg, new RegExp(`^cannot pull '${via.replace(/\./g, '\\.')}/e2bw/follow:v1' from `))
      assert.ok(requested.length > 0, 'the proxy served a blob')
    } finally {
      shape = null
    }
    await nothingLeft(before)
    assert.deepEqual(followersAlive(), [])
  })

  test('a blob whose digest skopeo rejects fails the build, though its follower read it all; nothing is left', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const before = layerIds()
    // Bytes of the random file changed (gzip -1 keeps random bytes in
    // stored blocks): the same length, another digest.
    shape = (digest, body, res) => {
      const bad = Buffer.from(body)
      for (let i = HELD; i < HELD + 64; i++) bad[i] ^= 0xff
      res.end(bad)
    }
    try {
      assert.match(await buildFails(`follow-tamper-${uniq}`), /digest/i)
    } finally {
      shape = null
    }
    await nothingLeft(before)
    for (const id of image.diffIds) assert.ok(!layerIds().includes(id))
  })

  test('a follower that dies leaves its layer to be unpacked from the blob', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    let release
    const gate = new Promise((resolve) => { release = resolve })
    shape = held(gate)
    const building = build(`follow-killed-${uniq}`)
    try {
      const pids = await until(() => { const p = followersAlive(); return p.length >= 2 && p }, () => `two followers (${followDirs()})`, 60_000)
      for (const pid of pids) process.kill(Number(pid), 'SIGKILL')
    } finally {
      release()
    }
    const { logs } = await building
    shape = null
    for (const [i, id] of image.diffIds.entries()) {
      assert.match(logs, new RegExp(`^Layer ${id}: unpacked \\(3\\.0 MiB, gzip; \\d+ entries`, 'm'), logs)
      assert.equal(readFileSync(path.join(layersDir(), id, 'root', 'a-first.txt'), 'utf8'), `layer ${i + 1} ${uniq}\n`)
    }
  })

  test('two layers downloaded at once are both unpacked while both downloads are open', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    // A fresh backend and store: the layers are not there yet.
    assert.equal((await backend.stop()).code, 0)
    rmSync(stateDir, { recursive: true, force: true })
    mkdirSync(stateDir)
    backend = await startBackend({ stateDir })
    opts = { ...opts, apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl }
    let release
    const gate = new Promise((resolve) => { release = resolve })
    requested.length = 0
    shape = held(gate)
    const building = build(`follow-two-${uniq}`)
    try {
      // Both blobs asked for, both held after HELD bytes, and each one's
      // first file already unpacked by its follower.
      await until(() => {
        const firsts = followDirs().map((d) => path.join(d, 'root', 'a-first.txt')).filter((f) => existsSync(f)).map((f) => readFileSync(f, 'utf8')).sort()
        return requested.length === 2 && firsts.length === 2 && firsts[0] === `layer 1 ${uniq}\n` && firsts[1] === `layer 2 ${uniq}\n`
      }, () => `both layers' first files unpacked while held (requested ${requested.length}, ${followDirs()})`, 60_000)
      assert.ok(image.layerDigests.every((d) => requested.includes(d)))
    } finally {
      release()
    }
    const { built, logs } = await building
    shape = null
    for (const [i, id] of image.diffIds.entries()) {
      assert.match(logs, new RegExp(`^Layer ${id}: unpacked as it downloaded \\(3\\.0 MiB, gzip; \\d+ entries, 0 whiteouts, 0 opaque directories\\), published in \\d+ ms$`, 'm'), logs)
      const root = path.join(layersDir(), id, 'root')
      assert.equal(readFileSync(path.join(root, 'a-first.txt'), 'utf8'), `layer ${i + 1} ${uniq}\n`)
      assert.equal(createHash('sha256').update(readFileSync(path.join(root, 'z-random.bin'))).digest('hex'), image.randomSha[i])
      assert.equal(JSON.parse(readFileSync(path.join(layersDir(), id, 'layer.json'), 'utf8')).parent, i ? image.diffIds[i - 1] : null)
    }
    assert.ok(built.templateId)
    await until(() => leftovers().length === 0, () => `scratch directories left: ${leftovers()}`)
    assert.deepEqual(followersAlive(), [])
  })
})
