// The command lines of playground/serve.mjs and tests/browser/server.mjs
// (serve-cli.mjs): a wrong option, a bad port or a port in use is one line on
// stderr and exit status 2, never a stack trace; --backend never prints the
// key, and the page gets it from the server instead (only under the server's
// own loopback Host name).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { describe, test } from 'node:test'
import { until } from '../../host/wait.mjs'
import { launchChromium } from './chromium.mjs'
import { repoRoot } from './server.mjs'

const PROGRAMS = ['playground/serve.mjs', 'tests/browser/server.mjs']
const WAIT = { timeout: 20000 }

// Runs a program to its end (killed after 20 s, which fails the test): { code, signal, stdout, stderr }.
function run(program, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, program), ...args],
      { stdio: ['pipe', 'pipe', 'pipe'], timeout: 20000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

// A loopback port something listens on, for as long as the test holds it.
async function busyPort() {
  const srv = net.createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  return { port: srv.address().port, release: () => new Promise((resolve) => srv.close(resolve)) }
}

function assertOneLineError(result, program, pattern) {
  assert.deepEqual({ code: result.code, signal: result.signal }, { code: 2, signal: null }, result.stderr)
  assert.equal(result.stdout, '', 'nothing on stdout: no URL is printed')
  const lines = result.stderr.split('\n')
  assert.equal(lines.length, 2, `one line on stderr: ${JSON.stringify(result.stderr)}`)
  assert.equal(lines[1], '')
  assert.ok(lines[0].startsWith(`${program}: `), lines[0])
  assert.match(lines[0], pattern)
  assert.doesNotMatch(result.stderr, /^\s+at |Error:|node:internal/m, 'no stack trace')
}

for (const program of PROGRAMS) {
  describe(`${program}: its command line`, () => {
    for (const [args, pattern] of [
      [['--port', 'abc'], /--port takes a port number from 0 to 65535 .*not 'abc'; see --help$/],
      [['--port', '70000'], /--port takes a port number from 0 to 65535 .*not '70000'; see --help$/],
      [['--port=-1'], /--port takes a port number .*not '-1'; see --help$/],
      [['--port'], /'--port <value>' argument missing; see --help$/],
      [['--bogus'], /Unknown option '--bogus'.*; see --help$/],
      [['--backend', 'extra'], /Unexpected argument 'extra'.*; see --help$/],
    ]) {
      test(`${args.join(' ')}: one line, exit status 2`, async () => {
        assertOneLineError(await run(program, args), program, pattern)
      })
    }

    test('a port in use: one line, exit status 2', async () => {
      const busy = await busyPort()
      try {
        const result = await run(program, ['--port', String(busy.port)])
        assertOneLineError(result, program, new RegExp(`port ${busy.port} on 127\\.0\\.0\\.1 is already in use; pick another with --port N`))
      } finally {
        await busy.release()
      }
    })

    test('--help: the usage, exit status 0', async () => {
      const result = await run(program, ['--help'])
      assert.equal(result.code, 0)
      assert.match(result.stdout, new RegExp(`^usage: node ${program} \\[--port N\\] \\[--backend\\]\\n`))
      assert.equal(result.stderr, '')
    })
  })
}

// GET with a chosen Host header (fetch does not let a caller set it).
function getWithHost(url, host) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { Host: host } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    }).on('error', reject)
  })
}

describe('tests/browser/server.mjs --backend', () => {
  test('prints no key; the demo page fetches it from the server and runs a sandbox through its life', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'tests/browser/server.mjs'), '--backend'],
      { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    let browser
    try {
      const url = await until(() => stdout.match(/^demo page: (http:\/\/\S+)$/m)?.[1], 'the demo page URL')
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/tests\/browser\/page\.html\?local$/)
      const endpoint = new URL('local-backend.json', url)
      const given = await (await fetch(endpoint)).json()
      assert.match(given.api_key, /\S{16}/)
      assert.match(given.api_url, /^http:\/\/127\.0\.0\.1:\d+$/)
      // A DNS name rebound to 127.0.0.1 is another origin to the browser: refused.
      assert.equal(await getWithHost(endpoint, `rebound.example:${endpoint.port}`), 403)
      assert.equal(await getWithHost(endpoint, `localhost:${endpoint.port}`), 200)

      browser = await launchChromium()
      const page = await browser.newPage()
      await page.goto(url)
      await page.waitForFunction((key) => document.getElementById('api_key').value === key, given.api_key, WAIT)
      assert.equal(await page.inputValue('#api_url'), given.api_url)
      await page.click('#demo button[type=submit]')
      await page.waitForFunction(() => window.e2bw.logLines.includes('done'), null, WAIT)
      const lines = await page.evaluate(() => window.e2bw.logLines)
      assert.ok(lines.some((l) => /^sandbox\.kill → .*"killed":true/.test(l)), lines.join('\n'))
      assert.ok(!lines.some((l) => l.startsWith('stopped:')), lines.join('\n'))
      assert.ok(!stdout.includes(given.api_key) && !stderr.includes(given.api_key), 'the key is printed nowhere')
    } finally {
      await browser?.close()
      child.stdin.end()
    }
    assert.deepEqual(await exited, { code: 0, signal: null })
    assert.match(stdout, /\nstopped the demo page server and the local backend \(exit 0\), which removed every sandbox it had and its state directory\n$/)
  })
})

describe('playground/serve.mjs --backend', () => {
  test('Ctrl-C stops the server and the backend, saying what was cleaned up', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'playground/serve.mjs'), '--backend'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d) => { stdout += d })
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    const api = await until(() => stdout.match(/^local backend: api (http:\/\/\S+),/m)?.[1], 'the backend\'s URL')
    const url = await until(() => stdout.match(/^playground: (http:\/\/\S+)$/m)?.[1], 'the playground\'s URL')
    const { api_key: key } = await (await fetch(new URL('local-backend.json', url))).json()
    const created = await fetch(`${api}/v2/sandboxes`, { method: 'POST', headers: { 'X-API-Key': key }, body: JSON.stringify({ templateID: 'base' }) })
    assert.equal(created.status, 201)
    child.kill('SIGINT')
    assert.deepEqual(await exited, { code: 0, signal: null })
    assert.match(stdout, /\nstopped the playground server and the local backend \(exit 0\), which removed every sandbox it had and its state directory\n$/)
    await assert.rejects(fetch(`${api}/health`), 'the backend is gone')
  })
})
