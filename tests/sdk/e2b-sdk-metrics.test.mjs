// The official e2b JS SDK (2.51) reading sandbox metrics from the local
// backend: sandbox.getMetrics(), getMetrics({ start, end }),
// Sandbox.getMetrics(id), and GET /sandboxes/metrics (no SDK call: raw HTTP).
// The samples come from each sandbox's cgroups and disk image
// (docs/backend/cgroups-and-limits.md, "Metrics"), taken every second here
// (--metrics-interval 1); every wait polls with a deadline.
//
// Needs full isolation (cgroups and disk images); skipped otherwise.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBackend } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, SandboxNotFoundError } = await import('e2b');

const T = { timeout: 90_000 };
const MiB = 1024 * 1024;

const backend = await startBackend({ extraArgs: ['--metrics-interval', '1'] });
const skip = backend.isolation === 'full' ? false
  : `needs cgroups and disk images (full isolation); the backend runs with isolation "${backend.isolation}"`;
if (skip) await backend.stop();

describe('official e2b SDK metrics', { skip }, () => {
  let opts, idle, busy;
  const latest = async (sb) => (await sb.getMetrics()).at(-1);
  const metricsOf = (query) => fetch(`${backend.apiUrl}/sandboxes/metrics?${query}`, { headers: { 'X-API-Key': backend.apiKey } });

  before(async () => {
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 15000 };
    [idle, busy] = await Promise.all([Sandbox.create('base', opts), Sandbox.create('base', opts)]);
  });

  after(async () => {
    await Promise.all([idle, busy].map((sb) => sb && sb.kill()));
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('samples have E2B\'s shape: the sandbox\'s CPUs, memory limit and disk size', T, async () => {
    const [m] = await until(async () => { const all = await idle.getMetrics(); return all.length ? all : null; }, 'a first sample');
    assert.ok(m.timestamp instanceof Date && Math.abs(m.timestamp.getTime() - Date.now()) < 60_000, String(m.timestamp));
    assert.equal(m.cpuCount, 2);
    assert.equal(m.memTotal, 512 * MiB);
    assert.ok(m.cpuUsedPct >= 0 && m.cpuUsedPct <= 100, String(m.cpuUsedPct));
    assert.ok(m.memUsed > 0 && m.memUsed < m.memTotal, String(m.memUsed));
    assert.ok(m.memCache >= 0);
    // the 1024 MiB disk image, less what ext4 keeps for itself
    assert.ok(m.diskTotal > 900 * MiB && m.diskTotal <= 1024 * MiB, String(m.diskTotal));
    assert.ok(m.diskUsed > 0 && m.diskUsed < m.diskTotal, String(m.diskUsed));
    // the wire carries timestampUnix too (the SDK keeps only the Date)
    const raw = await (await fetch(`${backend.apiUrl}/sandboxes/${idle.sandboxId}/metrics`, { headers: { 'X-API-Key': backend.apiKey } })).json();
    assert.equal(raw[0].timestampUnix, Math.floor(Date.parse(raw[0].timestamp) / 1000));
  });

  test('a sandbox burning CPU shows it; an idle one does not', T, async () => {
    const burner = await busy.commands.run('timeout 120 yes > /dev/null', { background: true });
    try {
      const seen = await until(async () => {
        const [b, i] = [await latest(busy), await latest(idle)];
        return b && i && b.cpuUsedPct >= 10 && i.cpuUsedPct <= b.cpuUsedPct / 2 ? { b, i } : null;
      }, 'the busy sandbox\'s cpuUsedPct clearly above the idle one\'s', 60_000, 250);
      assert.ok(seen.b.cpuUsedPct <= 100);
    } finally {
      await burner.kill();
    }
  });

  test('memory rises while a process holds 100 MiB', T, async () => {
    const base = await until(() => latest(busy), 'a sample');
    const holder = await busy.commands.run(
      'python3 -c "import time; b = bytes(range(256)) * (100 * 4096); print(len(b), flush=True); time.sleep(120)"',
      { background: true });
    try {
      await until(async () => (await latest(busy)).memUsed >= base.memUsed + 90 * MiB,
        `memUsed above ${base.memUsed} + 90 MiB`, 60_000, 250);
    } finally {
      await holder.kill();
    }
  });

  test('diskUsed rises after writing 50 MiB', T, async () => {
    const base = await until(() => latest(busy), 'a sample');
    await busy.commands.run('head -c 52428800 /dev/urandom > /home/user/fifty.bin && sync');
    await until(async () => (await latest(busy)).diskUsed >= base.diskUsed + 48 * MiB,
      `diskUsed above ${base.diskUsed} + 48 MiB`, 60_000, 250);
  });

  test('getMetrics({ start, end }) gives the samples of that range; Sandbox.getMetrics(id) the same series', T, async () => {
    const all = await until(async () => { const a = await idle.getMetrics(); return a.length >= 3 ? a : null; }, 'three samples');
    const mid = all[1].timestamp;
    const second = new Date(Math.floor(mid.getTime() / 1000) * 1000);
    const one = await idle.getMetrics({ start: second, end: second });
    assert.ok(one.length >= 1, 'the sample of that second');
    for (const m of one) assert.equal(Math.floor(m.timestamp.getTime() / 1000), second.getTime() / 1000);
    const later = await idle.getMetrics({ start: new Date(Date.now() + 3_600_000) });
    assert.deepEqual(later, []);
    const upTo = await Sandbox.getMetrics(idle.sandboxId, { ...opts, end: second });
    assert.ok(upTo.length >= 1 && upTo.every((m) => m.timestamp.getTime() < second.getTime() + 1000));
    assert.deepEqual(upTo.map((m) => m.timestamp.getTime()), all.filter((m) => m.timestamp.getTime() < second.getTime() + 1000).map((m) => m.timestamp.getTime()));
    // Unix seconds as digits only (strtoll alone would take " 5" and "+5")
    for (const start of ['yesterday', '%205', '%2B5', '-5', '']) {
      const bad = await fetch(`${backend.apiUrl}/sandboxes/${idle.sandboxId}/metrics?start=${start}`, { headers: { 'X-API-Key': backend.apiKey } });
      assert.equal(bad.status, 400, start);
    }
  });

  test('GET /sandboxes/metrics: the latest sample of each listed running sandbox', T, async () => {
    const res = await metricsOf(`sandbox_ids=${idle.sandboxId},${busy.sandboxId},nosuchsandbox`);
    assert.equal(res.status, 200);
    const { sandboxes } = await res.json();
    assert.deepEqual(Object.keys(sandboxes).sort(), [idle.sandboxId, busy.sandboxId].sort());
    const last = (await fetch(`${backend.apiUrl}/sandboxes/${idle.sandboxId}/metrics`, { headers: { 'X-API-Key': backend.apiKey } }).then((r) => r.json()));
    assert.ok(sandboxes[idle.sandboxId].timestampUnix <= last.at(-1).timestampUnix);
    assert.equal(sandboxes[idle.sandboxId].memTotal, 512 * MiB);
    // repeated as a generic OpenAPI client sends an array
    const repeated = await (await metricsOf(`sandbox_ids=${idle.sandboxId}&sandbox_ids=${busy.sandboxId}`)).json();
    assert.equal(Object.keys(repeated.sandboxes).length, 2);
    assert.equal((await metricsOf('')).status, 400);
    assert.equal((await metricsOf(`sandbox_ids=${Array.from({ length: 101 }, (_, i) => `s${i}`).join(',')}`)).status, 400);
    assert.equal((await fetch(`${backend.apiUrl}/sandboxes/metrics?sandbox_ids=${idle.sandboxId}`)).status, 401);
  });

  test('a paused sandbox keeps its history and gets no new samples; a killed one is not found', T, async () => {
    const sb = await Sandbox.create('base', opts);
    await until(async () => (await sb.getMetrics()).length >= 1, 'a sample');
    await sb.pause();
    const kept = (await Sandbox.getMetrics(sb.sandboxId, opts)).length;
    assert.ok(kept >= 1);
    // two more samples of a running sandbox prove the timer ticked meanwhile
    const idleCount = (await idle.getMetrics()).length;
    await until(async () => (await idle.getMetrics()).length >= idleCount + 2, 'two more ticks');
    assert.equal((await Sandbox.getMetrics(sb.sandboxId, opts)).length, kept);
    const { sandboxes } = await (await metricsOf(`sandbox_ids=${sb.sandboxId}`)).json();
    assert.deepEqual(sandboxes, {}, 'only running sandboxes are listed');
    await Sandbox.kill(sb.sandboxId, opts);
    await assert.rejects(Sandbox.getMetrics(sb.sandboxId, opts), SandboxNotFoundError);
    await assert.rejects(Sandbox.getMetrics('nosuchsandbox', opts), SandboxNotFoundError);
  });
});
