// A backend run by a user other than root on cgroup v2, in a cgroup
// delegated to it (docs/backend/runtime-and-isolation.md, "Rootless"): its sandboxes get
// cgroups of their own there, every command starts in its sandbox's
// (clone3 with CLONE_INTO_CGROUP), pause freezes the cgroup (cgroup.freeze,
// not SIGSTOP), kill empties and removes it (cgroup.kill), and the ready line
// and /health say which limits apply: those of the controllers delegated.
//
// On a cgroup v1 machine (whose controllers are bound to v1 and must stay
// so) the test mounts cgroup2 over /sys/fs/cgroup in a mount namespace of
// the backend's own: the same unified hierarchy, without any controller, so
// the limits are all false and everything else is as on a v2 machine. On a
// cgroup v2 machine the cgroup is a real delegated one, with the controllers
// the machine has. The test process (root) makes the cgroup, delegates it
// (chown, as systemd's Delegate=yes does) and moves the backend there before
// it starts as the user.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startBackend, api } from '../../host/backend.mjs';
import { cgroupV2 } from '../../host/cgroup.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';
import { pidsOfUids, rootlessRoot, testUser } from '../lib/rootless.mjs';
import { until } from '../../host/wait.mjs';

const T = { timeout: 120_000 };
const IDS = 65536;
const onV2 = cgroupV2();
const GROUP = `e2bw-rootless-cgroup2-${process.pid}`;

// Runs script as root with the unified hierarchy at $CG (on v1, a cgroup2
// mount of its own in a private mount namespace).
function withHierarchy(script, ...args) {
  const mount = onV2 ? 'CG=/sys/fs/cgroup' : 'mount -t cgroup2 none /sys/fs/cgroup && CG=/sys/fs/cgroup';
  return spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', `set -e; ${mount}; ${script}`, 'sh', ...args],
    { encoding: 'utf8' });
}

describe('rootless on cgroup v2, in a delegated cgroup', () => {
  const user = testUser('e2bw-cgroup2');
  const sub = user.sub.start;
  const ctx = {};
  let s;

  before(async () => {
    ctx.root = rootlessRoot(user);
    // The delegated cgroup, and the backend started in it as the user:
    // mkdir, chown, move, then setpriv (execs: the pid stays the backend's).
    const place = `${onV2 ? '' : 'mount -t cgroup2 none /sys/fs/cgroup && '}d=/sys/fs/cgroup/$0 && mkdir "$d" && ` +
      `chown "$1" "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads" && ` +
      'echo $$ > "$d/cgroup.procs" && shift && exec "$@"';
    ctx.backend = await startBackend({
      runAs: user, binary: ctx.root.binary, extraArgs: ['--warm-pool', '0'],
      prefix: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', place, GROUP, `${user.uid}:${user.gid}`],
    });
  });

  after(async () => {
    try {
      if (ctx.backend) {
        const { code } = await ctx.backend.stop();
        assert.equal(code, 0, ctx.backend.stderr());
        await until(() => pidsOfUids(sub, IDS).length === 0 && pidsOfUids(user.uid, 1).length === 0,
          'no process of the user or of its sandboxes remains');
      }
    } finally {
      ctx.root?.cleanup();
      // What is left: the backend's own leaf (b<pid>/backend: it cannot
      // remove the cgroup it runs in), empty; then the delegated cgroup.
      const left = withHierarchy('d=$CG/$1; find "$d" -mindepth 1 -depth -type d -printf "%P\\n" -exec rmdir {} \\; ; rmdir "$d"', GROUP);
      assert.equal(left.status, 0, left.stderr);
      ctx.left = left.stdout.trim().split('\n').filter(Boolean);
    }
    assert.deepEqual(ctx.left, [`b${ctx.backend.startedPid}/backend`, `b${ctx.backend.startedPid}`], 'only the backend\'s own leaf was left');
  });

  test('the ready line and /health say cgroup v2 and which limits apply', T, async () => {
    const { backend } = ctx;
    assert.equal(backend.isolation, 'rootless');
    assert.equal(backend.cgroup, 'v2', backend.stderr());
    // b<pid>: the pid of the process started (which stays outside the
    // backend's namespaces, forwarding signals to it), in the leaf with it.
    assert.equal(backend.cgroupParent, `/sys/fs/cgroup/${GROUP}/b${backend.startedPid}`);
    const leaf = `/proc/${backend.pid}/root${backend.cgroupParent}/backend/cgroup.procs`;
    assert.deepEqual(readFileSync(leaf, 'utf8').split('\n').filter(Boolean).map(Number).sort(),
      [backend.pid, backend.startedPid].sort(), 'both in the backend\'s leaf');
    // On this machine's hierarchy: the controllers the cgroup above hands
    // down (none where they are bound to v1).
    const above = onV2 ? readFileSync('/sys/fs/cgroup/cgroup.subtree_control', 'utf8').split(/\s+/) : [];
    const want = { memory: above.includes('memory'), pids: above.includes('pids'), cpu: above.includes('cpu'), disk: false, devices: 'userns' };
    assert.deepEqual(backend.limits, want);
    const { warm, checkpoint, ...health } = await (await fetch(`${backend.apiUrl}/health/details`)).json();
    assert.deepEqual(health, { isolation: 'rootless', limits: want, cgroup: 'v2', seccomp: true, cgroup_favor_dynmods: false });
    assert.deepEqual(checkpoint, { available: false, pause: 'freeze', reason: 'the backend runs with rootless isolation; a checkpoint needs full isolation (root)' });
    assert.equal(warm.size, 0);
    if (!want.memory) {
      await until(() => /rootless: sandboxes have no [a-z, ]+ limits \(controllers not delegated to this user\), no network but loopback, and pause freezes their cgroup/
        .test(backend.stderr()), 'the stderr note');
    }
  });

  test('a sandbox\'s commands start in its own cgroup, below the backend\'s', T, async () => {
    const { backend } = ctx;
    const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 600 });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: res.json.sandboxID, token: res.json.envdAccessToken });
    s = { id: res.json.sandboxID, envd };
    s.run = async (script, opts = {}) => {
      const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } }, opts);
      return dataOf(r.messages).stdout.toString();
    };
    // As the kernel names it, from inside: /proc/self/cgroup of a command.
    // (On a v1 machine, its v1 hierarchies are listed too: the unified one is 0::.)
    assert.equal(await s.run('grep ^0:: /proc/self/cgroup'), `0::/${GROUP}/b${backend.startedPid}/${s.id}\n`);
    assert.equal(await s.run('grep ^0:: /proc/1/cgroup', { user: 'root' }), `0::/${GROUP}/b${backend.startedPid}/${s.id}\n`, 'its init too');
    // From outside: every process of the sandbox is in its cgroup.
    const procs = () => readFileSync(`/proc/${backend.pid}/root${backend.cgroupDir(s.id)}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
    assert.deepEqual(procs().sort(), pidsOfUids(sub, IDS).sort());
  });

  test('pause freezes its cgroup (cgroup.freeze), resume thaws it', T, async () => {
    const { backend } = ctx;
    const dir = `/proc/${backend.pid}/root${backend.cgroupDir(s.id)}`;
    const loop = await s.envd.open('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'echo up; while :; do sleep 0.05; done'] } });
    for (let f = await loop.next(); !f.message.event?.data; f = await loop.next());
    assert.equal((await api(backend, 'POST', `/sandboxes/${s.id}/pause`)).status, 204);
    assert.match(readFileSync(`${dir}/cgroup.events`, 'utf8'), /^frozen 1$/m, 'frozen when the pause is answered');
    assert.equal(readFileSync(`${dir}/cgroup.freeze`, 'utf8'), '1\n');
    // Not stopped by a signal: a frozen task's state is no 'T'.
    const states = pidsOfUids(sub, IDS).map((p) => readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1][0]);
    assert.ok(states.length > 0 && !states.includes('T'), states.join(''));
    assert.equal((await api(backend, 'POST', `/sandboxes/${s.id}/resume`, {})).status, 201);
    assert.match(readFileSync(`${dir}/cgroup.events`, 'utf8'), /^frozen 0$/m);
    assert.equal(await s.run('echo back'), 'back\n');
    loop.cancel();
  });

  test('kill empties and removes its cgroup', T, async () => {
    const { backend } = ctx;
    const dir = `/proc/${backend.pid}/root${backend.cgroupDir(s.id)}`;
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${s.id}`)).status, 204);
    await until(() => pidsOfUids(sub, IDS).length === 0, 'every process of the sandbox gone');
    await until(() => spawnSync('test', ['-e', dir]).status !== 0, 'its cgroup removed');
  });
});
