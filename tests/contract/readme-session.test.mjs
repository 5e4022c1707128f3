// docs/stdio-session.md's "A session over stdio (NDJSON), by hand", as a user pastes it:
// the five request lines of its first json block go to
// `node js-shim/epp-stdio.mjs` (the URLs and key swapped for this test's
// backend, SANDBOX_ID for the id the create answered), and each answer must
// be the page's answer line of the same id, but for what differs from run
// to run (ids, times) and the envd port in `domain`: same members, and the
// same values for everything else.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startBackend } from '../../host/backend.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The first two json blocks after the page's heading: the requests and the answers, as lines. */
function readmeSession(domain) {
  const text = readFileSync(path.join(root, 'docs', 'stdio-session.md'), 'utf8')
  const section = text.split('\n## A session over stdio (NDJSON), by hand\n')[1]
  assert.ok(section, 'docs/stdio-session.md has its NDJSON session')
  const blocks = [...section.split('\n## ')[0].matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1].trim().split('\n'))
  assert.equal(blocks.length, 2, 'a block of requests and one of answers')
  // The backend's domain (getHost's) names its envd port: the page's is 3001.
  return { requests: blocks[0], answers: blocks[1].map((l) => JSON.parse(l.replaceAll('"localhost:3001"', JSON.stringify(domain)))) }
}

// Members whose values change from run to run: the sandbox's id and times.
const VARYING = new Set(['sandbox_id', 'created_at', 'expires_at'])

/** Same members throughout; equal values except VARYING's (whose types must still agree). */
function assertLike(actual, documented, where) {
  if (documented === null || typeof documented !== 'object' || Array.isArray(documented)) {
    assert.deepEqual(actual, documented, where)
    return
  }
  assert.ok(actual !== null && typeof actual === 'object', `${where}: ${JSON.stringify(actual)}`)
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(documented).sort(), `${where}: members`)
  for (const key of Object.keys(documented)) {
    if (VARYING.has(key)) assert.equal(typeof actual[key], typeof documented[key], `${where}.${key}`)
    else assertLike(actual[key], documented[key], `${where}.${key}`)
  }
}

let backend
before(async () => { backend = await startBackend() })
after(async () => { await backend.stop() })

test('docs/stdio-session.md\'s NDJSON session, pasted line by line, answers what it shows', async () => {
  const { requests, answers } = readmeSession(`localhost:${new URL(backend.sandboxUrl).port}`)
  assert.equal(requests.length, 5)
  const child = spawn(process.execPath, [path.join(root, 'js-shim', 'epp-stdio.mjs')], { env: { PATH: process.env.PATH }, stdio: 'pipe' })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const got = []
  const waiters = []
  readline.createInterface({ input: child.stdout }).on('line', (line) => { got.push(JSON.parse(line)); waiters.splice(0).forEach((w) => w()) })
  const answerTo = async (id) => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const found = got.find((m) => m.id === id)
      if (found) return found
      await new Promise((resolve) => { waiters.push(resolve); setTimeout(resolve, 200) })
    }
    throw new Error(`no answer to ${id}; stderr: ${stderr}`)
  }
  try {
    let sandboxId = null
    for (const [i, line] of requests.entries()) {
      const pasted = line
        .replaceAll('my-local-key', backend.apiKey)
        .replaceAll('http://127.0.0.1:3000', backend.apiUrl)
        .replaceAll('http://127.0.0.1:3001', backend.sandboxUrl)
        .replaceAll('SANDBOX_ID', sandboxId ?? 'SANDBOX_ID')
      assert.ok(i < 2 || sandboxId, 'the create answered before the lines that need its id')
      child.stdin.write(pasted + '\n')
      const id = JSON.parse(line).id
      const answer = await answerTo(id)
      assertLike(answer, answers.find((a) => a.id === id), `answer ${id}`)
      if (id === 2) sandboxId = answer.result.sandbox_id
    }
    assert.equal(got.length, requests.length, 'one answer per line, nothing else')
    assert.ok(!JSON.stringify(got).includes(backend.apiKey) && !stderr.includes(backend.apiKey), 'the key is printed nowhere')
  } finally {
    child.stdin.end()
    await new Promise((resolve) => child.on('exit', resolve))
  }
})
