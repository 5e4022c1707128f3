// The official e2b JS SDK (2.51) running commands and PTYs against the local
// backend's envd (process.Process; docs/e2b-protocol-notes.md).
// Options are passed explicitly; ambient E2B_* variables are cleared.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { startBackend } from '../../host/backend.mjs';
import { sleep, until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, CommandExitError, TimeoutError, InvalidArgumentError, AuthenticationError } = await import('e2b');

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !'ZX'.includes(stat.slice(stat.lastIndexOf(')') + 2)[0]);
  } catch {
    return false;
  }
}

describe('official e2b SDK commands and pty', () => {
  let backend;
  let opts;
  let sandbox;

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 15000 };
    sandbox = await Sandbox.create('base', { ...opts, envs: { FROM_SANDBOX: 'sb', SHARED: 'sandbox' } });
  });

  after(async () => {
    assert.equal(await sandbox.kill(), true);
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  // Inside a real sandbox home is /home/user; without isolation, the sandbox's directory.
  const home = () => (backend.isolation === 'full' ? '/home/user' : path.join(backend.stateDir, 'sandboxes', sandbox.sandboxId));

  test('run: stdout, stderr, exit code 0', async () => {
    const r = await sandbox.commands.run('echo out; echo err >&2');
    assert.deepEqual(r, { exitCode: 0, error: undefined, stdout: 'out\n', stderr: 'err\n' });
  });

  test('run: a non-zero exit is a CommandExitError with exitCode, stdout, stderr', async () => {
    await assert.rejects(sandbox.commands.run('echo partial; echo bad >&2; exit 3'), (err) => {
      assert.ok(err instanceof CommandExitError);
      assert.equal(err.exitCode, 3);
      assert.equal(err.error, 'exit status 3');
      assert.equal(err.message, 'exit status 3');
      assert.equal(err.stdout, 'partial\n');
      assert.equal(err.stderr, 'bad\n');
      return true;
    });
  });

  test('envs: sandbox envs, then command envs (which win)', async () => {
    const r = await sandbox.commands.run('echo "$FROM_SANDBOX $SHARED $ONLY_CMD"', { envs: { SHARED: 'command', ONLY_CMD: 'c' } });
    assert.equal(r.stdout, 'sb command c\n');
  });

  test('cwd: default home, explicit directory, a missing one is InvalidArgumentError', async () => {
    assert.equal((await sandbox.commands.run('pwd')).stdout.trim(), home());
    assert.equal((await sandbox.commands.run('pwd', { cwd: '/tmp' })).stdout.trim(), '/tmp');
    await assert.rejects(sandbox.commands.run('pwd', { cwd: '/definitely/not/here' }), (err) => {
      assert.ok(err instanceof InvalidArgumentError, err.constructor.name);
      assert.match(err.message, /cwd '\/definitely\/not\/here' does not exist/);
      return true;
    });
  });

  test('onStdout / onStderr callbacks receive the output as it comes', async () => {
    const out = [];
    const errs = [];
    const r = await sandbox.commands.run('for i in 1 2 3; do echo o$i; echo e$i >&2; done', {
      onStdout: (d) => out.push(d),
      onStderr: (d) => errs.push(d),
    });
    assert.equal(out.join(''), 'o1\no2\no3\n');
    assert.equal(errs.join(''), 'e1\ne2\ne3\n');
    assert.equal(r.stdout, 'o1\no2\no3\n');
  });

  test('background command, commands.list() and commands.kill(pid)', async () => {
    const handle = await sandbox.commands.run('sleep 30', { background: true });
    assert.ok(Number.isInteger(handle.pid));
    const listed = await sandbox.commands.list();
    const entry = listed.find((p) => p.pid === handle.pid);
    assert.deepEqual(entry, { pid: handle.pid, args: ['-l', '-c', 'sleep 30'], envs: {}, cmd: '/bin/bash' });
    assert.equal(await sandbox.commands.kill(handle.pid), true);
    await assert.rejects(handle.wait(), (err) => {
      assert.ok(err instanceof CommandExitError);
      assert.equal(err.exitCode, -1);
      assert.equal(err.error, 'signal: killed');
      return true;
    });
    assert.equal(await sandbox.commands.kill(handle.pid), false, 'not found once gone');
    assert.ok(!(await sandbox.commands.list()).some((p) => p.pid === handle.pid));
  });

  test('sendStdin and closeStdin to a background command started with stdin: true', async () => {
    const seen = [];
    const handle = await sandbox.commands.run('cat', { background: true, stdin: true, onStdout: (d) => seen.push(d) });
    await sandbox.commands.sendStdin(handle.pid, 'first\n');
    await until(() => seen.join('') === 'first\n', 'echo of the first line');
    await handle.sendStdin('second\n');
    await sandbox.commands.closeStdin(handle.pid);
    const r = await handle.wait();
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'first\nsecond\n');
  });

  test('commands.connect(pid) to a running command sees its later output', async () => {
    const original = await sandbox.commands.run('while read line; do echo "got $line"; done', { background: true, stdin: true });
    const later = [];
    const connected = await sandbox.commands.connect(original.pid, { onStdout: (d) => later.push(d) });
    assert.equal(connected.pid, original.pid);
    await sandbox.commands.sendStdin(original.pid, 'hello\n');
    await until(() => later.join('') === 'got hello\n', 'the connected handle sees new output');
    await connected.closeStdin();
    const [a, b] = await Promise.all([original.wait(), connected.wait()]);
    assert.equal(a.stdout, 'got hello\n');
    assert.equal(b.stdout, 'got hello\n');
    assert.equal(b.exitCode, 0);
  });

  test('pty.create, pty.sendInput, pty.resize: stty size follows', async () => {
    const decoder = new TextDecoder();
    let text = '';
    const pty = await sandbox.pty.create({ cols: 80, rows: 24, onData: (d) => { text += decoder.decode(d, { stream: true }); } });
    const input = (s) => sandbox.pty.sendInput(pty.pid, new TextEncoder().encode(s));
    await input('stty size\n');
    await until(() => text.includes('24 80'), `initial size in ${JSON.stringify(text)}`);
    await sandbox.pty.resize(pty.pid, { cols: 100, rows: 30 });
    await input('stty size\n');
    await until(() => text.includes('30 100'), `new size in ${JSON.stringify(text)}`);
    await input('exit\n');
    const r = await pty.wait();
    assert.equal(r.exitCode, 0);
  });

  test('pty.kill ends the terminal', async () => {
    const pty = await sandbox.pty.create({ cols: 40, rows: 10, onData: () => {} });
    assert.equal(await sandbox.pty.kill(pty.pid), true);
    await assert.rejects(pty.wait(), (err) => err instanceof CommandExitError && err.exitCode === -1);
  });

  test('run with a small timeoutMs on sleep 30: TimeoutError, and the process is killed', async () => {
    const before = new Set((await sandbox.commands.list()).map((p) => p.pid));
    await assert.rejects(sandbox.commands.run('sleep 30', { timeoutMs: 500 }), (err) => {
      assert.ok(err instanceof TimeoutError, `${err.constructor.name}: ${err.message}`);
      return true;
    });
    await until(async () => (await sandbox.commands.list()).every((p) => before.has(p.pid)), 'the timed-out process is gone');
  });

  test('user: root, user and our own name are accepted; an unknown user is an AuthenticationError', async () => {
    // Without isolation the backend's own user name is accepted too.
    for (const user of backend.isolation === 'full' ? ['root', 'user'] : ['root', 'user', userInfo().username]) {
      assert.equal((await sandbox.commands.run('true', { user })).exitCode, 0, user);
    }
    await assert.rejects(sandbox.commands.run('true', { user: 'nobody-here' }), AuthenticationError);
  });

  test('killing the sandbox ends its commands', async () => {
    const other = await Sandbox.create('base', opts);
    const handle = await other.commands.run('sleep 100', { background: true });
    const hostPid = backend.hostPid(other.sandboxId, handle.pid);
    assert.ok(alive(hostPid));
    assert.equal(await other.kill(), true);
    if (backend.isolation === 'full') {
      // As with E2B: the stream's connection drops, the SDK probes /health
      // (502 now) and reports the sandbox as killed.
      await assert.rejects(handle.wait(), (err) => err instanceof TimeoutError && /killed/.test(err.message));
    } else {
      await assert.rejects(handle.wait(), CommandExitError);
    }
    await until(() => !alive(hostPid), 'the process is gone');
  });
});
