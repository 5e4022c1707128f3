// filesystem.Filesystem/ListDir on a huge tree does not stall the event
// loop: the walk goes in slices (backend/envd/fs/fs_list.c), so another sandbox's
// process stream keeps delivering while 100,000 entries are listed. Also the
// 100,000-entry bound (resource_exhausted one entry above it). Real backend,
// full isolation.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient } from '../../host/connect.mjs';
import { until } from '../../host/wait.mjs';
import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const backend = await startBackend();
const skip = backend.isolation === 'full' ? false
  : `needs full sandbox isolation; the backend runs with isolation "${backend.isolation}"`;
if (skip) await backend.stop();

// 100 directories of 999 files: exactly 100,000 entries at depth 2.
const FILL = "python3 -c \"import os\nfor d in range(100):\n os.makedirs(f'/home/user/big/{d:03}')\n" +
  " for f in range(999): open(f'/home/user/big/{d:03}/{f:03}', 'w').close()\"";

async function newSandbox(on = backend) {
  const sb = (await api(on, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600 })).json;
  const envd = envdClient({ sandboxUrl: on.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken });
  return Object.assign(envd, { id: sb.sandboxID, token: sb.envdAccessToken });
}

async function sh(envd, script) {
  const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', script] } });
  const end = r.messages.find((m) => m.event.end)?.event.end;
  assert.ok(end?.exited && !end.exitCode, `command failed: ${script}: ${JSON.stringify(r.messages)}`);
}

// Runs a filesystem RPC of `envd`'s sandbox in curl (so handling its answer
// cannot stall this process's own loop) while `other` streams a 10 ms tick;
// resolves to curl's status and size, the RPC's duration and the largest gap
// between the tick stream's chunks.
async function whileTicking(other, envd, method, body) {
  const s = await other.open('process.Process/Start', { process: { cmd: '/bin/sh', args: ['-c', 'while :; do echo tick; sleep 0.01; done'] } });
  await s.next(); // start
  await s.next(); // first output
  let running = true;
  let gap = 0, last = Date.now(), chunks = 0;
  const reader = (async () => {
    while (running) {
      const f = await s.next();
      assert.ok(f && !f.end, 'the other stream keeps flowing');
      const now = Date.now();
      gap = Math.max(gap, now - last);
      last = now;
      chunks++;
    }
  })();
  const started = Date.now();
  const { stdout } = await promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download}',
    '-H', 'Content-Type: application/json', '-H', `E2b-Sandbox-Id: ${envd.id}`, '-H', `X-Access-Token: ${envd.token}`,
    '--data', JSON.stringify(body), `${backend.sandboxUrl}/filesystem.Filesystem/${method}`]);
  const took = Date.now() - started;
  running = false;
  await reader;
  s.cancel();
  const [status, size] = stdout.split(' ').map(Number);
  return { status, size, took, gap, chunks };
}

// Generous: a loop stalled by the whole walk shows a gap of about its
// duration; sliced, the stream's 10 ms ticks keep coming.
function assertFlowed({ gap, took, chunks }) {
  assert.ok(chunks > 0 && gap < Math.max(500, took / 4),
    `largest gap between the other stream's chunks ${gap} ms while the RPC took ${took} ms`);
}

describe('ListDir and Remove of a huge tree', { skip }, () => {
  let big, other;
  before(async () => {
    big = await newSandbox();
    other = await newSandbox();
    await sh(big, FILL);
  });
  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('100,000 entries are listed while another sandbox\'s stream keeps flowing', { timeout: 300_000 }, async () => {
    const run = await whileTicking(other, big, 'ListDir', { path: '/home/user/big', depth: 2 });
    assert.equal(run.status, 200);
    assert.ok(run.size > 100_000 * 100, `${run.size} bytes`);
    assertFlowed(run);
    const r = await big.call('filesystem.Filesystem/ListDir', { path: '/home/user/big', depth: 2 });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.entries.length, 100_000);
    assert.equal(r.json.entries[0].path, '/home/user/big/000');
    assert.equal(r.json.entries[1].path, '/home/user/big/000/000');
    assert.equal(r.json.entries.at(-1).path, '/home/user/big/099/998');
  });

  test('one entry more than 100,000 is resource_exhausted', { timeout: 120_000 }, async () => {
    await sh(big, 'touch /home/user/big/one-more');
    const r = await big.call('filesystem.Filesystem/ListDir', { path: '/home/user/big', depth: 2 });
    assert.equal(r.status, 429, JSON.stringify(r.json));
    assert.equal(r.json.code, 'resource_exhausted');
    assert.match(r.json.message, /too many entries \(more than 100000\)/);
  });

  test('removing the 100,000 entries lets another sandbox\'s stream flow too', { timeout: 300_000 }, async () => {
    const run = await whileTicking(other, big, 'Remove', { path: '/home/user/big' });
    assert.equal(run.status, 200);
    assertFlowed(run);
    assert.equal((await big.call('filesystem.Filesystem/Stat', { path: '/home/user/big' })).status, 404);
  });
});

// A listing is a timer between its slices, which the loop's end does not
// run: the backend frees what is left of it when it stops (under ASan a
// leak would make the exit status non-zero).
describe('a listing in progress when the backend stops', { skip }, () => {
  test('SIGTERM while 30,000 entries are listed: the backend exits cleanly', { timeout: 300_000 }, async () => {
    const own = await startBackend();
    try {
      const envd = await newSandbox(own);
      await sh(envd, FILL.replace('range(100)', 'range(30)'));
      const cpuTicks = () => readFileSync(`/proc/${own.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).map(Number).reduce((a, b) => a + b);
      const before = cpuTicks();
      let answered = false;
      const listing = envd.call('filesystem.Filesystem/ListDir', { path: '/home/user/big', depth: 2 })
        .then(() => { answered = true; }, () => { answered = true; });
      // Stopped once the walk has taken some CPU time (or it has ended: then
      // this run checks only the exit).
      await until(() => answered || cpuTicks() >= before + 2, 'the backend starts the listing', 60_000, 5);
      const { code } = await own.stop();
      assert.equal(code, 0, own.stderr());
      await listing;
    } finally {
      await own.stop();
    }
  });
});
