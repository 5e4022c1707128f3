#!/usr/bin/env node
// suite.mjs — the contract suite as a tool: 20 cases, the 18 of `abx provider
// test` and ours of templates.build and sandbox.metrics (tests/contract/cases.mjs),
// against this plugin, on one transport, against the local backend or any
// E2B-protocol backend.
//
//   node tests/contract/suite.mjs --transport inprocess|stdio|browser
//        [--api-url URL] [--sandbox-url URL] [--domain DOMAIN] [--api-key-env NAME]
//        [--template NAME] [--case NAME]... [--report FILE.json]
//
// Options resolve as abx resolves them: the flag, else ABX_E2B_WASM_<KEY>, else
// the field's declared alias (E2B_API_URL, E2B_SANDBOX_URL, E2B_DOMAIN; see
// abx-provider.toml). When none of api_url, sandbox_url and domain is given
// either way, it starts the local backend (build/bin/e2b-local-backend) on an
// ephemeral port, with a clean environment, and stops it again. Otherwise it
// runs against that backend; the API key is ABX_E2B_WASM_API_KEY, else
// E2B_API_KEY, or the variable named by --api-key-env, and is never printed.
// It creates only sandboxes it kills again, also when interrupted: Ctrl-C
// kills what it created, then exits 130. --case NAME picks a case by its whole
// name, else by the one name it begins, else by the one name holding it (case
// ignored: --case lifecycle, --case 'exec: timeout'); a --case that names no case,
// or several, is a usage error that lists them.
//
// Transports: inprocess — provider.mjs loaded by the reference host
// (host/reference/host.mjs, node/1 + kit.epp.infra); stdio — node js-shim/epp-stdio.mjs
// as an exec plugin over NDJSON; browser — delegated to tests/browser/run-suite.mjs,
// which must export
//   runSuite({ apiUrl, sandboxUrl, domain, apiKey, template, only, created, onRow }) → report
// with the report shape of runCases (cases.mjs), running the same cases in Chromium.
//
// Output: one table row per case with its time, then exactly one line
// `N passed, N failed, N skipped`. Exit code 0 when nothing failed, 1 otherwise,
// 2 for a usage error.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { envName } from '../../host/reference/config.mjs'
import { loadManifest } from '../../host/reference/manifest.mjs'
import { CASES, runCases } from './cases.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..', '..')

function usage(message) {
  process.stderr.write(`${message}\nusage: node tests/contract/suite.mjs --transport inprocess|stdio|browser [--api-url URL] [--sandbox-url URL] [--domain DOMAIN] [--api-key-env NAME] [--template NAME] [--case NAME]... [--report FILE]\n`)
  process.exit(2)
}

function parseArgs(argv) {
  const opts = { transport: null, apiUrl: null, sandboxUrl: null, domain: null, apiKeyEnv: null, template: null, only: [], report: null }
  const names = { '--transport': 'transport', '--api-url': 'apiUrl', '--sandbox-url': 'sandboxUrl', '--domain': 'domain',
    '--api-key-env': 'apiKeyEnv', '--template': 'template', '--case': 'only', '--report': 'report' }
  for (let i = 0; i < argv.length; i++) {
    let [flag, value] = argv[i].split(/=(.*)/s)
    if (flag === '--help' || flag === '-h') usage('the contract suite of abx provider test, for e2b-wasm')
    const key = names[flag]
    if (!key) usage(`unknown argument ${argv[i]}`)
    if (value === undefined) value = argv[++i]
    if (value === undefined) usage(`${flag} needs a value`)
    if (key === 'only') opts.only.push(value)
    else opts[key] = value
  }
  if (!['inprocess', 'stdio', 'browser'].includes(opts.transport)) usage('--transport must be inprocess, stdio or browser')
  return opts
}

/** The case a --case value names: its whole name, else the one name it
 *  begins, else the one name holding it, case ignored. A usage error when it
 *  names none or several. */
function findCase(given) {
  const names = CASES.map((c) => c.name)
  if (names.includes(given)) return given
  const low = given.toLowerCase()
  for (const [how, hit] of [['begin with', (n) => n.toLowerCase().startsWith(low)], ['contain', (n) => n.toLowerCase().includes(low)]]) {
    const found = names.filter(hit)
    if (found.length === 1) return found[0]
    if (found.length > 1) usage(`--case '${given}' is ambiguous: ${found.length} cases ${how} it:\n  ${found.join('\n  ')}\ngive more of the name`)
  }
  return usage(`no case named '${given}'; the cases are:\n  ${names.join('\n  ')}`)
}

const opts = parseArgs(process.argv.slice(2))
opts.only = [...new Set(opts.only.map(findCase))]

// ---- options, as abx resolves them ----------------------------------------
const manifest = await loadManifest(repo)
/** The flag's value, else ABX_E2B_WASM_<KEY>, else the field's declared env aliases. */
function resolved(key, flag) {
  if (flag) return flag
  const names = [envName(manifest.provider.id, key), ...(manifest.config.fields[key].env || [])]
  for (const name of names) if (process.env[name]) return process.env[name]
  return null
}
const target = { apiUrl: resolved('api_url', opts.apiUrl), sandboxUrl: resolved('sandbox_url', opts.sandboxUrl), domain: resolved('domain', opts.domain) }
const remote = Boolean(target.apiUrl || target.sandboxUrl || target.domain)

// ---- the table ------------------------------------------------------------
const COL = Math.max(...CASES.map((c) => c.name.length)) // every row's result in one column
function printRow(row) {
  const status = { passed: 'pass', failed: 'FAIL', skipped: 'skip' }[row.status]
  const ms = row.status === 'skipped' ? '' : `${row.ms} ms`
  let line = `${row.case.padEnd(COL)} ${status.padEnd(5)} ${ms.padStart(9)}`
  if (row.error) line += `  ${row.error.replace(/\s+/g, ' ').slice(0, 300)}`
  process.stdout.write(line + '\n')
}

// ---- backend and config ---------------------------------------------------
let backend = null
let env
if (remote) {
  const key = opts.apiKeyEnv ? process.env[opts.apiKeyEnv] : resolved('api_key', null)
  if (!key) usage(`no API key: set ${opts.apiKeyEnv || 'ABX_E2B_WASM_API_KEY or E2B_API_KEY'} (or pass --api-key-env NAME)`)
  env = { ...process.env, ABX_E2B_WASM_API_KEY: key }
  if (target.apiUrl) env.ABX_E2B_WASM_API_URL = target.apiUrl
  if (target.sandboxUrl) env.ABX_E2B_WASM_SANDBOX_URL = target.sandboxUrl
  if (target.domain) env.ABX_E2B_WASM_DOMAIN = target.domain
} else {
  const { startBackend } = await import('../../host/backend.mjs')
  backend = await startBackend()
  // A clean environment: nothing from the shell reaches a local run.
  env = { ABX_E2B_WASM_API_KEY: backend.apiKey, ABX_E2B_WASM_API_URL: backend.apiUrl, ABX_E2B_WASM_SANDBOX_URL: backend.sandboxUrl }
}

const created = new Set()
const doc = JSON.parse(readFileSync(path.join(repo, 'docs', 'epp-methods.json'), 'utf8'))
const { loadProvider, startStdioProvider } = await import('../../host/reference/host.mjs')
const open = (overrides = {}) => (opts.transport === 'stdio' ? startStdioProvider(repo, { env, overrides }) : loadProvider(repo, { env, overrides }))

// ---- Ctrl-C: kill what this run created, then exit ------------------------
let interrupted = false
process.on('SIGINT', async () => {
  if (interrupted) process.exit(130) // a second Ctrl-C: give up on cleaning up
  interrupted = true
  process.stderr.write(`\ninterrupted: killing ${created.size} sandbox(es) this run created...\n`)
  try {
    // A fresh in-process client: a stdio child got the same SIGINT and is gone.
    const cleaner = await loadProvider(repo, { env })
    for (const id of created) {
      try { await cleaner.call('sandbox.kill', { sandbox_id: id }); created.delete(id) } catch (err) { process.stderr.write(`could not kill ${id}: ${err.message}\n`) }
    }
    await cleaner.close()
  } catch (err) {
    process.stderr.write(`cleanup failed: ${err.message}\n`)
  }
  if (backend) await backend.stop()
  process.exit(130)
})

// ---- run ------------------------------------------------------------------
let report
const against = remote ? (target.apiUrl || target.domain || target.sandboxUrl) : 'local backend'
process.stdout.write(`e2b-wasm contract suite — transport ${opts.transport}, ${against}\n`)
process.stdout.write(`${'case'.padEnd(COL)} ${'result'.padEnd(5)} ${'time'.padStart(9)}\n`)
try {
  if (opts.transport === 'browser') {
    const runner = path.join(repo, 'tests', 'browser', 'run-suite.mjs')
    if (!existsSync(runner)) {
      process.stderr.write('--transport browser needs tests/browser/run-suite.mjs (the browser playground\'s runner), which is not in this checkout\n')
      if (backend) await backend.stop()
      process.exit(2)
    }
    const { runSuite } = await import(pathToFileURL(runner).href)
    report = await runSuite({
      apiUrl: env.ABX_E2B_WASM_API_URL, sandboxUrl: env.ABX_E2B_WASM_SANDBOX_URL, domain: env.ABX_E2B_WASM_DOMAIN,
      apiKey: env.ABX_E2B_WASM_API_KEY, template: opts.template, only: opts.only.length ? opts.only : undefined, created, onRow: printRow,
    })
  } else {
    const client = await open()
    try {
      report = await runCases({
        client, doc, created, onRow: printRow, template: opts.template || undefined,
        only: opts.only.length ? opts.only : undefined,
        openClient: ({ api_key }) => open({ api_key }), // the case closes it
      })
    } finally {
      await client.close()
    }
  }
} finally {
  if (backend) await backend.stop()
}

for (const p of report.problems) process.stdout.write(`schema: ${p}\n`)
if (created.size) process.stdout.write(`warning: ${created.size} sandbox(es) could not be killed: ${[...created].join(', ')}\n`)
if (opts.report) writeFileSync(opts.report, JSON.stringify(report, null, 2))
process.stdout.write(`${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped\n`)
process.exitCode = report.failed ? 1 : 0
