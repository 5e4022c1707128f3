#!/usr/bin/env node
// serve.mjs — serves the repository read-only on loopback and prints the
// playground's URL. The page needs only static files: playground/, provider.mjs,
// js-shim/, wasm/core.wasm and node_modules/@xterm/xterm (from npm ci).
//
//   node playground/serve.mjs [--port N] [--backend]
//     --backend  also start the local E2B-compatible backend (build/bin) and hand its
//                URLs and key to the page (at /playground/local-backend.json, fetched
//                when the page is opened with ?local), so it connects at once
//
// It serves until Ctrl-C, or until its standard input ends when that is not a
// terminal (so `./build.sh demo </dev/null` does not hang).
import { startStaticServer } from '../tests/browser/server.mjs'

const PLAYGROUND_PATH = '/playground/index.html'
const LOCAL_CONFIG_PATH = '/playground/local-backend.json'

const args = process.argv.slice(2)
const portArg = args.indexOf('--port')
const port = portArg >= 0 ? Number(args[portArg + 1]) : 0
let backend = null
const json = {}
if (args.includes('--backend')) {
  const { startBackend } = await import('../host/backend.mjs')
  backend = await startBackend()
  // The page fetches this when opened with ?local; the key is never printed.
  json[LOCAL_CONFIG_PATH] = { api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl, api_key: backend.apiKey }
  console.log(`local backend for the playground: api ${backend.apiUrl}, envd ${backend.sandboxUrl}`)
}
const server = await startStaticServer({ port, json })
console.log(`\nplayground: ${server.url}${PLAYGROUND_PATH}${backend ? '?local' : ''}`)
if (backend) console.log('(it connects to the local backend by itself: the page is handed the URLs and the key)')
console.log(process.stdin.isTTY ? '(open it in a browser; Ctrl-C stops the server)' : '(serving until standard input ends)')

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await server.close()
  if (backend) await backend.stop()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
if (!process.stdin.isTTY) {
  process.stdin.on('end', stop)
  process.stdin.resume()
}
