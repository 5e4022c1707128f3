// The cgroup v2 guest (docs/testing.md, "The cgroup v2 guest"): boots Debian
// 12's cloud kernel (6.1) in QEMU without KVM (TCG), with this machine's root
// filesystem read-only as its root (virtiofs), runs one command in it as root
// or as an unprivileged user with a delegated cgroup subtree, streams the
// command's output and returns its exit status. Nothing in the guest has a
// network device: it reaches nothing beyond itself.
//
//   import { runInGuest } from './tests/guest/guest.mjs';
//   const r = await runInGuest({ command: ['node', '--test', 'tests/cgroup2/'], as: 'root',
//                                output: process.stdout, timeoutMs: 600_000 });
//   // r.status (null when the guest did not finish), r.timedOut, r.bootStalled,
//   // r.stalledRuns (the run directories of boots given up, kept), r.outDir,
//   // r.times: { bootMs, commandMs, shutdownMs, totalMs, boots },
//   // r.console (the guest's kernel console when something went wrong)
//
// Options:
//   command    argv of the command (required); run by bash in cwd
//   as         'root' (in system.slice/e2bw-<pid>.service) or 'user' (the guest's
//              user, in a scope of its delegated user@UID.service), default 'root'
//   cwd        default the repository
//   env        more environment variables for the command
//   output     a writable stream for the command's stdout and stderr (together)
//   outDir     a directory the command's $E2BW_GUEST_OUT is copied to at the end
//   timeoutMs  the whole run, boot included (default 600000); QEMU is killed then
//   bootLimitMs  a boot that has not started the command by then is given up
//              (QEMU killed, said on stderr) and the guest booted again, at most
//              twice (default 180000)
//   progress   a writable stream told when QEMU starts and when the command does
//   memoryMiB  the guest's memory (default 3072); cpus: its CPUs (default 2)
//   keep       keep build/guest/runs/<id> (its console.log) even after a success
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const GUEST_USER = 'e2bw-guest';
const SCRATCH_DIRS = ['/tmp', '/var/tmp', '/home', '/root']; // the scratch disk's, in the guest (initramfs-init)
const SCRATCH_SIZE = '32G'; // sparse: the guest's /tmp, /home, state directories
// no_timer_check: a busy host makes the IO-APIC timer check fail (a panic) under
// TCG. tsc=reliable: TCG's TSC is the host's clock, the same on every vCPU, and
// a TSC clocksource keeps clock_gettime in the vDSO (HPET's costs a syscall and
// an emulated read: node starts a third slower). mitigations=off: each page
// table switch of PTI costs a TLB flush, dear under TCG; the guest runs only
// the tests' own code.
// cryptomgr.notests: the crypto self-tests at boot take minutes under TCG and
// can hold a CPU against a stop_machine() on the other one (a soft lockup that
// never ends on a busy host).
const KERNEL_ARGS = 'console=ttyS0 panic=-1 quiet no_timer_check tsc=reliable mitigations=off cryptomgr.notests';
// A boot that has not started the command by then is stuck (a quiet host boots
// in well under a minute): QEMU is killed and the guest booted again, at most
// BOOT_RETRIES times, within the run's timeoutMs.
const BOOT_LIMIT_MS = 180_000;
const BOOT_RETRIES = 2;

export const buildDir = () => path.resolve(process.env.E2BW_BUILD || path.join(repoRoot, 'build'));

// A word bash reads back as exactly s.
export const shellQuote = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

// Builds (or checks) build/guest: the kernel, busybox, the initramfs, the templates' disk.
export function prepareGuest() {
  const r = spawnSync(path.join(here, 'prepare.sh'), { stdio: ['ignore', 'inherit', 'inherit'], env: process.env });
  if (r.status !== 0) throw new Error(`tests/guest/prepare.sh failed (status ${r.status})`);
}

// A virtiofsd serving dir; readOnly: from a read-only bind mount of it in a
// mount namespace of its own, so the guest cannot write there whatever it does.
function virtiofsd(dir, socket, { readOnly, cache }) {
  const daemon = ['/usr/lib/qemu/virtiofsd', `--socket-path=${socket}`, '-o', `cache=${cache}`, '-o', 'sandbox=namespace'];
  if (!readOnly) return spawn(daemon[0], [...daemon.slice(1), '-o', `source=${dir}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const view = `${socket}.view`;
  mkdirSync(view, { recursive: true });
  const script = 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"';
  return spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', dir, view, ...daemon, '-o', `source=${view}`],
    { stdio: ['ignore', 'ignore', 'pipe'] });
}

const waitForFile = async (file, ms, gone = () => false) => {
  for (const end = Date.now() + ms; Date.now() < end && !gone(); await new Promise((r) => setTimeout(r, 20))) if (existsSync(file)) return true;
  return false;
};

// Copies what QEMU appends to file (the guest's port e2bw.out) to output as it
// comes, until done settles; resolves to done's value, once all is copied.
async function follow(file, done, output) {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(1 << 16);
  let finished = false;
  let value;
  done.then((v) => { finished = true; value = v; });
  try {
    for (;;) {
      const last = finished; // read once more after the end: all QEMU wrote
      let n;
      while ((n = readSync(fd, buf, 0, buf.length, null)) > 0) if (output) await new Promise((r) => output.write(buf.subarray(0, n), r));
      if (last) return value;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    closeSync(fd);
  }
}

// QEMU and virtiofsd processes still running when this process exits are killed.
const live = new Set();
process.on('exit', () => { for (const child of live) child.kill('SIGKILL'); });

// The mount point holding path p (findmnt): virtiofs shares one mount, so the
// repository gets a share of its own when it is not on the root filesystem.
const mountOf = (p) => spawnSync('findmnt', ['-n', '-o', 'TARGET', '-T', p], { encoding: 'utf8' }).stdout.trim();

export async function runInGuest({ command, as = 'root', cwd = repoRoot, env = {}, output, outDir, timeoutMs = 600_000,
  memoryMiB = 3072, cpus = 2, keep = false, bootLimitMs = BOOT_LIMIT_MS, progress } = {}) {
  if (!Array.isArray(command) || command.length === 0) throw new TypeError('command: a non-empty argv array');
  if (as !== 'root' && as !== 'user') throw new TypeError(`as: 'root' or 'user', not ${JSON.stringify(as)}`);
  if (process.getuid() !== 0) throw new Error('the guest needs root on the host (virtiofsd, its disks): run as root, as ./build.sh test does');
  prepareGuest();
  const say = (line) => process.stderr.write(`tests/guest: ${line}\n`);
  const started = Date.now();
  const stalledRuns = [];
  for (let boot = 1; ; boot++) {
    const left = started + timeoutMs - Date.now();
    const r = await bootOnce({ command, as, cwd, env, output, outDir, timeoutMs: left, memoryMiB, cpus, keep, bootLimitMs, boot, progress });
    r.times.boots = boot;
    r.times.totalMs = Date.now() - started;
    r.stalledRuns = stalledRuns;
    if (!r.bootStalled) return r;
    stalledRuns.push(r.runDir);
    const lastBoot = boot > BOOT_RETRIES || started + timeoutMs - Date.now() <= bootLimitMs;
    say(`boot ${boot}: the guest had not started the command ${bootLimitMs / 1000} s after QEMU began (QEMU killed; whole console in ${r.runDir}/console.log)`
      + `${lastBoot ? ', no boot left' : ', booting again'}; the console's end:\n${r.console.slice(-2000)}`);
    if (lastBoot) return r;
  }
}

// One boot of the guest running the command; bootStalled when it had not
// started the command within bootLimitMs (QEMU killed then).
async function bootOnce({ command, as, cwd, env, output, outDir, timeoutMs, memoryMiB, cpus, keep, bootLimitMs, boot, progress }) {
  // Real paths: the initramfs resolves them under its /newroot, where an
  // absolute symbolic link would lead astray.
  const build = realpathSync(buildDir());
  const guest = realpathSync(path.join(build, 'guest'));
  const kernelVersion = readFileSync(path.join(guest, 'kernel', 'VERSION'), 'utf8').trim();
  const run = path.join(guest, 'runs', `${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(path.join(run, 'out'), { recursive: true });
  const guestEnv = { E2BW_GUEST: '1', E2BW_GUEST_OUT: path.join(run, 'out'), E2BW_BUILD: build, ...env };
  writeFileSync(path.join(run, 'command'), [
    ...Object.entries(guestEnv).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    `cd ${shellQuote(path.resolve(cwd))} || exit 125`,
    `exec ${command.map(shellQuote).join(' ')}`, ''].join('\n'));
  writeFileSync(path.join(run, 'params'), [
    `RUN_AS=${as}`, `GUEST_USER=${GUEST_USER}`,
    `GUEST_MODPROBE=${shellQuote(path.join(guest, 'modprobe'))}`,
    `GUEST_TEMPLATES=${shellQuote(realpathSync(path.join(build, 'templates')))}`, ''].join('\n'));
  const scratch = path.join(run, 'scratch.img');
  const outputFile = path.join(run, 'output');
  writeFileSync(outputFile, '');
  // lazy_itable_init: the file is sparse, its inode tables read back as zeros.
  const mk = spawnSync('mke2fs', ['-q', '-t', 'ext4', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1', '-F', scratch, SCRATCH_SIZE], { encoding: 'utf8' });
  if (mk.status !== 0) throw new Error(`mke2fs of the scratch disk failed: ${mk.stderr}`);

  const daemons = [virtiofsd('/', path.join(run, 'hostroot.sock'), { readOnly: true, cache: 'always' }),
    virtiofsd(run, path.join(run, 'run.sock'), { readOnly: false, cache: 'none' })];
  const shares = [['hostroot', 'hostroot.sock'], ['run', 'run.sock']];
  // Its own share also where the guest's scratch disk covers it (/tmp, /home ...).
  const ownShare = mountOf(repoRoot) !== '/' || SCRATCH_DIRS.some((d) => repoRoot === d || repoRoot.startsWith(`${d}/`));
  if (ownShare) {
    daemons.push(virtiofsd(repoRoot, path.join(run, 'repo.sock'), { readOnly: true, cache: 'always' }));
    shares.push(['repo', 'repo.sock']);
  }
  const ours = new Set(daemons); // this run's processes, killed at its end
  for (const d of daemons) live.add(d);
  let daemonErrors = '';
  for (const d of daemons) d.stderr.on('data', (c) => { daemonErrors += c; });
  const started = Date.now();
  const result = { status: null, timedOut: false, outDir: outDir ?? path.join(run, 'out'), runDir: run, times: {} };
  try {
    for (const [, sock] of shares) {
      if (!(await waitForFile(path.join(run, sock), 10_000))) throw new Error(`virtiofsd made no socket ${sock}: ${daemonErrors}`);
    }
    const args = [
      '-accel', 'tcg', '-machine', 'q35', '-cpu', 'max', '-smp', String(cpus), '-m', `${memoryMiB}M`,
      // virtiofs needs the guest's memory shared with virtiofsd
      '-object', `memory-backend-memfd,id=mem,size=${memoryMiB}M,share=on`, '-numa', 'node,memdev=mem',
      '-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot', '-nic', 'none',
      '-kernel', path.join(guest, 'kernel', 'boot', `vmlinuz-${kernelVersion}`), '-initrd', path.join(guest, 'initrd.gz'),
      '-append', `${KERNEL_ARGS} e2bw.init=${path.join(here, 'guest-init.sh')} e2bw.run=${run}${ownShare ? ` e2bw.repo=${repoRoot}` : ''}`,
      '-serial', `file:${path.join(run, 'console.log')}`,
      '-device', 'virtio-serial-pci', '-chardev', `file,id=out,path=${outputFile}`, '-device', 'virtserialport,chardev=out,name=e2bw.out',
      '-drive', `file=${path.join(guest, 'templates.ext4')},if=none,id=templates,format=raw,readonly=on`,
      '-device', 'virtio-blk-pci,drive=templates,serial=e2bw-templates',
      '-drive', `file=${scratch},if=none,id=scratch,format=raw,cache=unsafe,discard=unmap`,
      '-device', 'virtio-blk-pci,drive=scratch,serial=e2bw-scratch',
    ];
    shares.forEach(([tag, sock], i) => args.push('-chardev', `socket,id=fs${i},path=${path.join(run, sock)}`,
      '-device', `vhost-user-fs-pci,chardev=fs${i},tag=${tag}`));
    const qemu = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    live.add(qemu);
    ours.add(qemu);
    let qemuErrors = '';
    qemu.stderr.on('data', (c) => { qemuErrors += c; });
    progress?.write(`tests/guest: boot ${boot}: QEMU started (run directory ${run})\n`);
    const timer = setTimeout(() => { result.timedOut = true; qemu.kill('SIGKILL'); }, timeoutMs);
    const startedFile = path.join(run, 'started');
    const bootTimer = bootLimitMs < timeoutMs && setTimeout(() => {
      if (existsSync(startedFile)) return;
      result.bootStalled = true;
      qemu.kill('SIGKILL');
    }, bootLimitMs);
    const onStart = progress && (async () => {
      if (await waitForFile(startedFile, timeoutMs, () => qemu.exitCode !== null || qemu.signalCode !== null)) {
        progress.write(`tests/guest: boot ${boot}: the command started, ${((Date.now() - started) / 1000).toFixed(1)} s into the boot\n`);
      }
    })();
    const exited = new Promise((resolve) => {
      qemu.on('exit', (code, signal) => resolve({ code, signal }));
      qemu.on('error', (err) => resolve({ error: err.message })); // e.g. no qemu-system-x86_64
    });
    const exit = await follow(outputFile, exited, output);
    clearTimeout(timer);
    clearTimeout(bootTimer);
    await onStart;
    const ended = Date.now();
    const statusFile = path.join(run, 'status');
    if (existsSync(statusFile)) result.status = Number(readFileSync(statusFile, 'utf8').trim());
    if (existsSync(startedFile)) {
      const commandStart = statSync(startedFile).mtimeMs;
      result.times.bootMs = Math.round(commandStart - started);
      if (result.status !== null) {
        const commandEnd = statSync(statusFile).mtimeMs;
        result.times.commandMs = Math.round(commandEnd - commandStart);
        result.times.shutdownMs = Math.round(ended - commandEnd);
      }
    }
    result.times.totalMs = ended - started;
    if (result.status === null) {
      const consoleLog = path.join(run, 'console.log');
      result.console = existsSync(consoleLog) ? readFileSync(consoleLog, 'utf8').slice(-8000) : '';
      result.error = result.bootStalled ? `the guest had not started the command ${bootLimitMs} ms after QEMU began, in ${boot} boots (QEMU killed)`
        : result.timedOut ? `the guest did not finish within ${timeoutMs} ms (QEMU killed)`
        : `the guest ended without the command's status (QEMU ${JSON.stringify(exit)}${qemuErrors ? `: ${qemuErrors.trim()}` : ''})`;
    }
    if (outDir) cpSync(path.join(run, 'out'), outDir, { recursive: true });
  } finally {
    for (const child of ours) {
      child.kill('SIGKILL');
      live.delete(child);
    }
    rmSync(scratch, { force: true });
    if (!keep && result.status !== null) rmSync(run, { recursive: true, force: true });
  }
  return result;
}
