// dispatcher.mjs — the EPP/1 dispatcher: one core instance plus the I/O it
// asks for. It only moves bytes: EPP messages in and out, HTTP requests
// performed with the chosen transport and streamed back into the core, one
// timer for the core's next deadline. All protocol logic is in the core.
import { ACTION, Core, DETACHED, MESSAGE } from './core-module.mjs'
import { classifyFailure, pickTransport } from './transport.mjs'

// Wall-clock milliseconds that never go backwards within a process. In Node,
// process.hrtime (monotonic, loaded at boot) from a Date.now() anchor: Node's
// `performance` loads perf_hooks and ten internal modules on first touch,
// ≈ 1.5 ms of the first initialize (bench/startup.mjs). Elsewhere: performance.
const hrtime = globalThis.process && typeof globalThis.process.hrtime === 'function' ? globalThis.process.hrtime.bind(globalThis.process) : null
// Hosts that take objects get long strings without a trip through JSON text:
// the core hands them over detached (core/include/e2bw.h) from this size on,
// and a request's longest string of at least DETACH_IN travels the same way.
const DETACH_OUT = 512
const DETACH_IN = 16384

const now = hrtime ? monotonicFrom(Date.now(), hrtime()) : () => performance.timeOrigin + performance.now()
function monotonicFrom(anchorMs, start) {
  return () => {
    const [s, ns] = hrtime(start)
    return anchorMs + s * 1e3 + ns / 1e6
  }
}

// ctx.options as JSON text; '' (refused by the core) when it has none.
function hostConfig(config) {
  try { return JSON.stringify(config) } catch { return '' }
}

/**
 * createDispatcher({ module?, ctx?, fetch?, onMessage?, log? }) → Promise<Dispatcher>
 *   module     core module source (URL, bytes or WebAssembly.Module); default wasm/core.wasm
 *   ctx        the host's ctx: its http() is used when fetch-shaped (transport.mjs)
 *   fetch      explicit fetch-shaped transport (overrides ctx)
 *   onMessage  (text) => void, each outgoing EPP message (one JSON object, no newline)
 *   log        (line) => void, diagnostics (never carries credentials)
 *   keyHint    how a user of this transport sets the API key, quoted when
 *              initialize's config lacks api_key (the core cannot know
 *              where its config came from; default: initialize's params.config)
 *   backpressure () => Promise|undefined, asked before each read of a response
 *              body: a Promise pauses reading until the host has caught up
 *              (the stdio runner waits for stdout to drain), so a process that
 *              prints gigabytes streams in bounded memory
 *
 * Dispatcher:
 *   send(message)         one EPP message (string or object); answers and
 *                         notifications go to onMessage
 *   handle(message)       request/response form: Promise of the answer
 *                         object; notifications go to onNotification (an
 *                         object) and onMessage (text)
 *   A host that never sends initialize: given ctx, the core initializes
 *   itself from ctx.options at the first request that needs it.
 *   feed(bytes) / end()   EPP as NDJSON bytes, split anywhere (stdio form)
 *   onMessage             settable after creation
 *   idle()                resolves when no request is in flight
 *   isShutDown()          true once `shutdown` has been answered
 *   close()               aborts what is in flight, frees the core
 *   transport             'ctx.http' or 'fetch'
 */
export async function createDispatcher(options = {}) {
  const log = options.log || (() => {})
  const core = await Core.create(options.module)
  if (options.keyHint) core.setKeyHint(options.keyHint)
  // A host that never sends initialize: the core initializes itself from
  // ctx.options (the declared fields) at the first request that needs it.
  if (options.ctx && options.ctx.options && !core.setHostConfig(hostConfig(options.ctx.options)))
    log('e2b-wasm: ctx.options is not a JSON object: the host must send initialize itself')
  const given = options.fetch
  let transport
  try {
    transport = given ? { fetch: (url, init) => given(url, init), source: 'fetch' } : pickTransport(options.ctx, undefined, log)
  } catch (err) {
    core.free()
    throw err
  }
  const backpressure = options.backpressure || (() => undefined)
  const inflight = new Map() // op → AbortController
  let timer = null
  let closed = false
  let idleWaiters = []

  // Request/response hosts: handle() answers through a Promise; its request
  // travels under a key of ours so the answer finds its caller, and the key
  // is mapped back in the answer and in notifications' request_id.
  const handled = new Map() // key → { id, resolve }, until the call's last message
  let handleSeq = 0

  const d = {
    onMessage: options.onMessage || null,
    onNotification: options.onNotification || null,
    transport: transport.source,
    send(message) {
      if (closed) throw new Error('e2b-wasm dispatcher is closed')
      if (typeof message === 'string') core.submit(message, now())
      else submitObject(message)
      pump()
    },
    /** Request/response form: resolves with the answer (an object). */
    handle(message) {
      if (closed) return Promise.reject(new Error('e2b-wasm dispatcher is closed'))
      const msg = typeof message === 'string' ? JSON.parse(message) : { ...message }
      if (msg.id === undefined || msg.id === null) { d.send(msg); return Promise.resolve(null) } // a notification
      const key = `e2bw-h-${++handleSeq}`
      const entry = { id: msg.id, resolve: null }
      const answered = new Promise((resolve) => { entry.resolve = resolve })
      handled.set(key, entry)
      d.send({ ...msg, id: key })
      return answered
    },
    feed(bytes) {
      if (closed) return
      core.ndjsonFeed(bytes, now())
      pump()
    },
    end() {
      if (closed) return
      core.ndjsonEnd(now())
      pump()
    },
    idle() {
      if (inflight.size === 0) return Promise.resolve()
      return new Promise((resolve) => idleWaiters.push(resolve))
    },
    isShutDown: () => !closed && core.isShutDown(),
    close() {
      if (closed) return
      closed = true
      clearTimeout(timer)
      for (const ctrl of inflight.values()) ctrl.abort()
      inflight.clear()
      core.free()
      settleIdle()
    },
    describeMethods: () => core.describeMethods(),
  }

  // An object request: its longest string param (file content, stdin data)
  // goes to the core beside the rest, not through JSON.stringify.
  function submitObject(msg) {
    const p = msg && msg.params
    let member = null
    if (p && typeof p === 'object' && !Array.isArray(p))
      for (const k of Object.keys(p))
        if (typeof p[k] === 'string' && p[k].length >= DETACH_IN && (member === null || p[k].length > p[member].length)) member = k
    if (member === null) return core.submit(JSON.stringify(msg), now())
    core.submitDetached(JSON.stringify({ ...msg, params: { ...p, [member]: '' } }), member, p[member], now())
  }

  function settleIdle() {
    if (inflight.size !== 0) return
    const waiters = idleWaiters
    idleWaiters = []
    for (const w of waiters) w()
  }

  // Runs the actions the core has queued, one at a time and in order, then
  // re-arms the deadline timer. Not re-entrant: a host that calls send() from
  // inside onMessage only queues more work for the loop already running, so
  // messages reach it in the order the core produced them.
  let pumping = false
  let detachFrom = 0
  function pump() {
    if (closed || pumping) return
    pumping = true
    try {
      // A host that reads JSON text gets it written by the core; one that
      // only takes objects gets long strings detached.
      const want = d.onMessage ? 0 : DETACH_OUT
      if (want !== detachFrom) core.setDetach(detachFrom = want)
      for (let action; !closed && (action = core.next());) {
        if (action.kind === ACTION.SEND) deliver(action.value === undefined ? action.text : attached(action), action.message)
        else if (action.kind === ACTION.HTTP) perform(action)
        else if (action.kind === ACTION.CANCEL) cancel(action.op)
      }
    } finally {
      pumping = false
    }
    if (closed) return
    armTimer()
    settleIdle()
  }

  // The message object of a SEND with a detached string.
  function attached(action) {
    const msg = JSON.parse(action.text)
    const member = action.op & ~DETACHED.ASCII
    if (member === DETACHED.DATA && msg.params) msg.params.data = action.value
    else if (member === DETACHED.CONTENT && msg.result) msg.result.content = action.value
    return msg
  }

  // One outgoing message: JSON text, or an object (a detached string's).
  // kind (MESSAGE) is the core's word on what it is: an answer (its id is
  // the call's), a notification of a call (params.request_id is), and
  // whether nothing more of that call follows.
  function deliver(message, kind) {
    let text = typeof message === 'string' ? message : null
    let msg = text === null ? message : null
    if (handled.size) {
      if (!msg) msg = JSON.parse(text)
      const answer = (kind & MESSAGE.ANSWER) !== 0
      const call = answer ? msg.id : msg.params && msg.params.request_id
      const entry = typeof call === 'string' ? handled.get(call) : undefined
      if (entry) { // a call made through handle() (or our own initialize)
        if (kind & MESSAGE.LAST) handled.delete(call)
        if (answer) {
          msg.id = entry.id
          try { entry.resolve(msg) } catch (err) { log(`e2b-wasm: handle() caller threw: ${err && err.message}`) }
          return
        }
        msg.params.request_id = entry.id
        text = null
      }
    }
    try {
      if (d.onMessage && text === null) text = JSON.stringify(msg)
      if (d.onNotification && (kind & MESSAGE.NOTIFICATION)) d.onNotification(msg || JSON.parse(text))
      if (d.onMessage) d.onMessage(text)
    } catch (err) {
      log(`e2b-wasm: onMessage handler threw: ${err && err.message}`)
    }
  }

  // One timer for the core's next deadline. Streams push their deadline
  // later with every chunk; a timer already set for earlier is kept (waking
  // early is harmless: tick() finds nothing due and the timer is re-armed),
  // so the hot path does not churn timers.
  let armedFor = -1
  function armTimer() {
    const deadline = core.nextDeadline()
    if (deadline < 0) {
      clearTimeout(timer)
      timer = null
      armedFor = -1
      return
    }
    if (timer && armedFor <= deadline) return
    clearTimeout(timer)
    armedFor = deadline
    timer = setTimeout(() => {
      timer = null
      armedFor = -1
      if (closed) return
      core.tick(now())
      pump()
    }, Math.max(0, Math.ceil(deadline - now())))
  }

  function cancel(op) {
    const ctrl = inflight.get(op)
    inflight.delete(op)
    if (ctrl) ctrl.abort()
  }

  async function perform(action) {
    const { op } = action
    const head = JSON.parse(action.text)
    const ctrl = new AbortController()
    inflight.set(op, ctrl)
    const live = () => !closed && inflight.get(op) === ctrl
    try {
      const res = await transport.fetch(head.url, {
        method: head.method,
        headers: head.headers,
        body: action.body || undefined,
        signal: ctrl.signal,
        redirect: 'manual', // the core refuses redirects (a typed error): never follow one with our headers
      })
      if (!live()) return
      let headerText = ''
      for (const [name, value] of res.headers) headerText += `${name}: ${value}\n`
      core.httpHead(op, res.status, headerText, now())
      pump()
      if (res.body) {
        const reader = res.body.getReader()
        for (;;) {
          const wait = backpressure()
          if (wait) {
            // Not reading by choice: the core suspends this stream's idle deadline.
            core.httpHold(op, true, now())
            pump()
            await wait
            if (!live()) {
              reader.cancel().catch(() => {})
              return
            }
            core.httpHold(op, false, now())
            pump()
          }
          const { done, value } = await reader.read()
          if (!live()) {
            reader.cancel().catch(() => {})
            return
          }
          if (done) break
          core.httpBody(op, value, now())
          pump()
          if (!live()) {
            reader.cancel().catch(() => {})
            return
          }
        }
      }
      inflight.delete(op)
      core.httpEnd(op, now())
      pump()
    } catch (err) {
      if (!live()) return // aborted on the core's request: it already answered
      inflight.delete(op)
      log(`e2b-wasm: ${head.method} ${new URL(head.url).origin}: ${err && err.message}`)
      core.httpFail(op, classifyFailure(err), now())
      pump()
    }
  }

  return d
}
