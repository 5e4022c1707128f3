// Snapshots and fork through the official e2b SDK:
// createSnapshot (named with a tag, and unnamed), listSnapshots filtered by
// name and by sandbox, Sandbox.create(snapshotId) giving independent
// sandboxes, deleteSnapshot, and fork({count}) with the errors the SDK
// types. Filesystem only: a sandbox from a snapshot or a fork starts with
// fresh processes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBackend } from '../../host/backend.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, SandboxError, SandboxNotFoundError } = await import('e2b');

describe('official e2b SDK snapshots and fork', () => {
  let backend;
  let opts;
  const name = `snap-${process.pid}`;
  const read = async (sbx, p) => (await sbx.commands.run(`cat ${p}`)).stdout;

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key must never be logged');
  });

  test('createSnapshot, listSnapshots, sandboxes from it, deleteSnapshot', async () => {
    const sbx = await Sandbox.create('base', opts);
    await sbx.files.write('/home/user/state.txt', 'v1');
    await sbx.commands.run('mkdir -p /home/user/dir && echo nested > /home/user/dir/n.txt && rm /etc/motd', { user: 'root' });
    const snap = await sbx.createSnapshot({ name: `${name}:v1` });
    assert.deepEqual(snap, { snapshotId: `local/${name}:v1`, names: [`local/${name}:v1`] });
    assert.equal((await sbx.getInfo()).state, 'running', 'the original runs on');
    await sbx.files.write('/home/user/state.txt', 'v2 after the snapshot');
    const unnamed = await sbx.createSnapshot();
    assert.match(unnamed.snapshotId, /^[a-z0-9]{20}:default$/);
    assert.deepEqual(unnamed.names, []);

    const ids = async (o) => (await Sandbox.listSnapshots({ ...opts, ...o }).nextItems()).map((s) => s.snapshotId);
    assert.deepEqual(await ids({ name }), [`local/${name}:v1`]);
    assert.deepEqual(await ids({ name: `${name}:v1` }), [`local/${name}:v1`]);
    assert.deepEqual(await ids({ name: `local/${name}:v1` }), [`local/${name}:v1`]);
    assert.deepEqual(await ids({ name: `${name}:v2` }), []);
    assert.deepEqual(await ids({ sandboxId: sbx.sandboxId }), [unnamed.snapshotId, `local/${name}:v1`]);
    assert.deepEqual(await ids({ name: unnamed.snapshotId }), [unnamed.snapshotId]);
    const firstPage = Sandbox.listSnapshots({ ...opts, sandboxId: sbx.sandboxId, limit: 1 });
    assert.equal((await firstPage.nextItems()).length, 1);
    assert.equal(firstPage.hasNext, true);
    assert.deepEqual((await firstPage.nextItems()).map((s) => s.snapshotId), [`local/${name}:v1`]);

    const a = await Sandbox.create(snap.snapshotId, opts);
    const b = await Sandbox.create(`${name}:v1`, opts);
    const c = await Sandbox.create(unnamed.snapshotId, opts);
    try {
      assert.equal(await a.files.read('/home/user/state.txt'), 'v1');
      assert.equal(await read(a, '/home/user/dir/n.txt'), 'nested\n');
      assert.equal((await a.commands.run('test -e /etc/motd || echo deleted')).stdout, 'deleted\n', 'a deletion is part of the snapshot');
      assert.equal((await a.commands.run('stat -c %U /home/user/state.txt')).stdout, 'user\n', 'owners are kept');
      await a.files.write('/home/user/state.txt', 'a only');
      assert.equal(await b.files.read('/home/user/state.txt'), 'v1', 'sandboxes from one snapshot are independent');
      assert.equal(await sbx.files.read('/home/user/state.txt'), 'v2 after the snapshot');
      assert.equal(await c.files.read('/home/user/state.txt'), 'v2 after the snapshot');

      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts), true);
      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts), false);
      assert.deepEqual(await ids({ name }), []);
      await assert.rejects(Sandbox.create(snap.snapshotId, opts));
      assert.equal(await a.files.read('/home/user/state.txt'), 'a only', 'a sandbox keeps its layers after its snapshot is deleted');
      // The same name:tag again stands for the newer snapshot.
      const again = await sbx.createSnapshot({ name: `${name}:v1` });
      const again2 = await sbx.createSnapshot({ name: `${name}:v1` });
      assert.equal(again2.snapshotId, again.snapshotId);
      assert.deepEqual(await ids({ name }), [`local/${name}:v1`]);
      assert.equal(await Sandbox.deleteSnapshot(name, opts), true, 'a name without a tag deletes every tag');
      await assert.rejects(sbx.createSnapshot({ name: 'Bad Name' }), (e) => e.statusCode === 400 && /invalid snapshot name/.test(e.message));
      await assert.rejects(sbx.createSnapshot({ name: 'other-team/x' }), /namespace "local"/);
    } finally {
      await Promise.all([a.kill(), b.kill(), c.kill(), sbx.kill()]);
    }
    assert.equal(await Sandbox.deleteSnapshot(unnamed.snapshotId, opts), true);
  });

  test('a paused sandbox is resumed first: createSnapshot and fork answer 409 saying so, as E2B\'s fork does', async () => {
    const sbx = await Sandbox.create('base', opts);
    try {
      await sbx.files.write('/home/user/p.txt', 'written before the pause');
      assert.equal(await sbx.pause(), true);
      const refused = (what) => (e) => e instanceof SandboxError && e.statusCode === 409 &&
        e.message === `409: Sandbox '${sbx.sandboxId}' is paused and cannot be ${what}; resume it first`;
      await assert.rejects(sbx.createSnapshot(), refused('snapshotted'));
      await assert.rejects(Sandbox.fork(sbx.sandboxId, opts), refused('forked'));
      assert.deepEqual(await Sandbox.listSnapshots({ ...opts, sandboxId: sbx.sandboxId }).nextItems(), []);
      assert.equal((await sbx.getInfo()).state, 'paused', 'refused, it stays paused');
      await sbx.connect();
      const snap = await sbx.createSnapshot();
      const from = await Sandbox.create(snap.snapshotId, opts);
      assert.equal(await from.files.read('/home/user/p.txt'), 'written before the pause');
      await from.kill();
      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts), true);
    } finally {
      await sbx.kill();
    }
  });

  test('fork: independent copies, errors typed', async () => {
    const orig = await Sandbox.create('base', opts);
    try {
      await orig.files.write('/home/user/f.txt', 'original');
      await orig.commands.run('sleep 600', { background: true });
      const forks = await orig.fork({ count: 2, timeoutMs: 60_000 });
      assert.equal(forks.length, 2);
      for (const f of forks) assert.ok(f instanceof Sandbox, String(f));
      const [f0, f1] = forks;
      assert.notEqual(f0.sandboxId, f1.sandboxId);
      assert.equal(await f0.files.read('/home/user/f.txt'), 'original');
      await f0.files.write('/home/user/f.txt', 'fork 0');
      assert.equal(await f1.files.read('/home/user/f.txt'), 'original', 'a write in one fork is seen nowhere else');
      assert.equal(await orig.files.read('/home/user/f.txt'), 'original');
      await orig.files.write('/home/user/f.txt', 'original later');
      assert.equal(await f0.files.read('/home/user/f.txt'), 'fork 0');
      assert.equal((await orig.getInfo()).state, 'running', 'the original keeps running');
      assert.equal((await f1.commands.run('pgrep -x sleep || echo none')).stdout, 'none\n', 'processes start fresh');
      const info = await f1.getInfo();
      assert.ok(info.endAt.getTime() - info.startedAt.getTime() === 60_000);
      const single = await Sandbox.fork(orig.sandboxId, { ...opts });
      assert.equal(single.length, 1);
      assert.equal(await single[0].files.read('/home/user/f.txt'), 'original later');
      await Promise.all([f0.kill(), f1.kill(), single[0].kill()]);

      // A 400: SDK 2.51 turns a control-plane 400 into a SandboxError with
      // statusCode 400 (its InvalidArgumentError is for envd's 400s).
      const badCount = (e) => e instanceof SandboxError && !(e instanceof SandboxNotFoundError) && e.statusCode === 400 && /count must be between 1 and 16/.test(e.message);
      await assert.rejects(orig.fork({ count: 0 }), badCount);
      await assert.rejects(orig.fork({ count: -1 }), badCount);
      await assert.rejects(orig.fork({ count: 17 }), badCount);
    } finally {
      await orig.kill();
    }
    await assert.rejects(Sandbox.fork(orig.sandboxId, opts), SandboxNotFoundError);
    await assert.rejects(Sandbox.fork('nosuchsandbox0000000', opts), SandboxNotFoundError);
  });
});
