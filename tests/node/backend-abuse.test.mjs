// The local backend under abuse: the API key is not
// readable from /proc, the descriptor limit and connection floods do not make
// it spin or starve /health, slow-loris clients are cut off, sizes are
// limited, and every answer is correct HTTP and JSON (HEAD, NUL, UTF-8).
// Every case runs against the real backend binary.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startBackend } from '../../host/backend.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';
import { until, sleep } from '../../host/wait.mjs';

const CLK_TCK = 100; // Linux USER_HZ

// utime + stime of a process, in seconds.
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function rssKiB(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

// GET /health on a fresh connection: { status, ms }, or { status: null } after 5 s.
function health(url) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.get(`${url}/health`, { agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: null, ms: Infinity }));
  });
}

// /health answers 204, and quickly: the median of 5 fresh connections is
// under 50 ms (the bound; a functional check, not a benchmark).
async function assertHealthResponsive(url, what) {
  const samples = [];
  for (let i = 0; i < 5; i++) samples.push(await health(url));
  for (const s of samples) assert.equal(s.status, 204, `${what}: /health did not answer`);
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  assert.ok(ms[2] < 50, `${what}: /health took ${ms.join(', ')} ms`);
}

// The backend's CPU time over one second of wall time stays small (a spinning
// loop uses a whole second).
async function assertMostlyIdle(pid, what) {
  const before = cpuSeconds(pid);
  await sleep(1000);
  const used = cpuSeconds(pid) - before;
  assert.ok(used < 0.25, `${what}: the backend used ${used.toFixed(2)} s of CPU in 1 s`);
}

// Opens n connections that send nothing. Resolves once every one has either
// connected or been refused/closed, with the live sockets.
async function openIdle(url, n) {
  const { hostname, port } = new URL(url);
  const sockets = [];
  let settled = 0;
  for (let i = 0; i < n; i++) {
    const s = net.connect(Number(port), hostname);
    let done = false;
    const settle = () => { if (!done) { done = true; settled++; } };
    s.on('connect', settle);
    s.on('error', settle);
    s.on('close', settle);
    sockets.push(s);
  }
  await until(() => settled === n, `${n} connections settled`, 60000);
  return sockets;
}

const destroyAll = (sockets) => { for (const s of sockets) s.destroy(); };

describe('the API key', () => {
  for (const keyFile of [false, true]) {
    test(`is in neither /proc/<pid>/cmdline nor environ, nor a sandbox command's view (${keyFile ? '--api-key-file' : 'E2B_LOCAL_API_KEY'})`, async () => {
      const backend = await startBackend({ keyFile });
      try {
        const cmdline = readFileSync(`/proc/${backend.pid}/cmdline`, 'utf8');
        const environ = readFileSync(`/proc/${backend.pid}/environ`, 'utf8');
        assert.ok(cmdline.includes('--listen'), 'read the right process');
        assert.ok(!cmdline.includes(backend.apiKey), 'key in cmdline');
        assert.ok(!environ.includes(backend.apiKey), 'key in environ');
        const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, {
          method: 'POST', headers: { 'X-API-Key': backend.apiKey }, body: JSON.stringify({ templateID: 'base' }) });
        assert.equal(res.status, 201, 'the key still works');
        const sb = await res.json();
        const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken });
        const script = `env; cat /proc/${backend.pid}/cmdline /proc/${backend.pid}/environ /proc/$PPID/environ 2>/dev/null; true`;
        const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', script] } });
        const out = dataOf(r.messages).stdout.toString('latin1');
        assert.ok(out.includes('PATH='), 'the command ran');
        assert.ok(!out.includes(backend.apiKey), 'a sandbox command read the key');
        assert.ok(!out.includes('E2B_LOCAL_API_KEY'), 'the variable is visible or was passed on');
      } finally {
        assert.equal((await backend.stop()).code, 0);
      }
    });
  }
});

describe('connections', () => {
  test('1,000 idle connections at a low descriptor limit: /health still answers fast, the backend stays idle', async () => {
    const backend = await startBackend({ nofile: 256 });
    let sockets = [];
    try {
      sockets = await openIdle(backend.apiUrl, 1000);
      await assertHealthResponsive(backend.apiUrl, 'after 1,000 idle connections');
      await assertMostlyIdle(backend.pid, '1,000 idle connections');
      assert.match(backend.stderr(), /at most 192 connections/, 'the default cap is the descriptor limit minus 64');
    } finally {
      destroyAll(sockets);
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });

  test('a soft descriptor limit of 1024 holds 60 sandboxes (about 20 descriptors each): raised to the hard one, and commands keep 1024', { timeout: 120_000 }, async (t) => {
    const hard = Math.min(8192, Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim()) || 0);
    if (hard < 2048) { t.skip(`this process's hard descriptor limit is ${hard}`); return; }
    const backend = await startBackend({ nofile: `1024:${hard}`, extraArgs: ['--warm-pool', '0'] });
    try {
      const limits = readFileSync(`/proc/${backend.pid}/limits`, 'utf8');
      assert.match(limits, new RegExp(`Max open files\\s+${hard}\\s+${hard}`), limits);
      let last;
      for (let i = 0; i < 60; i++) {
        const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, {
          method: 'POST', headers: { 'X-API-Key': backend.apiKey }, body: JSON.stringify({ templateID: 'base' }) });
        assert.equal(res.status, 201, `sandbox ${i + 1}: ${await res.clone().text()}`);
        last = await res.json();
      }
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: last.sandboxID, token: last.envdAccessToken });
      const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', 'ulimit -Sn; ulimit -Hn'] } });
      assert.equal(dataOf(r.messages).stdout.toString(), `1024\n${hard}\n`, 'a command gets the limit the backend was started with');
    } finally {
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });

  test('a flood at the descriptor limit (EMFILE): no spinning, one log line, /health still answers', async () => {
    // A cap above the descriptor limit, so that accept() itself fails.
    const backend = await startBackend({ nofile: 128, extraArgs: ['--max-connections', '100000'] });
    let sockets = [];
    try {
      sockets = await openIdle(backend.apiUrl, 600);
      await assertHealthResponsive(backend.apiUrl, 'at the descriptor limit');
      await assertMostlyIdle(backend.pid, 'at the descriptor limit');
      const lines = backend.stderr().split('\n').filter((l) => /accept/i.test(l));
      assert.ok(lines.length >= 1 && lines.length <= 3, `accept errors logged ${lines.length} times:\n${lines.slice(0, 5).join('\n')}`);
      assert.ok(backend.stderr().length < 100_000, 'stderr stays small');
    } finally {
      destroyAll(sockets);
      assert.equal((await backend.stop()).code, 0);
    }
  });

  test('at the connection cap, idle connections make room and a stream in progress is never closed', async () => {
    const backend = await startBackend({ extraArgs: ['--max-connections', '8'] });
    let sockets = [];
    try {
      const created = await (await fetch(`${backend.apiUrl}/v2/sandboxes`, {
        method: 'POST', headers: { 'X-API-Key': backend.apiKey }, body: JSON.stringify({ templateID: 'base' }) })).json();
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: created.sandboxID, token: created.envdAccessToken });
      const s = await envd.open('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', 'read line; echo "got $line"'] } });
      const start = await s.next();
      const pid = start.message.event.start.pid;
      sockets = await openIdle(backend.sandboxUrl, 50);
      assert.equal((await health(backend.apiUrl)).status, 204);
      await until(() => sockets.filter((x) => x.destroyed).length >= 40, 'idle connections closed to make room');
      const input = await envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: Buffer.from('hi\n').toString('base64') } });
      assert.equal(input.status, 200, input.text);
      const frames = [];
      for (let f = await s.next(); f && !f.end; f = await s.next()) frames.push(f.message);
      assert.equal(dataOf(frames).stdout.toString(), 'got hi\n', 'the stream survived');
      assert.deepEqual(frames.at(-1), { event: { end: { exited: true, status: 'exit status 0' } } });
    } finally {
      destroyAll(sockets);
      assert.equal((await backend.stop()).code, 0, backend.stderr());
    }
  });

  test('500 slow-loris connections (one byte a second) are closed once the request deadline passes; streams are not', async () => {
    const backend = await startBackend({ extraArgs: ['--request-timeout', '2'] });
    const { hostname, port } = new URL(backend.apiUrl);
    const sockets = [];
    let closed = 0;
    const drip = setInterval(() => { for (const s of sockets) if (!s.destroyed) s.write('a'); }, 1000);
    try {
      // A stream outlives the deadline: it has a request in progress.
      const created = await (await fetch(`${backend.apiUrl}/v2/sandboxes`, {
        method: 'POST', headers: { 'X-API-Key': backend.apiKey }, body: JSON.stringify({ templateID: 'base' }) })).json();
      const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: created.sandboxID, token: created.envdAccessToken });
      const stream = envd.stream('process.Process/Start', { process: { cmd: 'sleep', args: ['3.5'] } });

      for (let i = 0; i < 500; i++) {
        const s = net.connect(Number(port), hostname, () => s.write('GET /health HTTP/1.1\r\nX-Slow: '));
        s.on('error', () => {});
        s.on('close', () => { closed++; });
        sockets.push(s);
      }
      await until(() => closed === 500, `every slow-loris connection closed (${closed} so far)`, 20000, 100);
      assert.equal((await health(backend.apiUrl)).status, 204);
      const r = await stream;
      assert.equal(r.status, 200);
      assert.deepEqual(r.end, {}, 'the stream ended normally');
      assert.deepEqual(r.messages.at(-1), { event: { end: { exited: true, status: 'exit status 0' } } });
    } finally {
      clearInterval(drip);
      destroyAll(sockets);
      assert.equal((await backend.stop()).code, 0);
    }
  });
});

describe('limits', () => {
  let backend;
  before(async () => { backend = await startBackend({ extraArgs: ['--max-sandboxes', '5'] }); });
  after(async () => { assert.equal((await backend.stop()).code, 0, backend.stderr()); });

  const create = async (body) => {
    const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, {
      method: 'POST', headers: { 'X-API-Key': backend.apiKey }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, json: await res.json() };
  };
  const kill = (id) => fetch(`${backend.apiUrl}/sandboxes/${id}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } });

  test('300 creates with 1 MB of metadata are refused early and the backend stays small', async () => {
    const pad = 'x'.repeat(1_000_000);
    for (let i = 0; i < 300; i++) {
      const r = await create({ templateID: 'base', metadata: { pad } });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.match(r.json.message, /metadata.*1024 bytes/);
    }
    assert.ok(rssKiB(backend.pid) < 64 * 1024, `RSS ${rssKiB(backend.pid)} KiB`);
  });

  test('metadata and envVars limits: at the limit accepted, one over refused with a 400 naming the limit', async () => {
    const keys = (n, value = 'v') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
    // Exactly 16 KiB of keys and values in total, then one byte more.
    const full = keys(15, 'v'.repeat(1024));
    const used = Object.entries(full).reduce((n, [k, v]) => n + k.length + v.length, 0);
    const atLimit = { ...full, last: 'x'.repeat(16384 - used - 4) };
    const ok = await create({ templateID: 'base', metadata: atLimit, envVars: keys(256, 'v') });
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
    await kill(ok.json.sandboxID);
    const over = await create({ templateID: 'base', metadata: { ...atLimit, last: atLimit.last + 'x' } });
    assert.equal(over.status, 400);
    assert.match(over.json.message, /metadata" may total at most 16384 bytes/);
    for (const [body, re] of [
      [{ metadata: keys(65) }, /metadata" may have at most 64 keys/],
      [{ metadata: { k: 'v'.repeat(1025) } }, /metadata": values may be at most 1024 bytes/],
      [{ metadata: { ['k'.repeat(257)]: 'v' } }, /metadata": keys must be 1 to 256 bytes/],
      [{ metadata: { '': 'v' } }, /metadata": keys must be 1 to 256 bytes/],
      [{ metadata: keys(17, 'v'.repeat(1000)) }, /metadata" may total at most 16384 bytes/],
      [{ envVars: keys(257) }, /envVars" may have at most 256 keys/],
      [{ envVars: { A: 'v'.repeat(16385) } }, /envVars": values may be at most 16384 bytes/],
      [{ envVars: keys(5, 'v'.repeat(16000)) }, /envVars" may total at most 65536 bytes/],
      [{ templateID: 't'.repeat(257) }, /templateID" may be at most 256 bytes/],
    ]) {
      const r = await create({ templateID: 'base', ...body });
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(r.json.code, 400);
      assert.match(r.json.message, re);
    }
  });

  test('--max-sandboxes: one over is a 429 in E2B\'s words; a kill makes room again', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) {
      const r = await create({ templateID: 'base' });
      assert.equal(r.status, 201);
      ids.push(r.json.sandboxID);
    }
    const over = await create({ templateID: 'base' });
    assert.equal(over.status, 429);
    assert.deepEqual(over.json, { code: 429, message: "You have reached the maximum number of concurrent E2B sandboxes (5). If you need more, please contact us at 'https://e2b.dev/docs/getting-help'" });
    const v1 = await fetch(`${backend.apiUrl}/sandboxes`, { headers: { 'X-API-Key': backend.apiKey } });
    assert.equal((await v1.json()).length, 5, 'v1 list: bounded by --max-sandboxes');
    await kill(ids.pop());
    const again = await create({ templateID: 'base' });
    assert.equal(again.status, 201);
    for (const id of [...ids, again.json.sandboxID]) await kill(id);
  });
});

describe('HTTP and JSON correctness', () => {
  let backend;
  before(async () => { backend = await startBackend(); });
  after(async () => { assert.equal((await backend.stop()).code, 0, backend.stderr()); });

  // Sends raw bytes on one connection and collects everything until it closes.
  function raw(url, bytes) {
    return new Promise((resolve) => {
      const { hostname, port } = new URL(url);
      const s = net.connect(Number(port), hostname, () => s.write(bytes));
      const chunks = [];
      s.on('data', (d) => chunks.push(d));
      s.on('error', () => {});
      s.on('close', () => resolve(Buffer.concat(chunks)));
    });
  }

  test('HEAD answers carry GET\'s Content-Length and no body, so the next answer on the connection parses', async () => {
    for (const [url, extra] of [[backend.apiUrl, `X-API-Key: ${backend.apiKey}\r\n`], [backend.sandboxUrl, '']]) {
      const reply = (await raw(url, `HEAD /sandboxes HTTP/1.1\r\nHost: x\r\n${extra}\r\n` +
        `HEAD /no-such-path HTTP/1.1\r\nHost: x\r\n\r\n` +
        'GET /health HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: none\r\nConnection: close\r\n\r\n')).toString('latin1');
      const heads = reply.split(/(?=HTTP\/1\.1 )/);
      assert.equal(heads.length, 3, reply);
      for (const head of heads.slice(0, 2)) {
        assert.ok(head.endsWith('\r\n\r\n'), `a HEAD answer carried a body: ${JSON.stringify(head)}`);
        assert.match(head, /Content-Length: \d+\r\n/);
      }
      assert.match(heads[2], /^HTTP\/1\.1 (200|204|502|400)/);
    }
    // And through a real HTTP client on one kept-alive socket.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ask = (method, path) => new Promise((resolve, reject) => {
      const req = http.request(`${backend.apiUrl}${path}`, { method, agent, headers: { 'X-API-Key': backend.apiKey } }, (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end();
    });
    const get = await ask('GET', '/v2/sandboxes');
    const head = await ask('HEAD', '/v2/sandboxes');
    const after = await ask('GET', '/v2/sandboxes');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)));
    assert.equal(after.status, 200);
    assert.deepEqual(JSON.parse(after.body), JSON.parse(get.body));
    agent.destroy();
  });

  const post = async (path, body) => {
    const res = await fetch(`${backend.apiUrl}${path}`, { method: 'POST', headers: { 'X-API-Key': backend.apiKey }, body });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const strictUtf8 = (bytes) => new TextDecoder('utf-8', { fatal: true }).decode(bytes);

  test('a string holding NUL is refused with 400 (control plane) and invalid_argument (envd), never cut short', async () => {
    for (const body of ['{"templateID":"ba\\u0000se"}', '{"templateID":"base","metadata":{"k\\u0000x":"v"}}',
      '{"templateID":"base","metadata":{"k":"v\\u0000"}}', '{"templateID":"base","envVars":{"A":"\\u0000"}}']) {
      const r = await post('/v2/sandboxes', body);
      assert.equal(r.status, 400, body);
      assert.match(JSON.parse(r.bytes).message, /NUL/);
    }
    // An escaped backslash followed by "u0000" is just text.
    const literal = await post('/v2/sandboxes', '{"templateID":"base","metadata":{"k":"a\\\\u0000b"}}');
    assert.equal(literal.status, 201);
    const id = JSON.parse(literal.bytes).sandboxID;
    const detail = await (await fetch(`${backend.apiUrl}/sandboxes/${id}`, { headers: { 'X-API-Key': backend.apiKey } })).json();
    assert.equal(detail.metadata.k, 'a\\u0000b');

    const token = JSON.parse(literal.bytes).envdAccessToken;
    const res = await fetch(`${backend.sandboxUrl}/process.Process/List`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': id, 'X-Access-Token': token },
      body: '{"process":{"tag":"a\\u0000b"}}' });
    assert.equal(res.status, 400);
    const json = await res.json();
    assert.equal(json.code, 'invalid_argument');
    assert.match(json.message, /NUL/);
  });

  test('invalid UTF-8 is never echoed raw: U+FFFD on the control plane (as Go), invalid_argument on envd (as protojson)', async () => {
    const body = Buffer.concat([Buffer.from('{"templateID":"base","metadata":{"k":"a'), Buffer.from([0xff, 0xc3]),
      Buffer.from('b","ok":"\u00e9\u4e2d"}}')]);
    const created = await post('/v2/sandboxes', body);
    assert.equal(created.status, 201, created.bytes.toString());
    const id = JSON.parse(created.bytes).sandboxID;
    const res = await fetch(`${backend.apiUrl}/sandboxes/${id}`, { headers: { 'X-API-Key': backend.apiKey } });
    const text = strictUtf8(Buffer.from(await res.arrayBuffer()));
    const detail = JSON.parse(text);
    assert.equal(detail.metadata.k, 'a\ufffd\ufffdb');
    assert.equal(detail.metadata.ok, '\u00e9\u4e2d', 'valid UTF-8 is kept');

    // A path with raw bytes that are not UTF-8: the JSON answer stays UTF-8.
    for (const url of [backend.apiUrl, backend.sandboxUrl]) {
      const reply = await raw(url, Buffer.concat([Buffer.from('GET /sandboxes/\xff\xfe HTTP/1.1\r\nHost: x\r\n', 'latin1'),
        Buffer.from(`X-API-Key: ${backend.apiKey}\r\nE2b-Sandbox-Id: \xff\r\nConnection: close\r\n\r\n`, 'latin1')]));
      const bodyStart = reply.indexOf('\r\n\r\n') + 4;
      assert.ok(bodyStart > 4, reply.toString('latin1'));
      strictUtf8(reply.subarray(bodyStart));
    }

    const token = JSON.parse(created.bytes).envdAccessToken;
    const envdRes = await fetch(`${backend.sandboxUrl}/process.Process/List`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': id, 'X-Access-Token': token },
      body: Buffer.concat([Buffer.from('{"process":{"tag":"'), Buffer.from([0xff]), Buffer.from('"}}')]) });
    assert.equal(envdRes.status, 400);
    assert.equal((await envdRes.json()).code, 'invalid_argument');
  });
});
