// core-module.mjs — loads the core's WebAssembly module and wraps its flat
// ABI (wasm/abi.c). Identical in Node and in a browser: the module imports
// nothing, so instantiation needs no glue. Only bytes cross the boundary.

// Copies of core/include/e2bw.h's enums; tests/node/e2bw-enums.test.mjs compares them.
export const ACTION = Object.freeze({ NONE: 0, SEND: 1, HTTP: 2, CANCEL: 3 })
// What a SEND carries: an answer (its id the call's), a notification of a
// call (params.request_id the call's id), and whether the call ends with it.
export const MESSAGE = Object.freeze({ ANSWER: 1, NOTIFICATION: 2, LAST: 4 })
// Which member a detached string belongs in.
export const DETACHED = Object.freeze({ DATA: 1, CONTENT: 2, ASCII: 256 })
export const NET = Object.freeze({ REFUSED: 1, DNS: 2, RESET: 3, TLS: 4, OTHER: 5, PROTOCOL: 6 })

// wasm/core.wasm from this file; the bundle at the repository's root
// (provider.mjs, made by ./build.sh) is given its own path as E2BW_CORE_WASM.
const DEFAULT_MODULE = new URL(typeof E2BW_CORE_WASM === 'string' ? E2BW_CORE_WASM : '../wasm/core.wasm', import.meta.url)
const compiled = new Map() // href → Promise<WebAssembly.Module>
let provided = null // Promise<WebAssembly.Module> set by useCoreModule

async function load(url) {
  if (url.protocol === 'file:') {
    // The one Node-only part of the load path, taken only for a file: URL
    // (browsers fetch; hosts without a file system use useCoreModule).
    // process.getBuiltinModule (Node >= 20.16) hands over the fs Node has
    // already loaded: no ES-module wrapper of node:fs/promises to build
    // (≈ 1 ms) and no trip through the thread pool for 96 KB.
    const builtin = globalThis.process && globalThis.process.getBuiltinModule
    if (typeof builtin === 'function') return compileBytes(builtin('node:fs').readFileSync(url))
    const { readFile } = await import('node:fs/promises')
    return compileBytes(await readFile(url))
  }
  const res = await fetch(url)
  if (!res.ok) throw new Error(`cannot load ${url.href}: HTTP ${res.status}`)
  // Compiled while it downloads, where the server says what it is.
  const type = (res.headers.get('content-type') || '').split(';')[0].trim().toLowerCase()
  if (type === 'application/wasm' && typeof WebAssembly.compileStreaming === 'function') return WebAssembly.compileStreaming(res)
  return compileBytes(new Uint8Array(await res.arrayBuffer()))
}

// Synchronous compile and instantiation where the engine allows them: no
// trips through the event loop, which a busy host may delay. Browsers refuse
// both on their main thread for modules over 4 KiB (RangeError): then async.
function compileBytes(bytes) {
  try {
    return Promise.resolve(new WebAssembly.Module(bytes))
  } catch (err) {
    if (err instanceof RangeError) return WebAssembly.compile(bytes)
    return Promise.reject(err)
  }
}

function instantiate(module) {
  try {
    return Promise.resolve(new WebAssembly.Instance(module, {}))
  } catch (err) {
    if (err instanceof RangeError) return WebAssembly.instantiate(module, {})
    return Promise.reject(err)
  }
}

/** Makes source (bytes or a compiled WebAssembly.Module) the module every
 *  later core uses when none is named: for hosts that hold the bytes
 *  themselves (no file system, no fetch of the plugin's own files). */
export function useCoreModule(source) {
  provided = compileCore(source)
  return provided
}

/** Compiles (once per URL) and returns the core's WebAssembly.Module.
 *  source: a URL/string (default: the module given to useCoreModule, else
 *  wasm/core.wasm next to this folder), bytes, or an already compiled module. */
export function compileCore(source) {
  if (source === undefined) {
    if (provided) return provided
    source = DEFAULT_MODULE
  }
  if (source instanceof WebAssembly.Module) return Promise.resolve(source)
  if (ArrayBuffer.isView(source) || source instanceof ArrayBuffer) return compileBytes(source)
  const url = source instanceof URL ? source : new URL(String(source), import.meta.url)
  if (!compiled.has(url.href)) {
    const pending = load(url)
    pending.catch(() => compiled.delete(url.href)) // a failed load is tried again next time
    compiled.set(url.href, pending)
  }
  return compiled.get(url.href)
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
// ASCII (base64 content, most output) becomes a string 3-4x faster through
// Node's Buffer than through TextDecoder (16 MiB: 5.6 vs 20 ms on Node 20).
// Only where it exists: everywhere else TextDecoder, which gives the same string.
const NodeBuffer = typeof globalThis.Buffer === 'function' && typeof globalThis.Buffer.from === 'function' ? globalThis.Buffer : null

/** One core instance (one wasm instance: cores never share memory). */
export class Core {
  static async create(source) {
    const module = await compileCore(source)
    const instance = await instantiate(module)
    return new Core(instance.exports)
  }

  constructor(exports) {
    this.x = exports
    if (typeof exports._initialize === 'function') exports._initialize() // Emscripten reactor ctors
    this.h = exports.core_new()
    if (!this.h) throw new Error('e2b-wasm core: out of memory')
  }

  // Memory may grow on any call, so views are made fresh each time.
  bytes() { return new Uint8Array(this.x.memory.buffer) }

  /** Copies bytes into the instance's scratch buffer; returns the length. */
  put(data) {
    if (typeof data === 'string') {
      // ASCII text (every base64 payload) is one byte a character: encoded
      // straight into the buffer, no intermediate copy of a 16 MiB message.
      const ptr = this.x.input_buffer(this.h, data.length)
      if (!ptr) throw new Error('e2b-wasm core: out of memory')
      const { read, written } = encoder.encodeInto(data, this.bytes().subarray(ptr, ptr + data.length))
      if (read === data.length) return written
    }
    const bytes = typeof data === 'string' ? encoder.encode(data) : data
    const ptr = this.x.input_buffer(this.h, bytes.length)
    if (!ptr) throw new Error('e2b-wasm core: out of memory')
    this.bytes().set(bytes, ptr)
    return bytes.length
  }

  submit(message, now) { this.x.submit(this.h, this.put(message), now) }

  /** A message whose params[member] ("" in text) travels beside it as the
   *  string value: never JSON-escaped here nor parsed back in the core. */
  submitDetached(text, member, value, now) {
    const head = encoder.encode(text), name = encoder.encode(member)
    // ASCII (every base64 payload) first: one byte a character, encoded
    // straight into the buffer; else room for UTF-8's worst case.
    for (const room of [value.length, value.length * 3]) {
      const ptr = this.x.input_buffer(this.h, head.length + name.length + room)
      if (!ptr) throw new Error('e2b-wasm core: out of memory')
      const mem = this.bytes(), at = ptr + head.length + name.length
      mem.set(head, ptr)
      mem.set(name, ptr + head.length)
      const { read, written } = encoder.encodeInto(value, mem.subarray(at, at + room))
      if (read === value.length) return this.x.submit_detached(this.h, head.length, name.length, written, now)
    }
  }

  /** Long strings of outgoing messages leave detached from min bytes on (0: never). */
  setDetach(min) { this.x.set_detach(this.h, min) }
  /** The host's config, used when the host sends no initialize; false when
   *  text is not a JSON object. */
  setHostConfig(text) { return this.x.set_host_config(this.h, this.put(text)) === 0 }
  /** How this transport's user sets api_key: quoted when initialize lacks it. */
  setKeyHint(text) { this.x.set_key_hint(this.h, this.put(text)) }
  ndjsonFeed(bytes, now) { this.x.ndjson_feed(this.h, this.put(bytes), now) }
  ndjsonEnd(now) { this.x.ndjson_end(this.h, now) }
  httpHead(op, status, headerText, now) { this.x.http_head(this.h, op, status, this.put(headerText), now) }
  httpBody(op, bytes, now) { this.x.http_body(this.h, op, this.put(bytes), now) }
  httpEnd(op, now) { this.x.http_end(this.h, op, now) }
  httpFail(op, failure, now) { this.x.http_fail(this.h, op, failure, now) }
  httpHold(op, held, now) { this.x.http_hold(this.h, op, held ? 1 : 0, now) }
  nextDeadline() { return this.x.next_deadline(this.h) }
  tick(now) { this.x.tick(this.h, now) }
  isShutDown() { return this.x.is_shut_down(this.h) !== 0 }

  /** Pops every pending action (see next()). */
  drain() {
    const out = []
    for (let a = this.next(); a; a = this.next()) out.push(a)
    return out
  }

  /** Pops the next pending action: {kind, op, text, body, value, message},
   *  or null. text is a string (an EPP message or the HTTP request head as
   *  JSON); body a Uint8Array copy (HTTP). A SEND's message says what it
   *  carries (MESSAGE bits); one with a detached string has it as value (a
   *  string) and op names its member (DETACHED). */
  next() {
    const kind = this.x.next_action(this.h)
    if (kind === ACTION.NONE) return null
    const action = { kind, op: this.x.action_op(this.h) >>> 0, text: '', body: null, value: undefined, message: 0 }
    const textLen = this.x.action_text_len(this.h)
    if (textLen) {
      const p = this.x.action_text(this.h)
      action.text = decoder.decode(this.bytes().subarray(p, p + textLen))
    }
    if (kind === ACTION.SEND) {
      action.message = this.x.action_message(this.h)
      if (action.op) action.value = this.text(this.x.action_body(this.h), this.x.action_body_len(this.h), action.op & DETACHED.ASCII)
      return action
    }
    const bodyLen = this.x.action_body_len(this.h)
    if (bodyLen) {
      const p = this.x.action_body(this.h)
      action.body = this.bytes().slice(p, p + bodyLen)
    }
    return action
  }

  text(p, n, ascii) {
    if (!n) return ''
    if (ascii && NodeBuffer) return NodeBuffer.from(this.x.memory.buffer, p, n).toString('ascii') // a view: no copy
    return decoder.decode(this.bytes().subarray(p, p + n))
  }

  describeMethods() {
    const p = this.x.describe_methods(this.h)
    const mem = this.bytes()
    let end = p
    while (mem[end] !== 0) end++
    return JSON.parse(decoder.decode(mem.subarray(p, end)))
  }

  free() {
    if (this.h) this.x.core_free(this.h)
    this.h = 0
  }
}
