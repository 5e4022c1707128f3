// host.mjs — the reference host: what this project takes abx to do with a
// node/1 plugin (docs/plugin-contract.md, docs/host-contract.md). It validates the manifest,
// builds ctx from declared options only, implements kit.epp.infra, sends
// initialize, gates every call by the declared features (E8004 without
// calling the plugin) and masks declared secrets in every message it shows.
// It can also drive the same plugin as an exec plugin over stdio NDJSON.
import { spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { pathToFileURL } from 'node:url'
import { mask, resolveConfig } from './config.mjs'
import { loadManifest } from './manifest.mjs'

export const HOST_VERSION = '0.3.0-reference'

// The method → feature table (docs/plugin-contract.md, "Methods and features"), the host's own knowledge.
export const METHOD_FEATURE = {
  'sandbox.create': 'sandbox.lifecycle', 'sandbox.get': 'sandbox.lifecycle', 'sandbox.list': 'sandbox.lifecycle',
  'sandbox.kill': 'sandbox.lifecycle', 'sandbox.connect': 'sandbox.lifecycle',
  'sandbox.set_timeout': 'sandbox.timeout', 'sandbox.pause': 'sandbox.pause', 'sandbox.resume': 'sandbox.pause',
  'exec.run': 'exec.run', 'exec.start': 'exec.stream',
  'process.list': 'process.manage', 'process.kill': 'process.manage', 'process.signal': 'process.manage', 'process.stdin': 'process.manage',
  'process.attach': 'process.manage', // e2b-wasm's extension: follow a running process from another client
  'files.read': 'files.rw', 'files.write': 'files.rw', 'files.list': 'files.rw', 'files.stat': 'files.rw',
  'files.mkdir': 'files.rw', 'files.remove': 'files.rw', 'files.move': 'files.rw',
  'ports.url': 'ports.url',
  'templates.build': 'templates.build', 'templates.get': 'templates.build', 'templates.list': 'templates.build',
  'templates.delete': 'templates.build',
  // pty.* are optional methods (docs/plugin-contract.md) an exec plugin may offer, not a feature
  // of their own; their output streams as exec.output, so exec.stream gates them
  'pty.open': 'exec.stream', 'pty.input': 'exec.stream', 'pty.resize': 'exec.stream', 'pty.close': 'exec.stream',
  // code.* (E2B's code interpreter, docs/code-interpreter.md) are optional methods too, gated by exec.run
  'code.run': 'exec.run', 'code.context.create': 'exec.run', 'code.context.list': 'exec.run',
  'code.context.restart': 'exec.run', 'code.context.remove': 'exec.run',
}

/** What a user sees: an SDK code, a masked message; the raw EPP error kept for tests. */
export class HostError extends Error {
  constructor(code, message, rpc) {
    super(message)
    this.name = 'HostError'
    this.code = code
    this.rpc = rpc || null
  }
}

function sdkCodeOf(rpcError) {
  const data = rpcError.data || {}
  if (data.sdk_code) return data.sdk_code
  if (rpcError.code === -32003) return 'E8004'
  return 'E8005'
}

/** One EPP/1 conversation: ids, pending calls, notifications, a traffic log. */
class EppSession {
  constructor(write, secrets) {
    this.write = write
    this.secrets = secrets
    this.nextId = 1
    this.pending = new Map()
    this.listeners = new Set()
    this.traffic = [] // {dir: 'out'|'in', msg} — what tests validate against docs/epp-methods.json
    this.closed = false
  }

  receive(text) {
    let msg
    try { msg = JSON.parse(text) } catch { this.traffic.push({ dir: 'in', garbage: text }); return }
    this.accept(msg)
  }

  accept(msg) {
    // Output chunks are logged without their data (a slice would keep the
    // whole string alive): a long stream must not grow the host. The shape is
    // still validated.
    if (msg.method === 'exec.output' && msg.params && typeof msg.params.data === 'string')
      this.traffic.push({ dir: 'in', msg: { ...msg, params: { ...msg.params, data: '' } } })
    else this.traffic.push({ dir: 'in', msg })
    if (msg.id !== undefined && msg.id !== null && this.pending.has(msg.id)) {
      const { resolve, reject, method } = this.pending.get(msg.id)
      this.pending.delete(msg.id)
      if (msg.error) reject(new HostError(sdkCodeOf(msg.error), mask(`${method}: ${msg.error.message}`, this.secrets), msg.error))
      else resolve(msg.result)
    } else if (msg.method) {
      for (const fn of this.listeners) fn(msg)
    }
  }

  request(method, params = {}) {
    if (this.closed) return Promise.reject(new HostError('E8005', 'provider session is closed'))
    const id = this.nextId++
    const msg = { jsonrpc: '2.0', id, method, params }
    this.traffic.push({ dir: 'out', msg })
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method })
      this.write(msg)
    })
  }

  fail(reason) {
    this.closed = true
    for (const { reject } of this.pending.values()) reject(new HostError('E8005', reason))
    this.pending.clear()
  }
}

/** The infra object the host builds around a session: gated calls, protocol objects. */
async function makeInfra({ manifest, ctx, session, close, transport }) {
  const declared = new Set(manifest.features.supported)
  const init = await session.request('initialize', {
    protocol: manifest.compat.protocol === 'node/1' ? 'node/1' : 'epp/1',
    host: { name: 'abx-reference-host', version: HOST_VERSION },
    provider_id: manifest.provider.id,
    config: ctx.options,
    core: ctx.core,
    locale: 'en',
    data_dir: ctx.data_dir,
  })
  const offered = new Set(init.features || [])
  const usable = new Set([...declared].filter((f) => offered.has(f)))
  let provided = 0 // how many calls actually reached the plugin

  async function call(method, params = {}) {
    const feature = METHOD_FEATURE[method]
    if (!feature || !usable.has(feature))
      throw new HostError('E8004', `Provider '${manifest.provider.id}' does not support '${feature || method}'`)
    provided++
    try {
      return await session.request(method, params)
    } catch (err) {
      // sandbox.connect is optional: -32601 falls back to sandbox.get (docs/plugin-contract.md, "Methods and features").
      if (method === 'sandbox.connect' && err.rpc && err.rpc.code === -32601) return session.request('sandbox.get', { sandbox_id: params.sandbox_id })
      throw err
    }
  }

  return {
    initializeResult: init,
    declared: [...declared],
    offered: [...offered],
    features: [...usable],
    transport,
    call,
    raw: (method, params) => session.request(method, params), // ungated, for tests of the plugin itself
    onNotification: (fn) => session.listeners.add(fn),
    traffic: session.traffic,
    get callsProvided() { return provided },
    sandbox_protocol: {
      create: (p = {}) => call('sandbox.create', p),
      get: (id) => call('sandbox.get', { sandbox_id: id }),
      list: (p = {}) => call('sandbox.list', p),
      kill: (id) => call('sandbox.kill', { sandbox_id: id }),
      connect: (id, timeout) => call('sandbox.connect', timeout === undefined ? { sandbox_id: id } : { sandbox_id: id, timeout }),
      setTimeout: (id, timeout) => call('sandbox.set_timeout', { sandbox_id: id, timeout }),
      pause: (id) => call('sandbox.pause', { sandbox_id: id }),
      resume: (id, timeout) => call('sandbox.resume', timeout === undefined ? { sandbox_id: id } : { sandbox_id: id, timeout }),
    },
    async close() {
      try { await session.request('shutdown', {}) } catch { /* already gone */ }
      session.closed = true
      await close()
    },
  }
}

function makeCtx(manifest, options, secrets, dataDir, httpLog) {
  return {
    id: manifest.provider.id,
    features: [...manifest.features.supported],
    options: { ...options },
    core: {},
    data_dir: dataDir,
    // A fetch-shaped client; the reference host records what goes through it.
    http(opts = {}) {
      return {
        base_url: opts.base_url,
        fetch: (url, init = {}) => {
          httpLog.push({ method: init.method || 'GET', url: String(url) })
          return fetch(url, init)
        },
      }
    },
    headerKeyAuth: (key, header) => ({ kind: 'header', header, key }),
    noAuth: () => ({ kind: 'none' }),
  }
}

/**
 * Loads the plugin in-process (node/1) and returns its infra.
 * opts: { env, overrides, dataDir, form } — env is where ABX_* and declared
 * aliases are read from (default process.env); form is how the host talks to
 * the dispatcher (docs/host-contract.md): 'objects' (default: handle() and
 * onNotification, message objects both ways) or 'text' (send() and
 * onMessage, JSON text both ways).
 */
export async function loadProvider(dir, opts = {}) {
  const manifest = await loadManifest(dir)
  const { options, secrets } = resolveConfig(manifest, opts)
  const httpLog = []
  const ctx = makeCtx(manifest, options, secrets, opts.dataDir || path.join(dir, 'data'), httpLog)
  const mod = await import(pathToFileURL(path.resolve(dir, manifest.runtime.entry)).href)
  if (typeof mod.default !== 'function') throw new HostError('E8014', 'runtime.entry must export default function create(kit)')

  const kit = {
    hostVersion: HOST_VERSION,
    errors: { HostError },
    epp: {
      async infra(infraCtx, factory) {
        let dispatcher
        const objects = (opts.form || 'objects') === 'objects'
        const session = new EppSession(objects
          ? (msg) => {
              dispatcher.handle(msg).then((answer) => answer && session.accept(answer), (err) => {
                const call = session.pending.get(msg.id) // the dispatcher is closed: this call has no answer to wait for
                session.pending.delete(msg.id)
                if (call) call.reject(new HostError('E8005', err.message))
              })
            }
          : (msg) => dispatcher.send(JSON.stringify(msg)), secrets)
        dispatcher = await factory(infraCtx)
        if (objects) dispatcher.onNotification = (msg) => session.accept(msg)
        else dispatcher.onMessage = (text) => session.receive(text)
        const infra = await makeInfra({
          manifest, ctx: infraCtx, session, transport: dispatcher.transport,
          close: async () => dispatcher.close(),
        })
        infra.httpLog = httpLog
        infra.secrets = secrets
        return infra
      },
    },
  }
  const plugin = mod.default(kit)
  return plugin.buildInfra(ctx)
}

/**
 * Runs the same plugin as an exec plugin: `node js-shim/epp-stdio.mjs` with a
 * minimal environment, EPP/1 as NDJSON on its stdin/stdout.
 */
export async function startStdioProvider(dir, opts = {}) {
  const manifest = await loadManifest(dir)
  const { options, secrets } = resolveConfig(manifest, opts)
  const child = spawn(process.execPath, [path.join(dir, 'js-shim', 'epp-stdio.mjs')], {
    cwd: dir,
    env: { PATH: process.env.PATH }, // config travels only in initialize
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  const session = new EppSession((msg) => child.stdin.write(JSON.stringify(msg) + '\n'), secrets)
  readline.createInterface({ input: child.stdout }).on('line', (line) => session.receive(line))
  exited.then(({ code, signal }) => session.fail(`provider process exited (${signal || code})`))
  child.stdin.on('error', () => {})
  const ctx = { options, core: {}, data_dir: opts.dataDir || path.join(dir, 'data') }
  const infra = await makeInfra({
    manifest, ctx, session, transport: 'stdio',
    close: async () => { child.stdin.end(); await exited },
  })
  infra.secrets = secrets
  infra.child = child
  infra.exited = exited
  infra.stderr = () => stderr
  return infra
}
