// Contract cases for commands, processes and terminals (seed 003 §3 for
// exec.run / exec.stream / process.manage, plus the pty.* methods), run
// in-process through the reference host and over stdio NDJSON, against the
// real local backend's envd. All traffic is validated against
// docs/epp-methods.json.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { HostError, loadProvider, startStdioProvider } from '../../host/reference/host.mjs'
import { startBackend } from '../../host/backend.mjs'
import { validateTraffic } from '../lib/epp-schema.mjs'
import { rejects } from '../lib/host-assert.mjs'
import { until } from '../../host/wait.mjs'

const pluginDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const MODES = {
  'in-process': (opts) => loadProvider(pluginDir, opts), // message objects: long strings detached
  'in-process, JSON text': (opts) => loadProvider(pluginDir, { ...opts, form: 'text' }),
  stdio: (opts) => startStdioProvider(pluginDir, opts),
}


/** Collects exec.output / exec.exit for one started process. */
function follow(infra) {
  const byPid = new Map()
  infra.onNotification((msg) => {
    const p = msg.params
    if (!byPid.has(p.pid)) byPid.set(p.pid, { outputs: [], exit: null, order: [], kept: 0 })
    const f = byPid.get(p.pid)
    // Keeps the first MiB of each process's output: enough for every check,
    // and the 50 MiB case must not measure this test's own memory.
    if (msg.method === 'exec.output' && f.kept < 1 << 20) { f.outputs.push(p); f.order.push('output'); f.kept += p.length }
    if (msg.method === 'exec.exit') { assert.equal(f.exit, null, 'exactly one exec.exit'); f.exit = p; f.order.push('exit') }
  })
  const of = (pid) => byPid.get(pid) || { outputs: [], exit: null, order: [] }
  return {
    of,
    text: (pid, stream = 'stdout') => of(pid).outputs.filter((o) => o.stream === stream).map((o) => o.data).join(''),
    exit: (pid, ms = 15000) => until(() => of(pid).exit, `exec.exit for ${pid}`, ms),
    until: (pid, pred, ms = 15000) => until(() => pred(of(pid)) && of(pid), `a condition on process ${pid}`, ms),
  }
}

function checkOffsets(outputs) {
  const next = {}
  for (const o of outputs) {
    assert.equal(o.offset, next[o.stream] || 0, `offsets contiguous on ${o.stream}`)
    next[o.stream] = o.offset + o.length
  }
  return next
}

for (const [mode, start] of Object.entries(MODES)) {
  describe(`exec contract (${mode})`, () => {
    let backend, infra, sid, watch
    before(async () => {
      backend = await startBackend()
      infra = await start({ env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
      watch = follow(infra)
      sid = (await infra.sandbox_protocol.create({ timeout: 600, envs: { FROM_SANDBOX: 'sbx-env' } })).sandbox_id
    })
    after(async () => {
      const problems = validateTraffic(infra.traffic)
      await infra.close()
      await backend.stop()
      assert.deepEqual(problems, [], 'traffic must match docs/epp-methods.json')
    })
    const run = (p) => infra.call('exec.run', { sandbox_id: sid, ...p })
    const startCmd = (p) => infra.call('exec.start', { sandbox_id: sid, ...p })

    test('features: exec.run, exec.stream, process.manage are declared; pty.* ride on exec.stream (no "pty" feature)', () => {
      for (const f of ['exec.run', 'exec.stream', 'process.manage']) assert.ok(infra.features.includes(f), f)
      assert.ok(!infra.features.includes('pty'))
    })

    test('exit code is data; stderr; a command that does not exist', async () => {
      const ok = await run({ command: 'echo out; echo err >&2' })
      assert.equal(ok.exit_code, 0)
      assert.equal(ok.stdout, 'out\n')
      assert.equal(ok.stderr, 'err\n')
      assert.equal(ok.error, null)
      const three = await run({ command: 'exit 3' })
      assert.equal(three.exit_code, 3)
      assert.equal(three.error, 'exit status 3')
      const missing = await run({ command: 'no-such-command-e2bw' })
      assert.equal(missing.exit_code, 127)
      assert.match(missing.stderr, /no-such-command-e2bw: command not found/)
    })

    test('environment: sandbox envs, then the call envs; cwd', async () => {
      const r = await run({ command: 'echo "$FROM_SANDBOX $FOO"; pwd', envs: { FOO: 'bar' }, cwd: '/tmp' })
      assert.equal(r.stdout, 'sbx-env bar\n/tmp\n')
      await rejects(run({ command: 'true', cwd: '/no/such/dir' }), (err) => {
        assert.equal(err.rpc.code, -32602)
        assert.match(err.rpc.message, /does not exist/)
      })
    })

    test('stdin round trip (exec.run and process.stdin)', async () => {
      assert.equal((await run({ command: 'tr a-z A-Z', stdin: 'hello\n' })).stdout, 'HELLO\n')
      assert.equal((await run({ command: 'wc -c', stdin: 'AAEC/w==', encoding: 'base64' })).stdout, Buffer.from('4\n').toString('base64'))
      const { pid } = await startCmd({ command: 'cat', stdin: true })
      const w = await infra.call('process.stdin', { sandbox_id: sid, pid, data: 'round trip\n' })
      assert.equal(w.written, 11)
      await infra.call('process.stdin', { sandbox_id: sid, pid, close: true })
      const exit = await watch.exit(pid)
      assert.equal(exit.exit_code, 0)
      assert.equal(watch.text(pid), 'round trip\n')
    })

    test('streaming order: outputs in order, offsets contiguous, exactly one exec.exit last', async () => {
      const { pid } = await startCmd({ command: 'for i in 1 2 3 4 5; do echo line$i; echo err$i >&2; sleep 0.05; done; exit 7' })
      const exit = await watch.exit(pid)
      const f = watch.of(pid)
      assert.equal(f.order.at(-1), 'exit')
      assert.equal(f.order.filter((x) => x === 'exit').length, 1)
      assert.equal(watch.text(pid), 'line1\nline2\nline3\nline4\nline5\n')
      assert.equal(watch.text(pid, 'stderr'), 'err1\nerr2\nerr3\nerr4\nerr5\n')
      const next = checkOffsets(f.outputs)
      assert.equal(next.stdout, 30)
      assert.equal(exit.exit_code, 7)
    })

    test('timeout: the call fails with a typed timeout and the process is stopped', async () => {
      const marker = `e2bw-timeout-${mode}-${Date.now()}`
      await rejects(run({ command: `sleep 30 # ${marker}`, timeout: 1 }), (err) => {
        assert.equal(err.rpc.code, -32013)
        assert.equal(err.rpc.data.kind, 'timeout')
      })
      await until(async () => {
        const { processes } = await infra.call('process.list', { sandbox_id: sid })
        return !processes.some((p) => p.args.join(' ').includes(marker))
      }, 'the timed-out process to be gone', 5000)
    })

    test('process list, kill, signal; exit by signal; unknown pid', async () => {
      const { pid } = await startCmd({ command: 'sleep 60', tag: `t-${mode}` })
      const { processes } = await infra.call('process.list', { sandbox_id: sid })
      const mine = processes.find((p) => p.pid === pid)
      assert.ok(mine, 'the started process is listed')
      assert.deepEqual(mine.args, ['-l', '-c', 'sleep 60'])
      assert.equal(mine.tag, `t-${mode}`)
      assert.deepEqual(await infra.call('process.signal', { sandbox_id: sid, pid, signal: 'SIGTERM' }), { sandbox_id: sid, pid, signal: 'SIGTERM' })
      const exit = await watch.exit(pid)
      assert.equal(exit.signal, 'SIGTERM')
      assert.equal(exit.exit_code, 143)
      const again = await startCmd({ command: 'sleep 60' })
      await infra.call('process.kill', { sandbox_id: sid, pid: String(again.pid) })
      assert.equal((await watch.exit(again.pid)).signal, 'SIGKILL')
      await rejects(infra.call('process.kill', { sandbox_id: sid, pid: 4000000 }), (err) => {
        assert.equal(err.rpc.code, -32002)
        assert.equal(err.rpc.data.backend_code, 'not_found')
      })
      await rejects(infra.call('process.kill', { sandbox_id: sid, pid: 'abc' }), (err) => assert.equal(err.rpc.data.field, 'pid'))
    })

    test('attach from a second dispatcher follows the same process', async () => {
      const other = await start({ env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
      try {
        const otherWatch = follow(other)
        const { pid } = await startCmd({ command: 'read x; echo "got $x"; sleep 0.2; echo done', stdin: true })
        const attached = await other.call('process.attach', { sandbox_id: sid, pid })
        assert.equal(attached.pid, pid)
        await infra.call('process.stdin', { sandbox_id: sid, pid, data: 'ping\n' })
        await watch.exit(pid)
        const theirs = await otherWatch.exit(pid)
        assert.equal(theirs.exit_code, 0)
        assert.equal(watch.text(pid), 'got ping\ndone\n')
        assert.equal(otherWatch.text(pid), 'got ping\ndone\n', 'the second client saw the output after attaching')
        assert.deepEqual(validateTraffic(other.traffic), [])
      } finally {
        await other.close()
      }
    })

    test('pty: echo and resize', async () => {
      const { pid } = await infra.call('pty.open', { sandbox_id: sid, cols: 80, rows: 24 })
      await infra.call('pty.input', { sandbox_id: sid, pid, data: 'stty size; echo pty-$((6*7))\n' })
      await watch.until(pid, (f) => f.outputs.map((o) => o.data).join('').includes('pty-42'))
      assert.match(watch.text(pid, 'pty'), /24 80/)
      assert.deepEqual(await infra.call('pty.resize', { sandbox_id: sid, pid, cols: 100, rows: 30 }), { sandbox_id: sid, pid, cols: 100, rows: 30 })
      await infra.call('pty.input', { sandbox_id: sid, pid, data: 'stty size\n' })
      await watch.until(pid, (f) => /30 100/.test(f.outputs.map((o) => o.data).join('')))
      await infra.call('pty.close', { sandbox_id: sid, pid })
      const exit = await watch.exit(pid)
      assert.equal(exit.signal, 'SIGKILL')
      assert.ok(watch.of(pid).outputs.every((o) => o.stream === 'pty'))
    })

    test('50 MiB through exec.start: delivered whole, memory bounded', async () => {
      const total = 50 * 1024 * 1024
      let bytes = 0
      let peak = 0
      const rss = () => {
        if (infra.child) return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${infra.child.pid}/status`, 'utf8'))[1]) * 1024
        return process.memoryUsage().rss
      }
      const base = rss()
      const sampler = setInterval(() => { try { peak = Math.max(peak, rss()) } catch {} }, 20)
      const seen = new Map() // pid → { next, gaps }: numbers only
      infra.onNotification((msg) => {
        if (msg.method !== 'exec.output') return
        const c = seen.get(msg.params.pid) || { next: 0, gaps: 0 }
        if (msg.params.offset !== c.next) c.gaps++
        c.next = msg.params.offset + msg.params.length
        seen.set(msg.params.pid, c)
      })
      const started = await startCmd({ command: `head -c ${total} /dev/zero | tr '\\0' 'x'` })
      const exit = await watch.exit(started.pid, 120000)
      clearInterval(sampler)
      assert.equal(exit.exit_code, 0)
      bytes = seen.get(started.pid).next
      assert.equal(seen.get(started.pid).gaps, 0)
      assert.equal(bytes, total)
      assert.ok(peak - base < 96 * 1024 * 1024, `RSS grew by ${((peak - base) / 1048576).toFixed(1)} MiB for 50 MiB of output`)
    })
  })

  describe(`exec liveness (${mode})`, () => {
    test('a backend that stops answering mid-stream ends the stream with "unreachable", never a hang', async () => {
      const backend = await startBackend()
      const infra = await start({
        env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl },
        overrides: { keepalive_interval: '0.5', request_timeout: '2' }, // string fields (seed types): the core parses them
      })
      const watch = follow(infra)
      try {
        const sid = (await infra.sandbox_protocol.create({})).sandbox_id
        const { pid } = await infra.call('exec.start', { sandbox_id: sid, command: 'while true; do echo tick; sleep 0.1; done' })
        await watch.until(pid, (f) => f.outputs.length > 2)
        const running = infra.call('exec.run', { sandbox_id: sid, command: 'sleep 20' }).then(() => assert.fail('exec.run succeeded'), (err) => err)
        // stop the backend once exec.run's process runs (its stream is open), not after a guessed delay
        await until(async () => (await infra.call('process.list', { sandbox_id: sid })).processes.some((p) => p.args.join(' ') === '-l -c sleep 20'),
          'exec.run\'s process to be running')
        process.kill(backend.pid, 'SIGSTOP')
        try {
          const exit = await watch.exit(pid, 10000)
          assert.equal(exit.exit_code, null)
          assert.equal(exit.failure.data.kind, 'unreachable')
          assert.match(exit.failure.message, /sent nothing, not even a keepalive, for 1.5 s/)
          const err = await running
          assert.ok(err instanceof HostError, String(err))
          assert.equal(err.rpc.data.kind, 'unreachable')
        } finally {
          process.kill(backend.pid, 'SIGCONT')
        }
        assert.deepEqual(validateTraffic(infra.traffic), [])
      } finally {
        await infra.close()
        await backend.stop()
      }
    })
  })
}
