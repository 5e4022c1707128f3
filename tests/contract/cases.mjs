// cases.mjs — the 18 contract cases of `abx provider test` (seed 003 §3), the
// cases of templates.build, sandbox.metrics and code.* (ours), and their runner, as
// one environment-neutral ES module: no Node API, so the same file runs from the command line
// (tests/contract/suite.mjs) and inside a browser page
// (tests/browser/run-suite.mjs). STABLE API — keep it so:
//
//   import { CASES, KNOWN_FEATURES, runCases } from './cases.mjs'
//
//   const report = await runCases({
//     client,            // an EPP client (below)
//     doc,               // parsed docs/epp-methods.json: every message is checked against it
//     openClient,        // optional async ({ api_key }) => client with other config (secrets case);
//                        //   the runner closes it again with client.close()
//     only,              // optional list of case names to run (default: all)
//     created,           // optional Set: ids of sandboxes created and not yet killed (for Ctrl-C)
//     onRow,             // optional (row) => void, called as each case ends
//     caseTimeoutMs,     // optional, default 90000: a case that takes longer fails
//     template,          // optional template for sandbox.create (default: the backend's default)
//   })
//   // report = { rows, passed, failed, skipped, problems }
//   //   row = { case, features, status: 'passed'|'failed'|'skipped', ms, error }
//   A case may take longer than caseTimeoutMs when it says so (its timeoutMs).
//   //   error: null, the failure message, or the reason for a skip
//   //   problems: schema problems found after the last case (also counted as failures)
//
// The client is what a host makes of a provider (the reference host's infra in
// host/reference/host.mjs, or createEppClient in ./epp-client.mjs):
//   client.call(method, params)  → Promise<result>; gated by the declared features: an
//                                  undeclared one rejects with code 'E8004' and rpc null
//   client.raw(method, params)   → optional: the same, ungated (asks the plugin itself)
//   client.onNotification(fn)    → fn({ method, params }) for every notification
//   client.features              → the usable features (declared ∩ offered by initialize)
//   client.declared, client.offered, client.initializeResult
//   client.traffic               → array of { dir: 'out'|'in', msg } (or { dir, garbage })
//   client.secrets               → strings that must never appear in anything the plugin says
//   Rejections carry err.code (the SDK code, e.g. 'E2009') and err.rpc (the raw EPP
//   error object, or null when the host answered).
//
// A case whose features are not all usable is skipped, never failed. Sandboxes a
// case creates are killed when it ends, pass or fail; the shared sandbox of the
// exec cases is killed when the run ends.
import { createTrafficChecker } from '../lib/epp-traffic.mjs'

/** The seed's features (§2; templates.build from its create flow) and one
 *  method of each, for the E8004 case. */
export const KNOWN_FEATURES = Object.freeze({
  'sandbox.lifecycle': 'sandbox.get',
  'sandbox.timeout': 'sandbox.set_timeout',
  'sandbox.pause': 'sandbox.pause',
  'exec.run': 'exec.run',
  'exec.stream': 'exec.start',
  'process.manage': 'process.list',
  'files.rw': 'files.read',
  'ports.url': 'ports.url',
  'templates.build': 'templates.get',
})

class CaseFailure extends Error {}
class CaseSkip extends Error {}

const canon = (v) => {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`
  return JSON.stringify(v)
}
const show = (v) => { const s = JSON.stringify(v); return s === undefined ? String(v) : s.length > 160 ? s.slice(0, 157) + '...' : s }
const seconds = (iso) => Date.parse(iso) / 1000
const nowS = () => Date.now() / 1000
const utf8Length = (s) => new TextEncoder().encode(s).length
const randomTag = () => Math.random().toString(36).slice(2, 10)

// ---- assertions (no node:assert: this runs in a page too) -----------------
const expect = {
  ok(cond, what) { if (!cond) throw new CaseFailure(what) },
  equal(actual, want, what) { if (actual !== want) throw new CaseFailure(`${what}: expected ${show(want)}, got ${show(actual)}`) },
  deepEqual(actual, want, what) { if (canon(actual) !== canon(want)) throw new CaseFailure(`${what}: expected ${show(want)}, got ${show(actual)}`) },
  match(text, re, what) { if (typeof text !== 'string' || !re.test(text)) throw new CaseFailure(`${what}: ${show(text)} does not match ${re}`) },
  /** Awaits a call that must fail; check(err) inspects it; returns err. */
  async rejects(promise, what, check) {
    let result
    try {
      result = await promise
    } catch (err) {
      if (err instanceof CaseFailure) throw err
      if (check) check(err)
      return err
    }
    throw new CaseFailure(`${what}: expected an error, got ${show(result)}`)
  },
}

// ---- the cases ------------------------------------------------------------
// Each: { name, features: [...], run(t), timeoutMs? }. t is the case context (makeContext).

export const CASES = [
  {
    name: 'declared features all known',
    features: [],
    async run(t) {
      const known = Object.keys(KNOWN_FEATURES)
      for (const f of t.client.declared) expect.ok(known.includes(f), `declared feature '${f}' is not one the seed defines`)
      expect.deepEqual([...t.client.offered].sort(), [...t.client.declared].sort(), 'initialize offers exactly the declared features')
      const init = t.client.initializeResult
      expect.equal(init.protocol, 'epp/1', 'initialize protocol')
      expect.ok(init.provider && typeof init.provider.id === 'string', 'initialize names the provider')
    },
  },
  {
    name: 'lifecycle: create, get, list, connect, kill',
    features: ['sandbox.lifecycle'],
    async run(t) {
      const tag = randomTag()
      const rec = await t.createSandbox({ timeout: 300, metadata: { 'abx-contract-case': tag } })
      expect.match(rec.sandbox_id, /^[A-Za-z0-9_-]+$/, 'sandbox id')
      expect.equal(rec.status, 'running', 'status after create')
      expect.deepEqual(rec.metadata, { ...t.metadata, 'abx-contract-case': tag }, 'metadata after create')
      const got = await t.call('sandbox.get', { sandbox_id: rec.sandbox_id })
      expect.equal(got.sandbox_id, rec.sandbox_id, 'sandbox.get id')
      expect.equal(got.status, 'running', 'sandbox.get status')
      expect.ok(Math.abs(seconds(got.expires_at) - nowS() - 300) <= 30, `expires_at ${got.expires_at} is about 300 s away`)
      const listed = await t.call('sandbox.list', { metadata: { 'abx-contract-case': tag } })
      expect.deepEqual(listed.sandboxes.map((s) => s.sandbox_id), [rec.sandbox_id], 'sandbox.list by metadata')
      const connected = await t.call('sandbox.connect', { sandbox_id: rec.sandbox_id })
      expect.equal(connected.status, 'running', 'sandbox.connect status')
      expect.deepEqual(await t.kill(rec.sandbox_id), { sandbox_id: rec.sandbox_id, killed: true }, 'sandbox.kill')
      const after = await t.call('sandbox.list', { metadata: { 'abx-contract-case': tag } })
      expect.deepEqual(after.sandboxes, [], 'sandbox.list after kill')
    },
  },
  {
    name: 'kill is idempotent',
    features: ['sandbox.lifecycle'],
    async run(t) {
      const { sandbox_id } = await t.createSandbox({ timeout: 120 })
      expect.deepEqual(await t.kill(sandbox_id), { sandbox_id, killed: true }, 'first kill')
      const again = await t.call('sandbox.kill', { sandbox_id })
      expect.deepEqual(again, { sandbox_id, killed: false }, 'killing twice is not an error')
    },
  },
  {
    name: 'timeout: set_timeout moves expires_at',
    features: ['sandbox.lifecycle', 'sandbox.timeout'],
    async run(t) {
      const { sandbox_id } = await t.createSandbox({ timeout: 60 })
      const before = nowS()
      const r = await t.call('sandbox.set_timeout', { sandbox_id, timeout: 600 })
      expect.deepEqual(r, { sandbox_id, timeout: 600 }, 'sandbox.set_timeout result')
      const got = await t.call('sandbox.get', { sandbox_id })
      expect.ok(Math.abs(seconds(got.expires_at) - (before + 600)) <= 30, `expires_at ${got.expires_at} is about 600 s away`)
    },
  },
  {
    name: 'pause and resume',
    features: ['sandbox.lifecycle', 'sandbox.pause'],
    async run(t) {
      const { sandbox_id } = await t.createSandbox({ timeout: 300 })
      expect.deepEqual(await t.call('sandbox.pause', { sandbox_id }), { sandbox_id, status: 'paused', changed: true }, 'pause')
      expect.equal((await t.call('sandbox.get', { sandbox_id })).status, 'paused', 'status while paused')
      expect.deepEqual(await t.call('sandbox.pause', { sandbox_id }), { sandbox_id, status: 'paused', changed: false }, 'pausing twice')
      expect.equal((await t.call('sandbox.resume', { sandbox_id })).status, 'running', 'resume')
      expect.equal((await t.call('sandbox.get', { sandbox_id })).status, 'running', 'status after resume')
    },
  },
  {
    name: 'exec: exit code is data',
    features: ['sandbox.lifecycle', 'exec.run'],
    async run(t) {
      const sid = await t.sandbox()
      const ok = await t.call('exec.run', { sandbox_id: sid, command: 'true' })
      expect.equal(ok.exit_code, 0, 'exit code of true')
      expect.equal(ok.error, null, 'error of true')
      const three = await t.call('exec.run', { sandbox_id: sid, command: 'exit 3' })
      expect.equal(three.exit_code, 3, 'exit code of exit 3')
      const missing = await t.call('exec.run', { sandbox_id: sid, command: 'no-such-command-abx-contract' })
      expect.equal(missing.exit_code, 127, 'exit code of a missing command')
    },
  },
  {
    name: 'exec: stderr apart from stdout',
    features: ['sandbox.lifecycle', 'exec.run'],
    async run(t) {
      const sid = await t.sandbox()
      const r = await t.call('exec.run', { sandbox_id: sid, command: 'echo out; echo err >&2; echo out2' })
      expect.equal(r.stdout, 'out\nout2\n', 'stdout')
      expect.equal(r.stderr, 'err\n', 'stderr')
      expect.equal(r.exit_code, 0, 'exit code')
    },
  },
  {
    name: 'exec: environment and cwd',
    features: ['sandbox.lifecycle', 'exec.run'],
    async run(t) {
      const sid = await t.sandbox()
      const r = await t.call('exec.run', { sandbox_id: sid, command: 'echo "$ABX_A|$ABX_B"; pwd', envs: { ABX_A: 'one', ABX_B: 'two words é' }, cwd: '/tmp' })
      expect.equal(r.stdout, 'one|two words é\n/tmp\n', 'envs and cwd reach the process')
      const plain = await t.call('exec.run', { sandbox_id: sid, command: 'echo "[$ABX_A]"' })
      expect.equal(plain.stdout, '[]\n', 'envs of one call do not leak into the next')
    },
  },
  {
    name: 'exec: streaming order',
    features: ['sandbox.lifecycle', 'exec.stream'],
    async run(t) {
      const sid = await t.sandbox()
      const watch = t.follow()
      const { pid } = await t.call('exec.start', { sandbox_id: sid, command: 'for i in 1 2 3 4 5; do echo line$i; echo err$i >&2; sleep 0.05; done; exit 7' })
      const exit = await watch.exit(pid)
      const f = watch.of(pid)
      expect.equal(f.order.filter((x) => x === 'exit').length, 1, 'exactly one exec.exit')
      expect.equal(f.order.at(-1), 'exit', 'exec.exit comes last')
      expect.equal(watch.text(pid, 'stdout'), 'line1\nline2\nline3\nline4\nline5\n', 'stdout in order')
      expect.equal(watch.text(pid, 'stderr'), 'err1\nerr2\nerr3\nerr4\nerr5\n', 'stderr in order')
      const next = {}
      for (const o of f.outputs) {
        expect.equal(o.offset, next[o.stream] || 0, `offset of a ${o.stream} chunk`)
        next[o.stream] = o.offset + o.length
      }
      expect.equal(exit.exit_code, 7, 'exit code in exec.exit')
    },
  },
  {
    name: 'exec: timeout',
    features: ['sandbox.lifecycle', 'exec.run'],
    async run(t) {
      const sid = await t.sandbox()
      const marker = `abx-contract-timeout-${randomTag()}`
      await expect.rejects(t.call('exec.run', { sandbox_id: sid, command: `sleep 30 # ${marker}`, timeout: 1 }), 'exec.run past its timeout', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32013, 'error code')
        expect.equal(err.rpc.data.kind, 'timeout', 'error kind')
      })
      if (!t.has('process.manage')) return
      await t.waitFor(async () => {
        const { processes } = await t.call('process.list', { sandbox_id: sid })
        return !processes.some((p) => p.args.join(' ').includes(marker))
      }, 'the timed-out process to be gone')
    },
  },
  {
    name: 'process list',
    features: ['sandbox.lifecycle', 'exec.stream', 'process.manage'],
    async run(t) {
      const sid = await t.sandbox()
      const watch = t.follow()
      const tag = `abx-contract-${randomTag()}`
      const { pid } = await t.call('exec.start', { sandbox_id: sid, command: 'sleep 60', tag })
      const { processes } = await t.call('process.list', { sandbox_id: sid })
      const mine = processes.find((p) => p.pid === pid)
      expect.ok(mine, `the started process ${pid} is listed`)
      expect.equal(mine.tag, tag, 'tag')
      await t.call('process.kill', { sandbox_id: sid, pid })
      const exit = await watch.exit(pid)
      expect.equal(exit.signal, 'SIGKILL', 'killed by SIGKILL')
      const later = await t.call('process.list', { sandbox_id: sid })
      expect.ok(!later.processes.some((p) => p.pid === pid), 'a killed process is no longer listed')
    },
  },
  {
    name: 'files: round trip',
    features: ['sandbox.lifecycle', 'files.rw'],
    async run(t) {
      const sid = await t.sandbox()
      const path = `/tmp/abx-contract-${randomTag()}/note.txt`
      const content = 'first line\nsecond line\n'
      const entry = await t.call('files.write', { sandbox_id: sid, path, content })
      expect.equal(entry.path, path, 'written entry path')
      expect.equal(entry.type, 'file', 'written entry type')
      expect.equal(entry.size, utf8Length(content), 'written entry size')
      const read = await t.call('files.read', { sandbox_id: sid, path })
      expect.equal(read.content, content, 'content read back')
      const stat = await t.call('files.stat', { sandbox_id: sid, path })
      expect.equal(stat.size, utf8Length(content), 'stat size')
      expect.equal(stat.name, 'note.txt', 'stat name')
      const over = await t.call('files.write', { sandbox_id: sid, path, content: 'replaced' })
      expect.equal(over.size, 8, 'overwrite size')
      expect.equal((await t.call('files.read', { sandbox_id: sid, path })).content, 'replaced', 'overwritten content')
    },
  },
  {
    name: 'files: binary and Unicode',
    features: ['sandbox.lifecycle', 'files.rw'],
    async run(t) {
      const sid = await t.sandbox()
      const dir = `/tmp/abx-contract-${randomTag()}`
      const all = new Uint8Array(256).map((_, i) => i)
      const b64 = btoa(String.fromCharCode(...all))
      const bin = await t.call('files.write', { sandbox_id: sid, path: `${dir}/all-bytes.bin`, content: b64, encoding: 'base64' })
      expect.equal(bin.size, 256, 'binary file size')
      const back = await t.call('files.read', { sandbox_id: sid, path: `${dir}/all-bytes.bin`, encoding: 'base64' })
      expect.equal(back.encoding, 'base64', 'encoding of the answer')
      expect.equal(back.content, b64, 'every byte value survives the round trip')
      const name = 'ünïcödé 日本 🎉.txt'
      const text = 'héllo ✓ 日本語 🎉\n'
      const u = await t.call('files.write', { sandbox_id: sid, path: `${dir}/${name}`, content: text })
      expect.equal(u.name, name, 'Unicode file name')
      expect.equal(u.size, utf8Length(text), 'size in UTF-8 bytes')
      expect.equal((await t.call('files.read', { sandbox_id: sid, path: `${dir}/${name}` })).content, text, 'Unicode content')
      const { entries } = await t.call('files.list', { sandbox_id: sid, path: dir })
      expect.deepEqual(entries.map((e) => e.name).sort(), ['all-bytes.bin', name].sort(), 'listed names')
    },
  },
  {
    name: 'files: directory operations',
    features: ['sandbox.lifecycle', 'files.rw'],
    async run(t) {
      const sid = await t.sandbox()
      const base = `/tmp/abx-contract-${randomTag()}`
      const made = await t.call('files.mkdir', { sandbox_id: sid, path: base })
      expect.equal(made.created, true, 'mkdir creates')
      expect.equal(made.entry.type, 'dir', 'mkdir entry type')
      expect.equal((await t.call('files.mkdir', { sandbox_id: sid, path: base })).created, false, 'mkdir of an existing directory')
      await t.call('files.mkdir', { sandbox_id: sid, path: `${base}/sub` })
      await t.call('files.write', { sandbox_id: sid, path: `${base}/a.txt`, content: 'a' })
      const listed = await t.call('files.list', { sandbox_id: sid, path: base })
      expect.deepEqual(listed.entries.map((e) => `${e.name}:${e.type}`).sort(), ['a.txt:file', 'sub:dir'], 'list')
      const moved = await t.call('files.move', { sandbox_id: sid, source: `${base}/a.txt`, destination: `${base}/sub/b.txt` })
      expect.equal(moved.path, `${base}/sub/b.txt`, 'move answers the destination entry')
      expect.deepEqual((await t.call('files.list', { sandbox_id: sid, path: `${base}/sub` })).entries.map((e) => e.name), ['b.txt'], 'moved file listed')
      expect.deepEqual(await t.call('files.remove', { sandbox_id: sid, path: `${base}/sub` }), {}, 'remove a directory')
      expect.deepEqual((await t.call('files.list', { sandbox_id: sid, path: base })).entries, [], 'list after remove')
      await t.call('files.remove', { sandbox_id: sid, path: base })
      await expect.rejects(t.call('files.stat', { sandbox_id: sid, path: base }), 'stat of a removed directory', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
      })
    },
  },
  {
    name: 'typed not-found',
    features: ['sandbox.lifecycle'],
    async run(t) {
      // Sandboxes always; files and processes when those features are declared.
      await expect.rejects(t.call('sandbox.get', { sandbox_id: 'abxcontractmissing0' }), 'sandbox.get of a missing sandbox', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
        expect.equal(err.rpc.data.sdk_code, 'E2009', 'data.sdk_code')
        expect.equal(err.code, 'E2009', 'SDK code the host shows')
      })
      if (t.has('files.rw')) {
        const sid = await t.sandbox()
        await expect.rejects(t.call('files.read', { sandbox_id: sid, path: `/tmp/abx-contract-missing-${randomTag()}` }), 'files.read of a missing file', (err) => {
          expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
          expect.match(err.rpc.data.sdk_code, /^E\d{4}$/, 'data.sdk_code')
          expect.equal(err.code, err.rpc.data.sdk_code, 'SDK code the host shows')
        })
      }
      if (t.has('process.manage') && t.has('exec.stream')) {
        const sid = await t.sandbox()
        await expect.rejects(t.call('process.kill', { sandbox_id: sid, pid: 4000000 }), 'process.kill of an unknown pid', (err) => {
          expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
        })
      }
    },
  },
  {
    name: 'ports',
    features: ['sandbox.lifecycle', 'ports.url'],
    async run(t) {
      // A sandbox whose ports are private (E2B's network.allowPublicTraffic
      // false): ports.url must name the header with its traffic token.
      const { sandbox_id: sid } = await t.createSandbox({ timeout: 120, options: { network: { allowPublicTraffic: false } } })
      const r = await t.call('ports.url', { sandbox_id: sid, port: 8080 })
      const url = new URL(r.url)
      expect.ok(url.protocol === 'http:' || url.protocol === 'https:', `ports.url gives an http(s) URL: ${r.url}`)
      expect.ok(r.headers && typeof r.headers === 'object', 'headers object')
      for (const v of Object.values(r.headers)) expect.equal(typeof v, 'string', 'header values are strings')
      const byName = url.hostname.startsWith(`8080-${sid}.`)
      const routed = byName || r.headers['E2b-Sandbox-Port'] === '8080'
      expect.ok(routed, `the port is in the host name (<port>-<id>.<domain>) or in E2b-Sandbox-Port: ${show(r)}`)
      if (r.headers['E2b-Sandbox-Id'] !== undefined) expect.equal(r.headers['E2b-Sandbox-Id'], sid, 'E2b-Sandbox-Id header')
      const token = r.headers['e2b-traffic-access-token']
      expect.ok(typeof token === 'string' && token.length >= 16, 'the e2b-traffic-access-token header of a sandbox created with allowPublicTraffic: false')
      // Any host must be able to use it: a *.localhost name resolves in
      // browsers and curl but not in Node or glibc (and asking the system's
      // resolver would send the name off the machine), so it may only be
      // offered beside, as host_url.
      expect.ok(!/(^|\.)localhost$/i.test(url.hostname), `a URL any host resolves, not a *.localhost name: ${r.url}`)
      if (r.host_url !== undefined) expect.ok(new URL(r.host_url).hostname.startsWith(`8080-${sid}.`), `host_url names the port and sandbox: ${r.host_url}`)
      // And it reaches the port: a server started in the sandbox answers
      // through it. A page's fetch cannot send these headers to a server
      // that allows no CORS, so this part runs outside browsers.
      if (t.has('exec.run') && typeof document === 'undefined') {
        const tag = randomTag()
        const started = await t.call('exec.run', {
          sandbox_id: sid,
          command: `mkdir -p /tmp/abx-ports && echo ${tag} > /tmp/abx-ports/index.html && cd /tmp/abx-ports && (python3 -m http.server 8080 >/dev/null 2>&1 &)`,
        })
        expect.equal(started.exit_code, 0, `starting python3 -m http.server 8080: ${show(started)}`)
        let last = null
        for (const end = Date.now() + 30000; ;) {
          try {
            const res = await fetch(`${r.url}/index.html`, { headers: r.headers })
            last = `${res.status} ${await res.text()}`
            if (res.status === 200 && last.endsWith(`${tag}\n`)) break
          } catch (err) {
            last = String(err && (err.cause || err))
          }
          if (Date.now() > end) throw new CaseFailure(`the server on port 8080 did not answer through ports.url: ${last}`)
          await sleep(100)
        }
      }
      await expect.rejects(t.call('ports.url', { sandbox_id: sid, port: 70000 }), 'ports.url of port 70000', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32602, 'error code')
      })
    },
  },
  {
    // Ours (an extension, so asked ungated through client.raw): the paths and
    // shapes, which hold on any backend without waiting for a sample (E2B
    // takes one every 5 s; a rootless local backend takes none).
    name: 'metrics (ours): sandbox.metrics and sandbox.get with metrics',
    features: ['sandbox.lifecycle'],
    async run(t) {
      if (!t.client.raw) t.skip('the client cannot send extension methods')
      const { sandbox_id } = await t.createSandbox({ timeout: 120 })
      const series = await t.client.raw('sandbox.metrics', { sandbox_id })
      expect.equal(series.sandbox_id, sandbox_id, 'sandbox.metrics id')
      for (const m of series.metrics) {
        expect.ok(m.cpu_used_pct >= 0 && m.cpu_used_pct <= 100, `cpu_used_pct ${m.cpu_used_pct}`)
        expect.ok(m.mem_used <= m.mem_total && m.disk_used <= m.disk_total, `used within total: ${show(m)}`)
      }
      const since = await t.client.raw('sandbox.metrics', { sandbox_id, start: new Date(Date.now() + 3600e3).toISOString(), end: Math.ceil(nowS()) + 7200 })
      expect.deepEqual(since.metrics, [], 'no samples from the future')
      const rec = await t.client.raw('sandbox.get', { sandbox_id, metrics: true })
      expect.equal(rec.status, 'running', 'sandbox.get with metrics')
      if (rec.metrics) expect.ok(rec.metrics.cpu_used_pct >= 0, `latest figures ${show(rec.metrics)}`)
      await expect.rejects(t.client.raw('sandbox.metrics', { sandbox_id, start: 'yesterday' }), 'a start that is no time', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32602, 'error code')
        expect.equal(err.rpc.data.field, 'start', 'field')
      })
      await t.kill(sandbox_id)
      await expect.rejects(t.client.raw('sandbox.metrics', { sandbox_id }), 'sandbox.metrics of a killed sandbox', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
      })
    },
  },
  {
    // Ours: E2B's code interpreter (code.run, code.context.*: optional
    // methods, gated by exec.run), on E2B's template code-interpreter-v1;
    // skipped where there is no such template or it has no interpreter.
    name: 'code interpreter (ours): code.run and code.context.*',
    features: ['sandbox.lifecycle', 'exec.run'],
    // A first create of the template starts a server and a kernel; the
    // case starts two more kernels (a context, its restart).
    timeoutMs: 240000,
    async run(t) {
      let rec
      try {
        rec = await t.createSandbox({ template: 'code-interpreter-v1', timeout: 300 })
      } catch (err) {
        if (err.rpc && err.rpc.code === -32002) t.skip('the backend has no template code-interpreter-v1')
        throw err
      }
      const { sandbox_id } = rec
      const follower = t.follow()
      const run = (code, more = {}) => t.call('code.run', { sandbox_id, code, ...more })
      let first
      try {
        first = await run('import sys\nprint("out")\nprint("err", file=sys.stderr)\nx = 6 * 7\nx')
      } catch (err) {
        if (err.rpc && err.rpc.code === -32015 && err.rpc.data.port === 49999) t.skip('the template has no code interpreter')
        throw err
      }
      expect.deepEqual(first.logs, { stdout: ['out\n'], stderr: ['err\n'] }, 'logs')
      expect.equal(first.results.length, 1, 'one result')
      expect.equal(first.results[0].text, '42', 'the main result')
      expect.equal(first.results[0].is_main_result, true, 'is_main_result')
      expect.equal(first.error, null, 'no error')
      expect.ok(Number.isInteger(first.execution_count), `execution_count ${first.execution_count}`)
      const streamed = follower.code().map((o) => [o.stream, o.text !== undefined ? o.text : o.result.text])
      expect.deepEqual(streamed, [['stdout', 'out\n'], ['stderr', 'err\n'], ['result', '42']], 'code.output while it ran')
      expect.equal((await run('x + 1')).results[0].text, '43', 'state kept between runs')
      const failed = await run('1 / 0')
      expect.equal(failed.error && failed.error.name, 'ZeroDivisionError', 'the cell\'s error')
      expect.match(failed.error.traceback, /ZeroDivisionError/, 'its traceback')
      const envs = await run('import os; os.environ.get("ABX_CODE")', { envs: { ABX_CODE: 'set' } })
      expect.equal(envs.results[0].text, 'set', 'envs for the run')
      expect.equal((await run('import os; str(os.environ.get("ABX_CODE"))')).results[0].text, 'None', 'and gone after it')
      const plot = await run('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()')
      const png = plot.results.find((r) => r.png)
      expect.ok(png && atob(png.png).startsWith('\x89PNG'), `a plot as a PNG: ${show(plot.results.map((r) => Object.keys(r)))}`)
      const ctx = await t.call('code.context.create', { sandbox_id, cwd: '/tmp' })
      expect.deepEqual({ language: ctx.language, cwd: ctx.cwd }, { language: 'python', cwd: '/tmp' }, 'code.context.create')
      expect.equal((await run('import os; os.getcwd()', { context_id: ctx.id })).results[0].text, '/tmp', 'the context\'s cwd')
      expect.equal((await run('x', { context_id: ctx.id })).error.name, 'NameError', 'a context\'s own state')
      const listed = await t.call('code.context.list', { sandbox_id })
      expect.ok(listed.contexts.some((c) => c.id === ctx.id), 'code.context.list has it')
      expect.deepEqual(await t.call('code.context.restart', { sandbox_id, context_id: ctx.id }), { context_id: ctx.id, restarted: true }, 'code.context.restart')
      expect.deepEqual(await t.call('code.context.remove', { sandbox_id, context_id: ctx.id }), { context_id: ctx.id, removed: true }, 'code.context.remove')
      await expect.rejects(run('1', { context_id: ctx.id }), 'code.run in a removed context', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
      })
      await expect.rejects(run('1', { context_id: ctx.id, language: 'python' }), 'context_id with language', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32602, 'error code')
      })
      await expect.rejects(run('import time\ntime.sleep(30)\nslept = True', { timeout: 2 }), 'a run past its timeout', (err) => {
        expect.equal(err.rpc && err.rpc.code, -32013, 'error code')
      })
      expect.equal((await run('"slept" in globals()')).results[0].text, 'False', 'the timed-out cell was interrupted')
    },
  },
  {
    name: 'templates: Dockerfile build, use, delete',
    features: ['sandbox.lifecycle', 'exec.run', 'templates.build'],
    async run(t) {
      const tag = randomTag()
      const name = `abx-contract-${tag}`
      const hello = `hello from the build context ${tag}\n`
      const dockerfile = ['FROM e2bdev/base', `RUN echo built-${tag} > /opt/abx-contract-run`, 'COPY hello.txt /opt/abx-contract/hello.txt',
        'ENV ABX_CONTRACT=1', 'WORKDIR /opt/abx-contract'].join('\n')
      const follower = t.follow()
      let built = null
      try {
        built = await t.call('templates.build', { name, dockerfile, context: [{ path: 'hello.txt', content: btoa(hello) }] })
        expect.equal(built.status, 'ready', 'templates.build status')
        expect.equal(built.name, name, 'templates.build name')
        expect.ok(typeof built.template_id === 'string' && built.template_id && typeof built.build_id === 'string' && built.build_id, 'template and build ids')
        const logs = follower.logs()
        expect.ok(logs.length > 0, 'templates.log notifications while it built')
        for (const l of logs) expect.ok(typeof l.message === 'string' && typeof l.timestamp === 'string', `a log entry: ${show(l)}`)
        const got = await t.call('templates.get', { template_id: built.template_id, build_id: built.build_id })
        expect.equal(got.status, 'ready', 'templates.get status')
        const { sandbox_id } = await t.createSandbox({ template: name, timeout: 120 })
        const run = await t.call('exec.run', { sandbox_id, command: 'cat /opt/abx-contract-run /opt/abx-contract/hello.txt' })
        expect.equal(run.stdout, `built-${tag}\n${hello}`, "the RUN's and the COPY's files in a sandbox of the template")
        await t.kill(sandbox_id)
        expect.deepEqual(await t.call('templates.delete', { template_id: built.template_id }), { template_id: built.template_id, deleted: true }, 'templates.delete')
        const deleted = built
        built = null
        await expect.rejects(t.call('templates.get', { template_id: deleted.template_id, build_id: deleted.build_id }), 'templates.get of a deleted template', (err) => {
          expect.equal(err.rpc && err.rpc.code, -32002, 'error code')
          expect.equal(err.code, 'E4001', 'SDK code the host shows')
        })
      } finally {
        if (built) await t.call('templates.delete', { template_id: built.template_id }).catch(() => {})
      }
    },
  },
  {
    name: 'undeclared feature is E8004',
    features: [],
    async run(t) {
      // A feature the seed defines and this provider does not declare; when it
      // declares them all, a method outside the seed's table (no feature the
      // provider could have declared) meets the same gate.
      const feature = Object.keys(KNOWN_FEATURES).find((f) => !t.client.features.includes(f))
      const method = feature ? KNOWN_FEATURES[feature] : 'sandbox.snapshot'
      const params = { sandbox_id: 'abxcontractmissing0' }
      await expect.rejects(t.call(method, params), `${method} (${feature ? `undeclared ${feature}` : 'no declared feature'})`, (err) => {
        expect.equal(err.code, 'E8004', 'SDK code')
        expect.equal(err.rpc, null, 'the host answers, without calling the plugin')
      })
      if (!t.client.raw || !feature) return // an undocumented method is never sent to the plugin
      // The plugin agrees when asked directly: -32003.
      await expect.rejects(t.client.raw(method, params), `${method} asked of the plugin itself`, (err) => {
        expect.equal(err.rpc && err.rpc.code, -32003, 'error code')
        expect.equal(err.code, 'E8004', 'SDK code')
      })
    },
  },
  {
    name: 'secrets redacted in error messages',
    features: ['sandbox.lifecycle'],
    async run(t) {
      const secrets = (t.client.secrets || []).filter((s) => typeof s === 'string' && s.length >= 4)
      // Errors made on purpose with the real key: a missing sandbox, bad params.
      await expect.rejects(t.call('sandbox.get', { sandbox_id: 'abxcontractmissing1' }), 'sandbox.get of a missing sandbox')
      await expect.rejects(t.call('sandbox.create', { timeout: 'soon' }), 'sandbox.create with bad params')
      // Nothing the plugin said during the whole run carries a secret.
      for (const { dir, msg, garbage } of t.client.traffic) {
        if (dir !== 'in') continue // requests carry the key in initialize, by design
        const text = garbage !== undefined ? String(garbage) : JSON.stringify(msg)
        for (const s of secrets) expect.ok(!text.includes(s), `a configured secret appears in ${text.slice(0, 80)}...`)
      }
      if (!t.openClient) return
      // A wrong key: the refusal must not echo it.
      const wrong = `sk-abx-contract-DO-NOT-LEAK-${randomTag()}${randomTag()}`
      const other = await t.openClient({ api_key: wrong })
      try {
        const err = await expect.rejects(other.call('sandbox.list', {}), 'sandbox.list with a wrong key', (e) => {
          expect.equal(e.rpc && e.rpc.code, -32010, 'error code')
          expect.equal(e.rpc.data.kind, 'unauthenticated', 'error kind')
        })
        expect.ok(!JSON.stringify(err.rpc).includes(wrong) && !String(err.message).includes(wrong), 'the wrong key is not in the error')
        for (const { msg } of other.traffic) if (msg && msg.error) expect.ok(!JSON.stringify(msg).includes(wrong), 'the wrong key is not in any answer')
      } finally {
        await other.close()
      }
    },
  },
]

// ---- the runner -----------------------------------------------------------

// Exec notifications for the processes a case follows, with waits that wake
// on each notification (no fixed sleeps), and the templates.log entries.
function makeFollower(timeoutMs) {
  const byPid = new Map()
  const waiters = new Set()
  const of = (pid) => {
    if (!byPid.has(pid)) byPid.set(pid, { outputs: [], exit: null, order: [] })
    return byPid.get(pid)
  }
  const decode = (o) => (o.encoding === 'base64' ? new TextDecoder().decode(Uint8Array.from(atob(o.data), (c) => c.charCodeAt(0))) : o.data)
  function until(pred, what) {
    const value = pred()
    if (value) return Promise.resolve(value)
    return new Promise((resolve, reject) => {
      const w = {
        check() { const v = pred(); if (v) { done(); resolve(v) } },
        timer: setTimeout(() => { done(); reject(new CaseFailure(`gave up waiting for ${what}`)) }, timeoutMs),
      }
      function done() { clearTimeout(w.timer); waiters.delete(w) }
      waiters.add(w)
    })
  }
  const logs = []
  const code = []
  return {
    receive(msg) {
      const p = msg.params || {}
      if (msg.method === 'exec.output') { const f = of(p.pid); f.outputs.push({ ...p, data: decode(p) }); f.order.push('output') }
      else if (msg.method === 'exec.exit') { const f = of(p.pid); f.exit = f.exit ? f.exit : p; f.order.push('exit') }
      else if (msg.method === 'templates.log') logs.push(p)
      else if (msg.method === 'code.output') code.push(p)
      else return
      for (const w of [...waiters]) w.check()
    },
    of,
    text: (pid, stream) => of(pid).outputs.filter((o) => o.stream === stream).map((o) => o.data).join(''),
    exit: (pid) => until(() => of(pid).exit, `exec.exit of pid ${pid}`),
    logs: () => [...logs],
    code: () => [...code],
    close() { for (const w of waiters) clearTimeout(w.timer); waiters.clear() },
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs the cases; see the top of this file. */
export async function runCases(options) {
  const { client, doc, openClient, onRow, template } = options
  const caseTimeoutMs = options.caseTimeoutMs || 90000
  const created = options.created || new Set()
  const only = options.only ? new Set(options.only) : null
  const runId = randomTag()
  const metadata = { 'abx-contract': runId }
  const checker = createTrafficChecker(doc)
  let seen = 0
  const newProblems = () => {
    const problems = []
    const traffic = client.traffic || []
    for (; seen < traffic.length; seen++) problems.push(...checker.push(traffic[seen]))
    return problems
  }

  const followers = new Set()
  client.onNotification((msg) => { for (const f of followers) f.receive(msg) })

  let shared = null // the exec cases' sandbox, created on first use
  async function create(params = {}) {
    const rec = await client.call('sandbox.create', { ...(template ? { template } : {}), ...params, metadata: { ...metadata, ...(params.metadata || {}) } })
    created.add(rec.sandbox_id)
    return rec
  }
  async function kill(id) {
    const r = await client.call('sandbox.kill', { sandbox_id: id })
    created.delete(id)
    return r
  }

  const rows = []
  for (const c of CASES) {
    if (only && !only.has(c.name)) continue
    const row = { case: c.name, features: [...c.features], status: 'passed', ms: 0, error: null }
    const missing = c.features.filter((f) => !client.features.includes(f))
    if (missing.length) {
      row.status = 'skipped'
      row.error = `feature not declared: ${missing.join(', ')}`
    } else {
      const mine = new Set() // sandboxes this case created
      const follower = makeFollower(caseTimeoutMs)
      followers.add(follower)
      const t = {
        client,
        metadata,
        openClient,
        call: (method, params) => client.call(method, params),
        has: (f) => client.features.includes(f),
        skip(reason) { throw new CaseSkip(reason) },
        follow: () => follower,
        kill,
        async createSandbox(params) { const rec = await create(params); mine.add(rec.sandbox_id); return rec },
        async sandbox() {
          if (!shared) shared = create({ timeout: 600 }).then((r) => r.sandbox_id)
          return shared
        },
        async waitFor(check, what) {
          const end = Date.now() + caseTimeoutMs
          for (;;) {
            if (await check()) return
            if (Date.now() > end) throw new CaseFailure(`gave up waiting for ${what}`)
            await sleep(50)
          }
        },
      }
      const started = performance.now()
      const limitMs = Math.max(caseTimeoutMs, c.timeoutMs || 0)
      let timer
      try {
        await Promise.race([
          c.run(t),
          new Promise((_, reject) => { timer = setTimeout(() => reject(new CaseFailure(`case did not finish within ${limitMs} ms`)), limitMs) }),
        ])
      } catch (err) {
        if (err instanceof CaseSkip) { row.status = 'skipped'; row.error = err.message }
        else { row.status = 'failed'; row.error = err instanceof CaseFailure ? err.message : `${err && err.name}: ${err && err.message}${err && err.rpc ? ` ${show(err.rpc)}` : ''}` }
      } finally {
        clearTimeout(timer)
        follower.close()
        followers.delete(follower)
        for (const id of mine) if (created.has(id)) await kill(id).catch(() => {})
      }
      row.ms = Math.round(performance.now() - started)
      const problems = newProblems()
      if (problems.length && row.status !== 'failed') {
        row.status = 'failed'
        row.error = `EPP message outside docs/epp-methods.json: ${problems.slice(0, 3).join(' | ')}`
      }
    }
    rows.push(row)
    if (onRow) onRow(row)
  }

  if (shared) {
    const id = await shared.catch(() => null)
    if (id && created.has(id)) await kill(id).catch(() => {})
  }
  const problems = [...newProblems(), ...checker.unanswered()]
  const count = (s) => rows.filter((r) => r.status === s).length
  return { rows, passed: count('passed'), failed: count('failed') + (problems.length ? 1 : 0), skipped: count('skipped'), problems }
}
