// Where the launcher (host/backend.mjs) starts a backend on cgroup v2: in a
// cgroup of its own. cgroup v2 enables controllers only below a cgroup that
// holds no process, so a backend started in the cgroup of whoever started it
// (a shell's session scope, a test runner's service) could not make its
// sandboxes' cgroups there (docs/backend/cgroups-and-limits.md,
// "Cgroups: v1, v2 and systemd"). So, on cgroup v2:
//   - with systemd: `systemd-run --scope -p Delegate=yes` (`--user` for a
//     user other than root, when its user manager runs), as one would by
//     hand: systemd makes the scope, delegates it and removes it afterwards;
//   - without systemd, when the cgroup above the caller's is writable (a
//     delegated subtree: a container's, a test guest's): a new cgroup beside
//     the caller's, which the backend moves into before it starts, removed
//     again once it has exited;
//   - else nothing: in the root cgroup the backend makes its own
//     (/sys/fs/cgroup/e2b-local), and elsewhere it says what is missing.
// On cgroup v1 nothing is needed: the backend's cgroups are per controller.
import { accessSync, chownSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statfsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

const CGROUP2_SUPER_MAGIC = 0x63677270;
const ROOT = '/sys/fs/cgroup';

export function cgroupV2() {
  try {
    return statfsSync(ROOT).type === CGROUP2_SUPER_MAGIC;
  } catch {
    return false;
  }
}

// This process's cgroup v2 path ("/..."), or null.
export function ownCgroup(pid = 'self') {
  try {
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'));
    return line ? line.slice(3) : null;
  } catch {
    return null;
  }
}

const writable = (file) => {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

const onPath = (prog) => (process.env.PATH || '/usr/bin:/bin').split(':').some((d) => d && existsSync(path.join(d, prog)));

// Removes a cgroup directory and every one below it (each must be empty of
// processes), deepest first; gone already is fine.
export function removeCgroupTree(dir) {
  let entries = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) if (e.isDirectory()) removeCgroupTree(path.join(dir, e.name));
  try {
    rmdirSync(dir);
  } catch { /* busy or gone */ }
}

// How to start a backend that runs as uid (runAs, else this process's):
// { prefix: argv to put before its command (each execs the next: the pid
// stays the backend's), cleanup(): after it exited } or null.
export function backendPlacement(uid = process.getuid(), gid = process.getgid()) {
  if (process.env.E2BW_CGROUP_PLACEMENT === 'off' || !cgroupV2()) return null;
  const own = ownCgroup();
  if (!own || own === '/') return null;
  const asRoot = uid === 0;
  // (A backend of another user, runAs: a cgroup beside, chowned to it.)
  if (process.getuid() === uid && existsSync('/run/systemd/system') && onPath('systemd-run')) {
    const userBus = process.env.XDG_RUNTIME_DIR && existsSync(path.join(process.env.XDG_RUNTIME_DIR, 'systemd', 'private'));
    if (asRoot || userBus)
      return { prefix: ['systemd-run', ...(asRoot ? [] : ['--user']), '--scope', '--quiet', '--collect', '-p', 'Delegate=yes', '--'], cleanup() {} };
  }
  const parent = path.join(ROOT, path.dirname(own));
  if (!writable(path.join(parent, 'cgroup.procs')) || !writable(parent)) return null;
  const dir = path.join(parent, `e2b-backend-${process.pid}-${randomBytes(4).toString('hex')}.scope`);
  mkdirSync(dir);
  // Delegated to the backend's user, as Delegate=yes would.
  if (process.getuid() === 0 && uid !== 0) {
    for (const f of ['', 'cgroup.procs', 'cgroup.subtree_control', 'cgroup.threads']) chownSync(path.join(dir, f), uid, gid);
  }
  return {
    prefix: ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir],
    cleanup: () => removeCgroupTree(dir),
  };
}

