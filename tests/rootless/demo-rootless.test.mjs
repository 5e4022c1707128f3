// The lifecycle demo (demo/lifecycle.mjs) run by a user other than root, as
// a new user runs `./build.sh demo`: its backend is then rootless, which
// enforces no cpu, memory, pids or disk limit, and the demo says so rather
// than showing the sizes asked for as if they applied. Ctrl-C says what was
// cleaned up. The user and its template come from tests/lib/rootless.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pidsOfUids, rootlessRoot, testUser } from '../lib/rootless.mjs';
import { until } from '../../host/wait.mjs';

const T = { timeout: 180_000 };
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const user = testUser('e2bw-rootless');

// The demo as the user: its own node, the repository read-only, the
// binaries and the template where that user can run them.
function runDemo(root) {
  const child = spawn('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--',
    process.execPath, path.join(repo, 'demo', 'lifecycle.mjs')], {
    cwd: '/tmp', stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: '/tmp', TMPDIR: '/tmp', E2BW_BUILD: root.dir },
  });
  let out = '';
  for (const s of [child.stdout, child.stderr]) { s.setEncoding('utf8'); s.on('data', (d) => { out += d; }); }
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, output: () => out };
}

test('rootless: the demo says no limit is enforced, and shows the sizes only as asked', T, async () => {
  const root = rootlessRoot(user);
  try {
    const demo = runDemo(root);
    const { code } = await demo.exited;
    const out = demo.output();
    assert.equal(code, 0, out);
    assert.match(out, /isolation rootless \(no cpu, memory, pids or disk limits\)/);
    const sizes = [...out.matchAll(/cpu \/ memory \/ disk +(.*)$/gm)].map((m) => m[1]);
    assert.ok(sizes.length >= 2, out);
    for (const s of sizes) assert.equal(s, 'none enforced by this backend (asked: 2 vCPU / 512 MiB / 1024 MiB)');
    assert.doesNotMatch(out, /\(enforced\)/);
  } finally {
    root.cleanup();
  }
});

test('rootless: Ctrl-C says what was cleaned up, and nothing of the user\'s is left', T, async () => {
  const root = rootlessRoot(user);
  try {
    const demo = runDemo(root);
    await until(() => /created e2b-wasm:\w+/.test(demo.output()), () => `a sandbox created:\n${demo.output()}`, 60000);
    // setpriv execs node: the child's pid is the demo's
    demo.child.kill('SIGINT');
    const { code } = await demo.exited;
    const out = demo.output();
    assert.equal(code, 130, out);
    const said = out.match(/\ninterrupted: stopped the local backend \(exit 0\), which removed sandbox e2b-wasm:\w+ and its state directory (\S+): nothing of the demo is left\n$/);
    assert.ok(said, out);
    assert.ok(!existsSync(said[1]));
    await until(() => pidsOfUids(user.sub.start, 65536).length === 0 && pidsOfUids(user.uid, 1).length === 0, 'no process of the user or its sandboxes remains');
  } finally {
    root.cleanup();
  }
});
