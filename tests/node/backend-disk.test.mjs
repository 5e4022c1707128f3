// The sandbox's disk limit (docs/backend/cgroups-and-limits.md,
// "Disk limits"): each sandbox's writable layer is an ext4 image of its
// diskSizeMB on a loop device. Writing past it fails with ENOSPC inside the
// sandbox, df shows it, the rest carries on, and no loop device or image
// outlives its sandbox or its backend. Real backend, real sandboxes, real
// loop devices (read from /sys/block, which is what `losetup -a` lists).
// Skipped where the backend cannot isolate.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, api } from '../../host/backend.mjs';
import { loadProvider } from '../../host/reference/host.mjs';
import { until } from '../../host/wait.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';

const T = { timeout: 120_000 };
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MiB = 1024 * 1024;

// Every attached loop device whose image lies under dir: [device, file].
function loopsUnder(dir) {
  const found = [];
  for (const name of readdirSync('/sys/block').filter((n) => /^loop\d+$/.test(n))) {
    let file;
    try {
      file = readFileSync(`/sys/block/${name}/loop/backing_file`, 'utf8').trim();
    } catch {
      continue; // not attached
    }
    if (file.startsWith(dir + '/')) found.push([`/dev/${name}`, file]);
  }
  return found;
}

// Every *.img file below dir (relative paths). A directory the backend's
// cleaner deletes while this walks it counts as empty, not as an error.
function imagesUnder(dir, prefix = '') {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
    throw err;
  }
  return entries.flatMap((e) => e.isDirectory() ? imagesUnder(path.join(dir, e.name), `${prefix}${e.name}/`)
    : e.name.endsWith('.img') ? [`${prefix}${e.name}`] : []);
}

async function sandbox(backend, body = {}) {
  const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: res.json.sandboxID, token: res.json.envdAccessToken });
  const run = async (script) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } });
    const d = dataOf(r.messages);
    const end = r.messages.find((m) => m.event.end)?.event.end;
    return { out: d.stdout.toString(), err: d.stderr.toString(), code: end?.exitCode ?? 0 };
  };
  // df's size of a path inside the sandbox, in bytes.
  const dfSize = async (p) => {
    const r = await run(`df -B1 --output=size ${p} | tail -1`);
    assert.equal(r.code, 0, r.err);
    return Number(r.out.trim());
  };
  const files = (method, params, body, headers = {}) => fetch(`${backend.sandboxUrl}/files?${new URLSearchParams(params)}`, {
    method, body,
    headers: { 'E2b-Sandbox-Id': res.json.sandboxID, 'X-Access-Token': res.json.envdAccessToken, ...headers },
  });
  return { id: res.json.sandboxID, info: res.json, run, dfSize, files };
}

const diskSizeOf = async (backend, id) => (await api(backend, 'GET', `/sandboxes/${id}`)).json.diskSizeMB;
const imageOf = (backend, id) => path.join(backend.stateDir, 'sandboxes', id, 'disk.img');

describe('disk limits', () => {
  let backend;
  let skip = false;

  before(async () => {
    backend = await startBackend();
    if (backend.isolation !== 'full') skip = 'the backend runs with isolation none here';
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.deepEqual(loopsUnder(backend.stateDir), [], 'no loop device outlives the backend');
  });

  test('diskSizeMB 128: df shows the limit, writing past it fails with ENOSPC, the rest carries on', T, async (t) => {
    if (skip) return t.skip(skip);
    const small = await sandbox(backend, { diskSizeMB: 128 });
    assert.equal(await diskSizeOf(backend, small.id), 128);
    const other = await sandbox(backend);

    // df shows the image's size (ext4's own metadata taken off), not the host's disk.
    const size = await small.dfSize('/');
    assert.ok(size > 100 * MiB && size <= 128 * MiB, `df / says ${size} bytes`);
    assert.equal(await small.dfSize('/tmp'), size, '/tmp is the same filesystem');

    const dd = await small.run('dd if=/dev/zero of=/home/user/fill bs=1M count=200');
    assert.notEqual(dd.code, 0);
    assert.match(dd.err, /No space left on device/);
    const errno = await small.run(`python3 -c "
import errno
try:
    with open('/home/user/more', 'wb') as f:
        f.write(b'x' * 1048576)
except OSError as e:
    print(errno.errorcode[e.errno])
"`);
    assert.equal(errno.out.trim(), 'ENOSPC', errno.err);

    // Meanwhile: the other sandbox, the backend and its files API are fine.
    const echo = await other.run('echo still here && dd if=/dev/zero of=/home/user/f bs=1M count=160 status=none && echo wrote');
    assert.equal(echo.out, 'still here\nwrote\n', echo.err);
    const up = await other.files('POST', { path: '/home/user/up.txt' }, 'uploaded', { 'Content-Type': 'application/octet-stream' });
    assert.equal(up.status, 200);
    assert.equal(await (await other.files('GET', { path: '/home/user/up.txt' })).text(), 'uploaded');
    assert.equal((await fetch(`${backend.apiUrl}/health`)).status, 204);
    // The full sandbox itself: reads work, an upload gets envd's 507.
    assert.equal((await small.files('GET', { path: '/home/user/.bashrc' })).status, 200);
    const full = await small.files('POST', { path: '/home/user/upload.bin' }, Buffer.alloc(4 * MiB), { 'Content-Type': 'application/octet-stream' });
    assert.equal(full.status, 507);
    assert.deepEqual(await full.json(), { code: 507, message: 'not enough disk space available' });

    // Space freed is free again; /tmp is part of the limit.
    const tmp = await small.run('rm -f /home/user/fill /home/user/more && dd if=/dev/zero of=/tmp/fill bs=1M count=200');
    assert.notEqual(tmp.code, 0);
    assert.match(tmp.err, /No space left on device/);
    const copied = /(\d+) bytes/.exec(tmp.err);
    assert.ok(copied && Number(copied[1]) > 100 * MiB, `dd wrote ${copied?.[1]} bytes to /tmp before the limit`);
    await api(backend, 'DELETE', `/sandboxes/${small.id}`);
    await api(backend, 'DELETE', `/sandboxes/${other.id}`);
  });

  test('the default is 1024 MiB; /dev/shm is a 64 MiB tmpfs of its own', T, async (t) => {
    if (skip) return t.skip(skip);
    const sb = await sandbox(backend);
    assert.equal(await diskSizeOf(backend, sb.id), 1024);
    const size = await sb.dfSize('/');
    assert.ok(size > 900 * MiB && size <= 1024 * MiB, `df / says ${size} bytes`);
    assert.equal(await sb.dfSize('/dev/shm'), 64 * MiB);
    await api(backend, 'DELETE', `/sandboxes/${sb.id}`);
  });

  test('killing a sandbox frees its loop device and deletes its image', T, async (t) => {
    if (skip) return t.skip(skip);
    for (const body of [{}, { diskSizeMB: 256 }]) { // from the pool, and made on demand
      const sb = await sandbox(backend, body);
      const image = imageOf(backend, sb.id);
      assert.ok(existsSync(image));
      const held = loopsUnder(backend.stateDir).filter(([, file]) => file === image);
      assert.equal(held.length, 1, `one loop device holds ${image}`);
      assert.equal((await api(backend, 'DELETE', `/sandboxes/${sb.id}`)).status, 204);
      await until(() => !existsSync(image), 'the image is deleted');
      await until(() => !loopsUnder(backend.stateDir).some(([, file]) => file.startsWith(image)), 'its loop device is detached');
    }
  });

  test('diskSizeMB below 64 MiB is a 400; above the host\'s free space a 507', T, async (t) => {
    if (skip) return t.skip(skip);
    const tiny = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', diskSizeMB: 63 });
    assert.equal(tiny.status, 400);
    assert.match(tiny.json.message, /^diskSizeMB must be between 64 and 1048576/);
    const fs = statfsSync(backend.stateDir);
    const freeMiB = Math.floor(fs.bavail * fs.bsize / MiB);
    if (freeMiB >= 1048576) return t.skip('the host has more than 1 TiB free');
    const huge = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', diskSizeMB: 1048576 });
    assert.equal(huge.status, 507);
    assert.match(huge.json.message, /^diskSizeMB 1048576 is more than the host's free disk space/);
  });

  test('through the plugin: sandbox.create with disk sets the limit', T, async (t) => {
    if (skip) return t.skip(skip);
    const infra = await loadProvider(repoRoot, { env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } });
    const rec = await infra.call('sandbox.create', { disk: 128 });
    assert.equal(rec.disk, 128);
    const df = await infra.call('exec.run', { sandbox_id: rec.sandbox_id, command: 'df -B1 --output=size / | tail -1' });
    const size = Number(df.stdout.trim());
    assert.ok(size > 100 * MiB && size <= 128 * MiB, `df / says ${df.stdout}`);
    const dd = await infra.call('exec.run', { sandbox_id: rec.sandbox_id, command: 'dd if=/dev/zero of=$HOME/fill bs=1M count=200' });
    assert.notEqual(dd.exit_code, 0);
    assert.match(dd.stderr, /No space left on device/);
    await infra.call('sandbox.kill', { sandbox_id: rec.sandbox_id });
    await assert.rejects(infra.call('sandbox.create', { disk: 16 }), (err) => {
      assert.equal(err.rpc.data.http_status, 400);
      assert.match(err.rpc.message + JSON.stringify(err.rpc.data), /diskSizeMB must be between 64/);
      return true;
    });
  });
});

describe('no loop device or image outlives its backend', () => {
  test('backend shutdown', T, async (t) => {
    const backend = await startBackend();
    if (backend.isolation !== 'full') { await backend.stop(); return t.skip('isolation none'); }
    await sandbox(backend);
    await sandbox(backend, { diskSizeMB: 96 });
    const paused = await sandbox(backend);
    await api(backend, 'POST', `/sandboxes/${paused.id}/pause`);
    assert.ok(loopsUnder(backend.stateDir).length >= 3);
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.deepEqual(loopsUnder(backend.stateDir), []);
    assert.ok(!existsSync(backend.stateDir));
  });

  test('SIGKILL, then the next start', T, async (t) => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'e2b-disk-state-'));
    let second;
    try {
      // It counts its sandboxes' images: no warm pool adding its own.
      const first = await startBackend({ stateDir, extraArgs: ['--warm-pool', '0'] });
      if (first.isolation !== 'full') { await first.stop(); return t.skip('isolation none'); }
      const a = await sandbox(first);
      const b = await sandbox(first, { diskSizeMB: 128 });
      await b.run('dd if=/dev/zero of=/home/user/f bs=1M count=20 status=none');
      assert.ok(loopsUnder(stateDir).length >= 2);
      await first.stop('SIGKILL');
      // Autoclear: the devices go with the dead backend's mount namespace.
      await until(() => loopsUnder(stateDir).length === 0, 'the loop devices are detached');
      assert.ok(existsSync(imageOf(first, a.id)) && existsSync(imageOf(first, b.id)), 'the images are still there');
      second = await startBackend({ stateDir, extraArgs: ['--warm-pool', '0'] });
      // A --state-dir of its own keeps its sandboxes: back paused,
      // on their images, which no loop device holds until one is resumed.
      assert.ok(existsSync(imageOf(first, a.id)) && existsSync(imageOf(first, b.id)), 'the next start kept them');
      assert.deepEqual(loopsUnder(stateDir).filter(([, file]) => file.includes('/sandboxes/')), []);
      for (const id of [a.id, b.id]) assert.equal((await api(second, 'DELETE', `/sandboxes/${id}`)).status, 204);
      await until(() => imagesUnder(path.join(stateDir, 'sandboxes')).length === 0, 'killed: their images deleted');
      const stopping = second;
      second = undefined;
      assert.equal((await stopping.stop()).code, 0, stopping.stderr());
      assert.deepEqual(loopsUnder(stateDir), []);
      assert.deepEqual(imagesUnder(stateDir), [], 'nor the pool\'s images');
    } finally {
      // A failed assertion must not leave the second backend running: it
      // would write into the state directory as it goes, and keep the test
      // process alive.
      if (second) await second.stop('SIGKILL');
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test('a dead pool helper: creates go on (images made on demand), shutdown leaves nothing', T, async (t) => {
    const backend = await startBackend();
    t.after(() => backend.stop()); // when an assertion fails first: else this file never ends
    if (backend.isolation !== 'full') { await backend.stop(); return t.skip('isolation none'); }
    const helper = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return stat.includes('(e2b-sbx-disks)') && stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(backend.pid);
      } catch {
        return false;
      }
    });
    assert.ok(helper, 'the backend has a disk helper');
    process.kill(Number(helper), 'SIGKILL');
    for (let i = 0; i < 6; i++) { // more than the pool holds
      const sb = await sandbox(backend);
      assert.equal((await sb.run('echo ok')).out, 'ok\n');
    }
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.deepEqual(loopsUnder(backend.stateDir), []);
    assert.ok(!existsSync(backend.stateDir));
  });

  test('--isolation none has no disk limit: diskSizeMB is reported, no loop device is attached', T, async () => {
    const backend = await startBackend({ extraArgs: ['--isolation', 'none'] });
    try {
      const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', diskSizeMB: 128 });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      assert.equal(await diskSizeOf(backend, res.json.sandboxID), 128);
      assert.deepEqual(loopsUnder(backend.stateDir), []);
      assert.ok(!existsSync(path.join(backend.stateDir, 'disks')));
      assert.equal((await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', diskSizeMB: 8 })).status, 400);
    } finally {
      assert.equal((await backend.stop()).code, 0);
    }
  });
});
