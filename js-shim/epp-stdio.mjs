#!/usr/bin/env node
// epp-stdio.mjs — EPP/1 as NDJSON on stdin/stdout (the exec form of the
// plugin contract), with the same dispatcher as the in-process plugin.
// stdout carries only EPP messages; diagnostics go to stderr.
//
//   node js-shim/epp-stdio.mjs [--module path/to/core.wasm]
//
// It exits after answering `shutdown`, or once stdin has ended and every
// request in flight has been answered.
import { once } from 'node:events'
import { pathToFileURL } from 'node:url'
import { createDispatcher } from './dispatcher.mjs'

const args = process.argv.slice(2)
const moduleArg = args.indexOf('--module')
const module = moduleArg >= 0 ? pathToFileURL(args[moduleArg + 1]) : undefined

const dispatcher = await createDispatcher({
  module,
  // Whoever sends initialize gives the config (abx fills it from its own).
  keyHint: "send it in initialize's params.config: this runner reads no environment",
  log: (line) => process.stderr.write(line + '\n'),
  // Output is read from the backend only as fast as the host reads stdout.
  backpressure: () => (process.stdout.writableNeedDrain ? once(process.stdout, 'drain') : undefined),
})

let exiting = false
function exitWhenFlushed() {
  if (exiting) return
  exiting = true
  dispatcher.close()
  process.stdout.write('', () => process.exit(0))
}

dispatcher.onMessage = (text) => {
  if (!process.stdout.write(text + '\n')) {
    // Backpressure: stop reading requests until the host reads answers.
    process.stdin.pause()
    process.stdout.once('drain', () => process.stdin.resume())
  }
  if (dispatcher.isShutDown()) setImmediate(exitWhenFlushed)
}

process.stdin.on('data', (chunk) => dispatcher.feed(chunk))
process.stdin.on('end', async () => {
  dispatcher.end()
  await dispatcher.idle()
  exitWhenFlushed()
})
process.stdout.on('error', () => process.exit(0)) // host went away
