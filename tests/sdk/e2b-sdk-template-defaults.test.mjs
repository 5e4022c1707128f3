// A template's last user and working directory are its sandboxes' defaults
// (E2B's "Templates > User and workdir"; envd's defaultUser and
// defaultWorkdir, docs/templates.md "User and workdir"), through the official
// e2b SDK against the local backend: a command or a file request that names
// no user acts as the template's user, a command without cwd starts in its
// workdir; ~ and relative paths stay the user's home's; an explicit user or
// cwd wins; the defaults hold across pause/resume, a restart of the backend
// with --state-dir, a snapshot and a fork; `base` keeps user and /home/user.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend } from '../../host/backend.mjs';
import { loadProvider } from '../../host/reference/host.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Template } = await import('e2b');
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('official e2b SDK: a template\'s user and workdir are its sandboxes\' defaults', () => {
  let backend;
  let opts;
  let stateDir;
  const uniq = `${process.pid}-${Date.now().toString(36)}`;
  const name = `tpl-defaults-${uniq}`;
  const start = async () => {
    backend = await startBackend({ stateDir });
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
  };
  // guest exists only from the first step on: USER checks the account.
  const template = () => Template().fromTemplate('base')
    .runCmd('useradd --create-home --shell /bin/bash guest && mkdir -p /home/guest/sub && chown guest: /home/guest/sub', { user: 'root' })
    .setUser('guest')
    .setWorkdir('/app');
  // Who a command runs as and where it starts, with what the SDK passes.
  const where = async (sbx, o = {}) => (await sbx.commands.run('echo "$(whoami) $(pwd) $HOME"', o)).stdout.trim();

  before(async () => {
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-tpl-defaults-'));
    await start();
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('commands and files act as the template\'s user, commands start in its workdir; explicit user and cwd win; base keeps user and home', async (t) => {
    if (backend.isolation !== 'full') { t.skip('building templates needs full isolation'); return; }
    await Template.build(template(), name, opts);
    const sbx = await Sandbox.create(name, { ...opts, timeoutMs: 120_000 });
    const base = await Sandbox.create('base', { ...opts, timeoutMs: 120_000 });
    try {
      assert.equal(await where(sbx), 'guest /app /home/guest');
      // As E2B's WORKDIR: the directory it made is the template's user's.
      assert.equal((await sbx.commands.run('stat -c %U /app; echo made > here-too && cat here-too')).stdout, 'guest\nmade\n');
      await sbx.commands.run('rm here-too');
      assert.equal(await where(sbx, { user: 'root' }), 'root /app /root', 'the workdir is every user\'s default');
      assert.equal(await where(sbx, { cwd: '/tmp' }), 'guest /tmp /home/guest');
      assert.equal(await where(sbx, { user: 'root', cwd: '/' }), 'root / /root');
      assert.equal(await where(sbx, { cwd: '~' }), 'guest /home/guest /home/guest', '~ is the home');
      assert.equal(await where(sbx, { cwd: 'sub' }), 'guest /home/guest/sub /home/guest', 'a relative cwd is the home\'s');

      // Files: the default user, relative paths against its home (envd's
      // ExpandAndResolve), not against the workdir.
      const written = await sbx.files.write('notes.txt', 'relative');
      assert.equal(written.path, '/home/guest/notes.txt');
      assert.equal(await sbx.files.read('/home/guest/notes.txt'), 'relative');
      assert.equal(await sbx.files.read('notes.txt'), 'relative');
      assert.equal((await sbx.files.getInfo('notes.txt')).owner, 'guest');
      await sbx.files.makeDir('~/made');
      assert.equal((await sbx.files.getInfo('/home/guest/made')).owner, 'guest');
      assert.ok((await sbx.files.list('~')).some((e) => e.name === 'made'));
      await sbx.files.write('as-root.txt', 'root', { user: 'root' });
      assert.equal((await sbx.files.getInfo('/root/as-root.txt')).owner, 'root', 'an explicit user wins');
      assert.equal((await sbx.commands.run('ls -A /app; stat -c %U /home/guest/notes.txt')).stdout, 'guest\n', 'nothing lands in the workdir');
      // Only an empty path is the workdir (ExpandAndResolve's first step).
      await sbx.commands.run('touch /app/here', { user: 'root' });
      assert.deepEqual((await sbx.files.list('')).map((e) => e.path), ['/app/here']);
      const seen = [];
      const watch = await sbx.files.watchDir('', (e) => seen.push(e.name));
      await sbx.commands.run('touch /app/watched', { user: 'root' });
      await until(() => seen.includes('watched'), () => `a watch of '' is on the workdir: ${seen}`);
      await watch.stop();

      // base, and a sandbox of the default shape (the warm pool's): user and its home.
      assert.equal(await where(base), 'user /home/user /home/user');
      assert.equal((await base.files.write('rel.txt', 'x')).path, '/home/user/rel.txt');
      assert.equal((await base.files.getInfo('rel.txt')).owner, 'user');
      const plain = await Sandbox.create({ ...opts, timeoutMs: 60_000 });
      try {
        assert.equal(await where(plain), 'user /home/user /home/user');
      } finally {
        await plain.kill();
      }
    } finally {
      await sbx.kill();
      await base.kill();
    }
  });

  test('the plugin, too: files.* and exec.run that name no user act as the template\'s user (the core sends none, as the SDK)', async (t) => {
    if (backend.isolation !== 'full') { t.skip('building templates needs full isolation'); return; }
    const infra = await loadProvider(repo, { env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } });
    const { sandbox_id } = await infra.call('sandbox.create', { template: name, timeout: 120 });
    try {
      assert.equal((await infra.call('exec.run', { sandbox_id, command: 'echo "$(whoami) $(pwd)"' })).stdout, 'guest /app\n');
      await infra.call('files.write', { sandbox_id, path: '/app/from-plugin.txt', content: 'plugin' });
      const entry = await infra.call('files.stat', { sandbox_id, path: '/app/from-plugin.txt' });
      assert.equal(entry.owner, 'guest', JSON.stringify(entry));
      assert.equal((await infra.call('files.read', { sandbox_id, path: '/app/from-plugin.txt' })).content, 'plugin');
      // An explicit user still wins.
      await infra.call('files.write', { sandbox_id, path: '/tmp/as-root.txt', content: 'r', user: 'root' });
      assert.equal((await infra.call('files.stat', { sandbox_id, path: '/tmp/as-root.txt' })).owner, 'root');
    } finally {
      await infra.call('sandbox.kill', { sandbox_id });
    }
  });

  test('the defaults hold across pause/resume and a restart of the backend, and pass to snapshots and forks', async (t) => {
    if (backend.isolation !== 'full') { t.skip('building templates needs full isolation'); return; }
    if (!(await Template.exists(name, opts))) await Template.build(template(), name, opts);
    const sbx = await Sandbox.create(name, { ...opts, timeoutMs: 300_000 });
    let resumed = sbx;
    const made = [];
    try {
      assert.equal(await sbx.pause(), true);
      resumed = await Sandbox.connect(sbx.sandboxId, { ...opts, timeoutMs: 300_000 });
      assert.equal(await where(resumed), 'guest /app /home/guest', 'after pause and resume');

      // A restart: the paused sandbox comes back from its record.
      assert.equal(await resumed.pause(), true);
      assert.equal((await backend.stop()).code, 0, backend.stderr());
      await start();
      resumed = await Sandbox.connect(sbx.sandboxId, { ...opts, timeoutMs: 300_000 });
      assert.equal(await where(resumed), 'guest /app /home/guest', 'after a restart');
      assert.equal((await resumed.files.write('after-restart.txt', 'x')).path, '/home/guest/after-restart.txt');

      const snap = await resumed.createSnapshot();
      const fromSnap = await Sandbox.create(snap.snapshotId, { ...opts, timeoutMs: 120_000 });
      made.push(fromSnap);
      assert.equal(await where(fromSnap), 'guest /app /home/guest', 'a sandbox of its snapshot');
      assert.equal(await fromSnap.files.read('after-restart.txt'), 'x');
      const [fork] = await resumed.fork({ count: 1, timeoutMs: 120_000 });
      assert.ok(fork instanceof Sandbox, String(fork));
      made.push(fork);
      assert.equal(await where(fork), 'guest /app /home/guest', 'its fork');

      // The snapshot's record keeps them too: a restart, then a new sandbox of it.
      assert.equal((await backend.stop()).code, 0, backend.stderr());
      await start();
      const again = await Sandbox.create(snap.snapshotId, { ...opts, timeoutMs: 120_000 });
      made.push(again);
      assert.equal(await where(again), 'guest /app /home/guest', 'a snapshot\'s sandbox after a restart');
      await Sandbox.deleteSnapshot(snap.snapshotId, opts);
    } finally {
      for (const s of [resumed, ...made]) await Sandbox.kill(s.sandboxId, opts);
    }
  });

  test('a default workdir or user the sandbox no longer has: envd\'s errors', async (t) => {
    if (backend.isolation !== 'full') { t.skip('building templates needs full isolation'); return; }
    if (!(await Template.exists(name, opts))) await Template.build(template(), name, opts);
    const sbx = await Sandbox.create(name, { ...opts, timeoutMs: 120_000 });
    try {
      await sbx.commands.run('rmdir /app', { user: 'root' });
      await assert.rejects(sbx.commands.run('pwd'), /cwd '\/app' does not exist/);
      assert.equal(await where(sbx, { cwd: '/tmp' }), 'guest /tmp /home/guest', 'a cwd still works');

      await sbx.commands.run('userdel guest', { user: 'root', cwd: '/' });
      await assert.rejects(sbx.commands.run('true', { cwd: '/tmp' }), /invalid default user: 'guest'/);
      await assert.rejects(sbx.files.list('/tmp'), /invalid default user: 'guest'/);
      await assert.rejects(sbx.files.watchDir('/tmp', () => {}), /invalid default user: 'guest'/);
      await assert.rejects(sbx.files.read('/etc/passwd'), /error looking up user 'guest'/);
      await assert.rejects(sbx.files.write('/tmp/x', 'x'), /error looking up user 'guest'/);
      // A named user is untouched.
      assert.equal(await where(sbx, { user: 'root', cwd: '/tmp' }), 'root /tmp /root');
      assert.match(await sbx.files.read('/etc/passwd', { user: 'root' }), /^root:/);
    } finally {
      await sbx.kill();
    }
  });
});
