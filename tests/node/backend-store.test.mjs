// The backend's store (backend/store/): the state directory's lock, and
// layers sealed from a sandbox's writable layer and stacked under new
// sandboxes, checked by a small C program against real sandboxes
// (tests/backend/layers_check.c: canonical ids, whiteouts, opaque
// directories, hard links, setuid, independence of two sandboxes of one
// stack, removal). The records' unit tests are in tests/backend/unit/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { backendBinary, backendEnv, startBackend } from '../../host/backend.mjs';

test('a second backend on the same --state-dir refuses to start (exit 1, one line); the lock goes with the first', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'e2b-store-lock-'));
  const second = () => spawnSync(backendBinary(), ['--listen', '127.0.0.1:0', '--state-dir', dir],
    { encoding: 'utf8', timeout: 20_000, env: backendEnv('k-lock') });
  try {
    const first = await startBackend({ stateDir: dir });
    const refused = second();
    assert.equal(refused.status, 1, refused.stderr);
    assert.equal(refused.stdout, '', 'no ready line');
    assert.deepEqual(refused.stderr.trimEnd().split('\n'),
      [`e2b-local-backend: state directory ${dir} is in use by another backend (pid ${first.pid})`]);
    assert.equal((await first.stop()).code, 0, first.stderr());
    // Released on a clean exit and when the holder is killed.
    const next = await startBackend({ stateDir: dir });
    await next.stop('SIGKILL');
    const after = await startBackend({ stateDir: dir });
    assert.equal((await after.stop()).code, 0, after.stderr());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('layers: seal a sandbox\'s writes with canonical ids, stack them under new sandboxes, remove them', { timeout: 120_000 }, (t) => {
  if (process.getuid() !== 0) { t.skip('needs root (isolation full)'); return; }
  const bin = path.join(path.dirname(backendBinary()), 'layers-check');
  const templates = path.join(path.dirname(path.dirname(backendBinary())), 'templates');
  const r = spawnSync(bin, [templates], { encoding: 'utf8', timeout: 110_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.equal(r.stdout, 'ok\n');
});
