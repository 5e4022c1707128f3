// core-module.mjs — loads the core's WebAssembly module and wraps its flat
// ABI (wasm/abi.c). Identical in Node and in a browser: the module imports
// nothing, so instantiation needs no glue. Only bytes cross the boundary.

export const ACTION = Object.freeze({ NONE: 0, SEND: 1, HTTP: 2, CANCEL: 3 })
export const NET = Object.freeze({ REFUSED: 1, DNS: 2, RESET: 3, TLS: 4, OTHER: 5, PROTOCOL: 6 })

const DEFAULT_MODULE = new URL('../wasm/core.wasm', import.meta.url)
const compiled = new Map() // href → Promise<WebAssembly.Module>

async function readBytes(url) {
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises')
    return readFile(url)
  }
  const res = await fetch(url)
  if (!res.ok) throw new Error(`cannot load ${url.href}: HTTP ${res.status}`)
  return new Uint8Array(await res.arrayBuffer())
}

/** Compiles (once per URL) and returns the core's WebAssembly.Module.
 *  source: a URL/string (default: wasm/core.wasm next to this folder),
 *  bytes, or an already compiled module. */
export function compileCore(source = DEFAULT_MODULE) {
  if (source instanceof WebAssembly.Module) return Promise.resolve(source)
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) return WebAssembly.compile(source)
  const url = source instanceof URL ? source : new URL(String(source), import.meta.url)
  if (!compiled.has(url.href)) compiled.set(url.href, readBytes(url).then((b) => WebAssembly.compile(b)))
  return compiled.get(url.href)
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** One core instance (one wasm instance: cores never share memory). */
export class Core {
  static async create(source) {
    const module = await compileCore(source)
    const instance = await WebAssembly.instantiate(module, {})
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
    const bytes = typeof data === 'string' ? encoder.encode(data) : data
    const ptr = this.x.input_buffer(this.h, bytes.length)
    if (!ptr) throw new Error('e2b-wasm core: out of memory')
    this.bytes().set(bytes, ptr)
    return bytes.length
  }

  submit(message, now) { this.x.submit(this.h, this.put(message), now) }
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

  /** Pops the next pending action: {kind, op, text, body}, or null. text is a
   *  string (an EPP message or the HTTP request head as JSON); body a
   *  Uint8Array copy. */
  next() {
    const kind = this.x.next_action(this.h)
    if (kind === ACTION.NONE) return null
    const action = { kind, op: this.x.action_op(this.h) >>> 0, text: '', body: null }
    const textLen = this.x.action_text_len(this.h)
    if (textLen) {
      const p = this.x.action_text(this.h)
      action.text = decoder.decode(this.bytes().subarray(p, p + textLen))
    }
    const bodyLen = this.x.action_body_len(this.h)
    if (bodyLen) {
      const p = this.x.action_body(this.h)
      action.body = this.bytes().slice(p, p + bodyLen)
    }
    return action
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
