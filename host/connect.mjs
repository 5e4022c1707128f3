// A tiny Connect-protocol client (JSON codec) over fetch, for testing envd's
// RPC services on the local backend (docs/e2b-protocol-notes.md, "Connect protocol").
//
//   import { envdClient, encodeEnvelope, EnvelopeDecoder } from '<repo>/host/connect.mjs';
//   const envd = envdClient({ sandboxUrl, sandboxId, token });
//
//   // unary: POST application/json, answer { status, headers, json, text }
//   const { status, json } = await envd.call('process.Process/List', {});
//
//   // server streaming, collected: every frame until the end-stream frame
//   const { status, contentType, messages, end } = await envd.stream('process.Process/Start',
//     { process: { cmd: 'echo', args: ['hi'] } }, { headers: { 'Keepalive-Ping-Interval': '0.2' } });
//   // messages: the decoded JSON messages, e.g. { event: { start: { pid } } }
//   // end: the end-stream payload, {} on success or { error: { code, message } }
//   //      (undefined if the body ended without one)
//
//   // server streaming, live: read frames one at a time
//   const s = await envd.open('process.Process/Start', { ... });
//   const frame = await s.next();   // { end: false, message } | { end: true, message } | null at EOF
//   s.cancel();                     // aborts the request (the client disconnects)
//
// Options for every call: headers (extra request headers), token (overrides
// X-Access-Token; null sends none), sandboxId (overrides E2b-Sandbox-Id),
// user (adds Authorization: Basic base64("<user>:")), timeoutMs
// (Connect-Timeout-Ms).
//
// Helpers for the data events: dataOf(messages) concatenates the base64
// payloads per stream name -> { stdout: Buffer, stderr: Buffer, pty: Buffer }.

export const FLAG_COMPRESSED = 0x01;
export const FLAG_END_STREAM = 0x02;

// One envelope: flags byte, 4-byte big-endian length, JSON payload.
export function encodeEnvelope(message, flags = 0) {
  const payload = Buffer.from(typeof message === 'string' ? message : JSON.stringify(message));
  const out = Buffer.alloc(5 + payload.length);
  out[0] = flags;
  out.writeUInt32BE(payload.length, 1);
  payload.copy(out, 5);
  return out;
}

// Incremental envelope decoder: push(bytes) returns the complete frames.
export class EnvelopeDecoder {
  constructor() { this.buf = Buffer.alloc(0); }
  push(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, Buffer.from(chunk)]) : Buffer.from(chunk);
    const frames = [];
    while (this.buf.length >= 5) {
      const len = this.buf.readUInt32BE(1);
      if (this.buf.length < 5 + len) break;
      const flags = this.buf[0];
      const text = this.buf.subarray(5, 5 + len).toString('utf8');
      this.buf = this.buf.subarray(5 + len);
      frames.push({ flags, end: (flags & FLAG_END_STREAM) !== 0, message: JSON.parse(text), bytes: 5 + len });
    }
    return frames;
  }
  get pending() { return this.buf.length; }
}

export function dataOf(messages) {
  const parts = { stdout: [], stderr: [], pty: [] };
  for (const m of messages) {
    const d = m?.event?.data;
    if (!d) continue;
    for (const k of Object.keys(parts)) if (d[k] !== undefined) parts[k].push(Buffer.from(d[k], 'base64'));
  }
  return { stdout: Buffer.concat(parts.stdout), stderr: Buffer.concat(parts.stderr), pty: Buffer.concat(parts.pty) };
}

export function envdClient({ sandboxUrl, sandboxId, token }) {
  function headersFor(contentType, opts = {}) {
    const h = { 'Content-Type': contentType, 'Connect-Protocol-Version': '1' };
    const id = opts.sandboxId === undefined ? sandboxId : opts.sandboxId;
    if (id) { h['E2b-Sandbox-Id'] = id; h['E2b-Sandbox-Port'] = '49983'; }
    const tok = opts.token === undefined ? token : opts.token;
    if (tok) h['X-Access-Token'] = tok;
    if (opts.user !== undefined) h.Authorization = `Basic ${Buffer.from(`${opts.user}:`).toString('base64')}`;
    if (opts.timeoutMs !== undefined) h['Connect-Timeout-Ms'] = String(opts.timeoutMs);
    return { ...h, ...(opts.headers ?? {}) };
  }

  // message: an object (sent as JSON), or a string / bytes sent verbatim.
  async function call(method, message = {}, opts = {}) {
    const res = await fetch(`${sandboxUrl}/${method}`, {
      method: 'POST',
      headers: headersFor(opts.contentType ?? 'application/json', opts),
      body: typeof message === 'string' || message instanceof Uint8Array ? message : JSON.stringify(message),
    });
    const text = await res.text();
    let json;
    try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
    return { status: res.status, headers: res.headers, json, text };
  }

  async function open(method, message = {}, opts = {}) {
    const controller = new AbortController();
    const body = opts.rawBody ?? encodeEnvelope(message);
    const res = await fetch(`${sandboxUrl}/${method}`, {
      method: 'POST',
      headers: headersFor(opts.contentType ?? 'application/connect+json', opts),
      body,
      signal: controller.signal,
    });
    const reader = res.body.getReader();
    const decoder = new EnvelopeDecoder();
    const queue = [];
    let done = false;
    return {
      status: res.status,
      headers: res.headers,
      contentType: res.headers.get('content-type'),
      // The next frame, or null once the body has ended.
      async next() {
        while (queue.length === 0 && !done) {
          const { value, done: eof } = await reader.read();
          if (eof) { done = true; break; }
          queue.push(...decoder.push(value));
        }
        return queue.shift() ?? null;
      },
      // Reads raw body bytes (at most what the next read gives), for slow readers.
      async readRaw() {
        const { value, done: eof } = await reader.read();
        if (eof) { done = true; return null; }
        queue.push(...decoder.push(value));
        return value.length;
      },
      takeQueued() { return queue.splice(0); },
      cancel() { controller.abort(); reader.cancel().catch(() => {}); },
    };
  }

  async function stream(method, message = {}, opts = {}) {
    const s = await open(method, message, opts);
    const messages = [];
    let end;
    const frames = [];
    for (;;) {
      const f = await s.next();
      if (!f) break;
      frames.push(f);
      if (f.end) { end = f.message; break; }
      messages.push(f.message);
    }
    const trailing = await s.next();
    if (trailing) throw new Error(`frame after end-stream: ${JSON.stringify(trailing.message)}`);
    return { status: s.status, headers: s.headers, contentType: s.contentType, messages, end, frames };
  }

  return { call, open, stream };
}
