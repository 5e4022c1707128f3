// The syscall policy of every sandbox process
// (docs/backend/runtime-and-isolation.md, "Syscall policy"). build/bin/seccomp-probe
// (tests/backend/seccomp_probe.c) makes each call the policy must refuse with
// arguments that fail some other way, or succeed harmlessly, without it:
//   - on the host, as root with every capability, without the policy (no call
//     gives the refusal the policy gives: the arguments do not decide) and
//     under it through build/bin/seccomp-apply, which builds and installs it
//     with the backend's own code (each call refused: EPERM, clone3 ENOSYS,
//     another ABI's entry kills the process);
//   - inside a real sandbox, as root through sudo and as user: the same.
// Then the tools a sandbox is for still work under it: sudo, apt, Python
// threads and subprocesses, node worker threads, git, a PTY.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startBackend, backendBinary, api } from '../../host/backend.mjs';
import { fullIsolation, noIsolation } from '../lib/isolation.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';

const T = { timeout: 120_000 };
const bin = (name) => path.join(path.dirname(backendBinary()), name);
const SIGSYS = 31;
const SIGSEGV = 11;
const EPERM = 1;
const ENOSYS = 38;

// seccomp-probe's lines: { call, want, errno } or { call, want, signal }.
const parseProbe = (text) => text.trim().split('\n').map((line) => JSON.parse(line));

// What a line shows, in the policy's terms.
const outcome = (r) => (r.signal !== undefined ? `signal ${r.signal}`
  : r.errno === 0 ? 'success' : `errno ${r.errno}`);
const refused = (r) => ({ EPERM: r.errno === EPERM, ENOSYS: r.errno === ENOSYS, SIGSYS: r.signal === SIGSYS,
  allowed: r.signal === undefined && r.errno !== EPERM })[r.want];

// A kernel without the i386 entry (ia32_emulation off, or a guest that has
// none, like some CI VMs) kills a 64-bit process's `int 0x80` with SIGSEGV
// before any filter sees it: that ABI is out of reach either way. Whether
// this kernel has it is read from the probe run without the policy.
const I386 = 'int 0x80 (i386 getpid)';
let i386Missing;
function kernelHasNoI386() {
  if (i386Missing === undefined) {
    const plain = spawnSync(bin('seccomp-probe'), { encoding: 'utf8', timeout: 30_000 });
    assert.equal(plain.status, 0, plain.stderr);
    i386Missing = parseProbe(plain.stdout).find((r) => r.call === I386)?.signal === SIGSEGV;
  }
  return i386Missing;
}
const holds = (r) => refused(r) || (r.call === I386 && r.signal === SIGSEGV && kernelHasNoI386());

function assertPolicyHolds(lines, who) {
  assert.ok(lines.length >= 60, `${who}: the probe ran every call (${lines.length} lines)`);
  const wrong = lines.filter((r) => !holds(r)).map((r) => `${r.call}: wanted ${r.want}, got ${outcome(r)}`);
  assert.deepEqual(wrong, [], `${who}: calls the policy did not handle as it must`);
}

describe('the syscall policy on the host (the backend\'s own code, root with every capability)', () => {
  test('without it no call is refused the way the policy refuses it; under it each one is', T, (t) => {
    if (process.getuid() !== 0) { t.skip('needs root: the policy is installed without NO_NEW_PRIVS'); return; }
    const plain = spawnSync(bin('seccomp-probe'), { encoding: 'utf8', timeout: 30_000 });
    assert.equal(plain.status, 0, plain.stderr);
    const control = parseProbe(plain.stdout);
    const decidedByArgs = control.filter((r) => r.want !== 'allowed' && refused(r))
      .map((r) => `${r.call}: ${outcome(r)} without the policy`);
    assert.deepEqual(decidedByArgs, [], 'the probe\'s arguments alone must not produce the refusal');
    // Among them real successes: a new user namespace, an AF_VSOCK socket through high bits.
    assert.equal(control.find((r) => r.call === 'unshare(CLONE_NEWUSER)').errno, 0);
    assert.equal(control.find((r) => r.call === 'clone(CLONE_NEWUSER)').errno, 0);

    const filtered = spawnSync(bin('seccomp-apply'), [bin('seccomp-probe')], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(filtered.status, 0, filtered.stderr);
    assertPolicyHolds(parseProbe(filtered.stdout), 'host root under the policy');
  });
});

describe('the syscall policy inside a sandbox', () => {
  let backend;
  let sb;
  let envd;
  let skip = false;

  // Runs a shell script as user (or as `user`) to its end: { out, err, code }.
  const run = async (script, { user } = {}) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } },
      user ? { user } : {});
    const d = dataOf(r.messages);
    const end = r.messages.find((m) => m.event.end)?.event.end;
    return { out: d.stdout.toString(), err: d.stderr.toString(), code: end?.exitCode ?? 0, end };
  };
  const ok = async (script, opts) => {
    const r = await run(script, opts);
    assert.equal(r.code, 0, `${script}\n--- stdout ---\n${r.out}\n--- stderr ---\n${r.err}`);
    return r.out;
  };

  before(async () => {
    backend = await startBackend();
    if (backend.isolation !== 'full') { skip = true; return; }
    const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600 });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    sb = res.json;
    envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken });
    // The probe goes in through the files API, as any upload would.
    const up = await fetch(`${backend.sandboxUrl}/files?${new URLSearchParams({ path: '/opt/seccomp-probe', username: 'root' })}`, {
      method: 'POST',
      headers: { 'E2b-Sandbox-Id': sb.sandboxID, 'X-Access-Token': sb.envdAccessToken, 'Content-Type': 'application/octet-stream' },
      body: readFileSync(bin('seccomp-probe')),
    });
    assert.equal(up.status, 200, await up.text());
    await ok('chmod 755 /opt/seccomp-probe', { user: 'root' });
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  const skipUnlessFull = (t) => {
    if (skip) t.skip(`needs full isolation; the backend runs with isolation "${backend.isolation}"`);
    return skip;
  };

  test('the ready line and GET /health/details say seccomp true', T, async (t) => {
    if (skipUnlessFull(t)) return;
    assert.equal(backend.seccomp, true);
    const { warm, checkpoint, ...health } = await (await fetch(`${backend.apiUrl}/health/details`)).json();
    assert.deepEqual(health, fullIsolation());
    assert.equal(warm.size, 3, 'the default warm pool');
  });

  test('each refused call fails, as root through sudo and as user', T, async (t) => {
    if (skipUnlessFull(t)) return;
    assertPolicyHolds(parseProbe(await ok('sudo /opt/seccomp-probe')), 'root through sudo');
    assertPolicyHolds(parseProbe(await ok('/opt/seccomp-probe')), 'user');
  });

  test('unshare -U -r -m fails for root and user: no way back to every capability', T, async (t) => {
    if (skipUnlessFull(t)) return;
    for (const script of ['unshare -U -r -m true', 'sudo unshare -U -r -m true']) {
      const r = await run(script);
      assert.notEqual(r.code, 0, `${script} must fail`);
      assert.match(r.err, /Operation not permitted/, script);
    }
  });

  test('commands and the init run under the filter, and NO_NEW_PRIVS stays off', T, async (t) => {
    if (skipUnlessFull(t)) return;
    const fields = (text) => Object.fromEntries(text.split('\n').map((l) => l.split(':\t')).filter((p) => p.length === 2));
    for (const [who, script] of [['user', 'cat /proc/self/status'], ['root through sudo', 'sudo cat /proc/self/status'],
      ['the init (pid 1)', 'cat /proc/1/status']]) {
      const status = fields(await ok(script));
      assert.equal(status.Seccomp, '2', `${who}: Seccomp`);
      assert.equal(status.NoNewPrivs, '0', `${who}: NoNewPrivs (setuid sudo depends on it)`);
    }
    assert.equal((await ok('sudo id -u')).trim(), '0');
  });

  test('apt, Python threads and subprocesses, node worker threads and git still work', T, async (t) => {
    if (skipUnlessFull(t)) return;
    assert.match(await ok('apt-get --version'), /^apt \d/);
    assert.match(await ok('apt-cache policy bash'), /Installed: \S+/);
    await ok('sudo apt-get check');
    // pip is not in the base template: Python's own threads, a pool and subprocesses.
    const py = await ok(`python3 -c '
import concurrent.futures, subprocess, threading
box = []
t = threading.Thread(target=lambda: box.append(1)); t.start(); t.join()
with concurrent.futures.ThreadPoolExecutor(4) as ex: total = sum(ex.map(lambda x: x * x, range(10)))
out = subprocess.run(["sh", "-c", "echo child"], capture_output=True, text=True).stdout.strip()
print(box[0], total, out)'`);
    assert.equal(py.trim(), '1 285 child');
    const node = await ok(`node -e '
const { Worker } = require("worker_threads");
const { execFileSync } = require("child_process");
const w = new Worker("require(\\"worker_threads\\").parentPort.postMessage(6 * 7)", { eval: true });
w.on("message", (m) => { console.log(m, execFileSync("echo", ["spawned"]).toString().trim()); w.terminate(); });'`);
    assert.equal(node.trim(), '42 spawned');
    const git = await ok('cd /tmp && git init -q repo && cd repo && echo x > f && git add f && ' +
      'git -c user.name=u -c user.email=u@example.invalid commit -q -m first && git log --format=%s');
    assert.equal(git.trim(), 'first');
  });

  test('a PTY started through envd\'s process service, and one opened inside', T, async (t) => {
    if (skipUnlessFull(t)) return;
    // The envd PTY is the backend's (its /dev/pts/N is not the sandbox's
    // devpts, so tty(1) cannot name it): ask the terminal itself.
    const r = await envd.stream('process.Process/Start',
      { process: { cmd: '/bin/sh', args: ['-c', '[ -t 0 ] && [ -t 1 ] && echo on-a-terminal; stty size'] },
        pty: { size: { cols: 80, rows: 24 } } });
    const out = dataOf(r.messages).pty.toString();
    assert.match(out, /on-a-terminal\r?\n24 80/);
    assert.equal(r.messages.find((m) => m.event.end)?.event.end.exitCode ?? 0, 0);
    // The sandbox's own devpts, through /dev/ptmx.
    const inside = await ok(`python3 -c 'import os; m, s = os.openpty(); print(os.ttyname(s))'`);
    assert.match(inside.trim(), /^\/dev\/pts\/\d+$/);
  });
});

test('isolation none: no policy, and the ready line and /health/details say so', T, async () => {
  const none = await startBackend({ extraArgs: ['--isolation', 'none'] });
  try {
    assert.equal(none.seccomp, false);
    assert.deepEqual(await (await fetch(`${none.apiUrl}/health/details`)).json(), { ...noIsolation, warm: { ready: 0, size: 0, templates: 0, templates_ready: 0, taken: 0 },
      checkpoint: { available: false, pause: 'freeze', reason: 'the backend runs with none isolation; a checkpoint needs full isolation (root)' } });
  } finally {
    assert.equal((await none.stop()).code, 0);
  }
});
