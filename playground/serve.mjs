#!/usr/bin/env node
// serve.mjs — serves the repository read-only on loopback and prints the
// playground's URL. The page needs only static files: playground/, provider.mjs,
// js-shim/, wasm/core.wasm and node_modules/@xterm/ (from npm ci).
//
//   node playground/serve.mjs [--port N] [--backend] [--help]
//     --backend  also start the local E2B-compatible backend (build/bin) and hand its
//                URLs and key to the page (at /playground/local-backend.json, fetched
//                when the page is opened with ?local), so it connects at once
//
// A wrong option, a bad port or a port in use: one line on stderr, exit status 2.
// It serves until Ctrl-C, or until its standard input ends when that is not a
// terminal (so `./build.sh demo </dev/null` does not hang).
import { serveFromCommandLine } from '../host/serve-cli.mjs'

async function startLocalBackend() {
  const { startBackend } = await import('../host/backend.mjs')
  return startBackend()
}

await serveFromCommandLine({
  program: 'playground/serve.mjs',
  pagePath: '/playground/index.html',
  pageName: 'playground',
  usage: 'usage: node playground/serve.mjs [--port N] [--backend]\n' +
    '  serves the repository read-only on 127.0.0.1 and prints the playground\'s URL\n' +
    '  --port N   the port (default 0: any free port)\n' +
    '  --backend  also start the local backend; the page, opened with ?local, fetches its URLs and key from this server\n',
  startBackend: startLocalBackend,
})
