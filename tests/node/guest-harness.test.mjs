// The cgroup v2 guest's harness (tests/guest/, docs/testing.md "The cgroup v2
// guest"): a command's output, exit status and files come back; it runs as
// root or as the user in the cgroups the docs promise, on cgroup v2 with every
// controller, with no network device and the host's root read-only; a guest
// that does not finish is killed at its timeout, one stuck at boot is booted
// again. Boots the guest twice (and three stalled boots). Needs
// root and QEMU (./build.sh test installs it): fails, never skips, without.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInGuest } from '../guest/guest.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const T = { timeout: 600_000 };

// Facts about the guest, one "name: value" line each, gathered by one command.
const FACTS = `
set -u
echo "kernel: $(uname -r)"
echo "fs: $(stat -f -c %T /sys/fs/cgroup)"
echo "controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "root controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
echo "cgroup: $(cut -d: -f3 /proc/self/cgroup)"
echo "id: $(id -un) $(id -u)"
echo "links: $(ip -o link show | awk -F': ' '{print $2}' | tr '\\n' ' ')"
touch /usr/e2bw-guest-write-test 2>/dev/null && echo "usr: writable" || echo "usr: read-only"
echo "tmp: $(stat -f -c %T /tmp)"
echo "env: E2BW_GUEST=$E2BW_GUEST FOO=\${FOO:-}"
echo "pwd: $PWD"
echo out-file > "$E2BW_GUEST_OUT/result.txt"
echo to-stderr >&2
exit 42
`;

const facts = (output) => Object.fromEntries(output.split('\n').filter((l) => l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]));

function collectOutput() {
  let text = '';
  return { write(chunk, cb) { text += chunk; cb?.(); return true; }, get text() { return text; } };
}

test('a command runs as root in a service\'s cgroup of a cgroup v2 guest: output, status and files come back', T, async () => {
  const output = collectOutput();
  const out = mkdtempSync(path.join(tmpdir(), 'e2bw-guest-out-'));
  try {
    const r = await runInGuest({ command: ['bash', '-c', FACTS], env: { FOO: 'bar baz' }, output, outDir: out, timeoutMs: 480_000 });
    assert.equal(r.status, 42, `${r.error ?? ''}\n${output.text}\n${r.console ?? ''}`);
    const f = facts(output.text);
    assert.match(f.kernel, /^6\.1\.\d+.*-cloud-amd64$/);
    assert.equal(f.fs, 'cgroup2fs');
    assert.equal(f.controllers, 'cpuset cpu io memory hugetlb pids rdma misc');
    assert.equal(f['root controllers'], 'cpuset cpu io memory hugetlb pids rdma misc');
    assert.match(f.cgroup, /^\/system\.slice\/e2bw-\d+\.service$/);
    assert.equal(f.id, 'root 0');
    assert.equal(f.links, 'lo ', 'no network device but loopback');
    assert.equal(f.usr, 'read-only', 'the host\'s root is read-only');
    assert.equal(f.tmp, 'ext2/ext3', '/tmp is the ext4 scratch disk');
    assert.equal(f.env, 'E2BW_GUEST=1 FOO=bar baz');
    assert.equal(f.pwd, root);
    assert.match(output.text, /^to-stderr$/m);
    assert.equal(readFileSync(path.join(out, 'result.txt'), 'utf8'), 'out-file\n');
    assert.ok(r.times.bootMs > 0 && r.times.commandMs >= 0 && r.times.shutdownMs >= 0, JSON.stringify(r.times));
    assert.ok(!existsSync(r.runDir), 'the run\'s directory is removed after a finished run');
    assert.ok(!existsSync('/usr/e2bw-guest-write-test'));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('as the user: a scope of its own in user@UID.service, which is delegated to it', T, async () => {
  const output = collectOutput();
  const script = `
    cg=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)
    service=\${cg%/app.slice/*}
    echo "id: $(id -un)"
    echo "cgroup: \${cg#/sys/fs/cgroup}"
    echo "service owner: $(stat -c %U "$service") $(stat -c %U "$service/cgroup.procs" "$service/cgroup.subtree_control" "$service/cgroup.threads" | sort -u)"
    echo "service limits owner: $(stat -c %U "$service/memory.max" "$service/pids.max" | sort -u)"
    echo "service subtree: $(cat "$service/cgroup.subtree_control")"
    echo "scope controllers: $(cat "$cg/cgroup.controllers")"
    echo "subuid: $(grep -c "^$(id -un):" /etc/subuid)"
    echo "home: $HOME $XDG_RUNTIME_DIR"
    mkdir "$cg/child" && echo "mkdir: ok"`;
  const r = await runInGuest({ command: ['bash', '-c', script], as: 'user', output, timeoutMs: 480_000 });
  assert.equal(r.status, 0, `${r.error ?? ''}\n${output.text}\n${r.console ?? ''}`);
  const f = facts(output.text);
  assert.equal(f.id, 'e2bw-guest');
  assert.match(f.cgroup, /^\/user\.slice\/user-(\d+)\.slice\/user@\1\.service\/app\.slice\/e2bw-\d+\.scope$/);
  assert.equal(f['service owner'], 'e2bw-guest e2bw-guest', 'Delegate=yes: the directory and its three files');
  assert.equal(f['service limits owner'], 'root', 'its own limits stay root\'s');
  assert.equal(f['service subtree'], 'cpu memory pids');
  assert.equal(f['scope controllers'], 'cpu memory pids');
  assert.equal(f.subuid, '1');
  assert.match(f.home, /^\/home\/e2bw-guest \/run\/user\/\d+$/);
  assert.equal(f.mkdir, 'ok', 'the user makes cgroups in its subtree');
});

test('a guest that does not finish is killed at its timeout; nothing of it is left running', T, async () => {
  const r = await runInGuest({ command: ['sleep', '1000'], timeoutMs: 3000 });
  assert.equal(r.status, null);
  assert.equal(r.timedOut, true);
  assert.match(r.error, /did not finish within 3000 ms/);
  const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
  assert.ok(!ps.split('\n').some((l) => l.includes(r.runDir)), `no QEMU or virtiofsd of ${r.runDir} left:\n${ps}`);
  assert.ok(!readdirSync(r.runDir).includes('scratch.img'), 'its scratch disk is removed');
  rmSync(r.runDir, { recursive: true, force: true });
});

test('a boot that has not started the command within bootLimitMs is given up and booted again, twice at most', T, async () => {
  // Under TCG no boot reaches the command within 2 s: every boot stalls.
  const r = await runInGuest({ command: ['true'], bootLimitMs: 2000, timeoutMs: 120_000 });
  assert.equal(r.status, null);
  assert.equal(r.timedOut, false);
  assert.equal(r.bootStalled, true);
  assert.equal(r.times.boots, 3);
  assert.match(r.error, /had not started the command 2000 ms after QEMU began, in 3 boots/);
  assert.equal(r.stalledRuns.length, 3);
  assert.equal(r.stalledRuns[2], r.runDir);
  const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
  for (const dir of r.stalledRuns) {
    assert.ok(!ps.split('\n').some((l) => l.includes(dir)), `no QEMU or virtiofsd of ${dir} left:\n${ps}`);
    assert.ok(existsSync(path.join(dir, 'console.log')), `${dir} kept, with its console`);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tests/guest/run: bad options exit with status 2 and say why', () => {
  for (const [args, said] of [[[], /no command/], [['--as', 'nobody', '--', 'true'], /--as is root or user/],
    [['--timeout', '0', '--', 'true'], /--timeout must be a positive integer/], [['--env', 'NOEQUALS', '--', 'true'], /--env takes NAME=VALUE/]]) {
    const r = spawnSync(path.join(root, 'tests', 'guest', 'run'), args, { encoding: 'utf8' });
    assert.equal(r.status, 2, `${args}: ${r.stderr}`);
    assert.match(r.stderr, said);
  }
});
