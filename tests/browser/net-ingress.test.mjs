// sandbox.getHost(port) in a browser, plainly: Chromium resolves *.localhost
// to loopback itself, so the local backend's default domain
// (localhost:<envd port>) makes "http://" + getHost(8000) a URL a page opens
// and fetches from with no header and no resolver set up. Chromium:
// /usr/bin/chromium or $E2BW_CHROMIUM; without it this test FAILS.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'
import { launchChromium } from './chromium.mjs'

const { Sandbox } = await import('e2b')

let backend, browser, sandbox
before(async () => {
  backend = await startBackend()
  browser = await launchChromium()
})
after(async () => {
  await sandbox?.kill().catch(() => {})
  await browser?.close()
  await backend?.stop()
})

test('a page opens http://<getHost(port)> and fetches from it, like any site', { timeout: 90_000 }, async () => {
  sandbox = await Sandbox.create('base', { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl })
  await sandbox.files.write('/tmp/site/index.html', '<!doctype html><title>in the sandbox</title><p id="p">served from the sandbox</p>')
  await sandbox.files.write('/tmp/site/data.txt', 'fetched from the sandbox')
  await sandbox.commands.run('cd /tmp/site && exec python3 -m http.server 8000 --bind 0.0.0.0', { background: true })
  const url = `http://${sandbox.getHost(8000)}/`
  assert.match(url, new RegExp(`^http://8000-${sandbox.sandboxId}\\.localhost:\\d+/$`))
  const page = await browser.newPage()
  await until(async () => {
    try { return (await page.goto(url))?.status() === 200 } catch { return false }
  }, 'the page to load through the host name', 30000, 200)
  assert.equal(await page.textContent('#p'), 'served from the sandbox')
  assert.equal(await page.evaluate(async () => (await fetch('/data.txt')).text()), 'fetched from the sandbox')
  await page.close()
})
