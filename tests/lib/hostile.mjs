// hostile.mjs — what the hostile-client and hostile-sandbox tests
// (tests/node/backend-hostile-*.test.mjs) measure an attack with: the
// backend's RSS, the control plane's /health while the attack runs, raw
// bodies pushed without finishing, and commands in a sandbox.
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dataOf } from '../../host/connect.mjs'
import { sleep } from '../../host/wait.mjs'

export const MiB = 1024 * 1024

export function rssKiB(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])
}

// envd's v1_ signature, computed the way the SDK does (docs/e2b-protocol-notes.md, "Files").
export function sign(p, op, user, token, exp) {
  const raw = `${p}:${op}:${user ?? ''}:${token}${exp === undefined ? '' : `:${exp}`}`
  return 'v1_' + createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')
}

// GET /health on a fresh connection: its time in ms, or Infinity when it
// got no answer within timeoutMs.
export function healthMs(url, timeoutMs = 10000) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint()
    const req = http.get(`${url}/health`, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode === 204 ? Number(process.hrtime.bigint() - t0) / 1e6 : Infinity))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(Infinity))
  })
}

// Polls the control plane's /health back to back until stop() is called,
// while an attack runs; stop() resolves to { count, countDuring,
// unanswered, peakRss }.
// No figure is a time: count is how many calls were answered (a loop the
// attack holds for long lets few through), unanswered how many got no
// answer within healthMs' deadline; pid (optional) samples the backend's
// peak RSS in KiB; during (optional) a function that says whether the
// attack is under way: countDuring counts the calls sent and answered while
// it was.
export function watchBackend(apiUrl, pid, during = () => false) {
  let running = true
  let count = 0
  let unanswered = 0
  let countDuring = 0
  let peakRss = pid ? rssKiB(pid) : 0
  // Ends by itself once the backend is gone, so that a test that failed
  // before calling the stop function still lets the process exit.
  const alive = () => { try { return !pid || rssKiB(pid) > 0 } catch { return false } }
  const loop = (async () => {
    while (running && alive()) {
      const sentDuring = during()
      const ms = await healthMs(apiUrl)
      if (ms === Infinity) unanswered++
      else count++
      if (ms !== Infinity && sentDuring && during()) countDuring++
      if (pid && alive()) peakRss = Math.max(peakRss, rssKiB(pid))
      await sleep(20)
    }
  })()
  const rss = pid ? setInterval(() => { if (alive()) peakRss = Math.max(peakRss, rssKiB(pid)) }, 50) : null
  rss?.unref()
  return async () => {
    running = false
    await loop
    if (rss) clearInterval(rss)
    return { count, countDuring, unanswered, peakRss }
  }
}

// Sends head, then up to bodyBytes of a body in 1 MiB pieces (chunked:
// framed as chunks) without ever finishing it (the head promises more).
// Stops once an answer has come and a little more was pushed, or once the
// connection is closed. Resolves to { status, answer, sent }: status is the
// answer's HTTP status (null if none came), sent the body bytes written.
export function pushBody(url, head, bodyBytes, { chunked = false, afterAnswer = 4 * MiB, overallMs = 30000 } = {}) {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url)
    const sock = net.connect(Number(port), hostname)
    const data = Buffer.alloc(MiB, 0x61)
    const piece = chunked ? Buffer.concat([Buffer.from(`${MiB.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data
    let answer = ''
    let sent = 0
    let answeredAt = null
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      sock.destroy()
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(answer)
      resolve({ status: m ? Number(m[1]) : null, answer, sent })
    }
    const timer = setTimeout(finish, overallMs)
    const push = () => {
      while (!done && sent < bodyBytes) {
        if (answeredAt !== null && sent - answeredAt >= afterAnswer) return finish()
        sent += data.length
        // A write the kernel takes at once drains on the next tick, so a chain
        // of drains would never let the loop read the answer: go round it.
        if (!sock.write(piece)) return sock.once('drain', () => setImmediate(push))
      }
      if (answeredAt !== null) finish()
    }
    sock.on('data', (d) => {
      answer += d.toString('latin1')
      if (answeredAt === null && answer.includes('\r\n\r\n')) answeredAt = sent
    })
    sock.on('error', finish)
    sock.on('close', finish)
    sock.on('connect', () => { sock.write(head); push() })
  })
}

// Runs a shell command in the sandbox (an envdClient) and returns its stdout.
export async function sh(envd, script, user) {
  const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', script] } },
    user ? { user } : undefined)
  const end = r.messages.find((m) => m.event?.end)?.event.end
  assert.ok(end?.exited && !end.exitCode, `command failed: ${script}: ${JSON.stringify(r.messages).slice(0, 500)}`)
  return dataOf(r.messages).stdout.toString()
}

// The first "port N" a live Start stream's output prints.
export async function readPort(stream) {
  let out = ''
  for (;;) {
    const f = await stream.next()
    assert.ok(f && !f.end, `server ended early: ${out} ${JSON.stringify(f?.message)}`)
    const b64 = f.message.event?.data?.stdout ?? f.message.event?.data?.stderr
    if (b64) out += Buffer.from(b64, 'base64').toString()
    const m = /port (\d+)/.exec(out)
    if (m) return Number(m[1])
  }
}
