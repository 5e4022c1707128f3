// Volumes through the official e2b SDK: create, list, get, the
// volume content file API with the volume's own token, mounting at create
// (volumeMounts), two sandboxes sharing one volume, the size limit, and the
// refusal to delete a volume a sandbox mounts.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, api } from '../../host/backend.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Volume, VolumeNotFoundError, VolumePathNotFoundError } = await import('e2b');

describe('official e2b SDK volumes', () => {
  let backend;
  let opts;

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 20000 };
    // The SDK's Volume file calls take neither apiUrl nor E2B_API_URL: they
    // go to https://api.<domain> unless E2B_VOLUME_API_URL is set, the way
    // README ("Use the E2B SDK against the local backend") says. Set
    // for the whole file, so no call can reach a public address.
    process.env.E2B_VOLUME_API_URL = backend.apiUrl;
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key must never be logged');
  });

  test('create, list, get, files, mounted in two sandboxes, delete refused while mounted', async () => {
    const vol = await Volume.create('shared-data', opts);
    assert.match(vol.volumeId, /^[a-z0-9]{20}$/);
    assert.equal(vol.name, 'shared-data');
    assert.match(vol.token, /^[0-9a-f]{64}$/);
    assert.ok((await Volume.list(opts)).some((v) => v.volumeId === vol.volumeId && v.name === 'shared-data'));
    const info = await Volume.getInfo(vol.volumeId, opts);
    assert.equal(info.token, vol.token);
    await assert.rejects(Volume.create('shared-data', opts), /already exists/);

    // The content API, with the volume's token only.
    const written = await vol.writeFile('/seed/hello.txt', 'from the API').catch((e) => e);
    assert.ok(written instanceof VolumePathNotFoundError, 'a missing parent is a 404');
    const dir = await vol.makeDir('/seed');
    assert.equal(dir.type, 'directory');
    assert.equal(dir.uid, 1000);
    const file = await vol.writeFile('/seed/hello.txt', 'from the API');
    assert.equal(file.type, 'file');
    assert.equal(file.size, 12);
    assert.equal(await vol.readFile('/seed/hello.txt'), 'from the API');
    assert.deepEqual((await vol.list('/')).map((e) => e.name), ['seed']);
    assert.deepEqual((await vol.list('/', { depth: 2 })).map((e) => e.path).sort(), ['/seed', '/seed/hello.txt']);
    const wrong = new Volume(vol.volumeId, vol.name, '0'.repeat(64));
    await assert.rejects(wrong.readFile('/seed/hello.txt'), (e) => !(e instanceof VolumePathNotFoundError));

    // Mounted at create: two sandboxes see each other's writes.
    const a = await Sandbox.create('base', { ...opts, volumeMounts: { '/mnt/shared': vol } });
    const b = await Sandbox.create('base', { ...opts, volumeMounts: { '/data': 'shared-data' } });
    try {
      assert.deepEqual((await a.getInfo()).volumeMounts, [{ name: 'shared-data', path: '/mnt/shared' }]);
      assert.equal(await a.files.read('/mnt/shared/seed/hello.txt'), 'from the API');
      await a.commands.run('echo written-by-a > /mnt/shared/a.txt');
      assert.equal((await b.commands.run('cat /data/a.txt')).stdout, 'written-by-a\n');
      await b.commands.run('echo written-by-b-as-root > /data/b.txt', { user: 'root' });
      assert.equal((await a.commands.run('stat -c %U:%s /mnt/shared/b.txt')).stdout, 'root:21\n');
      assert.equal(await vol.readFile('/a.txt'), 'written-by-a\n');
      const b1 = await vol.getInfo('/b.txt');
      assert.equal(b1.uid, 0, 'files keep the ids they have inside a sandbox');
      const a1 = await vol.getInfo('/a.txt');
      assert.equal(a1.uid, 1000);
      // A symbolic link planted in the volume stays inside it.
      await a.commands.run('ln -s / /mnt/shared/escape');
      await assert.rejects(vol.readFile('/escape/etc/hostname'), VolumePathNotFoundError);
      // A link to a file in it is followed; one that loops, or one a write
      // would go through, is a 400 that says so (never a 500).
      await a.commands.run('ln -s a.txt /mnt/shared/to-a && ln -s loop /mnt/shared/loop');
      assert.equal(await vol.readFile('/to-a'), 'written-by-a\n');
      const linkRefusal = /^400: Path \/(loop|to-a): a symbolic link/;
      await assert.rejects(vol.readFile('/loop'), (e) => !(e instanceof VolumePathNotFoundError) && linkRefusal.test(e.message));
      await assert.rejects(vol.list('/loop'), (e) => linkRefusal.test(e.message));
      await assert.rejects(vol.writeFile('/to-a', 'through the link'), (e) => linkRefusal.test(e.message));
      assert.equal(await vol.readFile('/a.txt'), 'written-by-a\n', 'nothing was written through it');
      const raw = await fetch(`${backend.apiUrl}/volumecontent/${vol.volumeId}/file?path=/loop`, { headers: { Authorization: `Bearer ${vol.token}` } });
      assert.equal(raw.status, 400);
      assert.deepEqual(await raw.json(), { code: 400, message: 'Path /loop: a symbolic link on it loops, or is its last part where the call does not follow one' });

      await assert.rejects(Volume.destroy(vol.volumeId, opts), /mounted by sandbox/);
      await a.pause();
      await assert.rejects(Volume.destroy(vol.volumeId, opts), /mounted by sandbox/, 'a paused sandbox holds its volumes too');
    } finally {
      await a.kill();
      await b.kill();
    }
    await vol.remove('/seed');
    assert.equal(await vol.exists('/seed'), false);
    assert.equal(await Volume.destroy(vol.volumeId, opts), true);
    await assert.rejects(Volume.getInfo(vol.volumeId, opts), VolumeNotFoundError);
    assert.equal(await Volume.destroy(vol.volumeId, opts), false);
  });

  test('a volume has a size limit of its own', async () => {
    const res = await api(backend, 'POST', '/volumes', { name: 'small', sizeMB: 64 });
    assert.equal(res.status, 201);
    const created = res.json;
    assert.equal(created.sizeMB, 64);
    const sbx = await Sandbox.create('base', { ...opts, volumeMounts: { '/small': 'small' } });
    try {
      const r = await sbx.commands.run('dd if=/dev/zero of=/small/big bs=1M count=100 2>&1; df -m /small | tail -1', { user: 'root' }).catch((e) => e);
      assert.match(r.stdout, /No space left on device/);
      // The sandbox's own disk is untouched.
      assert.equal((await sbx.commands.run('dd if=/dev/zero of=/root/ok bs=1M count=80 2>/dev/null && echo ok', { user: 'root' })).stdout.trim(), 'ok');
    } finally {
      await sbx.kill();
    }
    assert.equal((await api(backend, 'DELETE', `/volumes/${created.volumeID}`)).status, 204);
  });

  test('E2B_VOLUME_API_URL is documented beside the other variables, and the file calls follow it', async () => {
    const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
    assert.match(readme, /\| `apiUrl` of `Volume`'s file calls \| `E2B_VOLUME_API_URL` \|/);
    const local = readFileSync(path.join(repo, 'docs', 'backend', 'state.md'), 'utf8');
    assert.match(local, /`E2B_VOLUME_API_URL`/);
    const vol = await Volume.create('where-calls-go', opts);
    try {
      await vol.writeFile('/here.txt', 'x');
      assert.equal(await vol.readFile('/here.txt'), 'x');
      // both reached this backend, by the variable alone
      assert.match(backend.stderr(), new RegExp(`api PUT /volumecontent/${vol.volumeId}/file 20\\d`));
      assert.match(backend.stderr(), new RegExp(`api GET /volumecontent/${vol.volumeId}/file 200`));
    } finally {
      await Volume.destroy(vol.volumeId, opts);
    }
  });

  test('bad requests get typed errors', async () => {
    assert.equal((await api(backend, 'POST', '/volumes', { name: '../x' })).status, 400);
    assert.equal((await api(backend, 'POST', '/volumes', { name: 'x', sizeMB: 1 })).status, 400);
    assert.equal((await api(backend, 'POST', '/volumes', {})).status, 400);
    await assert.rejects(Sandbox.create('base', { ...opts, volumeMounts: { '/x': 'no-such-volume' } }), /not found/);
    await assert.rejects(Sandbox.create('base', { ...opts, volumeMounts: { '/': 'no-such-volume' } }), /absolute and clean/);
    assert.equal((await fetch(`${backend.apiUrl}/volumecontent/nope/file?path=/x`)).status, 401);
  });
});
