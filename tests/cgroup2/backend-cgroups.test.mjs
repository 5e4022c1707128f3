// The backend's own side of cgroup v2 (docs/backend/cgroups-and-limits.md, "Cgroups"),
// in the cgroup v2 guest: where it puts itself and its sandboxes (a leaf of
// its own, controllers enabled only above leaves), what it says when it
// cannot (a cgroup with other processes in it), what a killed backend
// leaves and the next one removes, a Start into a sandbox at pids.max (the
// kernel refuses the clone into the cgroup: nothing moved in past it),
// metrics from cpu.stat, memory.current and memory.stat, and a rootless
// backend whose delegated cgroup lacks a controller. Skipped on cgroup v1.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, backendBinary, backendEnv, api } from '../../host/backend.mjs';
import { ownCgroup, removeCgroupTree } from '../../host/cgroup.mjs';
import { until, sleep } from '../../host/wait.mjs';
import { rootlessRoot, testUser } from '../lib/rootless.mjs';
import { CG, hierarchy, sandbox } from './cgroup2-lib.mjs';

const T = { timeout: 300_000 };
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const skip = hierarchy() !== 'v2' ? 'cgroup v1 here (the cgroup v2 guest runs these: tests/guest/)'
  : process.getuid() !== 0 && 'needs root';
const read = (file) => readFileSync(file, 'utf8');
const words = (file) => read(file).trim().split(/\s+/).filter(Boolean);
const pidsIn = (dir) => read(path.join(dir, 'cgroup.procs')).split('\n').filter(Boolean).map(Number);

describe('a root backend\'s cgroups on cgroup v2', { skip }, () => {
  test('it runs in a leaf of its own beside its sandboxes; controllers are enabled only where no process is', T, async () => {
    const backend = await startBackend({ extraArgs: ['--warm-pool', '0'], readyTimeoutMs: 120_000 });
    try {
      assert.deepEqual(backend.limits, { memory: true, pids: true, cpu: true, disk: true, devices: 'bpf' });
      assert.equal(backend.cgroup, 'v2');
      const group = backend.cgroupParent;
      assert.equal(path.basename(group), `b${backend.pid}`);
      assert.equal(path.join(CG, ownCgroup(backend.pid)), path.join(group, 'backend'), 'its own leaf');
      for (const dir of [group, path.dirname(group)]) {
        for (const c of ['memory', 'pids', 'cpu']) assert.ok(words(path.join(dir, 'cgroup.subtree_control')).includes(c), `${c} enabled in ${dir}`);
        assert.deepEqual(pidsIn(dir), [], `no process in ${dir} itself`);
      }
      const s = await sandbox(backend);
      assert.equal((await s.run('grep ^0:: /proc/self/cgroup')).out, `0::${path.join(group.slice(CG.length), s.id)}\n`);
      assert.equal(read(path.join(group, s.id, 'memory.max')), `${512 << 20}\n`);
      assert.equal(read(path.join(group, s.id, 'cpu.max')), '200000 100000\n');
      assert.equal(await s.kill(), 204);
      await until(() => !existsSync(path.join(group, s.id)), 'its cgroup removed');
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });

  test('Starts into a sandbox at pids.max are refused by the kernel and answered resource_exhausted; the count never passes it', T, async () => {
    const backend = await startBackend({ extraArgs: ['--warm-pool', '0'], readyTimeoutMs: 120_000 });
    const s = await sandbox(backend);
    try {
      const dir = path.join(backend.cgroupParent, s.id);
      const current = () => Number(read(path.join(dir, 'pids.current')));
      // Threads count as pids and hold still: the sandbox is exactly full.
      const filler = await s.envd.open('process.Process/Start', { process: { cmd: '/usr/bin/python3', args: ['-c', [
        'import threading, time',
        'threading.stack_size(65536)',
        'stop = threading.Event(); n = 0',
        'try:',
        '    while True: threading.Thread(target=stop.wait, daemon=True).start(); n += 1',
        'except RuntimeError: pass',
        'print("full", n, flush=True)',
        'time.sleep(600)',
      ].join('\n')] } });
      let out = '';
      while (!out.includes('full')) {
        const f = await filler.next();
        assert.ok(f && !f.end, `the filler ended early: ${out}`);
        if (f.message.event?.data?.stdout) out += Buffer.from(f.message.event.data.stdout, 'base64').toString();
      }
      assert.equal(current(), 1024);
      // The first frame of each: an end with the error, never a start event.
      const start = async () => {
        const st = await s.envd.open('process.Process/Start', { process: { cmd: '/bin/sleep', args: ['600'] } });
        const f = await st.next();
        st.cancel();
        return f;
      };
      const frames = await Promise.all(Array.from({ length: 40 }, start));
      for (const f of frames) {
        assert.equal(f?.end, true, JSON.stringify(f?.message));
        assert.equal(f.message.error?.code, 'resource_exhausted', JSON.stringify(f.message));
        assert.match(f.message.error.message, /limit of 1024 processes \(pids\.max\)/);
      }
      assert.equal(current(), 1024);
      assert.match(read(path.join(dir, 'pids.events')), /^max [1-9]/m, 'the kernel refused them (pids.events)');
      filler.cancel();
    } finally {
      assert.equal(await s.kill(), 204);
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });

  test('getMetrics: CPU from cpu.stat, memory and page cache from memory.current and memory.stat', T, async () => {
    const backend = await startBackend({ extraArgs: ['--warm-pool', '0', '--metrics-interval', '1'], readyTimeoutMs: 120_000 });
    const s = await sandbox(backend);
    try {
      await s.run('head -c 64M /dev/zero > /dev/shm/cache; timeout 3 sh -c "while :; do :; done"; true');
      const samples = await until(async () => {
        const r = await api(backend, 'GET', `/sandboxes/${s.id}/metrics`);
        return r.status === 200 && r.json.some((m) => m.cpuUsedPct > 5) && r.json.at(-1).memCache >= 60 << 20 ? r.json : null;
      }, 'a sample with the loop\'s CPU and the 64 MiB of /dev/shm as cache', 60_000);
      const last = samples.at(-1);
      assert.ok(last.memUsed > 0 && last.memUsed < 512 << 20, JSON.stringify(last));
      assert.equal(last.memTotal, 512 << 20);
    } finally {
      assert.equal(await s.kill(), 204);
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });

  test('started in a cgroup that holds other processes, it refuses, naming the cgroup v2 rule and what to do', T, () => {
    // Started where this test runs (its own cgroup holds node): no launcher placement.
    const r = spawnSync(backendBinary(), ['--listen', '127.0.0.1:0', '--isolation', 'full'],
      { encoding: 'utf8', timeout: 30_000, env: backendEnv('k') });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '');
    const own = ownCgroup();
    assert.ok(r.stderr.includes(`cgroup v2: the backend's cgroup ${path.join(CG, own)} holds other processes (pid `), r.stderr);
    assert.match(r.stderr, /start the backend in a cgroup of its own \(systemd-run --scope -p Delegate=yes <backend> \.\.\.\)/);
  });

  test('from the root cgroup: /sys/fs/cgroup/e2b-local; a killed backend\'s cgroups go at the next start, a stopped one leaves none', T, async () => {
    const atRoot = ['sh', '-c', `echo $$ > ${CG}/cgroup.procs && exec "$@"`, 'sh'];
    const first = await startBackend({ extraArgs: ['--warm-pool', '0'], prefix: atRoot, readyTimeoutMs: 120_000 });
    assert.equal(first.cgroupParent, `${CG}/e2b-local/b${first.pid}`);
    const s = await sandbox(first);
    assert.ok(existsSync(path.join(first.cgroupParent, s.id)));
    await first.stop('SIGKILL');
    // Its sandbox's init dies with it (parent-death signal); the cgroups stay.
    await until(() => pidsIn(path.join(first.cgroupParent, s.id)).length === 0, 'the killed backend\'s sandbox empty');
    assert.ok(existsSync(path.join(first.cgroupParent, s.id)), 'left behind');
    const next = await startBackend({ extraArgs: ['--warm-pool', '0'], prefix: atRoot, readyTimeoutMs: 120_000 });
    try {
      await until(() => next.stderr().includes(`removing cgroups left by backend ${first.pid}`), 'the next backend says it removes them');
      assert.ok(!existsSync(first.cgroupParent), 'gone');
    } finally {
      assert.equal((await next.stop()).code, 0, next.stderr());
    }
    assert.ok(!existsSync(next.cgroupParent), 'a backend in the root cgroup goes back there at exit and leaves nothing');
    assert.equal(ownCgroup(next.pid), null, 'exited');
  });
});

// The guest's user has user.slice/user-UID.slice/user@UID.service delegated
// (tests/guest/guest-init.sh), as systemd gives a logged-in user.
const guestUser = process.env.E2BW_GUEST_USER;
describe('rootless on cgroup v2 where the delegated cgroup lacks cpu', {
  skip: skip || (!guestUser && 'no user with a delegated subtree here (the cgroup v2 guest has one)'),
}, () => {
  test('sandboxes get the memory and pids limits, not cpu; the ready line and stderr say so', T, async () => {
    const user = testUser(guestUser);
    const root = rootlessRoot(user);
    // Below the user's app.slice: a cgroup that hands memory and pids down, not cpu.
    const delegated = `${CG}/user.slice/user-${user.uid}.slice/user@${user.uid}.service`;
    const partial = path.join(delegated, 'app.slice', `e2b-partial-${process.pid}`);
    mkdirSync(partial);
    for (const c of ['memory', 'pids']) writeFileSync(path.join(partial, 'cgroup.subtree_control'), `+${c}`);
    const scope = path.join(partial, 'backend.scope');
    mkdirSync(scope);
    for (const f of [partial, scope, ...['cgroup.procs', 'cgroup.subtree_control', 'cgroup.threads'].map((x) => path.join(scope, x))]) chownSync(f, user.uid, user.gid);
    const launcher = path.join(root.dir, 'bin', 'in-partial-scope');
    writeFileSync(launcher, `#!/bin/sh\necho $$ > ${scope}/cgroup.procs && exec setpriv --reuid=${user.uid} --regid=${user.gid} --init-groups -- ${root.binary} "$@"\n`, { mode: 0o755 });
    const backend = await startBackend({ binary: launcher, extraArgs: ['--warm-pool', '0'], readyTimeoutMs: 120_000 });
    try {
      assert.equal(backend.isolation, 'rootless');
      assert.deepEqual(backend.limits, { memory: true, pids: true, cpu: false, disk: false, devices: 'userns' });
      assert.ok(backend.stderr().includes(`cgroup v2: controller cpu is not available in ${scope}/cgroup.controllers (the cgroup above does not delegate it): sandboxes get no cpu limit`), backend.stderr());
      const s = await sandbox(backend, { memoryMB: 256 });
      const dir = `/proc/${backend.pid}/root${backend.cgroupParent}/${s.id}`;
      assert.equal(read(path.join(dir, 'memory.max')), `${256 << 20}\n`);
      assert.equal(read(path.join(dir, 'pids.max')), '1024\n');
      assert.ok(!existsSync(path.join(dir, 'cpu.max')), 'no cpu controller there');
      assert.equal((await s.run('echo hi')).out, 'hi\n');
      assert.equal(await s.kill(), 204);
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr());
      root.cleanup();
      await sleep(100);
      removeCgroupTree(partial);
    }
    assert.ok(!existsSync(partial));
  });
});
