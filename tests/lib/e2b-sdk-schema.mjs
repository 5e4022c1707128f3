// E2B's control-plane API as the official SDK carries it: the SDK's
// generated OpenAPI types (node_modules/e2b/dist/index.d.ts, `interface
// paths` and `interface components`, made by openapi-typescript from E2B's
// spec/openapi.yml) read into operations and JSON schemas, so a test holds
// the local backend's routes and answers against E2B's published API
// without a copy of the spec in this repository.
//
//   const api = loadControlPlane()
//   api.operations  // [{ method: 'GET', path: '/sandboxes/{sandboxID}', responses: { 200: schema|null, 404: ... } }]
//   api.definitions // { SandboxDetail: <JSON schema>, ... } (refs: '#/definitions/<name>')
//
// Only what openapi-typescript writes is read: primitives, string and number
// literals, unions, arrays, object literals with optional members and index
// signatures, Record<string, T>, and components["schemas"]["X"] references.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const SDK_TYPES = path.join(repo, 'node_modules', 'e2b', 'dist', 'index.d.ts')

/** The text of `interface <name> { ... }` (braces included). */
function interfaceBody(text, name) {
  const at = text.indexOf(`\ninterface ${name} {`)
  if (at < 0) throw new Error(`no interface ${name} in the SDK's types`)
  const open = text.indexOf('{', at)
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++
    else if (text[i] === '}' && --depth === 0) return text.slice(open, i + 1)
  }
  throw new Error(`interface ${name} is not closed`)
}

function tokenize(src) {
  const text = src.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ')
  const tokens = []
  const re = /\s*("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*|\d+(?:\.\d+)?|\[\]|[{}()[\];:?|<>,&])/gy
  let m
  while (re.lastIndex < text.length && (m = re.exec(text))) tokens.push(m[1])
  if (re.lastIndex < text.trimEnd().length) throw new Error(`cannot read the SDK's types near: ${text.slice(re.lastIndex, re.lastIndex + 60)}`)
  return tokens
}

/** A TypeScript type (openapi-typescript's subset) → a small tree. */
function parseType(tokens) {
  let i = 0
  const peek = () => tokens[i]
  const take = (want) => {
    const t = tokens[i++]
    if (want !== undefined && t !== want) throw new Error(`expected ${want}, got ${t} at token ${i - 1}: ${tokens.slice(Math.max(0, i - 8), i + 4).join(' ')}`)
    return t
  }
  function union() {
    if (peek() === '|') take()
    const parts = [postfix()]
    while (peek() === '|') { take(); parts.push(postfix()) }
    return parts.length === 1 ? parts[0] : { kind: 'union', parts }
  }
  function postfix() {
    let t = primary()
    while (peek() === '[]') { take(); t = { kind: 'array', items: t } }
    return t
  }
  function primary() {
    const t = take()
    if (t === '{') return object()
    if (t === '(') { const inner = union(); take(')'); return inner }
    if (t.startsWith('"')) return { kind: 'const', value: JSON.parse(t) }
    if (/^\d/.test(t)) return { kind: 'const', value: Number(t) }
    if (t === 'components') {
      const group = JSON.parse((take('['), take())); take(']')
      const name = JSON.parse((take('['), take())); take(']')
      return { kind: 'ref', group, name }
    }
    if (t === 'Record') {
      take('<'); take('string'); take(',')
      const value = union(); take('>')
      return { kind: 'object', members: [], index: value }
    }
    if (['string', 'number', 'boolean', 'null', 'unknown', 'never', 'true', 'false'].includes(t)) return { kind: t }
    throw new Error(`unexpected ${t} in the SDK's types`)
  }
  function object() {
    const members = []
    let index = null
    while (peek() !== '}') {
      if (peek() === '[') { // [name: string]: T;
        take('['); take(); take(':'); take('string'); take(']'); take(':')
        index = union()
      } else {
        const raw = take()
        const name = raw.startsWith('"') ? JSON.parse(raw) : raw
        const optional = peek() === '?'
        if (optional) take('?')
        take(':')
        members.push({ name, optional, type: union() })
      }
      if (peek() === ';' || peek() === ',') take()
    }
    take('}')
    return { kind: 'object', members, index }
  }
  const out = union()
  if (i !== tokens.length) throw new Error(`unread tokens in the SDK's types: ${tokens.slice(i, i + 8).join(' ')}`)
  return out
}

const member = (obj, name) => obj && obj.kind === 'object' ? (obj.members.find((m) => m.name === name) || {}).type : undefined

function toSchema(t) {
  switch (t.kind) {
    case 'string': case 'number': case 'boolean': case 'null': return { type: t.kind }
    case 'true': case 'false': return { const: t.kind === 'true' }
    case 'unknown': return {}
    case 'never': return { not: {} }
    case 'const': return { const: t.value }
    case 'array': return { type: 'array', items: toSchema(t.items) }
    case 'ref': return { $ref: `#/definitions/${t.group === 'schemas' ? '' : `${t.group}.`}${t.name}` }
    case 'union': {
      if (t.parts.every((p) => p.kind === 'const')) return { enum: t.parts.map((p) => p.value) }
      return { anyOf: t.parts.map(toSchema) }
    }
    case 'object': {
      const s = { type: 'object', properties: {}, required: [] }
      for (const m of t.members) {
        s.properties[m.name] = toSchema(m.type)
        if (!m.optional) s.required.push(m.name)
      }
      if (!s.required.length) delete s.required
      if (t.index) s.additionalProperties = toSchema(t.index)
      return s
    }
  }
  throw new Error(`no schema for ${t.kind}`)
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** The response schema of one response entry (a components["responses"] ref
 *  or an inline { headers, content }), or null when it has no JSON body. */
function responseSchema(entry, responses) {
  let r = entry
  if (r.kind === 'ref' && r.group === 'responses') r = responses[r.name]
  const json = member(member(r, 'content'), 'application/json')
  return json ? toSchema(json) : null
}

export function loadControlPlane(file = SDK_TYPES) {
  const text = readFileSync(file, 'utf8')
  const paths = parseType(tokenize(interfaceBody(text, 'paths')))
  const components = parseType(tokenize(interfaceBody(text, 'components')))
  const responses = Object.fromEntries((member(components, 'responses').members || []).map((m) => [m.name, m.type]))
  const definitions = {}
  for (const m of member(components, 'schemas').members) definitions[m.name] = toSchema(m.type)
  for (const [name, type] of Object.entries(responses)) {
    const s = responseSchema(type, responses)
    if (s) definitions[`responses.${name}`] = s
  }
  const operations = []
  for (const p of paths.members) {
    for (const op of p.type.members) {
      if (!METHODS.includes(op.name) || op.type.kind !== 'object') continue
      const rs = member(op.type, 'responses')
      const out = {}
      for (const r of rs.members) out[r.name] = responseSchema(r.type, responses)
      operations.push({ method: op.name.toUpperCase(), path: p.name, responses: out })
    }
  }
  return { operations, definitions }
}
