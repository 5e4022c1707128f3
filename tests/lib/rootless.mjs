// Rootless backends for the tests, made by the root test process: a user
// other than root (created when missing, with or without subordinate ids),
// the backend's binaries where that user can run them, and the `base`
// template as that user would have built it from its subordinate ids: the
// root-built template idmapped (build/bin/idmap-mount), no copy, no network.
//
//   import { testUser, rootlessRoot } from '../lib/rootless.mjs';
//   const user = testUser('e2bw-rootless');          // { name, uid, gid, sub: { start, count } | null }
//   const root = rootlessRoot(user);                  // { binary, dir, cleanup() }
//   const backend = await startBackend({ runAs: user, binary: root.binary });
//   ...
//   root.cleanup();                                   // unmounts and removes root.dir
//   mountsUnder(dir)                                  // mount points at or below dir: []
//
// The template's mount lives in the test process's mount namespace, which
// outlives the process: cleanup() also runs when the process exits without
// calling it, and the roots of test processes that were killed (no exit
// handler runs then) are unmounted and removed by the next rootlessRoot().
//
// Needs root: it fails (never skips) without it, since CI runs as root.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const build = () => path.resolve(process.env.E2BW_BUILD || path.join(repoRoot, 'build'));
const SUB_COUNT = 65536;

function mustBeRoot() {
  if (process.getuid() !== 0) {
    throw new Error('the rootless tests create a user and mount its template: run them as root (CI does)');
  }
}

// The user's entry in /etc/subuid or /etc/subgid (by name or uid): { start, count } or null.
export function subIds(file, name, id) {
  let text = '';
  try { text = readFileSync(file, 'utf8'); } catch { return null; }
  for (const line of text.split('\n')) {
    const [who, start, count] = line.split(':');
    if (who === name || who === String(id)) return { start: Number(start), count: Number(count) };
  }
  return null;
}

// Where a new subordinate range can go: after every existing one, from 100000.
function freeSubRange() {
  let end = 100000;
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    let text = '';
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n')) {
      const [, start, count] = line.split(':').map(Number);
      if (Number.isFinite(start) && Number.isFinite(count)) end = Math.max(end, start + count);
    }
  }
  return end;
}

// A user named name (created when missing): with subordinate ids (65536 of
// them, the same start for uids and gids) unless subordinate is false, in
// which case it must have none.
export function testUser(name, { subordinate = true } = {}) {
  mustBeRoot();
  let uid;
  try {
    uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch {
    // A system account gets no subordinate ids from useradd.
    execFileSync('useradd', [...(subordinate ? [] : ['--system']), '--create-home', '--shell', '/bin/bash', name]);
    uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }));
  }
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }));
  let sub = subIds('/etc/subuid', name, uid);
  const subg = subIds('/etc/subgid', name, uid);
  if (subordinate && (!sub || !subg || sub.start !== subg.start || sub.count < SUB_COUNT)) {
    const start = freeSubRange();
    const range = `${start}-${start + SUB_COUNT - 1}`;
    execFileSync('usermod', ['--add-subuids', range, '--add-subgids', range, name]);
    sub = { start, count: SUB_COUNT };
  }
  if (!subordinate && (sub || subg)) throw new Error(`${name} has subordinate ids; a single-id test needs a user without`);
  return { name, uid, gid, sub: subordinate ? sub : null };
}

// Mount points at or below dir in this process's mount namespace, deepest
// first (mountinfo escapes space, tab, newline and backslash in octal).
export function mountsUnder(dir) {
  const unescape = (s) => s.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(Boolean)
    .map((line) => unescape(line.split(' ')[4]))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

function unmountAndRemove(dir) {
  for (const m of mountsUnder(dir)) execFileSync('umount', ['--lazy', m]);
  const left = mountsUnder(dir);
  if (left.length > 0) throw new Error(`still mounted after umount: ${left.join(', ')}`);
  rmSync(dir, { recursive: true, force: true });
}

// Roots /tmp/e2bw-rootless-<pid in base 36>-* of processes that are gone.
const ROOT_PREFIX = 'e2bw-rootless-';
function removeStaleRoots() {
  for (const name of readdirSync('/tmp')) {
    const m = new RegExp(`^${ROOT_PREFIX}([0-9a-z]+)-`).exec(name);
    if (m && !existsSync(`/proc/${parseInt(m[1], 36)}`)) unmountAndRemove(`/tmp/${name}`);
  }
}

// The backend's binaries in a directory the user can reach, and
// templates/base/rootfs beside them owned, through an idmapped mount, by the
// user's subordinate ids (or by the user itself when it has none).
export function rootlessRoot(user) {
  mustBeRoot();
  removeStaleRoots();
  const dir = mkdtempSync(`/tmp/${ROOT_PREFIX}${process.pid.toString(36)}-`);
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'bin'));
  for (const f of ['e2b-local-backend', 'e2b-sandbox-init']) copyFileSync(path.join(build(), 'bin', f), path.join(dir, 'bin', f));
  for (const f of ['e2b-local-backend', 'e2b-sandbox-init']) chmodSync(path.join(dir, 'bin', f), 0o755);
  const rootfs = path.join(dir, 'templates', 'base', 'rootfs');
  mkdirSync(rootfs, { recursive: true });
  const [uidBase, gidBase, count] = user.sub ? [user.sub.start, user.sub.start, SUB_COUNT] : [user.uid, user.gid, 1];
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    process.off('exit', cleanup);
    unmountAndRemove(dir);
  };
  process.on('exit', cleanup);
  execFileSync(path.join(build(), 'bin', 'idmap-mount'),
    [path.join(build(), 'templates', 'base', 'rootfs'), rootfs, String(uidBase), String(gidBase), String(count)]);
  return { dir, binary: path.join(dir, 'bin', 'e2b-local-backend'), cleanup };
}

// Host pids of every process whose real uid is in [start, start + count).
export function pidsOfUids(start, count) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))[1]);
      if (uid >= start && uid < start + count) pids.push(Number(entry));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}
