// The local backend against a hostile sandbox (issue 18, items 3 and 13):
// what a sandbox's root can do to the backend from inside, scaled down and
// measured without timings (bytes a process got to write, a listing that
// ends within a generous deadline). docs/local-backend.md, "Threat model",
// describes each defence.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startBackend, api } from '../../host/backend.mjs'
import { envdClient } from '../lib/connect.mjs'
import { until, sleep } from '../lib/wait.mjs'
import { MiB, sh, readPort, watchBackend } from '../lib/hostile.mjs'

const T = { timeout: 120_000 }

const probe = await startBackend()
const skip = probe.isolation === 'full' ? false
  : `needs full sandbox isolation; the backend runs with isolation "${probe.isolation}"`
await probe.stop()

describe('a hostile sandbox', { skip }, () => {
  let backend
  let sb
  let envd

  before(async () => {
    backend = await startBackend()
    sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 600 })).json
    envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
  })
  after(async () => {
    const { code } = await backend.stop()
    assert.equal(code, 0, backend.stderr())
  })

  test('item 13: output nobody reads is not read: the writer waits on its pipe until a stream takes it again', T, async () => {
    // Writes without end and keeps count of what it got written in /tmp/written.
    const writer = [
      'import os,sys',
      'print("port 1", flush=True)',
      'block=b"x"*65536; n=0',
      'while True:',
      '  n+=os.write(1, block)',
      '  if n % (1<<20) == 0: open("/tmp/written.tmp","w").write(str(n)); os.rename("/tmp/written.tmp","/tmp/written")',
    ].join('\n')
    const first = await envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-u', '-c', writer] } })
    const pid = (await first.next()).message.event.start.pid
    await readPort(first)
    let taking = true
    const drained = (async () => { while (taking && await first.next()); })()
    const written = async () => Number((await sh(envd, 'cat /tmp/written 2>/dev/null || echo 0')).trim())
    await until(async () => (await written()) >= 4 * MiB, 'the writer is writing')
    taking = false
    first.cancel()
    await drained.catch(() => {})
    // Once the stream is gone the backend stops reading: the pipe (64 KiB)
    // and what was in flight fill, then the writer waits. The old code read
    // and dropped it all, as fast as the writer could go (45% of a core).
    await sleep(500)
    const settled = await written()
    await sleep(1500)
    const later = await written()
    assert.ok(later - settled <= 2 * MiB, `${((later - settled) / MiB).toFixed(0)} MiB were written with nobody reading`)
    // A stream that takes it again lets the writer go on: backpressure, not a stop.
    const again = await envd.open('process.Process/Connect', { process: { pid } })
    let got = 0
    const reading = (async () => {
      for (let f; (f = await again.next()) && got < 16 * MiB;) got += f.message?.event?.data?.stdout?.length ?? 0
    })()
    await until(async () => (await written()) >= later + 8 * MiB, 'the writer goes on once a stream reads')
    again.cancel()
    await reading.catch(() => {})
    await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' })
  })

  test('item 3: the account files are read once per listing: 20,000 entries with 1 MiB /etc/passwd and /etc/group', T, async () => {
    // Root grows both files to about 1 MiB (still under the 1 MiB bound
    // on what is read), then makes 20,000 files owned by many uids.
    await sh(envd, [
      'cp /etc/passwd /tmp/passwd.orig; cp /etc/group /tmp/group.orig',
      'python3 - <<EOF',
      'import os',
      'with open("/etc/passwd","a") as f:',
      '  for i in range(24000): f.write("u%d:x:%d:%d::/home/u%d:/bin/sh\\n" % (i, 20000+i, 20000+i, i))',
      'with open("/etc/group","a") as f:',
      '  for i in range(50000): f.write("g%d:x:%d:\\n" % (i, 20000+i))',
      'os.makedirs("/tmp/many", exist_ok=True)',
      'for i in range(20000):',
      '  p="/tmp/many/f%05d" % i; open(p,"w").close(); os.chown(p, 20000+i%24000, 20000+i%50000)',
      'EOF',
      'stat -c %s /etc/passwd /etc/group',
    ].join('\n'), 'root')
    const stop = watchBackend(backend.apiUrl)
    // A generous deadline (the old code took 66 s; this takes well under one).
    const res = await Promise.race([envd.call('filesystem.Filesystem/ListDir', { path: '/tmp/many', depth: 1 }),
      sleep(30000).then(() => ({ status: 'no answer within 30 s', text: '' }))])
    const seen = await stop()
    assert.equal(res.status, 200, res.text.slice(0, 300))
    assert.equal(res.json.entries.length, 20000)
    const f = res.json.entries.find((e) => e.name === 'f00007')
    assert.equal(f.owner, 'u7')
    assert.equal(f.group, 'g7')
    // The old code read both files for every entry: 66 s for this listing,
    // and /health waited 5.5 s meanwhile. Within the deadline below, a call
    // waits for a few slices of the listing at most.
    assert.equal(seen.unanswered, 0, '/health went unanswered during the listing')
    await sh(envd, 'cp /tmp/passwd.orig /etc/passwd; cp /tmp/group.orig /etc/group; rm -rf /tmp/many', 'root')
  })
})
