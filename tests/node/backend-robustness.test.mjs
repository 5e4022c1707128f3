// The local backend must answer malformed input with a 4xx (or, for bytes
// that are not HTTP at all, by closing the connection) and keep serving.
// After every case the server must still answer a good request.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { startBackend } from '../../host/backend.mjs';

let backend;

before(async () => { backend = await startBackend(); });
after(async () => {
  const { code } = await backend.stop();
  assert.equal(code, 0, backend.stderr());
  assert.ok(!backend.stderr().includes(backend.apiKey));
});

const headers = () => ({ 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' });

async function post(urlPath, body) {
  const res = await fetch(backend.apiUrl + urlPath, { method: 'POST', headers: headers(), body });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, text, json, headers: res.headers };
}

// The server is still healthy: a real create and a list both work.
async function assertStillServing() {
  const created = await post('/v2/sandboxes', JSON.stringify({ templateID: 'base' }));
  assert.equal(created.status, 201, created.text);
  const list = await fetch(`${backend.apiUrl}/v2/sandboxes`, { headers: headers() });
  assert.equal(list.status, 200);
  await list.arrayBuffer();
  const del = await fetch(`${backend.apiUrl}/sandboxes/${created.json.sandboxID}`, { method: 'DELETE', headers: headers() });
  assert.equal(del.status, 204);
}

// Writes raw bytes on a fresh connection, half-closes it unless told not to,
// and resolves with whatever came back once the server has closed it.
function rawExchange(url, chunks, { halfClose = true } = {}) {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const sock = net.connect(Number(port), hostname);
    const received = [];
    let error = null;
    sock.on('data', (d) => received.push(d));
    sock.on('error', (e) => { error = e; });
    sock.on('close', () => {
      const text = Buffer.concat(received).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : null, text, error });
    });
    sock.on('connect', () => {
      for (const c of chunks) sock.write(c);
      if (halfClose) sock.end();
    });
  });
}

// Either an HTTP 4xx answer or a closed/reset connection, never a 2xx/5xx.
function assertRejected(res, what) {
  if (res.status !== null) assert.ok(res.status >= 400 && res.status < 500, `${what}: got ${res.status}`);
}

describe('malformed JSON bodies', () => {
  test('syntax errors, truncation, trailing garbage, non-objects and deep nesting are 400', async () => {
    const bodies = ['{', '{"templateID": "base"', '{"templateID": "base"}}', '{templateID: base}', "{'templateID':'base'}",
      '[{"templateID":"base"}]', 'true', '"x"', '\u0000\u0001', '{"templateID":"base",}', '[' .repeat(5000) + ']'.repeat(5000),
      '{"a":'.repeat(3000) + '1' + '}'.repeat(3000), '\xff\xfe{}'];
    for (const body of bodies) {
      const res = await post('/v2/sandboxes', body);
      assert.equal(res.status, 400, `${JSON.stringify(body.slice(0, 40))}: ${res.text}`);
      assert.equal(res.json?.code, 400);
    }
    await assertStillServing();
  });

  test('wrong JSON types are 400s naming the field', async () => {
    const cases = {
      templateID: [null, 1, true, [], {}],
      timeout: ['1', true, [], {}, 1e300, -5, 0.5],
      metadata: ['x', 1, [], { k: 1 }, { k: null }, { k: {} }],
      envVars: ['x', [], { k: false }],
      autoPause: ['true', 1, {}],
    };
    for (const [field, values] of Object.entries(cases)) {
      for (const value of values) {
        const body = { templateID: 'base', [field]: value };
        if (field === 'templateID' && value === null) continue; // null = absent, covered below
        const res = await post('/v2/sandboxes', JSON.stringify(body));
        assert.equal(res.status, 400, `${field}=${JSON.stringify(value)}: ${res.text}`);
        assert.match(res.json.message, new RegExp(field === 'timeout' && value === 1e300 ? 'timeout|Timeout' : field));
      }
    }
    assert.equal((await post('/v2/sandboxes', JSON.stringify({ templateID: null }))).status, 400);
    assert.equal((await post('/sandboxes/x/timeout', JSON.stringify({ timeout: [] }))).status, 400);
    assert.equal((await post('/sandboxes/x/pause', '[]')).status, 400);
    assert.equal((await post('/v2/sandboxes/x/connect', '{"timeout":"300"}')).status, 400);
    await assertStillServing();
  });
});

describe('oversized input', () => {
  test('a body over 1 MiB gets 413', async () => {
    const huge = JSON.stringify({ templateID: 'base', metadata: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, { method: 'POST', headers: headers(), body: huge });
    assert.equal(res.status, 413);
    await res.arrayBuffer();
    await assertStillServing();
  });

  test('a chunked body over 1 MiB is refused', async () => {
    const res = await new Promise((resolve) => {
      const { hostname, port } = new URL(backend.apiUrl);
      const req = http.request({ hostname, port, path: '/v2/sandboxes', method: 'POST', headers: headers() }, (r) => {
        r.resume();
        r.on('end', () => resolve({ status: r.statusCode }));
      });
      req.on('error', (error) => resolve({ status: null, error }));
      const chunk = 'x'.repeat(64 * 1024);
      req.write('{"templateID":"base","pad":"');
      for (let i = 0; i < 40; i++) req.write(chunk);
      req.end('"}');
    });
    assertRejected(res, 'chunked 2.5 MiB');
    await assertStillServing();
  });

  test('huge headers are refused', async () => {
    const res = await rawExchange(backend.apiUrl, [
      `GET /v2/sandboxes HTTP/1.1\r\nHost: x\r\nX-API-Key: ${backend.apiKey}\r\nX-Big: ${'a'.repeat(200 * 1024)}\r\n\r\n`,
    ]);
    assertRejected(res, 'huge header');
    const many = await rawExchange(backend.apiUrl, [
      `GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 5000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
    ]);
    assertRejected(many, 'many headers');
    await assertStillServing();
  });
});

describe('raw sockets', () => {
  test('garbage bytes: a 400 or a closed connection', async () => {
    const inputs = [
      'GARBAGE\r\n\r\n',
      'GET\r\n\r\n',
      'GET / HTTP/9.9\r\n\r\n',
      'POST /v2/sandboxes HTTP/1.1\r\nContent-Length: -5\r\n\r\n',
      'POST /v2/sandboxes HTTP/1.1\r\nContent-Length: abc\r\n\r\n',
      'POST /v2/sandboxes HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nnot hex\r\n\r\n',
      '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', // a TLS ClientHello prefix
      randomBytes(4096),
      Buffer.alloc(2048, 0),
    ];
    for (const input of inputs) {
      const res = await rawExchange(backend.apiUrl, [input]);
      assertRejected(res, JSON.stringify(String(input).slice(0, 30)));
      const envdRes = await rawExchange(backend.sandboxUrl, [input]);
      assertRejected(envdRes, `envd ${JSON.stringify(String(input).slice(0, 30))}`);
    }
    await assertStillServing();
  });

  test('a slow partial request, then the client goes away', async () => {
    const partials = [
      ['POST /v2/sandboxes HTTP/1.1\r\n', 'Host: x\r\n', `X-API-Key: ${backend.apiKey}\r\n`],
      ['POST /v2/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n', '{"templ'],
      ['POST /v2/sandboxes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', '5\r\n{"tem', 'pl'],
      ['GE'],
    ];
    for (const chunks of partials) {
      await new Promise((resolve) => {
        const { hostname, port } = new URL(backend.apiUrl);
        const sock = net.connect(Number(port), hostname);
        sock.on('error', () => {});
        sock.on('connect', async () => {
          for (const c of chunks) {
            sock.write(c);
            await new Promise((r) => setImmediate(r));
          }
          sock.destroy(); // abrupt close mid-request
          resolve();
        });
      });
    }
    await assertStillServing();
  });

  test('a chunked request body is accepted (the SDK sends chunked)', async () => {
    const res = await new Promise((resolve, reject) => {
      const { hostname, port } = new URL(backend.apiUrl);
      const req = http.request({ hostname, port, path: '/v2/sandboxes', method: 'POST', headers: headers() }, (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (d) => { text += d; });
        r.on('end', () => resolve({ status: r.statusCode, text, te: req.getHeader('transfer-encoding') }));
      });
      req.on('error', reject);
      for (const piece of ['{"templ', 'ateID":"ba', 'se","metadata":{"via":"chu', 'nked"}}']) req.write(piece);
      req.end();
    });
    assert.equal(res.status, 201, res.text);
    const sb = JSON.parse(res.text);
    const detail = await (await fetch(`${backend.apiUrl}/sandboxes/${sb.sandboxID}`, { headers: headers() })).json();
    assert.deepEqual(detail.metadata, { via: 'chunked' });
  });

  test('pipelined requests on one connection are all answered', async () => {
    const one = `GET /health HTTP/1.1\r\nHost: x\r\n\r\n`;
    // No half-close here: libevent takes a read EOF as the end of the
    // connection; the last request's Connection: close ends it instead.
    const res = await rawExchange(backend.apiUrl, [one + one + `GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`],
      { halfClose: false });
    assert.equal(res.text.match(/HTTP\/1\.1 204/g)?.length, 3, res.text);
  });
});

describe('query strings', () => {
  test('invalid percent-encoding is a 400', async () => {
    const queries = ['metadata=%zz', 'metadata=%', 'metadata=a%3', 'metadata=a%253Db%25zz', 'limit=%4', 'state=%ZZrunning',
      'nextToken=%', 'metadata=a%00b', '%=1', 'metadata=a%3D%25'];
    for (const q of queries) {
      const res = await fetch(`${backend.apiUrl}/v2/sandboxes?${q}`, { headers: headers() });
      const body = await res.json();
      assert.equal(res.status, 400, `${q}: ${JSON.stringify(body)}`);
      assert.equal(body.code, 400);
    }
    const v1 = await fetch(`${backend.apiUrl}/sandboxes?metadata=%zz`, { headers: headers() });
    assert.equal(v1.status, 400);
    await v1.arrayBuffer();
    await assertStillServing();
  });

  test('odd paths: encoded or overlong IDs are plain 404s', async () => {
    for (const p of ['/sandboxes/%zz', '/sandboxes/%2e%2e', `/sandboxes/${'a'.repeat(4000)}`, '/sandboxes/a%00b', '//sandboxes', '/sandboxes/']) {
      const res = await fetch(backend.apiUrl + p, { headers: headers() });
      const body = await res.json();
      assert.ok(res.status === 404 || res.status === 400, `${p}: ${res.status}`);
      assert.equal(body.code, res.status);
    }
    await assertStillServing();
  });
});
