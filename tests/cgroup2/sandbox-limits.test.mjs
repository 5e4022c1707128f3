// A sandbox's limits and lifecycle on the machine's cgroups, as root (full
// isolation) and as a user with a delegated cgroup v2 subtree (rootless): the
// ready line and /health, commands, the memory, pids, cpu and disk limits,
// pause as a freeze, nothing left after kill, and the devices a sandbox may
// open. Run in the cgroup v2 guest by `./build.sh test` (tests/guest/), and
// on a cgroup v1 host as root (the user's half is skipped there: v1 has no
// delegation). Real backend, real kernel: every limit is read back from the
// kernel's own files and seen to bite.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { api } from '../../host/backend.mjs';
import { until, sleep } from '../../host/wait.mjs';
import { modes, startFor, sandbox, hierarchy, limitApplies, sandboxPids, cgroupDirsNaming, effectiveLimits, cpuStat, alive, collect } from './cgroup2-lib.mjs';

const T = { timeout: 300_000 };
const MiB = 1 << 20;

for (const mode of modes()) {
  describe(`sandboxes of a backend run as ${mode.name} (cgroup ${hierarchy()})`, { skip: mode.skip }, () => {
    let backend;
    let health;
    before(async () => {
      backend = await startFor(mode, { extraArgs: ['--warm-pool', '0'], readyTimeoutMs: 120_000 });
      health = await (await fetch(`${backend.apiUrl}/health/details`)).json();
    });
    after(async () => {
      if (!backend) return;
      const { code } = await backend.stop();
      assert.equal(code, 0, backend.stderr());
    });

    test('the ready line and /health say the isolation and each limit that applies', T, () => {
      assert.equal(backend.isolation, mode.isolation, backend.stderr());
      assert.equal(health.isolation, mode.isolation);
      for (const name of mode.limits) {
        assert.ok(limitApplies(backend.limits, name), `the ready line says ${name} applies: ${JSON.stringify(backend.limits)}`);
        assert.ok(limitApplies(health.limits, name), `/health says ${name} applies: ${JSON.stringify(health.limits)}`);
      }
    });

    test('commands run as user and root, in the sandbox\'s cgroup, under its memory, pids and cpu limits', T, async () => {
      const s = await sandbox(backend, { memoryMB: 256, cpuCount: 1 });
      try {
        const r = await s.run('echo hi; whoami; exit 7');
        assert.equal(r.out, 'hi\nuser\n', r.err);
        assert.equal(r.end.exitCode, 7);
        assert.equal((await s.run('whoami', { user: 'root' })).out, 'root\n');
        const pids = sandboxPids(s.id);
        assert.ok(pids.length >= 1, 'the sandbox\'s init is in a cgroup that names the sandbox');
        const limits = effectiveLimits(pids[0]);
        assert.equal(limits.memory.value, 256 * MiB, `memory limit of ${JSON.stringify(limits.memory)}`);
        assert.equal(limits.pids.value, 1024, `pids limit of ${JSON.stringify(limits.pids)}`);
        assert.equal(limits.cpu.value, 1, `cpu limit of ${JSON.stringify(limits.cpu)}`);
        if (hierarchy() === 'v2') assert.equal(limits.swap.value, 0, 'no swap: memory.swap.max 0');
        // A command's process is in the same limits as the init.
        const sleeper = await s.envd.open('process.Process/Start', { process: { cmd: 'sleep', args: ['600'] } });
        await sleeper.next();
        await until(() => sandboxPids(s.id).length >= 2, 'the command is in the sandbox\'s cgroup');
        for (const pid of sandboxPids(s.id)) assert.equal(effectiveLimits(pid).memory.value, 256 * MiB, `pid ${pid}`);
        sleeper.cancel();
      } finally {
        assert.equal(await s.kill(), 204);
      }
    });

    test('a process past the memory limit is killed, its end event says so; the sandbox and the backend serve on', T, async () => {
      const s = await sandbox(backend, { memoryMB: 128 });
      try {
        const r = await s.run('exec python3 -c "a = b\'x\' * (512 << 20); print(len(a))"');
        assert.deepEqual(r.end, { exitCode: -1, status: 'signal: killed', error: 'signal: killed' }, r.err);
        assert.equal((await s.run('echo alive')).out, 'alive\n');
        assert.equal((await fetch(`${backend.apiUrl}/health/details`)).status, 200);
        if (hierarchy() === 'v2') {
          const { dir } = effectiveLimits(sandboxPids(s.id)[0]).memory;
          const events = execFileSync('cat', [path.join(dir, 'memory.events')], { encoding: 'utf8' });
          assert.match(events, /^oom_kill [1-9]/m, `the kernel's count (${dir}/memory.events):\n${events}`);
        }
      } finally {
        assert.equal(await s.kill(), 204);
      }
    });

    test('processes stop at the pids limit: a fork fails with EAGAIN at 1024; the sandbox serves on', T, async () => {
      const s = await sandbox(backend);
      try {
        // Children that wait, forked until the kernel refuses; then all killed.
        const script = 'import os, signal, sys\nkids = []\ntry:\n  while len(kids) < 2000:\n    pid = os.fork()\n' +
          '    if pid == 0:\n      signal.pause()\n      os._exit(0)\n    kids.append(pid)\nexcept OSError as e:\n  print(len(kids), e.errno == 11)\n' +
          'for k in kids: os.kill(k, 9)\nfor k in kids: os.waitpid(k, 0)\n';
        const r = await s.run(`python3 -c '${script}'`, { timeoutMs: 240_000 });
        const [count, eagain] = r.out.trim().split(' ');
        assert.equal(eagain, 'True', `the fork failed with EAGAIN: ${r.out} ${r.err}`);
        assert.ok(Number(count) >= 1000 && Number(count) < 1024, `${count} children forked before the limit`);
        assert.equal((await s.run('echo still here')).out, 'still here\n');
        assert.equal((await fetch(`${backend.apiUrl}/health/details`)).status, 200);
      } finally {
        assert.equal(await s.kill(), 204);
      }
    });

    test('two busy loops in a 1-CPU sandbox are throttled to about one CPU', T, async (t) => {
      const s = await sandbox(backend, { cpuCount: 1 });
      try {
        const { dir } = effectiveLimits(sandboxPids(s.id)[0]).cpu;
        assert.ok(dir, 'a cpu limit over the sandbox');
        const before = cpuStat(dir);
        const t0 = performance.now();
        await s.run('for i in 1 2; do timeout 4 sh -c "while :; do :; done" & done; wait');
        const wallUs = (performance.now() - t0) * 1000;
        const after = cpuStat(dir);
        const cpus = (after.usage_usec - before.usage_usec) / wallUs;
        assert.ok(cpus <= 1.25, `${cpus.toFixed(2)} CPUs used over the run`);
        // On a machine too busy to give the loops more than their quota, the
        // quota has nothing to bite: that says nothing either way.
        if (after.nr_throttled === before.nr_throttled && cpus < 0.9) {
          t.skip(`the machine gave the sandbox only ${cpus.toFixed(2)} CPUs: too busy to reach the quota`);
          return;
        }
        assert.ok(after.nr_throttled > before.nr_throttled, `the quota bit: nr_throttled ${before.nr_throttled} -> ${after.nr_throttled} (${dir}/cpu.stat), ${cpus.toFixed(2)} CPUs used`);
      } finally {
        assert.equal(await s.kill(), 204);
      }
    });

    test('pause stops the sandbox (a freeze, or a checkpoint where CRIU works: nothing runs, no signal is seen) until resume', T, async () => {
      const s = await sandbox(backend);
      const stream = await s.envd.open('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c',
        'trap "echo SIGCONT-seen" CONT; while :; do echo "tick $(date +%s%N)"; sleep 0.1; done'] } });
      const c = collect(stream);
      try {
        await until(() => (c.text().match(/tick/g) ?? []).length >= 3, 'the loop ticks');
        assert.equal((await api(backend, 'POST', `/sandboxes/${s.id}/pause`)).status, 204);
        const kind = (await api(backend, 'GET', `/sandboxes/${s.id}`)).json.pause?.kind;
        if (kind === 'checkpoint') {
          assert.deepEqual(sandboxPids(s.id), [], 'a checkpointed sandbox keeps no process on the host');
        } else {
          assert.equal(kind, 'freeze');
          if (hierarchy() === 'v2') {
            const frozen = cgroupDirsNaming(s.id).filter((d) => /^frozen 1$/m.test(execFileSync('cat', [path.join(d, 'cgroup.events')], { encoding: 'utf8' })));
            assert.ok(frozen.length >= 1, `a cgroup of the sandbox says frozen 1 in cgroup.events: ${cgroupDirsNaming(s.id)}`);
          }
        }
        await sleep(300); // what was already on its way
        const ticksPaused = c.text();
        const pausedAt = Date.now();
        await sleep(2000);
        assert.equal(c.text(), ticksPaused, 'no output while paused');
        const resumedAt = Date.now();
        assert.equal((await api(backend, 'POST', `/v2/sandboxes/${s.id}/connect`, { timeout: 300 })).status, 201);
        // A tick written just before a checkpoint waits in its pipe and comes
        // first after the restore: wait for one the loop printed after resume.
        const stampsOf = () => [...c.text().matchAll(/tick (\d+)/g)].map((m) => Number(BigInt(m[1]) / 1000000n));
        await until(() => stampsOf().some((t) => t >= resumedAt), 'ticks again after resume');
        const stamps = stampsOf();
        const gap = Math.max(...stamps.slice(1).map((t, i) => t - stamps[i]));
        assert.ok(gap >= Date.now() - pausedAt - 1000, `the loop stood still while paused: its longest gap is ${gap} ms`);
        await sleep(300);
        assert.doesNotMatch(c.text(), /SIGCONT-seen/, 'a freeze sends no SIGSTOP/SIGCONT');
      } finally {
        stream.cancel();
        assert.equal(await s.kill(), 204);
      }
    });

    test('a write past diskSizeMB fails with ENOSPC; the sandbox carries on', T, async (t) => {
      if (!mode.limits.includes('disk')) { t.skip('no disk limit rootless (loop devices need root)'); return; }
      const s = await sandbox(backend, { diskSizeMB: 64 });
      try {
        const r = await s.run('dd if=/dev/zero of=/home/user/big bs=1M count=100 2>&1; echo "status $?"; df -m --output=size / | tail -1');
        assert.match(r.out, /No space left on device/);
        assert.match(r.out, /status 1/);
        assert.ok(Number(r.out.trim().split('\n').at(-1)) <= 64, `df: ${r.out}`);
        assert.equal((await s.run('rm /home/user/big && echo ok > /home/user/small && cat /home/user/small')).out, 'ok\n');
      } finally {
        assert.equal(await s.kill(), 204);
      }
    });

    test('kill leaves no process and no cgroup of the sandbox (setsid, double fork, nohup)', T, async () => {
      const s = await sandbox(backend);
      await s.run('setsid sleep 1000 < /dev/null > /dev/null 2>&1 & (sleep 1001 < /dev/null > /dev/null 2>&1 &) ; nohup sleep 1002 > /dev/null 2>&1 & disown; echo ok');
      await until(() => sandboxPids(s.id).length >= 4, 'init and three sleepers');
      const pids = sandboxPids(s.id);
      assert.ok(cgroupDirsNaming(s.id).length >= 1, 'the sandbox has cgroups');
      assert.equal(await s.kill(), 204);
      await until(() => pids.every((p) => !alive(p)), () => `every process gone: ${pids.filter(alive)}`);
      await until(() => cgroupDirsNaming(s.id).length === 0, () => `no cgroup left: ${cgroupDirsNaming(s.id)}`);
      await until(() => !existsSync(path.join(backend.stateDir, 'sandboxes', s.id)), 'its directory is gone');
      assert.equal((await api(backend, 'GET', `/sandboxes/${s.id}`)).status, 404);
    });

    test('devices: null, zero, full, random, urandom, tty, ptmx and ptys work; the console and any other node cannot be opened', T, async () => {
      const s = await sandbox(backend);
      try {
        const ok = await s.run('head -c 4 /dev/urandom | wc -c; head -c 4 /dev/random | wc -c; head -c 4 /dev/zero | wc -c; echo x > /dev/null && echo null; ' +
          'echo x > /dev/full; python3 -c "import os, pty; m, s = pty.openpty(); print(os.ttyname(s).startswith(\'/dev/pts/\'))"; ' +
          'test -c /dev/tty && echo tty', { user: 'root' });
        assert.equal(ok.out, '4\n4\n4\nnull\nTrue\ntty\n', ok.err);
        assert.match(ok.err, /No space left on device/, '/dev/full is full');
        // The template's /dev/console is the null device (the host's console is 5:1).
        assert.equal((await s.run('stat -c %t:%T /dev/console')).out, '1:3\n');
        // The sandbox cannot make device nodes...
        const mknod = await s.run('mknod /tmp/console c 5 1 2>&1; echo "status $?"', { user: 'root' });
        assert.match(mknod.out, /Operation not permitted\nstatus 1/);
        // ...and one that reaches its filesystem (as a template or an image could
        // bring it; made here by the host's root, mode 0666) cannot be opened.
        // Full: made through the sandbox's overlay, at /tmp. Rootless: the host's
        // root cannot make a node through an overlay mounted in a user namespace
        // (its ids are not mapped there), so in the overlay's upper directory, at /.
        const nodes = { console: 'c 5 1', mem: 'c 1 1', kmsg: 'c 1 11', tty0: 'c 4 0', disk: 'b 254 0' };
        const [hostDir, inside] = mode.isolation === 'full' ? [backend.sandboxPath(s.id, '/tmp'), '/tmp']
          : [`/proc/${backend.pid}/root${backend.stateDir}/sandboxes/${s.id}/upper`, ''];
        for (const [name, spec] of Object.entries(nodes)) execFileSync('mknod', ['-m', '666', path.join(hostDir, `node-${name}`), ...spec.split(' ')]);
        const open = await s.run(`for n in ${Object.keys(nodes).join(' ')}; do python3 -c "import os, sys
try:
    os.close(os.open('${inside}/node-$n', os.O_RDONLY | os.O_NONBLOCK)); print('$n opened')
except OSError as e:
    print('$n', e.strerror)"; done`, { user: 'root' });
        const lines = open.out.trim().split('\n');
        assert.equal(lines.length, Object.keys(nodes).length, open.out + open.err);
        for (const line of lines) assert.match(line, /^\S+ (Operation not permitted|Permission denied)$/, `every node refused: ${open.out}`);
      } finally {
        assert.equal(await s.kill(), 204);
      }
    });
  });
}
