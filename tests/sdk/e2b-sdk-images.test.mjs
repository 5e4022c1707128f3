// Templates from registry images (docs/templates.md, "Images from
// registries"), through the official e2b SDK's Template().fromImage and the
// plugin's templates.build with a Dockerfile FROM. Every registry is a
// docker-registry on 127.0.0.1 filled here with images made from the base
// template's root filesystem; the backend gets --registry-mirror for Docker
// Hub names and --no-docker-hub (host/backend.mjs), so nothing is ever asked
// of a public registry: the mirror's access log shows where each pull went.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBackend, api } from '../../host/backend.mjs'
import { loadProvider } from '../../host/reference/host.mjs'
import { blobFile, layerDigests, ociLayout, push, startRegistry, tarOf } from '../../host/registry.mjs'
import { until } from '../../host/wait.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox, Template, BuildError } = await import('e2b')

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const rootfs = path.join(process.env.E2BW_BUILD || path.join(repo, 'build'), 'templates', 'base', 'rootfs')
const T = { timeout: 300_000 }
const CREDS = { username: 'e2bw-puller', password: `pw-${process.pid}-DO-NOT-LEAK-${Date.now().toString(36)}` }

// A small image of its own (one layer with a file saying text), pushed as name.
async function tinyImage(work, registry, name, text, { architecture = 'amd64', compress = 'gzip' } = {}) {
  const dir = mkdtempSync(path.join(work, 'tiny-'))
  mkdirSync(path.join(dir, 'tree', 'opt'), { recursive: true })
  writeFileSync(path.join(dir, 'tree', 'opt', 'tiny.txt'), `${text}\n`)
  const layout = await ociLayout(path.join(dir, 'oci'), { layers: [{ tar: tarOf(path.join(dir, 'tree'), path.join(dir, 'l.tar'), { ownerRoot: true }), compress }], architecture })
  push(`oci:${layout.dir}:latest`, registry, name)
  return layout
}

// skopeo processes whose command line names host:port.
function skopeoFor(hostPort) {
  const found = []
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (cmd.startsWith('skopeo\0') && cmd.includes(hostPort)) found.push(pid)
    } catch {}
  }
  return found
}

describe('official e2b SDK and the plugin: templates from registry images', () => {
  let backend, opts, stateDir, work, registry, privateRegistry, image
  const uniq = `${process.pid}-${Date.now().toString(36)}`
  const layersDir = () => path.join(stateDir, 'layers')
  const layerIds = () => readdirSync(layersDir()).filter((n) => !n.startsWith('.')).sort()
  const leftovers = () => readdirSync(layersDir()).filter((n) => n.startsWith('.tmp-'))
  const stackOf = (templateId) => JSON.parse(readFileSync(path.join(stateDir, 'records', 'templates', `${templateId}.json`), 'utf8')).builds[0].config.layers
  const start = async () => {
    backend = await startBackend({ stateDir, extraArgs: ['--registry-mirror', `http://${registry.host}`] })
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 }
  }
  const build = async (template, name, extra = {}) => {
    const logs = []
    const built = await Template.build(template, name, { ...opts, ...extra, onBuildLogs: (e) => logs.push(e.message) })
    return { built, logs: logs.join('\n') }
  }
  const failure = async (template, name) => {
    let error
    await assert.rejects(Template.build(template, name, opts), (err) => { error = err; return err instanceof BuildError })
    return error.message
  }

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'e2bw-images-'))
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-images-state-'))
    registry = await startRegistry()
    privateRegistry = await startRegistry({ auth: CREDS })
    // Layer 1: base's root filesystem (plain tar; the push compresses it with
    // gzip). Layer 2 (zstd): a whiteout of /etc/issue, /etc/skel made opaque
    // with one file of its own, and /opt/image/hello.txt.
    const tree = path.join(work, 'tree')
    mkdirSync(path.join(tree, 'etc', 'skel'), { recursive: true })
    mkdirSync(path.join(tree, 'opt', 'image'), { recursive: true })
    writeFileSync(path.join(tree, 'etc', '.wh.issue'), '')
    writeFileSync(path.join(tree, 'etc', 'skel', '.wh..wh..opq'), '')
    writeFileSync(path.join(tree, 'etc', 'skel', 'only-this'), 'x\n')
    writeFileSync(path.join(tree, 'opt', 'image', 'hello.txt'), `hello from layer 2 ${uniq}\n`)
    image = await ociLayout(path.join(work, 'oci'), {
      layers: [{ tar: tarOf(rootfs, path.join(work, 'l1.tar')) }, { tar: tarOf(tree, path.join(work, 'l2.tar'), { ownerRoot: true }), compress: 'zstd' }],
      env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'IMAGE_GREETING=hi from the image config', 'EMPTY=', '  SPACED  =  kept  '],
      workdir: '/opt/image',
    })
    push(`oci:${image.dir}:latest`, registry, 'e2bw/base-image:v1')
    push(`docker://${registry.host}/e2bw/base-image:v1`, registry, 'library/e2bw-hub:3.12')
    push(`docker://${registry.host}/e2bw/base-image:v1`, privateRegistry, 'private/img:v1', { creds: CREDS })
    await start()
  }, T)

  after(async () => {
    const { code } = await backend.stop()
    await registry.stop()
    await privateRegistry.stop()
    rmSync(work, { recursive: true, force: true })
    rmSync(stateDir, { recursive: true, force: true })
    // Last: a failed assertion must not leave the registry running, which
    // would keep this file from ever ending.
    assert.equal(code, 0, backend.stderr())
    for (const secret of [CREDS.password, `wrong-${CREDS.password}`]) assert.ok(!backend.stderr().includes(secret), 'a registry password in the log')
  })

  test('fromImage: the layers (gzip and zstd), whiteout and opaque directory, Env and WorkingDir, steps on top', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const template = Template().fromImage(`${registry.host}/e2bw/base-image:v1`)
      .runCmd('echo "step in $(pwd) as $(whoami): $IMAGE_GREETING [$SPACED] [${EMPTY-unset}]"')
      .setStartCmd('pwd > /tmp/start-pwd; exec sleep infinity', 'test -s /tmp/start-pwd')
    const { built, logs } = await build(template, `img-a-${uniq}`)
    assert.match(logs, /^step in \/opt\/image as user: hi from the image config \[kept\] \[unset\]$/m, logs)
    // Unpacked as skopeo downloaded it, or from its blob afterwards (a
    // small blob may be renamed before its follower opens it).
    assert.match(logs, new RegExp(`^Layer ${image.diffIds[0]}: unpacked (as it downloaded )?\\(.* MiB, gzip;`, 'm'), logs)
    assert.match(logs, new RegExp(`^Layer ${image.diffIds[1]}: unpacked (as it downloaded )?\\(.* MiB, zstd; \\d+ entries, 1 whiteouts, 1 opaque directories\\)`, 'm'), logs)
    // The stack: the image's layers by diff id, then the step's.
    const stack = stackOf(built.templateId)
    assert.deepEqual(stack.slice(0, 2), image.diffIds)
    assert.equal(stack.length, 3)
    const top = path.join(layersDir(), image.diffIds[1])
    assert.equal(JSON.parse(readFileSync(path.join(top, 'layer.json'), 'utf8')).origin, 'template-image')
    const wh = lstatSync(path.join(top, 'root', 'etc', 'issue'))
    assert.ok(wh.isCharacterDevice() && wh.rdev === 0 && wh.uid === 0, 'an overlay whiteout')
    const opaque = spawnSync('python3', ['-c', 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.overlay.opaque").decode())', path.join(top, 'root', 'etc', 'skel')], { encoding: 'utf8' })
    assert.equal(opaque.stdout, 'y\n', opaque.stderr)
    assert.ok(!existsSync(path.join(top, 'root', 'etc', 'skel', '.wh..wh..opq')))

    const sandbox = await Sandbox.create(`img-a-${uniq}`, { ...opts, timeoutMs: 120_000 })
    try {
      const r = await sandbox.commands.run('cat /opt/image/hello.txt; test -e /etc/issue && echo issue-present || echo issue-gone; ls -A /etc/skel; echo "$IMAGE_GREETING"; cat /tmp/start-pwd; stat -c "%U %a" /opt/image/hello.txt /usr/bin/sudo; id -un; pwd')
      // The image's WorkingDir is the sandbox's default workdir too.
      assert.equal(r.stdout, `hello from layer 2 ${uniq}\nissue-gone\nonly-this\nhi from the image config\n/opt/image\nroot 644\nroot 4755\nuser\n/opt/image\n`)
    } finally {
      await sandbox.kill()
    }
  })

  test('a second template from the same image downloads no blob and shares its layers', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const seen = registry.requests().length
    const { built, logs } = await build(Template().fromImage(`${registry.host}/e2bw/base-image:v1`).runCmd('echo second'), `img-b-${uniq}`)
    for (const id of image.diffIds) assert.match(logs, new RegExp(`^Layer ${id}: in the store already$`, 'm'))
    assert.doesNotMatch(logs, /unpacked/)
    const asked = registry.requests().slice(seen)
    assert.ok(asked.some((r) => r.startsWith('GET /v2/e2bw/base-image/manifests/v1')), asked.join('\n'))
    const blobs = (await layerDigests(registry, 'e2bw/base-image', 'v1')).map((l) => l.digest)
    assert.deepEqual(asked.filter((r) => blobs.some((d) => r.includes(d))), [], 'no layer blob fetched again')
    assert.deepEqual(stackOf(built.templateId).slice(0, 2), image.diffIds)
  })

  test('a Docker Hub name comes from --registry-mirror only, never from Docker Hub', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const seen = registry.requests().length
    await build(Template().fromImage('e2bw-hub:3.12').runCmd('cat /opt/image/hello.txt'), `img-hub-${uniq}`)
    assert.ok(registry.requests().slice(seen).includes('GET /v2/library/e2bw-hub/manifests/3.12'), registry.requests().slice(seen).join('\n'))
    // Not on the mirror: the build fails naming the mirror, with no second try.
    const msg = await failure(Template().fromImage('docker.io/library/e2bw-absent:1'), `img-absent-${uniq}`)
    assert.match(msg, new RegExp(`^cannot pull 'docker.io/library/e2bw-absent:1' from ${registry.host.replace(/\./g, '\\.')}: .*manifest unknown`, 'i'))
    assert.ok(registry.requests().includes('GET /v2/library/e2bw-absent/manifests/1'))
    // No mirror and Docker Hub off: refused before anything is asked of anyone.
    const bare = await startBackend()
    try {
      const o = { apiKey: bare.apiKey, apiUrl: bare.apiUrl, sandboxUrl: bare.sandboxUrl, debug: false }
      await assert.rejects(Template.build(Template().fromImage('python:3.12'), `img-nohub-${uniq}`, o),
        /'python:3.12' is a Docker Hub image and this backend pulls none from Docker Hub \(--no-docker-hub\) and has no --registry-mirror/)
    } finally {
      assert.equal((await bare.stop()).code, 0)
    }
  })

  test('registry credentials: the right ones pull, a wrong password fails without the secret, on no command line; AWS and GCP are refused', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const wrong = { username: CREDS.username, password: `wrong-${CREDS.password}` }
    // Every skopeo command line while the pulls run: none may hold a password.
    // The registry is reached through a proxy that looks at them on each
    // request, while the skopeo that sent it waits for the answer (a timer
    // alone can miss a short inspection), and a timer looks in between.
    const cmdlines = new Set()
    const [regHost, regPort] = privateRegistry.host.split(':')
    let via = ''
    const look = () => { for (const pid of skopeoFor(via)) try { cmdlines.add(readFileSync(`/proc/${pid}/cmdline`, 'utf8')) } catch {} }
    const proxy = http.createServer((req, res) => {
      look()
      const up = http.request({ host: regHost, port: Number(regPort), path: req.url, method: req.method, headers: { ...req.headers, host: privateRegistry.host } }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res) })
      up.on('error', () => res.destroy())
      req.pipe(up)
    })
    await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    via = `127.0.0.1:${proxy.address().port}`
    const ref = `${via}/private/img:v1`
    const watcher = setInterval(look, 2)
    let logs, msg
    try {
      await assert.rejects(Template.build(Template().fromImage(ref), `img-anon-${uniq}`, opts), /unauthorized|authentication required/i)
      ;({ logs } = await build(Template().fromImage(ref, CREDS).runCmd('cat /opt/image/hello.txt # private'), `img-private-${uniq}`))
      msg = await failure(Template().fromImage(ref, wrong), `img-wrong-${uniq}`)
    } finally {
      clearInterval(watcher)
      proxy.closeAllConnections()
      proxy.close()
    }
    assert.match(logs, new RegExp(`^hello from layer 2 ${uniq}$`, 'm'))
    assert.match(msg, new RegExp(`^cannot pull '${ref.replace(/\./g, '\\.')}' from .*(unauthorized|authentication required)`, 'i'))
    for (const secret of [CREDS.password, wrong.password]) {
      assert.ok(!msg.includes(secret) && !logs.includes(secret), 'a password in an error or a log')
      for (const c of cmdlines) assert.ok(!c.includes(secret), `a password on skopeo's command line: ${c}`)
    }
    assert.ok(cmdlines.size > 0, 'the watcher saw skopeo run')
    assert.ok(privateRegistry.log().includes('" 401 '), 'the registry refused the wrong password')
    // Nothing of the state directory holds them either.
    const grep = spawnSync('grep', ['-rlF', CREDS.password, stateDir], { encoding: 'utf8' })
    assert.equal(grep.stdout, '', 'a password in the state directory')
    // Registries the backend has no client for: a clear 400.
    const created = await api(backend, 'POST', '/v3/templates', { name: `img-aws-${uniq}` })
    for (const [reg, word] of [[{ type: 'aws', awsAccessKeyId: 'AKIA-X', awsSecretAccessKey: 'aws-SECRET-x', awsRegion: 'us-east-1' }, 'aws'], [{ type: 'gcp', serviceAccountJson: '{"private_key":"gcp-SECRET"}' }, 'gcp']]) {
      const res = await api(backend, 'POST', `/v2/templates/${created.json.templateID}/builds/${created.json.buildID}`, { fromImage: 'x.example/y:1', fromImageRegistry: reg, steps: [] })
      assert.equal(res.status, 400)
      assert.match(res.json.message, new RegExp(`fromImageRegistry of type '${word}' is not supported by this backend`))
      assert.doesNotMatch(res.json.message, /SECRET/)
    }
  })

  test('bad input: a missing image, another architecture, a garbage registry, a tampered blob, a malformed reference; nothing left', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    await tinyImage(work, registry, 'e2bw/arm:v1', 'arm', { architecture: 'arm64' })
    const tampered = await tinyImage(work, registry, 'e2bw/tamper:v1', `tamper ${uniq}`)
    const [{ digest }] = await layerDigests(registry, 'e2bw/tamper', 'v1')
    const fd = openSync(blobFile(registry, digest), 'r+')
    writeSync(fd, Buffer.from('XXXX'), 0, 4, 20)
    closeSync(fd)
    let garbageConnections = 0
    const garbage = net.createServer((s) => { garbageConnections++; s.on('error', () => {}); s.end('SSH-2.0-not-a-registry\r\n\x00\x01garbage\r\n\r\n') })
    await new Promise((resolve) => garbage.listen(0, '127.0.0.1', resolve))
    const before = layerIds()
    try {
      assert.match(await failure(Template().fromImage(`${registry.host}/e2bw/nope:v1`), `img-nope-${uniq}`), /manifest unknown/i)
      assert.match(await failure(Template().fromImage(`${registry.host}/e2bw/arm:v1`), `img-arm-${uniq}`), /is for linux\/arm64, not linux\/amd64/)
      const g = await failure(Template().fromImage(`127.0.0.1:${garbage.address().port}/x/y:1`), `img-garbage-${uniq}`)
      assert.match(g, new RegExp(`^cannot pull '127\\.0\\.0\\.1:${garbage.address().port}/x/y:1' from 127\\.0\\.0\\.1:${garbage.address().port}: `))
      assert.ok(garbageConnections > 0)
      assert.match(await failure(Template().fromImage(`${registry.host}/e2bw/tamper:v1`), `img-tamper-${uniq}`), /digest/i)
      assert.match(await failure(Template().fromImage('UPPER/Case:1'), `img-case-${uniq}`), /image reference 'UPPER\/Case:1': the repository must be lowercase/)
    } finally {
      garbage.close()
    }
    assert.ok(!layerIds().includes(tampered.diffIds[0]), 'no layer from the tampered blob')
    assert.deepEqual(layerIds(), before, 'no layer made by a failed pull')
    await until(() => leftovers().length === 0, () => `scratch directories left: ${leftovers()}`)
  })

  test('plugin: templates.build with a Dockerfile FROM a loopback registry image, then a sandbox of it', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const infra = await loadProvider(repo, { env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
    const name = `img-plugin-${uniq}`
    const built = await infra.call('templates.build', { name, dockerfile: `FROM ${registry.host}/e2bw/base-image:v1\nRUN cp /opt/image/hello.txt /opt/image/copy.txt && echo "$IMAGE_GREETING" >> /opt/image/copy.txt\n` })
    assert.equal(built.status, 'ready')
    const { sandbox_id } = await infra.call('sandbox.create', { template: name, timeout: 120 })
    try {
      const r = await infra.call('exec.run', { sandbox_id, command: 'cat /opt/image/copy.txt; test -e /etc/issue || echo issue-gone' })
      assert.equal(r.stdout, `hello from layer 2 ${uniq}\nhi from the image config\nissue-gone\n`)
    } finally {
      await infra.call('sandbox.kill', { sandbox_id })
    }
    await infra.call('templates.delete', { template_id: built.template_id })
    await assert.rejects(infra.call('templates.build', { name: `${name}-nope`, dockerfile: `FROM ${registry.host}/e2bw/nope:v1\n` }), (err) => {
      assert.equal(err.rpc && err.rpc.code, -32020, String(err))
      assert.equal(err.rpc.data.step, 'base')
      assert.match(err.rpc.message, /manifest unknown/i)
      return true
    })
  })

  test('a build stopped while it pulls (template deleted, then the backend killed): skopeo ends, nothing is left', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const slow = await tinyImage(work, registry, 'e2bw/slow:v1', `slow ${uniq}`)
    // A proxy to the registry that never answers a blob request.
    const stalled = []
    const [regHost, regPort] = registry.host.split(':')
    const proxy = http.createServer((req, res) => {
      if (req.method === 'GET' && slow.layerDigests.some((d) => req.url.includes(d))) {
        stalled.push(req.url)
        return
      }
      const up = http.request({ host: regHost, port: Number(regPort), path: req.url, method: req.method, headers: { ...req.headers, host: registry.host } }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res) })
      up.on('error', () => res.destroy())
      req.pipe(up)
    })
    await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const via = `127.0.0.1:${proxy.address().port}`
    const startPull = async (name) => {
      const created = await api(backend, 'POST', '/v3/templates', { name })
      const res = await api(backend, 'POST', `/v2/templates/${created.json.templateID}/builds/${created.json.buildID}`, { fromImage: `${via}/e2bw/slow:v1`, steps: [] })
      assert.equal(res.status, 202)
      return created.json
    }
    try {
      const before = layerIds()
      const first = await startPull(`img-slow-${uniq}`)
      await until(() => stalled.length > 0 && skopeoFor(via).length > 0, 'the pull to stall in skopeo copy', 60_000)
      assert.equal((await api(backend, 'DELETE', `/templates/${first.templateID}`)).status, 204)
      await until(() => skopeoFor(via).length === 0, 'skopeo to be stopped', 20_000)
      await until(() => leftovers().length === 0, () => `scratch directories left: ${leftovers()}`)
      assert.deepEqual(layerIds(), before)
      // Again, and the backend killed: skopeo dies with it, the next start cleans up.
      stalled.length = 0
      await startPull(`img-slow2-${uniq}`)
      await until(() => stalled.length > 0 && skopeoFor(via).length > 0, 'the second pull to stall', 60_000)
      assert.equal((await backend.stop('SIGKILL')).signal, 'SIGKILL')
      await until(() => skopeoFor(via).length === 0, 'skopeo to die with the backend', 20_000)
      await start()
      await until(() => leftovers().length === 0, () => `scratch directories left after a restart: ${leftovers()}`)
      assert.ok(!layerIds().includes(slow.diffIds[0]))
    } finally {
      proxy.closeAllConnections()
      proxy.close()
    }
  })
})
