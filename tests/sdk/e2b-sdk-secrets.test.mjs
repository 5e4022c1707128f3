// Secrets through the official e2b SDK (E2B's /secrets): create, getInfo by
// ID and by name, update (versions, metadata replaced or kept), the list
// paginator across pages, exists and destroy, SecretNotFoundError, the 409 of
// a taken name, every 400 of the limits, the 403 past the count limit,
// persistence across a restart with --state-dir, and that no value ever
// shows in an answer or in the backend's log.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackend } from '../../host/backend.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Secret, SecretError, SecretNotFoundError } = await import('e2b');

// No sandbox is started here: no warm pool either.
const ARGS = ['--warm-pool', '0'];

// Every value sent, and every answer's text: no answer may hold a value.
const values = new Set();
const answers = [];
const newValue = (label = 'v') => {
  const v = `${label}-${randomBytes(12).toString('hex')}`;
  values.add(v);
  return v;
};

// A raw control-plane call: { status, text, json, headers }, its text kept.
async function raw(backend, method, urlPath, body, key = backend.apiKey) {
  const res = await fetch(backend.apiUrl + urlPath, {
    method,
    headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

function assertNoValue(text, where) {
  for (const v of values) assert.ok(!text.includes(v), `a secret value appears in ${where}`);
}

describe('official e2b SDK secrets', () => {
  let backend;
  let opts;

  before(async () => {
    backend = await startBackend({ extraArgs: ARGS });
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, debug: false, requestTimeoutMs: 20000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok(values.size > 10, 'values were sent');
    assertNoValue(backend.stderr(), "the backend's stderr");
    for (const text of answers) assertNoValue(text, `an answer: ${text.slice(0, 200)}`);
    assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key must never be logged');
  });

  test('create, getInfo by ID and by name, update, exists, destroy', async () => {
    const first = newValue('first');
    const s = await Secret.create('OpenAI-Key', first, { ...opts, metadata: { team: 'ml' } });
    answers.push(JSON.stringify(s));
    assert.match(s.secretId, /^sec_[a-z0-9]{20}$/);
    assert.equal(s.name, 'openai-key', 'names are lower-cased');
    assert.equal(s.version, 1);
    assert.deepEqual(s.metadata, { team: 'ml' });
    assert.ok(Math.abs(s.createdAt.getTime() - Date.now()) < 60000, `createdAt ${s.createdAt}`);
    assert.equal(s.updatedAt.getTime(), s.createdAt.getTime());

    assert.deepEqual(await Secret.getInfo(s.secretId, opts), s);
    assert.deepEqual(await Secret.getInfo('openai-key', opts), s);
    assert.deepEqual(await Secret.getInfo('OPENAI-KEY', opts), s, 'a name in any case');
    const got = await raw(backend, 'GET', `/secrets/${s.secretId}`);
    assert.equal(got.status, 200);
    assert.deepEqual(Object.keys(got.json).sort(), ['createdAt', 'currentVersion', 'metadata', 'name', 'secretID', 'updatedAt']);
    assert.match(got.json.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    // Update: a new version; metadata kept unless given.
    const v2 = await Secret.update('openai-key', newValue('second'), opts);
    assert.equal(v2.secretId, s.secretId);
    assert.equal(v2.version, 2);
    assert.deepEqual(v2.metadata, { team: 'ml' }, 'metadata kept when not given');
    assert.equal(v2.createdAt.getTime(), s.createdAt.getTime());
    assert.ok(v2.updatedAt >= s.createdAt);
    const v3 = await Secret.update(s.secretId, newValue('third'), { ...opts, metadata: { owner: 'ops', tier: '1' } });
    assert.equal(v3.version, 3);
    assert.deepEqual(v3.metadata, { owner: 'ops', tier: '1' }, 'metadata replaced when given');
    const v4 = await Secret.update(s.secretId, newValue('fourth'), { ...opts, metadata: {} });
    assert.equal(v4.version, 4);
    assert.deepEqual(v4.metadata, {}, 'an empty map replaces it too');
    assert.deepEqual(await Secret.getInfo(s.secretId, opts), v4);
    answers.push(JSON.stringify([v2, v3, v4]));

    // A name is taken in any case.
    for (const name of ['openai-key', 'OpenAI-KEY']) {
      const dup = await raw(backend, 'POST', '/secrets', { name, value: newValue('dup') });
      assert.equal(dup.status, 409);
      assert.deepEqual(dup.json, { code: 409, message: "Secret with name 'openai-key' already exists" });
    }
    await assert.rejects(Secret.create('openai-key', newValue('dup'), opts),
      (e) => e instanceof SecretError && /409/.test(e.message));

    assert.equal(await Secret.exists('openai-key', opts), true);
    assert.equal(await Secret.exists(s.secretId, opts), true);
    assert.equal(await Secret.exists('no-such-secret', opts), false);

    assert.equal(await Secret.destroy(s.secretId, opts), true);
    assert.equal(await Secret.destroy(s.secretId, opts), false, 'a second destroy finds nothing');
    assert.equal(await Secret.exists('openai-key', opts), false);
    await assert.rejects(Secret.getInfo(s.secretId, opts), SecretNotFoundError);
    await assert.rejects(Secret.getInfo('openai-key', opts), SecretNotFoundError);
    await assert.rejects(Secret.update('openai-key', newValue('late'), opts), SecretNotFoundError);
    for (const method of ['GET', 'DELETE']) {
      const gone = await raw(backend, method, `/secrets/${s.secretId}`);
      assert.equal(gone.status, 404);
      assert.equal(gone.json.code, 404);
    }
    const gone = await raw(backend, 'POST', '/secrets/openai-key', { value: newValue('late') });
    assert.equal(gone.status, 404);

    // The name is free again, with a new identifier.
    const again = await Secret.create('openai-key', newValue('again'), opts);
    assert.notEqual(again.secretId, s.secretId);
    assert.equal(again.version, 1);
    assert.deepEqual(again.metadata, {}, 'metadata is {} when unset');
    assert.equal(await Secret.destroy('OPENAI-KEY', opts), true, 'destroy by name');
  });

  test('every limit is a 400 in E2B\'s error shape, and changes nothing', async () => {
    const bad = async (body, pattern, route = '/secrets') => {
      const r = await raw(backend, 'POST', route, body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 120)}: ${r.text}`);
      assert.equal(r.json.code, 400);
      assert.match(r.json.message, pattern);
    };
    const v = () => newValue('bad');
    await bad({ value: v() }, /"name" is required/);
    await bad({ name: 'x' }, /"value" is required/);
    await bad({ name: 7, value: v() }, /"name" must be a string/);
    await bad({ name: 'x', value: 7 }, /"value" must be a string/);
    await bad({ name: '', value: v() }, /1 to 128 bytes/);
    await bad({ name: 'a'.repeat(129), value: v() }, /1 to 128 bytes/);
    await bad({ name: 'has space', value: v() }, /only letters, digits/);
    await bad({ name: 'brace{', value: v() }, /only letters, digits/);
    await bad({ name: 'naïve', value: v() }, /only letters, digits/);
    await bad({ name: '-lead', value: v() }, /start with a letter or a digit/);
    await bad({ name: 'sec_mine', value: v() }, /reserved/);
    await bad({ name: 'SEC_MINE', value: v() }, /reserved/, '/secrets');
    await bad({ name: 'x', value: '' }, /must not be empty/);
    const big = 'z'.repeat(64 * 1024 + 1);
    await bad({ name: 'x', value: big }, /at most 65536 bytes/);
    // A value goes into HTTP headers (transform rules): a byte a header
    // cannot carry is refused now, named, the value never quoted.
    for (const [bytes, named] of [['\r', /carriage return \(CR, \\r\)/], ['\n', /line feed \(LF, \\n\)/],
      ['\r\n', /carriage return/], ['\x01', /control character 0x01/], ['\x7f', /control character 0x7F/]]) {
      const value = `${v()}${bytes}X-Injected: 1`;
      await bad({ name: 'x', value }, named);
      const r = await raw(backend, 'POST', '/secrets', { name: 'x', value });
      assert.ok(!r.text.includes(value.slice(0, 12)), 'the refusal never quotes the value');
    }
    await bad({ name: 'x', value: v(), metadata: 'a=b' }, /"metadata" must be an object of strings/);
    await bad({ name: 'x', value: v(), metadata: { a: 1 } }, /"metadata" must be an object of strings/);
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']));
    await bad({ name: 'x', value: v(), metadata: many }, /at most 32 keys/);
    await bad({ name: 'x', value: v(), metadata: { ['k'.repeat(129)]: 'v' } }, /keys must be 1 to 128 bytes/);
    await bad({ name: 'x', value: v(), metadata: { '': 'v' } }, /keys must be 1 to 128 bytes/);
    await bad({ name: 'x', value: v(), metadata: { k: 'v'.repeat(1025) } }, /values may be at most 1024 bytes/);
    const heavy = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'.repeat(1000)]));
    await bad({ name: 'x', value: v(), metadata: heavy }, /total at most 8192 bytes/);
    await bad('{"name":"x","value":', /not valid JSON/);
    await assert.rejects(Secret.create('sec_mine', v(), opts), (e) => e instanceof SecretError && /^400: /.test(e.message));

    // Exactly at every limit is fine.
    const atLimits = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`${i}`.padEnd(128, 'k'), 'v'.repeat(896)]));
    const full = await Secret.create('n'.repeat(128), 'y'.repeat(64 * 1024), { ...opts, metadata: atLimits });
    assert.equal(full.name, 'n'.repeat(128));
    assert.deepEqual(full.metadata, atLimits);
    const wide = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v']));
    const w = await Secret.create('a.b_c-9', `${v()}\tnaïve`, { ...opts, metadata: wide }); // tab and UTF-8 pass
    assert.equal(Object.keys(w.metadata).length, 32);

    // A refused update leaves the secret as it was.
    await bad({ value: '' }, /must not be empty/, `/secrets/${w.secretId}`);
    await bad({ value: `${v()}\nX-Injected: 1` }, /line feed \(LF, \\n\)/, `/secrets/${w.secretId}`);
    await bad({ metadata: {} }, /"value" is required/, `/secrets/${w.secretId}`);
    await bad({ value: v(), metadata: many }, /at most 32 keys/, `/secrets/${w.secretId}`);
    assert.deepEqual(await Secret.getInfo(w.secretId, opts), w);
    const listed = await raw(backend, 'GET', '/secrets');
    assert.equal(listed.json.length, 2, 'no refused create made a secret');

    // The API key, as on every control-plane route.
    for (const [method, route, body] of [['GET', '/secrets'], ['POST', '/secrets', { name: 'k', value: v() }],
      ['GET', `/secrets/${w.secretId}`], ['POST', `/secrets/${w.secretId}`, { value: v() }], ['DELETE', `/secrets/${w.secretId}`]]) {
      for (const key of [null, 'wrong-key']) {
        const r = await raw(backend, method, route, body, key);
        assert.equal(r.status, 401, `${method} ${route} with ${key}`);
        assert.deepEqual(r.json, { code: 401, message: 'Invalid API key' });
      }
    }
    assert.equal((await raw(backend, 'PUT', '/secrets')).status, 405);
    assert.deepEqual(await Secret.getInfo(w.secretId, opts), w, 'no refused call changed it');
    await Secret.destroy(full.secretId, opts);
    await Secret.destroy(w.secretId, opts);
  });

  test('list: creation order, pages with X-Next-Token, a deletion between pages skips nothing', async () => {
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await Secret.create(`list-${i}`, newValue('list'), { ...opts, metadata: { i: `${i}` } }));
    const all = await raw(backend, 'GET', '/secrets');
    assert.equal(all.status, 200);
    assert.equal(all.headers.get('x-next-token'), null, 'one page of 100 holds them all');
    assert.deepEqual(all.json.map((s) => s.name), made.map((s) => s.name));

    const paginator = Secret.list({ ...opts, limit: 3 });
    const pages = [];
    while (paginator.hasNext) {
      pages.push(await paginator.nextItems());
      if (pages.length === 1) {
        assert.ok(paginator.nextToken, 'X-Next-Token after a full page');
        // Deleting the last one served, and one ahead, between pages.
        await Secret.destroy(made[2].secretId, opts);
        await Secret.destroy(made[4].secretId, opts);
      }
    }
    assert.deepEqual(pages.map((p) => p.map((s) => s.name)), [['list-0', 'list-1', 'list-2'], ['list-3', 'list-5', 'list-6']]);
    assert.deepEqual(pages[1][1], made[5], 'listed as getInfo answers');
    assert.equal(paginator.hasNext, false);

    // Pages of one, from a token the backend made.
    const one = await raw(backend, 'GET', '/secrets?limit=1');
    assert.equal(one.json.length, 1);
    const token = one.headers.get('x-next-token');
    assert.ok(token);
    const next = await raw(backend, 'GET', `/secrets?limit=1&nextToken=${encodeURIComponent(token)}`);
    assert.deepEqual(next.json.map((s) => s.name), ['list-1']);

    for (const q of ['limit=0', 'limit=101', 'limit=x', 'nextToken=%%', 'nextToken=garbage!',
      // a sandbox list's (newest first) token is not one of ours
      `nextToken=${Buffer.from('2026-01-02T03:04:05.678Z__abc').toString('base64url')}`]) {
      const r = await raw(backend, 'GET', `/secrets?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.json.code, 400);
    }
    for (const s of made) await Secret.destroy(s.secretId, opts);
    assert.deepEqual(await Secret.list(opts).nextItems(), []);
  });

  test('Secret.fill is a placeholder: a sandbox\'s transform rules carry it, never the value', async () => {
    const value = newValue('fill');
    await Secret.create('openai-key', value, opts);
    const placeholder = Secret.fill('openai-key');
    assert.equal(placeholder, '${e2b.secrets.openai-key}');
    // Resolved by the egress proxy as a request leaves (tests/net/egress-cases.mjs, in a world
    // namespace); here: the rules are taken and shown as given, and the sandbox holds no value.
    const rules = { 'api.example.com': [{ transform: { headers: { Authorization: `Bearer ${placeholder}` } } }] };
    const sbx = await Sandbox.create('base', { ...opts, sandboxUrl: backend.sandboxUrl, network: { rules } });
    try {
      const info = await sbx.getInfo();
      assert.deepEqual(info.network.rules, rules);
      assert.ok(!JSON.stringify(info).includes(value), 'getInfo never shows the value');
      const found = await sbx.commands.run(`grep -rsl '${value}' /etc /home /tmp /root /proc/self/environ; true`);
      assert.equal(found.stdout, '', 'no file in the sandbox holds the value');
    } finally {
      await sbx.kill();
    }
    await Secret.destroy('openai-key', opts);
  });
});

describe('secrets across a restart (--state-dir) and the count limit', () => {
  test('secrets, versions and metadata outlive the backend; records are 0600', async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-secrets-state-'));
    try {
      let backend = await startBackend({ stateDir, extraArgs: ARGS });
      const opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, debug: false };
      const kept = newValue('kept');
      const a = await Secret.create('alpha', newValue('alpha'), { ...opts, metadata: { k: 'v' } });
      const b = await Secret.create('beta', newValue('beta'), opts);
      const b2 = await Secret.update('beta', kept, { ...opts, metadata: { rotated: 'yes' } });
      const c = await Secret.create('gamma', newValue('gamma'), opts);
      assert.equal(await Secret.destroy('gamma', opts), true);

      const dir = path.join(stateDir, 'records', 'secrets');
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.deepEqual(readdirSync(dir).sort(), [`${a.secretId}.json`, `${b.secretId}.json`].sort(), 'no .tmp left, gamma gone');
      for (const f of readdirSync(dir)) assert.equal(statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
      // The record is where the value lives (the one place it is written).
      assert.ok(readFileSync(path.join(dir, `${b.secretId}.json`), 'utf8').includes(kept));
      assert.equal((await backend.stop()).code, 0, backend.stderr());
      assertNoValue(backend.stderr(), "the first backend's stderr");

      backend = await startBackend({ stateDir, apiKey: opts.apiKey, extraArgs: ARGS });
      opts.apiUrl = backend.apiUrl;
      const listed = await Secret.list(opts).nextItems();
      assert.deepEqual(listed, [a, b2], 'the same IDs, versions, metadata and times, in creation order');
      await assert.rejects(Secret.getInfo(c.secretId, opts), SecretNotFoundError);
      await assert.rejects(Secret.create('ALPHA', newValue('dup'), opts), /409/);
      const b3 = await Secret.update(b.secretId, newValue('after'), opts);
      assert.equal(b3.version, 3);
      assert.deepEqual(b3.metadata, { rotated: 'yes' });
      assert.equal((await backend.stop()).code, 0, backend.stderr());
      assertNoValue(backend.stderr(), "the second backend's stderr");
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test('at most 1000 secrets: one more is a 403 until one is deleted', async () => {
    const backend = await startBackend({ extraArgs: ARGS });
    try {
      for (let i = 0; i < 1000; i += 50) {
        const batch = Array.from({ length: 50 }, (_, j) => raw(backend, 'POST', '/secrets', { name: `s${i + j}`, value: 'x' }));
        for (const r of await Promise.all(batch)) assert.equal(r.status, 201, r.text);
      }
      const over = await raw(backend, 'POST', '/secrets', { name: 'one-more', value: 'x' });
      assert.equal(over.status, 403);
      assert.deepEqual(over.json, { code: 403, message: 'this backend holds at most 1000 secrets: delete one first' });
      // Ten pages of 100, then none.
      let token = '';
      let seen = 0;
      for (let page = 0; page < 10; page++) {
        const r = await raw(backend, 'GET', `/secrets${token ? `?nextToken=${encodeURIComponent(token)}` : ''}`);
        assert.equal(r.json.length, 100);
        seen += r.json.length;
        token = r.headers.get('x-next-token');
        assert.equal(!!token, page < 9, `page ${page}`);
      }
      assert.equal(seen, 1000);
      assert.equal((await raw(backend, 'DELETE', '/secrets/s500')).status, 204);
      assert.equal((await raw(backend, 'POST', '/secrets', { name: 'one-more', value: 'x' })).status, 201);
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });
});
