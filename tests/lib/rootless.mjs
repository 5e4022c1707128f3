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
//
// Needs root: it fails (never skips) without it, since CI runs as root.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
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

// The backend's binaries in a directory the user can reach, and
// templates/base/rootfs beside them owned, through an idmapped mount, by the
// user's subordinate ids (or by the user itself when it has none).
export function rootlessRoot(user) {
  mustBeRoot();
  const dir = mkdtempSync('/tmp/e2bw-rootless-');
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'bin'));
  for (const f of ['e2b-local-backend', 'e2b-sandbox-init']) copyFileSync(path.join(build(), 'bin', f), path.join(dir, 'bin', f));
  for (const f of ['e2b-local-backend', 'e2b-sandbox-init']) chmodSync(path.join(dir, 'bin', f), 0o755);
  const rootfs = path.join(dir, 'templates', 'base', 'rootfs');
  mkdirSync(rootfs, { recursive: true });
  const [uidBase, gidBase, count] = user.sub ? [user.sub.start, user.sub.start, SUB_COUNT] : [user.uid, user.gid, 1];
  execFileSync(path.join(build(), 'bin', 'idmap-mount'),
    [path.join(build(), 'templates', 'base', 'rootfs'), rootfs, String(uidBase), String(gidBase), String(count)]);
  return {
    dir,
    binary: path.join(dir, 'bin', 'e2b-local-backend'),
    cleanup() {
      try { execFileSync('umount', ['--lazy', rootfs]); } catch { /* not mounted */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
