// State that lasts through the official e2b SDK: with
// --state-dir, paused sandboxes survive a restart, running ones survive a
// SIGKILL of the backend (they come back paused, files intact, resumable),
// volumes survive both, and a sandbox killed is gone for good. SIGTERM and
// SIGINT end the backend promptly even while its sandboxes, paused or not,
// run processes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackend, api } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Template, Volume } = await import('e2b');

describe('state that lasts (--state-dir)', () => {
  const apiKey = `e2b_local_${randomBytes(16).toString('hex')}`;
  let dir;
  let backend;
  const opts = () => ({ apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 });
  const start = async (crashAt) => {
    if (crashAt) process.env.E2B_LOCAL_CRASH_AT = crashAt;
    try {
      // These cases read the state directory's sandbox directories: no warm
      // pool adds its own (backend-warm-pool.test.mjs covers what it leaves).
      backend = await startBackend({ apiKey, stateDir: dir, extraArgs: ['--warm-pool', '0'] });
      // Volume's file calls read only this (README, "Use the E2B SDK
      // against the local backend"), else they go to https://api.e2b.app.
      process.env.E2B_VOLUME_API_URL = backend.apiUrl;
    } finally {
      delete process.env.E2B_LOCAL_CRASH_AT;
    }
  };
  // Starts a backend that kills itself at crashAt, runs op (which fails when
  // the backend dies under it), and starts a normal one again.
  const crashAt = async (point, op) => {
    await backend.stop();
    await start(point);
    const dying = backend;
    await assert.rejects(op());
    const { signal } = await Promise.race([dying.exited,
      new Promise((resolve) => setTimeout(() => resolve({ signal: 'still running' }), 30000))]);
    assert.equal(signal, 'SIGKILL');
    assert.match(dying.stderr(), new RegExp(`crash point ${point} reached`));
    await start();
  };
  const entries = (...p) => (existsSync(path.join(dir, ...p)) ? readdirSync(path.join(dir, ...p)) : []);
  const layerOrigins = () => entries('layers').filter((n) => !n.startsWith('.'))
    .map((n) => JSON.parse(readFileSync(path.join(dir, 'layers', n, 'layer.json'), 'utf8')).origin);
  const detail = async (id) => (await api(backend, 'GET', `/sandboxes/${id}`)).json;
  const layerJson = (id) => JSON.parse(readFileSync(path.join(dir, 'layers', id, 'layer.json'), 'utf8'));

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'e2b-state-test-'));
    await start();
  });

  after(async () => {
    if (backend) {
      const { code } = await backend.stop();
      assert.equal(code, 0, backend.stderr());
      assert.ok(!backend.stderr().includes(apiKey), 'the API key must never be logged');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test('paused and running sandboxes and volumes survive a restart, running ones a SIGKILL', async () => {
    const paused = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000, metadata: { role: 'paused' }, envs: { KEPT: 'env-kept' } });
    await paused.files.write('/home/user/kept.txt', 'paused data');
    await paused.pause();
    const leftBefore = (await detail(paused.sandboxId)).lifetimeLeft;
    assert.ok(leftBefore > 0 && leftBefore <= 600);
    const running = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000, metadata: { role: 'running' } });
    await running.commands.run('echo running data > /home/user/kept.txt');
    const vol = await Volume.create('kept-volume', opts());
    await vol.writeFile('/v.txt', 'volume data');
    const gone = await Sandbox.create('base', opts());
    await gone.kill();

    // A clean restart.
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    assert.ok(existsSync(path.join(dir, 'records', 'sandboxes', `${paused.sandboxId}.json`)));
    await start();
    const listed = await Sandbox.list({ ...opts(), query: { state: ['running', 'paused'] } }).nextItems();
    assert.deepEqual(listed.map((s) => s.sandboxId).sort(), [paused.sandboxId, running.sandboxId].sort());
    for (const s of listed) assert.equal(s.state, 'paused');
    assert.deepEqual(listed.find((s) => s.sandboxId === paused.sandboxId).metadata, { role: 'paused' });
    assert.equal((await detail(paused.sandboxId)).lifetimeLeft, leftBefore, 'a paused lifetime is kept as it was');
    assert.equal((await api(backend, 'GET', `/sandboxes/${gone.sandboxId}`)).status, 404);

    // Kept from the earlier run, it is resumed before it can be captured.
    const kept = (what) => (e) => e.statusCode === 409 &&
      e.message === `409: Sandbox '${paused.sandboxId}' is paused and cannot be ${what}; resume it first`;
    await assert.rejects(Sandbox.createSnapshot(paused.sandboxId, opts()), kept('snapshotted'));
    await assert.rejects(Sandbox.fork(paused.sandboxId, opts()), kept('forked'));
    const p2 = await Sandbox.connect(paused.sandboxId, opts());
    assert.equal(await p2.files.read('/home/user/kept.txt'), 'paused data');
    assert.equal((await p2.commands.run('echo $KEPT')).stdout, 'env-kept\n');
    assert.equal((await p2.getInfo()).state, 'running');
    const r2 = await Sandbox.connect(running.sandboxId, opts());
    assert.equal((await r2.commands.run('cat /home/user/kept.txt')).stdout, 'running data\n');
    const v2 = await Volume.connect(vol.volumeId, opts());
    assert.equal(v2.token, vol.token, 'a volume token stays valid across a restart');
    assert.equal(await v2.readFile('/v.txt'), 'volume data');

    // A crash: both are running now; they come back paused with their files.
    await r2.commands.run('echo after restart > /home/user/second.txt && sync');
    assert.equal((await backend.stop('SIGKILL')).signal, 'SIGKILL');
    await start();
    assert.match(backend.stderr(), /2 sandboxes of an earlier run brought back paused/);
    const afterCrash = await Sandbox.list({ ...opts(), query: { state: ['running', 'paused'] } }).nextItems();
    assert.deepEqual(afterCrash.map((s) => [s.sandboxId, s.state]).sort(), [[paused.sandboxId, 'paused'], [running.sandboxId, 'paused']].sort());
    const left = (await detail(running.sandboxId)).lifetimeLeft;
    assert.ok(left > 0 && left <= 600, `lifetime left after the crash: ${left}`);
    const r3 = await Sandbox.connect(running.sandboxId, opts());
    assert.equal((await r3.commands.run('cat /home/user/kept.txt /home/user/second.txt')).stdout, 'running data\nafter restart\n');
    assert.equal(await (await Volume.connect(vol.volumeId, opts())).readFile('/v.txt'), 'volume data');

    // Killed is gone: no record, no directory.
    await r3.kill();
    await Sandbox.kill(paused.sandboxId, opts());
    assert.equal(existsSync(path.join(dir, 'records', 'sandboxes', `${running.sandboxId}.json`)), false);
    assert.equal(await Volume.destroy(vol.volumeId, opts()), true);
    assert.deepEqual(readdirSync(path.join(dir, 'records', 'volumes')), []);
  });

  // A sandbox's init ends only once the processes the backend forked into
  // it are reaped: the stop must reap them before it waits for the inits.
  for (const signal of ['SIGTERM', 'SIGINT']) {
    test(`${signal} ends a backend whose sandboxes run processes, paused or not, and keeps them`, async () => {
      const paused = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
      await paused.files.write('/home/user/kept.txt', 'paused data');
      await paused.commands.run('sleep 1000', { background: true });
      await paused.pause();
      const running = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
      await running.files.write('/home/user/kept.txt', 'running data');
      await running.commands.run('sleep 1000', { background: true });
      const stopping = backend;
      const stopped = await Promise.race([stopping.stop(signal),
        new Promise((resolve) => setTimeout(() => resolve('still running 60 s after the signal'), 60000))]);
      if (typeof stopped === 'string') {
        process.kill(stopping.pid, 'SIGKILL'); // the next backend needs the state directory's lock
        await stopping.exited;
      }
      assert.deepEqual(stopped, { code: 0, signal: null }, stopping.stderr());
      assert.match(stopping.stderr(), new RegExp(`signal ${signal === 'SIGTERM' ? 15 : 2}, shutting down`));
      await start();
      assert.match(backend.stderr(), /2 sandboxes of an earlier run brought back paused/);
      const listed = await Sandbox.list({ ...opts(), query: { state: ['running', 'paused'] } }).nextItems();
      assert.deepEqual(listed.map((s) => [s.sandboxId, s.state]).sort(), [[paused.sandboxId, 'paused'], [running.sandboxId, 'paused']].sort());
      for (const [s, data] of [[paused, 'paused data'], [running, 'running data']]) {
        const again = await Sandbox.connect(s.sandboxId, opts());
        assert.equal(await again.files.read('/home/user/kept.txt'), data);
        assert.equal((await again.commands.run('pgrep -x sleep || echo none')).stdout, 'none\n', 'processes start fresh');
        await again.kill();
      }
    });
  }

  test('autoResume and httpsPorts last: a sandbox kept across a restart is resumed cold by a request to it', async () => {
    const s = await Sandbox.create('base', { ...opts(), timeoutMs: 60_000, lifecycle: { onTimeout: 'pause', autoResume: true }, network: { httpsPorts: [8443] } });
    await s.files.write('/home/user/kept.txt', 'woken cold');
    await s.pause();
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    await start();
    const info = await Sandbox.getInfo(s.sandboxId, opts());
    assert.equal(info.state, 'paused');
    assert.deepEqual(info.lifecycle, { onTimeout: 'pause', autoResume: true });
    assert.deepEqual(info.network?.httpsPorts, [8443], 'httpsPorts last too');
    // An SDK handle on the new backend's URL, made as Sandbox.create makes one
    // (no connect(), which would resume it): its first call wakes it.
    const again = new Sandbox({ ...opts(), sandboxId: s.sandboxId, envdAccessToken: s.envdAccessToken, envdVersion: info.envdVersion });
    assert.equal((await again.commands.run('cat /home/user/kept.txt')).stdout, 'woken cold');
    assert.equal((await Sandbox.getInfo(s.sandboxId, opts())).state, 'running');
    assert.match(backend.stderr(), new RegExp(`sandbox ${s.sandboxId}: resumed by a request to it \\(autoResume\\), for 300 s`));
    await Sandbox.kill(s.sandboxId, opts());
  });

  test('a crash before a new sandbox is recorded leaves no half-made sandbox', async () => {
    const keeper = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
    await keeper.files.write('/home/user/k.txt', 'kept');
    await crashAt('sandbox-started', () => Sandbox.create('base', opts()));
    const listed = await Sandbox.list({ ...opts(), query: { state: ['running', 'paused'] } }).nextItems();
    assert.deepEqual(listed.map((s) => s.sandboxId), [keeper.sandboxId], 'only the recorded sandbox is back');
    assert.deepEqual(entries('sandboxes'), [keeper.sandboxId], 'the half-made one\'s directory is gone');
    const k = await Sandbox.connect(keeper.sandboxId, opts());
    assert.equal(await k.files.read('/home/user/k.txt'), 'kept', 'nothing is lost');
    await k.kill();
  });

  test('a crash before a new volume is recorded leaves no half-made volume', async () => {
    await crashAt('volume-made', () => Volume.create('half-made', opts()));
    assert.deepEqual(await Volume.list(opts()), []);
    assert.deepEqual(entries('volumes').filter((n) => !n.startsWith('ext4-')), [], 'its data is removed');
    const v = await Volume.create('half-made', opts());
    assert.equal(await Volume.destroy(v.volumeId, opts()), true);
  });

  for (const [point, op] of [
    ['snapshot-sealed', (s) => s.createSnapshot({ name: 'half-made' })],
    ['fork-sealed', (s) => s.fork({ count: 2 })],
  ]) {
    // op runs against the backend that is to crash: the sandbox, kept
    // across the restart before it, is resumed there first.
    const opOn = (id) => async () => op(await Sandbox.connect(id, opts()));
    test(`a crash at ${point} leaves neither a half-made object nor a lost one`, async () => {
      const source = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
      await source.files.write('/home/user/s.txt', 'source data');
      await crashAt(point, opOn(source.sandboxId));
      assert.deepEqual(await Sandbox.listSnapshots(opts()).nextItems(), []);
      const listed = await Sandbox.list({ ...opts(), query: { state: ['running', 'paused'] } }).nextItems();
      assert.deepEqual(listed.map((s) => [s.sandboxId, s.state]), [[source.sandboxId, 'paused']]);
      // The sealed layer nothing stands on is collected.
      await until(() => !layerOrigins().some((o) => o === 'snapshot' || o === 'fork'), 'the unused layer collected');
      const s2 = await Sandbox.connect(source.sandboxId, opts());
      assert.equal(await s2.files.read('/home/user/s.txt'), 'source data');
      const snap = await s2.createSnapshot();
      const from = await Sandbox.create(snap.snapshotId, opts());
      assert.equal(await from.files.read('/home/user/s.txt'), 'source data');
      await Promise.all([from.kill(), s2.kill()]);
      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts()), true);
    });
  }

  test('a crash during a large seal leaves no half-made layer', async () => {
    const source = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
    await source.commands.run('mkdir /home/user/many && cd /home/user/many && for d in $(seq 40); do mkdir $d; head -c 4194304 /dev/urandom > $d/big; for f in $(seq 99); do echo $f > $d/$f; done; done');
    const pending = source.createSnapshot().catch((e) => e);
    await until(() => entries('layers').some((n) => n.startsWith('.tmp-')), 'a seal in progress', 60000, 5);
    await backend.stop('SIGKILL');
    assert.ok((await pending) instanceof Error);
    await start();
    await until(() => !entries('layers').some((n) => n.startsWith('.tmp-')), 'the half-made layer removed');
    assert.deepEqual(await Sandbox.listSnapshots(opts()).nextItems(), []);
    const s2 = await Sandbox.connect(source.sandboxId, opts());
    assert.equal((await s2.commands.run('ls /home/user/many | wc -l; ls /home/user/many/40 | wc -l')).stdout, '40\n100\n');
    await s2.kill();
  });

  test('a stop while a fork is being sealed answers nobody, creates no fork and loses nothing', async () => {
    const source = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
    await source.commands.run('mkdir /home/user/many && cd /home/user/many && for d in $(seq 40); do head -c 4194304 /dev/urandom > $d; done');
    const pending = source.fork({ count: 2 }).catch((e) => e);
    await until(() => entries('layers').some((n) => n.startsWith('.tmp-')), 'a seal in progress', 60000, 5);
    // The listener goes first: the parked fork request with it (its client
    // is gone); the seal then finishes before the registry is freed.
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok((await pending) instanceof Error, 'the client got no answer');
    await start();
    const listed = await Sandbox.list({ ...opts(), query: { state: ['running', 'paused'] } }).nextItems();
    assert.deepEqual(listed.map((s) => s.sandboxId), [source.sandboxId], 'no fork was created');
    await until(() => !layerOrigins().includes('fork') && !entries('layers').some((n) => n.startsWith('.tmp-')),
      'the sealed layer nothing stands on is gone');
    const s2 = await Sandbox.connect(source.sandboxId, opts());
    assert.equal((await s2.commands.run('ls /home/user/many | wc -l')).stdout, '40\n');
    await s2.kill();
  });

  test('base is one layer for templates and snapshots; an earlier version\'s own import of it still works and goes once unused', async () => {
    const externals = () => entries('layers').filter((n) => !n.startsWith('.') && layerJson(n).external);
    const sbx = await Sandbox.create('base', { ...opts(), timeoutMs: 600_000 });
    await sbx.files.write('/home/user/legacy.txt', 'on base');
    const snap = await sbx.createSnapshot();
    await Template.build(Template().fromBaseImage().setEnvs({ ONE: 'layer' }), `one-base-${process.pid}`, opts());
    assert.equal(externals().length, 1, `one layer stands for base: ${externals()}`);
    const [baseId] = externals();
    assert.equal(layerJson(baseId).origin, 'template-base');

    // The state directory as an earlier version left it: snapshots imported
    // base themselves, as the external layer `template-base`.
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    const legacy = path.join(dir, 'layers', 'template-base');
    mkdirSync(legacy);
    symlinkSync(layerJson(baseId).external, path.join(legacy, 'root'));
    writeFileSync(path.join(legacy, 'layer.json'), JSON.stringify({ ...layerJson(baseId), id: 'template-base', origin: 'template' }));
    const record = path.join(dir, 'records', 'snapshots', `${snap.snapshotId.split(':')[0]}.json`);
    const r = JSON.parse(readFileSync(record, 'utf8'));
    assert.equal(r.layers[0], baseId);
    writeFileSync(record, JSON.stringify({ ...r, layers: ['template-base', ...r.layers.slice(1)] }));
    await start();
    const from = await Sandbox.create(snap.snapshotId, { ...opts(), timeoutMs: 600_000 });
    assert.equal(await from.files.read('/home/user/legacy.txt'), 'on base', 'a snapshot on the old layer starts');
    assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts()), true);
    // A restart collects before anything else: the sandbox kept from the
    // snapshot still stands on the old layer.
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    await start();
    assert.ok(entries('layers').includes('template-base'), 'a layer in use is never collected');
    const back = await Sandbox.connect(from.sandboxId, opts());
    assert.equal(await back.files.read('/home/user/legacy.txt'), 'on base');
    await back.kill();
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    await start();
    await until(() => !entries('layers').includes('template-base'), 'the old layer collected once nothing stands on it');
    assert.deepEqual(externals(), [baseId], 'the template still stands on base');

    // A snapshot being sealed keeps base too while the template that held it
    // is deleted (and the layers nothing else uses are collected).
    const s2 = await Sandbox.connect(sbx.sandboxId, opts());
    await s2.commands.run('mkdir -p /home/user/many && cd /home/user/many && for d in $(seq 40); do head -c 4194304 /dev/urandom > $d; done');
    const pending = s2.createSnapshot();
    await until(() => entries('layers').some((n) => n.startsWith('.tmp-')), 'a seal in progress', 60000, 5);
    const tpl = (await api(backend, 'GET', `/templates/one-base-${process.pid}`)).json;
    assert.equal((await api(backend, 'DELETE', `/templates/${tpl.templateID}`)).status, 204);
    const snap2 = await pending;
    const from2 = await Sandbox.create(snap2.snapshotId, opts());
    assert.equal(await from2.files.read('/home/user/legacy.txt'), 'on base');
    await Promise.all([from2.kill(), s2.kill()]);
    assert.equal(await Sandbox.deleteSnapshot(snap2.snapshotId, opts()), true);
  });
});
