// A sandbox's logs and refreshes, E2B's routes the SDK does not call
// (docs/backend/running.md, "What it serves"): GET /sandboxes/{id}/logs and
// /v2/sandboxes/{id}/logs with envd's process lines and a template's start
// command's output, and POST /sandboxes/{id}/refreshes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBackend, api } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Template, waitForTimeout } = await import('e2b');

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('sandbox logs and refreshes', () => {
  let backend;
  let opts;
  const logs = async (id, query = '', v = 'v2/') => api(backend, 'GET', `/${v}sandboxes/${id}/logs${query}`);

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('envd\'s lines of each process started and ended, in E2B\'s shapes, v1 oldest first and v2 newest first', async () => {
    const sbx = await Sandbox.create('base', opts);
    try {
      const before = Date.now();
      const r = await sbx.commands.run('echo logged; exit 3').catch((e) => e);
      assert.equal(r.exitCode, 3);
      await sbx.commands.run('true');
      const v1 = await logs(sbx.sandboxId, '', '');
      assert.equal(v1.status, 200);
      assert.equal(v1.json.logs.length, v1.json.logEntries.length);
      const messages = v1.json.logEntries.map((e) => e.message);
      const pids = [...messages.join('\n').matchAll(/^Process with pid (\d+) started$/gm)].map((m) => m[1]);
      assert.equal(pids.length, 2, messages.join('\n'));
      assert.deepEqual(messages, pids.flatMap((pid) => [`Process with pid ${pid} started`, `Process with pid ${pid} ended`]), 'oldest first');
      const [start, end] = v1.json.logEntries;
      assert.equal(start.level, 'info');
      assert.match(start.timestamp, RFC3339_MS);
      assert.ok(Date.parse(start.timestamp) >= before - 1000);
      assert.deepEqual(start.fields, { service: 'envd', event_type: 'process_start', pid: pids[0], sandboxID: sbx.sandboxId, command: '/bin/bash -l -c echo logged; exit 3' });
      assert.deepEqual({ ...end.fields }, { service: 'envd', event_type: 'process_end', pid: pids[0], sandboxID: sbx.sandboxId, exit_code: '3', status: 'exit status 3' });
      // `logs` carries each entry as the raw line the logger wrote
      const line = JSON.parse(v1.json.logs[0].line);
      assert.equal(v1.json.logs[0].timestamp, start.timestamp);
      assert.deepEqual([line.message, line.level, line.event_type, line.pid], [start.message, 'info', 'process_start', pids[0]]);

      // v1: from `start` (Unix ms), at most `limit`
      assert.deepEqual((await logs(sbx.sandboxId, '?limit=1', '')).json.logEntries.map((e) => e.message), [messages[0]]);
      assert.deepEqual((await logs(sbx.sandboxId, `?start=${Date.now() + 60000}`, '')).json, { logs: [], logEntries: [] });

      // v2: newest first by default, forward oldest first; limit, level, search, cursor
      const v2 = await logs(sbx.sandboxId);
      assert.equal(v2.status, 200);
      assert.deepEqual(Object.keys(v2.json), ['logs']);
      assert.deepEqual(v2.json.logs.map((e) => e.message), [...messages].reverse());
      assert.deepEqual((await logs(sbx.sandboxId, '?direction=forward')).json.logs.map((e) => e.message), messages);
      assert.deepEqual((await logs(sbx.sandboxId, '?limit=1')).json.logs.map((e) => e.message), [messages.at(-1)]);
      assert.deepEqual((await logs(sbx.sandboxId, '?direction=forward&limit=1')).json.logs.map((e) => e.message), [messages[0]]);
      assert.deepEqual((await logs(sbx.sandboxId, '?level=warn')).json.logs, []);
      assert.deepEqual((await logs(sbx.sandboxId, '?search=ended&direction=forward')).json.logs.map((e) => e.message), messages.filter((m) => m.endsWith('ended')));
      const firstEnd = Date.parse(v1.json.logEntries[1].timestamp);
      const upTo = (await logs(sbx.sandboxId, `?cursor=${firstEnd}`)).json.logs;
      assert.ok(upTo.every((e) => Date.parse(e.timestamp) <= firstEnd) && upTo.some((e) => e.message === messages[1]));
      assert.ok((await logs(sbx.sandboxId, `?cursor=${firstEnd + 1}&direction=forward`)).json.logs.every((e) => Date.parse(e.timestamp) > firstEnd));
      for (const bad of ['?limit=1001', '?limit=-1', '?direction=sideways', '?level=loud', `?search=${'x'.repeat(257)}`, '?cursor=soon'])
        assert.equal((await logs(sbx.sandboxId, bad)).status, 400, bad);
      assert.equal((await logs(sbx.sandboxId, '?start=yesterday', '')).status, 400);

      // a paused sandbox keeps its log
      await sbx.pause();
      assert.deepEqual((await logs(sbx.sandboxId, '?direction=forward')).json.logs.map((e) => e.message), messages);
    } finally {
      await sbx.kill();
    }
    for (const v of ['', 'v2/']) {
      const gone = await logs(sbx.sandboxId, '', v);
      assert.equal(gone.status, 404);
      assert.equal(gone.json.message, `Sandbox "${sbx.sandboxId}" doesn't exist or you don't have access to it`);
    }
  });

  test('a template\'s start command\'s output, a line each (stderr as warn), the newest kept within 64 KiB', async () => {
    const name = `tpl-logs-${process.pid}`;
    await Template.build(Template().fromTemplate('base')
      .setStartCmd('echo hello-from-start; echo warned-from-start >&2; seq 1 20000; exec sleep 1000', waitForTimeout(100)), name, opts);
    const sbx = await Sandbox.create(name, opts);
    try {
      const entries = await until(async () => {
        const { json } = await logs(sbx.sandboxId, '?direction=forward');
        return json.logs.some((e) => e.message === '20000') && json.logs;
      }, 'the start command\'s last line in the log');
      const output = entries.filter((e) => e.fields.event_type === 'process_output');
      assert.equal(output.at(-1).message, '20000');
      assert.equal(output.at(-1).level, 'info');
      assert.equal(output.at(-1).fields.stream, 'stdout');
      // 20,002 lines do not fit: the oldest went, the newest are all there
      assert.ok(!entries.some((e) => e.message === 'hello-from-start'), 'the oldest lines were dropped');
      const numbers = output.map((e) => Number(e.message));
      assert.deepEqual(numbers, numbers.map((_, i) => 20000 - numbers.length + 1 + i), 'the newest lines, in order, none missing');
      const bytes = entries.reduce((n, e) => n + e.message.length + JSON.stringify(e.fields).length, 0);
      assert.ok(bytes <= 64 * 1024, `${bytes} bytes of messages and fields`);
      // and a start line for the start command, as for any process
      const warned = await logs(sbx.sandboxId, '?level=warn');
      assert.deepEqual(warned.json.logs, [], 'the stderr line was among the dropped ones');
    } finally {
      await sbx.kill();
    }
    // A shorter one keeps both streams and its start line
    const quiet = `${name}-quiet`;
    await Template.build(Template().fromTemplate('base')
      .setStartCmd('echo hello-from-start; echo warned-from-start >&2; exec sleep 1000', waitForTimeout(100)), quiet, opts);
    const q = await Sandbox.create(quiet, opts);
    try {
      const entries = await until(async () => {
        const { json } = await logs(q.sandboxId, '?direction=forward');
        return json.logs.filter((e) => e.fields.event_type === 'process_output').length === 2 && json.logs;
      }, 'both lines of the start command');
      assert.match(entries[0].message, /^Process with pid \d+ started$/);
      assert.equal(entries[0].fields.command, '/bin/bash -l -c echo hello-from-start; echo warned-from-start >&2; exec sleep 1000');
      const out = entries.filter((e) => e.fields.event_type === 'process_output').map((e) => [e.level, e.fields.stream, e.message]).sort();
      assert.deepEqual(out, [['info', 'stdout', 'hello-from-start'], ['warn', 'stderr', 'warned-from-start']]);
      assert.deepEqual((await logs(q.sandboxId, '?level=warn')).json.logs.map((e) => e.message), ['warned-from-start']);
    } finally {
      await q.kill();
    }
  });

  test('POST /sandboxes/{id}/refreshes keeps a running sandbox alive for duration (15 s at least), never shortening it', async () => {
    const sbx = await Sandbox.create('base', { ...opts, timeoutMs: 5_000 });
    const endAt = async () => Date.parse((await api(backend, 'GET', `/sandboxes/${sbx.sandboxId}`)).json.endAt);
    const refresh = (body) => api(backend, 'POST', `/sandboxes/${sbx.sandboxId}/refreshes`, body);
    try {
      let t0 = Date.now();
      assert.equal((await refresh()).status, 204, 'no body: the default');
      let end = await endAt();
      assert.ok(end >= t0 + 15_000 && end <= Date.now() + 15_000, `15 s: ${new Date(end).toISOString()}`);
      t0 = Date.now();
      assert.equal((await refresh({ duration: 600 })).status, 204);
      end = await endAt();
      assert.ok(end >= t0 + 600_000 && end <= Date.now() + 600_000);
      assert.equal((await refresh({ duration: 20 })).status, 204);
      assert.equal(await endAt(), end, 'a shorter refresh leaves endAt alone');
      assert.equal((await refresh({ duration: 0 })).status, 204);
      assert.equal(await endAt(), end);
      for (const bad of [{ duration: 3601 }, { duration: -1 }, { duration: 'soon' }, { duration: 1.5 }])
        assert.equal((await refresh(bad)).status, 400, JSON.stringify(bad));
      await sbx.pause();
      const paused = await refresh({ duration: 60 });
      assert.deepEqual([paused.status, paused.json.message], [409, `Sandbox "${sbx.sandboxId}" is in paused state`]);
    } finally {
      await sbx.kill();
    }
    const gone = await api(backend, 'POST', `/sandboxes/${sbx.sandboxId}/refreshes`, {});
    assert.equal(gone.status, 404);
  });
});
