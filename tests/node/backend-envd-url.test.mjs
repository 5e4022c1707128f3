// Each sandbox's own envd URL on the local backend (envdUrl, ours: E2B has
// no such field): it answers envd's routes with no E2b-Sandbox-Id header,
// with the same auth, reaches only its own sandbox, answers the proxy's 502
// while paused and closes its port once the sandbox is killed.
import { test, describe, before, after } from 'node:test';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import assert from 'node:assert/strict';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient } from '../../host/connect.mjs';

const T = { timeout: 60_000 };

async function create(backend, body = {}) {
  const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  return res.json;
}

// Whether process pid holds a listening TCP socket on port: its socket
// descriptors matched against the kernel's socket table. Asked of the backend
// itself, because once it frees a port any other process on the machine may
// be given it, so "connection refused" would be a race.
function listensOn(pid, port) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link = '';
    try { link = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
    const m = link.match(/^socket:\[(\d+)\]$/);
    if (m) inodes.add(m[1]);
  }
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const local = cols[1].split(':');
      if (parseInt(local[local.length - 1], 16) === port && cols[3] === '0A' && inodes.has(cols[9])) return true;
    }
  }
  return false;
}

// The client of a sandbox's own URL: never an E2b-Sandbox-Id header.
const ownClient = (sb, token = sb.envdAccessToken) =>
  envdClient({ sandboxUrl: sb.envdUrl, sandboxId: null, token });

async function runEcho(client, text) {
  const { status, messages, end } = await client.stream('process.Process/Start',
    { process: { cmd: '/bin/sh', args: ['-c', `printf %s "${text}"`] } });
  assert.equal(status, 200);
  assert.deepEqual(end, {});
  const out = messages.map((m) => m.event?.data?.stdout).filter(Boolean)
    .map((b) => Buffer.from(b, 'base64').toString()).join('');
  return out;
}

describe('per-sandbox envd URL', () => {
  let backend;
  before(async () => { backend = await startBackend(); });
  after(async () => {
    // A clean exit: every sandbox's listener closed before its connections'
    // tracker went (a sanitizer build reports anything else here).
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('create, get and list report an envdUrl of its own, not the shared sandbox_url', T, async () => {
    const sb = await create(backend);
    assert.match(sb.envdUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(sb.envdUrl, backend.sandboxUrl);
    const detail = await api(backend, 'GET', `/sandboxes/${sb.sandboxID}`);
    assert.equal(detail.json.envdUrl, sb.envdUrl);
    const list = await api(backend, 'GET', '/v2/sandboxes');
    assert.equal(list.json.find((s) => s.sandboxID === sb.sandboxID).envdUrl, sb.envdUrl);
    await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`);
  });

  test('answers /health, process.Process/Start and /files with no routing header', T, async () => {
    const sb = await create(backend);
    const health = await fetch(`${sb.envdUrl}/health`);
    assert.equal(health.status, 204);
    assert.equal(await runEcho(ownClient(sb), 'own-port'), 'own-port');
    // A file written through the process is read back through /files.
    const write = await ownClient(sb).stream('process.Process/Start',
      { process: { cmd: '/bin/sh', args: ['-c', 'printf content-of-file > /tmp/own-port.txt'] } });
    assert.deepEqual(write.end, {});
    const file = await fetch(`${sb.envdUrl}/files?path=/tmp/own-port.txt&username=user`,
      { headers: { 'X-Access-Token': sb.envdAccessToken } });
    assert.equal(file.status, 200);
    assert.equal(await file.text(), 'content-of-file');
    await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`);
  });

  test("requires the sandbox's token", T, async () => {
    const sb = await create(backend);
    const none = await ownClient(sb, null).call('process.Process/List', {});
    assert.equal(none.status, 401);
    const wrong = await ownClient(sb, 'f'.repeat(64)).call('process.Process/List', {});
    assert.equal(wrong.status, 401);
    const file = await fetch(`${sb.envdUrl}/files?path=/etc/hostname&username=user`);
    assert.equal(file.status, 401);
    const ok = await ownClient(sb).call('process.Process/List', {});
    assert.equal(ok.status, 200);
    await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`);
  });

  test("two sandboxes' URLs reach their own sandbox, whatever header is sent", T, async () => {
    const a = await create(backend);
    const b = await create(backend);
    assert.notEqual(a.envdUrl, b.envdUrl);
    for (const sb of [a, b]) {
      const w = await ownClient(sb).stream('process.Process/Start',
        { process: { cmd: '/bin/sh', args: ['-c', `printf ${sb.sandboxID} > /tmp/who`] } });
      assert.deepEqual(w.end, {});
    }
    for (const sb of [a, b]) {
      const other = sb === a ? b : a;
      // A header naming the other sandbox does not reroute the request.
      const read = await fetch(`${sb.envdUrl}/files?path=/tmp/who&username=user`,
        { headers: { 'X-Access-Token': sb.envdAccessToken, 'E2b-Sandbox-Id': other.sandboxID } });
      assert.equal(read.status, 200);
      assert.equal(await read.text(), sb.sandboxID);
      // The other sandbox's token is not this one's.
      const cross = await ownClient(sb, other.envdAccessToken).call('process.Process/List', {});
      assert.equal(cross.status, 401);
    }
    await api(backend, 'DELETE', `/sandboxes/${a.sandboxID}`);
    await api(backend, 'DELETE', `/sandboxes/${b.sandboxID}`);
  });

  test('paused answers the 502 JSON, resumed works again on the same URL', T, async () => {
    const sb = await create(backend);
    assert.equal((await api(backend, 'POST', `/sandboxes/${sb.sandboxID}/pause`)).status, 204);
    const paused = await fetch(`${sb.envdUrl}/health`);
    assert.equal(paused.status, 502);
    assert.deepEqual(await paused.json(),
      { sandboxId: sb.sandboxID, message: 'The sandbox was not found', code: 502 });
    const resumed = await api(backend, 'POST', `/sandboxes/${sb.sandboxID}/resume`, { timeout: 60 });
    assert.equal(resumed.status, 201);
    assert.equal(resumed.json.envdUrl, sb.envdUrl);
    assert.equal((await fetch(`${sb.envdUrl}/health`)).status, 204);
    await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`);
  });

  test('after kill the backend listens no more on the port, and an open stream ends', T, async () => {
    const sb = await create(backend);
    const port = Number(new URL(sb.envdUrl).port);
    assert.ok(listensOn(backend.pid, port), 'the backend listens on the sandbox\'s own port');
    const stream = await ownClient(sb).open('process.Process/Start',
      { process: { cmd: '/bin/sh', args: ['-c', 'echo up; exec sleep 600'] } });
    const first = await stream.next();
    assert.ok(first?.message?.event?.start, 'the stream started');
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`)).status, 204);
    // The stream's connection was closed with the listener: reading runs out.
    let frame;
    try {
      do { frame = await stream.next(); } while (frame && !frame.end);
    } catch { /* a reset is an end too */ }
    // The listener was closed with the sandbox, before DELETE answered.
    assert.equal(listensOn(backend.pid, port), false);
  });

  test('diskSizeMB is accepted on create and reported back', T, async () => {
    const sb = await create(backend, { diskSizeMB: 2048 });
    const detail = await api(backend, 'GET', `/sandboxes/${sb.sandboxID}`);
    assert.equal(detail.json.diskSizeMB, 2048);
    const dflt = await create(backend);
    assert.equal((await api(backend, 'GET', `/sandboxes/${dflt.sandboxID}`)).json.diskSizeMB, 1024);
    const bad = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', diskSizeMB: 0 });
    assert.equal(bad.status, 400);
    await api(backend, 'DELETE', `/sandboxes/${sb.sandboxID}`);
    await api(backend, 'DELETE', `/sandboxes/${dflt.sandboxID}`);
  });
});

describe('per-sandbox envd URL at shutdown', () => {
  test('a backend stopped with streams open on sandboxes\' own ports exits cleanly', T, async () => {
    const backend = await startBackend();
    const running = await create(backend);
    const paused = await create(backend);
    const stream = await ownClient(running).open('process.Process/Start',
      { process: { cmd: '/bin/sh', args: ['-c', 'echo up; exec sleep 600'] } });
    assert.ok((await stream.next())?.message?.event?.start, 'the stream started');
    assert.equal((await api(backend, 'POST', `/sandboxes/${paused.sandboxID}/pause`)).status, 204);
    // An idle kept-alive connection on the paused sandbox's port, too.
    assert.equal((await fetch(`${paused.envdUrl}/health`)).status, 502);
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    await assert.rejects(fetch(`${running.envdUrl}/health`));
  });
});
