// epp-traffic.mjs — checks EPP/1 traffic against docs/epp-methods.json, one
// message at a time, with no Node API (the contract suite runs it in Node and
// in a browser page). The rules are those of tests/lib/epp-schema.mjs (the
// ajv-based checker the other node tests use); the schemas are applied with
// tests/lib/json-schema-lite.mjs.
//
//   const checker = createTrafficChecker(doc)   // doc: the parsed epp-methods.json
//   checker.push({ dir: 'out', msg })           // a request the host sent → [problems]
//   checker.push({ dir: 'in', msg })            // an answer or notification → [problems]
//   checker.push({ dir: 'in', garbage: text })  // a line that was not JSON → [problem]
//   checker.unanswered()                        // requests still waiting → [problems]
import { compileSchema } from './json-schema-lite.mjs'

export function createTrafficChecker(doc) {
  const validate = compileSchema(doc)
  const byName = new Map(doc.methods.map((m, i) => [m.name, { ...m, index: i }]))
  const notifications = new Map((doc.notifications || []).map((n, i) => [n.name, { ...n, index: i }]))
  const transportErrors = (doc.definitions.transport_errors && doc.definitions.transport_errors.enum) || []
  const sent = new Map()
  const text = (errors) => errors.slice(0, 3).join('; ')

  function push({ dir, msg, garbage }) {
    const problems = []
    if (garbage !== undefined) return [`non-JSON message from the plugin: ${String(garbage).slice(0, 80)}`]
    if (dir === 'out') {
      const m = byName.get(msg.method)
      if (!m) return [`request for undocumented method ${msg.method}`]
      // Params the document rejects must be rejected by the plugin too (-32602), unless
      // their feature is undeclared: -32003 answers before any param is looked at.
      const errors = m.params ? validate(`#/methods/${m.index}/params`, msg.params) : []
      sent.set(msg.id, { ...m, invalidParams: errors.length ? text(errors) : null })
      return problems
    }
    if (msg.jsonrpc !== '2.0') problems.push(`answer without jsonrpc 2.0: ${JSON.stringify(msg).slice(0, 80)}`)
    if (msg.method !== undefined) { // a notification from the plugin
      const n = notifications.get(msg.method)
      if (!n) return [...problems, `undocumented notification ${msg.method}`]
      const errors = validate(`#/notifications/${n.index}/params`, msg.params)
      if (errors.length) problems.push(`${msg.method} params: ${text(errors)} in ${JSON.stringify(msg.params).slice(0, 200)}`)
      return problems
    }
    const m = sent.get(msg.id)
    if (!m) {
      if (msg.id !== undefined) problems.push(`answer to unknown id ${msg.id}`)
      return problems
    }
    sent.delete(msg.id)
    if (m.invalidParams && !(msg.error && (msg.error.code === -32602 || msg.error.code === -32003)))
      problems.push(`${m.name} accepted params the document rejects (${m.invalidParams})`)
    if (msg.error) {
      const errors = validate('#/definitions/Error', msg.error)
      if (errors.length) problems.push(`${m.name} error shape: ${text(errors)}`)
      const allowed = new Set([...(m.errors || []), ...transportErrors, -32003, -32600, -32601])
      if (!allowed.has(msg.error.code)) problems.push(`${m.name} answered undocumented code ${msg.error.code}`)
    } else if (m.result) {
      const errors = validate(`#/methods/${m.index}/result`, msg.result)
      if (errors.length) problems.push(`${m.name} result: ${text(errors)} in ${JSON.stringify(msg.result).slice(0, 200)}`)
    }
    return problems
  }

  return {
    push,
    unanswered: () => [...sent.values()].map((m) => `${m.name} was never answered`),
  }
}

/** Whole-log form, like epp-schema.mjs's validateTraffic. */
export function checkTraffic(doc, traffic) {
  const checker = createTrafficChecker(doc)
  const problems = []
  for (const entry of traffic) problems.push(...checker.push(entry))
  return [...problems, ...checker.unanswered()]
}
