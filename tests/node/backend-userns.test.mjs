// Sandbox ids are not host ids (docs/backend/runtime-and-isolation.md,
// "Ids"). With full
// isolation each sandbox runs in a user namespace that maps its ids 0..65535
// onto a host range of its own, so its root is not host root, and the
// kernel's per-uid counts (keys, inotify instances) are each sandbox's own;
// each sandbox's devpts has its own pty limit; the overlay's options name no
// host path. Real backend, real sandboxes; the kernel's own accounting
// (/proc/<pid>/status, /proc/key-users) is read from the host.
//
// The key tests pass with or without a seccomp filter that denies the key
// calls inside sandboxes: a denied call (EPERM) is as good as a refused one,
// and the quota test charges keys through nsenter, outside any filter.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, backendBinary, backendEnv, api } from '../../host/backend.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';
import { testUser } from '../lib/rootless.mjs';
import { until } from '../../host/wait.mjs';

const T = { timeout: 120_000 };
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const build = path.resolve(process.env.E2BW_BUILD || path.join(repoRoot, 'build'));
const IDS = 65536;

const backend = await startBackend();
const skip = backend.isolation === 'full' ? false
  : `needs full isolation (root); the backend runs with isolation "${backend.isolation}"`;

// One sandbox: run (a script to its end), hold (a program whose first line
// of output is awaited; it runs until stop()), its id base (from its uid_map).
async function sandbox(b = backend) {
  const res = await api(b, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 600 });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const id = res.json.sandboxID;
  const envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: id, token: res.json.envdAccessToken });
  const run = async (script, { user } = {}) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } }, user ? { user } : {});
    const d = dataOf(r.messages);
    return { out: d.stdout.toString(), err: d.stderr.toString(), end: r.messages.find((m) => m.event?.end)?.event.end };
  };
  const hold = async (cmd, args, { user } = {}) => {
    const s = await envd.open('process.Process/Start', { process: { cmd, args } }, user ? { user } : {});
    let pid;
    let out = '';
    while (!out.includes('\n')) {
      const f = await s.next();
      assert.ok(f && !f.end, `${cmd} ended before its first line: ${out}`);
      pid ??= f.message.event?.start?.pid;
      const d = f.message.event?.data;
      if (d?.stdout) out += Buffer.from(d.stdout, 'base64').toString();
      if (d?.stderr) out += Buffer.from(d.stderr, 'base64').toString();
      assert.ok(!f.message.event?.end, `${cmd} ended: ${out}`);
    }
    return {
      pid,
      line: out.split('\n')[0],
      async stop() {
        s.cancel();
        await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' });
      },
    };
  };
  const map = (await run('cat /proc/self/uid_map', { user: 'root' })).out.trim().split(/\s+/).map(Number);
  const token = res.json.envdAccessToken;
  return { id, token, envd, run, hold, map, base: map[1], kill: () => api(b, 'DELETE', `/sandboxes/${id}`) };
}

// The host's view of a sandbox process: its uids and gids.
function hostIds(hostPid) {
  const status = readFileSync(`/proc/${hostPid}/status`, 'utf8');
  const ids = (name) => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(status)[1].trim().split(/\s+/).map(Number);
  return { uid: ids('Uid'), gid: ids('Gid') };
}

after(async () => {
  const { code } = await backend.stop();
  assert.equal(code, 0, backend.stderr());
});

describe('sandbox ids are not host ids', { skip }, () => {
  test('each sandbox is root inside over a host range of 65536 ids of its own; its processes carry them', T, async () => {
    const a = await sandbox();
    const b = await sandbox();
    for (const s of [a, b]) {
      assert.deepEqual([s.map[0], s.map[2]], [0, IDS]);
      assert.ok(s.base >= IDS, `base ${s.base} is not a host account's id`);
      const r = await s.run('id -u; id -g; cat /proc/self/gid_map', { user: 'root' });
      assert.deepEqual(r.out.trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number)), [[0], [0], s.map]);
    }
    assert.ok(Math.abs(a.base - b.base) >= IDS, `ranges ${a.base} and ${b.base} overlap`);
    for (const s of [a, b]) {
      for (const [user, id] of [['root', 0], ['user', 1000]]) {
        const h = await s.hold('/bin/bash', ['-c', 'echo started; exec sleep 600'], { user });
        const ids = hostIds(backend.hostPid(s.id, h.pid));
        assert.deepEqual(ids.uid, [s.base + id, s.base + id, s.base + id, s.base + id], user);
        assert.equal(ids.gid[0], s.base + id, user);
        await h.stop();
      }
    }
    await a.kill();
    await b.kill();
  });

  test('files show the sandbox\'s own ids inside and through the files API; the API\'s new files are the user\'s', T, async () => {
    const s = await sandbox();
    const rpc = (m, body, user) => s.envd.call(`filesystem.Filesystem/${m}`, body, user ? { user } : {});
    await s.run('echo r > /root/r.txt && mkdir /opt/rootdir', { user: 'root' });
    await s.run('echo u > ~/u.txt');
    const up = await fetch(`${backend.sandboxUrl}/files?${new URLSearchParams({ path: '/home/user/up/new.txt', username: 'user' })}`,
      { method: 'POST', headers: { 'E2b-Sandbox-Id': s.id, 'X-Access-Token': s.token, 'Content-Type': 'application/octet-stream' }, body: 'hello' });
    assert.equal(up.status, 200, await up.text());
    assert.equal((await rpc('MakeDir', { path: '/opt/made' }, 'root')).status, 200);
    const expected = [
      ['/', 0, 'root'], ['/usr/bin/sudo', 0, 'root'], ['/root/r.txt', 0, 'root'], ['/opt/rootdir', 0, 'root'],
      ['/opt/made', 0, 'root'], ['/home/user/u.txt', 1000, 'user'], ['/home/user/up', 1000, 'user'],
      ['/home/user/up/new.txt', 1000, 'user'],
    ];
    const inside = await s.run(`stat -c '%n %u %g %U %G' ${expected.map(([p]) => p).join(' ')}`, { user: 'root' });
    assert.deepEqual(inside.out.trim().split('\n'), expected.map(([p, id, name]) => `${p} ${id} ${id} ${name} ${name}`));
    for (const [p, id, name] of expected) {
      const { json } = await rpc('Stat', { path: p });
      assert.deepEqual([json.entry.owner, json.entry.group], [name, name], p);
      // The host sees them shifted: the template's through the idmapped lower layer, the rest on disk.
      const st = statSync(backend.sandboxPath(s.id, p));
      assert.deepEqual([st.uid, st.gid], [s.base + id, s.base + id], p);
    }
    assert.equal((await s.run('stat -c %A /usr/bin/sudo; sudo -n id -u')).out, '-rwsr-xr-x\n0\n', 'sudo keeps its setuid bit');
    await s.kill();
  });

  test('mountinfo inside a sandbox names neither the state directory nor the templates (red-team 16)', T, async () => {
    const s = await sandbox();
    const r = await s.run('cat /proc/self/mountinfo /proc/1/mountinfo', { user: 'root' });
    assert.match(r.out, / \/ [^\n]* - overlay overlay [^\n]*lowerdir=lower0,upperdir=disk\/upper,workdir=disk\/work/);
    for (const hostPath of [backend.stateDir, path.join(build, 'templates'), repoRoot, '/tmp/']) {
      assert.ok(!r.out.includes(hostPath), `mountinfo shows ${hostPath}:\n${r.out}`);
    }
    await s.kill();
  });

  test('--id-range: one range per sandbox, a clear 503 when all are taken, reused once a sandbox is removed', T, async () => {
    // A pool of two ranges, high up, away from the default pool and /etc/subuid.
    const start = 2 ** 31 + IDS * randomInt(1, 16384);
    const small = await startBackend({ extraArgs: ['--id-range', `${start}:${2 * IDS}`] });
    try {
      const x = await sandbox(small);
      const y = await sandbox(small);
      assert.deepEqual([x.base, y.base].sort(), [start, start + IDS]);
      const full = await api(small, 'POST', '/v2/sandboxes', { templateID: 'base' });
      assert.equal(full.status, 503);
      assert.match(full.json.message, new RegExp(`no free id range for a new sandbox: the ${start}:${2 * IDS} of --id-range are all in use`));
      assert.equal((await x.kill()).status, 204);
      // Free again once the removal has finished.
      const z = await until(async () => {
        const r = await api(small, 'POST', '/v2/sandboxes', { templateID: 'base' });
        return r.status === 201 ? r.json : null;
      }, 'a create after the kill');
      const zz = envdClient({ sandboxUrl: small.sandboxUrl, sandboxId: z.sandboxID, token: z.envdAccessToken });
      const r = await zz.stream('process.Process/Start', { process: { cmd: 'cat', args: ['/proc/self/uid_map'] } });
      assert.equal(Number(dataOf(r.messages).stdout.toString().trim().split(/\s+/)[1]), x.base);
    } finally {
      assert.equal((await small.stop()).code, 0, small.stderr());
    }
  });

  test('--id-range must be whole ranges and must not meet /etc/subuid or /etc/subgid', T, () => {
    const start = (range) => spawnSync(backendBinary(), ['--listen', '127.0.0.1:0', '--id-range', range],
      { encoding: 'utf8', timeout: 20_000, env: backendEnv('k') });
    for (const [range, said] of [['nope', /--id-range must be START:COUNT/], ['100:65536', /START must be at least 65536/],
      ['1073741824:1000', /COUNT a multiple of 65536/], ['4294901760:131072', /START\+COUNT at most 4294967295/]]) {
      const r = start(range);
      assert.equal(r.status, 2, range);
      assert.match(r.stderr, said);
    }
    const user = testUser('e2bw-rootless');
    const r = start(`${user.sub.start}:${IDS}`);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '', 'no ready line');
    assert.match(r.stderr, new RegExp(`overlaps /etc/sub[ug]id line \\d+ \\(${user.name}:${user.sub.start}:`));
  });
});

// The probe in a sandbox and on the host (a static binary).
const probeHost = path.join(build, 'bin', 'keys-probe');
async function withProbe(s) {
  const res = await fetch(`${backend.sandboxUrl}/files?${new URLSearchParams({ path: '/usr/local/bin/keys-probe', username: 'root' })}`,
    { method: 'POST', headers: { 'E2b-Sandbox-Id': s.id, 'X-Access-Token': s.token, 'Content-Type': 'application/octet-stream' },
      body: readFileSync(probeHost) });
  assert.equal(res.status, 200);
  await s.run('chmod 755 /usr/local/bin/keys-probe', { user: 'root' });
  return s;
}
const probe = (...args) => execFileSync(probeHost, args, { encoding: 'utf8' }).trim();
const refused = (line) => /^error (EACCES|ENOKEY|EPERM|EKEYREVOKED)$/.test(line);

describe('kernel keyrings (red-team 8)', { skip }, () => {
  let a;
  let b;
  before(async () => {
    a = await withProbe(await sandbox());
    b = await withProbe(await sandbox());
  });
  after(async () => {
    await a?.kill();
    await b?.kill();
  });

  test('sandbox root neither reads a key in host root\'s user keyring nor plants one there', T, async () => {
    const desc = `e2bw-host-canary-${randomBytes(4).toString('hex')}`;
    const serial = probe('add', desc, 'user');
    try {
      const r = await a.run(`keys-probe read ${serial}; keys-probe search ${desc} user; keys-probe search ${desc} session; ` +
        `keys-probe add ${desc}-planted user; keys-probe add ${desc}-planted session`, { user: 'root' });
      const [read, searchUser, searchSession, addUser, addSession] = r.out.trim().split('\n');
      assert.ok(refused(read) && !r.out.includes('secret'), r.out);
      assert.ok(refused(searchUser) && refused(searchSession), r.out);
      for (const added of [addUser, addSession]) assert.ok(/^\d+$/.test(added) || added === 'error EPERM', r.out);
    } finally {
      probe('invalidate', serial);
    }
    // Host root's keyrings have nothing planted (removed again if they had).
    const planted = spawnSync(probeHost, ['search', `${desc}-planted`, 'user'], { encoding: 'utf8' }).stdout.trim();
    if (/^\d+$/.test(planted)) probe('invalidate', planted);
    assert.equal(planted, 'error ENOKEY');
  });

  test('a key stored by user in one sandbox is not readable from another', T, async () => {
    const added = (await a.run('keys-probe add e2bw-a-secret user; keys-probe add e2bw-a-session session')).out.trim().split('\n');
    for (const line of added) {
      if (line === 'error EPERM') continue; // the calls are denied altogether
      assert.match(line, /^\d+$/);
      const r = await b.run(`keys-probe read ${line}`);
      assert.ok(refused(r.out.trim()), r.out);
    }
  });

  test('one sandbox filling its user\'s key quota leaves another\'s alone (per-uid accounting, /proc/key-users)', T, async () => {
    // Keys charged to sandbox A's user by the kernel, through its user namespace.
    const filler = spawn('nsenter', ['--target', String(backend.hostPid(a.id, 1)), '--user', '--setuid', '1000', '--setgid', '1000',
      '--', probeHost, 'fill'], { stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      let out = '';
      let err = '';
      filler.stdout.on('data', (d) => { out += d; });
      filler.stderr.on('data', (d) => { err += d; });
      const line = await until(() => {
        assert.ok(out.includes('\n') || filler.exitCode === null, `the filler ended: ${out}${err}`);
        return out.includes('\n') && out.trim();
      }, 'the filler filled the quota');
      const [count, why] = line.split(' ');
      assert.equal(why, 'EDQUOT', line);
      assert.ok(Number(count) > 0);
      const users = readFileSync('/proc/key-users', 'utf8');
      const quota = new RegExp(`^\\s*${a.base + 1000}:\\s+\\d+\\s+\\d+/\\d+\\s+(\\d+)/(\\d+)`, 'm').exec(users);
      assert.ok(quota, `no /proc/key-users line for sandbox A's user (${a.base + 1000}):\n${users}`);
      assert.equal(quota[1], quota[2], 'its quota is full');
      // B's user is another host uid with its own quota: the kernel takes its keys.
      const other = spawnSync('nsenter', ['--target', String(backend.hostPid(b.id, 1)), '--user', '--setuid', '1000', '--setgid', '1000',
        '--', probeHost, 'add', 'e2bw-b-key', 'user'], { encoding: 'utf8' });
      assert.match(other.stdout.trim(), /^\d+$/, other.stdout + other.stderr);
      // And inside B (EPERM where the calls are denied, never EDQUOT).
      const inB = (await b.run('keys-probe add e2bw-b-own user')).out.trim();
      assert.ok(/^\d+$/.test(inB) || inB === 'error EPERM', inB);
    } finally {
      filler.stdin.end();
      await new Promise((resolve) => (filler.exitCode !== null ? resolve() : filler.on('exit', resolve)));
    }
  });
});

describe('per-uid limits are each sandbox\'s own (red-team 10)', { skip }, () => {
  const inotifyFill = 'import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nn = 0\n' +
    'while n < 4096 and libc.inotify_init1(0) >= 0:\n    n += 1\nprint(n, ctypes.get_errno(), flush=True)\nsys.stdin.read()\n';
  const inotifyOne = 'import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint("ok" if libc.inotify_init1(0) >= 0 else ctypes.get_errno())\n';
  const ptyFill = 'import os, sys\nfds = []\ntry:\n    while len(fds) < 5000:\n        fds.append(os.openpty())\n' +
    'except OSError as e:\n    print(len(fds), e.errno, flush=True)\nelse:\n    print(len(fds), 0, flush=True)\nsys.stdin.read()\n';

  test('one sandbox taking every inotify instance, as user or as root, leaves other sandboxes and the backend\'s watchers working', T, async () => {
    const a = await sandbox();
    const b = await sandbox();
    const holds = [];
    try {
      holds.push(await a.hold('python3', ['-c', inotifyFill]));
      const [n, errno] = holds[0].line.split(' ').map(Number);
      assert.ok(n > 0 && errno === 24, `A's user stopped at ${holds[0].line} (EMFILE is 24)`);
      assert.equal((await b.run(`python3 -c '${inotifyOne}'`)).out, 'ok\n', 'B\'s user still gets one');
      holds.push(await b.hold('python3', ['-c', inotifyFill], { user: 'root' }));
      assert.match(holds[1].line, /^\d+ 24$/);
      // The backend's own watchers are the backend's, not any sandbox's.
      for (const s of [a, b]) {
        const created = await s.envd.call('filesystem.Filesystem/CreateWatcher', { path: '/home/user' });
        assert.equal(created.status, 200, created.text);
        const name = `w-${randomBytes(3).toString('hex')}`;
        await s.run(`touch /home/user/${name}`);
        await until(async () => (await s.envd.call('filesystem.Filesystem/GetWatcherEvents', { watcherId: created.json.watcherId }))
          .json.events?.some((e) => e.name === name), `a watcher event in ${s.id}`);
      }
    } finally {
      for (const h of holds) await h.stop();
      await a.kill();
      await b.kill();
    }
  });

  test('one sandbox opening every pty it can stops at its own devpts limit (256); another still opens one', T, async () => {
    const a = await sandbox();
    const b = await sandbox();
    let h;
    try {
      h = await a.hold('python3', ['-c', ptyFill], { user: 'root' });
      assert.equal(h.line, '256 28', 'A stops at max=256 with ENOSPC');
      assert.equal((await b.run('python3 -c "import os; os.openpty(); print(\'ok\')"')).out, 'ok\n');
      const pty = await b.envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'test -t 0 && echo on-a-tty'] },
        pty: { size: { cols: 80, rows: 24 } } });
      assert.equal(dataOf(pty.messages).pty.toString(), 'on-a-tty\r\n');
    } finally {
      await h?.stop();
      await a.kill();
      await b.kill();
    }
  });
});
