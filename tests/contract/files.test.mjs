// Contract cases for files.rw and ports.url (seed 000's data
// contract: absolute paths literal, POSIX bits, owners by account name, typed
// failures), run in-process through the reference host and over stdio NDJSON
// against the real local backend. Extensions the host does not route yet
// (files.search / chmod / watch / unwatch / url) go through infra.raw. All
// traffic is validated against docs/epp-methods.json.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadProvider, startStdioProvider } from '../../host/reference/host.mjs'
import { startBackend } from '../../host/backend.mjs'
import { validateTraffic } from '../lib/epp-schema.mjs'
import { rejects } from '../lib/host-assert.mjs'
import { getLocalhostUrl } from '../lib/localhost-fetch.mjs'
import { until } from '../../host/wait.mjs'

const pluginDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const MODES = {
  'in-process': (opts) => loadProvider(pluginDir, opts), // message objects: long strings detached
  'in-process, JSON text': (opts) => loadProvider(pluginDir, { ...opts, form: 'text' }),
  stdio: (opts) => startStdioProvider(pluginDir, opts),
}
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')
const b64 = (bytes) => Buffer.from(bytes).toString('base64')

for (const [mode, start] of Object.entries(MODES)) {
  describe(`files contract (${mode})`, () => {
    let backend, infra, sid, canaryDir
    const events = []
    before(async () => {
      backend = await startBackend()
      infra = await start({ env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
      infra.onNotification((msg) => { if (msg.method.startsWith('files.')) events.push(msg) })
      sid = (await infra.sandbox_protocol.create({ timeout: 600 })).sandbox_id
      canaryDir = mkdtempSync(path.join(os.tmpdir(), 'e2bw-canary-'))
    })
    after(async () => {
      const problems = validateTraffic(infra.traffic)
      await infra.close()
      await backend.stop()
      rmSync(canaryDir, { recursive: true, force: true })
      assert.deepEqual(problems, [], 'traffic must match docs/epp-methods.json')
    })
    const call = (method, p) => infra.call(method, { sandbox_id: sid, ...p })
    const raw = (method, p) => infra.raw(method, { sandbox_id: sid, ...p })
    const sh = async (command, user = 'root') => {
      const r = await call('exec.run', { command, user })
      assert.equal(r.exit_code, 0, `${command}: ${r.stderr}`)
      return r.stdout
    }

    test('features: files.rw and ports.url are declared', () => {
      for (const f of ['files.rw', 'ports.url']) assert.ok(infra.features.includes(f), f)
    })

    test('file round trip: Unicode and spaces in path and content', async () => {
      const p = '/tmp/round trip/ünï €/hé llo 🌍.txt'
      const content = 'héllo wörld 🌍\nline two\twith tab\n'
      const entry = await call('files.write', { path: p, content })
      assert.equal(entry.path, p)
      assert.equal(entry.type, 'file')
      assert.equal(entry.size, Buffer.byteLength(content))
      const read = await call('files.read', { path: p })
      assert.equal(read.content, content)
      assert.equal(read.encoding, 'utf8')
      assert.equal(read.size, Buffer.byteLength(content))
      // the same bytes inside the sandbox
      assert.equal(await sh(`sha256sum '${p}' | cut -d' ' -f1`), sha256(Buffer.from(content)) + '\n')
    })

    test('binary: all 256 byte values, exact', async () => {
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
      await call('files.write', { path: '/tmp/all-bytes.bin', content: b64(bytes), encoding: 'base64' })
      const read = await call('files.read', { path: '/tmp/all-bytes.bin', encoding: 'base64' })
      assert.deepEqual(Buffer.from(read.content, 'base64'), bytes)
      assert.equal(await sh('sha256sum /tmp/all-bytes.bin | cut -d" " -f1'), sha256(bytes) + '\n')
      // ranges: any slice, exact
      const mid = await call('files.read', { path: '/tmp/all-bytes.bin', encoding: 'base64', offset: 100, length: 50 })
      assert.deepEqual(Buffer.from(mid.content, 'base64'), bytes.subarray(100, 150))
      assert.equal(mid.total_size, 256)
      // not UTF-8: text mode refuses rather than altering bytes
      await rejects(call('files.read', { path: '/tmp/all-bytes.bin' }), (err) => {
        assert.equal(err.rpc.code, -32602)
        assert.equal(err.rpc.data.field, 'encoding')
      })
    })

    test('encoding names as hosts write them: utf8 or UTF-8, base64 in any case; answers say utf8 or base64', async () => {
      for (const encoding of ['utf-8', 'UTF-8', 'Utf8']) {
        await call('files.write', { path: '/tmp/enc.txt', content: 'héllo', encoding })
        const read = await call('files.read', { path: '/tmp/enc.txt', encoding })
        assert.equal(read.content, 'héllo')
        assert.equal(read.encoding, 'utf8', 'the canonical name')
      }
      for (const encoding of ['BASE64', 'Base64']) {
        await call('files.write', { path: '/tmp/enc.bin', content: b64([0, 255, 10]), encoding })
        const read = await call('files.read', { path: '/tmp/enc.bin', encoding })
        assert.deepEqual(Buffer.from(read.content, 'base64'), Buffer.from([0, 255, 10]))
        assert.equal(read.encoding, 'base64')
      }
      await rejects(call('files.read', { path: '/tmp/enc.txt', encoding: 'latin1' }), (err) => {
        assert.equal(err.rpc.code, -32602)
        assert.equal(err.rpc.data.field, 'encoding')
      })
    })

    test('a 16 MiB file: refused whole (naming the limit), read exactly in ranges', async () => {
      await sh('head -c 16777216 /dev/urandom > /tmp/big.bin')
      const want = (await sh('sha256sum /tmp/big.bin | cut -d" " -f1')).trim()
      await rejects(call('files.read', { path: '/tmp/big.bin', encoding: 'base64' }), (err) => {
        assert.equal(err.rpc.data.kind, 'too_large')
        assert.match(err.rpc.message, /offset\/length/)
        assert.equal(typeof err.rpc.data.limit, 'number')
      })
      const hash = createHash('sha256')
      const piece = 4 << 20
      for (let offset = 0; offset < 16 << 20; offset += piece) {
        const r = await call('files.read', { path: '/tmp/big.bin', encoding: 'base64', offset, length: piece })
        assert.equal(r.size, piece)
        assert.equal(r.total_size, 16 << 20)
        hash.update(Buffer.from(r.content, 'base64'))
      }
      assert.equal(hash.digest('hex'), want)
      // and written: 12 MB in one message, exact inside the sandbox
      const big = Buffer.alloc(12_000_000, 0)
      for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) & 0xff
      await call('files.write', { path: '/tmp/big-written.bin', content: b64(big), encoding: 'base64' })
      assert.equal((await sh('sha256sum /tmp/big-written.bin | cut -d" " -f1')).trim(), sha256(big))
    })

    test('files.write is read by exec.run cat, and the reverse', async () => {
      await call('files.write', { path: '/home/user/from-files.txt', content: 'written by files.write\n' })
      assert.equal(await sh('cat /home/user/from-files.txt'), 'written by files.write\n')
      await sh("printf 'written by a command\\n' > /tmp/from-cmd.txt")
      assert.equal((await call('files.read', { path: '/tmp/from-cmd.txt' })).content, 'written by a command\n')
    })

    // envd keeps a file's metadata as user.e2b.* xattrs and an upload replaces
    // it; files.write sends none, so an overwrite leaves none, as on E2B.
    test('files.write over a file with metadata leaves no metadata', async () => {
      const p = '/home/user/tagged.txt'
      const xattrs = `python3 -c "import os; print(sorted(os.listxattr('${p}')))"`
      await call('files.write', { path: p, content: 'one' })
      await sh(`python3 -c "import os; os.setxattr('${p}', 'user.e2b.owner', b'blue')"`)
      assert.equal(await sh(xattrs), "['user.e2b.owner']\n")
      await call('files.write', { path: p, content: 'two' })
      assert.equal(await sh(xattrs), '[]\n')
      assert.equal((await call('files.read', { path: p })).content, 'two')
    })

    test('directory operations: mkdir (parents, exists is fine), list with depth, move, remove', async () => {
      const made = await call('files.mkdir', { path: '/tmp/dirs/a/b' })
      assert.equal(made.created, true)
      assert.equal(made.entry.type, 'dir')
      const again = await call('files.mkdir', { path: '/tmp/dirs/a/b' })
      assert.equal(again.created, false)
      await call('files.write', { path: '/tmp/dirs/a/one.txt', content: '1' })
      const top = await call('files.list', { path: '/tmp/dirs' })
      assert.deepEqual(top.entries.map((e) => e.name), ['a'])
      const deep = await call('files.list', { path: '/tmp/dirs', depth: 3 })
      assert.deepEqual(deep.entries.map((e) => e.path).sort(), ['/tmp/dirs/a', '/tmp/dirs/a/b', '/tmp/dirs/a/one.txt'])
      const moved = await call('files.move', { source: '/tmp/dirs/a/one.txt', destination: '/tmp/dirs/moved/two.txt' })
      assert.equal(moved.path, '/tmp/dirs/moved/two.txt')
      assert.equal((await call('files.read', { path: '/tmp/dirs/moved/two.txt' })).content, '1')
      const found = await raw('files.search', { path: '/tmp/dirs', pattern: '*.txt' })
      assert.deepEqual(found.entries.map((e) => e.path), ['/tmp/dirs/moved/two.txt'])
      assert.equal(found.truncated, false)
      await call('files.remove', { path: '/tmp/dirs' })
      assert.deepEqual(await call('files.remove', { path: '/tmp/dirs' }), {}) // gone already: still fine
      assert.equal(await sh('test -e /tmp/dirs && echo there || echo gone'), 'gone\n')
    })

    test('typed failures: not found (-32002, E2001), is a directory, not a directory, bad paths', async () => {
      for (const [method, p] of [['files.read', { path: '/nope/missing.txt' }], ['files.stat', { path: '/nope' }], ['files.list', { path: '/nope' }]]) {
        await rejects(call(method, p), (err) => {
          assert.equal(err.rpc.code, -32002, method)
          assert.equal(err.rpc.data.sdk_code, 'E2001')
          assert.equal(err.code, 'E2001')
        })
      }
      await rejects(call('files.read', { path: '/tmp' }), (err) => assert.equal(err.rpc.data.kind, 'is_directory'))
      await rejects(call('files.list', { path: '/etc/hostname' }), (err) => assert.equal(err.rpc.data.kind, 'not_directory'))
      for (const bad of ['relative/path', '', '/a\u0000b']) {
        await rejects(call('files.stat', { path: bad }), (err) => assert.equal(err.rpc.code, -32602))
      }
      await rejects(call('files.write', { path: '/tmp/x', content: 'not base64!', encoding: 'base64' }), (err) => assert.equal(err.rpc.data.field, 'content'))
    })

    test('ownership: a file written as user is owned by user; chmod 0o640 to agent is what stat shows inside', async () => {
      await call('files.write', { path: '/home/user/mine.txt', content: 'x', user: 'user' })
      assert.equal(await sh('stat -c %U:%G /home/user/mine.txt'), 'user:user\n')
      await sh('id agent >/dev/null 2>&1 || useradd --user-group agent')
      const entry = await raw('files.chmod', { path: '/home/user/mine.txt', mode: 0o640, owner: 'agent', group: 'agent' })
      assert.equal(entry.mode, 0o640)
      assert.equal(entry.owner, 'agent')
      assert.equal(entry.group, 'agent')
      assert.equal(entry.permissions, '-rw-r-----')
      assert.equal(await sh('stat -c "%a %U %G" /home/user/mine.txt'), '640 agent agent\n')
      // mode and owner in the same files.write
      const written = await call('files.write', { path: '/tmp/secret.txt', content: 's', mode: 0o600, owner: 'agent', group: 'agent' })
      assert.equal(written.mode, 0o600)
      assert.equal(await sh('stat -c "%a %U %G" /tmp/secret.txt'), '600 agent agent\n')
      await rejects(raw('files.chmod', { path: '/tmp/secret.txt', owner: 'no-such-account' }), (err) => assert.equal(err.rpc.data.field, 'owner'))
    })

    // envd does file work as root, as E2B's does: `user` decides whose a new
    // file is, not whether the call may touch the path (docs/files.md says so).
    test('user names the owner, not a permission: files.write /root/y as user succeeds and is user\'s', async () => {
      assert.equal(await sh('stat -c "%a %U" /root', 'root'), '700 root\n')
      await call('files.write', { path: '/root/y', content: 'written as user', user: 'user' })
      assert.equal(await sh('cat /root/y; stat -c " %U:%G" /root/y'), 'written as user user:user\n')
      assert.equal((await call('files.read', { path: '/root/y', user: 'user' })).content, 'written as user')
      const r = await call('exec.run', { command: 'cat /root/y', user: 'user' })
      assert.match(r.stderr, /Permission denied/, 'while a command as user is refused')
      const doc = readFileSync(path.join(pluginDir, 'docs', 'files.md'), 'utf8')
      assert.doesNotMatch(doc, /its permissions apply/)
      assert.match(doc, /`files\.write\('\/root\/y'\)` as `user` succeeds/)
    })

    test('a symlink to / or ../../.. does not reach a host canary', async () => {
      const canary = path.join(canaryDir, 'canary.txt')
      writeFileSync(canary, 'HOST-CANARY-SECRET')
      await sh('ln -sfn / /tmp/to-root && mkdir -p /tmp/x/y && ln -sfn ../../.. /tmp/x/y/up')
      for (const p of [`/tmp/to-root${canary}`, `/tmp/x/y/up${canary}`, `/tmp/x/y/up/../../..${canary}`]) {
        try {
          const r = await call('files.read', { path: p })
          assert.ok(!r.content.includes('HOST-CANARY'), `read the host canary through ${p}`)
        } catch (err) {
          assert.equal(err.rpc.code, -32002, `${p}: ${err.message}`)
        }
      }
    })

    test('signed URL: plain fetch downloads and uploads, refused after expiry', async () => {
      await call('files.write', { path: '/tmp/shared.txt', content: 'via a link' })
      const down = await raw('files.url', { path: '/tmp/shared.txt', operation: 'read', expires_in: 600 })
      assert.equal(down.method, 'GET')
      assert.ok(Date.parse(down.expires_at) > Date.now())
      const res = await fetch(down.url)
      assert.equal(res.status, 200)
      assert.equal(await res.text(), 'via a link')
      const up = await raw('files.url', { path: '/tmp/uploaded.txt', operation: 'write', expires_in: 600 })
      const put = await fetch(up.url, { method: up.method, headers: { 'content-type': 'application/octet-stream' }, body: 'sent by fetch' })
      assert.equal(put.status, 200, await put.text())
      assert.equal((await call('files.read', { path: '/tmp/uploaded.txt' })).content, 'sent by fetch')
      // a link for another path or operation does not verify
      assert.equal((await fetch(down.url.replace('shared', 'shadow'))).status, 401)
      const short = await raw('files.url', { path: '/tmp/shared.txt', operation: 'read', expires_in: 1 })
      await until(async () => (await fetch(short.url)).status === 401, 'the short link expires', 10000, 200)
    })

    test('files.watch reports a file created by a command; unwatch ends it exactly once', async () => {
      await call('files.mkdir', { path: '/tmp/watched' })
      const { watch_id } = await raw('files.watch', { path: '/tmp/watched' })
      await sh('touch /tmp/watched/new-file.txt')
      const ev = await until(() => events.find((m) => m.method === 'files.event' && m.params.watch_id === watch_id && m.params.name === 'new-file.txt'), 'files.event for new-file.txt')
      assert.equal(ev.params.type, 'create')
      assert.equal(ev.params.path, '/tmp/watched/new-file.txt')
      assert.deepEqual(await raw('files.unwatch', { watch_id }), {})
      const ends = events.filter((m) => m.method === 'files.watch_end' && m.params.watch_id === watch_id)
      assert.equal(ends.length, 1)
      assert.equal(ends[0].params.reason, 'cancelled')
      // the host's own id of the files.watch request, whatever form it talks in
      const watchId = infra.traffic.find((t) => t.dir === 'out' && t.msg.method === 'files.watch' && t.msg.params.path === '/tmp/watched').msg.id
      for (const m of [ev, ends[0]]) assert.equal(m.params.request_id, watchId, `${m.method} carries the watch request's id`)
      await rejects(raw('files.unwatch', { watch_id }), (err) => assert.equal(err.rpc.code, -32002))
    })

    test('ports.url reaches an HTTP server started with exec.start; two sandboxes answer their own', async () => {
      const other = (await infra.sandbox_protocol.create({ timeout: 600 })).sandbox_id
      for (const [id, text] of [[sid, 'first'], [other, 'second']]) {
        const r = await infra.call('exec.run', { sandbox_id: id, command: `mkdir -p /tmp/www && echo ${text} > /tmp/www/index.html`, user: 'root' })
        assert.equal(r.exit_code, 0)
        await infra.call('exec.start', { sandbox_id: id, command: 'cd /tmp/www && exec python3 -m http.server 8123 --bind 127.0.0.1', user: 'root' })
      }
      for (const [id, text] of [[sid, 'first'], [other, 'second']]) {
        const where = await infra.call('ports.url', { sandbox_id: id, port: 8123 })
        // The local backend's domain is localhost:<envd port>, whose names
        // Node does not resolve: sandbox_url with E2B's routing headers,
        // which plain fetch reaches; the host name beside it (browsers, curl).
        assert.equal(where.url, backend.sandboxUrl)
        assert.deepEqual(where.headers, { 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': '8123' })
        assert.equal(new URL(where.host_url).host, `8123-${id}.${backend.domain}`)
        const body = await until(async () => {
          try {
            const res = await fetch(`${where.url}/index.html`, { headers: where.headers })
            return res.status === 200 ? await res.text() : null
          } catch { return null }
        }, `the server in ${id} answers`)
        assert.equal(body, `${text}\n`)
        const byHost = await getLocalhostUrl(`${where.host_url}/index.html`)
        assert.deepEqual([byHost.status, byHost.body], [200, `${text}\n`])
      }
      await infra.sandbox_protocol.kill(other)
    })
  })
}
