// serve-cli.mjs — the command line that playground/serve.mjs and
// tests/browser/server.mjs share: serve the repository read-only on loopback,
// print a page's URL, optionally start the local backend and hand its URLs and
// key to the page, and serve until Ctrl-C (or the end of standard input).
//
//   [--port N] [--backend] [--help]
//
// A wrong option, a bad port or a port in use is one line on stderr and exit
// status 2. The key is never printed: the page fetches it from the same server
// (LOCAL_BACKEND_FILE beside the page, answered only to loopback Host names;
// see static-server.mjs) when it is opened with ?local.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { startStaticServer } from './static-server.mjs'

export const USAGE_ERROR = 2
export const LOCAL_BACKEND_FILE = 'local-backend.json'

class UsageError extends Error {}

/** { port, backend, help } from argv; throws UsageError with a one-line message. */
export function parseServeArgs(argv) {
  let values
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: {
      port: { type: 'string' }, backend: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }))
  } catch (err) {
    throw new UsageError(err.message.split('\n')[0])
  }
  let port = 0
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535)
      throw new UsageError(`--port takes a port number from 0 to 65535 (0: any free port), not '${values.port}'`)
    port = Number(values.port)
  }
  return { port, backend: Boolean(values.backend), help: Boolean(values.help) }
}

// A listen failure as a person reads it.
function listenProblem(err, port) {
  if (err.code === 'EADDRINUSE') return `port ${port} on 127.0.0.1 is already in use; pick another with --port N (0: any free port)`
  if (err.code === 'EACCES') return `no permission to listen on port ${port} of 127.0.0.1; pick a port above 1023`
  return `cannot listen on 127.0.0.1:${port}: ${err.message}`
}

/**
 * Runs the command line and serves; exits the process on an error or when stopped.
 *   program       the name errors start with, e.g. 'playground/serve.mjs'
 *   pagePath      the page whose URL is printed, e.g. '/playground/index.html'
 *   pageName      how the printed URL is introduced, e.g. 'playground'
 *   usage         the --help text
 *   startBackend  () => Promise<{ apiUrl, sandboxUrl, apiKey, stateDir, stop() }>, for --backend
 */
export async function serveFromCommandLine({ program, pagePath, pageName, usage, startBackend, argv = process.argv.slice(2) }) {
  const fail = (message, status) => {
    process.stderr.write(`${program}: ${message}\n`)
    process.exit(status)
  }
  let options
  try {
    options = parseServeArgs(argv)
  } catch (err) {
    if (err instanceof UsageError) return fail(`${err.message}; see --help`, USAGE_ERROR)
    throw err
  }
  if (options.help) {
    process.stdout.write(usage)
    return process.exit(0)
  }

  // What the server hands the page at the JSON endpoint; filled once the backend runs.
  const json = {}
  let server
  try {
    server = await startStaticServer({ port: options.port, json, index: pagePath })
  } catch (err) {
    return fail(listenProblem(err, options.port), USAGE_ERROR)
  }
  let backend = null
  if (options.backend) {
    try {
      backend = await startBackend()
    } catch (err) {
      await server.close()
      return fail(`the local backend did not start: ${err.message}`, 1)
    }
    json[path.posix.join(path.posix.dirname(pagePath), LOCAL_BACKEND_FILE)] =
      { api_url: backend.apiUrl, sandbox_url: backend.sandboxUrl, api_key: backend.apiKey }
    console.log(`local backend: api ${backend.apiUrl}, envd ${backend.sandboxUrl}`)
  }
  console.log(`\n${pageName}: ${server.url}${pagePath}${backend ? '?local' : ''}`)
  if (backend) console.log('(it connects to the local backend by itself: the page fetches the URLs and the key from this server; the key is not printed)')
  console.log(process.stdin.isTTY ? '(open it in a browser; Ctrl-C stops the server)' : '(serving until standard input ends)')

  // Ctrl-C or the end of standard input: the server and the backend stop,
  // and it says what went (a backend without --state-dir removes every
  // sandbox it has and its state directory as it stops).
  let stopping = false
  async function stop() {
    if (stopping) return
    stopping = true
    await server.close()
    let said = `stopped the ${pageName} server`
    if (backend) {
      const { code, signal } = await backend.stop()
      const gone = !existsSync(backend.stateDir)
      said += ` and the local backend (${signal ? `signal ${signal}` : `exit ${code}`})` +
        (code === 0 && gone ? ', which removed every sandbox it had and its state directory' : `; its state directory ${backend.stateDir} ${gone ? 'is gone' : 'is left'}`)
    }
    console.log(`\n${said}`)
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  if (!process.stdin.isTTY) {
    process.stdin.on('end', stop)
    process.stdin.resume()
  }
}
