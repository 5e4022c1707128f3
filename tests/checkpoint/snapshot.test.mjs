// createSnapshot of a running sandbox with its processes (docs/backend/state.md,
// "Snapshots and fork"): where CRIU works (the guest), the snapshot keeps its
// sandbox's processes and memory, and each sandbox created from it starts
// with them: the shell's token and counter (held in memory only) and the
// Python server's token answer the same and count on, in its own pid and
// network namespaces with its own address, while the source runs on. Also
// after a restart of the backend (--state-dir); deleting the snapshot
// removes its image. Skipped with the reason where `criu check` fails; there
// a snapshot holds the files only (tests/sdk/e2b-sdk-pause.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient } from '../../host/connect.mjs';
import { skip, forceRun, sleep, run, parse, READ, counting, check } from './checkpoint-lib.mjs';

const IDENTITY = "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1; readlink /proc/self/ns/pid /proc/self/ns/net";

// A sandbox of b created from snapshot, with its processes; its first
// reading is the source's.
async function fromSnapshot(b, snapshotID, src) {
  const r = await api(b, 'POST', '/v2/sandboxes', { templateID: snapshotID, timeout: 900 });
  assert.equal(r.status, 201, JSON.stringify(r.json) + b.stderr());
  assert.deepEqual(r.json.snapshot, { kind: 'checkpoint' }, `it starts with the snapshot's processes: ${JSON.stringify(r.json.snapshot)}`);
  const sb = { id: r.json.sandboxID, token: r.json.envdAccessToken, first: src.first };
  sb.envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: sb.id, token: sb.token });
  await check(b, sb, `a sandbox of the snapshot ${snapshotID}`);
  const n1 = parse(await run(b, sb, READ)).n;
  await sleep(1500);
  const n2 = parse(await run(b, sb, READ)).n;
  assert.ok(n2 > n1, `its counter counts on (${n1} then ${n2})`);
  return sb;
}

test('a snapshot of a running sandbox keeps its processes; sandboxes created from it start with them, also after a restart', { skip: forceRun ? false : skip, timeout: 600_000 }, async () => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-ckpt-'));
  const apiKey = 'e2b_checkpoint_test_key';
  let b = await startBackend({ stateDir, apiKey });
  try {
    const src = await counting(b);
    const r = await api(b, 'POST', `/sandboxes/${src.id}/snapshots`, { name: 'counting' });
    assert.equal(r.status, 201, JSON.stringify(r.json) + b.stderr());
    assert.equal(r.json.kind, 'checkpoint', JSON.stringify(r.json) + b.stderr());
    const snapshotID = r.json.snapshotID;
    const one = await fromSnapshot(b, snapshotID, src);
    const two = await fromSnapshot(b, snapshotID, src);
    await check(b, src, 'the source after the snapshot');
    const ids = await Promise.all([src, one, two].map(async (sb) => (await run(b, sb, IDENTITY)).trim()));
    assert.equal(new Set(ids.map((t) => t.split('\n')[0])).size, 3, `each has its own address: ${ids}`);
    assert.equal(new Set(ids).size, 3, 'and its own namespaces');

    await b.stop();
    b = await startBackend({ stateDir, apiKey });
    await fromSnapshot(b, snapshotID, src);

    const images = path.join(stateDir, 'snapshot-images');
    assert.ok(existsSync(images), 'the images are kept in the state directory');
    assert.equal((await api(b, 'DELETE', `/templates/${encodeURIComponent(snapshotID)}`)).status, 204);
    const left = readdirSync(images);
    assert.deepEqual(left, [], 'deleting the snapshot removes its image');
  } catch (e) {
    throw new Error(`${e.stack}\n--- backend:\n${b.stderr()}`);
  } finally {
    await b.stop().catch(() => {});
    rmSync(stateDir, { recursive: true, force: true });
  }
});
