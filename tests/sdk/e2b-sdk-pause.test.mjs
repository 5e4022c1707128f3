// Pause through the official e2b SDK where checkpoints cannot be made (this
// host: criu check fails on its kernel, or criu is missing): pause freezes,
// and the sandbox's info (pause.kind, pause.reason, ours) and
// /health/details say so and why; a process survives pause and resume
// while the backend runs; keepMemory: false ends the processes and keeps
// the files; lifecycle.onTimeout { action: 'pause', keepMemory: false } takes
// the same path at the end of a lifetime; a fork and a snapshot copy the files
// only, their answers' kind says so and why. Where checkpoints work (the cgroup v2
// guest) tests/checkpoint/ proves them.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBackend, api } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox } = await import('e2b');

describe('pause where no checkpoint can be made', () => {
  let backend, opts, checkpoint;

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
    checkpoint = (await api(backend, 'GET', '/health/details')).json.checkpoint;
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('/health/details says pauses freeze here, and why', { skip: false }, (t) => {
    if (checkpoint.available) return t.skip('checkpoints work here (tests/checkpoint/ covers them)');
    assert.equal(checkpoint.pause, 'freeze');
    assert.match(checkpoint.reason, /criu|isolation/, checkpoint.reason);
  });

  test('pause freezes: the info says freeze and why; a counter in memory carries on after resume', async (t) => {
    if (checkpoint.available) return t.skip('checkpoints work here (tests/checkpoint/ covers them)');
    const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 300_000 });
    await sandbox.commands.run(`setsid bash -c 'tok=$RANDOM$RANDOM; i=0; while :; do i=$((i+1)); echo "$$ $tok $i" > /tmp/c; sleep 0.2; done' </dev/null >/dev/null 2>&1 &`);
    await until(async () => (await sandbox.commands.run('cat /tmp/c || true')).stdout.trim() !== '', 'the counter started');
    const before = (await sandbox.commands.run('cat /tmp/c')).stdout.trim().split(' ');
    assert.equal(await Sandbox.pause(sandbox.sandboxId, opts), true);
    const info = (await api(backend, 'GET', `/sandboxes/${sandbox.sandboxId}`)).json;
    assert.equal(info.state, 'paused');
    assert.deepEqual(info.pause, { kind: 'freeze', reason: checkpoint.reason });
    const resumed = await Sandbox.connect(sandbox.sandboxId, opts);
    await until(async () => Number((await resumed.commands.run('cat /tmp/c')).stdout.trim().split(' ')[2]) > Number(before[2]), 'it counts on');
    const after = (await resumed.commands.run('cat /tmp/c')).stdout.trim().split(' ');
    assert.equal(after[0], before[0], 'the same process');
    assert.equal(after[1], before[1], 'its token, held in memory');
    assert.equal((await api(backend, 'GET', `/sandboxes/${sandbox.sandboxId}`)).json.pause, undefined, 'running: no pause field');
    await resumed.kill();
  });

  test('fork and createSnapshot copy the files only, and their answers say so and why', async (t) => {
    if (checkpoint.available) return t.skip('checkpoints work here (tests/checkpoint/fork.test.mjs covers forks with processes)');
    const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 300_000 });
    await sandbox.files.write('/home/user/kept.txt', 'forked');
    // Found by its command line: pids are those of a new pid namespace in the fork.
    const sleepers = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 4242 ' || true";
    await sandbox.commands.run(`setsid sleep 4242 </dev/null >/dev/null 2>&1 &`);
    await until(async () => (await sandbox.commands.run(sleepers)).stdout.trim() === '1', 'the sleeper started');
    const r = await api(backend, 'POST', `/sandboxes/${sandbox.sandboxId}/fork`, { count: 1, timeout: 300 });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const made = r.json[0].sandbox;
    assert.deepEqual(made.fork, { kind: 'files', reason: checkpoint.reason });
    const fork = await Sandbox.connect(made.sandboxID, opts);
    assert.equal(await fork.files.read('/home/user/kept.txt'), 'forked');
    assert.equal((await fork.commands.run(sleepers)).stdout.trim(), '0', 'the fork has fresh processes');
    assert.equal((await sandbox.commands.run(sleepers)).stdout.trim(), '1', 'the source runs on');
    const snap = await api(backend, 'POST', `/sandboxes/${sandbox.sandboxId}/snapshots`, {});
    assert.equal(snap.status, 201, JSON.stringify(snap.json));
    assert.equal(snap.json.kind, 'files', 'a snapshot holds the files only');
    assert.equal(snap.json.reason, checkpoint.reason);
    const fromSnap = await api(backend, 'POST', '/v2/sandboxes', { templateID: snap.json.snapshotID, timeout: 60 });
    assert.equal(fromSnap.status, 201, JSON.stringify(fromSnap.json));
    assert.equal(fromSnap.json.snapshot, undefined, 'a snapshot without processes: a plain create');
    await api(backend, 'DELETE', `/sandboxes/${fromSnap.json.sandboxID}`);
    await fork.kill();
    await sandbox.kill();
  });

  test('keepMemory: false ends the processes and keeps the files', async () => {
    const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 300_000 });
    await sandbox.files.write('/home/user/kept.txt', 'still here');
    await sandbox.commands.run(`setsid bash -c 'echo $$ > /tmp/pid; exec sleep 1000' </dev/null >/dev/null 2>&1 &`);
    await until(async () => (await sandbox.commands.run('cat /tmp/pid || true')).stdout.trim() !== '', 'the sleeper started');
    const pid = (await sandbox.commands.run('cat /tmp/pid')).stdout.trim();
    assert.equal(await Sandbox.pause(sandbox.sandboxId, { ...opts, keepMemory: false }), true);
    assert.deepEqual((await api(backend, 'GET', `/sandboxes/${sandbox.sandboxId}`)).json.pause, { kind: 'files' });
    const resumed = await Sandbox.connect(sandbox.sandboxId, opts);
    assert.equal(await resumed.files.read('/home/user/kept.txt'), 'still here');
    const r = await resumed.commands.run(`kill -0 ${pid} 2>/dev/null && echo alive || echo gone`);
    assert.equal(r.stdout.trim(), 'gone', 'its processes ended');
    await resumed.kill();
  });

  test("onTimeout { action: 'pause', keepMemory: false }: the end of its lifetime pauses it with its files only", async () => {
    const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 3_000, lifecycle: { onTimeout: { action: 'pause', keepMemory: false } } });
    await sandbox.files.write('/home/user/kept.txt', 'after timeout');
    await until(async () => (await api(backend, 'GET', `/sandboxes/${sandbox.sandboxId}`)).json.state === 'paused', 'paused at its end', 30_000);
    assert.deepEqual((await api(backend, 'GET', `/sandboxes/${sandbox.sandboxId}`)).json.pause, { kind: 'files' });
    const resumed = await Sandbox.connect(sandbox.sandboxId, { ...opts, timeoutMs: 60_000 });
    assert.equal(await resumed.files.read('/home/user/kept.txt'), 'after timeout');
    await resumed.kill();
  });
});
