// server.mjs — the browser tests' page on the repository's static server
// (host/static-server.mjs), and its command line for a manual demo:
//
//   node tests/browser/server.mjs [--port N] [--backend]
//     prints the demo page's URL; with --backend it also starts the local
//     E2B-compatible backend, and the page (opened with ?local) fetches its URL
//     and key from this server: the key is never printed (host/serve-cli.mjs).
import path from 'node:path'
import { pathToFileURL } from 'node:url'

export { repoRoot, startStaticServer } from '../../host/static-server.mjs'
export const PAGE_PATH = '/tests/browser/page.html'

// Run directly: serve the repository and print the demo page's URL.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  async function startLocalBackend() {
    const { startBackend } = await import('../../host/backend.mjs')
    return startBackend()
  }
  import('../../host/serve-cli.mjs').then(({ serveFromCommandLine }) => serveFromCommandLine({
    program: 'tests/browser/server.mjs',
    pagePath: PAGE_PATH,
    pageName: 'demo page',
    usage: 'usage: node tests/browser/server.mjs [--port N] [--backend]\n' +
      '  serves the repository read-only on 127.0.0.1 and prints the demo page\'s URL\n' +
      '  --port N   the port (default 0: any free port)\n' +
      '  --backend  also start the local backend; the page, opened with ?local, fetches its URL and key from this server\n',
    startBackend: startLocalBackend,
  }))
}
