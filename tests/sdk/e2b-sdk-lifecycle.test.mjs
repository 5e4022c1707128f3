// The official e2b JS SDK (2.51) against the local backend: proof that the
// backend speaks the control-plane protocol the real client expects
// (docs/e2b-protocol-notes.md, "The official SDK against another backend"). Options are passed explicitly; ambient
// E2B_* variables are cleared so they cannot redirect or alter the SDK.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startBackend } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, SandboxNotFoundError, AuthenticationError } = await import('e2b');

describe('official e2b SDK lifecycle', () => {
  let backend;
  let opts;
  const tag = `sdk-${process.pid}-${Date.now()}`;

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 15000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key must never be logged');
  });

  test('create → getInfo → list → setTimeout → pause → connect → kill', async () => {
    const before = Date.now();
    const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 120_000, metadata: { suite: tag, role: 'main' }, envs: { FOO: 'bar' } });
    const afterCreate = Date.now();
    assert.match(sandbox.sandboxId, /^[a-z0-9]{20}$/);
    assert.ok(existsSync(path.join(backend.stateDir, 'sandboxes', sandbox.sandboxId)));

    const info = await sandbox.getInfo();
    assert.equal(info.sandboxId, sandbox.sandboxId);
    assert.equal(info.templateId, 'base');
    assert.deepEqual(info.metadata, { suite: tag, role: 'main' });
    assert.equal(info.state, 'running');
    assert.equal(info.envdVersion, '0.6.13');
    assert.equal(info.cpuCount, 2);
    assert.equal(info.memoryMB, 512);
    assert.ok(info.startedAt instanceof Date && info.endAt instanceof Date);
    assert.ok(info.startedAt.getTime() >= before && info.startedAt.getTime() <= afterCreate);
    assert.equal(info.endAt.getTime() - info.startedAt.getTime(), 120_000);
    assert.deepEqual(info.lifecycle, { onTimeout: 'kill', autoResume: false });

    const paginator = Sandbox.list({ ...opts, query: { metadata: { suite: tag } } });
    const page = await paginator.nextItems();
    assert.deepEqual(page.map((s) => s.sandboxId), [sandbox.sandboxId]);
    assert.deepEqual(page[0].metadata, { suite: tag, role: 'main' });
    assert.equal(page[0].state, 'running');
    assert.equal(paginator.hasNext, false);

    const tBefore = Date.now();
    await sandbox.setTimeout(600_000);
    const tAfter = Date.now();
    const extended = (await sandbox.getInfo()).endAt.getTime();
    assert.ok(extended >= tBefore + 600_000 && extended <= tAfter + 600_000, 'setTimeout moved endAt to now + 600 s');

    assert.equal(await sandbox.pause(), true);
    assert.equal((await Sandbox.getInfo(sandbox.sandboxId, opts)).state, 'paused');
    assert.equal(await sandbox.pause(), false, 'already paused: 409 → false');
    assert.equal(await Sandbox.pause(sandbox.sandboxId, opts), false);
    assert.equal(await sandbox.isRunning(), false, 'envd /health answers 502 for a paused sandbox');
    const pausedPage = await Sandbox.list({ ...opts, query: { metadata: { suite: tag }, state: ['paused'] } }).nextItems();
    assert.deepEqual(pausedPage.map((s) => s.sandboxId), [sandbox.sandboxId]);

    const resumed = await Sandbox.connect(sandbox.sandboxId, { ...opts, timeoutMs: 300_000 });
    assert.equal(resumed.sandboxId, sandbox.sandboxId);
    assert.equal((await resumed.getInfo()).state, 'running');
    assert.equal(await resumed.isRunning(), true, 'envd /health answers 204 again');

    assert.equal(await resumed.kill(), true);
    assert.equal(await resumed.kill(), false, 'already gone: 404 → false');
    assert.equal(await Sandbox.kill(sandbox.sandboxId, opts), false);
    await assert.rejects(Sandbox.getInfo(sandbox.sandboxId, opts), SandboxNotFoundError);
    await assert.rejects(Sandbox.connect(sandbox.sandboxId, opts), SandboxNotFoundError);
    await assert.rejects(sandbox.setTimeout(1000), SandboxNotFoundError);
    // Deleted off the event loop, shortly after the answer.
    await until(() => !existsSync(path.join(backend.stateDir, 'sandboxes', sandbox.sandboxId)), 'its directory is gone');
  });

  test('list paging with limit walks every page exactly once', async () => {
    const pagingTag = `${tag}-paging`;
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await Sandbox.create('base', { ...opts, metadata: { suite: pagingTag, n: String(i) } }));
    try {
      const paginator = Sandbox.list({ ...opts, limit: 2, query: { metadata: { suite: pagingTag } } });
      const pages = [];
      while (paginator.hasNext) pages.push(await paginator.nextItems());
      assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
      const ids = pages.flat().map((s) => s.sandboxId);
      assert.equal(new Set(ids).size, 5);
      assert.deepEqual(new Set(ids), new Set(created.map((s) => s.sandboxId)));
      const starts = pages.flat().map((s) => s.startedAt.getTime());
      assert.deepEqual(starts, [...starts].sort((a, b) => b - a), 'newest first');

      const odd = await Sandbox.list({ ...opts, query: { metadata: { suite: pagingTag, n: '3' } } }).nextItems();
      assert.deepEqual(odd.map((s) => s.sandboxId), [created[3].sandboxId]);
    } finally {
      for (const s of created) await s.kill();
    }
  });

  test('metadata with characters that need encoding survives the SDK round trip', async () => {
    const metadata = { suite: `${tag}-enc`, 'a key&=x': 'v a=l&u%e/ü' };
    const sandbox = await Sandbox.create('base', { ...opts, metadata });
    try {
      assert.deepEqual((await sandbox.getInfo()).metadata, metadata);
      const found = await Sandbox.list({ ...opts, query: { metadata } }).nextItems();
      assert.deepEqual(found.map((s) => s.sandboxId), [sandbox.sandboxId]);
    } finally {
      await sandbox.kill();
    }
  });

  test('onTimeout: pause is reported in lifecycle', async () => {
    const sandbox = await Sandbox.create('base', { ...opts, lifecycle: { onTimeout: 'pause' } });
    try {
      const info = await sandbox.getInfo();
      assert.deepEqual(info.lifecycle, { onTimeout: 'pause', autoResume: false });
      assert.equal(info.endAt.getTime() - info.startedAt.getTime(), 300_000, 'v2 default timeout');
    } finally {
      await sandbox.kill();
    }
  });

  test('lifecycle.autoResume: a request to a paused sandbox resumes it, commands and ports alike; without it the sandbox stays paused', async () => {
    const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 120_000, lifecycle: { onTimeout: 'pause', autoResume: true } });
    const plain = await Sandbox.create('base', { ...opts, lifecycle: { onTimeout: 'pause' } });
    try {
      assert.deepEqual((await sandbox.getInfo()).lifecycle, { onTimeout: 'pause', autoResume: true });
      await sandbox.files.write('/home/user/kept.txt', 'before the pause');
      await sandbox.commands.run('python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1', { background: true });
      const url = `${backend.sandboxUrl}/`;
      const headers = { 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': '8000' };
      await until(async () => (await fetch(url, { headers })).status === 200, 'the server in the sandbox answers');

      await sandbox.pause();
      assert.equal((await sandbox.getInfo()).state, 'paused', 'getInfo does not wake it');
      // An SDK call, without connect(): it runs, and the sandbox is running again,
      // for the timeout it was created with raised to E2B's five minutes.
      const r = await sandbox.commands.run('cat /home/user/kept.txt');
      assert.equal(r.stdout, 'before the pause');
      const info = await sandbox.getInfo();
      assert.equal(info.state, 'running');
      const left = info.endAt.getTime() - Date.now();
      assert.ok(left > 280_000 && left <= 300_000, `${left} ms left`);

      // A request to a port wakes it too, and reaches the server that was paused.
      await sandbox.pause();
      const res = await fetch(url, { headers });
      assert.equal(res.status, 200);
      assert.equal((await sandbox.getInfo()).state, 'running');

      // Only a request that may reach it wakes it: one without envd's token does not.
      await sandbox.pause();
      const anonymous = await fetch(`${backend.sandboxUrl}/process.Process/List`, { method: 'POST',
        headers: { 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': '49983', 'Content-Type': 'application/json' }, body: '{}' });
      assert.equal(anonymous.status, 401);
      assert.equal((await sandbox.getInfo()).state, 'paused');

      // Without autoResume a paused sandbox stays paused, and requests to it fail.
      await plain.pause();
      await assert.rejects(plain.commands.run('true'));
      assert.equal((await plain.getInfo()).state, 'paused');

      // E2B's rule: only with onTimeout 'pause' (the backend says so too, for other clients).
      const bare = await fetch(`${backend.apiUrl}/v2/sandboxes`, { method: 'POST',
        headers: { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ templateID: 'base', autoResume: { enabled: true } }) });
      assert.equal(bare.status, 400);
      assert.match((await bare.json()).message, /autoResume can only be enabled when autoPause is true/);
    } finally {
      await sandbox.kill();
      await plain.kill();
    }
  });

  test('a wrong API key gives AuthenticationError without the key in its message', async () => {
    const wrongKey = `wrong-${backend.apiKey}`;
    const bad = { ...opts, apiKey: wrongKey };
    for (const attempt of [() => Sandbox.create('base', bad), () => Sandbox.list(bad).nextItems(), () => Sandbox.getInfo('whatever', bad)]) {
      await assert.rejects(attempt(), (err) => {
        assert.ok(err instanceof AuthenticationError, `${err.name}: ${err.message}`);
        assert.ok(!err.message.includes(wrongKey) && !err.message.includes(backend.apiKey), err.message);
        return true;
      });
    }
  });
});
