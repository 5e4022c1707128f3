// vm-host.mjs — runs lifecycle.mjs inside a node:vm context that has no
// process, require, fs, Buffer or fetch: only the web-platform globals an
// embedding engine provides, the module bytes, and a ctx.http made with
// node:http outside the context (its Response-like objects are not fetch's).
// Every import is served from the plugin's own files; anything else (node:*
// included) is refused. Needs --experimental-vm-modules.
//
//   node --experimental-vm-modules vm-host.mjs '{"api_key":…,"api_url":…,"sandbox_url":…}'
// prints the lifecycle's summary as JSON, plus the modules that were loaded.
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { Readable } from 'node:stream'
import vm from 'node:vm'

const config = JSON.parse(process.argv[2])
const repo = new URL('../../../', import.meta.url)
const coreBytes = new Uint8Array(readFileSync(new URL('wasm/core.wasm', repo)))

// The host's transport: node:http, answers shaped as docs/host-contract.md says.
function httpClient() {
  return {
    fetch(url, init = {}) {
      return new Promise((resolve, reject) => {
        const headers = {}
        for (const [name, value] of init.headers || []) headers[name] = name in headers ? `${headers[name]}, ${value}` : value
        const req = http.request(url, { method: init.method || 'GET', headers }, (res) => {
          const pairs = []
          for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]])
          resolve({ status: res.statusCode, headers: pairs, body: Readable.toWeb(res) })
        })
        req.on('error', reject)
        if (init.signal) init.signal.addEventListener('abort', () => req.destroy(Object.assign(new Error('aborted'), { code: 'ABORT_ERR' })))
        req.end(init.body ? Buffer.from(init.body) : undefined)
      })
    },
  }
}

const context = vm.createContext({
  setTimeout, clearTimeout, queueMicrotask, TextEncoder, TextDecoder, URL, AbortController, performance,
})
const loaded = []
const modules = new Map()
function load(url) {
  if (!url.startsWith(repo.href) || !url.endsWith('.mjs')) throw new Error(`refused import of ${url}`)
  if (!modules.has(url)) {
    loaded.push(url.slice(repo.href.length))
    modules.set(url, new vm.SourceTextModule(readFileSync(new URL(url), 'utf8'), {
      identifier: url, context,
      initializeImportMeta(meta) { meta.url = url },
      importModuleDynamically(specifier) { throw new Error(`refused dynamic import of ${specifier}`) },
    }))
  }
  return modules.get(url)
}
const entry = load(new URL('tests/node/no-node/lifecycle.mjs', repo).href)
await entry.link((specifier, referrer) => {
  if (specifier.startsWith('node:') || !/^\.\.?\//.test(specifier)) throw new Error(`refused import of ${specifier}`)
  return load(new URL(specifier, referrer.identifier).href)
})
await entry.evaluate()
const summary = await entry.namespace.lifecycle({ coreBytes, http: httpClient, config })
process.stdout.write(JSON.stringify({ ...summary, loaded }) + '\n')
