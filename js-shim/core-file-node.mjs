// core-file-node.mjs — the one Node-only piece of the shim's load path: reads
// wasm/core.wasm from a file: URL. Imported lazily, only for a file: URL, so
// browsers, Workers and hosts that inject the module never load it.
import { readFile } from 'node:fs/promises'

export const readCoreFile = (url) => readFile(url)
