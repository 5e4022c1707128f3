// The warm pool (backend/warm/): with isolation the backend keeps
// --warm-pool sandboxes of the default shape started ahead, nobody's and in
// no list, so a create of that shape only claims one. Real backend, real
// sandboxes: that a sandbox came from the pool is read from inside it (its
// init is older than the create request); that it is the requester's from
// the API and from its commands.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';
import { until, sleep } from '../../host/wait.mjs';

const T = { timeout: 120_000 };
const backend = await startBackend();
const skip = backend.isolation === 'full' ? false
  : `needs full isolation (root); the backend runs with isolation "${backend.isolation}"`;

after(async () => {
  const { code } = await backend.stop();
  assert.equal(code, 0, backend.stderr());
});

const health = async (b = backend) => (await (await fetch(`${b.apiUrl}/health/details`)).json()).warm;
const filled = (b = backend) => until(async () => { const w = await health(b); return w.size > 0 && w.ready === w.size; }, 'the pool is full', 60_000);

async function create(body, b = backend) {
  const res = await api(b, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 300, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: res.json.sandboxID, token: res.json.envdAccessToken });
  const run = async (script, opts = {}) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } }, opts);
    return dataOf(r.messages).stdout.toString();
  };
  return { id: res.json.sandboxID, json: res.json, run, kill: () => api(b, 'DELETE', `/sandboxes/${res.json.sandboxID}`) };
}

// Seconds since the sandbox's init started, from inside it.
async function initAge(s) {
  const [uptime, start, tick] = (await s.run("awk '{print $1}' /proc/uptime; awk '{print $22}' /proc/1/stat; getconf CLK_TCK")).trim().split('\n').map(Number);
  return uptime - start / tick;
}

describe('the warm pool', { skip }, () => {
  test('fills to its size behind the loop; /health/details says how many are ready; pooled sandboxes are in no list', T, async () => {
    assert.equal((await health()).size, 3, 'the default --warm-pool');
    await filled();
    assert.deepEqual((await api(backend, 'GET', '/v2/sandboxes')).json, []);
    assert.deepEqual((await api(backend, 'GET', '/sandboxes')).json, []);
  });

  test('a create of the default shape claims one: the request\'s metadata, environment and lifetime, a fresh token; the next is started behind it', T, async () => {
    await filled();
    // Not a wait for an event: the pooled inits need an age to tell them by.
    await sleep(1500);
    const asked = Date.now();
    const s = await create({ metadata: { who: 'warm' }, envVars: { WARM_X: 'from-the-request' } });
    assert.ok(await initAge(s) >= 1.2, 'its init was started before the request');
    assert.equal(await s.run('echo $WARM_X'), 'from-the-request\n');
    const info = (await api(backend, 'GET', `/sandboxes/${s.id}`)).json;
    assert.deepEqual(info.metadata, { who: 'warm' });
    const started = Date.parse(info.startedAt);
    assert.ok(started >= asked - 1000, `its lifetime starts at the claim (${info.startedAt})`);
    assert.equal(Date.parse(info.endAt) - started, 300_000);
    assert.equal((await api(backend, 'GET', '/v2/sandboxes')).json.length, 1);
    // The token is the claimed sandbox's: a wrong one is refused.
    const bad = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: s.id, token: 'x'.repeat(64) });
    assert.notEqual((await bad.stream('process.Process/Start', { process: { cmd: 'true' } })).status, 200);
    await filled();
    await s.kill();
  });

  test('any other shape is started afresh: resources or volumes of its own', T, async () => {
    await filled();
    await sleep(1500);
    const s = await create({ memoryMB: 256 });
    assert.ok(await initAge(s) < 1.2, 'a sandbox of its own, not a pooled one');
    const { ready, size } = await health();
    assert.equal(ready, size, 'the pool was left as it was');
    await s.kill();
  });
});

describe('the refill off the loop', { skip }, () => {
  // The refill's long steps (cgroups, overlay, the init's clone, the veth)
  // run on a worker thread while the loop creates sandboxes of its own. A
  // child cloned by the loop is a copy of a process with two threads: if it
  // took a lock of glibc the worker held at that moment, it hung for good
  // (found so: "init did not start" after 10 s, once in a few dozen creates).
  test('creates of the default shape back to back, faster than the pool refills: every one starts', T, async () => {
    await filled();
    for (let i = 0; i < 60; i++) {
      const s = await create({}); // a hung init: 500 "init did not start" after 10 s
      if (i % 10 === 9) assert.equal(await s.run('echo ok'), 'ok\n');
      await s.kill();
    }
  });

  test('a backend stopped while its refill is under way exits cleanly', T, async (t) => {
    const b = await startBackend({ extraArgs: ['--warm-pool', '4'] });
    t.after(() => b.stop()); // when an assertion fails first: else this file never ends
    await until(async () => (await health(b)).ready >= 1, 'a first pooled sandbox', 60_000);
    assert.equal((await b.stop()).code, 0, b.stderr());
    assert.doesNotMatch(b.stderr(), /cannot start a warm sandbox/);
  });
});

describe('a pooled sandbox whose init has ended', { skip }, () => {
  test('is dropped at the claim, never handed out: the create gets one that runs commands', T, async () => {
    const b = await startBackend({ extraArgs: ['--warm-pool', '1'] });
    try {
      await filled(b);
      const groups = `/sys/fs/cgroup/pids/e2b-local/b${b.pid}`;
      const [pooled] = readdirSync(groups, { withFileTypes: true }).filter((d) => d.isDirectory());
      assert.ok(pooled, 'the pooled sandbox\'s cgroup');
      const [init] = readFileSync(path.join(groups, pooled.name, 'cgroup.procs'), 'utf8').trim().split('\n').map(Number);
      assert.match(readFileSync(`/proc/${init}/comm`, 'utf8'), /^e2b-sandbox-ini/);
      process.kill(init, 'SIGKILL'); // from outside, as an administrator or the OOM killer would
      await until(() => !existsSync(`/proc/${init}`), 'the init ended and was reaped');
      const s = await create({}, b);
      assert.equal(await s.run('echo alive'), 'alive\n', 'the create got a sandbox that runs commands');
      assert.equal((await health(b)).taken, 0, 'it was started afresh, not claimed');
      await until(() => /warm pool: a ready sandbox's init has ended; it is dropped/.test(b.stderr()), 'the backend says it dropped it');
      assert.equal((await s.kill()).status, 204);
    } finally {
      assert.equal((await b.stop()).code, 0, b.stderr());
    }
  });
});

describe('what the pool leaves', { skip }, () => {
  test('nothing: after the backend exits no directory, mount or cgroup of a pooled sandbox is left, and none comes back at the next start', T, async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-warm-'));
    try {
      const b = await startBackend({ stateDir, extraArgs: ['--warm-pool', '3'] });
      await filled(b);
      assert.equal((await health(b)).size, 3);
      const cgroups = readdirSync('/sys/fs/cgroup/pids/e2b-local').filter((d) => d === `b${b.pid}`);
      assert.equal(cgroups.length, 1, 'the pool\'s sandboxes live in the backend\'s cgroup');
      assert.equal(readdirSync(path.join(stateDir, 'sandboxes')).length, 3);
      assert.equal((await b.stop()).code, 0, b.stderr());
      const dir = path.join(stateDir, 'sandboxes');
      assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], [], 'no sandbox directory is left');
      assert.ok(!readFileSync('/proc/self/mountinfo', 'utf8').includes(stateDir), 'nothing mounted under the state directory');
      assert.ok(!existsSync(`/sys/fs/cgroup/pids/e2b-local/b${b.pid}`), 'its cgroups are gone');
      const again = await startBackend({ stateDir, extraArgs: ['--warm-pool', '0'] });
      assert.deepEqual((await api(again, 'GET', '/v2/sandboxes?state=running,paused')).json, [], 'no pooled sandbox was recorded');
      assert.equal((await health(again)).size, 0, '--warm-pool 0: none');
      assert.equal((await again.stop()).code, 0);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test('a small --id-range gets no pool: it would hold the ranges the creates need', T, async () => {
    const b = await startBackend({ extraArgs: ['--id-range', `${1 << 30}:${4 * 65536}`] });
    try {
      assert.equal((await health(b)).size, 0);
    } finally {
      await b.stop();
    }
  });
});
