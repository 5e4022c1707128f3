// envd's process.Process service on the local backend, over the Connect
// protocol with our own tiny client (host/connect.mjs), following
// docs/e2b-protocol-notes.md ("Reaching envd" to "Process service"). Assertions are about behaviour and memory,
// never about how long something took: waits are "until X happens" loops.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { readFileSync, readdirSync, readlinkSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startBackend, api } from '../../host/backend.mjs';
import { sleep, until } from '../../host/wait.mjs';
import { envdClient, dataOf, encodeEnvelope } from '../../host/connect.mjs';

const MiB = 1024 * 1024;
const T = { timeout: 60_000 }; // a hang is a failure, not a stuck run

// A process is alive when /proc has it and it is not a zombie.
function procState(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0];
  } catch {
    return null;
  }
}
const alive = (pid) => { const s = procState(pid); return s !== null && s !== 'Z' && s !== 'X'; };

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

// Children of pid that are zombies (exited but never reaped).
function zombieChildren(pid) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[1]) === pid && rest[0] === 'Z') out.push(Number(name));
  }
  return out;
}

// Pipes and PTY masters the backend holds (sockets vary with client pools).
function processFds(pid) {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target;
    try { target = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
    if (target.startsWith('pipe:') || target.startsWith('/dev/ptmx') || target.startsWith('/dev/pts')) n++;
  }
  return n;
}


const sh = (script, extra = {}) => ({ process: { cmd: '/bin/sh', args: ['-c', script] }, ...extra });
const events = (messages) => messages.map((m) => Object.keys(m.event)[0]);
const endOf = (messages) => messages.find((m) => m.event.end)?.event.end;
const pidOf = (messages) => messages[0]?.event?.start?.pid;

async function createSandbox(backend, body = {}, { v1 = false } = {}) {
  const res = await api(backend, 'POST', v1 ? '/sandboxes' : '/v2/sandboxes', { templateID: 'base', ...body });
  assert.equal(res.status, 201);
  return res.json;
}

// Reads frames of a live stream until pred(frame, all) holds; returns all read so far.
async function readUntil(s, pred, what) {
  const seen = [];
  for (;;) {
    const f = await s.next();
    if (!f) assert.fail(`stream ended before ${what}: ${JSON.stringify(seen.map((x) => x.message))}`);
    seen.push(f);
    if (pred(f, seen)) return seen;
  }
}
const textOf = (frames, key = 'stdout') => dataOf(frames.filter((f) => !f.end).map((f) => f.message))[key].toString();

describe('envd process.Process', () => {
  let backend;
  let sb;      // a secure (v2) sandbox with envVars
  let envd;    // a client for it

  before(async () => {
    backend = await startBackend();
    sb = await createSandbox(backend, { envVars: { FROM_SANDBOX: 'sb', SHARED: 'sandbox' } });
    envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken });
  });

  after(async () => {
    const { code, signal } = await backend.stop();
    assert.equal(signal, null);
    assert.equal(code, 0, backend.stderr());
    assert.ok(!backend.stderr().includes(sb.envdAccessToken), 'tokens are never logged');
  });

  // Inside a sandbox (isolation full) home is /home/user of its own root;
  // without isolation it is the sandbox's directory on the host.
  const full = () => backend.isolation === 'full';
  const home = () => (full() ? '/home/user' : path.join(backend.stateDir, 'sandboxes', sb.sandboxID));
  const onHost = (p, id = sb.sandboxID) => backend.sandboxPath(id, p); // a sandbox path seen from the host
  const hostPid = (nsPid, id = sb.sandboxID) => backend.hostPid(id, nsPid);

  test('Start: start event, stdout and stderr data, end, end-stream {}', T, async (t) => {
    const r = await envd.stream('process.Process/Start', sh('echo out; echo err >&2'));
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'application/connect+json');
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(r.end, {});
    const kinds = events(r.messages);
    assert.equal(kinds[0], 'start');
    assert.equal(kinds.at(-1), 'end');
    assert.equal(kinds.filter((k) => k === 'start' || k === 'end').length, 2);
    assert.ok(Number.isInteger(pidOf(r.messages)) && pidOf(r.messages) > 0);
    const { stdout, stderr } = dataOf(r.messages);
    assert.equal(stdout.toString(), 'out\n');
    assert.equal(stderr.toString(), 'err\n');
    assert.deepEqual(endOf(r.messages), { exited: true, status: 'exit status 0' });
  });

  test('exit codes and signals in the end event (protobuf-JSON defaults omitted)', T, async (t) => {
    let r = await envd.stream('process.Process/Start', sh('exit 3'));
    assert.deepEqual(endOf(r.messages), { exitCode: 3, exited: true, status: 'exit status 3', error: 'exit status 3' });
    r = await envd.stream('process.Process/Start', sh('kill -TERM $$'));
    assert.deepEqual(endOf(r.messages), { exitCode: -1, status: 'signal: terminated', error: 'signal: terminated' });
    r = await envd.stream('process.Process/Start', sh('kill -KILL $$'));
    assert.deepEqual(endOf(r.messages), { exitCode: -1, status: 'signal: killed', error: 'signal: killed' });
    r = await envd.stream('process.Process/Start', sh('kill -INT $$'));
    assert.equal(endOf(r.messages).status, 'signal: interrupt');
    r = await envd.stream('process.Process/Start', { process: { cmd: 'no-such-command-e2b' } });
    assert.equal(events(r.messages)[0], 'start', 'like envd (which runs /bin/sh), a missing program still starts');
    assert.equal(endOf(r.messages).exitCode, 127);
    assert.match(dataOf(r.messages).stderr.toString(), /no-such-command-e2b/);
  });

  test('a SIGTERM sent the moment a process starts ends that process, never the backend', T, async () => {
    // The child is born with the backend's signal handlers; until it resets
    // them, a signal for it would run the backend's (which share its event
    // loop's socket) and shut the whole backend down.
    for (let i = 0; i < 25; i++) {
      const s = await envd.open('process.Process/Start', sh('exec sleep 30'));
      const pid = (await s.next()).message.event.start.pid;
      assert.equal((await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGTERM' })).status, 200);
      let frame, end;
      while ((frame = await s.next()) && !frame.end) end = frame.message.event.end || end;
      assert.equal(end?.status, 'signal: terminated', `round ${i}`);
    }
    assert.equal((await fetch(`${backend.apiUrl}/health`)).status, 204, 'the backend is still serving');
  });

  test('environment: PATH, HOME, USER, LOGNAME, then sandbox envVars, then request envs', T, async (t) => {
    const r = await envd.stream('process.Process/Start', {
      process: { cmd: '/bin/sh', args: ['-c', 'echo "$HOME|$USER|$LOGNAME|$FROM_SANDBOX|$SHARED|$REQ"; test -n "$PATH"'], envs: { SHARED: 'request', REQ: 'r' } },
    });
    const user = full() ? 'user' : (await import('node:os')).userInfo().username;
    assert.equal(dataOf(r.messages).stdout.toString(), `${home()}|${user}|${user}|sb|request|r\n`);
    assert.deepEqual(endOf(r.messages), { exited: true, status: 'exit status 0' });
  });

  test('commands started at once each run with their own arguments, environment, working directory and user', T, async (t) => {
    // The sandbox's init starts each in its own memory until it executes:
    // a command must never see what the init prepared for the next.
    if (!full()) { t.skip('the init starts commands with full isolation only'); return; }
    const runs = await Promise.all(Array.from({ length: 40 }, (_, i) => envd.stream('process.Process/Start', {
      process: { cmd: '/bin/sh', args: ['-c', 'echo "$1|$X|$(pwd)|$(id -u)"', 'sh', `arg${i}`], envs: { X: `env${i}` }, ...(i % 2 ? { cwd: '/tmp' } : {}) },
    }, i % 3 ? {} : { user: 'root' })));
    runs.forEach((r, i) => {
      const cwd = i % 2 ? '/tmp' : i % 3 ? '/home/user' : '/root';
      assert.equal(dataOf(r.messages).stdout.toString(), `arg${i}|env${i}|${cwd}|${i % 3 ? 1000 : 0}\n`, `command ${i}`);
      assert.deepEqual(endOf(r.messages), { exited: true, status: 'exit status 0' });
    });
  });

  test('cwd: default home, absolute, ~, relative, missing → invalid_argument', T, async (t) => {
    mkdirSync(onHost(path.join(home(), 'sub')), { recursive: true });
    const pwd = async (cwd) => {
      const r = await envd.stream('process.Process/Start', { process: { cmd: 'pwd', ...(cwd === undefined ? {} : { cwd }) } });
      return { out: dataOf(r.messages).stdout.toString().trim(), r };
    };
    assert.equal((await pwd(undefined)).out, home());
    assert.equal((await pwd('')).out, home());
    assert.equal((await pwd('/tmp')).out, '/tmp');
    assert.equal((await pwd('~')).out, home());
    assert.equal((await pwd('~/sub')).out, path.join(home(), 'sub'));
    assert.equal((await pwd('sub/../sub')).out, path.join(home(), 'sub'));
    const missing = await pwd('/nope/not/here');
    assert.equal(missing.r.status, 200, 'streaming errors are end-stream frames on HTTP 200');
    assert.deepEqual(missing.r.messages, [], 'no start event when the process could not start');
    assert.deepEqual(missing.r.end, { error: { code: 'invalid_argument', message: "cwd '/nope/not/here' does not exist" } });
    const rel = await pwd('nope');
    assert.equal(rel.r.end.error.message, `cwd '${path.join(home(), 'nope')}' does not exist`);
    const other = await pwd('~root');
    assert.equal(other.r.end.error.code, 'invalid_argument');
  });

  test('no descriptor of the backend leaks into a process', T, async (t) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: 'ls', args: ['-1', '/proc/self/fd'] } });
    // 0-2 are the pipes; 3 is the directory ls itself is reading.
    assert.deepEqual(dataOf(r.messages).stdout.toString().trim().split('\n'), ['0', '1', '2', '3']);
  });

  test('stdin: SendInput then CloseStdin round trip; stdin absent means true', T, async (t) => {
    for (const msg of [{ process: { cmd: 'cat' }, stdin: true }, { process: { cmd: 'cat' } }]) {
      const s = await envd.open('process.Process/Start', msg);
      const first = await s.next();
      const pid = first.message.event.start.pid;
      assert.deepEqual((await envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: Buffer.from('hello\n').toString('base64') } })).json, {});
      const got = await readUntil(s, (f, all) => textOf(all) === 'hello\n', 'the echo');
      assert.equal(textOf(got), 'hello\n');
      // int as string and URL-safe, unpadded base64 are accepted too
      const input = Buffer.from('?>?>').toString('base64url');
      assert.equal((await envd.call('process.Process/SendInput', { process: { pid: String(pid) }, input: { stdin: input } })).status, 200);
      const res = await envd.call('process.Process/CloseStdin', { process: { pid } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, {});
      const rest = [];
      for (let f; (f = await s.next());) rest.push(f);
      assert.equal(textOf(rest), '?>?>');
      assert.deepEqual(rest.at(-2).message.event.end, { exited: true, status: 'exit status 0' });
      assert.deepEqual(rest.at(-1).message, {});
    }
  });

  test('stdin false is /dev/null: SendInput fails with internal', T, async (t) => {
    const s = await envd.open('process.Process/Start', { process: { cmd: 'sleep', args: ['30'] }, stdin: false });
    const pid = (await s.next()).message.event.start.pid;
    const res = await envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: 'eA==' } });
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { code: 'internal', message: 'error writing to stdin: stdin not enabled or closed' });
    // closing a disabled stdin is not an error in envd
    assert.equal((await envd.call('process.Process/CloseStdin', { process: { pid } })).status, 200);
    assert.equal((await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' })).status, 200);
    const rest = [];
    for (let f; (f = await s.next());) rest.push(f);
    assert.equal(rest.at(-2).message.event.end.status, 'signal: killed');
  });

  test('stdin closed: SendInput fails with internal', T, async (t) => {
    const s = await envd.open('process.Process/Start', { process: { cmd: 'sleep', args: ['30'] }, stdin: true });
    const pid = (await s.next()).message.event.start.pid;
    assert.equal((await envd.call('process.Process/CloseStdin', { process: { pid } })).status, 200);
    const res = await envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: 'eA==' } });
    assert.deepEqual(res.json, { code: 'internal', message: 'error writing to stdin: stdin not enabled or closed' });
    await envd.call('process.Process/SendSignal', { process: { pid }, signal: 9 });
    while (await s.next());
  });

  test('keepalives on a quiet process with Keepalive-Ping-Interval: 0.2', T, async (t) => {
    const s = await envd.open('process.Process/Start', { process: { cmd: 'cat' } }, { headers: { 'Keepalive-Ping-Interval': '0.2' } });
    const seen = await readUntil(s, (f, all) => all.filter((x) => x.message.event?.keepalive).length >= 2, 'two keepalives');
    assert.ok(seen[0].message.event.start);
    assert.deepEqual(seen.at(-1).message, { event: { keepalive: {} } });
    const pid = seen[0].message.event.start.pid;
    await envd.call('process.Process/CloseStdin', { process: { pid } });
    const rest = [];
    for (let f; (f = await s.next());) rest.push(f);
    assert.ok(rest.at(-2).message.event.end);
  });

  test('Connect-Timeout-Ms on Start is the process lifetime: sleep 100 is killed, deadline_exceeded', T, async (t) => {
    const r = await envd.stream('process.Process/Start', { process: { cmd: 'sleep', args: ['100'] } }, { timeoutMs: 300 });
    assert.equal(r.status, 200);
    assert.equal(events(r.messages)[0], 'start');
    assert.deepEqual(r.end, { error: { code: 'deadline_exceeded', message: 'context deadline exceeded' } });
    const pid = pidOf(r.messages);
    await until(() => !alive(hostPid(pid)), `pid ${pid} killed`);
    await until(async () => !((await envd.call('process.Process/List', {})).json.processes ?? []).some((p) => p.pid === pid), 'gone from List');
  });

  test('data events carry at most 32 KiB and arrive in order, byte-exact', T, async (t) => {
    const blob = randomBytes(300 * 1024 + 7);
    writeFileSync(onHost(path.join(home(), 'blob.bin')), blob);
    const r = await envd.stream('process.Process/Start', { process: { cmd: 'cat', args: ['blob.bin'] } });
    const chunks = r.messages.filter((m) => m.event.data).map((m) => Buffer.from(m.event.data.stdout, 'base64'));
    assert.ok(chunks.length >= 10);
    for (const c of chunks) assert.ok(c.length > 0 && c.length <= 32 * 1024, `chunk of ${c.length} bytes`);
    assert.ok(Buffer.concat(chunks).equals(blob));
  });

  test('50 MiB of output streams through with bounded backend memory', T, async (t) => {
    const baseline = rssBytes(backend.pid);
    let peak = baseline;
    const s = await envd.open('process.Process/Start', { process: { cmd: 'head', args: ['-c', String(50 * MiB), '/dev/zero'] } });
    let total = 0;
    let frames = 0;
    let end;
    for (let f; (f = await s.next());) {
      if (++frames % 64 === 0) peak = Math.max(peak, rssBytes(backend.pid));
      const d = f.message.event?.data?.stdout;
      if (d) total += Buffer.from(d, 'base64').length;
      if (f.message.event?.end) end = f.message.event.end;
    }
    peak = Math.max(peak, rssBytes(backend.pid));
    assert.equal(total, 50 * MiB);
    assert.deepEqual(end, { exited: true, status: 'exit status 0' });
    t.diagnostic(`backend RSS: baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB`);
    assert.ok(peak < 64 * MiB, `backend RSS peaked at ${(peak / MiB).toFixed(1)} MiB (baseline ${(baseline / MiB).toFixed(1)} MiB)`);
  });

  test('a slow reader applies backpressure: the process waits, the backend does not buffer', T, async (t) => {
    // 1 GiB that nobody could buffer; the client reads a little, slowly.
    const s = await envd.open('process.Process/Start', { process: { cmd: 'head', args: ['-c', String(1024 * MiB), '/dev/zero'] } });
    const pid = (await s.next()).message.event.start.pid;
    let peak = 0;
    let read = 0;
    while (read < 2 * MiB) {
      const n = await s.readRaw();
      assert.ok(n !== null, 'stream ended early');
      read += n;
      s.takeQueued();
      peak = Math.max(peak, rssBytes(backend.pid));
      await sleep(5);
    }
    // Whatever the kernel and client buffered, the process cannot have got
    // far: it is still there, blocked on its pipe.
    assert.ok(alive(hostPid(pid)), 'the writer is still running');
    const listed = (await envd.call('process.Process/List', {})).json.processes.map((p) => p.pid);
    assert.ok(listed.includes(pid));
    t.diagnostic(`backend RSS peak ${(peak / MiB).toFixed(1)} MiB while the client read ${(read / MiB).toFixed(1)} MiB slowly`);
    assert.ok(peak < 64 * MiB, `backend RSS peaked at ${(peak / MiB).toFixed(1)} MiB`);
    assert.equal((await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' })).status, 200);
    let end;
    for (let f; (f = await s.next());) if (f.message.event?.end) end = f.message.event.end;
    assert.equal(end.status, 'signal: killed');
    assert.ok(rssBytes(backend.pid) < 64 * MiB);
  });

  test('fan-out: a subscriber that does not read holds the process back; once it leaves the others continue', T, async (t) => {
    const a = await envd.open('process.Process/Start', { process: { cmd: 'cat', args: ['/dev/zero'] }, stdin: false });
    const pid = (await a.next()).message.event.start.pid;
    const b = await envd.open('process.Process/Connect', { process: { pid } }); // never read
    const readRaw = async (bytes) => {
      let n = 0;
      while (n < bytes) {
        const got = await a.readRaw();
        assert.ok(got !== null, 'A ended early');
        n += got;
        a.takeQueued();
      }
    };
    // B's share of the backend buffer (1 MiB of envelopes) alone lets A see this much.
    await readRaw(512 * 1024);
    let peak = rssBytes(backend.pid);
    b.cancel();
    // Had the backend kept the departed (blocked) subscriber, A would stall here.
    await readRaw(32 * MiB);
    peak = Math.max(peak, rssBytes(backend.pid));
    t.diagnostic(`backend RSS peak ${(peak / MiB).toFixed(1)} MiB`);
    assert.ok(peak < 64 * MiB);
    await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' });
    let end;
    for (let f; (f = await a.next());) if (f.message.event?.end) end = f.message.event.end;
    assert.equal(end.status, 'signal: killed');
  });

  test('large input is queued without blocking the backend; SendInput and CloseStdin answer once it is written', T, async () => {
    // The process does not read stdin until we open the FIFO gate.
    const gate = onHost(path.join(home(), 'gate.fifo'));
    execFileSync('mkfifo', [gate]);
    const s = await envd.open('process.Process/Start', sh('cat gate.fifo >/dev/null; cat'));
    const pid = (await s.next()).message.event.start.pid;
    const input = randomBytes(700 * 1024); // far more than a pipe holds
    const logged = (method) => backend.stderr().split('\n').filter((l) => l === `envd POST /process.Process/${method} 200`).length;
    const sentBefore = logged('SendInput');
    const closedBefore = logged('CloseStdin');
    let sendDone = false;
    const send = envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: input.toString('base64') } })
      .then((r) => { sendDone = true; return r; });
    await until(() => logged('SendInput') > sentBefore, 'SendInput reached the backend');
    const close = envd.call('process.Process/CloseStdin', { process: { pid } });
    await until(() => logged('CloseStdin') > closedBefore, 'CloseStdin reached the backend');
    // Meanwhile the backend still answers other requests.
    assert.equal((await envd.call('process.Process/List', {})).status, 200);
    assert.equal(sendDone, false, 'SendInput is held while its bytes wait for the process');
    writeFileSync(gate, ''); // opens and closes the FIFO: the process starts reading
    const [sent, closed] = await Promise.all([send, close]);
    assert.deepEqual(sent.json, {});
    assert.deepEqual(closed.json, {});
    const rest = [];
    for (let f; (f = await s.next());) rest.push(f);
    const out = dataOf(rest.filter((f) => !f.end).map((f) => f.message)).stdout;
    assert.ok(out.equals(input), `echoed ${out.length} of ${input.length} bytes`);
    assert.deepEqual(rest.at(-2).message.event.end, { exited: true, status: 'exit status 0' });
  });

  test('a client disconnecting mid-stream: the process keeps running and can be re-attached', T, async (t) => {
    // An endless writer, so the stream is backpressured when we hang up.
    const s = await envd.open('process.Process/Start', { process: { cmd: 'cat', args: ['/dev/zero'] }, stdin: false });
    const pid = (await s.next()).message.event.start.pid;
    await readUntil(s, (f, all) => all.length > 20, 'some data');
    s.cancel();
    // The process lives on. Had the backend kept the gone (and backpressured)
    // subscriber, the process would stay blocked and a new stream would get
    // no data.
    assert.ok(alive(hostPid(pid)));
    const c = await envd.open('process.Process/Connect', { process: { pid } });
    assert.equal(c.status, 200);
    assert.deepEqual((await c.next()).message, { event: { start: { pid } } });
    const data = await c.next();
    assert.ok(data.message.event.data.stdout.length > 0, 're-attached stream gets live data');
    await envd.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' });
    let end;
    for (let f; (f = await c.next());) if (f.message.event?.end) end = f.message.event.end;
    assert.equal(end.status, 'signal: killed');
  });

  test('Connect from a second client sees live data (fan-out), no replay of earlier output', T, async (t) => {
    const a = await envd.open('process.Process/Start', { process: { cmd: 'cat' }, tag: 'fanout' });
    const pid = (await a.next()).message.event.start.pid;
    const send = (text) => envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: Buffer.from(text).toString('base64') } });
    await send('before\n');
    await readUntil(a, (f, all) => textOf(all) === 'before\n', 'first line on A');
    const b = await envd.open('process.Process/Connect', { process: { tag: 'fanout' } }, { headers: { 'Keepalive-Ping-Interval': '50' } });
    assert.equal(b.contentType, 'application/connect+json');
    assert.deepEqual((await b.next()).message, { event: { start: { pid } } });
    await send('after\n');
    const onA = await readUntil(a, (f, all) => textOf(all) === 'after\n', 'second line on A');
    const onB = await readUntil(b, (f, all) => textOf(all) === 'after\n', 'second line on B');
    assert.equal(textOf(onA), 'after\n');
    assert.equal(textOf(onB), 'after\n', 'B gets only what came after it connected');
    await envd.call('process.Process/CloseStdin', { process: { pid } });
    for (const s of [a, b]) {
      const rest = [];
      for (let f; (f = await s.next());) rest.push(f);
      assert.deepEqual(rest.at(-2).message.event.end, { exited: true, status: 'exit status 0' });
      assert.deepEqual(rest.at(-1).message, {});
    }
  });

  test('Connect after exit replays start + end (by pid and by tag); unknown → not_found', T, async (t) => {
    const r = await envd.stream('process.Process/Start', { ...sh('exit 7'), tag: 'done-tag' });
    const pid = pidOf(r.messages);
    const byPid = await envd.stream('process.Process/Connect', { process: { pid } });
    assert.deepEqual(byPid.messages, [
      { event: { start: { pid } } },
      { event: { end: { exitCode: 7, exited: true, status: 'exit status 7', error: 'exit status 7' } } },
    ]);
    assert.deepEqual(byPid.end, {});
    const byTag = await envd.stream('process.Process/Connect', { process: { tag: 'done-tag' } });
    assert.deepEqual(byTag.messages, byPid.messages);
    const unknown = await envd.stream('process.Process/Connect', { process: { pid: 999999999 } });
    assert.equal(unknown.status, 200);
    assert.deepEqual(unknown.messages, []);
    assert.deepEqual(unknown.end, { error: { code: 'not_found', message: 'process with pid 999999999 not found' } });
    const unknownTag = await envd.stream('process.Process/Connect', { process: { tag: 'nope' } });
    assert.deepEqual(unknownTag.end, { error: { code: 'not_found', message: 'process with tag nope not found' } });
  });

  test('unknown pid: not_found (404) on SendSignal, SendInput, CloseStdin, Update', T, async (t) => {
    const expect = { code: 'not_found', message: 'process with pid 999999999 not found' };
    for (const [method, body] of [
      ['SendSignal', { process: { pid: 999999999 }, signal: 'SIGNAL_SIGKILL' }],
      ['SendInput', { process: { pid: 999999999 }, input: { stdin: 'eA==' } }],
      ['CloseStdin', { process: { pid: 999999999 } }],
      ['Update', { process: { pid: 999999999 }, pty: { size: { cols: 10, rows: 10 } } }],
    ]) {
      const res = await envd.call(`process.Process/${method}`, body);
      assert.equal(res.status, 404, method);
      assert.match(res.headers.get('content-type'), /^application\/json/);
      assert.deepEqual(res.json, expect, method);
    }
    const noSelector = await envd.call('process.Process/SendSignal', { signal: 9 });
    assert.equal(noSelector.json.code, 'unimplemented');
    const bad = await envd.call('process.Process/SendSignal', { process: { pid: 'x' }, signal: 9 });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'invalid_argument');
  });

  test('List shows live processes only, with config, pid and tag', T, async (t) => {
    const s = await envd.open('process.Process/Start', {
      process: { cmd: 'sleep', args: ['30'], envs: { K: 'v' }, cwd: '/tmp' }, tag: 'listed', stdin: false,
    });
    const pid = (await s.next()).message.event.start.pid;
    const res = await envd.call('process.Process/List', {});
    assert.equal(res.status, 200);
    const entry = res.json.processes.find((p) => p.pid === pid);
    assert.deepEqual(entry, { config: { cmd: 'sleep', args: ['30'], envs: { K: 'v' }, cwd: '/tmp' }, pid, tag: 'listed' });
    await envd.call('process.Process/SendSignal', { process: { tag: 'listed' }, signal: 'SIGNAL_SIGKILL' });
    while (await s.next());
    const after = (await envd.call('process.Process/List', {})).json.processes ?? [];
    assert.ok(!after.some((p) => p.pid === pid), 'an ended process is not listed');
  });

  test('SendSignal: SIGTERM and SIGKILL (names or numbers) signal the process group; others unimplemented', T, async (t) => {
    for (const [signal, status] of [['SIGNAL_SIGTERM', 'signal: terminated'], [15, 'signal: terminated'], ['SIGNAL_SIGKILL', 'signal: killed'], [9, 'signal: killed']]) {
      // The shell waits on a child in the same group: both must get the signal.
      const s = await envd.open('process.Process/Start', sh('sleep 30 & echo $!; wait'));
      const first = await readUntil(s, (f, all) => textOf(all).endsWith('\n'), 'the child pid');
      const pid = first[0].message.event.start.pid;
      const child = Number(textOf(first).trim());
      const hostChild = hostPid(child);
      assert.ok(alive(hostChild));
      const bad = await envd.call('process.Process/SendSignal', { process: { pid }, signal: 2 });
      assert.deepEqual(bad.json, { code: 'unimplemented', message: 'invalid signal: 2' });
      assert.equal(bad.status, 501);
      const unspecified = await envd.call('process.Process/SendSignal', { process: { pid } });
      assert.equal(unspecified.json.code, 'unimplemented');
      const res = await envd.call('process.Process/SendSignal', { process: { pid }, signal });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, {});
      const rest = [];
      for (let f; (f = await s.next());) rest.push(f);
      assert.equal(rest.at(-2).message.event.end.status, status, String(signal));
      await until(() => !alive(hostChild), 'the child in the same group is gone');
    }
  });

  test('PTY: output as pty data, input.pty, Update resizes (stty size), ≤ 16 KiB chunks', T, async (t) => {
    const script = 'stty size; read line; echo "got:$line"; read again; stty size; head -c 100000 /dev/zero | tr "\\0" a; echo';
    const s = await envd.open('process.Process/Start', {
      process: { cmd: '/bin/sh', args: ['-c', script], envs: { TERM: 'xterm' } }, pty: { size: { cols: 80, rows: 24 } },
    });
    const pid = (await s.next()).message.event.start.pid;
    await readUntil(s, (f, all) => textOf(all, 'pty').includes('24 80'), 'initial size');
    const input = (text) => envd.call('process.Process/SendInput', { process: { pid }, input: { pty: Buffer.from(text).toString('base64') } });
    assert.equal((await input('hello\r')).status, 200);
    await readUntil(s, (f, all) => textOf(all, 'pty').includes('got:hello'), 'the echo');
    // stdin on a PTY process, CloseStdin on a PTY: envd's errors
    const wrong = await envd.call('process.Process/SendInput', { process: { pid }, input: { stdin: 'eA==' } });
    assert.equal(wrong.json.code, 'internal');
    assert.match(wrong.json.message, /^error writing to stdin: tty assigned to process/);
    const close = await envd.call('process.Process/CloseStdin', { process: { pid } });
    assert.equal(close.status, 500);
    assert.equal(close.json.code, 'unknown');
    const resized = await envd.call('process.Process/Update', { process: { pid }, pty: { size: { cols: 100, rows: 30 } } });
    assert.equal(resized.status, 200);
    assert.deepEqual(resized.json, {});
    await input('\r');
    const rest = [];
    for (let f; (f = await s.next());) rest.push(f);
    const out = textOf(rest, 'pty');
    assert.ok(out.includes('30 100'), out.slice(0, 200));
    assert.ok(out.includes('a'.repeat(1000)));
    for (const f of rest) {
      const d = f.message.event?.data;
      if (d) {
        assert.deepEqual(Object.keys(d), ['pty']);
        assert.ok(Buffer.from(d.pty, 'base64').length <= 16 * 1024);
      }
    }
    assert.deepEqual(rest.at(-2).message.event.end, { exited: true, status: 'exit status 0' });
  });

  test('Update and pty input on a pipe process: envd\'s internal errors; Update without pty is a no-op', T, async (t) => {
    const s = await envd.open('process.Process/Start', { process: { cmd: 'cat' } });
    const pid = (await s.next()).message.event.start.pid;
    const res = await envd.call('process.Process/Update', { process: { pid }, pty: { size: { cols: 1, rows: 1 } } });
    assert.deepEqual(res.json, { code: 'internal', message: 'error resizing tty: tty not assigned to process' });
    assert.equal((await envd.call('process.Process/Update', { process: { pid } })).status, 200);
    const pty = await envd.call('process.Process/SendInput', { process: { pid }, input: { pty: 'eA==' } });
    assert.equal(pty.json.code, 'internal');
    assert.match(pty.json.message, /^error writing to tty: tty not assigned to process/);
    await envd.call('process.Process/CloseStdin', { process: { pid } });
    while (await s.next());
  });

  test('auth: X-Access-Token required (401 envd JSON); Basic users root, user and our own; others unauthenticated', T, async (t) => {
    const expect401 = { code: 401, message: 'unauthorized access, please provide a valid access token or method signing if supported' };
    for (const token of [null, 'wrong']) {
      const list = await envd.call('process.Process/List', {}, { token });
      assert.equal(list.status, 401);
      assert.deepEqual(list.json, expect401);
      const start = await envd.call('process.Process/Start', encodeEnvelope({ process: { cmd: 'true' } }), { token, contentType: 'application/connect+json' });
      assert.equal(start.status, 401);
    }
    const health = await fetch(`${backend.sandboxUrl}/health`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID } });
    assert.equal(health.status, 204, '/health needs no token');

    const me = (await import('node:os')).userInfo().username;
    for (const user of ['root', 'user', me]) {
      const r = await envd.stream('process.Process/Start', { process: { cmd: 'true' } }, { user });
      assert.deepEqual(endOf(r.messages), { exited: true, status: 'exit status 0' }, user);
    }
    const stranger = await envd.stream('process.Process/Start', { process: { cmd: 'true' } }, { user: 'mallory' });
    assert.equal(stranger.status, 200);
    assert.deepEqual(stranger.end, { error: { code: 'unauthenticated', message: "invalid username: 'mallory'" } });
    const unary = await envd.call('process.Process/List', {}, { user: 'mallory' });
    assert.equal(unary.status, 401);
    assert.equal(unary.json.code, 'unauthenticated');
    const nul = await envd.call('process.Process/List', {}, { user: 'root\0x' });
    assert.equal(nul.status, 401, 'a NUL in the name matches no account; it is not cut to "root"');
    assert.equal(nul.json.code, 'unauthenticated');

    // A sandbox without a token (v1, not secure) needs no X-Access-Token.
    const open = await createSandbox(backend, {}, { v1: true });
    const plain = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: open.sandboxID, token: null });
    assert.equal((await plain.call('process.Process/List', {})).status, 200);
  });

  test('routing: unknown sandbox 502, Host "<port>-<id>.<domain>", other ports 502, codecs', T, async (t) => {
    const unknown = await envd.call('process.Process/List', {}, { sandboxId: 'nosuchsandbox' });
    assert.equal(unknown.status, 502);
    assert.deepEqual(unknown.json, { sandboxId: 'nosuchsandbox', message: 'The sandbox was not found', code: 502 });

    const viaHost = (host, headers = {}) => new Promise((resolve, reject) => {
      const { hostname, port } = new URL(backend.sandboxUrl);
      const body = '{}';
      const req = http.request({ hostname, port, method: 'POST', path: '/process.Process/List', headers: {
        Host: host, 'Content-Type': 'application/json', 'X-Access-Token': sb.envdAccessToken, 'Content-Length': body.length, ...headers,
      } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { text += d; });
        res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(text || 'null') }));
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal((await viaHost(`49983-${sb.sandboxID}.e2b.local`)).status, 200);
    assert.equal((await viaHost(`49983-${sb.sandboxID}.E2B.LOCAL:443`)).status, 200);
    const closed = await viaHost(`8080-${sb.sandboxID}.e2b.local`);
    assert.equal(closed.status, 502);
    assert.equal(closed.json.message, 'The sandbox is running but port is not open');
    assert.equal((await viaHost(`49983-nosuchsandbox.e2b.local`)).json.message, 'The sandbox was not found');
    assert.equal((await viaHost('e2b.local')).status, 400);
    assert.equal((await viaHost(`sandbox.e2b.local`, { 'E2b-Sandbox-Id': sb.sandboxID })).status, 200);

    const proto = await envd.call('process.Process/List', '', { contentType: 'application/proto' });
    assert.equal(proto.status, 415);
    assert.equal(proto.json.code, 'unimplemented');
    const protoStream = await envd.call('process.Process/Start', '', { contentType: 'application/connect+proto' });
    assert.equal(protoStream.status, 415);
    const unaryOnStream = await envd.call('process.Process/Start', { process: { cmd: 'true' } });
    assert.equal(unaryOnStream.status, 415, 'Start is a streaming method');
    const get = await fetch(`${backend.sandboxUrl}/process.Process/List`, { headers: { 'E2b-Sandbox-Id': sb.sandboxID } });
    assert.equal(get.status, 405);
    await get.arrayBuffer();
    const garbage = await envd.call('process.Process/Start', Buffer.from([0, 0, 0, 0, 9, 0x7b]), { contentType: 'application/connect+json' });
    assert.equal(garbage.status, 200);
    const frame = garbage.text;
    assert.match(frame, /invalid_argument/);
  });

  test('bytes a client sends while its stream runs are capped, not buffered', T, async () => {
    const { hostname, port } = new URL(backend.sandboxUrl);
    const body = encodeEnvelope({ process: { cmd: 'sleep', args: ['1000'] }, tag: 'junk-sender' });
    const sock = net.connect(Number(port), hostname);
    await new Promise((r) => sock.once('connect', r));
    let received = '';
    sock.on('data', (d) => { received += d.toString('latin1'); });
    sock.on('error', () => {});
    sock.write(`POST /process.Process/Start HTTP/1.1\r\nHost: ${hostname}\r\nE2b-Sandbox-Id: ${sb.sandboxID}\r\n` +
      `X-Access-Token: ${sb.envdAccessToken}\r\nContent-Type: application/connect+json\r\nContent-Length: ${body.length}\r\n\r\n`);
    sock.write(body);
    await until(() => received.includes('"start"'), 'the start event');
    const before = rssBytes(backend.pid);
    const junk = Buffer.alloc(MiB, 'x');
    for (let i = 0; i < 64; i++) sock.write(junk); // 64 MiB the backend must not swallow
    await sleep(300);
    const grown = rssBytes(backend.pid) - before;
    assert.ok(grown < 16 * MiB, `backend grew by ${(grown / MiB).toFixed(1)} MiB`);
    const listed = (await envd.call('process.Process/List', {})).json.processes.find((p) => p.tag === 'junk-sender');
    assert.ok(listed, 'the backend still serves');
    sock.destroy();
    assert.equal((await envd.call('process.Process/SendSignal', { process: { tag: 'junk-sender' }, signal: 9 })).status, 200);
  });

  test('killing the sandbox kills its processes; their streams end', T, async (t) => {
    const victim = await createSandbox(backend);
    const c = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: victim.sandboxID, token: victim.envdAccessToken });
    const s = await c.open('process.Process/Start', sh('sleep 100 & echo $!; wait'));
    const first = await readUntil(s, (f, all) => textOf(all).endsWith('\n'), 'child pid');
    const pid = hostPid(first[0].message.event.start.pid, victim.sandboxID);
    const child = hostPid(Number(textOf(first).trim()), victim.sandboxID);
    assert.ok(alive(pid) && alive(child));
    assert.equal((await api(backend, 'DELETE', `/sandboxes/${victim.sandboxID}`)).status, 204);
    const rest = [];
    try {
      for (let f; (f = await s.next());) rest.push(f);
    } catch (err) {
      assert.ok(full(), `only a removed isolated sandbox cuts the stream: ${err.message}`);
    }
    if (full()) {
      // As E2B's proxy: the connection drops, no end event is invented.
      assert.ok(!rest.some((f) => f.message.event?.end), JSON.stringify(rest.map((f) => f.message)));
    } else {
      assert.equal(rest.at(-2).message.event.end.status, 'signal: killed');
      assert.deepEqual(rest.at(-1).message, {});
    }
    await until(() => !alive(pid) && !alive(child), 'both processes gone');
    assert.equal((await c.call('process.Process/List', {})).status, 502);
  });

  test('pausing stops the processes (no progress, silent streams); resuming continues them', T, async (t) => {
    const paused = await createSandbox(backend);
    const c = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: paused.sandboxID, token: paused.envdAccessToken });
    const s = await c.open('process.Process/Start',
      sh('i=0; while :; do i=$((i+1)); echo $i > counter; sleep 0.02; done'),
      { headers: { 'Keepalive-Ping-Interval': '0.1' } });
    const pid = (await s.next()).message.event.start.pid;
    const hpid = backend.hostPid(paused.sandboxID, pid);
    const counterFile = full() ? backend.sandboxPath(paused.sandboxID, '/home/user/counter')
      : path.join(backend.stateDir, 'sandboxes', paused.sandboxID, 'counter');
    const counter = () => Number(readFileSync(counterFile, 'utf8').trim() || 0);
    await until(() => existsSync(counterFile) && counter() > 2, 'the counter runs');
    await readUntil(s, (f) => f.message.event?.keepalive, 'a keepalive while running');

    assert.equal((await api(backend, 'POST', `/sandboxes/${paused.sandboxID}/pause`)).status, 204);
    // Without isolation pause is SIGSTOP; with it, the cgroup freezer, which
    // the pause answer waits for (no signal the process could see).
    if (!full()) await until(() => procState(pid) === 'T', 'the process is stopped');
    const frozen = counter();
    // Whatever was already in flight may still arrive; after that, silence.
    let framesWhilePaused = 0;
    const reader = (async () => { while (await s.next()) framesWhilePaused++; })();
    await sleep(200);
    const settled = framesWhilePaused;
    await sleep(600);
    assert.equal(framesWhilePaused, settled, 'no keepalives while paused');
    assert.equal(counter(), frozen, 'no progress while paused');
    assert.equal((await c.call('process.Process/List', {})).status, 502, 'a paused sandbox is unreachable');

    assert.equal((await api(backend, 'POST', `/v2/sandboxes/${paused.sandboxID}/connect`, { timeout: 300 })).status, 201);
    await until(() => counter() > frozen + 2, 'the counter moves again');
    await until(() => framesWhilePaused > settled, 'keepalives again');
    assert.equal((await c.call('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' })).status, 200);
    await reader;
    await until(() => !alive(hpid), 'killed');
  });

  test('no zombies and no descriptor leaks after many processes', T, async (t) => {
    const fds = processFds(backend.pid);
    for (let i = 0; i < 20; i++) {
      const r = await envd.stream('process.Process/Start', { process: { cmd: 'true' }, ...(i % 2 ? { pty: { size: { cols: 10, rows: 5 } } } : {}), stdin: i % 3 === 0 });
      assert.equal(endOf(r.messages)?.status, 'exit status 0');
    }
    await until(() => zombieChildren(backend.pid).length === 0, 'every child reaped');
    await until(() => processFds(backend.pid) <= fds, `pipe/pty descriptors back to ${fds} (now ${processFds(backend.pid)})`);
  });
});

describe('backend shutdown', () => {
  test('SIGTERM kills and reaps every process group before the backend exits', T, async (t) => {
    const backend = await startBackend();
    const sbx = await createSandbox(backend);
    const c = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sbx.sandboxID, token: sbx.envdAccessToken });
    const pids = [];
    const streams = [];
    for (const msg of [
      sh('sleep 1000 & echo $!; wait'),
      { process: { cmd: '/bin/sh', args: ['-c', 'sleep 1000 & echo $!; wait'] }, pty: { size: { cols: 80, rows: 24 } } },
      { process: { cmd: 'cat' }, stdin: true },
    ]) {
      const s = await c.open('process.Process/Start', msg);
      const first = await s.next();
      pids.push(backend.hostPid(sbx.sandboxID, first.message.event.start.pid));
      if (msg.process.cmd === '/bin/sh') {
        const key = msg.pty ? 'pty' : 'stdout';
        const seen = await readUntil(s, (f, all) => /\d+\s*\n/.test(textOf(all, key)), 'child pid');
        pids.push(backend.hostPid(sbx.sandboxID, Number(/(\d+)/.exec(textOf(seen, key))[1])));
      }
      streams.push(s);
    }
    // One more in a paused sandbox: stopped processes must die too.
    const other = await createSandbox(backend);
    const c2 = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: other.sandboxID, token: other.envdAccessToken });
    const s2 = await c2.open('process.Process/Start', { process: { cmd: 'sleep', args: ['1000'] } });
    pids.push(backend.hostPid(other.sandboxID, (await s2.next()).message.event.start.pid));
    assert.equal((await api(backend, 'POST', `/sandboxes/${other.sandboxID}/pause`)).status, 204);

    // And a SendInput held because its process never reads stdin.
    const s3 = await c.open('process.Process/Start', { process: { cmd: 'sleep', args: ['1000'] }, stdin: true });
    const sleeper = (await s3.next()).message.event.start.pid;
    pids.push(backend.hostPid(sbx.sandboxID, sleeper));
    const held = c.call('process.Process/SendInput', { process: { pid: sleeper }, input: { stdin: randomBytes(600 * 1024).toString('base64') } })
      .then(() => 'answered', () => 'cut off');
    await until(() => backend.stderr().includes('envd POST /process.Process/SendInput 200'), 'the input is queued');

    for (const pid of pids) assert.ok(alive(pid), `pid ${pid} runs before shutdown`);
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    // Direct children were reaped before the exit; SIGKILLed grandchildren
    // may need a moment to finish dying.
    for (const pid of pids) await until(() => !alive(pid), `pid ${pid} (state ${procState(pid)}) outlived the backend`, 5000);
    assert.equal(await held, 'cut off');
    for (const s of [...streams, s2, s3]) s.cancel();
  });
});
