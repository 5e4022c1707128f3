// The sandbox runtime's C interface (backend/runtime/runtime.h), which the
// files API and the port proxy build on, checked against two real sandboxes
// by a small C program (tests/backend/runtime_api_check.c): sockets in each
// sandbox's network namespace (both listen on port 8000), accounts from each
// sandbox's own /etc/passwd and /etc/group, its root directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { backendBinary } from '../../host/backend.mjs';

test('sandbox_socket, sandbox_user_*, sandbox_group_*, sandbox_rootfs on real sandboxes', { timeout: 60_000 }, (t) => {
  if (process.getuid() !== 0) { t.skip('needs root (isolation full)'); return; }
  const bin = path.join(path.dirname(backendBinary()), 'runtime-api-check');
  const templates = path.join(path.dirname(path.dirname(backendBinary())), 'templates');
  const r = spawnSync(bin, [templates], { encoding: 'utf8', timeout: 50_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.equal(r.stdout, 'ok\n');
});
