// The local backend's control-plane API and envd routing, route by route,
// over raw fetch (docs/e2b-protocol-notes.md: "Control plane", "Reaching envd").
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { backendBinary, backendEnv, startBackend } from '../../host/backend.mjs';
import { fullIsolation } from '../lib/isolation.mjs';
import { until } from '../../host/wait.mjs';

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SANDBOX_ID = /^[a-z0-9]{20}$/;

// Every response body seen, to prove the API key never comes back.
const seenBodies = [];

function client(backend) {
  async function call(base, method, urlPath, { body, key = backend.apiKey, headers = {} } = {}) {
    const h = { ...headers };
    if (key !== null) h['X-API-Key'] = key;
    let payload;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['Content-Type'] = 'application/json';
    }
    const res = await fetch(base + urlPath, { method, headers: h, body: payload });
    const text = await res.text();
    seenBodies.push(text);
    let json;
    try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
    return { status: res.status, headers: res.headers, text, json };
  }
  const api = (method, urlPath, opts) => call(backend.apiUrl, method, urlPath, opts);
  api.envd = (method, urlPath, sandboxId, opts = {}) => call(backend.sandboxUrl, method, urlPath, {
    key: null, ...opts, headers: { ...(sandboxId ? { 'E2b-Sandbox-Id': sandboxId } : {}), ...(opts.headers ?? {}) },
  });
  return api;
}

function assertError(res, status, messagePattern) {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.json?.code, status, res.text);
  assert.equal(typeof res.json.message, 'string');
  if (messagePattern) assert.match(res.json.message, messagePattern);
}

// Bounds a server-set time: the server read its clock between before and after.
async function timed(fn) {
  const before = Date.now();
  const result = await fn();
  return { result, before, after: Date.now() };
}

function assertEndAt(endAt, { before, after }, seconds) {
  const end = Date.parse(endAt);
  assert.ok(end >= before + seconds * 1000 && end <= after + seconds * 1000,
    `endAt ${endAt} should be now + ${seconds}s (now between ${new Date(before).toISOString()} and ${new Date(after).toISOString()})`);
}


describe('control plane', () => {
  let backend;
  let api;
  let templates;

  before(async () => {
    // Two templates with the same root filesystem, for the template filter.
    templates = mkdtempSync(path.join(tmpdir(), 'e2b-templates-'));
    const built = path.join(path.dirname(path.dirname(backendBinary())), 'templates', 'base');
    for (const name of ['base', 'other-template']) symlinkSync(built, path.join(templates, name));
    backend = await startBackend({ extraArgs: ['--templates', templates] });
    api = client(backend);
  });

  after(async () => {
    const { code, signal } = await backend.stop();
    rmSync(templates, { recursive: true, force: true });
    assert.equal(signal, null);
    assert.equal(code, 0, backend.stderr());
    assert.ok(!existsSync(backend.stateDir), 'the backend removes the state dir it created');
    assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key must never be logged');
    for (const body of seenBodies) assert.ok(!body.includes(backend.apiKey), `API key echoed in ${body}`);
  });

  async function create(body = {}, { v1 = false } = {}) {
    const res = await api('POST', v1 ? '/sandboxes' : '/v2/sandboxes', { body: { templateID: 'base', ...body } });
    assert.equal(res.status, 201, res.text);
    return res.json;
  }
  const detail = async (id) => (await api('GET', `/sandboxes/${id}`)).json;

  test('ready line names loopback URLs, a state dir with sandboxes/, and the pid', () => {
    assert.match(backend.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(backend.sandboxUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(backend.apiUrl, backend.sandboxUrl);
    assert.ok(existsSync(path.join(backend.stateDir, 'sandboxes')));
    assert.ok(Number.isInteger(backend.pid) && backend.pid > 0);
  });

  test('GET /health answers 204 without a key, as E2B\'s; /health/details says how sandboxes are isolated and how many are started ahead', async () => {
    const health = await api('GET', '/health', { key: null });
    assert.deepEqual([health.status, health.text], [204, '']);
    const res = await api('GET', '/health/details', { key: null });
    assert.equal(res.status, 200);
    const { warm, checkpoint, ...rest } = JSON.parse(res.text);
    assert.equal(typeof checkpoint.available, 'boolean');
    assert.deepEqual(rest, { isolation: backend.isolation, limits: backend.limits, cgroup: backend.cgroup,
      seccomp: backend.seccomp, cgroup_favor_dynmods: backend.cgroupFavorDynmods });
    if (backend.isolation === 'full') assert.deepEqual(rest, fullIsolation());
    assert.equal(warm.size, backend.isolation === 'none' ? 0 : 3, 'the default --warm-pool');
    assert.ok(Number.isInteger(warm.ready) && warm.ready >= 0 && warm.ready <= warm.size, JSON.stringify(warm));
    assert.ok(['full', 'rootless'].includes(backend.isolation));
    assert.equal(backend.seccomp, true, 'the syscall policy comes with isolation');
  });

  test('a missing, wrong or differently-cased key', async () => {
    assertError(await api('GET', '/v2/sandboxes', { key: null }), 401, /^Invalid API key$/);
    assertError(await api('GET', '/v2/sandboxes', { key: backend.apiKey + 'x' }), 401, /^Invalid API key$/);
    assertError(await api('GET', '/v2/sandboxes', { key: backend.apiKey.slice(0, -1) }), 401);
    assertError(await api('POST', '/v2/sandboxes', { key: 'nope', body: { templateID: 'base' } }), 401);
    const res = await api('GET', '/v2/sandboxes', { key: null, headers: { 'x-api-key': backend.apiKey } });
    assert.equal(res.status, 200, 'header names are case-insensitive');
  });

  test('POST /v2/sandboxes creates a secure sandbox with a 300 s default timeout', async () => {
    const t = await timed(() => api('POST', '/v2/sandboxes', {
      body: { templateID: 'base', metadata: { owner: 'me' }, envVars: { A: '1' }, unknownField: [1, 2] },
    }));
    const res = t.result;
    assert.equal(res.status, 201, res.text);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    const sb = res.json;
    assert.match(sb.sandboxID, SANDBOX_ID);
    assert.equal(sb.templateID, 'base');
    assert.equal(typeof sb.clientID, 'string');
    assert.equal(sb.envdVersion, '0.6.13');
    assert.match(sb.envdAccessToken, /^[0-9a-f]{32,}$/);
    assert.equal(sb.domain, backend.domain, '--domain\'s, by default localhost:<envd port>');
    assert.equal(sb.domain, `localhost:${new URL(backend.sandboxUrl).port}`);
    assert.equal(sb.trafficAccessToken, null, 'public traffic unless the body says otherwise');
    assert.ok(existsSync(path.join(backend.stateDir, 'sandboxes', sb.sandboxID)), 'its state dir exists');

    const d = await detail(sb.sandboxID);
    assert.equal(d.sandboxID, sb.sandboxID);
    assert.equal(d.templateID, 'base');
    assert.equal(d.clientID, sb.clientID);
    assert.match(d.startedAt, RFC3339_MS);
    assert.match(d.endAt, RFC3339_MS);
    assert.equal(Date.parse(d.endAt) - Date.parse(d.startedAt), 300_000);
    assertEndAt(d.endAt, t, 300);
    assert.equal(d.state, 'running');
    assert.equal(d.cpuCount, 2);
    assert.equal(d.memoryMB, 512);
    assert.equal(d.diskSizeMB, 1024);
    assert.equal(d.envdVersion, '0.6.13');
    assert.equal(d.envdAccessToken, sb.envdAccessToken);
    assert.deepEqual(d.metadata, { owner: 'me' });
    assert.equal(d.domain, backend.domain);
    assert.equal(d.network, undefined, 'no network settings given');
    assert.deepEqual(d.lifecycle, { autoResume: false, onTimeout: 'kill' });
  });

  test('POST /sandboxes (v1) defaults to 15 s and issues a token only when secure', async () => {
    const plain = await create({}, { v1: true });
    assert.equal(plain.envdAccessToken, undefined);
    const d = await detail(plain.sandboxID);
    assert.equal(Date.parse(d.endAt) - Date.parse(d.startedAt), 15_000);
    assert.equal(d.envdAccessToken, undefined);

    const secure = await create({ secure: true, timeout: 60, autoPause: true, allow_internet_access: false }, { v1: true });
    assert.match(secure.envdAccessToken, /^[0-9a-f]{32,}$/);
    const sd = await detail(secure.sandboxID);
    assert.equal(Date.parse(sd.endAt) - Date.parse(sd.startedAt), 60_000);
    assert.equal(sd.lifecycle.onTimeout, 'pause');
    assert.equal(sd.allowInternetAccess, false);
  });

  test('create rejects bad bodies with a 400 that names the field', async () => {
    const cases = [
      [{}, /templateID/],
      [{ templateID: '' }, /templateID/],
      [{ templateID: 7 }, /templateID/],
      [{ templateID: 'base', timeout: '10' }, /timeout/],
      [{ templateID: 'base', timeout: 1.5 }, /timeout/],
      [{ templateID: 'base', timeout: -1 }, /timeout/],
      [{ templateID: 'base', timeout: 86401 }, /^Timeout cannot be greater than 24 hours$/],
      [{ templateID: 'base', metadata: { a: 1 } }, /metadata/],
      [{ templateID: 'base', metadata: 'a=b' }, /metadata/],
      [{ templateID: 'base', envVars: ['A'] }, /envVars/],
      [{ templateID: 'base', autoPause: 'yes' }, /autoPause/],
      [{ templateID: 'base', allow_internet_access: 1 }, /allow_internet_access/],
    ];
    for (const [body, pattern] of cases) {
      assertError(await api('POST', '/v2/sandboxes', { body }), 400, pattern);
    }
    assertError(await api('POST', '/sandboxes', { body: { templateID: 'base', secure: 'yes' } }), 400, /secure/);
    for (const raw of ['', '   ', 'null', '[]', '"base"', '42', '{"templateID":', '{"templateID":"base"} trailing', '{bad json}']) {
      assertError(await api('POST', '/v2/sandboxes', { body: raw }), 400);
    }
    const ok = await api('POST', '/v2/sandboxes', { body: { templateID: 'base', timeout: 86400, metadata: null } });
    assert.equal(ok.status, 201, 'the 24 h maximum itself is allowed, null means absent');
  });

  test('GET /sandboxes/{id}: 404 wording, and the legacy <id>-<clientID> form', async () => {
    assertError(await api('GET', '/sandboxes/doesnotexist'), 404,
      /^Sandbox "doesnotexist" doesn't exist or you don't have access to it$/);
    const sb = await create();
    const res = await api('GET', `/sandboxes/${sb.sandboxID}-${sb.clientID}`);
    assert.equal(res.status, 200);
    assert.equal(res.json.sandboxID, sb.sandboxID);
  });

  test('DELETE /sandboxes/{id} removes the sandbox and its directory', async () => {
    const sb = await create();
    const dir = path.join(backend.stateDir, 'sandboxes', sb.sandboxID);
    assert.ok(existsSync(dir));
    const res = await api('DELETE', `/sandboxes/${sb.sandboxID}`);
    assert.equal(res.status, 204);
    // Deleted off the event loop (a large tree must not stall other clients).
    await until(() => !existsSync(dir), 'state dir deleted');
    assertError(await api('GET', `/sandboxes/${sb.sandboxID}`), 404);
    assertError(await api('DELETE', `/sandboxes/${sb.sandboxID}`), 404);
  });

  test('POST /sandboxes/{id}/timeout sets endAt = now + timeout, shorter or longer', async () => {
    const sb = await create({ timeout: 600 });
    const t = await timed(() => api('POST', `/sandboxes/${sb.sandboxID}/timeout`, { body: { timeout: 60 } }));
    assert.equal(t.result.status, 204, t.result.text);
    assertEndAt((await detail(sb.sandboxID)).endAt, t, 60);
    const t2 = await timed(() => api('POST', `/sandboxes/${sb.sandboxID}/timeout`, { body: { timeout: 7200 } }));
    assert.equal(t2.result.status, 204);
    assertEndAt((await detail(sb.sandboxID)).endAt, t2, 7200);

    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/timeout`, { body: {} }), 400, /timeout/);
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/timeout`), 400);
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/timeout`, { body: { timeout: 'x' } }), 400, /timeout/);
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/timeout`, { body: { timeout: 86401 } }), 400,
      /^Timeout cannot be greater than 24 hours$/);
    assertError(await api('POST', '/sandboxes/nosuchsandbox/timeout', { body: { timeout: 10 } }), 404);
  });

  test('pause: 204, then 409 when already paused; envd then answers 502', async () => {
    const sb = await create();
    assert.equal((await api.envd('GET', '/health', sb.sandboxID)).status, 204);
    const t = await timed(() => api('POST', `/sandboxes/${sb.sandboxID}/pause`));
    assert.equal(t.result.status, 204, t.result.text);
    const d = await detail(sb.sandboxID);
    assert.equal(d.state, 'paused');
    assertEndAt(d.endAt, t, 0); // a paused sandbox's endAt is when it paused
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/pause`, { body: {} }), 409,
      new RegExp(`^Sandbox ${sb.sandboxID} is already paused$`));
    assertError(await api('POST', '/sandboxes/nosuchsandbox/pause'), 404);
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/pause`, { body: { memory: 'no' } }), 400, /memory/);
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/timeout`, { body: { timeout: 10 } }), 404);

    const envd = await api.envd('GET', '/health', sb.sandboxID);
    assert.equal(envd.status, 502);
    assert.deepEqual(envd.json, { sandboxId: sb.sandboxID, message: 'The sandbox was not found', code: 502 });
    assert.ok(existsSync(path.join(backend.stateDir, 'sandboxes', sb.sandboxID)), 'a paused sandbox keeps its dir');
  });

  test('lifetimeLeft (ours): a paused sandbox keeps the lifetime it had left, while its clock stands still', async () => {
    const sb = await create({ timeout: 600 });
    const running = await detail(sb.sandboxID);
    assert.equal(running.lifetimeLeft, undefined, 'only a paused sandbox has it');
    assert.equal((await api('POST', `/sandboxes/${sb.sandboxID}/pause`)).status, 204);
    const paused = await detail(sb.sandboxID);
    // Exactly what was left: the end it had, minus the pause time (its endAt now).
    assert.equal(Math.round(paused.lifetimeLeft * 1000), Date.parse(running.endAt) - Date.parse(paused.endAt), JSON.stringify(paused));
    assert.ok(paused.lifetimeLeft > 590 && paused.lifetimeLeft <= 600, JSON.stringify(paused));
    await until(() => Date.now() > Date.parse(paused.endAt) + 1500, 'time passing while paused');
    assert.equal((await detail(sb.sandboxID)).lifetimeLeft, paused.lifetimeLeft, 'a paused sandbox does not age');
    const listed = (await api('GET', '/v2/sandboxes?state=paused')).json.find((s) => s.sandboxID === sb.sandboxID);
    assert.equal(listed.lifetimeLeft, paused.lifetimeLeft);
    assert.equal((await api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 60 } })).status, 201);
    assert.equal((await detail(sb.sandboxID)).lifetimeLeft, undefined);
    assert.equal((await api('DELETE', `/sandboxes/${sb.sandboxID}`)).status, 204);
  });

  test('resume (v1): 201 with a 15 s default when paused, 409 when running', async () => {
    const sb = await create({ timeout: 600 });
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/resume`, { body: {} }), 409,
      new RegExp(`^Sandbox ${sb.sandboxID} is already running$`));
    assert.equal((await api('POST', `/sandboxes/${sb.sandboxID}/pause`)).status, 204);
    const t = await timed(() => api('POST', `/sandboxes/${sb.sandboxID}/resume`, { body: {} }));
    assert.equal(t.result.status, 201, t.result.text);
    assert.equal(t.result.json.sandboxID, sb.sandboxID);
    assert.equal(t.result.json.envdAccessToken, sb.envdAccessToken, 'the token survives pause/resume');
    const d = await detail(sb.sandboxID);
    assert.equal(d.state, 'running');
    assertEndAt(d.endAt, t, 15);
    assertError(await api('POST', '/sandboxes/nosuchsandbox/resume', { body: {} }), 404);
  });

  test('connect (v2) resumes a paused sandbox with 201 and answers 200 when running', async () => {
    const sb = await create({ timeout: 600 });
    assert.equal((await api('POST', `/sandboxes/${sb.sandboxID}/pause`)).status, 204);
    const t = await timed(() => api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 120 } }));
    assert.equal(t.result.status, 201, t.result.text);
    assert.equal(t.result.json.sandboxID, sb.sandboxID);
    assert.equal(t.result.json.envdVersion, '0.6.13');
    const d = await detail(sb.sandboxID);
    assert.equal(d.state, 'running');
    assertEndAt(d.endAt, t, 120);
    assert.equal((await api.envd('GET', '/health', sb.sandboxID)).status, 204);

    const again = await api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`);
    assert.equal(again.status, 200, 'no body at all is fine for v2');
    assertError(await api('POST', '/v2/sandboxes/nosuchsandbox/connect', { body: {} }), 404);
    assertError(await api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: true } }), 400, /timeout/);
  });

  test('connect only ever extends a running sandbox by default (E2B: KeepAliveFor(allowShorter=false))', async () => {
    const sb = await create({ timeout: 3600 });
    const before = (await detail(sb.sandboxID)).endAt;
    assert.equal((await api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: {} })).status, 200);
    assert.equal((await detail(sb.sandboxID)).endAt, before, 'a connect without timeout (300 s) left endAt alone');
    assert.equal((await api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 60 } })).status, 200);
    assert.equal((await detail(sb.sandboxID)).endAt, before, 'a shorter timeout left endAt alone');
    const t = await timed(() => api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 7200 } }));
    assertEndAt((await detail(sb.sandboxID)).endAt, t, 7200);
  });

  test('connect (v1) requires a timeout and applies it (when it extends)', async () => {
    const sb = await create({ timeout: 10 });
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/connect`, { body: {} }), 400, /timeout/);
    assertError(await api('POST', `/sandboxes/${sb.sandboxID}/connect`), 400);
    const t = await timed(() => api('POST', `/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 30 } }));
    assert.equal(t.result.status, 200, t.result.text);
    assertEndAt((await detail(sb.sandboxID)).endAt, t, 30);
  });

  describe('listing', () => {
    const tag = `list-${Date.now()}`;
    const ids = [];
    let pausedId;

    before(async () => {
      for (let i = 0; i < 3; i++) ids.push((await create({ metadata: { suite: tag, n: String(i), odd: String(i % 2) } })).sandboxID);
      pausedId = (await create({ metadata: { suite: tag, n: 'p', 'key with space&amp': 'v=1 2' } })).sandboxID;
      assert.equal((await api('POST', `/sandboxes/${pausedId}/pause`)).status, 204);
    });

    // What the e2b SDK sends: each side encodeURIComponent'd, joined as a
    // form, and the whole thing URL-encoded again as one parameter.
    const metadataParam = (meta) => encodeURIComponent(new URLSearchParams(
      Object.fromEntries(Object.entries(meta).map(([k, v]) => [encodeURIComponent(k), encodeURIComponent(v)]))).toString());

    const list = (query) => api('GET', `/v2/sandboxes?${query}`);

    test('metadata filter, newest first, both states by default, X-Total-Running', async () => {
      const res = await list(`metadata=${metadataParam({ suite: tag })}`);
      assert.equal(res.status, 200, res.text);
      assert.ok(Array.isArray(res.json));
      assert.deepEqual(new Set(res.json.map((s) => s.sandboxID)), new Set([...ids, pausedId]));
      for (let i = 1; i < res.json.length; i++) {
        const [a, b] = [res.json[i - 1], res.json[i]];
        const order = Date.parse(a.startedAt) - Date.parse(b.startedAt);
        assert.ok(order > 0 || (order === 0 && a.sandboxID < b.sandboxID), 'startedAt desc, ties by id');
      }
      for (const s of res.json) {
        for (const field of ['templateID', 'sandboxID', 'clientID', 'startedAt', 'endAt', 'cpuCount', 'memoryMB', 'diskSizeMB', 'state', 'envdVersion', 'metadata']) {
          assert.ok(field in s, `ListedSandbox has ${field}`);
        }
        assert.match(s.startedAt, RFC3339_MS);
      }
      assert.equal(res.headers.get('x-total-running'), '3');
      assert.equal(res.headers.get('x-next-token'), null);
    });

    test('all metadata pairs must match, including encoded special characters', async () => {
      const two = await list(`metadata=${metadataParam({ suite: tag, odd: '1' })}`);
      assert.deepEqual(two.json.map((s) => s.sandboxID), [ids[1]]);
      const special = await list(`metadata=${metadataParam({ 'key with space&amp': 'v=1 2' })}`);
      assert.equal(special.status, 200, special.text);
      assert.deepEqual(special.json.map((s) => s.sandboxID), [pausedId]);
      const none = await list(`metadata=${metadataParam({ suite: tag, odd: '7' })}`);
      assert.deepEqual(none.json, []);
      assert.equal(none.headers.get('x-total-running'), '0');
    });

    test('state filter', async () => {
      const meta = `metadata=${metadataParam({ suite: tag })}`;
      const running = await list(`${meta}&state=running`);
      assert.deepEqual(new Set(running.json.map((s) => s.sandboxID)), new Set(ids));
      assert.ok(running.json.every((s) => s.state === 'running'));
      const paused = await list(`${meta}&state=paused`);
      assert.deepEqual(paused.json.map((s) => s.sandboxID), [pausedId]);
      assert.equal(paused.json[0].state, 'paused');
      const both = await list(`${meta}&state=running,paused`);
      assert.equal(both.json.length, 4);
      assertError(await list('state=sleeping'), 400);
      assertError(await list('state=running,'), 400);
    });

    test('paging with limit=1 follows X-Next-Token through every page', async () => {
      const meta = `metadata=${metadataParam({ suite: tag })}`;
      const all = (await list(meta)).json.map((s) => s.sandboxID);
      const seen = [];
      let token;
      for (let page = 0; page < 10; page++) {
        const res = await list(`${meta}&limit=1${token ? `&nextToken=${encodeURIComponent(token)}` : ''}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.length, 1);
        assert.equal(res.headers.get('x-total-running'), '3');
        seen.push(res.json[0].sandboxID);
        token = res.headers.get('x-next-token');
        if (!token) break;
      }
      assert.deepEqual(seen, all, 'pages in the same order as one big page, nothing twice');

      // Ascending by startedAt; ties keep ascending IDs in both orders (as E2B's),
      // so this is not simply the reverse of the default order.
      const byStart = (await list(meta)).json;
      const expectedAsc = [...byStart].sort((a, b) => (Date.parse(a.startedAt) - Date.parse(b.startedAt)) ||
        (a.sandboxID < b.sandboxID ? -1 : 1)).map((s) => s.sandboxID);
      const asc = (await list(`${meta}&order=asc`)).json.map((s) => s.sandboxID);
      assert.deepEqual(asc, expectedAsc);
      const firstAsc = await list(`${meta}&order=asc&limit=2`);
      const restAsc = await list(`${meta}&order=asc&limit=2&nextToken=${encodeURIComponent(firstAsc.headers.get('x-next-token'))}`);
      assert.deepEqual([...firstAsc.json, ...restAsc.json].map((s) => s.sandboxID), asc);
      assertError(await list(`${meta}&nextToken=${encodeURIComponent(firstAsc.headers.get('x-next-token'))}`), 400,
        /Invalid next token/);
    });

    test('bad limit, nextToken, order, metadata and startedAfter are 400s', async () => {
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=', 'limit=1.5', 'nextToken=garbage!', 'nextToken=AAAA',
        'order=sideways', 'metadata=novalue', 'metadata=a%3Db%3Dc', 'startedAfter=yesterday']) {
        assertError(await list(q), 400);
      }
      assert.equal((await list('limit=100')).status, 200);
    });

    test('template and startedAfter filters', async () => {
      const other = await create({ metadata: { suite: tag }, templateID: 'other-template' });
      const res = await list(`metadata=${metadataParam({ suite: tag })}&template=other-template`);
      assert.deepEqual(res.json.map((s) => s.sandboxID), [other.sandboxID]);
      const startedAt = (await detail(other.sandboxID)).startedAt;
      const after = await list(`metadata=${metadataParam({ suite: tag })}&startedAfter=${encodeURIComponent(startedAt)}`);
      assert.ok(after.json.some((s) => s.sandboxID === other.sandboxID));
      assert.ok(after.json.every((s) => Date.parse(s.startedAt) >= Date.parse(startedAt)));
      assert.equal((await api('DELETE', `/sandboxes/${other.sandboxID}`)).status, 204);
    });

    test('GET /sandboxes (v1) lists running sandboxes only, with the metadata filter', async () => {
      const res = await api('GET', `/sandboxes?metadata=${metadataParam({ suite: tag })}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(new Set(res.json.map((s) => s.sandboxID)), new Set(ids));
      assertError(await api('GET', '/sandboxes?metadata=novalue'), 400);
    });
  });

  test('the reaper kills a sandbox at endAt and deletes its directory', async () => {
    const sb = await create({ timeout: 1 });
    const dir = path.join(backend.stateDir, 'sandboxes', sb.sandboxID);
    assert.ok(existsSync(dir));
    await until(async () => (await api('GET', `/sandboxes/${sb.sandboxID}`)).status === 404, 'sandbox expiry', 30000, 100);
    // The API forgets the sandbox at once; its directory goes later, in the cleaner thread
    // (off the event loop), so wait for that with a deadline rather than racing it.
    await until(() => !existsSync(dir), 'expired sandbox dir removed', 30000, 20);
    assert.equal((await api.envd('GET', '/health', sb.sandboxID)).status, 502);
  });

  test('autoPause: expiry pauses instead of killing', async () => {
    const sb = await create({ timeout: 1, autoPause: true });
    assert.equal((await detail(sb.sandboxID)).lifecycle.onTimeout, 'pause');
    await until(async () => (await detail(sb.sandboxID)).state === 'paused', 'auto-pause', 30000, 100);
    assert.equal((await detail(sb.sandboxID)).lifetimeLeft, 0, 'paused on expiry: nothing left');
    assert.ok(existsSync(path.join(backend.stateDir, 'sandboxes', sb.sandboxID)));
    const res = await api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 600 } });
    assert.equal(res.status, 201);
  });

  test('timeout and connect re-arm the expiry timer', async () => {
    const a = await create({ timeout: 3600 });
    assert.equal((await api('POST', `/sandboxes/${a.sandboxID}/timeout`, { body: { timeout: 1 } })).status, 204);
    const b = await create({ timeout: 3600 });
    assert.equal((await api('POST', `/sandboxes/${b.sandboxID}/pause`)).status, 204);
    assert.equal((await api('POST', `/v2/sandboxes/${b.sandboxID}/connect`, { body: { timeout: 1 } })).status, 201);
    await until(async () => (await api('GET', `/sandboxes/${a.sandboxID}`)).status === 404, 'expiry after /timeout', 30000, 100);
    await until(async () => (await api('GET', `/sandboxes/${b.sandboxID}`)).status === 404, 'expiry after connect', 30000, 100);
  });

  test('unknown routes are 404 JSON, wrong methods 405 JSON with Allow', async () => {
    assertError(await api('GET', '/nope'), 404);
    assertError(await api('GET', '/v3/sandboxes'), 404);
    assertError(await api('GET', '/sandboxes/x/y/z'), 404);
    const res = await api('PUT', '/v2/sandboxes');
    assertError(res, 405);
    assert.match(res.headers.get('allow'), /GET/);
    assert.match(res.headers.get('allow'), /POST/);
    assertError(await api('GET', '/sandboxes/x/pause'), 405);
    assertError(await api('PATCH', '/sandboxes/x'), 405);
  });

  test('CORS: preflights are answered without a key, answers expose the paging headers', async () => {
    for (const base of [backend.apiUrl, backend.sandboxUrl]) {
      const pre = await fetch(`${base}/v2/sandboxes`, {
        method: 'OPTIONS',
        headers: { Origin: 'http://example.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, content-type' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), '*');
      assert.match(pre.headers.get('access-control-allow-methods'), /POST/);
      assert.match(pre.headers.get('access-control-allow-methods'), /DELETE/);
      assert.match(pre.headers.get('access-control-allow-headers'), /x-api-key/i);
    }
    const bare = await fetch(`${backend.apiUrl}/sandboxes/x`, { method: 'OPTIONS' });
    assert.equal(bare.status, 204);
    assert.equal(bare.headers.get('access-control-allow-headers'), '*');
    for (const res of [await api('GET', '/v2/sandboxes'), await api('GET', '/nope'), await api('GET', '/v2/sandboxes', { key: null })]) {
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.match(res.headers.get('access-control-expose-headers'), /X-Next-Token/);
      assert.match(res.headers.get('access-control-expose-headers'), /X-Total-Running/);
    }
  });

  test('envd routes on E2b-Sandbox-Id: 204, 502 for unknown, 400 without it, 404 JSON elsewhere', async () => {
    const sb = await create();
    assert.equal((await api.envd('GET', '/health', sb.sandboxID)).status, 204);
    const unknown = await api.envd('GET', '/health', 'unknownsandbox');
    assert.equal(unknown.status, 502);
    assert.match(unknown.headers.get('content-type'), /^application\/json/);
    assert.deepEqual(unknown.json, { sandboxId: 'unknownsandbox', message: 'The sandbox was not found', code: 502 });
    assert.equal(unknown.headers.get('access-control-allow-origin'), '*');
    assertError(await api.envd('GET', '/health', null), 400);
    assertError(await api.envd('GET', '/nope', sb.sandboxID), 404);
    assertError(await api.envd('POST', '/process.Process/Nope', sb.sandboxID, { body: {} }), 404);
    assertError(await api.envd('POST', '/health', sb.sandboxID), 405);
    assert.equal((await api.envd('GET', '/nope', 'unknownsandbox')).status, 502, 'the proxy answers before envd');
  });
});

describe('backend process', () => {
  test('the connect trap with --connect-may-shorten: a connect without timeout SHORTENS a running sandbox to now + 300 s', async () => {
    const backend = await startBackend({ extraArgs: ['--connect-may-shorten'] });
    try {
      const api = client(backend);
      const sb = (await api('POST', '/v2/sandboxes', { body: { templateID: 'base', timeout: 3600 } })).json;
      const t = await timed(() => api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: {} }));
      assert.equal(t.result.status, 200, t.result.text);
      assertEndAt((await api('GET', `/sandboxes/${sb.sandboxID}`)).json.endAt, t, 300);
      const t2 = await timed(() => api('POST', `/v2/sandboxes/${sb.sandboxID}/connect`, { body: { timeout: 7200 } }));
      assertEndAt((await api('GET', `/sandboxes/${sb.sandboxID}`)).json.endAt, t2, 7200);
    } finally {
      assert.equal((await backend.stop()).code, 0);
    }
  });

  test('a given --state-dir is kept on exit, with its sandboxes; killed ones are removed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'e2b-backend-test-'));
    try {
      let backend = await startBackend({ stateDir: dir });
      assert.equal(backend.stateDir, dir);
      let api = client(backend);
      const sb = (await api('POST', '/v2/sandboxes', { body: { templateID: 'base' } })).json;
      const gone = (await api('POST', '/v2/sandboxes', { body: { templateID: 'base' } })).json;
      assert.equal((await api('DELETE', `/sandboxes/${gone.sandboxID}`)).status, 204);
      assert.ok(existsSync(path.join(dir, 'sandboxes', sb.sandboxID)));
      let { code } = await backend.stop();
      assert.equal(code, 0, backend.stderr());
      assert.ok(existsSync(dir), 'not created by the backend, so not removed');
      // Kept for the next backend (docs/backend/state.md, "State that lasts").
      assert.deepEqual(readdirSync(path.join(dir, 'sandboxes')), [sb.sandboxID]);
      assert.deepEqual(readdirSync(path.join(dir, 'records', 'sandboxes')), [`${sb.sandboxID}.json`]);
      backend = await startBackend({ stateDir: dir });
      api = client(backend);
      assert.equal((await api('GET', `/sandboxes/${sb.sandboxID}`)).json.state, 'paused');
      assert.equal((await api('DELETE', `/sandboxes/${sb.sandboxID}`)).status, 204);
      ({ code } = await backend.stop());
      assert.equal(code, 0, backend.stderr());
      assert.deepEqual(readdirSync(path.join(dir, 'records', 'sandboxes')), []);
      assert.deepEqual(existsSync(path.join(dir, 'sandboxes')) ? readdirSync(path.join(dir, 'sandboxes')) : [], []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('SIGINT also exits cleanly', async () => {
    const backend = await startBackend();
    const { code, signal } = await backend.stop('SIGINT');
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.ok(!existsSync(backend.stateDir));
  });

  const run = (args, env = backendEnv('k-' + Date.now())) => spawnSync(backendBinary(), args, { encoding: 'utf8', timeout: 10000, env });

  test('a missing key is a usage error (exit 2); --api-key on the command line is refused', () => {
    const noKey = { ...process.env };
    delete noKey.E2B_LOCAL_API_KEY;
    const res = run(['--listen', '127.0.0.1:0'], noKey);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /E2B_LOCAL_API_KEY/);
    assert.equal(res.stdout, '');
    for (const args of [['--api-key', 'do-not-print-this-key'], ['--api-key=do-not-print-this-key']]) {
      const refused = run(['--listen', '127.0.0.1:0', ...args]);
      assert.equal(refused.status, 2, refused.stderr);
      assert.match(refused.stderr, /--api-key is refused/);
      assert.ok(!refused.stderr.includes('do-not-print-this-key'));
    }
    const missing = run(['--listen', '127.0.0.1:0', '--api-key-file', '/nonexistent/key-file'], noKey);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--api-key-file/);
  });

  test('a mistake on the command line is one line on stderr pointing to --help (exit 2); --help prints the usage (exit 0)', () => {
    const noKey = { ...process.env };
    delete noKey.E2B_LOCAL_API_KEY;
    const mistakes = [
      [['--listen', '127.0.0.1:0', '--bogus'], undefined, /unknown option or missing value: --bogus/],
      [['--listen', '127.0.0.1:0', '--isolation', 'some'], undefined, /--isolation must be auto, full, rootless or none, got some/],
      [['--listen', '127.0.0.1:0', '--max-sandboxes', '0'], undefined, /--max-sandboxes must be 1\.\.100000, got 0/],
      [['--listen', 'nonsense'], undefined, /--listen must be HOST:PORT, got nonsense/],
      [[], undefined, /--listen is required/],
      [['stray'], undefined, /unexpected argument/],
      [['--listen', '127.0.0.1:0'], noKey, /no API key/],
    ];
    for (const [args, env, said] of mistakes) {
      const res = run(args, env);
      assert.equal(res.status, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, /^e2b-local-backend: [^\n]+; see --help\n$/, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, said);
    }
    for (const flag of ['--help', '-h']) {
      const help = run([flag], noKey);
      assert.equal(help.status, 0, help.stderr);
      assert.equal(help.stderr, '');
      assert.match(help.stdout, /^usage: /);
      assert.match(help.stdout, /--listen HOST:PORT/);
    }
  });

  test('non-loopback addresses are refused without --allow-remote, and the key is not echoed', () => {
    const key = 'do-not-print-this-key';
    for (const args of [['--listen', '0.0.0.0:0'], ['--listen', '127.0.0.1:0', '--envd-listen', '0.0.0.0:0'],
      ['--listen', 'example.com:0'], ['--listen', '[::]:0']]) {
      const res = run(args, backendEnv(key));
      assert.equal(res.status, 2, res.stderr);
      assert.match(res.stderr, /non-loopback/);
      assert.ok(!res.stderr.includes(key) && !res.stdout.includes(key));
    }
    for (const args of [['--listen', 'nonsense'], ['--listen', '127.0.0.1:99999'], ['--bogus', '--listen', '127.0.0.1:0'], ['stray']]) {
      const res = run(args, backendEnv(key));
      assert.equal(res.status, 2, res.stderr);
      assert.ok(!res.stderr.includes(key));
    }
  });
});
