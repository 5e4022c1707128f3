// Every route the local backend serves (backend/api/api_routes.c), held
// against E2B's control-plane API as the official SDK carries it (its
// generated OpenAPI types, read by tests/lib/e2b-sdk-schema.mjs at test time
// from node_modules/e2b): each route is one of E2B's operations or an
// extension of ours listed below with why; every operation of the parts of
// E2B's API the backend models is served, or listed as not served with why;
// and a real backend's answer to each served operation, on success and for
// an unknown id, has a status the operation lists (or one E2B's own handler
// answers, listed) and a body its schema accepts.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { startBackend } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';
import { loadControlPlane } from '../lib/e2b-sdk-schema.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const spec = loadControlPlane();
const shape = (p) => p.replace(/\{[^}]*\}/g, '{}');
const key = (method, p) => `${method} ${shape(p)}`;
const operations = new Map(spec.operations.map((op) => [key(op.method, op.path), op]));

// The routes table of api_routes.c: {"/path", EVHTTP_REQ_X, "X", key, handler}.
const routes = [...readFileSync(path.join(repo, 'backend', 'api', 'api_routes.c'), 'utf8')
  .matchAll(/\{"(\/[^"]*)", EVHTTP_REQ_\w+, "(\w+)", (?:true|false), \w+\}/g)].map((m) => key(m[2], m[1]));

// The SDK's own calls of the volume content API (its VolumeApiClient), whose
// paths its types do not carry.
const sdkCalls = new Set([...readFileSync(path.join(repo, 'node_modules', 'e2b', 'dist', 'index.mjs'), 'utf8')
  .matchAll(/\.api\.(GET|POST|PUT|PATCH|DELETE)\("(\/[^"]+)"/g)].map((m) => key(m[1], m[2])));

// Ours, with why.
const EXTENSIONS = {
  'GET /health': 'E2B\'s spec/openapi.yml has it (204, no body); the SDK\'s types leave it out: checked below',
  'GET /health/details': 'the backend\'s own facts: isolation, limits, seccomp, warm pools (docs/backend/running.md)',
  'POST /sandboxes/{}/network': 'updateNetwork as PUT is E2B\'s; POST is accepted as well',
  'PUT /templates/{}/files/{}': 'the upload link a template\'s files go to (E2B gives a storage bucket\'s)',
};
// E2B's operations the backend does not serve, with why.
const NOT_SERVED = {
  'GET /teams': 'one team: no team API',
  'GET /teams/{}/metrics': 'one team: no team API',
  'GET /teams/{}/metrics/max': 'one team: no team API',
  'PATCH /templates/{}': 'a template\'s public flag: every template is the one team\'s',
  'PATCH /v2/templates/{}': 'a template\'s public flag: every template is the one team\'s',
  'GET /templates/{}/builds/{}/logs': 'the SDK reads a build\'s log through its status (logsOffset), which is served',
};
// Statuses E2B's own handlers answer that its spec does not list, with where.
const UNDOCUMENTED = {
  'GET /templates/{}': { 404: 'handlers/template_get.go: "Template %s not found"' },
  'DELETE /templates/{}': { 404: 'handlers/template_delete.go: resolveTemplateAndTeam\'s 404 for an unknown template' },
  'POST /sandboxes/{}/refreshes': { 400: 'the spec\'s request validator: duration outside 0..3600', 409: 'orchestrator/keep_alive.go: a sandbox not running' },
  'POST /sandboxes/{}/timeout': { 400: 'the spec\'s request validator: a timeout that is not an int32' },
};

test('every route the backend serves is one of E2B\'s operations, a volume content call of the SDK, or a listed extension', () => {
  assert.ok(routes.length > 40, `routes read from api_routes.c: ${routes.length}`);
  const unknown = routes.filter((r) => !operations.has(r) && !sdkCalls.has(r) && !EXTENSIONS[r]);
  assert.deepEqual(unknown, []);
  for (const r of Object.keys(EXTENSIONS)) assert.ok(routes.includes(r), `${r} is listed as an extension but not served`);
  assert.ok(routes.filter((r) => r.includes('/volumecontent/')).length === 7 && routes.filter((r) => r.includes('/volumecontent/')).every((r) => sdkCalls.has(r)));
});

test('every operation of E2B\'s control plane is served, or listed as not served with why', () => {
  const missing = [...operations.keys()].filter((k) => !routes.includes(k) && !NOT_SERVED[k]);
  assert.deepEqual(missing, []);
  for (const k of Object.keys(NOT_SERVED)) {
    assert.ok(operations.has(k), `${k} is no operation of the SDK's schema any more`);
    assert.ok(!routes.includes(k), `${k} is served now: take it off NOT_SERVED`);
  }
});

describe('a real backend\'s answers against the operations\' response schemas', () => {
  let backend;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validators = new Map();
  const checked = new Set();
  const call = async (method, urlPath, body) => {
    const res = await fetch(backend.apiUrl + urlPath, {
      method, headers: { 'X-API-Key': backend.apiKey, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
  };
  // One operation's answer: a status it lists (or E2B answers), a body its schema takes.
  const check = async (opKey, method, urlPath, body, wantStatus) => {
    const op = operations.get(opKey);
    assert.ok(op, `${opKey} is an operation of the SDK's schema`);
    const res = await call(method, urlPath, body);
    const listed = Object.prototype.hasOwnProperty.call(op.responses, res.status) || UNDOCUMENTED[opKey]?.[res.status];
    assert.ok(listed, `${method} ${urlPath}: ${res.status} is none of ${opKey}'s responses (${Object.keys(op.responses)}): ${res.text}`);
    if (wantStatus) assert.equal(res.status, wantStatus, `${method} ${urlPath}: ${res.text}`);
    const schema = op.responses[res.status] ?? (res.status >= 400 ? { $ref: '#/definitions/Error' } : null);
    if (schema) {
      const id = `${opKey} ${res.status}`;
      if (!validators.has(id)) validators.set(id, ajv.compile({ ...schema, definitions: spec.definitions }));
      const validate = validators.get(id);
      assert.ok(validate(res.json), `${method} ${urlPath} ${res.status}: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 600)}`);
    } else {
      assert.equal(res.text, '', `${method} ${urlPath} ${res.status} has no body in the spec`);
    }
    checked.add(opKey);
    return res;
  };

  before(async () => { backend = await startBackend(); });
  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('GET /health answers as E2B\'s spec says: 204, no body', async () => {
    const res = await fetch(`${backend.apiUrl}/health`);
    assert.deepEqual([res.status, await res.text()], [204, '']);
  });

  test('sandboxes, snapshots and their logs', async () => {
    const { json: sbx } = await check('POST /v2/sandboxes', 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 120, metadata: { via: 'openapi' } }, 201);
    const { json: v1 } = await check('POST /sandboxes', 'POST', '/sandboxes', { templateID: 'base' }, 201);
    const id = sbx.sandboxID;
    await check('GET /sandboxes/{}', 'GET', `/sandboxes/${id}`, undefined, 200);
    await check('GET /sandboxes', 'GET', '/sandboxes', undefined, 200);
    await check('GET /v2/sandboxes', 'GET', '/v2/sandboxes?state=running,paused', undefined, 200);
    await check('POST /sandboxes/{}/timeout', 'POST', `/sandboxes/${id}/timeout`, { timeout: 120 }, 204);
    await check('POST /sandboxes/{}/refreshes', 'POST', `/sandboxes/${id}/refreshes`, { duration: 60 }, 204);
    // a process, so that the logs have lines
    const envd = await fetch(`${backend.sandboxUrl}/process.Process/Start`, {
      method: 'POST',
      headers: { 'E2b-Sandbox-Id': id, 'X-Access-Token': sbx.envdAccessToken, 'Content-Type': 'application/connect+json' },
      body: (() => { const msg = Buffer.from(JSON.stringify({ process: { cmd: 'true' } })); const head = Buffer.alloc(5); head.writeUInt32BE(msg.length, 1); return Buffer.concat([head, msg]); })(),
    });
    assert.equal(envd.status, 200);
    await envd.arrayBuffer();
    await until(async () => (await call('GET', `/v2/sandboxes/${id}/logs`)).json.logs.length === 2, 'the process\'s two lines');
    await check('GET /sandboxes/{}/logs', 'GET', `/sandboxes/${id}/logs`, undefined, 200);
    await check('GET /v2/sandboxes/{}/logs', 'GET', `/v2/sandboxes/${id}/logs?level=info&direction=forward`, undefined, 200);
    await check('GET /sandboxes/{}/metrics', 'GET', `/sandboxes/${id}/metrics`, undefined, 200);
    await check('GET /sandboxes/metrics', 'GET', `/sandboxes/metrics?sandbox_ids=${id}`, undefined, 200);
    await check('PUT /sandboxes/{}/network', 'PUT', `/sandboxes/${id}/network`, { denyOut: ['10.0.0.0/8'] }, 204);
    const { json: snap } = await check('POST /sandboxes/{}/snapshots', 'POST', `/sandboxes/${id}/snapshots`, { name: 'openapi-snap' }, 201);
    await check('GET /snapshots', 'GET', '/snapshots', undefined, 200);
    const { json: forks } = await check('POST /sandboxes/{}/fork', 'POST', `/sandboxes/${id}/fork`, { count: 1 }, 201);
    await check('POST /sandboxes/{}/pause', 'POST', `/sandboxes/${id}/pause`, {}, 204);
    await check('POST /sandboxes/{}/resume', 'POST', `/sandboxes/${id}/resume`, { timeout: 60 }, 201);
    await check('POST /sandboxes/{}/connect', 'POST', `/sandboxes/${id}/connect`, { timeout: 60 }, 200);
    await check('POST /v2/sandboxes/{}/connect', 'POST', `/v2/sandboxes/${id}/connect`, {}, 200);
    await check('DELETE /templates/{}', 'DELETE', `/templates/${encodeURIComponent(snap.snapshotID)}`, undefined, 204);
    for (const sid of [id, v1.sandboxID, ...forks.map((f) => f.sandbox.sandboxID)])
      await check('DELETE /sandboxes/{}', 'DELETE', `/sandboxes/${sid}`, undefined, 204);
  });

  test('every sandbox operation for an id the backend does not have', async () => {
    const gone = 'openapinosuchsandbox';
    const bodies = { 'POST /sandboxes/{}/timeout': { timeout: 60 }, 'POST /sandboxes/{}/connect': { timeout: 60 }, 'PUT /sandboxes/{}/network': {} };
    for (const [k, op] of operations) {
      if (!routes.includes(k) || !op.path.includes('{sandboxID}')) continue;
      const res = await check(k, op.method, op.path.replace('{sandboxID}', gone), bodies[k] ?? (op.method === 'GET' || op.method === 'DELETE' ? undefined : {}));
      assert.equal(res.status, 404, `${k}: ${res.text}`);
    }
  });

  test('templates, built and built-in; volumes; secrets', async () => {
    const { json: req } = await check('POST /v3/templates', 'POST', '/v3/templates', { name: 'openapi-check' }, 202);
    await check('GET /templates/{}/files/{}', 'GET', `/templates/${req.templateID}/files/${'a'.repeat(64)}`, undefined, 201);
    await check('POST /v2/templates/{}/builds/{}', 'POST', `/v2/templates/${req.templateID}/builds/${req.buildID}`, { fromTemplate: 'base', steps: [] }, 202);
    await until(async () => (await call('GET', `/templates/${req.templateID}/builds/${req.buildID}/status`)).json.status === 'ready', 'the build is ready', 60000);
    await check('GET /templates/{}/builds/{}/status', 'GET', `/templates/${req.templateID}/builds/${req.buildID}/status`, undefined, 200);
    for (const alias of ['openapi-check', 'base']) await check('GET /templates/aliases/{}', 'GET', `/templates/aliases/${alias}`, undefined, 200);
    await check('GET /templates/aliases/{}', 'GET', '/templates/aliases/no-such-template', undefined, 404);
    for (const t of [req.templateID, 'base']) await check('GET /templates/{}', 'GET', `/templates/${t}`, undefined, 200);
    await check('GET /templates/{}', 'GET', '/templates/no-such-template', undefined, 404);
    await check('GET /templates', 'GET', '/templates', undefined, 200);
    await check('GET /v2/templates', 'GET', '/v2/templates', undefined, 200);
    await check('POST /templates/tags', 'POST', '/templates/tags', { target: 'openapi-check:default', tags: ['checked'] }, 201);
    await check('GET /templates/{}/tags', 'GET', `/templates/${req.templateID}/tags`, undefined, 200);
    await check('DELETE /templates/tags', 'DELETE', '/templates/tags', { name: 'openapi-check', tags: ['checked'] }, 204);
    await check('DELETE /templates/{}', 'DELETE', `/templates/${req.templateID}`, undefined, 204);
    await check('DELETE /templates/{}', 'DELETE', `/templates/${req.templateID}`, undefined, 404);

    const { json: vol } = await check('POST /volumes', 'POST', '/volumes', { name: 'openapi-check' }, 201);
    await check('GET /volumes', 'GET', '/volumes', undefined, 200);
    await check('GET /volumes/{}', 'GET', `/volumes/${vol.volumeID}`, undefined, 200);
    await check('DELETE /volumes/{}', 'DELETE', `/volumes/${vol.volumeID}`, undefined, 204);
    await check('GET /volumes/{}', 'GET', `/volumes/${vol.volumeID}`, undefined, 404);

    const { json: secret } = await check('POST /secrets', 'POST', '/secrets', { name: 'openapi-check', value: 'not shown' }, 201);
    await check('GET /secrets', 'GET', '/secrets', undefined, 200);
    await check('GET /secrets/{}', 'GET', `/secrets/${secret.secretID}`, undefined, 200);
    await check('POST /secrets/{}', 'POST', `/secrets/${secret.secretID}`, { value: 'still not shown' }, 200);
    await check('DELETE /secrets/{}', 'DELETE', `/secrets/${secret.secretID}`, undefined, 204);
    await check('GET /secrets/{}', 'GET', `/secrets/${secret.secretID}`, undefined, 404);
  });

  test('every operation the backend serves was checked', () => {
    const served = [...operations.keys()].filter((k) => routes.includes(k));
    assert.deepEqual(served.filter((k) => !checked.has(k)), []);
  });
});
