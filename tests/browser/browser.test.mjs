// The plugin, unchanged, in a real headless Chromium page against the local
// backend. tests/browser/page.html imports /js-shim/dispatcher.mjs straight
// from the repository (served by server.mjs, a separate origin from the
// backend's, so every request is a real cross-origin fetch with a preflight),
// and every EPP call below runs inside the page.
//
// Chromium: /usr/bin/chromium (apt-get install -y chromium; ./build.sh test
// installs it), or $E2BW_CHROMIUM. Without it this suite FAILS; it never skips.
import assert from 'node:assert/strict'
import net from 'node:net'
import http from 'node:http'
import { after, afterEach, before, describe, test } from 'node:test'
import { createDispatcher } from '../../js-shim/dispatcher.mjs'
import { startBackend } from '../../host/backend.mjs'
import { validateTraffic } from '../lib/epp-schema.mjs'
import { launchChromium } from './chromium.mjs'
import { PAGE_PATH, startStaticServer } from './server.mjs'
import { until } from '../../host/wait.mjs'

// A loopback port nothing listens on (bound, then released).
async function closedPort() {
  const srv = net.createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}

// A raw request (no URL normalisation on our side), for the server's own checks.
function rawGet(port, target, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('e2b-wasm in headless Chromium', () => {
  let backend, server, browser, page
  let main // the page's session against the backend
  let features = []
  const pageErrors = [] // uncaught exceptions and unhandled rejections in the page
  const consoleErrors = [] // console.error and network errors the browser logs
  const expectedConsole = [] // [{ origin, pattern }]: network errors a test provoked on purpose
  const texts = [] // every error text and log line the plugin produced, checked for the key
  let reported = 0

  const inPage = (fn, arg) => page.evaluate(fn, arg)
  const call = (method, params, session = main) =>
    inPage(([s, m, p]) => window.e2bw.call(s, m, p), [session, method, params]).then((answer) => {
      if (answer.error) texts.push(JSON.stringify(answer.error))
      return answer
    })
  const ok = async (method, params, session = main) => {
    const answer = await call(method, params, session)
    assert.ok(!answer.error, `${method} failed in the page: ${JSON.stringify(answer.error)}`)
    return answer.result
  }
  const open = async (config, transport = 'fetch') => {
    const { session, transport: chosen } = await inPage((t) => window.e2bw.open({ transport: t }), transport)
    assert.equal(chosen, 'fetch', 'no ctx: the dispatcher uses fetch')
    const init = await call('initialize', { protocol: 'epp/1', config }, session)
    return { session, init }
  }
  const closeSession = async (session) => {
    const { traffic, unsolicited } = await inPage((s) => window.e2bw.close(s), session)
    for (const m of unsolicited) if (m.error) texts.push(JSON.stringify(m.error))
    assert.deepEqual(validateTraffic(traffic), [], 'traffic must match docs/epp-methods.json')
    return { traffic, unsolicited }
  }

  before(async () => {
    backend = await startBackend()
    server = await startStaticServer({ index: PAGE_PATH })
    browser = await launchChromium()
    page = await browser.newPage()
    page.on('pageerror', (err) => pageErrors.push(err))
    page.on('crash', () => pageErrors.push(new Error('the page crashed')))
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push({ text: msg.text(), url: msg.location().url || '' })
    })
    const res = await page.goto(server.url + PAGE_PATH)
    assert.equal(res.status(), 200)
    await page.waitForFunction(() => window.e2bw && window.e2bw.ready === true, null, { timeout: 15000 })
      .catch((err) => {
        throw new Error(`the page did not load its modules: ${err.message}\n${pageErrors.map(String).join('\n')}`)
      })
    const { session, init } = await open({ api_key: backend.apiKey, api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl })
    assert.ok(init.result, `initialize failed in the page: ${JSON.stringify(init.error)}`)
    main = session
    features = init.result.features
  })

  afterEach(() => {
    // An uncaught exception fails the test during which it happened.
    const fresh = pageErrors.slice(reported)
    reported = pageErrors.length
    assert.deepEqual(fresh.map((e) => e.stack || String(e)), [], 'uncaught exceptions in the page')
  })

  after(async () => {
    const problems = []
    const attempt = async (what, fn) => {
      try { await fn() } catch (err) { problems.push(`${what}: ${err.message}`) }
    }
    if (backend) await attempt('SIGCONT', async () => process.kill(backend.pid, 'SIGCONT')) // in case a test died while it was stopped
    if (browser) await attempt('closing Chromium', () => browser.close())
    if (server) await attempt('closing the static server', () => server.close())
    if (backend) await attempt('stopping the backend', () => backend.stop())
    assert.deepEqual(problems, [])
  })

  test('the static server: MIME types, read-only, nothing outside the root', async () => {
    const { port } = server
    const types = {
      '/js-shim/dispatcher.mjs': 'text/javascript; charset=utf-8',
      '/wasm/core.wasm': 'application/wasm',
      [PAGE_PATH]: 'text/html; charset=utf-8',
    }
    for (const [target, type] of Object.entries(types)) {
      const res = await rawGet(port, target)
      assert.equal(res.status, 200, target)
      assert.equal(res.type, type, target)
    }
    for (const target of ['/../../../etc/passwd', '/js-shim/..%2f..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e/etc/passwd',
      '/js-shim/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/..\\..\\etc\\passwd', '/.git/config', '/%00']) {
      const res = await rawGet(port, target)
      assert.ok([400, 403, 404].includes(res.status), `${target} → ${res.status}`)
      assert.ok(!res.body.includes('root:'), `${target} leaked a file outside the root`)
    }
    assert.equal((await rawGet(port, '/nope.mjs')).status, 404)
    assert.equal((await rawGet(port, '/js-shim/dispatcher.mjs', 'PUT')).status, 405)
    assert.equal((await rawGet(port, '/js-shim/dispatcher.mjs', 'DELETE')).status, 405)
  })

  test('the core module is fetched as application/wasm and imports nothing', async () => {
    const info = await inPage(() => window.e2bw.moduleInfo())
    assert.equal(info.contentType, 'application/wasm')
    assert.deepEqual(info.imports, [], 'WebAssembly.Module.imports(wasm/core.wasm)')
    assert.deepEqual(info.usedImports, [], 'the module the dispatcher instantiated')
    for (const name of ['memory:memory', 'core_new:function', 'submit:function', 'next_action:function', 'next_deadline:function'])
      assert.ok(info.exports.includes(name), `exports ${name}`)
  })

  test('initialize in the page answers exactly what the same core answers in Node', async () => {
    assert.ok(features.includes('sandbox.lifecycle') && features.includes('sandbox.pause'), `features: ${features}`)
    const config = { api_key: backend.apiKey, api_url: backend.apiUrl }
    const { session, init: inBrowser } = await open(config)
    await closeSession(session)
    const d = await createDispatcher({ fetch: () => Promise.reject(new Error('initialize makes no request')) })
    const inNode = await new Promise((resolve) => {
      d.onMessage = (text) => resolve(JSON.parse(text))
      d.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol: 'epp/1', config } })
    })
    d.close()
    assert.deepEqual(inBrowser, inNode)
    assert.deepEqual(inBrowser.result.features, features)
  })

  test('create, get, list, pause, resume, kill twice; get after kill is E2009', async () => {
    const rec = await ok('sandbox.create', { template: 'base', timeout: 120, metadata: { suite: 'browser' } })
    assert.match(rec.sandbox_id, /^[a-z0-9]+$/)
    assert.equal(rec.status, 'running')
    assert.deepEqual(rec.metadata, { suite: 'browser' })
    const id = rec.sandbox_id

    const got = await ok('sandbox.get', { sandbox_id: id })
    assert.equal(got.sandbox_id, id)
    assert.equal(got.status, 'running')
    const listed = await ok('sandbox.list', { metadata: { suite: 'browser' } })
    assert.deepEqual(listed.sandboxes.map((s) => s.sandbox_id), [id])
    assert.equal(listed.next_token, null)

    assert.deepEqual(await ok('sandbox.pause', { sandbox_id: id }), { sandbox_id: id, status: 'paused', changed: true })
    assert.equal((await ok('sandbox.get', { sandbox_id: id })).status, 'paused')
    assert.equal((await ok('sandbox.resume', { sandbox_id: id })).status, 'running')
    assert.equal((await ok('sandbox.get', { sandbox_id: id })).status, 'running')

    // The second kill and the get below are 404s, which Chromium logs to the console.
    expectedConsole.push({ origin: new URL(backend.apiUrl).origin, pattern: /status of 404/ })
    assert.deepEqual(await ok('sandbox.kill', { sandbox_id: id }), { sandbox_id: id, killed: true })
    assert.deepEqual(await ok('sandbox.kill', { sandbox_id: id }), { sandbox_id: id, killed: false })
    const gone = await call('sandbox.get', { sandbox_id: id })
    assert.equal(gone.error?.code, -32002, JSON.stringify(gone))
    assert.equal(gone.error.data.sdk_code, 'E2009')
    assert.match(gone.error.message, /not found/)
  })

  test('list paging across origins (the backend exposes X-Next-Token to the page)', async () => {
    const ids = []
    for (let i = 0; i < 3; i++) ids.push((await ok('sandbox.create', { metadata: { paging: 'browser' } })).sandbox_id)
    const first = await ok('sandbox.list', { metadata: { paging: 'browser' }, limit: 2 })
    assert.equal(first.sandboxes.length, 2)
    assert.ok(first.next_token, 'a cursor for the second page')
    const second = await ok('sandbox.list', { metadata: { paging: 'browser' }, limit: 2, next_token: first.next_token })
    assert.deepEqual([...first.sandboxes, ...second.sandboxes].map((s) => s.sandbox_id).sort(), [...ids].sort())
    const all = await ok('sandbox.list', { metadata: { paging: 'browser' } })
    assert.deepEqual(all.sandboxes.map((s) => s.sandbox_id).sort(), [...ids].sort())
    for (const id of ids) await ok('sandbox.kill', { sandbox_id: id })
  })

  test('files.rw is declared; a relative path is -32602 from the plugin itself', async () => {
    assert.ok(features.includes('files.rw'))
    const answer = await call('files.read', { sandbox_id: 'x', path: 'etc/hostname' })
    assert.equal(answer.error?.code, -32602, JSON.stringify(answer))
    assert.equal(answer.error.data.field, 'path')
  })

  test('commands from the page: exec.run, and exec.start with its notifications (envd across origins)', async () => {
    const { sandbox_id } = await ok('sandbox.create', { timeout: 120 })
    const ran = await ok('exec.run', { sandbox_id, command: 'echo "hi from $((6*7))"; echo warn >&2; exit 3' })
    assert.equal(ran.stdout, 'hi from 42\n')
    assert.equal(ran.stderr, 'warn\n')
    assert.equal(ran.exit_code, 3)
    const { pid } = await ok('exec.start', { sandbox_id, command: 'for i in 1 2 3; do echo line$i; sleep 0.05; done' })
    const mine = await until(async () => {
      const got = (await inPage((s) => window.e2bw.transcript(s), main)).unsolicited.filter((m) => m.params?.pid === pid)
      return got.some((m) => m.method === 'exec.exit') && got
    }, 'exec.exit in the page')
    const outputs = mine.filter((m) => m.method === 'exec.output')
    assert.equal(outputs.map((m) => m.params.data).join(''), 'line1\nline2\nline3\n')
    assert.equal(mine.at(-1).method, 'exec.exit', 'exec.exit comes last')
    assert.equal(mine.at(-1).params.exit_code, 0)
    await ok('sandbox.kill', { sandbox_id })
  })

  test('a message that is not JSON is -32700 with id null, and the dispatcher keeps going', async () => {
    const answer = await inPage((s) => window.e2bw.raw(s, 'this is not json {'), main)
    texts.push(JSON.stringify(answer))
    assert.equal(answer.id, null)
    assert.equal(answer.error.code, -32700)
    assert.ok(Array.isArray((await ok('sandbox.list', {})).sandboxes))
  })

  test('an unreachable api_url is kind unreachable', async () => {
    const port = await closedPort()
    const apiUrl = `http://127.0.0.1:${port}`
    expectedConsole.push({ origin: apiUrl, pattern: /ERR_CONNECTION_REFUSED/ })
    const { session, init } = await open({ api_key: backend.apiKey, api_url: apiUrl })
    assert.ok(init.result)
    const answer = await call('sandbox.list', {}, session)
    assert.equal(answer.error?.code, -32012, JSON.stringify(answer))
    assert.equal(answer.error.data.kind, 'unreachable')
    // A browser never says why a fetch failed, so the core cannot tell "refused" here.
    assert.match(answer.error.message, new RegExp(`Cannot reach the E2B backend at ${apiUrl} \\((connection refused|network error)\\)`))
    await closeSession(session)
  })

  test('a backend that stops answering is kind timeout after request_timeout, and the page recovers', async () => {
    const { session, init } = await open({ api_key: backend.apiKey, api_url: backend.apiUrl, request_timeout: 1 })
    assert.equal(init.result.limits.request_timeout, 1)
    const { sandbox_id } = await ok('sandbox.create', { timeout: 120 }, session)
    let answer, elapsed
    process.kill(backend.pid, 'SIGSTOP') // the backend stops answering (its socket still accepts)
    try {
      const t0 = Date.now()
      answer = await call('sandbox.get', { sandbox_id }, session)
      elapsed = Date.now() - t0
    } finally {
      process.kill(backend.pid, 'SIGCONT')
    }
    assert.equal(answer.error?.code, -32013, JSON.stringify(answer))
    assert.equal(answer.error.data.kind, 'timeout')
    assert.match(answer.error.message, /did not answer GET \/sandboxes\/\w+ within 1 s/)
    assert.ok(elapsed >= 900 && elapsed < 10000, `answered after ${elapsed} ms`)
    assert.equal((await ok('sandbox.get', { sandbox_id }, session)).status, 'running', 'the plugin recovers')
    await ok('sandbox.kill', { sandbox_id }, session)
    await closeSession(session)
  })

  // Fail until js-shim calls a fetch it did not wrap itself as a plain function:
  // today pickTransport() returns { fetch: globalThis.fetch } (and
  // createDispatcher({ fetch }) makes { fetch: options.fetch }), the dispatcher
  // calls transport.fetch(url, init), so `this` is that object and Chromium
  // throws "TypeError: Failed to execute 'fetch' on 'Window': Illegal invocation".
  for (const [transport, how] of [['default', 'createDispatcher() with neither fetch nor ctx'],
    ['bare', 'createDispatcher({ fetch }) with the global fetch itself']]) {
    test(`the shim works with the browser's fetch as it is: ${how}`, async () => {
      const { session, init } = await open({ api_key: backend.apiKey, api_url: backend.apiUrl }, transport)
      assert.ok(init.result)
      const logsBefore = await inPage(() => window.e2bw.logLines.length)
      const created = await call('sandbox.create', { metadata: { via: `${transport}-transport` } }, session)
      const logs = (await inPage(() => window.e2bw.logLines)).slice(logsBefore)
      assert.ok(!created.error, `sandbox.create with ${how} failed: ${JSON.stringify(created.error)}\n` +
        `dispatcher log: ${logs.join(' | ')}\n` +
        'js-shim calls the fetch it was given or picked as transport.fetch(url, init) (transport.mjs pickTransport, ' +
        "dispatcher.mjs createDispatcher); a browser's fetch needs `this` to be the global object, so it must be " +
        'called as a plain function, e.g. { fetch: (url, init) => f(url, init) }.')
      const { sandbox_id } = created.result
      assert.equal((await ok('sandbox.get', { sandbox_id }, session)).status, 'running')
      assert.equal((await ok('sandbox.kill', { sandbox_id }, session)).killed, true)
      await closeSession(session)
    })
  }

  test('no secret in any error or log line; no unexpected console errors', async () => {
    const logs = await inPage(() => window.e2bw.logLines)
    const { unsolicited } = await inPage((s) => window.e2bw.transcript(s), main)
    const all = [...texts, ...logs, ...unsolicited.map((m) => JSON.stringify(m)),
      ...consoleErrors.map((c) => c.text), ...pageErrors.map((e) => e.stack || String(e))]
    assert.ok(texts.length >= 5, 'the errors above were collected')
    for (const text of all) assert.ok(!text.includes(backend.apiKey), `the API key leaked in: ${text}`)
    const originOf = (url) => { try { return new URL(url).origin } catch { return '' } }
    const unexpected = consoleErrors.filter(({ text, url }) =>
      !expectedConsole.some((e) => originOf(url) === e.origin && e.pattern.test(text)))
    assert.deepEqual(unexpected, [], 'console errors nobody provoked on purpose (CORS, MIME, module loading, ...)')
    await closeSession(main)
  })
})
