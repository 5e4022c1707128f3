// Starts the local E2B-compatible backend (build/bin/e2b-local-backend) and
// stops it again: the launcher the tests, the demo, the benchmarks and the
// playground share.
//
//   import { startBackend } from '<repo>/host/backend.mjs';
//   const backend = await startBackend();
//   // backend.apiUrl, backend.sandboxUrl, backend.apiKey, backend.stateDir, backend.pid,
//   // backend.isolation ('full', 'rootless' or 'none'), backend.limits (which
//   // limits sandboxes get: { memory, pids, cpu, disk, devices }),
//   // backend.cgroup ('v1', 'v2' or null), backend.seccomp (true when sandbox
//   // processes run under the syscall policy), backend.cgroupFavorDynmods (true
//   // when cgroup migrations skip the kernel's grace periods) and
//   // backend.domain, from the ready line
//   ...
//   await backend.stop();   // SIGTERM (or stop('SIGINT')), resolves to { code, signal } on exit
//
// Options:
//   apiKey     the key clients must send (default: a random one per backend)
//   stateDir   a directory to keep sandboxes in (default: the backend makes a
//              temporary one and removes it when it exits)
//   extraArgs  more command-line arguments, e.g. ['--connect-may-shorten']
//   keyFile    true: pass the key in a file (--api-key-file, mode 0600)
//              instead of the environment
//   nofile     a descriptor limit (RLIMIT_NOFILE) to start the backend with,
//              set through prlimit(1): N (soft and hard) or 'SOFT:HARD'
//   readyTimeoutMs  how long to wait for the ready line (default 15000)
//   runAs      { uid, gid }: start the backend as that user (setpriv(1), from
//              root), e.g. to run it rootless; the binary must be reachable
//              by that user (binary: a path of its own)
//   binary     the backend binary (default $E2BW_BUILD/bin/e2b-local-backend)
//   prefix     argv run before the backend's command, each execing the next (the
//              pid stays the backend's), e.g. ['unshare', '-m', ...]
//   dockerHub  true: let the backend pull Docker Hub images from Docker Hub
//              itself; by default it gets --no-docker-hub, so that no test,
//              demo or benchmark ever reaches a public registry (Docker Hub
//              names go to its --registry-mirror only)
//
// The key reaches the backend in its environment (E2B_LOCAL_API_KEY), never
// on its command line, where any process could read it; the backend removes
// the variable from its environment as soon as it has read it.
//
// On cgroup v2 the backend is started in a cgroup of its own
// (host/cgroup.mjs: systemd-run --scope, or a cgroup beside the caller's);
// E2BW_CGROUP_PLACEMENT=off starts it where the caller is.
//
// The binary comes from $E2BW_BUILD/bin (default <repo>/build/bin), so a
// sanitizer build can be tested with E2BW_BUILD=build/asan-backend (make backend-asan).
// The backend's stderr (its request log) is kept in memory: read it with
// backend.stderr(), e.g. in an assertion message. It is printed only when
// the backend dies on its own, which always means a bug worth seeing.
// Every backend still running when the test process exits is killed, and a
// running backend does not keep the process alive (only stop() and exited
// wait for it): a test that fails before stopping one ends, never hangs.

import { spawn } from 'node:child_process';
import { backendPlacement } from './cgroup.mjs';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// One control-plane call with the backend's key: { status, json }.
export async function api(backend, method, urlPath, body) {
  const res = await fetch(backend.apiUrl + urlPath, {
    method,
    headers: { 'X-API-Key': backend.apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

export function backendBinary() {
  // Absolute: a relative E2BW_BUILD ("build") must not depend on the cwd of
  // whoever uses the path (a symlink made from it, a child in another cwd).
  const build = path.resolve(process.env.E2BW_BUILD || path.join(repoRoot, 'build'));
  return path.join(build, 'bin', 'e2b-local-backend');
}

// The host pids in a sandbox's cgroup (v1: its pids controller's), under the
// ready line's cgroup_parent.
function sandboxHostPids(ready, sandboxId) {
  if (!ready.cgroup_parent) return [];
  try {
    const text = readFileSync(`${ready.cgroup_parent}/${sandboxId}/cgroup.procs`, 'utf8');
    return text.split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

// The environment a backend is started with: ours plus the key.
export function backendEnv(apiKey) {
  return { ...process.env, E2B_LOCAL_API_KEY: apiKey };
}

export async function startBackend({ apiKey, stateDir, extraArgs = [], keyFile = false, nofile, readyTimeoutMs = 15000, runAs, binary = backendBinary(), dockerHub = false, prefix = [] } = {}) {
  apiKey ??= `e2b_local_${randomBytes(16).toString('hex')}`;
  const args = ['--listen', '127.0.0.1:0', ...(dockerHub ? [] : ['--no-docker-hub']), ...extraArgs];
  if (stateDir) args.push('--state-dir', stateDir);
  let env = backendEnv(apiKey);
  let keyDir;
  if (keyFile) {
    keyDir = mkdtempSync(path.join(tmpdir(), 'e2b-backend-key-'));
    writeFileSync(path.join(keyDir, 'key'), apiKey + '\n', { mode: 0o600 });
    args.push('--api-key-file', path.join(keyDir, 'key'));
    env = { ...process.env };
    delete env.E2B_LOCAL_API_KEY;
  }
  // prlimit and setpriv exec the backend, so the pid in the ready line is the backend's.
  let [command, argv] = [binary, args];
  if (nofile) [command, argv] = ['prlimit', [`--nofile=${String(nofile).includes(':') ? nofile : `${nofile}:${nofile}`}`, '--', command, ...argv]];
  if (runAs) [command, argv] = ['setpriv', [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--', command, ...argv]];
  const placement = prefix.length ? null : backendPlacement(runAs ? runAs.uid : process.getuid(), runAs ? runAs.gid : process.getgid());
  const outer = placement ? placement.prefix : prefix;
  if (outer.length) [command, argv] = [outer[0], [...outer.slice(1), command, ...argv]];

  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env });
  live.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  // Only the last 4 MiB: a backend that floods its log must fail a test,
  // not overflow the test process's strings.
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    if (stderr.length > 4 << 20) stderr = stderr.slice(-(2 << 20));
  });

  let stopping = false;
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      if (keyDir) rmSync(keyDir, { recursive: true, force: true });
      placement?.cleanup();
      if (!stopping) process.stderr.write(`[e2b-local-backend exited unexpectedly: code=${code} signal=${signal}]\n${stderr}`);
      resolve({ code, signal });
    });
  });

  const ready = await new Promise((resolve, reject) => {
    let stdout = '';
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`backend printed no ready line within ${readyTimeoutMs} ms`)), readyTimeoutMs);
    function fail(err) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopping = true; // the rejection below already carries stderr
      child.kill('SIGKILL');
      reject(new Error(`${err.message}\n--- backend stderr ---\n${stderr}`));
    }
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`backend exited before it was ready (code=${code} signal=${signal})`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      if (settled) return;
      stdout += chunk;
      const nl = stdout.indexOf('\n');
      if (nl < 0) return;
      try {
        const line = JSON.parse(stdout.slice(0, nl));
        settled = true;
        clearTimeout(timer);
        resolve(line);
      } catch (err) {
        fail(new Error(`bad ready line ${JSON.stringify(stdout.slice(0, nl))}: ${err.message}`));
      }
    });
  });

  // A running backend does not keep this process alive: a test that fails
  // before its stop() ends (the exit handler above kills what is left)
  // instead of hanging on the child. Waiting for its exit holds it again.
  const hold = (on) => {
    for (const handle of [child, child.stdout, child.stderr]) handle?.[on ? 'ref' : 'unref']?.();
    return exited;
  };
  hold(false);

  return {
    apiUrl: ready.api_url,
    sandboxUrl: ready.sandbox_url,
    stateDir: ready.state_dir,
    pid: ready.pid,
    startedPid: child.pid,       // the process started: the backend, or (rootless) its signal forwarder
    isolation: ready.isolation, // 'full' (namespaces, overlay, cgroups, an id range each), 'rootless' or 'none'
    limits: ready.limits,       // which limits apply: { memory, pids, cpu, disk (booleans), devices ('cgroup', 'bpf', 'userns' or false) }
    cgroup: ready.cgroup,       // the sandboxes' cgroup hierarchy: 'v1', 'v2' or null (none)
    cgroupParent: ready.cgroup_parent, // where their cgroups are made (v1: the pids controller's); undefined without
    seccomp: ready.seccomp, // true when every sandbox process runs under the syscall policy
    cgroupFavorDynmods: ready.cgroup_favor_dynmods, // true when cgroup migrations skip the kernel's grace periods
    domain: ready.domain,       // the sandboxes' domain: <port>-<id>.<domain> (--domain; default localhost:<envd port>)
    apiKey,
    stderr: () => stderr,
    get exited() { return hold(true); },
    // The host pid of a process a sandbox reports as nsPid (envd's pids are
    // the sandbox's own), found through the sandbox's cgroup while it lives;
    // null when no such process runs. Without isolation the pids are the same;
    // sandboxes without cgroups (rootless, mostly) have none to find them by (null).
    hostPid(sandboxId, nsPid) {
      if (ready.isolation === 'none') return nsPid;
      for (const pid of sandboxHostPids(ready, sandboxId)) {
        try {
          const m = /NSpid:\s+([\d\s]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
          if (m && Number(m[1].trim().split(/\s+/).at(-1)) === nsPid) return pid;
        } catch { /* gone meanwhile */ }
      }
      return null;
    },
    // Host pids of every process of a sandbox (empty once it is gone; always
    // empty without cgroups: rootless without delegation, none).
    hostPids: (sandboxId) => sandboxHostPids(ready, sandboxId),
    // The directory of a sandbox's cgroup (v2), or of one of its controller's
    // (v1: 'memory', 'pids', 'cpu', 'freezer', 'devices', 'cpuacct'); null without.
    cgroupDir(sandboxId, controller = 'pids') {
      if (!ready.cgroup_parent) return null;
      const parent = ready.cgroup === 'v1' ? ready.cgroup_parent.replace(/\/pids\/e2b-local\//, `/${controller}/e2b-local/`) : ready.cgroup_parent;
      return `${parent}/${sandboxId}`;
    },
    // A host path for path p inside the sandbox: through the backend's own
    // mount namespace (/proc/<pid>/root), where the sandbox's root is mounted.
    sandboxPath(sandboxId, p) {
      if (ready.isolation === 'none') return p;
      return `/proc/${ready.pid}/root${ready.state_dir}/sandboxes/${sandboxId}/rootfs${p}`;
    },
    // Sends signal (SIGTERM by default) once and waits for the exit.
    async stop(signal = 'SIGTERM') {
      if (!stopping && child.exitCode === null && child.signalCode === null) child.kill(signal);
      stopping = true;
      return hold(true);
    },
  };
}
