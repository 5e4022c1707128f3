// The backend run by a user other than root (docs/backend/runtime-and-isolation.md,
// "Rootless"): auto is then rootless, in the user's own user
// namespace over its subordinate ids (or a single id without them), and
// sandboxes are still sandboxes: root and user inside are ids that are
// neither host root nor the user; files, pause, resume and kill work; and
// nothing is left. The test process (root, as in CI) makes the user and
// gives it the template through an idmapped mount (tests/lib/rootless.mjs);
// it fails, never skips, where it cannot. Nothing stays mounted: not under
// the backend's state directory once it has exited, not under the test's
// template root once it is cleaned up, not even when a test process is
// killed before its cleanup.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startBackend, backendEnv, api } from '../../host/backend.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';
import { mountsUnder, pidsOfUids, rootlessRoot, testUser } from '../lib/rootless.mjs';
import { rootlessWithoutCgroups } from '../lib/isolation.mjs';
import { until } from '../../host/wait.mjs';

const T = { timeout: 120_000 };
// The official SDK (templates case) reads E2B_* variables: none may steer it.
for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const IDS = 65536;

async function sandbox(backend) {
  const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 600 });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const id = res.json.sandboxID;
  const token = res.json.envdAccessToken;
  const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: id, token });
  const run = async (script, { user } = {}) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } }, user ? { user } : {});
    const d = dataOf(r.messages);
    return { out: d.stdout.toString(), err: d.stderr.toString(), end: r.messages.find((m) => m.event?.end)?.event.end };
  };
  const files = (params, init = {}) => fetch(`${backend.sandboxUrl}/files?${new URLSearchParams(params)}`,
    { ...init, headers: { 'E2b-Sandbox-Id': id, 'X-Access-Token': token, ...init.headers } });
  return { id, envd, run, files, kill: () => api(backend, 'DELETE', `/sandboxes/${id}`) };
}

const state = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0];
  } catch {
    return null;
  }
};
const comm = (pid) => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return null; } };

// A backend of user, started and stopped around a describe block; checks
// that it exits cleanly and leaves no process of the user's ids behind, and
// nothing mounted.
function rootlessBackend(user) {
  const ctx = {};
  before(async () => {
    ctx.root = rootlessRoot(user);
    // No warm pool: these cases count the processes of the user's ids, which
    // every rootless sandbox shares, pooled ones included.
    ctx.backend = await startBackend({ runAs: user, binary: ctx.root.binary, extraArgs: ['--warm-pool', '0'] });
  });
  after(async () => {
    try {
      if (ctx.backend) {
        const { code } = await ctx.backend.stop();
        assert.equal(code, 0, ctx.backend.stderr());
        const [start, count] = user.sub ? [user.sub.start, IDS] : [user.uid, 1];
        await until(() => pidsOfUids(start, count).length === 0 && pidsOfUids(user.uid, 1).length === 0,
          'no process of the user or of its sandboxes remains');
        assert.deepEqual(mountsUnder(ctx.backend.stateDir), [], 'nothing under the state directory is mounted');
        assert.ok(!existsSync(ctx.backend.stateDir), 'the state directory is gone');
      }
    } finally {
      ctx.root?.cleanup();
    }
    if (ctx.root) {
      assert.deepEqual(mountsUnder(ctx.root.dir), [], 'the template\'s idmapped mount is gone');
      assert.ok(!existsSync(ctx.root.dir));
    }
  });
  return ctx;
}

describe('rootless, over the user\'s subordinate ids', () => {
  const user = testUser('e2bw-rootless');
  const ctx = rootlessBackend(user);
  const sub = user.sub.start;
  let s;

  test('auto is rootless; the ready line and /health/details say so, and that there are no limits', T, async () => {
    const { backend } = ctx;
    assert.equal(backend.isolation, 'rootless');
    assert.deepEqual(backend.limits, rootlessWithoutCgroups.limits);
    assert.equal(backend.seccomp, true);
    const { warm, checkpoint, ...health } = await (await fetch(`${backend.apiUrl}/health/details`)).json();
    assert.deepEqual(health, rootlessWithoutCgroups);
    assert.deepEqual(checkpoint, { available: false, pause: 'freeze', reason: 'the backend runs with rootless isolation; a checkpoint needs full isolation (root)' });
    assert.equal(warm.size, 0, '--warm-pool 0');
    // (stderr is another pipe than the ready line's: it may come a little later)
    await until(() => /rootless: sandboxes have no cpu, memory or pids limits \(no cgroup delegation\), no network but loopback/
      .test(backend.stderr()), 'the stderr note');
    // The backend runs as the user, as pid 1 of a pid namespace of its own.
    const status = readFileSync(`/proc/${backend.pid}/status`, 'utf8');
    assert.match(status, new RegExp(`^Uid:\\s+${user.uid}\\s`, 'm'));
    assert.match(status, /^NSpid:\s+\d+\s+1$/m);
  });

  test('root and user of a sandbox are subordinate ids on the host, neither host root nor the user', T, async () => {
    s = await sandbox(ctx.backend);
    assert.equal((await s.run('id -u; id -g; whoami', { user: 'root' })).out, '0\n0\nroot\n');
    assert.equal((await s.run('id -u; whoami; sudo -n id -u')).out, '1000\nuser\n0\n');
    assert.deepEqual((await s.run('cat /proc/self/uid_map')).out.trim().split(/\s+/).map(Number), [0, 1, IDS]);
    const hold = await s.envd.open('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'echo up; exec sleep 600'] } });
    for (let f = await hold.next(); !f.message.event?.data; f = await hold.next());
    // "up" is printed before bash execs sleep: wait for the exec, not for the output alone.
    await until(() => pidsOfUids(sub + 1000, 1).some((p) => comm(p) === 'sleep'), 'the sandbox user\'s sleep');
    const sleeping = pidsOfUids(sub + 1000, 1).filter((p) => comm(p) === 'sleep');
    assert.equal(sleeping.length, 1, 'the sandbox user\'s sleep runs as subordinate id +1000');
    assert.ok(pidsOfUids(sub, 1).some((p) => comm(p) === 'e2b-sandbox-ini'), 'its init runs as the first subordinate id');
    hold.cancel();
    await s.run('pkill sleep', { user: 'root' });
    // Its device nodes work (the machine's, bound in: the overlay's own are
    // nodev here), and /dev/console is /dev/null, never the host's console.
    assert.equal((await s.run('echo x > /dev/null && head -c 3 /dev/urandom | wc -c; stat -Lc %t:%T /dev/console; echo x > /dev/console && echo written')).out,
      '3\n1:3\nwritten\n');
  });

  test('a port in the sandbox is reached through the proxy', T, async () => {
    const { backend } = ctx;
    const server = await s.envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-m', 'http.server', '8000'] } });
    const body = await until(async () => {
      const r = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': s.id, 'E2b-Sandbox-Port': '8000' } });
      return r.status === 200 ? r.text() : null;
    }, 'the server in the sandbox answers');
    assert.match(body, /Directory listing/);
    server.cancel();
    await s.run('pkill -f http.server', { user: 'root' });
  });

  test('the files API reads and writes in the sandbox, with its owners', T, async () => {
    const up = await s.files({ path: '/home/user/notes/a.txt', username: 'user' },
      { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'rootless hello' });
    assert.equal(up.status, 200, await up.text());
    assert.equal(await (await s.files({ path: '/home/user/notes/a.txt' })).text(), 'rootless hello');
    await s.run('echo r > /root/r.txt', { user: 'root' });
    const rpc = (m, body) => s.envd.call(`filesystem.Filesystem/${m}`, body);
    assert.deepEqual([(await rpc('Stat', { path: '/home/user/notes/a.txt' })).json.entry.owner, (await rpc('Stat', { path: '/root/r.txt' })).json.entry.owner],
      ['user', 'root']);
    assert.ok((await rpc('ListDir', { path: '/home/user/notes' })).json.entries.some((e) => e.name === 'a.txt'));
    assert.equal((await s.run('stat -c "%u %U" /home/user/notes/a.txt')).out, '1000 user\n');
    // Outside, the file belongs to the user's subordinate id +1000.
    assert.equal(statSync(ctx.backend.sandboxPath(s.id, '/home/user/notes/a.txt')).uid, sub + 1000);
  });

  test('pause stops every process of the sandbox (SIGSTOP, no freezer), resume continues them', T, async () => {
    const { backend } = ctx;
    const loop = await s.envd.open('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'echo up; while :; do sleep 0.05; done'] } });
    for (let f = await loop.next(); !f.message.event?.data; f = await loop.next());
    const mine = () => pidsOfUids(sub + 1000, 1);
    assert.equal((await api(backend, 'POST', `/sandboxes/${s.id}/pause`)).status, 204);
    await until(() => mine().length > 0 && mine().every((p) => state(p) === 'T' || state(p) === null), 'every process stopped');
    assert.equal((await s.envd.call('process.Process/List', {})).status, 502, 'a paused sandbox is not reachable');
    assert.equal((await api(backend, 'POST', `/sandboxes/${s.id}/resume`, {})).status, 201);
    await until(() => mine().some((p) => state(p) !== 'T'), 'processes run again');
    loop.cancel();
  });

  test('kill leaves no process of the sandbox', T, async () => {
    assert.ok(pidsOfUids(sub, IDS).length > 0);
    assert.equal((await s.kill()).status, 204);
    await until(() => pidsOfUids(sub, IDS).length === 0, 'every process of the sandbox gone');
  });

  // What a rootless backend cannot build says so (docs/templates.md, "Needs"):
  // its layers would need the host's root to own their files as a sandbox
  // sees them. A build without such a step still works.
  test('templates: steps that change files and images from registries fail saying why; others build', T, async () => {
    const { backend } = ctx;
    const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
    const { Template, Sandbox } = await import('e2b');
    await assert.rejects(Template.build(Template().fromTemplate('base').runCmd('touch /tmp/x', { user: 'root' }), 'rootless-run', opts),
      /steps that change files need the backend's full isolation \(it is rootless\)/);
    // Loopback and never reached: the refusal comes before any pull.
    await assert.rejects(Template.build(Template().fromImage('127.0.0.1:9/never/pulled:1'), 'rootless-image', opts),
      /images from registries need the backend's full isolation \(it is rootless\)/);
    await Template.build(Template().fromTemplate('base').setEnvs({ ROOTLESS_ENV: 'kept' }), 'rootless-env', opts);
    const sb = await Sandbox.create('rootless-env', { ...opts, timeoutMs: 60_000 });
    assert.equal((await sb.commands.run('echo $ROOTLESS_ENV')).stdout, 'kept\n');
    await sb.kill();
  });

  test('full needs root, and a mode that cannot be had fails instead of becoming none', T, () => {
    const as = (args) => spawnSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--',
      ctx.root.binary, '--listen', '127.0.0.1:0', ...args], { encoding: 'utf8', timeout: 20_000, env: backendEnv('k') });
    const full = as(['--isolation', 'full']);
    assert.equal(full.status, 1);
    assert.match(full.stderr, /--isolation full needs root/);
    const missing = as(['--templates', '/nonexistent/templates']);
    assert.equal(missing.status, 1);
    assert.equal(missing.stdout, '', 'no ready line');
    assert.match(missing.stderr, /rootless isolation is not possible here: no templates directory \/nonexistent\/templates/);
  });
});

describe('rootless with a single id (no subordinate ids)', () => {
  const user = testUser('e2bw-single', { subordinate: false });
  const ctx = rootlessBackend(user);

  test('every account runs as the user\'s one id, root inside; the backend says so; files work', T, async () => {
    const { backend } = ctx;
    assert.equal(backend.isolation, 'rootless');
    await until(() => new RegExp(`rootless with a single id: ${user.name} has no subordinate ids`).test(backend.stderr()),
      'the single-id note on stderr');
    const s = await sandbox(backend);
    assert.equal((await s.run('id -u', { user: 'root' })).out, '0\n');
    assert.equal((await s.run('id -u; echo $HOME')).out, '0\n/home/user\n');
    assert.deepEqual((await s.run('cat /proc/self/uid_map')).out.trim().split(/\s+/).map(Number), [0, 0, 1]);
    const up = await s.files({ path: '/tmp/single.txt', username: 'user' },
      { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'one id' });
    assert.equal(up.status, 200, await up.text());
    assert.equal((await s.run('cat /tmp/single.txt; echo; stat -c %u /tmp/single.txt')).out, 'one id\n0\n');
    assert.equal(statSync(backend.sandboxPath(s.id, '/tmp/single.txt')).uid, user.uid);
    assert.equal((await s.kill()).status, 204);
  });

  test('./build.sh as this user says plainly what building templates lacks', T, () => {
    const script = path.join(ctx.root.dir, 'build.sh');
    copyFileSync(path.join(repoRoot, 'build.sh'), script); // where the user can read it
    const r = spawnSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', 'bash', '-c',
      `. ${script} && rootless_ready`], { encoding: 'utf8', cwd: ctx.root.dir, timeout: 20_000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`subordinate user ids for ${user.name} in /etc/subuid`));
    assert.match(r.stderr, new RegExp(`usermod --add-subuids 100000-165535 --add-subgids 100000-165535 ${user.name}`));
  });
});

describe('the test template\'s idmapped mount', () => {
  test('of a test process killed before its cleanup is unmounted and removed by the next rootlessRoot', T, () => {
    const user = testUser('e2bw-rootless');
    const lib = pathToFileURL(path.join(repoRoot, 'tests', 'lib', 'rootless.mjs')).href;
    const killed = spawnSync(process.execPath, ['--input-type=module', '-e',
      `import { rootlessRoot, testUser } from ${JSON.stringify(lib)};\n` +
      `console.log(rootlessRoot(testUser('e2bw-rootless')).dir);\n` +
      "process.kill(process.pid, 'SIGKILL');\n"], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const dir = killed.stdout.trim();
    assert.deepEqual(mountsUnder(dir), [path.join(dir, 'templates', 'base', 'rootfs')], 'left mounted by the killed process');
    const next = rootlessRoot(user);
    try {
      assert.deepEqual(mountsUnder(dir), []);
      assert.ok(!existsSync(dir));
      assert.equal(mountsUnder(next.dir).length, 1, 'the new one is mounted');
    } finally {
      next.cleanup();
    }
    assert.deepEqual(mountsUnder(next.dir), []);
  });
});
