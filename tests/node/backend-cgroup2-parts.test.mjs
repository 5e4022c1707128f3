// The sandbox runtime's cgroup v2 pieces on this machine, whatever its
// hierarchy (docs/backend/runtime-and-isolation.md, "Isolation modes"). A cgroup2 mounted in
// a mount namespace of the test's own is the machine's one unified
// hierarchy: on a cgroup v1 machine it has no controller (they are bound to
// v1, and stay so), but clone3 into a cgroup, the freezer, cgroup.kill and
// device programs all work there. So:
//   - build/bin/cgroup2-check (tests/backend/cgroup2_check.c) drives the
//     runtime's own code against the kernel in such a cgroup: a command's
//     child cloned into it (CLONE_VM on its own stack, and a copy), the
//     devices program (null opens, the host's console does not), freeze and
//     thaw waited for through cgroup.events, cgroup.kill and removal;
//   - the backend itself, started as root where /sys/fs/cgroup is such a
//     cgroup2 without controllers, refuses full isolation naming the cgroup
//     v2 piece it lacks.
// Needs root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { backendBinary, backendEnv } from '../../host/backend.mjs';

const T = { timeout: 60_000 };
const bin = (name) => path.join(path.dirname(backendBinary()), name);
const root = process.getuid() === 0;

test('clone3 into a cgroup, the devices program, freeze and cgroup.kill, against the kernel', { ...T, skip: !root && 'needs root' }, () => {
  const dir = `e2b-cgroup2-check-${process.pid}`;
  const script = 'set -e; m=$(mktemp -d); mount -t cgroup2 none "$m"; mkdir "$m/$1"; rc=0; "$0" "$m/$1" || rc=$?; ' +
    'rmdir "$m/$1/sandbox" 2>/dev/null || true; rmdir "$m/$1"; umount "$m"; rmdir "$m"; exit $rc';
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, bin('cgroup2-check'), dir],
    { encoding: 'utf8', timeout: 50_000 });
  assert.equal(r.stdout, 'ok\n', `${r.stdout}${r.stderr}`);
  assert.equal(r.status, 0);
});

test('full isolation where cgroup v2 lacks a controller refuses, naming the cgroup v2 piece', { ...T, skip: !root && 'needs root' }, (t) => {
  // Here /sys/fs/cgroup is the unified hierarchy; whether its root has the
  // controllers is the machine's: a v1 machine's has none of them.
  const inV2 = (script, ...args) => spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c',
    `mount -t cgroup2 none /sys/fs/cgroup && ${script}`, 'sh', ...args], { encoding: 'utf8', timeout: 20_000, env: backendEnv('k') });
  const controllers = inV2('cat /sys/fs/cgroup/cgroup.controllers').stdout.split(/\s+/);
  if (controllers.includes('memory')) {
    t.skip('this machine\'s cgroup v2 has the controllers (tests/guest checks full isolation on such a machine)');
    return;
  }
  const r = inV2('exec "$@"', backendBinary(), '--listen', '127.0.0.1:0', '--isolation', 'full', '--warm-pool', '0');
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '', 'no ready line');
  assert.match(r.stderr, /--isolation full is not possible here: cgroup v2: controller memory is not available in \/sys\/fs\/cgroup\/cgroup\.controllers \(bound to a cgroup v1 hierarchy, or not in this kernel\)/);
});
