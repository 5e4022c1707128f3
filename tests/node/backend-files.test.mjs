// envd's files side on the local backend: GET/POST /files (docs/e2b-protocol-notes.md, "Files"),
// v1_ signatures ("Files"), filesystem.Filesystem ("Filesystem service"), and the port proxy
// ("Reaching envd"). Real backend binary, plain fetch and our tiny Connect client.
//
// Needs the sandbox runtime's full isolation (the ready line's `isolation`
// is "full" once ./build.sh has built the templates): commands run by
// process.Start and the files API then see the same sandbox root, with the
// template's own users. With `isolation: none` the sandbox's "/" is the
// host's, so these tests are skipped.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { gzipSync, gunzipSync } from 'node:zlib';
import { existsSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startBackend, api } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';
import { envdClient } from '../../host/connect.mjs';

const T = { timeout: 60_000 };

// envd's v1_ signature, computed the way the SDK does (docs/e2b-protocol-notes.md, "Files").
function sign(p, op, user, token, exp) {
  const raw = `${p}:${op}:${user ?? ''}:${token}${exp === undefined ? '' : `:${exp}`}`;
  return 'v1_' + createHash('sha256').update(raw).digest('base64').replace(/=+$/, '');
}

const backend = await startBackend();
const skip = backend.isolation === 'full' ? false
  : `needs full sandbox isolation; the backend runs with isolation "${backend.isolation}"`;
if (skip) await backend.stop();

describe('envd /files, filesystem RPCs and port proxy', { skip }, () => {
  let sb;
  let envd;
  const hdr = (extra = {}) => ({ 'E2b-Sandbox-Id': sb.sandboxID, 'X-Access-Token': sb.envdAccessToken, ...extra });
  const filesUrl = (params) => `${backend.sandboxUrl}/files?${new URLSearchParams(params)}`;
  const get = (params, extra = {}, init = {}) => fetch(filesUrl(params), { headers: hdr(extra), ...init });
  const post = (params, body, contentType, extra = {}) =>
    fetch(filesUrl(params), { method: 'POST', headers: hdr({ ...(contentType ? { 'Content-Type': contentType } : {}), ...extra }), body });
  const sandboxDir = () => path.join(backend.stateDir, 'sandboxes', sb.sandboxID);
  const rpc = (m, body, opts) => envd.call(`filesystem.Filesystem/${m}`, body, opts);

  // Runs a shell command in the sandbox and waits for its end event.
  async function sh(script) {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', script] } });
    const end = r.messages.find((m) => m.event.end)?.event.end;
    assert.ok(end?.exited && !end.exitCode, `command failed: ${script}: ${JSON.stringify(r.messages)}`);
  }

  before(async () => {
    sb = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json;
    envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken });
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok(!backend.stderr().includes(sb.envdAccessToken), 'tokens are never logged');
  });

  describe('GET /files', () => {
    const content = Buffer.from('0123456789abcdef'.repeat(4));
    before(async () => {
      assert.equal((await post({ path: '/home/user/r/data.bin' }, content, 'application/octet-stream')).status, 200);
    });

    test('200 with the exact bytes and ServeContent headers', T, async () => {
      const res = await get({ path: '/home/user/r/data.bin' }, { 'Accept-Encoding': 'identity' });
      assert.equal(res.status, 200);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), content);
      assert.equal(res.headers.get('content-length'), String(content.length));
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      assert.equal(res.headers.get('content-disposition'), 'inline; filename=data.bin');
      assert.ok(res.headers.get('last-modified'));
    });

    test('relative paths and ~ are taken against the user home', T, async () => {
      for (const p of ['r/data.bin', '~/r/data.bin']) {
        const res = await get({ path: p });
        assert.equal(res.status, 200, p);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), content);
      }
    });

    test('Range: one range gives 206 with Content-Range; unsatisfiable gives 416', T, async () => {
      let res = await get({ path: 'r/data.bin' }, { Range: 'bytes=2-5' });
      assert.equal(res.status, 206);
      assert.equal(res.headers.get('content-range'), `bytes 2-5/${content.length}`);
      assert.equal(await res.text(), '2345');
      res = await get({ path: 'r/data.bin' }, { Range: 'bytes=60-' });
      assert.equal(res.status, 206);
      assert.equal(await res.text(), 'cdef');
      res = await get({ path: 'r/data.bin' }, { Range: 'bytes=-3' });
      assert.equal(await res.text(), 'def');
      res = await get({ path: 'r/data.bin' }, { Range: 'bytes=64-' });
      assert.equal(res.status, 416);
      assert.equal(res.headers.get('content-range'), `bytes */${content.length}`);
      await res.text();
    });

    test('gzip when Accept-Encoding allows it, identity otherwise', T, async () => {
      const res = await get({ path: 'r/data.bin' }, { 'Accept-Encoding': 'gzip' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-encoding'), 'gzip');
      assert.equal(res.headers.get('vary'), 'Accept-Encoding');
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), content); // fetch gunzips
      const ranged = await get({ path: 'r/data.bin' }, { 'Accept-Encoding': 'gzip', Range: 'bytes=0-1' });
      assert.equal(ranged.headers.get('content-encoding'), null, 'a Range keeps identity');
      assert.equal(await ranged.text(), '01');
    });

    test('a 4 MiB file streams back byte-exact', T, async () => {
      const big = randomBytes(4 * 1024 * 1024);
      assert.equal((await post({ path: 'r/big.bin' }, big, 'application/octet-stream')).status, 200);
      for (const enc of ['identity', 'gzip']) {
        const res = await get({ path: 'r/big.bin' }, { 'Accept-Encoding': enc });
        assert.equal(res.status, 200);
        assert.ok(Buffer.from(await res.arrayBuffer()).equals(big), enc);
      }
    });

    test('a 256 MiB file streams through a bounded backend (RSS grows by less than 64 MiB)', T, async () => {
      await sh('truncate -s 256M /home/user/r/huge.bin');
      const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${backend.pid}/status`, 'utf8'))[1]) * 1024;
      const before = rss();
      const res = await get({ path: 'r/huge.bin' }, { 'Accept-Encoding': 'identity' });
      assert.equal(res.status, 200);
      let total = 0;
      let peak = 0;
      let next = 0;
      for await (const chunk of res.body) {
        total += chunk.length;
        if (total >= next) {
          peak = Math.max(peak, rss());
          next += 16 * 1024 * 1024;
        }
      }
      assert.equal(total, 256 * 1024 * 1024);
      assert.ok(peak - before < 64 * 1024 * 1024, `backend grew by ${(peak - before) >> 20} MiB`);
      await rpc('Remove', { path: 'r/huge.bin' });
    });

    test('status codes: 404 missing, 400 directory, 401 token/signature/user, 406 encoding', T, async () => {
      const cases = [
        [{ path: '/home/user/r/nope' }, {}, 404, "path '/home/user/r/nope' does not exist"],
        [{ path: '/home/user/r' }, {}, 400, "path '/home/user/r' is a directory"],
        [{ path: 'r/data.bin' }, { 'X-Access-Token': 'wrong' }, 401, 'access token present in header but does not match'],
        [{ path: 'r/data.bin' }, { 'X-Access-Token': '' }, 401, 'missing signature query parameter'],
        [{ path: 'r/data.bin', username: 'no-such-user' }, {}, 401, null],
        [{ path: 'r/data.bin' }, { 'Accept-Encoding': 'br, identity;q=0' }, 406, null],
      ];
      for (const [params, extra, status, message] of cases) {
        const res = await get(params, extra);
        assert.equal(res.status, status, JSON.stringify(params));
        const body = await res.json();
        assert.equal(body.code, status);
        if (message) assert.equal(body.message, message);
        assert.ok(!JSON.stringify(body).includes(sb.envdAccessToken));
      }
    });
  });

  describe('POST /files', () => {
    test('multipart: several `file` parts land at their full filenames, owned by the user', T, async () => {
      const form = new FormData();
      form.append('file', new Blob(['one']), '/home/user/up/one.txt');
      form.append('file', new Blob([Buffer.from([0, 1, 255])]), 'up/deeper/two.bin');
      form.append('other', 'ignored');
      const res = await fetch(filesUrl({}), { method: 'POST', headers: hdr(), body: form });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), [
        { path: '/home/user/up/one.txt', name: 'one.txt', type: 'file' },
        { path: '/home/user/up/deeper/two.bin', name: 'two.bin', type: 'file' },
      ]);
      assert.equal(await (await get({ path: 'up/one.txt' })).text(), 'one');
      const dir = (await rpc('Stat', { path: 'up/deeper' })).json.entry;
      assert.equal(dir.owner, 'user');
      assert.equal(dir.group, 'user');
    });

    test('multipart with ?path writes that path; two parts to one path is a 400', T, async () => {
      const form = new FormData();
      form.append('file', new Blob(['via path']), 'ignored-name.txt');
      let res = await fetch(filesUrl({ path: '/tmp/viapath.txt' }), { method: 'POST', headers: hdr(), body: form });
      assert.equal(res.status, 200);
      assert.equal((await res.json())[0].path, '/tmp/viapath.txt');
      const two = new FormData();
      two.append('file', new Blob(['a']), 'a');
      two.append('file', new Blob(['b']), 'b');
      res = await fetch(filesUrl({ path: '/tmp/dup.txt' }), { method: 'POST', headers: hdr(), body: two });
      assert.equal(res.status, 400);
      assert.match((await res.json()).message, /same path/);
    });

    test('octet-stream with ?path, truncating; username=root gives root ownership', T, async () => {
      assert.equal((await post({ path: '/tmp/o.txt' }, 'long content here', 'application/octet-stream')).status, 200);
      assert.equal((await post({ path: '/tmp/o.txt', username: 'root' }, 'short', 'application/octet-stream')).status, 200);
      assert.equal(await (await get({ path: '/tmp/o.txt' })).text(), 'short');
      const e = (await rpc('Stat', { path: '/tmp/o.txt' })).json.entry;
      assert.equal(e.owner, 'root');
    });

    test('Content-Encoding: gzip for octet-stream and multipart; bad gzip is a 400', T, async () => {
      let res = await post({ path: 'gz/a.txt' }, gzipSync('gzipped octets'), 'application/octet-stream', { 'Content-Encoding': 'gzip' });
      assert.equal(res.status, 200);
      assert.equal(await (await get({ path: 'gz/a.txt' })).text(), 'gzipped octets');
      const boundary = 'XyZ';
      const mp = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="gz/b.txt"\r\n\r\nmultipart gz\r\n--${boundary}--\r\n`;
      res = await post({}, gzipSync(mp), `multipart/form-data; boundary=${boundary}`, { 'Content-Encoding': 'gzip' });
      assert.equal(res.status, 200);
      assert.equal(await (await get({ path: 'gz/b.txt' })).text(), 'multipart gz');
      res = await post({ path: 'gz/c.txt' }, 'not gzip', 'application/octet-stream', { 'Content-Encoding': 'gzip' });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).code, 400);
      const whole = gzipSync(randomBytes(64 * 1024));
      res = await post({ path: 'gz/cut.txt' }, whole.subarray(0, whole.length - 100), 'application/octet-stream', { 'Content-Encoding': 'gzip' });
      assert.equal(res.status, 400, 'a truncated gzip stream is refused');
      assert.match((await res.json()).message, /gzip/);
      const big = randomBytes(6 * 1024 * 1024);
      res = await post({ path: 'gz/big.bin' }, gzipSync(big), 'application/octet-stream', { 'Content-Encoding': 'gzip' });
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await (await get({ path: 'gz/big.bin' })).arrayBuffer()).equals(big));
    });

    test('400s: octet-stream without path, other content types, a directory or device target, bad metadata', T, async () => {
      const cases = [
        [{}, 'x', 'application/octet-stream', {}],
        [{ path: '/tmp/t.txt' }, 'x', 'text/plain', {}],
        [{ path: '/tmp' }, 'x', 'application/octet-stream', {}],
        [{ path: '/dev/null' }, 'x', 'application/octet-stream', {}],
        [{ path: '/tmp/m.txt' }, 'x', 'application/octet-stream', { 'X-Metadata-Bad': 'caf\u00e9' }],
      ];
      for (const [params, body, type, extra] of cases) {
        const res = await post(params, body, type, extra);
        assert.equal(res.status, 400, JSON.stringify([params, type]));
        assert.equal((await res.json()).code, 400);
      }
      assert.equal((await post({ path: '/tmp/t.txt' }, 'x', 'application/octet-stream', { 'X-Access-Token': 'bad' })).status, 401);
    });

    // 507 needs a full filesystem: a 64 KiB tmpfs mounted (as root, in the
    // backend's mount namespace, where sandbox roots are mounted) inside the root.
    const canMount = process.getuid?.() === 0 && existsSync('/usr/bin/nsenter');
    test('507 when the disk is full', { ...T, skip: !canMount && 'needs root and nsenter' }, async () => {
      await rpc('MakeDir', { path: '/home/user/small' });
      const mnt = `${backend.stateDir}/sandboxes/${sb.sandboxID}/rootfs/home/user/small`;
      const ns = (...args) => execFileSync('nsenter', ['-t', String(backend.pid), '-m', ...args]);
      ns('mount', '-t', 'tmpfs', '-o', 'size=64k,mode=1777', 'tmpfs', mnt);
      try {
        const res = await post({ path: '/home/user/small/big.bin' }, randomBytes(256 * 1024), 'application/octet-stream');
        assert.equal(res.status, 507);
        assert.deepEqual(await res.json(), { code: 507, message: 'not enough disk space available' });
      } finally {
        ns('umount', mnt);
      }
    });

    test('X-Metadata-* headers become EntryInfo metadata (user.e2b.* xattrs)', T, async () => {
      const res = await post({ path: 'meta.txt' }, 'm', 'application/octet-stream', { 'X-Metadata-Owner-Team': 'Blue' });
      assert.equal(res.status, 200);
      assert.deepEqual((await res.json())[0].metadata, { 'owner-team': 'Blue' });
      assert.deepEqual((await rpc('Stat', { path: 'meta.txt' })).json.entry.metadata, { 'owner-team': 'Blue' });
    });

    // envd's own rule (the SDK's .d.ts for POST /files): each upload replaces
    // the file's metadata; an upload with no X-Metadata-* header clears it.
    test('an overwrite replaces the metadata, and one without X-Metadata-* headers leaves none', T, async () => {
      const metadataOf = async () => (await rpc('Stat', { path: 'meta2.txt' })).json.entry.metadata;
      assert.equal((await post({ path: 'meta2.txt' }, 'a', 'application/octet-stream', { 'X-Metadata-Old': '1', 'X-Metadata-Kept': 'x' })).status, 200);
      assert.deepEqual(await metadataOf(), { old: '1', kept: 'x' });
      assert.equal((await post({ path: 'meta2.txt' }, 'b', 'application/octet-stream', { 'X-Metadata-Kept': 'y' })).status, 200);
      assert.deepEqual(await metadataOf(), { kept: 'y' });
      const res = await post({ path: 'meta2.txt' }, 'c', 'application/octet-stream');
      assert.equal(res.status, 200);
      assert.equal((await res.json())[0].metadata, undefined);
      assert.equal(await metadataOf(), undefined);
      assert.equal(await (await get({ path: 'meta2.txt' })).text(), 'c');
    });

    test('a metadata key sent twice keeps its first value, as envd does', T, async () => {
      // Two header lines of one name (fetch would join them into one value).
      const url = new URL(filesUrl({ path: 'meta3.txt' }));
      const headers = Object.entries(hdr({ 'Content-Type': 'application/octet-stream' })).flat();
      const answer = await new Promise((resolve, reject) => {
        const req = http.request(url, { method: 'POST', headers: [...headers, 'X-Metadata-Twice', 'first', 'x-metadata-twice', 'second'] }, (r) => {
          let text = '';
          r.setEncoding('utf8').on('data', (c) => { text += c; }).on('end', () => resolve({ status: r.statusCode, json: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end('d');
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      assert.deepEqual(answer.json[0].metadata, { twice: 'first' });
      assert.deepEqual((await rpc('Stat', { path: 'meta3.txt' })).json.entry.metadata, { twice: 'first' });
    });
  });

  describe('signatures (headerless /files)', () => {
    const p = '/home/user/signed.txt';
    before(async () => {
      assert.equal((await post({ path: p }, 'signed content', 'application/octet-stream')).status, 200);
    });
    const plain = (params, init) => fetch(filesUrl(params), { headers: { 'E2b-Sandbox-Id': sb.sandboxID }, ...init });

    test('valid, with and without expiration; expired, wrong and wrong-operation are 401', T, async () => {
      const tok = sb.envdAccessToken;
      const future = Math.floor(Date.now() / 1000) + 600;
      const past = Math.floor(Date.now() / 1000) - 10;
      let res = await plain({ path: p, signature: sign(p, 'read', '', tok) });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'signed content');
      res = await plain({ path: p, signature: sign(p, 'read', '', tok, future), signature_expiration: future });
      assert.equal(res.status, 200);
      await res.text();
      const bad = [
        [{ path: p, signature: sign(p, 'read', '', tok, past), signature_expiration: past }, 'signature is already expired'],
        [{ path: p, signature: sign(p, 'read', '', 'not-the-token') }, 'invalid signature'],
        [{ path: p, signature: sign(p, 'write', '', tok) }, 'invalid signature'],
        [{ path: p, username: 'root', signature: sign(p, 'read', '', tok) }, 'invalid signature'],
        [{ path: p, signature: sign(p, 'read', '', tok, future), signature_expiration: future + 1 }, 'invalid signature'],
      ];
      for (const [params, message] of bad) {
        res = await plain(params);
        assert.equal(res.status, 401);
        assert.deepEqual(await res.json(), { code: 401, message });
      }
    });

    test('a signed URL naming no sandbox (one sandbox_url for all) finds its sandbox by signature', T, async () => {
      const other = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json; // a decoy
      const tok = sb.envdAccessToken;
      let res = await fetch(filesUrl({ path: p, signature: sign(p, 'read', '', tok) }));
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'signed content');
      const up = '/home/user/uploaded-by-url.txt';
      const form = new FormData();
      form.append('file', new Blob(['via signed url']), 'x');
      res = await fetch(filesUrl({ path: up, username: 'user', signature: sign(up, 'write', 'user', tok) }), { method: 'POST', body: form });
      assert.equal(res.status, 200);
      assert.equal(await (await get({ path: up })).text(), 'via signed url');
      const past = Math.floor(Date.now() / 1000) - 1;
      res = await fetch(filesUrl({ path: p, signature: sign(p, 'read', '', tok, past), signature_expiration: past }));
      assert.equal(res.status, 401);
      assert.equal((await res.json()).message, 'signature is already expired');
      res = await fetch(filesUrl({ path: p, signature: sign(p, 'read', '', 'guess') }));
      assert.equal(res.status, 401);
      await res.text();
      assert.equal((await api(backend, 'DELETE', `/sandboxes/${other.sandboxID}`)).status, 204);
    });
  });

  describe('confinement to the sandbox root', () => {
    let canary;       // the path as the backend sees it: beside the sandbox's root
    const hostView = (p) => `/proc/${backend.pid}/root${p}`; // the backend's mount namespace
    before(async () => {
      canary = path.join(sandboxDir(), 'canary.txt');
      writeFileSync(hostView(canary), 'HOST CANARY');
      await sh(`mkdir -p /home/user/esc && cd /home/user/esc && ln -s / toroot && ln -s ../../.. up && ln -s ${canary} hostlink && ln -s ${path.dirname(canary)} hostdir`);
    });
    after(() => rmSync(hostView(canary), { force: true }));

    test('symlinks to /, ../../.. and host paths resolve inside the sandbox', T, async () => {
      const name = path.basename(canary);
      for (const p of ['esc/toroot/../' + name, 'esc/up/../../' + name, 'esc/hostlink', `esc/hostdir/${name}`, `/../../${name}`, `esc/up/../../../../..${canary}`]) {
        const res = await get({ path: p });
        const text = await res.text();
        assert.ok(!text.includes('HOST CANARY'), `${p} reached the host`);
        assert.equal(res.status, 404, p);
      }
      const st = await rpc('Stat', { path: 'esc/toroot' });
      assert.equal(st.json.entry.symlinkTarget, '/');
      assert.equal(st.json.entry.type, 'FILE_TYPE_DIRECTORY');
      assert.equal((await rpc('Stat', { path: 'esc/up' })).json.entry.symlinkTarget, '/');
      const listed = (await rpc('ListDir', { path: 'esc/toroot' })).json.entries.map((e) => e.path);
      assert.ok(listed.includes('/home/user/esc/toroot/home'), JSON.stringify(listed));
    });

    test('writes, mkdir and moves through escaping links stay inside', T, async () => {
      const target = path.join(path.dirname(canary), 'written-outside.txt');
      // Through a link to a host directory: that directory does not exist in
      // the sandbox, so making the parent fails as Go's MkdirAll does.
      let res = await post({ path: `/home/user/esc/hostdir/written-outside.txt` }, 'x', 'application/octet-stream');
      assert.equal(res.status, 500);
      await res.text();
      // Through a link to /: the host path is made inside the sandbox.
      res = await post({ path: `/home/user/esc/toroot${target}` }, 'confined', 'application/octet-stream');
      assert.equal(res.status, 200);
      assert.equal(await (await get({ path: target })).text(), 'confined');
      assert.ok(!existsSync(hostView(target)), 'no host file was created');
      assert.equal((await rpc('MakeDir', { path: 'esc/up/../../made-by-mkdir' })).status, 200);
      assert.ok(!existsSync(hostView(path.join(path.dirname(canary), 'made-by-mkdir'))));
      const moved = path.join(path.dirname(canary), 'moved.txt');
      assert.equal((await rpc('Move', { source: 'meta.txt', destination: `esc/toroot${moved}` })).status, 200);
      assert.ok(!existsSync(hostView(moved)));
      assert.equal((await rpc('Stat', { path: moved })).status, 200);
      assert.equal((await rpc('Remove', { path: 'esc/hostlink' })).status, 200);
      assert.ok(existsSync(hostView(canary)), 'removing a link never removes its host target');
    });
  });

  describe('filesystem.Filesystem', () => {
    test('EntryInfo: field formats, owner and group names, symlinks, modes', T, async () => {
      assert.equal((await post({ path: '/home/user/info/f.txt' }, 'hello', 'application/octet-stream')).status, 200);
      await sh(`cd /home/user/info && ln -s f.txt link && ln -s missing broken && mkdir sticky && chmod 1777 sticky && chmod 4755 f.txt`);
      const f = (await rpc('Stat', { path: '/home/user/info/f.txt' })).json.entry;
      assert.deepEqual(Object.keys(f), ['name', 'type', 'path', 'size', 'mode', 'permissions', 'owner', 'group', 'modifiedTime']);
      assert.equal(f.name, 'f.txt');
      assert.equal(f.type, 'FILE_TYPE_FILE');
      assert.equal(f.size, '5');
      assert.equal(f.mode, 0o755);
      assert.equal(f.permissions, 'urwxr-xr-x');
      assert.equal(f.owner, 'user');
      assert.equal(f.group, 'user');
      assert.match(f.modifiedTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?Z$/);
      const l = (await rpc('Stat', { path: 'info/link' })).json.entry;
      assert.equal(l.type, 'FILE_TYPE_FILE');
      assert.equal(l.symlinkTarget, '/home/user/info/f.txt');
      assert.equal(l.path, '/home/user/info/link');
      const b = (await rpc('Stat', { path: 'info/broken' })).json.entry;
      assert.equal(b.type, undefined, 'a broken link has FILE_TYPE_UNSPECIFIED');
      assert.equal(b.symlinkTarget, 'missing', "a broken link shows the link's own text");
      const d = (await rpc('Stat', { path: 'info/sticky' })).json.entry;
      assert.equal(d.permissions, 'dtrwxrwxrwx');
      assert.equal(d.mode, 0o777);
    });

    test('ListDir: depth, order, paths from the request, errors', T, async () => {
      await rpc('MakeDir', { path: 'tree/a/b/c' });
      await post({ path: 'tree/a/x.txt' }, 'x', 'application/octet-stream');
      const names = async (depth) => (await rpc('ListDir', { path: 'tree', depth })).json.entries.map((e) => e.path);
      assert.deepEqual(await names(0), ['/home/user/tree/a']);
      assert.deepEqual(await names(2), ['/home/user/tree/a', '/home/user/tree/a/b', '/home/user/tree/a/x.txt']);
      assert.deepEqual(await names(9), ['/home/user/tree/a', '/home/user/tree/a/b', '/home/user/tree/a/b/c', '/home/user/tree/a/x.txt']);
      let r = await rpc('ListDir', { path: 'tree/a/x.txt' });
      assert.equal(r.status, 400);
      assert.equal(r.json.code, 'invalid_argument');
      r = await rpc('ListDir', { path: 'tree/nope' });
      assert.equal(r.status, 404);
      assert.equal(r.json.code, 'not_found');
    });

    test('MakeDir, Move, Remove: envd codes', T, async () => {
      let r = await rpc('MakeDir', { path: 'mk/one/two' });
      assert.equal(r.status, 200);
      assert.equal(r.json.entry.type, 'FILE_TYPE_DIRECTORY');
      assert.equal((await rpc('Stat', { path: 'mk' })).json.entry.owner, 'user');
      r = await rpc('MakeDir', { path: 'mk/one/two' });
      assert.deepEqual([r.status, r.json.code], [409, 'already_exists']);
      await post({ path: 'mk/file' }, 'f', 'application/octet-stream');
      r = await rpc('MakeDir', { path: 'mk/file' });
      assert.deepEqual([r.status, r.json.code], [400, 'invalid_argument']);
      r = await rpc('Move', { source: 'mk/file', destination: 'mk/new/parent/renamed' });
      assert.equal(r.status, 200);
      assert.equal(r.json.entry.path, '/home/user/mk/new/parent/renamed');
      r = await rpc('Move', { source: 'mk/file', destination: 'mk/x' });
      assert.deepEqual([r.status, r.json.code], [404, 'not_found']);
      assert.deepEqual((await rpc('Remove', { path: 'mk' })).json, {});
      assert.equal((await rpc('Stat', { path: 'mk' })).status, 404);
      assert.deepEqual((await rpc('Remove', { path: 'mk' })).json, {}, 'a missing path is not an error');
      r = await rpc('Stat', { path: 'x' }, { user: 'no-such-user' });
      assert.deepEqual([r.status, r.json.code, r.json.message], [401, 'unauthenticated', "invalid username: 'no-such-user'"]);
      r = await rpc('Stat', { path: '/' }, { user: 'root\0x' });
      assert.deepEqual([r.status, r.json.code], [401, 'unauthenticated'], 'a NUL in the name matches no account');
      r = await rpc('Stat', { path: 'x' }, { token: null });
      assert.equal(r.status, 401);
    });

    test('Remove of a tree larger than one removal slice (2000 entries) removes all of it', T, async () => {
      await sh('mkdir -p /home/user/bigtree && cd /home/user/bigtree && for d in $(seq 1 30); do mkdir -p d$d/inner; for f in $(seq 1 100); do : > d$d/inner/f$f; done; done && ln -s / d1/toroot');
      const listed = (await rpc('ListDir', { path: 'bigtree', depth: 3 })).json.entries.length;
      assert.equal(listed, 30 * 102 + 1);
      const [a, b] = await Promise.all([rpc('Remove', { path: 'bigtree' }), rpc('Stat', { path: '/home/user' })]);
      assert.deepEqual(a.json, {});
      assert.equal(b.status, 200);
      assert.equal((await rpc('Stat', { path: 'bigtree' })).status, 404);
      assert.equal((await rpc('Stat', { path: '/home/user/esc' })).status, 200, 'the link to / was removed, not followed');
    });

    test('an unknown filesystem RPC is a 404, as envd answers it', T, async () => {
      assert.equal((await rpc('StreamNothing', {})).status, 404);
    });

    test('WatchDir streams a file created by a process.Start command', T, async () => {
      await rpc('MakeDir', { path: 'watched' });
      const s = await envd.open('filesystem.Filesystem/WatchDir', { path: 'watched', recursive: true, includeEntry: true }, { headers: { 'Keepalive-Ping-Interval': '0.1' } });
      assert.equal(s.status, 200);
      assert.equal(s.contentType, 'application/connect+json');
      assert.deepEqual((await s.next()).message, { start: {} });
      await sh(`mkdir /home/user/watched/sub && echo hi > /home/user/watched/sub/new.txt`);
      const seen = [];
      let keepalive = false;
      while (!seen.some((e) => e.name === 'sub/new.txt' && e.type === 'EVENT_TYPE_WRITE') || !keepalive) {
        const f = await s.next();
        assert.ok(f && !f.end, `stream ended: ${JSON.stringify(f)}`);
        if (f.message.keepalive) keepalive = true;
        else seen.push(f.message.filesystem);
      }
      const created = seen.find((e) => e.name === 'sub/new.txt' && e.type === 'EVENT_TYPE_CREATE');
      assert.ok(created, JSON.stringify(seen));
      assert.equal(created.entry.path, '/home/user/watched/sub/new.txt');
      assert.ok(seen.some((e) => e.name === 'sub' && e.type === 'EVENT_TYPE_CREATE'));
      s.cancel();
    });

    test('WatchDir errors end the stream: missing is not_found, a file is invalid_argument', T, async () => {
      let r = await envd.stream('filesystem.Filesystem/WatchDir', { path: 'no-such-dir' });
      assert.equal(r.status, 200);
      assert.equal(r.end.error.code, 'not_found');
      r = await envd.stream('filesystem.Filesystem/WatchDir', { path: '/home/user/info/f.txt' });
      assert.equal(r.end.error.code, 'invalid_argument');
    });

    test('killing a sandbox cuts its watch streams (no end frame) and leaves nothing behind', T, async () => {
      const other = (await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base' })).json;
      const client = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: other.sandboxID, token: other.envdAccessToken });
      assert.equal((await client.call('filesystem.Filesystem/CreateWatcher', { path: '/home/user' })).status, 200);
      const s = await client.open('filesystem.Filesystem/WatchDir', { path: '/' });
      assert.deepEqual((await s.next()).message, { start: {} });
      assert.equal((await api(backend, 'DELETE', `/sandboxes/${other.sandboxID}`)).status, 204);
      // As E2B's proxy when the sandbox behind it is gone: the connection
      // drops mid-body; no end-stream frame is made up.
      const rest = [];
      const outcome = await (async () => {
        for (let f; (f = await s.next());) rest.push(f);
        return 'body ended cleanly';
      })().catch(() => 'cut');
      assert.equal(outcome, 'cut', JSON.stringify(rest.map((f) => f.message)));
      assert.ok(!rest.some((f) => f.end), JSON.stringify(rest.map((f) => f.message)));
      const dir = `/proc/${backend.pid}/root${backend.stateDir}/sandboxes/${other.sandboxID}`;
      await until(() => !existsSync(dir), 'the sandbox directory to go');
    });

    test('CreateWatcher, GetWatcherEvents (drains), RemoveWatcher', T, async () => {
      await rpc('MakeDir', { path: 'polled' });
      const { json: { watcherId } } = await rpc('CreateWatcher', { path: 'polled' });
      assert.match(watcherId, /^w/);
      await sh(`touch /home/user/polled/p.txt`);
      const events = await until(async () => (await rpc('GetWatcherEvents', { watcherId })).json.events, 'watcher events');
      assert.deepEqual(events[0], { name: 'p.txt', type: 'EVENT_TYPE_CREATE' });
      assert.deepEqual((await rpc('GetWatcherEvents', { watcherId })).json, {});
      assert.deepEqual((await rpc('RemoveWatcher', { watcherId })).json, {});
      const r = await rpc('GetWatcherEvents', { watcherId });
      assert.deepEqual([r.status, r.json.code], [404, 'not_found']);
    });
  });

  describe('port proxy', () => {
    // The first "port N" a Start stream's stdout prints.
    async function readPort(stream) {
      let out = '';
      for (;;) {
        const f = await stream.next();
        assert.ok(f && !f.end, `server ended early: ${out} ${JSON.stringify(f?.message)}`);
        const b64 = f.message.event?.data?.stdout ?? f.message.event?.data?.stderr;
        if (b64) out += Buffer.from(b64, 'base64').toString();
        const m = /port (\d+)/.exec(out);
        if (m) return m[1];
      }
    }
    let port;
    let server;
    before(async () => {
      // Port 0: the server picks a free port and prints it.
      server = await envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', '/'] } });
      port = Number(await readPort(server));
      await until(async () => (await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'E2b-Sandbox-Port': String(port) } })).status === 200, 'http.server in the sandbox');
    });
    after(() => server?.cancel());

    test('E2b-Sandbox-Port reaches the port inside the sandbox', T, async () => {
      const res = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'E2b-Sandbox-Port': String(port) } });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /Directory listing/);
    });

    test('a {port}-{id} Host reaches it too', T, async () => {
      const u = new URL(backend.sandboxUrl);
      const text = await new Promise((resolve, reject) => {
        const sock = net.connect(Number(u.port), u.hostname);
        let buf = '';
        sock.on('data', (d) => { buf += d; });
        sock.on('error', reject);
        sock.on('close', () => resolve(buf));
        sock.write(`GET / HTTP/1.1\r\nHost: ${port}-${sb.sandboxID}.e2b.local\r\n\r\n`);
      });
      assert.match(text, /^HTTP\/1\.[01] 200/);
      assert.match(text, /Directory listing/);
    });

    test('an Upgrade is tunnelled both ways (raw upgrade echo server)', T, async () => {
      const script = [
        'import socket,sys',
        's=socket.socket()',
        's.bind(("127.0.0.1", 0)); s.listen(4); print("port", s.getsockname()[1], flush=True)',
        'c,_=s.accept(); buf=b""',
        'while b"\\r\\n\\r\\n" not in buf: buf+=c.recv(4096)',
        'rest=buf.split(b"\\r\\n\\r\\n",1)[1]',
        'c.sendall(b"HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: echo\\r\\nConnection: Upgrade\\r\\n\\r\\n"+rest)',
        'while True:',
        '  d=c.recv(65536)',
        '  if not d: break',
        '  c.sendall(d.upper())',
      ].join('\n');
      const echo = await envd.open('process.Process/Start', { process: { cmd: 'python3', args: ['-c', script] } });
      const wsPort = await readPort(echo);
      const u = new URL(backend.sandboxUrl);
      const sock = net.connect(Number(u.port), u.hostname);
      let buf = Buffer.alloc(0);
      sock.on('data', (d) => { buf = Buffer.concat([buf, d]); });
      sock.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\nE2b-Sandbox-Port: ${wsPort}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
      await until(() => buf.includes('\r\n\r\n'), '101 answer');
      assert.match(buf.toString(), /^HTTP\/1\.1 101 /);
      buf = Buffer.alloc(0);
      sock.write('hello through the tunnel');
      await until(() => buf.toString() === 'HELLO THROUGH THE TUNNEL', `echo, got ${buf}`);
      const big = randomBytes(2 * 1024 * 1024).toString('hex').toLowerCase();
      buf = Buffer.alloc(0);
      sock.write(big);
      await until(() => buf.length >= big.length, 'large echo', 30000);
      assert.equal(buf.toString(), big.toUpperCase());
      sock.destroy();
      echo.cancel();
    });

    test('502 shapes: closed port, unknown sandbox', T, async () => {
      let res = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'E2b-Sandbox-Port': '1' } });
      assert.equal(res.status, 502);
      assert.deepEqual(await res.json(), { sandboxId: sb.sandboxID, message: 'The sandbox is running but port is not open', port: 1, code: 502 });
      res = await fetch(`${backend.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': 'nosuchsandbox', 'E2b-Sandbox-Port': String(port) } });
      assert.equal(res.status, 502);
      assert.deepEqual(await res.json(), { sandboxId: 'nosuchsandbox', message: 'The sandbox was not found', code: 502 });
    });
  });
});
