// What the world cases (world-cases.mjs, egress-cases.mjs) share: the
// world servers' log, a path tag, and sandboxes made with the official SDK
// and run to a result whatever a command's exit code.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'

import { Sandbox } from 'e2b'

// What reached the world so far (E2BW_WORLD_LOG, host/world-servers.mjs).
export const seen = () => readFileSync(process.env.E2BW_WORLD_LOG, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
export const tag = (what) => `/${what}-${randomBytes(4).toString('hex')}`

// Sandboxes of one backend: made with its options, all killed at the end.
export function sandboxMaker() {
  const made = []
  const maker = {
    opts: undefined, // { apiKey, apiUrl, sandboxUrl }, set once the backend runs
    async create(extra = {}) {
      const s = await Sandbox.create('base', { ...maker.opts, ...extra })
      made.push(s)
      return s
    },
    async killAll() {
      for (const s of made) await s.kill().catch(() => {})
    },
  }
  return maker
}

// A command's result whatever its exit code.
export async function run(s, cmd) {
  try {
    return await s.commands.run(cmd, { timeoutMs: 30000 })
  } catch (err) {
    if (err.exitCode === undefined) throw err
    return { exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr }
  }
}
