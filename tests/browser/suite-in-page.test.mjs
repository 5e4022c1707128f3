// The contract suite (tests/contract/cases.mjs) run inside the playground page
// in headless Chromium, against the local backend: what
// `node tests/contract/suite.mjs --transport browser` does.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { loadManifest } from '../../host/reference/manifest.mjs'
import { startBackend } from '../../host/backend.mjs'
import { CASES, KNOWN_FEATURES } from '../contract/cases.mjs'
import { runSuite } from './run-suite.mjs'
import { repoRoot } from './server.mjs'

let backend
before(async () => { backend = await startBackend() })
after(async () => { await backend?.stop() })

test('the contract cases pass in the page; only undeclared features are skipped', async () => {
  const declared = (await loadManifest(repoRoot)).features.supported
  const created = new Set()
  const streamed = []
  const report = await runSuite({ apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, apiKey: backend.apiKey,
    created, onRow: (row) => streamed.push(row.case) })
  const failed = report.rows.filter((r) => r.status === 'failed').map((r) => `${r.case}: ${r.error}`)
  // A failure shows what Chromium and the backend saw (no key in either).
  const seen = () => `\nChromium: ${report.diagnostics.join('\n') || '(nothing)'}\nbackend stderr: ${backend.stderr().slice(-4000)}`
  assert.deepEqual(failed, [], `failed cases${failed.length ? seen() : ''}`)
  assert.deepEqual(report.problems, [], 'schema problems in the page\'s EPP traffic')
  assert.equal(report.failed, 0)
  assert.deepEqual(report.rows.map((r) => r.case), CASES.map((c) => c.name), 'every case, in order')
  assert.deepEqual(streamed, CASES.map((c) => c.name), 'rows reach Node as each case ends')
  const allDeclared = Object.keys(KNOWN_FEATURES).every((f) => declared.includes(f))
  for (const row of report.rows.filter((r) => r.status === 'skipped')) {
    // The E8004 case needs an undeclared feature to ask for: none, once every feature is declared.
    if (row.case === 'undeclared feature is E8004' && allDeclared) continue
    const missing = row.features.filter((f) => !declared.includes(f))
    assert.ok(missing.length > 0, `${row.case} was skipped although its features are declared: ${row.error}`)
  }
  assert.equal(report.passed + report.skipped, CASES.length)
  assert.equal(created.size, 0, 'every sandbox the run created was killed')
  assert.ok(!JSON.stringify(report).includes(backend.apiKey), 'the key appears nowhere in the report')
})
