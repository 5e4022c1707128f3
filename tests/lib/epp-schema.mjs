// epp-schema.mjs — validates real EPP/1 traffic against docs/epp-methods.json.
import { readFileSync } from 'node:fs'
import Ajv from 'ajv'

const doc = JSON.parse(readFileSync(new URL('../../docs/epp-methods.json', import.meta.url), 'utf8'))
const ajv = new Ajv({ strict: false, allErrors: true })
ajv.addSchema(doc, 'epp')

export const methodsDoc = doc
const byName = new Map(doc.methods.map((m, i) => [m.name, { ...m, index: i }]))
const notifications = new Map(doc.notifications.map((n, i) => [n.name, { ...n, index: i }]))
const cache = new Map()

function validator(ref) {
  if (!cache.has(ref)) cache.set(ref, ajv.compile({ $ref: `epp#${ref}` }))
  return cache.get(ref)
}

/** Checks every request and its answer in a traffic log ({dir, msg}).
 *  Returns a list of problems (empty when everything fits the document). */
export function validateTraffic(traffic) {
  const problems = []
  const sent = new Map()
  for (const { dir, msg, garbage } of traffic) {
    if (garbage !== undefined) { problems.push(`non-JSON message from the plugin: ${garbage.slice(0, 80)}`); continue }
    if (dir === 'out') {
      const m = byName.get(msg.method)
      if (!m) { problems.push(`request for undocumented method ${msg.method}`); continue }
      // Params the document rejects must be rejected by the plugin too (-32602).
      const v = m.params ? validator(`/methods/${m.index}/params`) : null
      sent.set(msg.id, { ...m, invalidParams: v && !v(msg.params) ? ajv.errorsText(v.errors) : null })
      continue
    }
    if (msg.jsonrpc !== '2.0') problems.push(`answer without jsonrpc 2.0: ${JSON.stringify(msg).slice(0, 80)}`)
    if (msg.method !== undefined) { // a notification from the plugin
      const n = notifications.get(msg.method)
      if (!n) { problems.push(`undocumented notification ${msg.method}`); continue }
      const v = validator(`/notifications/${n.index}/params`)
      if (!v(msg.params)) problems.push(`${msg.method} params: ${ajv.errorsText(v.errors)} in ${JSON.stringify(msg.params).slice(0, 200)}`)
      continue
    }
    const m = sent.get(msg.id)
    if (!m) { if (msg.id !== undefined) problems.push(`answer to unknown id ${msg.id}`); continue }
    sent.delete(msg.id)
    if (m.invalidParams && !(msg.error && msg.error.code === -32602))
      problems.push(`${m.name} accepted params the document rejects (${m.invalidParams})`)
    if (msg.error) {
      const v = validator('/definitions/Error')
      if (!v(msg.error)) problems.push(`${m.name} error shape: ${ajv.errorsText(v.errors)}`)
      const allowed = new Set([...(m.errors || []), ...doc.definitions.transport_errors.enum, -32003, -32600, -32601])
      if (!allowed.has(msg.error.code)) problems.push(`${m.name} answered undocumented code ${msg.error.code}`)
    } else if (m.result) {
      const v = validator(`/methods/${m.index}/result`)
      if (!v(msg.result)) problems.push(`${m.name} result: ${ajv.errorsText(v.errors)} in ${JSON.stringify(msg.result).slice(0, 200)}`)
    }
  }
  for (const m of sent.values()) problems.push(`${m.name} was never answered`)
  return problems
}
