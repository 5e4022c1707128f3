// create -> first output, the figure the runtime, network and template
// benches share: POST /v2/sandboxes, then envd's Start of `echo hi` until
// its first output; the sandbox is killed after, off the clock.
//
//   const ms = await createFirstOutput(backend, { templateID: 'base', timeout: 60 })
import { envdClient } from '../../host/connect.mjs'

export async function createFirstOutput(backend, body) {
  const headers = { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' }
  const t0 = performance.now()
  const res = await fetch(`${backend.apiUrl}/v2/sandboxes`, { method: 'POST', headers, body: JSON.stringify(body) })
  const made = await res.json()
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(made)}`)
  const s = await envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: made.sandboxID, token: made.envdAccessToken })
    .open('process.Process/Start', { process: { cmd: 'echo', args: ['hi'] } })
  for (;;) {
    const f = await s.next()
    if (!f || f.end) throw new Error('no output')
    if (f.message.event?.data) break
  }
  const took = performance.now() - t0
  s.cancel()
  await fetch(`${backend.apiUrl}/sandboxes/${made.sandboxID}`, { method: 'DELETE', headers })
  return took
}
