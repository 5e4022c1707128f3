// The official e2b JS SDK (2.51) moving files and reaching ports against the
// local backend (docs/e2b-protocol-notes.md). Options are passed
// explicitly; ambient E2B_* variables are cleared.
//
// Needs the sandbox runtime's full isolation (ready line `isolation: "full"`,
// after ./build.sh has built the templates), where commands and the files
// API see the same sandbox root and its own users; skipped otherwise.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startBackend } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, FileNotFoundError, InvalidArgumentError } = await import('e2b');

const T = { timeout: 60_000 };

const backend = await startBackend();
const skip = backend.isolation === 'full' ? false
  : `needs full sandbox isolation; the backend runs with isolation "${backend.isolation}"`;
if (skip) await backend.stop();

describe('official e2b SDK files, signed URLs and ports', { skip }, () => {
  let sandbox;

  before(async () => {
    const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 15000 };
    sandbox = await Sandbox.create('base', opts);
  });

  after(async () => {
    assert.equal(await sandbox.kill(), true);
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('write one file and read it as text, bytes and a stream', T, async () => {
    const info = await sandbox.files.write('/home/user/notes/hello.txt', 'héllo wörld ✓');
    assert.deepEqual({ ...info }, { path: '/home/user/notes/hello.txt', name: 'hello.txt', type: 'file', metadata: undefined });
    assert.equal(await sandbox.files.read('notes/hello.txt'), 'héllo wörld ✓');
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await sandbox.files.write('bytes.bin', all);
    assert.deepEqual(Buffer.from(await sandbox.files.read('bytes.bin', { format: 'bytes' })), all);
    const stream = await sandbox.files.read('bytes.bin', { format: 'stream' });
    const chunks = [];
    for await (const c of stream) chunks.push(Buffer.from(c));
    assert.deepEqual(Buffer.concat(chunks), all);
  });

  test('write many files in one request', T, async () => {
    const infos = await sandbox.files.write([
      { path: '/tmp/many/a.txt', data: 'A' },
      { path: 'many/b/c.txt', data: new Blob(['C']) },
    ]);
    assert.deepEqual(infos.map((i) => i.path), ['/tmp/many/a.txt', '/home/user/many/b/c.txt']);
    assert.equal(await sandbox.files.read('/tmp/many/a.txt'), 'A');
    assert.equal(await sandbox.files.read('many/b/c.txt'), 'C');
  });

  test('write a stream and a gzip upload; read with gzip', T, async () => {
    const big = randomBytes(3 * 1024 * 1024);
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < big.length; i += 256 * 1024) controller.enqueue(big.subarray(i, i + 256 * 1024));
        controller.close();
      },
    });
    await sandbox.files.write('streamed.bin', stream);
    assert.ok(Buffer.from(await sandbox.files.read('streamed.bin', { format: 'bytes' })).equals(big));
    await sandbox.files.write('gz.txt', 'compressed on the way in', { gzip: true });
    assert.equal(await sandbox.files.read('gz.txt', { gzip: true }), 'compressed on the way in');
  });

  test('metadata: written with a file, replaced by the next write, gone after a write without any', T, async () => {
    const p = '/home/user/meta/tagged.txt';
    const written = await sandbox.files.write(p, 'one', { metadata: { owner: 'blue', stage: 'draft' } });
    assert.deepEqual(written.metadata, { owner: 'blue', stage: 'draft' });
    assert.deepEqual((await sandbox.files.getInfo(p)).metadata, { owner: 'blue', stage: 'draft' });
    await sandbox.files.write(p, 'two', { metadata: { stage: 'final' } });
    assert.deepEqual((await sandbox.files.getInfo(p)).metadata, { stage: 'final' });
    await sandbox.files.write(p, 'three');
    assert.equal((await sandbox.files.getInfo(p)).metadata, undefined);
    assert.equal((await sandbox.files.list('/home/user/meta')).find((e) => e.path === p).metadata, undefined);
    assert.equal(await sandbox.files.read(p), 'three');
  });

  test('missing files are FileNotFoundError; reading a directory is InvalidArgumentError', T, async () => {
    await assert.rejects(sandbox.files.read('no/such/file'), FileNotFoundError);
    await assert.rejects(sandbox.files.read('/home/user'), InvalidArgumentError);
    await assert.rejects(sandbox.files.getInfo('no/such/file'), FileNotFoundError);
  });

  test('makeDir, list with depth, rename, remove, exists', T, async () => {
    assert.equal(await sandbox.files.makeDir('proj/src/lib'), true);
    assert.equal(await sandbox.files.makeDir('proj/src/lib'), false);
    await sandbox.files.write('proj/src/main.c', 'int main(void){return 0;}');
    const one = await sandbox.files.list('proj');
    assert.deepEqual(one.map((e) => [e.name, e.type]), [['src', 'dir']]);
    const deep = await sandbox.files.list('proj', { depth: 3 });
    assert.deepEqual(deep.map((e) => e.path), ['/home/user/proj/src', '/home/user/proj/src/lib', '/home/user/proj/src/main.c']);
    const moved = await sandbox.files.rename('proj/src/main.c', 'proj/app/main.c');
    assert.equal(moved.path, '/home/user/proj/app/main.c');
    assert.equal(await sandbox.files.exists('proj/src/main.c'), false);
    assert.equal(await sandbox.files.exists('proj/app/main.c'), true);
    await sandbox.files.remove('proj');
    assert.equal(await sandbox.files.exists('proj'), false);
  });

  test('getInfo: owner, group, mode, permissions, symlink target', T, async () => {
    await sandbox.files.write('info/file.txt', 'five!');
    await sandbox.files.write('/home/user/info/root.txt', 'r', { user: 'root' });
    assert.equal(await sandbox.files.read('rel.txt', { user: 'root' }).catch((e) => e.constructor.name), 'FileNotFoundError');
    await sandbox.files.write('rel.txt', 'in root home', { user: 'root' });
    assert.equal((await sandbox.files.getInfo('/root/rel.txt')).owner, 'root', 'relative paths follow the user home');
    await sandbox.commands.run(`cd /home/user/info && chmod 640 file.txt && ln -s file.txt link`);
    const f = await sandbox.files.getInfo('info/file.txt');
    assert.equal(f.type, 'file');
    assert.equal(f.size, 5);
    assert.equal(f.mode, 0o640);
    assert.equal(f.permissions, '-rw-r-----');
    assert.equal(f.owner, 'user');
    assert.equal(f.group, 'user');
    assert.ok(f.modifiedTime instanceof Date && !Number.isNaN(f.modifiedTime.getTime()));
    const r = await sandbox.files.getInfo('info/root.txt');
    assert.deepEqual([r.owner, r.group], ['root', 'root']);
    const l = await sandbox.files.getInfo('info/link');
    assert.equal(l.symlinkTarget, '/home/user/info/file.txt');
    assert.equal(l.type, 'file');
  });

  test('watchDir reports a file a command creates', T, async () => {
    await sandbox.files.makeDir('watch');
    const events = [];
    const handle = await sandbox.files.watchDir('watch', (e) => events.push(e), { recursive: true });
    await sandbox.commands.run(`echo data > /home/user/watch/made.txt`);
    await until(() => events.some((e) => e.name === 'made.txt' && e.type === 'create'), `create event, got ${JSON.stringify(events)}`);
    await until(() => events.some((e) => e.name === 'made.txt' && e.type === 'write'), 'write event');
    await handle.stop();
  });

  test('downloadUrl / uploadUrl: signed URLs work with plain fetch and are refused after expiry', T, async () => {
    await sandbox.files.write('share.txt', 'shared');
    const down = await sandbox.downloadUrl('share.txt');
    assert.match(down, /signature=v1_/);
    assert.equal(await (await fetch(down)).text(), 'shared', 'no headers at all: the signature finds the sandbox');
    const up = await sandbox.uploadUrl('/home/user/via-url.txt', { useSignatureExpiration: 60 });
    const form = new FormData();
    form.append('file', new Blob(['uploaded plainly']), 'via-url.txt');
    const res = await fetch(up, { method: 'POST', body: form });
    assert.equal(res.status, 200);
    assert.equal(await sandbox.files.read('via-url.txt'), 'uploaded plainly');
    const short = await sandbox.downloadUrl('share.txt', { useSignatureExpiration: 1 });
    const url = new URL(short);
    url.searchParams.set('signature_expiration', String(Number(url.searchParams.get('signature_expiration')) + 1));
    assert.equal((await fetch(url)).status, 401, 'a changed expiration breaks the signature');
    const refused = await until(async () => {
      const r = await fetch(short);
      if (r.status === 200) { await r.text(); return null; }
      return r;
    }, 'the 1 s signature to expire', 10000, 200);
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).message, 'signature is already expired');
  });

  test('getHost(port) reaches a server in the sandbox through the proxy', T, async () => {
    const server = await sandbox.commands.run('python3 -u -m http.server 0 --bind 127.0.0.1 --directory /', { background: true });
    let port;
    await until(() => { port = /port (\d+)/.exec(server.stdout + server.stderr)?.[1]; return port; }, 'server port');
    const host = sandbox.getHost(Number(port));
    assert.equal(host, `${port}-${sandbox.sandboxId}.${backend.domain}`);
    const u = new URL(backend.sandboxUrl);
    const get = () => new Promise((resolve, reject) => {
      http.get({ host: u.hostname, port: u.port, path: '/', headers: { Host: host } }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode, body }));
      }).on('error', reject);
    });
    const res = await until(async () => { const r = await get(); return r.status === 200 && r; }, 'proxied answer');
    assert.match(res.body, /Directory listing/);
    await server.kill();
  });
});
