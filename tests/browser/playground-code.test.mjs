// The playground's Code panel in headless Chromium against the local backend:
// a sandbox of code-interpreter-v1, cells run in its default context (state
// carries over), output drawn as it streams, a matplotlib chart as an image,
// a DataFrame as a table, HTML in a sandboxed frame, an error with its
// traceback. Screenshots go to $E2BW_BUILD/test-output/playground/code-*.png.
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { api, startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'
import { launchChromium } from './chromium.mjs'
import { layoutProblems } from './layout.mjs'
import { repoRoot, startStaticServer } from './server.mjs'

const OUT = path.join(process.env.E2BW_BUILD || path.join(repoRoot, 'build'), 'test-output', 'playground')
const WAIT = { timeout: 60000 }
const T = { timeout: 180000 }
const POOL_READY_MS = 300000

describe('the playground\'s Code panel in headless Chromium', { timeout: 900000 }, () => {
  let backend, server, browser, page
  const pageErrors = []

  const shot = (name) => page.screenshot({ path: path.join(OUT, `code-${name}.png`), fullPage: true })
  const errorsShown = () => page.locator('#errors li .text').allTextContents()
  const lastCell = () => page.locator('.cells .cell').last()
  async function runCell(code) {
    const before = await page.locator('.cells .cell').count()
    await page.fill('textarea.cell-input', code)
    await page.press('textarea.cell-input', 'Shift+Enter')
    await page.locator('.cells .cell').nth(before).waitFor(WAIT)
    return lastCell()
  }
  const finished = (cell) => cell.locator('.cell-status:not(.running)').waitFor(WAIT)

  before(async () => {
    await mkdir(OUT, { recursive: true })
    backend = await startBackend()
    // The page's create claims a pooled sandbox, whose server and kernel are
    // up: a first create of the template makes the pool (and starts its own).
    const first = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'code-interpreter-v1', timeout: 60 })
    assert.equal(first.status, 201, JSON.stringify(first.json))
    await api(backend, 'DELETE', `/sandboxes/${first.json.sandboxID}`)
    await until(async () => (await api(backend, 'GET', '/health/details')).json.warm.templates_ready >= 1, 'a pooled code-interpreter-v1 sandbox', POOL_READY_MS, 200)
    server = await startStaticServer()
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
    page.setDefaultTimeout(WAIT.timeout)
    page.on('pageerror', (err) => pageErrors.push(err.stack || String(err)))
    const fragment = new URLSearchParams({ api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl, api_key: backend.apiKey })
    await page.goto(`${server.url}/playground/index.html#${fragment}`)
    await page.locator('#connection.ok').waitFor(WAIT)
  })

  after(async () => {
    const problems = []
    for (const [what, fn] of [['Chromium', () => browser?.close()], ['static server', () => server?.close()],
      ['backend', () => backend?.stop()]]) {
      try { await fn() } catch (err) { problems.push(`${what}: ${err.message}`) }
    }
    assert.deepEqual(problems, [])
  })

  test('a code-interpreter-v1 sandbox: state carries from cell to cell, output streams in', T, async () => {
    await page.fill('#create input[name=template]', 'code-interpreter-v1')
    await page.click('#create-button')
    await page.locator('tr.sandbox.selected').waitFor(WAIT)
    await page.click('[data-tab=code]')
    await finished(await runCell('greeting = "hello"'))
    const cell = await runCell('import time\nprint(greeting, flush=True)\ntime.sleep(2)\nprint("later")\n6 * 7')
    // the first line is on screen while the cell still runs
    await cell.locator('pre.out.stdout', { hasText: 'hello' }).waitFor(WAIT)
    assert.equal(await cell.locator('.cell-status').textContent(), 'running…')
    await finished(cell)
    assert.equal(await cell.locator('pre.out.stdout').textContent(), 'hello\nlater\n')
    assert.equal(await cell.locator('.result.main pre.result-text').textContent(), '42')
    assert.match(await cell.locator('.cell-count').textContent(), /^\[\d+\]$/)
    assert.deepEqual(await errorsShown(), [])
  })

  test('a chart, a table and HTML are drawn as such', T, async () => {
    const cell = await runCell('import matplotlib.pyplot as plt\nimport pandas as pd\nfrom IPython.display import HTML, display\n' +
      'plt.plot([1, 2, 3, 4], [1, 4, 9, 16])\nplt.title("squares")\nplt.show()\n' +
      'display(HTML("<p id=\'from-the-cell\'>some <b>HTML</b></p><script>parent.hacked = 1</script>"))\n' +
      'pd.DataFrame({"n": [1, 2, 3], "square": [1, 4, 9]})')
    await finished(cell)
    assert.equal(await cell.locator('.cell-status').textContent(), 'done')
    const img = cell.locator('img.result-image')
    await img.waitFor(WAIT)
    const size = await img.evaluate((el) => ({ w: el.naturalWidth, h: el.naturalHeight, src: el.src.slice(0, 22) }))
    assert.equal(size.src, 'data:image/png;base64,')
    assert.ok(size.w > 100 && size.h > 100, `a drawn chart: ${JSON.stringify(size)}`)
    assert.deepEqual(await cell.locator('table.result-table th').allTextContents(), ['n', 'square'])
    assert.deepEqual(await cell.locator('table.result-table tbody tr').first().locator('td').allTextContents(), ['1', '1'])
    assert.equal(await cell.locator('table.result-table tbody tr').count(), 3)
    const frame = cell.locator('iframe.result-html')
    assert.equal(await frame.getAttribute('sandbox'), '')
    const inner = page.frameLocator('.cells .cell >> nth=-1 >> iframe.result-html')
    assert.equal(await inner.locator('#from-the-cell').textContent(), 'some HTML')
    assert.equal(await page.evaluate(() => window.hacked), undefined, 'the cell\'s script never ran in the page')
    assert.deepEqual(await layoutProblems(page, {}), [])
    await frame.scrollIntoViewIfNeeded()
    await shot('chart-table-html')
  })

  test('an error shows its name, value and traceback; the next cell runs', T, async () => {
    const cell = await runCell('def f():\n    return undefined_name\nf()')
    await finished(cell)
    assert.equal(await cell.locator('.cell-status').textContent(), 'NameError')
    assert.equal(await cell.locator('.error-name').textContent(), "NameError: name 'undefined_name' is not defined")
    assert.match(await cell.locator('pre.traceback').textContent(), /return undefined_name/)
    await cell.locator('pre.traceback').scrollIntoViewIfNeeded()
    await shot('error')
    const next = await runCell('greeting.upper()')
    await finished(next)
    assert.equal(await next.locator('.result.main pre.result-text').textContent(), 'HELLO')
    assert.deepEqual(pageErrors, [])
  })
})
