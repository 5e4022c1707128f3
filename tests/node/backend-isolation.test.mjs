// The local backend as a sandbox runtime: each sandbox has its own
// root filesystem, users, namespaces and cgroup limits; pause freezes; kill
// and shutdown leave nothing behind. Real backend, real commands inside real
// sandboxes, driven over envd's process service (host/connect.mjs).
// Skipped where the backend cannot isolate (it then says isolation "none").
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, backendBinary, backendEnv, api } from '../../host/backend.mjs';
import { fullIsolation, noIsolation } from '../lib/isolation.mjs';
import { loadProvider } from '../../host/reference/host.mjs';
import { until, sleep } from '../../host/wait.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';

const T = { timeout: 120_000 };
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function sandbox(backend, body = {}) {
  // An hour: no sandbox may expire while a slow step (the 200k files) runs.
  const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: res.json.sandboxID, token: res.json.envdAccessToken });
  // Runs a shell script to its end: { out, err, end, status, endStream }.
  const run = async (script, { user, cwd, timeoutMs } = {}) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script], ...(cwd ? { cwd } : {}) } },
      { ...(user ? { user } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
    const d = dataOf(r.messages);
    return { out: d.stdout.toString(), err: d.stderr.toString(), end: r.messages.find((m) => m.event.end)?.event.end, endStream: r.end };
  };
  return { id: res.json.sandboxID, info: res.json, envd, run };
}

const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
};
const ourCgroups = (backendPid) => ['memory', 'pids', 'cpu', 'freezer', 'devices', 'cpuacct'].filter((c) => existsSync(`/sys/fs/cgroup/${c}/e2b-local/b${backendPid}`));
const mountsMentioning = (text) => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(text));

describe('sandbox isolation', () => {
  let backend;
  let a;
  let b;
  let canaryDir;

  before(async () => {
    backend = await startBackend();
    if (backend.isolation !== 'full') return;
    canaryDir = mkdtempSync(path.join(os.tmpdir(), 'e2b-canary-'));
    writeFileSync(path.join(canaryDir, 'canary.txt'), 'host secret');
    a = await sandbox(backend);
    b = await sandbox(backend);
  });

  after(async () => {
    if (canaryDir) rmSync(canaryDir, { recursive: true, force: true });
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  const skipUnlessFull = (t) => {
    if (backend.isolation !== 'full') { t.skip('the backend runs with isolation none here'); return true; }
    return false;
  };

  test('the ready line and /health/details say isolation full, with limits', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const want = fullIsolation();
    assert.deepEqual(backend.limits, want.limits);
    assert.equal(backend.cgroup, want.cgroup);
    const res = await fetch(`${backend.apiUrl}/health/details`);
    assert.equal(res.status, 200);
    const { warm, checkpoint, ...health } = await res.json();
    assert.deepEqual(health, want);
    assert.equal(warm.size, 3, 'the default warm pool');
    // How pauses are done here: checkpoints, or freezing and why (docs/backend/state.md, "Pause").
    assert.equal(checkpoint.pause, checkpoint.available ? 'checkpoint' : 'freeze');
    if (!checkpoint.available) assert.match(checkpoint.reason, /criu/);
  });

  test('cgroup migrations skip the grace period: a hierarchy of the backend\'s own in favordynmods mode, none with --cgroup-favor-dynmods off', T, async (t) => {
    if (skipUnlessFull(t)) return;
    // The mode is a property of a mounted hierarchy: the backend's, in its
    // private mount namespace, under its state directory.
    const cgroupMounts = (pid) => readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n')
      .filter((l) => / - cgroup cgroup /.test(l) && l.includes('name=e2b-local-backend'))
    const ours = cgroupMounts(backend.pid)
    assert.equal(ours.length, 1, ours.join('\n'))
    assert.match(ours[0], /favordynmods/)
    assert.ok(ours[0].split(' ')[4].startsWith(backend.stateDir), ours[0])
    assert.deepEqual(cgroupMounts(process.pid), [], 'not in the host\'s mount namespace')
    const off = await startBackend({ extraArgs: ['--cgroup-favor-dynmods', 'off', '--warm-pool', '0'] })
    try {
      assert.equal(off.cgroupFavorDynmods, false)
      assert.equal((await (await fetch(`${off.apiUrl}/health/details`)).json()).cgroup_favor_dynmods, false)
      assert.deepEqual(cgroupMounts(off.pid), [])
    } finally {
      assert.equal((await off.stop()).code, 0)
    }
  });

  test('the host, the state directory and other sandboxes are out of reach', T, async (t) => {
    if (skipUnlessFull(t)) return;
    await b.run('echo b-private > /home/user/mine.txt');
    const canary = path.join(canaryDir, 'canary.txt');
    const r = await a.run(`cat ${canary}; ls ${backend.stateDir}; ls ${backend.stateDir}/sandboxes/${b.id}; ` +
      `find / -xdev -name mine.txt 2>/dev/null; echo done`, { user: 'root' });
    assert.equal(r.out, 'done\n', r.err);
    assert.match(r.err, /No such file or directory/);
    // Absolute symbolic links and ".." resolve inside the sandbox's own root.
    const l = await a.run(`ln -s ${canaryDir} /tmp/host; cat /tmp/host/canary.txt; cd /../../..; pwd; ls /proc/1/root/${canaryDir}; echo end`, { user: 'root' });
    assert.equal(l.out, '/\nend\n');
    assert.doesNotMatch(l.out, /host secret/);
    // A file written at / lands in the sandbox, not on the host.
    const name = `e2b-iso-${randomBytes(4).toString('hex')}`;
    assert.equal((await a.run(`echo x > /${name} && cat /${name}`, { user: 'root' })).out, 'x\n');
    assert.ok(!existsSync(`/${name}`));
  });

  test('ps shows only the sandbox\'s processes; others cannot be signalled', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const r = await a.run('ps -e -o pid=,comm=');
    const lines = r.out.trim().split('\n').map((l) => l.trim());
    assert.ok(lines[0].startsWith('1 e2b-sandbox-ini'), r.out);
    assert.ok(lines.length <= 4, r.out); // init, bash, ps
    assert.ok(!r.out.includes('e2b-local-backe') && !r.out.includes('node'), r.out);
    const k = await a.run(`kill -0 ${backend.pid} 2>&1; kill -9 ${process.pid} 2>&1; echo rc=$?`, { user: 'root' });
    assert.match(k.out, /No such process/);
    assert.ok(alive(backend.pid) && alive(process.pid));
    assert.equal((await a.run('hostname')).out, 'e2b\n');
    // Nothing of the backend's command line (its API key) is visible either.
    const cmdlines = await a.run('cat /proc/[0-9]*/cmdline | tr "\\0" " "', { user: 'root' });
    assert.ok(!cmdlines.out.includes(backend.apiKey) && !cmdlines.out.includes('e2b-local-backend'), cmdlines.out);
  });

  test('whoami is user by default and root when asked; sudo works; groups from the sandbox', T, async (t) => {
    if (skipUnlessFull(t)) return;
    assert.equal((await a.run('whoami; echo $HOME $USER; pwd')).out, 'user\n/home/user user\n/home/user\n');
    assert.equal((await a.run('whoami; echo $HOME; pwd', { user: 'root' })).out, 'root\n/root\n/root\n');
    assert.equal((await a.run('sudo -n whoami')).out, 'root\n');
    assert.equal((await a.run('id -u; id -g')).out, '1000\n1000\n');
  });

  test('a command keeps Docker\'s capabilities but CAP_MKNOD at most, and starts with no signal ignored or blocked', T, async (t) => {
    if (skipUnlessFull(t)) return;
    // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE NET_RAW SYS_CHROOT AUDIT_WRITE SETFCAP
    const kept = [0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 29, 31].reduce((m, b) => m | (1n << BigInt(b)), 0n);
    const status = async (user) => Object.fromEntries((await a.run('cat /proc/self/status', { user })).out.split('\n')
      .filter((l) => /^(Cap(Bnd|Eff)|Sig(Ign|Blk)):/.test(l)).map((l) => l.split(/:\s+/)).map(([k, v]) => [k, BigInt(`0x${v}`)]));
    assert.deepEqual(await status('user'), { SigBlk: 0n, SigIgn: 0n, CapEff: 0n, CapBnd: kept });
    assert.deepEqual(await status('root'), { SigBlk: 0n, SigIgn: 0n, CapEff: kept, CapBnd: kept });
  });

  test('two sandboxes both serve port 8000, each reached separately', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const serve = (sb, text) => sb.envd.open('process.Process/Start', {
      process: { cmd: '/bin/bash', args: ['-c', `mkdir -p /tmp/www && echo ${text} > /tmp/www/who && cd /tmp/www && exec python3 -m http.server 8000 --bind 127.0.0.1`] },
    });
    const sa = await serve(a, 'sandbox-a');
    const sb = await serve(b, 'sandbox-b');
    const get = (x) => until(async () => {
      const r = await x.run('curl -s http://127.0.0.1:8000/who');
      return r.out.trim() || null;
    }, 'the server answers');
    assert.equal(await get(a), 'sandbox-a');
    assert.equal(await get(b), 'sandbox-b');
    sa.cancel();
    sb.cancel();
    await a.run('pkill -f http.server; true');
    await b.run('pkill -f http.server; true');
  });

  test('a fork bomb hits the pids limit while the backend and other sandboxes serve', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const bomb = await sandbox(backend);
    const s = await bomb.envd.open('process.Process/Start', {
      process: { cmd: '/bin/bash', args: ['-c', 'f() { f | f & }; f; sleep 1000'] },
    });
    await until(() => backend.hostPids(bomb.id).length >= 1000, 'the bomb fills its pids limit', 30000);
    assert.ok(backend.hostPids(bomb.id).length <= 1024);
    assert.equal((await a.run('echo still here')).out, 'still here\n');
    assert.equal((await fetch(`${backend.apiUrl}/health`)).status, 204);
    s.cancel();
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${bomb.id}`)).status, 204);
    await until(() => backend.hostPids(bomb.id).length === 0, 'the bomb is gone');
  });

  test('a memory hog is OOM-killed, its end event says so, and the sandbox stays usable', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const small = await sandbox(backend, { memoryMB: 128 });
    assert.equal((await api(backend, 'GET', `/sandboxes/${small.id}`)).json.memoryMB, 128);
    const r = await small.run('exec python3 -c "a = b\'x\' * (512 << 20); print(len(a))"');
    assert.deepEqual(r.end, { exitCode: -1, status: 'signal: killed', error: 'signal: killed' });
    assert.equal((await small.run('echo alive')).out, 'alive\n');
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${small.id}`)).status, 204);
  });

  test('after kill no process of the sandbox remains (setsid, double fork, nohup)', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const v = await sandbox(backend);
    await v.run('setsid sleep 1000 < /dev/null > /dev/null 2>&1 & (sleep 1001 < /dev/null > /dev/null 2>&1 &) ; nohup sleep 1002 > /dev/null 2>&1 & disown; echo ok');
    await until(() => backend.hostPids(v.id).length >= 4, 'init and three sleepers');
    const pids = backend.hostPids(v.id);
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${v.id}`)).status, 204);
    await until(() => pids.every((p) => !alive(p)), `every process gone: ${pids.filter(alive)}`);
    await until(() => !existsSync(`/sys/fs/cgroup/pids/e2b-local/b${backend.pid}/${v.id}`), 'its cgroup is gone');
    await until(() => !existsSync(path.join(backend.stateDir, 'sandboxes', v.id)), 'its directory is gone');
    assert.equal((await v.envd.call('process.Process/List', {})).status, 502);
    const health = await fetch(`${backend.sandboxUrl}/health`, { headers: { 'E2b-Sandbox-Id': v.id } });
    assert.equal(health.status, 502, 'E2B\'s proxy answer for a sandbox that is gone');
  });

  test('pause freezes a job-control shell in a PTY without it noticing; it carries on after resume', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const p = await sandbox(backend);
    const s = await p.envd.open('process.Process/Start', {
      process: { cmd: '/bin/bash', args: ['-i'], envs: { TERM: 'dumb', PS1: '$ ' } }, pty: { size: { cols: 80, rows: 24 } },
    });
    const pid = (await s.next()).message.event.start.pid;
    let screen = '';
    const readUntilText = async (text) => {
      while (!screen.includes(text)) {
        const f = await s.next();
        assert.ok(f && !f.end, `stream ended before ${text}: ${screen}`);
        if (f.message.event?.data?.pty) screen += Buffer.from(f.message.event.data.pty, 'base64').toString();
      }
    };
    const type = (line) => p.envd.call('process.Process/SendInput', { process: { pid }, input: { pty: Buffer.from(line).toString('base64') } });
    await type('sleep 1000 & echo job-started\n');
    await readUntilText('job-started');
    assert.equal((await api(backend, 'POST', `/sandboxes/${p.id}/pause`)).status, 204);
    assert.equal((await api(backend, 'POST', `/v2/sandboxes/${p.id}/connect`, { timeout: 300 })).status, 201);
    await type('jobs; echo after-$((40+2))\n');
    await readUntilText('after-42');
    assert.match(screen, /\[1\]\+\s+Running\s+sleep 1000 &/, 'the background job still runs, never stopped');
    assert.doesNotMatch(screen, /Stopped/);
    s.cancel();
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${p.id}`)).status, 204);
  });

  // Filling 200k files takes 15-40 s on a quiet 2-core machine, far more on a busy one.
  test('removing a sandbox of 200k files does not stall another sandbox\'s stream', { timeout: 600_000 }, async (t) => {
    if (skipUnlessFull(t)) return;
    const big = await sandbox(backend);
    // 200 directories of 1,000 files (one huge directory is several times
    // slower to fill on ext4), a tree deeper than 256 levels, and a file the
    // host makes immutable below.
    const made = await big.run('seq 1 1000 > /tmp/names && mkdir -p /home/user/many && cd /home/user/many && ' +
      'for d in $(seq 200); do mkdir $d && (cd $d && xargs touch < /tmp/names); done && ' +
      'cd /home/user && p=deep; for i in $(seq 300); do p=$p/d; done; mkdir -p $p && touch $p/f locked && find many -type f | wc -l',
      { timeoutMs: 540_000 });
    assert.equal(made.out.trim(), '200000', made.err);
    // Root in the sandbox lacks CAP_LINUX_IMMUTABLE; the host's root sets the flag.
    execFileSync('chattr', ['+i', backend.sandboxPath(big.id, '/home/user/locked')]);
    assert.match((await big.run('lsattr /home/user/locked')).out, /^-*i\S* /);
    const s = await a.envd.open('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'for i in $(seq 1 100000); do echo $i; sleep 0.005; done'] } });
    await s.next(); // start
    await s.next(); // first output
    const dir = path.join(backend.stateDir, 'sandboxes', big.id);
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${big.id}`)).status, 204);
    // While the tree is being deleted the other stream keeps delivering.
    let frames = 0;
    while (existsSync(dir)) {
      const f = await s.next();
      assert.ok(f && !f.end, 'the other stream keeps flowing');
      frames++;
    }
    assert.ok(frames > 0);
    s.cancel();
  });

  test('bad input: unknown template, tiny memory, unknown user, a cwd that is not in the sandbox', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const unknown = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'no-such-template' });
    assert.equal(unknown.status, 404);
    assert.match(unknown.json.message, /template 'no-such-template' not found/);
    const dots = await api(backend, 'POST', '/v2/sandboxes', { templateID: '../templates/base' });
    assert.equal(dots.status, 404);
    const tiny = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', memoryMB: 16 });
    assert.equal(tiny.status, 400);
    assert.match(tiny.json.message, /memoryMB must be between 128/);
    const nobodyHere = await a.envd.stream('process.Process/Start', { process: { cmd: 'true' } }, { user: 'mallory' });
    assert.deepEqual(nobodyHere.end, { error: { code: 'unauthenticated', message: "invalid username: 'mallory'" } });
    const hostCwd = await a.run('pwd', { cwd: backend.stateDir });
    assert.deepEqual(hostCwd.endStream, { error: { code: 'invalid_argument', message: `cwd '${backend.stateDir}' does not exist` } });
    assert.equal((await a.run('pwd', { cwd: '/home/user/../../../..' })).out, '/\n');
  });

  test('the plugin maps an unknown template to -32002 not_found with the template sdk_code E4001', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const infra = await loadProvider(repoRoot, { env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } });
    await assert.rejects(infra.call('sandbox.create', { template: 'no-such-template' }), (err) => {
      assert.equal(err.rpc.code, -32002);
      assert.equal(err.rpc.data.kind, 'not_found');
      assert.equal(err.rpc.data.http_status, 404);
      assert.equal(err.rpc.data.sdk_code, 'E4001', 'a template has its own sdk_code; E2009 is for sandboxes (docs/errors.md)');
      return true;
    });
  });
});

describe('--isolation', () => {
  test('none runs without isolation and says so; full and auto refuse to start when a piece is missing', T, async () => {
    const none = await startBackend({ extraArgs: ['--isolation', 'none'] });
    assert.equal(none.isolation, 'none');
    assert.deepEqual(none.limits, noIsolation.limits);
    assert.equal(none.cgroup, null);
    assert.deepEqual(await (await fetch(`${none.apiUrl}/health/details`)).json(), { ...noIsolation, warm: { ready: 0, size: 0, templates: 0, templates_ready: 0, taken: 0 },
      checkpoint: { available: false, pause: 'freeze', reason: 'the backend runs with none isolation; a checkpoint needs full isolation (root)' } });
    assert.equal((await none.stop()).code, 0);

    // auto never quietly becomes none: without a piece it fails, as full does.
    for (const [mode, said] of [['full', /--isolation full is not possible here: .*\/nonexistent\/templates/],
      ['auto', /isolation auto: full isolation is not possible here: .*\/nonexistent\/templates.*--isolation none/]]) {
      const missing = spawnSync(backendBinary(), ['--listen', '127.0.0.1:0', '--isolation', mode,
        '--templates', '/nonexistent/templates'], { encoding: 'utf8', timeout: 20_000, env: backendEnv('k') });
      assert.equal(missing.status, 1, mode);
      assert.equal(missing.stdout, '', 'no ready line');
      assert.match(missing.stderr, said);
    }
    // rootless is for a user other than root.
    const rootless = spawnSync(backendBinary(), ['--listen', '127.0.0.1:0', '--isolation', 'rootless'],
      { encoding: 'utf8', timeout: 20_000, env: backendEnv('k') });
    assert.equal(rootless.status, 1);
    assert.match(rootless.stderr, /--isolation rootless is for a backend started by a user other than root/);

    const bad = spawnSync(backendBinary(), ['--listen', '127.0.0.1:0', '--isolation', 'maybe'], { encoding: 'utf8', env: backendEnv('k') });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--isolation must be auto, full, rootless or none/);
  });
});

describe('nothing remains', () => {
  test('backend shutdown leaves no process, mount or cgroup', T, async (t) => {
    const backend = await startBackend();
    if (backend.isolation !== 'full') { t.skip('isolation none'); await backend.stop(); return; }
    const x = await sandbox(backend);
    await x.run('setsid sleep 1000 < /dev/null > /dev/null 2>&1 & echo');
    await api(backend, 'POST', `/sandboxes/${(await sandbox(backend)).id}/pause`);
    const pids = backend.hostPids(x.id);
    assert.ok(pids.length >= 2);
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    for (const p of pids) assert.ok(!alive(p), `pid ${p} outlived the backend`);
    assert.deepEqual(ourCgroups(backend.pid), []);
    assert.deepEqual(mountsMentioning(backend.stateDir), []);
    assert.ok(!existsSync(backend.stateDir));
  });

  test('a backend killed with SIGKILL leaves nothing running, and the next start cleans the rest', T, async (t) => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'e2b-state-'));
    let second;
    try {
      const first = await startBackend({ stateDir });
      if (first.isolation !== 'full') { t.skip('isolation none'); await first.stop(); return; }
      const x = await sandbox(first);
      const y = await sandbox(first);
      await x.run('setsid sleep 1000 < /dev/null > /dev/null 2>&1 & echo');
      const pids = first.hostPids(x.id);
      await first.stop('SIGKILL');
      // Every process dies with the backend (init has PDEATHSIG; its pid namespace goes with it).
      await until(() => pids.every((p) => !alive(p)), 'the sandbox died with its backend');
      assert.ok(existsSync(path.join(stateDir, 'sandboxes', x.id)), 'its directory is still there');
      // y stands for a sandbox whose record was never written (a crash
      // half-way through its create): its directory is a leftover. x has its
      // record and is kept (tests/node/backend-state.test.mjs).
      rmSync(path.join(stateDir, 'records', 'sandboxes', `${y.id}.json`));
      second = await startBackend({ stateDir });
      assert.ok(!existsSync(path.join(stateDir, 'sandboxes', y.id)), 'the next start removed the leftover');
      assert.ok(existsSync(path.join(stateDir, 'sandboxes', x.id)), 'and kept the recorded one');
      assert.deepEqual(ourCgroups(first.pid), [], 'and the old cgroups');
      assert.equal((await api(second, 'DELETE', `/sandboxes/${x.id}`)).status, 204);
      const stopping = second;
      second = undefined;
      assert.equal((await stopping.stop()).code, 0);
      assert.deepEqual(readdirSync(path.join(stateDir, 'sandboxes')), []);
    } finally {
      if (second) await second.stop('SIGKILL'); // a failed assertion must not leave it running
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test('the next start removes a dead backend\'s sandbox groups found in any controller (one killed while its groups were made has some and not others)', T, async (t) => {
    if (process.getuid() !== 0) { t.skip('needs root (cgroups)'); return; }
    // A pid no process has: the groups of a dead backend, as SIGKILL left
    // them between the memory group's mkdir and the pids group's.
    let dead = 4194000;
    while (existsSync(`/proc/${dead}`)) dead--;
    const orphan = `/sys/fs/cgroup/memory/e2b-local/b${dead}/orphansandbox`;
    mkdirSync(orphan, { recursive: true });
    mkdirSync(`/sys/fs/cgroup/pids/e2b-local/b${dead}`, { recursive: true });
    let b;
    try {
      b = await startBackend({ extraArgs: ['--warm-pool', '0'] });
      if (b.isolation !== 'full') { t.skip('isolation none'); return; }
      assert.ok(!existsSync(orphan), 'the memory-only group is gone');
      assert.deepEqual(ourCgroups(dead), [], 'and the dead backend\'s own groups');
      assert.match(b.stderr(), new RegExp(`removing cgroups left by backend ${dead}`));
    } finally {
      if (b) await b.stop();
      for (const c of ['memory', 'pids']) {
        try { rmdirSync(`/sys/fs/cgroup/${c}/e2b-local/b${dead}/orphansandbox`); } catch {}
        try { rmdirSync(`/sys/fs/cgroup/${c}/e2b-local/b${dead}`); } catch {}
      }
    }
  });
});

describe('a sandbox whose init has ended', () => {
  // An init that ends on its own (killed from the host, the out-of-memory
  // killer) takes every process of its sandbox with it: the sandbox is
  // removed at once, as one whose VM died is on E2B, instead of being listed
  // and answering every command 'unavailable' until it expires. Commands
  // used to join a sandbox's namespaces through /proc/<its init's pid>/ns:
  // once that init had ended and been reaped, the pid could be another
  // sandbox's init, and a command for the first ran in the second. The pid
  // is made to come round again with ns_last_pid (root only).
  test('is removed at once, and nothing meant for it reaches the sandbox that took its init\'s pid', T, async (t) => {
    const b = await startBackend({ extraArgs: ['--warm-pool', '0'] });
    try {
      if (b.isolation !== 'full') { t.skip('isolation none'); return; }
      const initOf = (id) => b.hostPids(id).find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('e2b-sandbox-ini'));
      const first = await sandbox(b);
      const firstInit = initOf(first.id);
      assert.ok(firstInit > 1, 'its init');
      const cgroup = `/sys/fs/cgroup/pids/e2b-local/b${b.pid}/${first.id}`;
      assert.ok(existsSync(cgroup), 'its pids cgroup');
      process.kill(firstInit, 'SIGKILL');
      await until(async () => (await api(b, 'GET', `/sandboxes/${first.id}`)).status === 404, 'the sandbox is gone');
      // (stderr is another pipe than the API's answers: its line may come a little later)
      await until(() => new RegExp(`sandbox ${first.id}: its init ended on its own; the sandbox is removed`).test(b.stderr()), 'the log line');
      const listed = await api(b, 'GET', '/v2/sandboxes?state=running,paused');
      assert.ok(!listed.json.some((x) => x.sandboxID === first.id), 'not listed');
      await until(() => !existsSync(cgroup), 'its cgroups removed');
      assert.equal((await api(b, 'DELETE', `/sandboxes/${first.id}`)).status, 404);
      await until(() => !existsSync(`/proc/${firstInit}`), 'the init was reaped');
      let second;
      for (let tries = 0; tries < 150 && !second; tries++) {
        // Before its init, a create may start a kernel thread or two (the
        // rescuer of its disk image's ext4): aim one to three pids short.
        writeFileSync('/proc/sys/kernel/ns_last_pid', String(firstInit - 1 - (tries % 3)));
        const s = await sandbox(b);
        if (initOf(s.id) === firstInit) second = s;
        else assert.equal((await api(b, 'DELETE', `/sandboxes/${s.id}`)).status, 204);
      }
      assert.ok(second, `a new sandbox's init took pid ${firstInit} again`);
      await second.run('echo second > /tmp/whose');
      const r = await first.envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'cat /tmp/whose; echo ran > /tmp/ran'] } });
      assert.notEqual(r.status, 200, 'a command for the removed sandbox is refused');
      assert.equal((await second.run('cat /tmp/whose; ls /tmp/ran 2>&1')).out, 'second\nls: cannot access \'/tmp/ran\': No such file or directory\n', 'the other sandbox is untouched');
      assert.ok(alive(firstInit), 'the second sandbox\'s init lives on');
    } finally {
      await b.stop();
    }
  });
});

describe('signals to a command', () => {
  // A command's group was signalled by number (kill(-pid)). The kernel keeps
  // that number while any process is in the group, but a child that left the
  // group (setsid) can hold the output open after the leader and the rest
  // have gone: the command has not ended, the number is free, and here a
  // host process takes it (made to come round with ns_last_pid). The backend
  // runs as root, so the kill reached the host's group.
  test('never reach a group that took the number of the command\'s emptied group', T, async (t) => {
    const b = await startBackend({ extraArgs: ['--warm-pool', '0'] });
    let host;
    try {
      if (b.isolation !== 'full') { t.skip('isolation none'); return; }
      const s = await sandbox(b);
      const stream = await s.envd.open('process.Process/Start',
        { process: { cmd: '/bin/bash', args: ['-c', 'setsid sleep 300 & read x; echo leader done'] }, stdin: true });
      const pid = (await stream.next()).message.event.start.pid;
      let leader;
      await until(() => (leader = b.hostPids(s.id).find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'bash')), 'the leader, bash');
      const input = await s.envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: Buffer.from('x\n').toString('base64') } });
      assert.equal(input.status, 200, input.text);
      await until(() => !existsSync(`/proc/${leader}`), 'the leader exited and was reaped; the setsid sleep holds the output');
      for (let tries = 0; tries < 100 && !host; tries++) {
        writeFileSync('/proc/sys/kernel/ns_last_pid', String(leader - 1));
        const c = spawn('setsid', ['sleep', '300'], { stdio: 'ignore' });
        await new Promise((resolve) => c.once('spawn', resolve));
        if (c.pid === leader) host = c;
        else c.kill('SIGKILL');
      }
      assert.ok(host, `a host process took pid ${leader} again`);
      await until(() => readFileSync(`/proc/${host.pid}/comm`, 'utf8').trim() === 'sleep', 'it leads a group of that number, running sleep');
      assert.equal((await s.envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' })).status, 200);
      await sleep(300);
      assert.ok(alive(host.pid), 'the host\'s group of that number is untouched');
      stream.cancel();
    } finally {
      if (host) host.kill('SIGKILL');
      await b.stop();
    }
  });
});
