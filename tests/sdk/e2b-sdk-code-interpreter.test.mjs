// The official @e2b/code-interpreter JS SDK (2.8) against the local backend:
// its default template code-interpreter-v1 and the interpreter server in it
// (docs/code-interpreter.md). Options are passed explicitly; ambient E2B_*
// variables are cleared, so nothing leaves the machine.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { api, startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox } = await import('@e2b/code-interpreter')
const { NotFoundError, SandboxError, TimeoutError, InvalidArgumentError } = await import('e2b')

const T = { timeout: 300_000 } // a bound for a busy machine, not a timing
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

// One raw request to the interpreter through the backend's proxy, as the SDK
// routes it (E2b-Sandbox-Id, E2b-Sandbox-Port: 49999).
async function raw(backend, sandbox, method, path, body, headers = {}) {
  const res = await fetch(backend.sandboxUrl + path, {
    method,
    headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': '49999', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, text: await res.text() }
}

describe('official @e2b/code-interpreter SDK', () => {
  let backend
  let opts
  let sandbox
  const made = []
  const create = async (more = {}) => {
    const s = await Sandbox.create({ ...opts, ...more })
    made.push(s)
    return s
  }

  before(async () => {
    backend = await startBackend()
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, requestTimeoutMs: 120_000 }
    sandbox = await create({ envs: { FROM_SANDBOX: 'sb', SHARED: 'sandbox' } })
  })

  after(async () => {
    for (const s of made) await s.kill().catch(() => {})
    const { code } = await backend.stop()
    assert.equal(code, 0, backend.stderr())
  })

  test('Sandbox.create() is code-interpreter-v1; runCode("x = 1; x") returns 1', T, async () => {
    const info = await sandbox.getInfo()
    assert.equal(info.templateId, 'code-interpreter-v1')
    const execution = await sandbox.runCode('x = 1; x')
    assert.equal(execution.text, '1')
    assert.equal(execution.results.length, 1)
    assert.equal(execution.results[0].isMainResult, true)
    assert.equal(execution.error, undefined)
    assert.deepEqual(execution.logs, { stdout: [], stderr: [] })
    assert.equal(typeof execution.executionCount, 'number')
  })

  test('state lasts between runs of the default context', T, async () => {
    await sandbox.runCode('y = 41\ndef inc(v):\n    return v + 1')
    assert.equal((await sandbox.runCode('inc(y)')).text, '42')
  })

  test('stdout, stderr and results stream to their callbacks while the code runs', T, async () => {
    const seen = []
    const started = Date.now()
    const execution = await sandbox.runCode(
      'import sys, time\nprint("first", flush=True)\ntime.sleep(1.5)\nprint("oops", file=sys.stderr)\n"done"',
      {
        onStdout: (m) => seen.push(['stdout', m.line, Date.now() - started]),
        onStderr: (m) => seen.push(['stderr', m.line, Date.now() - started]),
        onResult: (r) => seen.push(['result', r.text, Date.now() - started]),
      },
    )
    const ended = Date.now() - started
    assert.deepEqual(seen.map(([k, v]) => [k, v]), [['stdout', 'first\n'], ['stderr', 'oops\n'], ['result', 'done']])
    assert.ok(seen[0][2] <= ended - 1000, `the first line came ${seen[0][2]} ms in, the end at ${ended} ms: not streamed`)
    assert.deepEqual(execution.logs, { stdout: ['first\n'], stderr: ['oops\n'] })
  })

  test('errors: name, value and a plain-text traceback; onError', T, async () => {
    let reported
    const execution = await sandbox.runCode('def f():\n    return 1 / 0\nf()', { onError: (e) => { reported = e } })
    assert.equal(execution.error.name, 'ZeroDivisionError')
    assert.equal(execution.error.value, 'division by zero')
    assert.match(execution.error.traceback, /ZeroDivisionError/)
    assert.match(execution.error.traceback, /return 1 \/ 0/)
    assert.doesNotMatch(execution.error.traceback, /\x1b\[/, 'no terminal colours')
    assert.equal(reported.name, 'ZeroDivisionError')
    assert.equal(execution.results.length, 0)
    // the kernel goes on
    assert.equal((await sandbox.runCode('2 * 3')).text, '6')
  })

  test('display data: every display() is a result, the last expression the main one', T, async () => {
    const execution = await sandbox.runCode(
      'from IPython.display import display, HTML, Markdown\ndisplay(HTML("<b>bold</b>"))\ndisplay(Markdown("# title"))\n"main"',
    )
    assert.equal(execution.results.length, 3)
    assert.equal(execution.results[0].html, '<b>bold</b>')
    assert.equal(execution.results[0].isMainResult, false)
    assert.equal(execution.results[1].markdown, '# title')
    assert.equal(execution.results[2].text, 'main')
    assert.equal(execution.results[2].isMainResult, true)
    assert.equal(execution.text, 'main')
  })

  test('a matplotlib figure comes back as a PNG result', T, async () => {
    const execution = await sandbox.runCode(
      'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title("squares")\nplt.show()',
    )
    assert.equal(execution.error, undefined, execution.error && execution.error.traceback)
    const images = execution.results.filter((r) => r.png)
    assert.equal(images.length, 1, JSON.stringify(execution.results.map((r) => r.formats())))
    const png = Buffer.from(images[0].png, 'base64')
    assert.deepEqual(png.subarray(0, 8), PNG_MAGIC)
    assert.ok(png.length > 2000, `a plot, not an empty image (${png.length} bytes)`)
    assert.equal(images[0].isMainResult, false)
  })

  test('a pandas DataFrame is an HTML table and its data', T, async () => {
    const execution = await sandbox.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})')
    assert.equal(execution.error, undefined, execution.error && execution.error.traceback)
    const [result] = execution.results
    assert.match(result.html, /<table[\s\S]*<td>x<\/td>/)
    assert.deepEqual(result.data, { a: [1, 2], b: ['x', 'y'] })
    assert.match(result.text, /a\s+b/)
  })

  test('env vars: the sandbox\'s, and a run\'s own, set for that run and restored after', T, async () => {
    const get = 'import os\n[os.environ.get("FROM_SANDBOX"), os.environ.get("SHARED"), os.environ.get("ONLY_RUN")]'
    assert.equal((await sandbox.runCode(get)).text, "['sb', 'sandbox', None]")
    const during = await sandbox.runCode(get, { envs: { SHARED: 'run', ONLY_RUN: "it's $HOME" } })
    assert.equal(during.text, "['sb', 'run', \"it's $HOME\"]")
    assert.equal((await sandbox.runCode(get)).text, "['sb', 'sandbox', None]")
    const bash = await sandbox.runCode('echo "$SHARED $ONLY_RUN"', { language: 'bash', envs: { ONLY_RUN: 'b' } })
    assert.deepEqual(bash.logs.stdout, ['sandbox b\n'])
  })

  test('contexts: create with a cwd, isolated state, list, restart, remove', T, async () => {
    const ctx = await sandbox.createCodeContext({ cwd: '/tmp' })
    assert.equal(ctx.language, 'python')
    assert.equal(ctx.cwd, '/tmp')
    assert.match(ctx.id, /^[0-9a-f-]{36}$/)
    assert.equal((await sandbox.runCode('import os; os.getcwd()', { context: ctx })).text, '/tmp')
    assert.equal((await sandbox.runCode('import os; os.getcwd()')).text, '/home/user')
    const isolated = await sandbox.runCode('x', { context: ctx })
    assert.equal(isolated.error.name, 'NameError')
    await sandbox.runCode('z = 5', { context: ctx })
    assert.ok((await sandbox.listCodeContexts()).some((c) => c.id === ctx.id && c.cwd === '/tmp'))
    await sandbox.restartCodeContext(ctx)
    assert.equal((await sandbox.runCode('z', { context: ctx })).error.name, 'NameError')
    assert.equal((await sandbox.runCode('import os; os.getcwd()', { context: ctx })).text, '/tmp', 'a restart keeps the cwd')
    await sandbox.removeCodeContext(ctx.id)
    assert.ok(!(await sandbox.listCodeContexts()).some((c) => c.id === ctx.id))
    await assert.rejects(sandbox.runCode('1', { context: ctx }), (e) => e instanceof NotFoundError && /not found/.test(e.message))
    await assert.rejects(sandbox.restartCodeContext(ctx), NotFoundError)
    await assert.rejects(sandbox.runCode('1', { context: ctx, language: 'python' }), InvalidArgumentError)
  })

  test('languages: bash and R kernels; one the template lacks is an error', T, async () => {
    const bash = await sandbox.runCode('echo $((40 + 2)); cd /tmp; pwd', { language: 'bash' })
    assert.deepEqual(bash.logs.stdout.join(''), '42\n/tmp\n')
    const failing = await sandbox.runCode('false', { language: 'bash' })
    assert.equal(failing.error.value, '1', 'a failing command is the execution\'s error, as bash_kernel reports it')
    // IRkernel shows a value as display data (E2B's R results are not main results either)
    const r = await sandbox.runCode('x <- c(1, 2, 3); sum(x)', { language: 'r' })
    assert.equal(r.error, undefined, r.error && r.error.traceback)
    assert.equal(r.results[0].text, '[1] 6')
    const rctx = await sandbox.createCodeContext({ language: 'r', cwd: '/tmp' })
    assert.equal((await sandbox.runCode('getwd()', { context: rctx })).results[0].text, '[1] "/tmp"')
    await assert.rejects(sandbox.runCode('1', { language: 'javascript' }), (e) => e instanceof SandboxError && /500/.test(e.message))
    await assert.rejects(sandbox.createCodeContext({ cwd: '/no/such/dir' }), (e) => e instanceof SandboxError && /400/.test(e.message))
  })

  test('a timeout aborts the request and the server interrupts the kernel', T, async () => {
    await assert.rejects(sandbox.runCode('import time\ntime.sleep(30)\nfinished = True', { timeoutMs: 1500 }), TimeoutError)
    // Not interrupted, the next run would wait for the sleep and find it True.
    const next = await sandbox.runCode('"finished" in globals()')
    assert.equal(next.text, 'False', 'the interrupted cell did not run on')
  })

  test('a kernel that dies is started again: its cell ends with ContextRestarting, the next one runs', T, async () => {
    const ctx = await sandbox.createCodeContext()
    await sandbox.runCode('lost = 1', { context: ctx })
    const died = await sandbox.runCode('import os\nos._exit(1)', { context: ctx })
    assert.equal(died.error && died.error.name, 'ContextRestarting')
    assert.equal((await sandbox.runCode('"lost" in globals()', { context: ctx })).text, 'False')
    await sandbox.removeCodeContext(ctx)
  })

  test('reconnect: Sandbox.connect then runCode finds the same kernel', T, async () => {
    await sandbox.runCode('kept = "across connects"')
    const again = await Sandbox.connect(sandbox.sandboxId, opts)
    assert.equal((await again.runCode('kept')).text, 'across connects')
  })

  test('pause, then connect: the kernel and its state are kept (frozen, not stopped)', T, async () => {
    const paused = await create()
    await paused.runCode('kept = 41')
    assert.equal(await paused.pause(), true)
    const resumed = await Sandbox.connect(paused.sandboxId, opts)
    assert.equal((await resumed.runCode('kept + 1')).text, '42')
  })

  test('the server\'s own checks: 400 for context_id with language, the envd token of a secure sandbox', T, async () => {
    const both = await raw(backend, sandbox, 'POST', '/execute', { code: '1', context_id: 'x', language: 'python' }, { 'X-Access-Token': sandbox.envdAccessToken })
    assert.deepEqual(both, { status: 400, text: 'Only one of context_id or language can be provided' })
    assert.equal((await raw(backend, sandbox, 'POST', '/execute', { code: '1' })).status, 401)
    assert.equal((await raw(backend, sandbox, 'POST', '/execute', { code: '1' }, { 'X-Access-Token': 'wrong' })).status, 401)
    const ok = await raw(backend, sandbox, 'POST', '/execute', { code: '6 * 7' }, { 'X-Access-Token': sandbox.envdAccessToken })
    assert.equal(ok.status, 200)
    const lines = ok.text.trim().split('\n').map((l) => JSON.parse(l))
    assert.deepEqual(lines.at(-1), { type: 'end_of_execution' })
    assert.equal(lines.find((l) => l.type === 'result').text, '42')
    assert.equal((await raw(backend, sandbox, 'GET', '/contexts/nope/restart')).status, 405)
    assert.deepEqual(await raw(backend, sandbox, 'DELETE', '/contexts/nope'), { status: 404, text: 'Context nope not found' })
    assert.deepEqual(await raw(backend, sandbox, 'GET', '/health'), { status: 200, text: '"OK"' })
  })

  test('a sandbox with private traffic: the SDK sends its traffic token, nobody else gets in', T, async () => {
    const priv = await create({ network: { allowPublicTraffic: false } })
    assert.ok(priv.trafficAccessToken)
    assert.equal((await priv.runCode('"private"')).text, 'private')
    assert.equal((await raw(backend, priv, 'GET', '/health')).status, 403)
  })

  test('the warm pool: later creates claim a sandbox whose server runs already, with their own env vars', T, async () => {
    await until(async () => (await api(backend, 'GET', '/health/details')).json.warm.templates_ready >= 1, 'a pooled code-interpreter sandbox', 90_000)
    const before = (await api(backend, 'GET', '/health/details')).json.warm.taken
    const pooled = await create({ envs: { FROM_SANDBOX: 'pooled' } })
    assert.equal((await api(backend, 'GET', '/health/details')).json.warm.taken, before + 1, 'claimed from the pool')
    assert.equal((await pooled.runCode('import os; os.environ["FROM_SANDBOX"]')).text, 'pooled')
  })

  test('a killed sandbox: runCode fails', T, async () => {
    const doomed = await create()
    assert.equal((await doomed.runCode('1')).text, '1')
    await doomed.kill()
    await assert.rejects(doomed.runCode('1'), (e) => e instanceof TimeoutError || e instanceof SandboxError)
  })
})
