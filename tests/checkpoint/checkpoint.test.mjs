// Pause that keeps processes (docs/backend/state.md, "Pause"): where CRIU
// works (the cgroup v2 guest, tests/guest/: Debian 12's kernel and criu),
// a pause checkpoints a sandbox's whole tree to disk and ends it, and
// resume brings back the same processes with their memory: within one
// backend, after a clean restart and after a SIGKILL of the backend. A
// process holds a random token and a counter in memory only (what it
// writes out is a readout); a server listens; a command started through
// envd keeps its output stream. Where `criu check` fails (a kernel newer
// than Debian's criu), every test here is skipped with the reason: the
// fallback is tested on the host (tests/node/backend-pause.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackend, api } from '../../host/backend.mjs';
import { dataOf } from '../../host/connect.mjs';
import { skip, forceRun, sleep, run, counting, check } from './checkpoint-lib.mjs';
import { sandboxPids } from '../cgroup2/cgroup2-lib.mjs';

async function pauseCheckpoint(b, sb) {
  const r = await api(b, 'POST', `/sandboxes/${sb.id}/pause`, {});
  assert.equal(r.status, 204);
  const info = (await api(b, 'GET', `/sandboxes/${sb.id}`)).json;
  assert.equal(info.pause?.kind, 'checkpoint', JSON.stringify(info.pause) + b.stderr());
  assert.deepEqual(sandboxPids(sb.id), [], 'a checkpointed sandbox keeps no process');
  // Searchable by all: CRIU's restored root task opens an image before its
  // user namespace has id maps (a race a restore lost now and then).
  const mode = statSync(path.join(b.stateDir, 'sandboxes', sb.id, 'checkpoint')).mode & 0o777;
  assert.equal(mode.toString(8), '711', 'the image directory is searchable by all');
}

// CRIU's log of a failed restore, kept with the image.
const restoreLog = (b, id) => {
  try { return readFileSync(path.join(b.stateDir, 'sandboxes', id, 'checkpoint', 'restore.log'), 'utf8').slice(-6000); } catch { return ''; }
};

async function resume(b, sb) {
  const r = await api(b, 'POST', `/sandboxes/${sb.id}/resume`, { timeout: 900 });
  assert.equal(r.status, 201, JSON.stringify(r.json) + b.stderr() + restoreLog(b, sb.id));
}

test('a checkpointed sandbox keeps its processes and their memory: within a run, after a restart and after a SIGKILL', { skip: forceRun ? false : skip, timeout: 600_000 }, async () => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-ckpt-'));
  const apiKey = 'e2b_checkpoint_test_key';
  let b = await startBackend({ stateDir, apiKey });
  try {
    const a = await counting(b);
    const restarted = await counting(b);
    // An envd command whose stream stays open across the pause.
    const streamed = a.envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', 'for i in $(seq 1 60); do echo tick$i; sleep 0.3; done'] } }, { timeoutMs: 300_000 });
    streamed.catch(() => {}); // awaited below; a failure before must not be unhandled
    await sleep(1500);
    await pauseCheckpoint(b, a);
    await resume(b, a);
    await check(b, a, 'pause and resume');
    const ticks = await streamed;
    assert.match(dataOf(ticks.messages).stdout.toString(), /tick60/, 'the envd stream carried on to its end across the checkpoint');

    await pauseCheckpoint(b, restarted);
    await b.stop();
    b = await startBackend({ stateDir, apiKey });
    const info = (await api(b, 'GET', `/sandboxes/${restarted.id}`)).json;
    assert.equal(info.pause?.kind, 'checkpoint', JSON.stringify(info));
    await resume(b, restarted);
    await check(b, restarted, 'a clean restart');

    const killed = await counting(b);
    await pauseCheckpoint(b, killed);
    await b.stop('SIGKILL');
    b = await startBackend({ stateDir, apiKey });
    await resume(b, killed);
    await check(b, killed, 'a SIGKILL of the backend');
  } catch (e) {
    throw new Error(`${e.stack}\n--- backend:\n${b.stderr()}`);
  } finally {
    await b.stop().catch(() => {});
    rmSync(stateDir, { recursive: true, force: true });
  }
});

// Frames of an open envd stream s read until pred(text of its pty output so
// far) holds; the text. Frames read earlier are in seen.
async function ptyUntil(s, seen, pred, label, ms = 120_000) {
  const deadline = Date.now() + ms;
  const text = () => Buffer.concat(seen.map((m) => Buffer.from(m?.event?.data?.pty ?? '', 'base64'))).toString();
  while (!pred(text())) {
    if (Date.now() > deadline) throw new Error(`${label}: not seen in ${ms} ms; pty output:\n${text().slice(-2000)}`);
    s.pending ??= s.next(); // kept across a timeout: its frame is not lost
    let timer;
    const late = new Promise((r) => { timer = setTimeout(r, Math.max(1, deadline - Date.now()), 'late'); });
    const f = await Promise.race([s.pending, late]).finally(() => clearTimeout(timer));
    if (f === 'late') continue;
    s.pending = null;
    if (!f || f.end) throw new Error(`${label}: the stream ended; pty output:\n${text().slice(-2000)}`);
    seen.push(f.message);
  }
  return text();
}

// The pty lines "pty <pid> <token> <n>" of a text.
const ptyLines = (text) => [...text.matchAll(/pty (\d+) (\d+) (\d+)/g)].map((m) => ({ pid: m[1], tok: m[2], n: Number(m[3]) }));

test('a pty command carries on across checkpoints (its pid, its memory, its output and input), and a restored sandbox is checkpointed again', { skip: forceRun ? false : skip, timeout: 600_000 }, async () => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-ckpt-'));
  const b = await startBackend({ stateDir, apiKey: 'e2b_checkpoint_test_key' });
  try {
    const sb = await counting(b);
    const script = 'tok=$RANDOM$RANDOM; i=0; while :; do i=$((i+1)); echo "pty $$ $tok $i"; if read -t 0.3 line; then echo "got:$line"; fi; done';
    const s = await sb.envd.open('process.Process/Start', {
      process: { cmd: '/bin/bash', args: ['-c', script], envs: { TERM: 'xterm' } }, pty: { size: { cols: 80, rows: 24 } },
    }, { timeoutMs: 600_000 });
    const seen = [];
    const first = await s.next();
    const pid = String(first.message.event.start.pid);
    const input = (text) => sb.envd.call('process.Process/SendInput', { process: { pid: Number(pid) }, input: { pty: Buffer.from(text).toString('base64') } });
    const before = ptyLines(await ptyUntil(s, seen, (t) => ptyLines(t).length >= 3, 'the first lines'));
    assert.equal(before[0].pid, pid, 'the pty command prints the pid envd gave');
    for (const round of [1, 2]) {
      const last = ptyLines(await ptyUntil(s, seen, (t) => ptyLines(t).length >= 1, 'lines')).at(-1);
      await pauseCheckpoint(b, sb);
      await resume(b, sb);
      await check(b, sb, `round ${round}`);
      const after = await ptyUntil(s, seen, (t) => ptyLines(t).at(-1).n > last.n + 2, `round ${round}: counting on`);
      const next = ptyLines(after).at(-1);
      assert.equal(next.pid, pid, `round ${round}: the same pty process`);
      assert.equal(next.tok, before[0].tok, `round ${round}: its token, held in memory`);
      assert.equal((await input(`round${round}\r`)).status, 200, `round ${round}: input reaches the pty`);
      await ptyUntil(s, seen, (t) => t.includes(`got:round${round}`), `round ${round}: the command read the input`);
    }
    assert.equal((await sb.envd.call('process.Process/SendSignal', { process: { pid: Number(pid) }, signal: 'SIGNAL_SIGKILL' })).status, 200);
    let end;
    for (let f; (f = await (s.pending ?? s.next())); s.pending = null) if (f.message?.event?.end) end = f.message.event.end;
    assert.equal(end?.status, 'signal: killed', JSON.stringify(end));
  } catch (e) {
    throw new Error(`${e.stack}\n--- backend:\n${b.stderr()}`);
  } finally {
    await b.stop().catch(() => {});
    rmSync(stateDir, { recursive: true, force: true });
  }
});
