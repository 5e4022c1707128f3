// An independent client that only speaks NDJSON to `node js-shim/epp-stdio.mjs`
// (no project JavaScript on this side): lifecycle on the local backend, and
// the documented error for every kind of garbage. The runner must survive
// all of it, answer every request exactly once, and exit cleanly.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

function startRunner() {
  const child = spawn(process.execPath, [path.join(root, 'js-shim', 'epp-stdio.mjs')], { env: { PATH: process.env.PATH }, stdio: 'pipe' })
  const lines = []
  const waiters = []
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line)
    for (const w of waiters.splice(0)) w()
  })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return {
    child, lines, exited,
    stderr: () => stderr,
    write: (text) => child.stdin.write(text),
    // Waits for the answer with this id (parsing every line as it comes).
    async answer(id, timeoutMs = 10000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = lines.map((l) => JSON.parse(l)).find((m) => JSON.stringify(m.id) === JSON.stringify(id))
        if (found) return found
        if (Date.now() > deadline) throw new Error(`no answer for id ${JSON.stringify(id)}; got:\n${lines.join('\n')}`)
        await new Promise((resolve) => { waiters.push(resolve); setTimeout(resolve, 100) })
      }
    },
    async call(id, method, params) {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
      return this.answer(id)
    },
  }
}

let backend
before(async () => { backend = await startBackend() })
after(async () => { await backend.stop() })

test('lifecycle over raw NDJSON', async () => {
  const r = startRunner()
  const init = await r.call(1, 'initialize', { protocol: 'epp/1', config: { api_key: backend.apiKey, api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl } })
  assert.deepEqual(init.result.features, ['sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause', 'exec.run', 'exec.stream', 'process.manage', 'files.rw', 'ports.url', 'templates.build'])
  const echoed = (await r.call(21, 'exec.run', { sandbox_id: 'x'.repeat(3), command: 'true' })).error
  assert.equal(echoed.code, -32002, 'exec on a missing sandbox is E2009')
  const created = (await r.call(2, 'sandbox.create', { template: 'base', timeout: 60, metadata: { via: 'ndjson' } })).result
  const id = created.sandbox_id
  assert.equal((await r.call(3, 'sandbox.get', { sandbox_id: id })).result.status, 'running')
  const listed = (await r.call(4, 'sandbox.list', { metadata: { via: 'ndjson' } })).result
  assert.deepEqual(listed.sandboxes.map((s) => s.sandbox_id), [id])
  const ranMsg = await r.call(22, 'exec.run', { sandbox_id: id, command: 'echo "$((40+2))"; exit 5' })
  const ran = ranMsg.result
  assert.ok(ran, JSON.stringify(ranMsg))
  assert.equal(ran.stdout, '42\n')
  assert.equal(ran.exit_code, 5)
  assert.equal((await r.call(5, 'sandbox.kill', { sandbox_id: id })).result.killed, true)
  assert.equal((await r.call(6, 'sandbox.kill', { sandbox_id: id })).result.killed, false)
  const missing = await r.call(7, 'sandbox.get', { sandbox_id: id })
  assert.equal(missing.error.code, -32002)
  assert.equal(missing.error.data.sdk_code, 'E2009')
  const shutdown = await r.call(8, 'shutdown', {})
  assert.deepEqual(shutdown.result, {})
  assert.deepEqual(await r.exited, { code: 0, signal: null })
  for (const line of r.lines) assert.doesNotThrow(() => JSON.parse(line), `stdout carries only EPP messages: ${line}`)
  assert.ok(!r.stderr().includes(backend.apiKey) && !r.lines.join('').includes(backend.apiKey))
})

test('garbage gets the documented errors and the runner keeps going', async () => {
  const r = startRunner()
  r.write('this is not json\n')
  r.write('[]\n')
  r.write('42\n')
  r.write('{"jsonrpc":"2.0","id":"a"}\n')
  r.write('{"jsonrpc":"1.0","id":"b","method":"initialize"}\n')
  r.write('{"jsonrpc":"2.0","id":"c","method":"sandbox.get","params":{"sandbox_id":"x"}}\n') // before initialize
  r.write('{"jsonrpc":"2.0","method":"initialize"}\n') // a notification: never answered
  r.write('   \n\r\n') // blank lines are skipped
  // an oversized line (17 MiB > 16 MiB limit), written in pieces
  const piece = 'x'.repeat(1 << 20)
  for (let i = 0; i < 17; i++) r.write(piece)
  r.write('\n')
  r.write(JSON.stringify({ jsonrpc: '2.0', id: 'd', method: 'initialize', params: { config: { api_key: backend.apiKey, api_url: backend.apiUrl } } }) + '\n')
  // one request split across writes, then the next in the same chunk
  r.write('{"jsonrpc":"2.0","id":"e","method":"sand')
  r.write('box.create","params":{"timeout":"60"}}\n{"jsonrpc":"2.0","id":"f","method":"no.such.method"}\n')
  r.write('{"jsonrpc":"2.0","id":"g","method":"files.read","params":{"sandbox_id":"x","path":"etc/hostname"}}\n')
  r.write('{"jsonrpc":"2.0","id":"h","method":"sandbox.list","params":[1,2]}\n')
  r.write('{"jsonrpc":"2.0","id":"i","method":"sandbox.create","params":{"gpu":1}}\n') // cannot be honoured

  const nullIds = (n) => until(() => {
    const found = r.lines.map((l) => JSON.parse(l)).filter((m) => m.id === null)
    return found.length >= n && found
  }, `${n} answers with a null id`)
  assert.equal((await r.answer('a')).error.code, -32600)
  assert.equal((await r.answer('b')).error.code, -32600)
  assert.match((await r.answer('c')).error.message, /call initialize before 'sandbox.get'/)
  const anonymous = await nullIds(4)
  assert.deepEqual(anonymous.map((m) => m.error.code), [-32700, -32600, -32600, -32600])
  assert.match(anonymous[3].error.message, /exceeds the 16777216-byte message limit/)
  assert.ok((await r.answer('d')).result, 'the runner still works after an oversized line')
  const e = await r.answer('e')
  assert.equal(e.error.code, -32602)
  assert.equal(e.error.data.field, 'timeout')
  assert.equal((await r.answer('f')).error.code, -32601)
  const g = await r.answer('g')
  assert.equal(g.error.code, -32602) // a relative path: refused before any request
  assert.equal(g.error.data.field, 'path')
  assert.equal((await r.answer('h')).error.code, -32602)
  assert.equal((await r.answer('i')).error.data.field, 'gpu')
  assert.equal(r.lines.length, 13, 'exactly one answer per request, none for the notification')

  r.child.stdin.end() // end of input: the runner exits once nothing is in flight
  assert.deepEqual(await r.exited, { code: 0, signal: null })
})

test('a missing api_key says to send it in initialize: the runner reads no environment', async () => {
  const r = startRunner()
  const missing = (await r.call(1, 'initialize', { protocol: 'epp/1', config: { api_url: backend.apiUrl } })).error
  assert.equal(missing.code, -32602)
  assert.equal(missing.data.field, 'config.api_key')
  assert.match(missing.message, /'api_key' is required: send it in initialize's params\.config: this runner reads no environment/)
  assert.doesNotMatch(missing.message, /ABX_E2B_WASM_API_KEY|E2B_API_KEY/, 'no environment variable: the runner reads none')
  const none = (await r.call(2, 'initialize', { protocol: 'epp/1' })).error
  assert.match(none.message, /this runner reads no environment/)
  r.child.stdin.end()
  assert.deepEqual(await r.exited, { code: 0, signal: null })
})

test('near-miss names are refused naming the one meant; the SDK\'s apiUrl never falls back to api.e2b.app', async () => {
  const r = startRunner()
  const sdkSpelling = (await r.call(1, 'initialize', { protocol: 'epp/1', config: { api_key: backend.apiKey, apiUrl: backend.apiUrl } })).error
  assert.equal(sdkSpelling.code, -32602)
  assert.equal(sdkSpelling.data.field, 'config.apiUrl')
  assert.equal(sdkSpelling.data.did_you_mean, 'api_url')
  assert.match(sdkSpelling.message, /did you mean 'api_url'\?/)
  assert.ok(!sdkSpelling.message.includes(backend.apiKey))
  assert.ok((await r.call(2, 'initialize', { protocol: 'epp/1', config: { api_key: backend.apiKey, api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl } })).result)
  const { sandbox_id } = (await r.call(3, 'sandbox.create', { timeout: 60 })).result
  // a misspelt timeout never lets the command run on: refused before it starts
  const typo = (await r.call(4, 'exec.run', { sandbox_id, command: 'sleep 2', timout: 1 })).error
  assert.equal(typo.code, -32602)
  assert.equal(typo.data.field, 'timout')
  assert.equal(typo.data.did_you_mean, 'timeout')
  assert.match(typo.message, /did you mean 'timeout'\?/)
  const timedOut = (await r.call(5, 'exec.run', { sandbox_id, command: 'sleep 2', timeout: 1 })).error
  assert.equal(timedOut.code, -32013, 'spelt right, the timeout is kept')
  // other unknown members stay extensions
  assert.equal((await r.call(6, 'exec.run', { sandbox_id, command: 'echo ok', x_trace_id: 'abc' })).result.stdout, 'ok\n')
  await r.call(7, 'sandbox.kill', { sandbox_id })
  r.child.stdin.end()
  assert.deepEqual(await r.exited, { code: 0, signal: null })
})

test('stdin closing while a call is in flight: the call is still answered', async () => {
  const r = startRunner()
  r.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { config: { api_key: backend.apiKey, api_url: backend.apiUrl } } }) + '\n')
  r.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'sandbox.create', params: {} }) + '\n')
  r.child.stdin.end()
  const created = await r.answer(2)
  assert.ok(created.result.sandbox_id)
  assert.deepEqual(await r.exited, { code: 0, signal: null })
})
