// What the cgroup v2 tests (tests/cgroup2/) share. They run in the cgroup v2
// guest (tests/guest/: `./build.sh test` boots it) and on this cgroup v1 host
// alike, as root: the backend started as root (full isolation) and, where the
// machine has one, as an unprivileged user with a delegated cgroup v2 subtree
// (rootless; the guest's user e2bw-guest, started by tests/guest/as in a scope
// of its own). Sandboxes are found through the kernel, not through the
// backend's own layout: their processes by the cgroup paths in
// /proc/<pid>/cgroup that name the sandbox, their limits as the tightest value
// on that cgroup's way up to the root.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';
import { testUser, rootlessRoot } from '../lib/rootless.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CG = '/sys/fs/cgroup';
export const hierarchy = () => (existsSync(`${CG}/cgroup.controllers`) ? 'v2' : 'v1');

// Whether /health's limits say that limit applies: `limits` was one boolean
// for all of them, and is an object naming each.
export const limitApplies = (limits, name) => limits === true || (typeof limits === 'object' && limits !== null && Boolean(limits[name]));

// The ways to start a backend here: as root, and as the guest's user with the
// delegated subtree tests/guest/guest-init.sh gives it (absent on this v1 host:
// skipped, with the reason).
export function modes() {
  const user = process.env.E2BW_GUEST_USER;
  const delegated = user && hierarchy() === 'v2';
  return [
    { name: 'root', isolation: 'full', limits: ['memory', 'pids', 'cpu', 'disk', 'devices'], skip: process.getuid() !== 0 && 'needs root' },
    { name: 'user', isolation: 'rootless', limits: ['memory', 'pids', 'cpu', 'devices'],
      skip: process.getuid() !== 0 ? 'needs root (it sets the user\'s backend up)'
        : !delegated && 'no unprivileged user with a delegated cgroup v2 subtree here (the cgroup v2 guest has one: tests/guest/)' },
  ];
}

// A backend for the mode; stop() also removes what the user's backend needed.
export async function startFor(mode, options = {}) {
  if (mode.name === 'root') return startBackend(options);
  // The user's binaries and the template idmapped to its subordinate ids
  // (tests/lib/rootless.mjs), started in a new scope of the user's delegated
  // subtree by tests/guest/as (which keeps the environment: the API key).
  const user = testUser(process.env.E2BW_GUEST_USER);
  const root = rootlessRoot(user);
  const launcher = path.join(root.dir, 'bin', 'in-user-scope');
  writeFileSync(launcher, `#!/bin/sh\nexec ${path.join(repoRoot, 'tests', 'guest', 'as')} user -- ${root.binary} "$@"\n`, { mode: 0o755 });
  const backend = await startBackend({ ...options, binary: launcher });
  const stop = backend.stop;
  backend.stop = async (signal) => {
    const r = await stop(signal);
    root.cleanup();
    return r;
  };
  return backend;
}

// A sandbox of backend, with run(script) to run a bash script to its end:
// { out, err, end: the end event ({ exitCode, status, ... }) }.
export async function sandbox(backend, body = {}) {
  const res = await api(backend, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 1800, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: res.json.sandboxID, token: res.json.envdAccessToken });
  const run = async (script, { user, timeoutMs } = {}) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } },
      { ...(user ? { user } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
    const d = dataOf(r.messages);
    return { out: d.stdout.toString(), err: d.stderr.toString(), end: r.messages.find((m) => m.event?.end)?.event.end, endStream: r.end, status: r.status };
  };
  const kill = async () => (await api(backend, 'DELETE', `/sandboxes/${res.json.sandboxID}`)).status;
  return { id: res.json.sandboxID, info: res.json, envd, run, kill };
}

// /proc/<pid>/cgroup as [[controllers, path]] (v2: one entry, controllers '').
function cgroupLines(pid) {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').filter(Boolean).map((l) => {
      const [, controllers, p] = /^\d+:([^:]*):(.*)$/.exec(l);
      return [controllers, p];
    });
  } catch {
    return []; // gone meanwhile
  }
}

const names = (p, id) => p.split('/').some((segment) => segment.includes(id));

// Host pids of every process whose cgroup names the sandbox.
export function sandboxPids(id) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && cgroupLines(entry).some(([, p]) => names(p, id))) pids.push(Number(entry));
  }
  return pids;
}

// The cgroup directory of pid for a controller (v1), or its one directory (v2).
export function cgroupDir(pid, controller) {
  for (const [controllers, p] of cgroupLines(pid)) {
    if (hierarchy() === 'v2' && controllers === '') return path.join(CG, p);
    if (controllers.split(',').includes(controller)) return path.join(CG, controllers, p);
  }
  return null;
}

// Every cgroup directory under /sys/fs/cgroup whose name holds the sandbox's id.
export function cgroupDirsNaming(id) {
  const found = [];
  const walk = (dir, depth) => {
    let entries;
    try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const p = path.join(dir, e.name);
      if (e.name.includes(id)) found.push(p);
      else if (depth < 8) walk(p, depth + 1);
    }
  };
  walk(CG, 0);
  return found;
}

const readOr = (file, fallback = null) => {
  try { return readFileSync(file, 'utf8').trim(); } catch { return fallback; }
};

// The directories from dir up to the hierarchy's root.
function upward(dir) {
  const dirs = [];
  for (let d = dir; d.startsWith(CG) && d !== path.dirname(CG); d = path.dirname(d)) dirs.push(d);
  return dirs;
}

// The limits a process is under, the tightest on the way up: memory in bytes,
// pids, cpu in CPUs (quota / period), swap in bytes (v2; null without),
// each with the directory that sets it (for its statistics).
export function effectiveLimits(pid) {
  const v2 = hierarchy() === 'v2';
  const tightest = (controller, read) => {
    const dir = cgroupDir(pid, controller);
    if (!dir) return { value: null, dir: null };
    let best = { value: null, dir: null };
    for (const d of upward(dir)) {
      const v = read(d);
      if (v !== null && (best.value === null || v < best.value)) best = { value: v, dir: d };
    }
    return best;
  };
  const num = (text) => (text === null || text === 'max' ? null : Number(text));
  return {
    memory: tightest('memory', (d) => {
      const v = num(readOr(path.join(d, v2 ? 'memory.max' : 'memory.limit_in_bytes')));
      return v !== null && v < 2 ** 62 ? v : null; // v1's "no limit" is a huge number
    }),
    swap: v2 ? tightest('memory', (d) => num(readOr(path.join(d, 'memory.swap.max')))) : { value: null, dir: null },
    pids: tightest('pids', (d) => num(readOr(path.join(d, 'pids.max')))),
    cpu: tightest('cpu', (d) => {
      if (v2) {
        const [quota, period] = (readOr(path.join(d, 'cpu.max')) ?? 'max').split(' ');
        return quota === 'max' ? null : Number(quota) / Number(period);
      }
      const quota = num(readOr(path.join(d, 'cpu.cfs_quota_us')));
      return quota === null || quota < 0 ? null : quota / Number(readOr(path.join(d, 'cpu.cfs_period_us')));
    }),
  };
}

// cpu.stat of a cpu cgroup directory as numbers (v2: usage_usec, nr_throttled, ...;
// v1: nr_throttled, ... with usage_usec added from cpuacct.usage).
export function cpuStat(dir) {
  const stat = Object.fromEntries((readOr(path.join(dir, 'cpu.stat'), '') || '').split('\n').filter(Boolean)
    .map((l) => l.split(' ')).map(([k, v]) => [k, Number(v)]));
  if (hierarchy() === 'v1') {
    const usage = readOr(path.join(dir, 'cpuacct.usage')) ?? readOr(path.join(dir.replace(/\/cpu[^/]*\//, '/cpuacct/'), 'cpuacct.usage'));
    stat.usage_usec = Number(usage) / 1000;
  }
  return stat;
}

export const alive = (pid) => {
  const stat = readOr(`/proc/${pid}/stat`);
  if (stat === null) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
  return state !== 'Z' && state !== 'X';
};

// Reads a live stream's frames into frames[] (with the time each came) until it ends.
export function collect(stream) {
  const frames = [];
  const done = (async () => {
    for (;;) {
      const f = await stream.next().catch(() => null);
      if (!f || f.end) return;
      frames.push({ at: Date.now(), message: f.message });
    }
  })();
  const text = () => frames.map((f) => (f.message.event?.data?.stdout ? Buffer.from(f.message.event.data.stdout, 'base64').toString() : '')).join('');
  return { frames, text, done };
}
