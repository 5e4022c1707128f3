// run-suite.mjs — the contract suite (tests/contract/cases.mjs) inside a
// Chromium page: the playground page is opened, it loads the plugin as it
// always does (playground/client.mjs: provider.mjs → dispatcher → core.wasm,
// the browser's own fetch), and the cases run there through the browser-usable
// host of tests/contract/epp-client.mjs. Rows come back to Node as each case
// ends; so do the ids of sandboxes created and killed, so that an interrupted
// run (suite.mjs's Ctrl-C) can still kill them.
//
//   import { runSuite } from './run-suite.mjs'
//   const report = await runSuite({ apiUrl, sandboxUrl, domain, apiKey, template, only, created, onRow })
//   // report: as runCases (cases.mjs): { rows, passed, failed, skipped, problems },
//   // and diagnostics: Chromium's failed requests and console errors (queries cut)
//
// The features the page's host allows are those abx-provider.toml declares,
// as with the reference host. `node tests/contract/suite.mjs --transport browser`
// calls this.
import { repoRoot, startStaticServer } from './server.mjs'
import { launchChromium } from './chromium.mjs'
import { loadManifest } from '../../host/reference/manifest.mjs'

const PAGE = '/playground/index.html'

export async function runSuite({ apiUrl, sandboxUrl, domain, apiKey, template, only, created = new Set(), onRow } = {}) {
  if (!apiKey) throw new Error('runSuite: no API key')
  const manifest = await loadManifest(repoRoot)
  const config = { api_key: apiKey }
  if (apiUrl) config.api_url = apiUrl
  if (sandboxUrl) config.sandbox_url = sandboxUrl
  if (domain) config.domain = domain

  const server = await startStaticServer()
  let browser = null
  try {
    browser = await launchChromium()
    const page = await browser.newPage()
    const pageErrors = []
    page.on('pageerror', (err) => pageErrors.push(String(err.stack || err)))
    // What Chromium says of a request that failed (reset, CORS, aborted) and
    // its console errors, for a failed case's diagnosis; queries are cut,
    // since upload links carry their token there.
    const diagnostics = []
    const cut = (text) => String(text).replace(/\?[^\s'"]*/g, '?…')
    page.on('requestfailed', (req) => diagnostics.push(`${req.method()} ${cut(req.url())}: ${req.failure()?.errorText}`))
    page.on('console', (msg) => { if (msg.type() === 'error') diagnostics.push(`console: ${cut(msg.text())}`) })
    await page.exposeFunction('suiteRow', (row) => onRow?.(row))
    await page.exposeFunction('suiteCreated', (op, id) => (op === 'add' ? created.add(id) : created.delete(id)))
    const res = await page.goto(server.url + PAGE)
    if (res.status() !== 200) throw new Error(`the playground page answered HTTP ${res.status()}`)
    await page.waitForFunction(() => window.playground?.ready === true, null, { timeout: 30000 })
    const report = await page.evaluate(async ({ config, declared, template, only }) => {
      const [{ openDispatcher }, { createEppClient }, { runCases }] = await Promise.all([
        import('/playground/client.mjs'), import('/tests/contract/epp-client.mjs'), import('/tests/contract/cases.mjs')])
      const doc = await (await fetch('/docs/epp-methods.json')).json()
      const open = async (overrides = {}) =>
        createEppClient({ dispatcher: await openDispatcher(), config: { ...config, ...overrides }, declared })
      // A Set that tells Node what it holds.
      const ids = new Set()
      const created = {
        add: (id) => { ids.add(id); window.suiteCreated('add', id); return created },
        delete: (id) => { window.suiteCreated('delete', id); return ids.delete(id) },
        has: (id) => ids.has(id),
        get size() { return ids.size },
        [Symbol.iterator]: () => ids[Symbol.iterator](),
      }
      const client = await open()
      try {
        return await runCases({
          client, doc, created, template: template || undefined, only: only || undefined,
          onRow: (row) => window.suiteRow(row),
          openClient: ({ api_key }) => open({ api_key }), // the case closes it
        })
      } finally {
        await client.close()
      }
    }, { config, declared: manifest.features.supported, template, only })
    report.diagnostics = diagnostics
    if (pageErrors.length) {
      report.failed += 1
      report.problems.push(`uncaught exceptions in the page: ${pageErrors.join(' | ')}`)
    }
    return report
  } finally {
    if (browser) await browser.close().catch(() => {})
    await server.close()
  }
}
