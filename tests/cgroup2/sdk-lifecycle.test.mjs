// The official e2b SDK's lifecycle (tests/sdk/e2b-sdk-lifecycle.test.mjs's main
// scenario) against a backend run as root and as a user with a delegated
// cgroup v2 subtree: create → getInfo → list → commands.run → setTimeout →
// pause → connect → kill, on the machine's cgroups (tests/cgroup2/cgroup2-lib.mjs).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { until } from '../../host/wait.mjs';
import { modes, startFor, hierarchy, sandboxPids, cgroupDirsNaming } from './cgroup2-lib.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, SandboxNotFoundError, CommandExitError } = await import('e2b');

for (const mode of modes()) {
  describe(`official e2b SDK lifecycle, backend run as ${mode.name} (cgroup ${hierarchy()})`, { skip: mode.skip }, () => {
    let backend;
    let opts;
    const tag = `sdk-${mode.name}-${process.pid}`;

    before(async () => {
      backend = await startFor(mode, { extraArgs: ['--warm-pool', '1'], readyTimeoutMs: 120_000 });
      opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 };
    });
    after(async () => {
      if (!backend) return;
      const { code } = await backend.stop();
      assert.equal(code, 0, backend.stderr());
      assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key is never logged');
    });

    test('create → getInfo → list → commands.run → setTimeout → pause → connect → kill', { timeout: 300_000 }, async () => {
      const sandbox = await Sandbox.create('base', { ...opts, timeoutMs: 600_000, metadata: { suite: tag }, envs: { FOO: 'bar' } });
      assert.match(sandbox.sandboxId, /^[a-z0-9]{20}$/);
      assert.ok(sandboxPids(sandbox.sandboxId).length >= 1, 'its processes are in a cgroup that names it');

      const info = await sandbox.getInfo();
      assert.equal(info.sandboxId, sandbox.sandboxId);
      assert.equal(info.templateId, 'base');
      assert.deepEqual(info.metadata, { suite: tag });
      assert.equal(info.state, 'running');
      assert.equal(info.cpuCount, 2);
      assert.equal(info.memoryMB, 512);
      const page = await Sandbox.list({ ...opts, query: { metadata: { suite: tag } } }).nextItems();
      assert.deepEqual(page.map((s) => s.sandboxId), [sandbox.sandboxId]);

      const r = await sandbox.commands.run('echo "$FOO from $(whoami)"; cat /proc/self/cgroup > /dev/null');
      assert.equal(r.stdout, 'bar from user\n');
      assert.equal(r.exitCode, 0);
      await assert.rejects(sandbox.commands.run('exit 3'), (err) => err instanceof CommandExitError && err.exitCode === 3);

      const tBefore = Date.now();
      await sandbox.setTimeout(900_000);
      const extended = (await sandbox.getInfo()).endAt.getTime();
      assert.ok(extended >= tBefore + 900_000 && extended <= Date.now() + 900_000, 'setTimeout moved endAt');

      await sandbox.files.write('/home/user/kept.txt', 'before the pause');
      assert.equal(await sandbox.pause(), true);
      assert.equal((await Sandbox.getInfo(sandbox.sandboxId, opts)).state, 'paused');
      assert.equal(await sandbox.pause(), false, 'already paused');
      assert.equal(await sandbox.isRunning(), false);

      const resumed = await Sandbox.connect(sandbox.sandboxId, { ...opts, timeoutMs: 300_000 });
      assert.equal((await resumed.getInfo()).state, 'running');
      assert.equal(await resumed.isRunning(), true);
      assert.equal((await resumed.commands.run('cat /home/user/kept.txt')).stdout, 'before the pause');

      assert.equal(await resumed.kill(), true);
      assert.equal(await resumed.kill(), false, 'already gone');
      await assert.rejects(Sandbox.getInfo(sandbox.sandboxId, opts), SandboxNotFoundError);
      await until(() => !existsSync(path.join(backend.stateDir, 'sandboxes', sandbox.sandboxId)), 'its directory is gone');
      await until(() => sandboxPids(sandbox.sandboxId).length === 0 && cgroupDirsNaming(sandbox.sandboxId).length === 0,
        () => `no process or cgroup left: ${sandboxPids(sandbox.sandboxId)} ${cgroupDirsNaming(sandbox.sandboxId)}`);
    });
  });
}
