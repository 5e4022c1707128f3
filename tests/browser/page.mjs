// page.mjs — the browser side of tests/browser: imports the project's own
// js-shim (no bundler, no copies) and exposes a small EPP/1 caller on
// window.e2bw for the test, plus a visible log and a demo form.
//
//   await e2bw.open({ transport })        → { session, transport }
//       transport 'fetch'   (default): createDispatcher({ fetch: (url, init) => fetch(url, init) })
//       transport 'default':          createDispatcher({}) — the shim picks globalThis.fetch itself
//       transport 'bare':             createDispatcher({ fetch }) — the global fetch, unwrapped
//   await e2bw.call(session, method, params[, timeoutMs])  → the JSON-RPC answer (result or error)
//   await e2bw.raw(session, text)          → the next answer that is not to a call (e.g. id null)
//   await e2bw.close(session)              → shutdown, then dispatcher.close(); returns the transcript
//   e2bw.transcript(session)               → { traffic: [{dir, msg}], unsolicited: [msg] }
//   await e2bw.moduleInfo()                → what the browser sees of wasm/core.wasm
//   e2bw.logLines                          → the dispatcher's diagnostics and the demo's lines
import { compileCore } from '/js-shim/core-module.mjs'
import { createDispatcher } from '/js-shim/dispatcher.mjs'

const logEl = document.getElementById('log')
const logLines = []
function log(line, isError = false) {
  logLines.push(line)
  const div = document.createElement('div')
  div.textContent = line
  if (isError) div.className = 'err'
  logEl.append(div)
}

const sessions = new Map()
let nextSession = 1

function session(id) {
  const s = sessions.get(id)
  if (!s) throw new Error(`no session ${id}`)
  return s
}

async function open({ transport = 'fetch' } = {}) {
  const id = nextSession++
  const options = { log: (line) => log(`[session ${id}] ${line}`, true) }
  // The browser's own fetch, wrapped so that it is called as a plain function:
  // the shim calls its transport as transport.fetch(url, init), and a browser's
  // fetch throws "Illegal invocation" when `this` is not the window. The
  // 'default' and 'bare' transports (no wrapper) are tested separately in
  // browser.test.mjs.
  if (transport === 'fetch') options.fetch = (url, init) => fetch(url, init)
  else if (transport === 'bare') options.fetch = fetch // what a page author would naturally write
  else if (transport !== 'default') throw new Error(`unknown transport ${transport}`)
  const d = await createDispatcher(options)
  const s = { id, d, nextId: 1, pending: new Map(), traffic: [], unsolicited: [], waiters: [] }
  d.onMessage = (text) => {
    let msg
    try {
      msg = JSON.parse(text)
    } catch {
      s.traffic.push({ dir: 'in', garbage: text })
      return
    }
    const key = JSON.stringify(msg.id)
    const resolve = msg.id != null ? s.pending.get(key) : undefined
    if (resolve) {
      s.pending.delete(key)
      s.traffic.push({ dir: 'in', msg })
      resolve(msg)
    } else {
      s.unsolicited.push(msg)
      for (const w of s.waiters.splice(0)) w()
    }
  }
  sessions.set(id, s)
  return { session: id, transport: d.transport }
}

function call(id, method, params, timeoutMs = 15000) {
  const s = session(id)
  const msg = { jsonrpc: '2.0', id: s.nextId++, method, ...(params === undefined ? {} : { params }) }
  s.traffic.push({ dir: 'out', msg })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${method} (id ${msg.id}) within ${timeoutMs} ms`)), timeoutMs)
    // Registered before send(): the core may answer synchronously.
    s.pending.set(JSON.stringify(msg.id), (answer) => {
      clearTimeout(timer)
      resolve(answer)
    })
    try {
      s.d.send(msg)
    } catch (err) {
      clearTimeout(timer)
      s.pending.delete(JSON.stringify(msg.id))
      reject(err)
    }
  })
}

async function raw(id, text, timeoutMs = 5000) {
  const s = session(id)
  const index = s.unsolicited.length
  s.d.send(text)
  const deadline = Date.now() + timeoutMs
  while (s.unsolicited.length <= index) {
    if (Date.now() > deadline) throw new Error(`no answer to a raw message within ${timeoutMs} ms`)
    await new Promise((resolve) => {
      s.waiters.push(resolve)
      setTimeout(resolve, 100)
    })
  }
  return s.unsolicited[index]
}

function transcript(id) {
  const s = session(id)
  return { traffic: s.traffic, unsolicited: s.unsolicited }
}

async function close(id) {
  const s = session(id)
  if (!s.d.isShutDown()) await call(id, 'shutdown', {})
  s.d.close()
  sessions.delete(id)
  return { traffic: s.traffic, unsolicited: s.unsolicited }
}

// What the browser itself sees of the core module: served as application/wasm
// (compileStreaming insists on it), and importing nothing.
async function moduleInfo() {
  const res = await fetch(new URL('/wasm/core.wasm', location.href))
  const contentType = res.headers.get('content-type')
  const fetched = await WebAssembly.compileStreaming(res)
  const used = await compileCore() // the module the dispatcher instantiated (compiled once per URL)
  const instance = await WebAssembly.instantiate(fetched, {})
  return {
    contentType,
    imports: WebAssembly.Module.imports(fetched),
    usedImports: WebAssembly.Module.imports(used),
    exports: WebAssembly.Module.exports(used).map((e) => `${e.name}:${e.kind}`),
    memoryBytes: instance.exports.memory.buffer.byteLength,
  }
}

// The demo: one sandbox through its life, every answer in the log.
async function demo(apiUrl, apiKey) {
  const { session: id, transport } = await open()
  log(`dispatcher ready (transport: ${transport})`)
  const step = async (method, params) => {
    const answer = await call(id, method, params)
    const shown = method === 'initialize' ? { features: answer.result?.features, error: answer.error } : answer.result ?? answer.error
    log(`${method} → ${JSON.stringify(shown)}`, Boolean(answer.error))
    if (answer.error) throw new Error(answer.error.message)
    return answer.result
  }
  try {
    await step('initialize', { protocol: 'epp/1', config: { api_key: apiKey, ...(apiUrl ? { api_url: apiUrl } : {}) } })
    const { sandbox_id } = await step('sandbox.create', { template: 'base', timeout: 120, metadata: { via: 'browser-demo' } })
    await step('sandbox.get', { sandbox_id })
    await step('sandbox.list', { metadata: { via: 'browser-demo' } })
    await step('sandbox.pause', { sandbox_id })
    await step('sandbox.resume', { sandbox_id })
    await step('sandbox.kill', { sandbox_id })
    await step('sandbox.get', { sandbox_id }).catch(() => log('(a killed sandbox is not found, as it should be)'))
  } catch (err) {
    log(`stopped: ${err.message}`, true)
  } finally {
    await close(id).catch(() => {})
    log('done')
  }
}

const form = document.getElementById('demo')
form.addEventListener('submit', (event) => {
  event.preventDefault()
  demo(form.api_url.value.trim(), form.api_key.value)
})

// Opened as page.html?local (node tests/browser/server.mjs --backend prints such
// a link), the page asks the server that serves it for the local backend's URL
// and key: the key is never in a printed link. A #api_url=…&api_key=… fragment
// works too (read once, then removed from the address bar).
async function prefill() {
  let given = new URLSearchParams(location.hash.slice(1))
  if (location.hash) history.replaceState(null, '', location.pathname + location.search)
  if (new URLSearchParams(location.search).has('local')) {
    const res = await fetch('local-backend.json', { cache: 'no-store' })
    if (!res.ok) return log(`?local: this server has no local backend to offer (HTTP ${res.status})`, true)
    given = new URLSearchParams(await res.json())
  }
  form.api_url.value = given.get('api_url') || ''
  form.api_key.value = given.get('api_key') || ''
}
prefill().catch((err) => log(`?local: ${err.message}`, true))

window.e2bw = { open, call, raw, close, transcript, moduleInfo, logLines, ready: true }
