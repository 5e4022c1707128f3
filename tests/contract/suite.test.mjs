// The contract suite as a tool (tests/contract/suite.mjs): run for real on the
// in-process and stdio transports against the local backend it starts itself;
// no case may fail and no case of a declared feature may be skipped. Also: the
// cases can fail (a plugin that answers wrongly is caught), and the browser-usable
// schema checker agrees with ajv.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadProvider } from '../../host/reference/host.mjs'
import { loadManifest } from '../../host/reference/manifest.mjs'
import { startBackend } from '../../host/backend.mjs'
import { validateTraffic } from '../lib/epp-schema.mjs'
import { checkTraffic } from '../lib/epp-traffic.mjs'
import { compileSchema } from '../lib/json-schema-lite.mjs'
import { until } from '../../host/wait.mjs'
import { CASES, runCases } from './cases.mjs'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const doc = JSON.parse(readFileSync(path.join(repo, 'docs', 'epp-methods.json'), 'utf8'))

// The shell's environment without any E2B or abx setting: a run meant for the
// local backend must never resolve a real account from the developer's shell.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(E2B_|ABX_)/.test(k)))

function runTool(args, env = cleanEnv) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repo, 'tests', 'contract', 'suite.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

const manifest = await loadManifest(repo)
const declared = new Set(manifest.features.supported)

for (const transport of ['inprocess', 'stdio']) {
  test(`suite.mjs --transport ${transport}: every case, none failed, no declared feature skipped`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-suite-'))
    try {
      const report = path.join(dir, 'report.json')
      const { code, stdout, stderr } = await runTool(['--transport', transport, '--report', report])
      const r = JSON.parse(readFileSync(report, 'utf8'))
      const lines = stdout.trimEnd().split('\n')
      assert.equal(lines.at(-1), `${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`, 'the last line is the count')
      assert.equal(r.rows.length, CASES.length) // the 18 of abx provider test, templates.build's, sandbox.metrics' and code.*'s
      for (const row of r.rows) assert.ok(lines.some((l) => l.startsWith(row.case)), `a table row for ${row.case}`)
      // aligned: the header's and every row's result start in one column, after the longest name
      const col = Math.max(...CASES.map((c) => c.name.length)) + 1
      const table = lines.filter((l) => l.startsWith('case ') || CASES.some((c) => l.startsWith(`${c.name} `)))
      assert.equal(table.length, CASES.length + 1, stdout)
      for (const l of table) assert.match(l.slice(col), /^(result|pass |FAIL |skip )/, `the result column of: ${l}`)
      assert.deepEqual(r.rows.filter((x) => x.status === 'failed'), [], stdout + stderr)
      assert.deepEqual(r.problems, [])
      assert.equal(r.failed, 0)
      assert.equal(code, 0)
      const wronglySkipped = r.rows.filter((x) => x.status === 'skipped' && x.features.length && x.features.every((f) => declared.has(f)))
      assert.deepEqual(wronglySkipped, [], 'a case of a declared feature was skipped')
      for (const row of r.rows.filter((x) => x.status === 'skipped')) assert.match(row.error, /not declared|every feature/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('the cases catch a plugin that answers wrongly, and unknown flags are refused', async () => {
  const backend = await startBackend()
  const infra = await loadProvider(repo, { env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
  try {
    // The second kill claims success again: not idempotent in the contract's sense.
    const lying = Object.create(infra)
    lying.call = async (method, params) => {
      const r = await infra.call(method, params)
      return method === 'sandbox.kill' ? { ...r, killed: true } : r
    }
    const report = await runCases({ client: lying, doc, only: ['kill is idempotent', 'exec: exit code is data'] })
    assert.deepEqual(report.rows.map((r) => r.status), ['failed', 'passed'])
    assert.match(report.rows[0].error, /killing twice is not an error: expected .*"killed":false/)
    assert.equal(report.failed, 1)
  } finally {
    await infra.close()
    await backend.stop()
  }
  const bad = await runTool(['--transport', 'carrier-pigeon'])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--transport must be inprocess, stdio or browser/)
})

test('--case with a name that matches no case fails and lists the case names', async () => {
  const { code, stdout, stderr } = await runTool(['--transport', 'stdio', '--case', 'exec: exit code is data', '--case', 'no such case'])
  assert.equal(code, 2, stdout + stderr)
  assert.match(stderr, /no case named 'no such case'; the cases are:/)
  for (const c of CASES) assert.ok(stderr.includes(`\n  ${c.name}\n`), `lists '${c.name}'`)
  assert.doesNotMatch(stdout, /passed/, 'nothing ran')
})

test('--case picks a case by the one name it begins or holds; one that names several fails listing them', async () => {
  const ambiguous = await runTool(['--transport', 'inprocess', '--case', 'exec'])
  assert.equal(ambiguous.code, 2, ambiguous.stdout + ambiguous.stderr)
  const execCases = CASES.filter((c) => c.name.startsWith('exec')).map((c) => c.name)
  assert.match(ambiguous.stderr, new RegExp(`--case 'exec' is ambiguous: ${execCases.length} cases begin with it:`))
  for (const name of execCases) assert.ok(ambiguous.stderr.includes(`\n  ${name}\n`), `lists '${name}'`)
  assert.doesNotMatch(ambiguous.stdout, /passed/, 'nothing ran')
  const within = await runTool(['--transport', 'inprocess', '--case', ' and '])
  const holding = CASES.filter((c) => c.name.includes(' and ')).map((c) => c.name)
  assert.ok(holding.length > 1)
  assert.equal(within.code, 2, within.stdout + within.stderr)
  assert.match(within.stderr, new RegExp(`--case ' and ' is ambiguous: ${holding.length} cases contain it:`))

  const { code, stdout, stderr } = await runTool(['--transport', 'inprocess', '--case', 'lifecycle', '--case', 'IDEMPOTENT'])
  assert.equal(code, 0, stdout + stderr)
  const rows = stdout.split('\n').filter((l) => / (pass|FAIL|skip) /.test(l))
  assert.deepEqual(rows.map((l) => l.split(/\s{2,}/)[0]), ['lifecycle: create, get, list, connect, kill', 'kill is idempotent'])
  assert.match(stdout, /\n2 passed, 0 failed, 0 skipped\n$/)
})

test('E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY alone point the suite at a backend, as abx resolves them', async () => {
  const backend = await startBackend()
  try {
    const listTagged = async () => (await (await fetch(`${backend.apiUrl}/sandboxes`, { headers: { 'X-API-Key': backend.apiKey } })).json())
      .filter((s) => s.metadata && s.metadata['abx-contract'])
    const run = runTool(['--transport', 'inprocess', '--case', 'exec: exit code is data', '--case', 'exec: timeout'],
      { PATH: process.env.PATH, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl, E2B_API_KEY: backend.apiKey })
    let finished = false
    run.then(() => { finished = true })
    // the run's sandbox lives on this backend while the exec cases run
    const seen = await until(async () => ((await listTagged()).length > 0 ? 'seen' : finished && 'finished first'), 'a sandbox of the run on the given backend', 60000)
    const { code, stdout, stderr } = await run
    assert.equal(seen, 'seen', `no sandbox of the run appeared on the given backend\n${stdout}${stderr}`)
    assert.equal(code, 0, stdout + stderr)
    assert.match(stdout, new RegExp(`transport inprocess, ${backend.apiUrl.replace(/[.]/g, '\\.')}\n`))
    assert.match(stdout, /\n2 passed, 0 failed, 0 skipped\n$/)
    assert.deepEqual(await listTagged(), [], 'the run killed what it created')
    assert.ok(!(stdout + stderr).includes(backend.apiKey), 'the key is never printed')
  } finally {
    await backend.stop()
  }
})

test('against a given backend: Ctrl-C kills the sandboxes the run created, the key never printed', async () => {
  const backend = await startBackend()
  try {
    const child = spawn(process.execPath, [path.join(repo, 'tests', 'contract', 'suite.mjs'), '--transport', 'stdio',
      '--api-url', backend.apiUrl, '--sandbox-url', backend.sandboxUrl, '--api-key-env', 'SUITE_TEST_KEY',
      '--case', 'exec: exit code is data', '--case', 'exec: timeout'], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, SUITE_TEST_KEY: backend.apiKey },
    })
    let out = ''
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    // Interrupted while 'exec: timeout' runs: the exec cases' sandbox is alive then.
    await new Promise((resolve) => {
      child.stdout.on('data', (d) => { out += d; if (/exec: exit code is data\s+pass/.test(out)) resolve() })
      child.stderr.on('data', (d) => { out += d })
      exited.then(resolve)
    })
    const listRunning = async () => (await (await fetch(`${backend.apiUrl}/sandboxes`, { headers: { 'X-API-Key': backend.apiKey } })).json())
    assert.equal((await listRunning()).length, 1, `one sandbox alive mid-run\n${out}`)
    child.kill('SIGINT')
    assert.deepEqual(await exited, { code: 130, signal: null }, out)
    assert.match(out, /interrupted: killing 1 sandbox/)
    assert.deepEqual(await listRunning(), [], 'nothing the run created is left running')
    assert.ok(!out.includes(backend.apiKey), 'the key is never printed')
  } finally {
    await backend.stop()
  }
})

test('CASES: the 18 of abx provider test, templates.build\'s, sandbox.metrics\' and code.*\'s, named, each with its features', () => {
  assert.equal(CASES.length, 21)
  assert.equal(new Set(CASES.map((c) => c.name)).size, 21)
  // the README counts them as they are
  const readme = readFileSync(path.join(repo, 'README.md'), 'utf8')
  assert.match(readme, /The 21 cases: the 18 `abx provider test` runs/)
  assert.deepEqual(CASES.filter((c) => c.features.includes('templates.build')).map((c) => c.name), ['templates: Dockerfile build, use, delete'])
  for (const c of CASES) assert.ok(Array.isArray(c.features) && typeof c.run === 'function', c.name)
})

test('json-schema-lite agrees with ajv on the document and on wrong messages', () => {
  // Every schema in the document compiles in the lite validator (no unsupported keyword).
  const validate = compileSchema(doc)
  doc.methods.forEach((m, i) => {
    if (m.params) validate(`#/methods/${i}/params`, {})
    if (m.result) validate(`#/methods/${i}/result`, {})
  })
  const traffic = (answer) => [
    { dir: 'out', msg: { jsonrpc: '2.0', id: 1, method: 'sandbox.kill', params: { sandbox_id: 'abc123' } } },
    { dir: 'in', msg: { jsonrpc: '2.0', id: 1, ...answer } },
    { dir: 'out', msg: { jsonrpc: '2.0', id: 2, method: 'exec.start', params: { sandbox_id: 'abc123', command: 'true', timeout: -1 } } },
    { dir: 'in', msg: { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'timeout', data: { kind: 'invalid_params', field: 'timeout' } } } },
    { dir: 'in', msg: { jsonrpc: '2.0', method: 'exec.exit', params: { sandbox_id: 'abc123', pid: 7, request_id: 2, exit_code: 0, signal: null, status: 'exit status 0', error: null } } },
  ]
  const good = traffic({ result: { sandbox_id: 'abc123', killed: true } })
  assert.deepEqual(checkTraffic(doc, good), [])
  assert.deepEqual(validateTraffic(good), [])
  for (const answer of [
    { result: { sandbox_id: 'abc123', killed: 'yes' } },
    { result: { sandbox_id: 'abc123', killed: true, extra: 1 } },
    { result: { killed: true } },
    { error: { code: -32002, message: 'gone' } },
    { error: { code: -32099, message: 'x', data: { kind: 'internal' } } },
  ]) {
    const lite = checkTraffic(doc, traffic(answer))
    const ajv = validateTraffic(traffic(answer))
    assert.equal(lite.length > 0, ajv.length > 0, `${JSON.stringify(answer)}: lite ${lite} / ajv ${ajv}`)
    assert.ok(lite.length > 0, JSON.stringify(answer))
  }
  assert.deepEqual(checkTraffic(doc, [{ dir: 'out', msg: { jsonrpc: '2.0', id: 9, method: 'sandbox.get', params: {} } }]), ['sandbox.get was never answered'])
})
