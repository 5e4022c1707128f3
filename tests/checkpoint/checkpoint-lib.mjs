// What the checkpoint guest's tests share: whether checkpoints work here,
// and a sandbox whose processes hold state only in memory (a shell's token
// and counter, a Python server's token), read out through envd.
import assert from 'node:assert/strict';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient, dataOf } from '../../host/connect.mjs';

const probe = await startBackend({});
const details = (await api(probe, 'GET', '/health/details')).json;
await probe.stop();
export const skip = process.getuid() !== 0 ? 'needs root' : !details.checkpoint?.available && `no checkpoints here: ${details.checkpoint?.reason}`;
export const forceRun = process.env.E2BW_CKPT_FORCE === "1";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The counter: a token and a number in the shell's memory, its pid, written
// to /tmp/c every 0.2 s; and a python server on port 8080 whose answer is
// a token it drew at its start.
export const START = `setsid bash -c 'tok=$RANDOM$RANDOM; i=0; while :; do i=$((i+1)); echo "$$ $tok $i" > /tmp/c.new; mv /tmp/c.new /tmp/c; sleep 0.2; done' </dev/null >/dev/null 2>&1 &
setsid python3 -c '
import http.server, secrets
tok = secrets.token_hex(8).encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(tok)
    def log_message(self, *a): pass
http.server.HTTPServer(("0.0.0.0", 8080), H).serve_forever()' </dev/null >/dev/null 2>&1 &
sleep 1.5; cat /tmp/c`;
export const READ = 'cat /tmp/c; echo; curl -s --max-time 5 http://127.0.0.1:8080/ || python3 -c "import urllib.request; print(urllib.request.urlopen(\'http://127.0.0.1:8080/\', timeout=5).read().decode())"';

export function parse(out) {
  const [pid, tok, n] = out.trim().split('\n')[0].split(' ');
  return { pid, tok, n: Number(n), served: out.trim().split('\n').slice(1).join('').trim() };
}

// A bash script run to its end in the sandbox, through backend b's envd.
export async function run(b, { id, token }, script) {
  const envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: id, token });
  const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } });
  return dataOf(r.messages).stdout.toString();
}

// A new sandbox of b with the counter and the server started.
export async function counting(b) {
  const created = await api(b, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 1800 });
  assert.equal(created.status, 201);
  const sb = { id: created.json.sandboxID, token: created.json.envdAccessToken };
  sb.envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: sb.id, token: sb.token });
  await run(b, sb, START);
  // The server answers once Python has started (seconds in a loaded TCG guest).
  sb.first = parse(await run(b, sb, READ));
  for (let i = 0; i < 60 && sb.first.served === ''; i++) {
    await sleep(1000);
    sb.first = parse(await run(b, sb, READ));
  }
  assert.ok(sb.first.n >= 1 && sb.first.served.length === 16, JSON.stringify(sb.first));
  return sb;
}

// The same processes, with their memory, counting on.
export async function check(b, sb, label) {
  const now = parse(await run(b, sb, READ));
  assert.equal(now.pid, sb.first.pid, `${label}: the same process`);
  assert.equal(now.tok, sb.first.tok, `${label}: its token, held in memory`);
  assert.ok(now.n >= sb.first.n, `${label}: it counts on from ${sb.first.n} (now ${now.n})`);
  assert.equal(now.served, sb.first.served, `${label}: the server is the same process`);
}

