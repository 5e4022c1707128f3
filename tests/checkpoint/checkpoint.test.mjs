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
import { envdClient, dataOf } from '../../host/connect.mjs';
import { sandboxPids } from '../cgroup2/cgroup2-lib.mjs';

const probe = await startBackend({});
const details = (await api(probe, 'GET', '/health/details')).json;
await probe.stop();
const skip = process.getuid() !== 0 ? 'needs root' : !details.checkpoint?.available && `no checkpoints here: ${details.checkpoint?.reason}`;
const forceRun = process.env.E2BW_CKPT_FORCE === "1";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The counter: a token and a number in the shell's memory, its pid, written
// to /tmp/c every 0.2 s; and a python server on port 8080 whose answer is
// a token it drew at its start.
const START = `setsid bash -c 'tok=$RANDOM$RANDOM; i=0; while :; do i=$((i+1)); echo "$$ $tok $i" > /tmp/c.new; mv /tmp/c.new /tmp/c; sleep 0.2; done' </dev/null >/dev/null 2>&1 &
setsid python3 -c '
import http.server, secrets
tok = secrets.token_hex(8).encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(tok)
    def log_message(self, *a): pass
http.server.HTTPServer(("0.0.0.0", 8080), H).serve_forever()' </dev/null >/dev/null 2>&1 &
sleep 1.5; cat /tmp/c`;
const READ = 'cat /tmp/c; echo; curl -s --max-time 5 http://127.0.0.1:8080/ || python3 -c "import urllib.request; print(urllib.request.urlopen(\'http://127.0.0.1:8080/\', timeout=5).read().decode())"';

function parse(out) {
  const [pid, tok, n] = out.trim().split('\n')[0].split(' ');
  return { pid, tok, n: Number(n), served: out.trim().split('\n').slice(1).join('').trim() };
}

// A bash script run to its end in the sandbox, through backend b's envd.
async function run(b, { id, token }, script) {
  const envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: id, token });
  const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } });
  return dataOf(r.messages).stdout.toString();
}

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

// A new sandbox of b with the counter and the server started.
async function counting(b) {
  const created = await api(b, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 1800 });
  assert.equal(created.status, 201);
  const sb = { id: created.json.sandboxID, token: created.json.envdAccessToken };
  sb.envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: sb.id, token: sb.token });
  await run(b, sb, START);
  sb.first = parse(await run(b, sb, READ));
  assert.ok(sb.first.n >= 1 && sb.first.served.length === 16, JSON.stringify(sb.first));
  return sb;
}

// The same processes, with their memory, counting on.
async function check(b, sb, label) {
  const now = parse(await run(b, sb, READ));
  assert.equal(now.pid, sb.first.pid, `${label}: the same process`);
  assert.equal(now.tok, sb.first.tok, `${label}: its token, held in memory`);
  assert.ok(now.n >= sb.first.n, `${label}: it counts on from ${sb.first.n} (now ${now.n})`);
  assert.equal(now.served, sb.first.served, `${label}: the server is the same process`);
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
