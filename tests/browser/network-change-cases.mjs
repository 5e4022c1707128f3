// The case behind network-change.test.mjs, run inside the "host" namespace
// of a test world (host/world.mjs): the backend, its sandboxes,
// Chromium and the control link all live there, where the only route leads
// to the world, and no address of the machine's own namespace changes.
//
// A sandbox's create and delete are no "network change" to a browser on the
// same host. Chromium fails the connections it is opening with
// ERR_NETWORK_CHANGED whenever an address appears or goes in its network
// namespace (CI once lost a page's DELETE that way while the backend made
// and removed sandbox interfaces), so the backend's end of a sandbox's veth
// carries routes, not an address (backend/net/net_link.c). Chromium's own
// net log is the witness: no NETWORK_IP_ADDRESSES_CHANGED while sandboxes
// come and go, and one as soon as the test itself adds an address (the
// control that shows the log would have told).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { chromium } from 'playwright-core'
import { api, startBackend } from '../../host/backend.mjs'
import { CHROMIUM, CHROMIUM_ARGS, launchChromium } from './chromium.mjs'

const CONTROL_LINK = 'e2bwnc0' // the world's host namespace is this test's alone
const CONTROL_ADDRESS = '198.18.255.1/32' // RFC 2544 benchmarking space; nothing is sent to it

let backend
let dir
before(async () => {
  await launchChromium().then((b) => b.close()) // the same clear error as every browser test when Chromium is missing
  backend = await startBackend()
  dir = mkdtempSync(path.join(tmpdir(), 'e2bw-netlog-'))
})
after(async () => {
  try { execFileSync('ip', ['link', 'del', CONTROL_LINK], { stdio: 'ignore' }) } catch {} // gone already
  await backend?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const ip = (...args) => execFileSync('ip', args, { encoding: 'utf8' })

// The IP address change events of a net log, each with its wall-clock time.
function addressChanges(logPath) {
  const log = JSON.parse(readFileSync(logPath, 'utf8'))
  const type = log.constants.logEventTypes.NETWORK_IP_ADDRESSES_CHANGED
  assert.equal(typeof type, 'number', 'this Chromium logs NETWORK_IP_ADDRESSES_CHANGED')
  const offset = Number(log.constants.timeTickOffset)
  return log.events.filter((e) => e.type === type).map((e) => offset + Number(e.time))
}

test('sandboxes come and go without an address change in the backend\'s namespace', { timeout: 120000 }, async () => {
  const logPath = path.join(dir, 'netlog.json')
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, `--log-net-log=${logPath}`] })
  let controlAt
  try {
    const page = await browser.newPage()
    await page.goto('about:blank')
    const prefix = `e2b${backend.pid.toString(36)}-`
    for (let round = 0; round < 3; round++) {
      const created = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })
      assert.equal(created.status, 201, JSON.stringify(created.json))
      // Not vacuous: the sandbox has its veth in this namespace, and that end has no address.
      const links = ip('-o', 'link', 'show').split('\n').map((l) => l.split(': ')[1]?.split('@')[0]).filter((n) => n?.startsWith(prefix))
      assert.ok(links.length > 0, `a sandbox interface ${prefix}* exists: ${ip('-o', 'link', 'show')}`)
      // One listing of every address (a link of a sandbox deleted a moment ago may vanish meanwhile).
      const addressed = ip('-o', 'addr', 'show').split('\n').filter((l) => l.split(/\s+/)[1]?.startsWith(prefix))
      assert.deepEqual(addressed, [], 'no sandbox interface has an address')
      const killed = await api(backend, 'DELETE', `/sandboxes/${created.json.sandboxID}`)
      assert.equal(killed.status, 204)
    }
    await new Promise((resolve) => setTimeout(resolve, 500)) // a namespace's links go a moment after its last process
    controlAt = Date.now()
    ip('link', 'add', CONTROL_LINK, 'type', 'veth', 'peer', 'name', `${CONTROL_LINK}p`)
    ip('addr', 'add', CONTROL_ADDRESS, 'dev', CONTROL_LINK)
    ip('link', 'set', CONTROL_LINK, 'up')
    await new Promise((resolve) => setTimeout(resolve, 1000))
  } finally {
    try { ip('link', 'del', CONTROL_LINK) } catch {}
    await browser.close() // the log is complete once Chromium exits
  }
  const changes = addressChanges(logPath)
  const before = changes.filter((t) => t < controlAt - 50)
  assert.deepEqual(before, [], 'Chromium saw an address change while sandboxes were created and deleted')
  assert.ok(changes.length > before.length, 'the control address was seen: the log tells address changes')
})
