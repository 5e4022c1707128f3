// json-schema-lite.mjs — a small JSON Schema (draft-07 subset) validator that
// runs unchanged in Node, a Worker and a browser page (no Node API, no build
// step). ajv, the project's validator in Node, is CommonJS and needs a bundler
// in a page; the contract suite validates every EPP message in both places, so
// it uses this one. tests/contract/suite.test.mjs checks that it agrees with
// ajv on the document and on real traffic.
//
//   const v = compileSchema(rootDocument)        // local "#/..." refs resolve in it
//   const errors = v('#/methods/3/result', value) // [] when valid, else messages
//
// Keywords: type, enum, const, $ref, properties, required, additionalProperties,
// patternProperties, minProperties, maxProperties, items, minItems, maxItems,
// uniqueItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
// minLength, maxLength, pattern, oneOf, anyOf, allOf, not. Annotations
// (description, title, default, examples, format, $id, …) are ignored. A schema
// using any other keyword is refused at validation time, so a document that
// outgrows this validator is noticed rather than silently half-checked.

const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'format', '$id', '$schema', '$comment',
  'definitions', 'readOnly', 'writeOnly', 'deprecated'])
const KEYWORDS = new Set(['type', 'enum', 'const', '$ref', 'properties', 'required', 'additionalProperties',
  'patternProperties', 'minProperties', 'maxProperties', 'items', 'minItems', 'maxItems', 'uniqueItems',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength',
  'pattern', 'oneOf', 'anyOf', 'allOf', 'not'])

function typeOf(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

function typeMatches(want, v) {
  const t = typeOf(v)
  if (want === t) return true
  if (want === 'number' && t === 'integer') return true
  return false
}

// Canonical text of a JSON value (object keys sorted), for const/enum/uniqueItems.
function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`
  return JSON.stringify(v)
}

function resolvePointer(root, ref) {
  if (!ref.startsWith('#')) throw new Error(`json-schema-lite: only local $ref is supported, not ${ref}`)
  let node = root
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (node == null || !(key in Object(node))) throw new Error(`json-schema-lite: unresolvable $ref ${ref}`)
    node = node[key]
  }
  return node
}

const show = (v) => { const s = JSON.stringify(v); return s === undefined ? String(v) : s.length > 60 ? s.slice(0, 57) + '...' : s }

export function compileSchema(root) {
  const patterns = new Map()
  const regex = (p) => { if (!patterns.has(p)) patterns.set(p, new RegExp(p, 'u')); return patterns.get(p) }

  function check(schema, v, at, errors) {
    if (schema === true || schema === undefined) return
    if (schema === false) { errors.push(`${at || '/'} is not allowed`); return }
    for (const k of Object.keys(schema))
      if (!KEYWORDS.has(k) && !ANNOTATIONS.has(k)) throw new Error(`json-schema-lite: unsupported keyword '${k}' at ${at || '/'}`)
    if (schema.$ref !== undefined) check(resolvePointer(root, schema.$ref), v, at, errors)
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type]
      if (!types.some((t) => typeMatches(t, v))) { errors.push(`${at || '/'} must be ${types.join(' or ')}, got ${show(v)}`); return }
    }
    if (schema.const !== undefined && canon(schema.const) !== canon(v)) errors.push(`${at || '/'} must be ${show(schema.const)}, got ${show(v)}`)
    if (schema.enum !== undefined && !schema.enum.some((e) => canon(e) === canon(v))) errors.push(`${at || '/'} must be one of ${show(schema.enum)}, got ${show(v)}`)
    const t = typeOf(v)
    if (t === 'integer' || t === 'number') {
      if (schema.minimum !== undefined && v < schema.minimum) errors.push(`${at || '/'} must be >= ${schema.minimum}`)
      if (schema.maximum !== undefined && v > schema.maximum) errors.push(`${at || '/'} must be <= ${schema.maximum}`)
      if (schema.exclusiveMinimum !== undefined && v <= schema.exclusiveMinimum) errors.push(`${at || '/'} must be > ${schema.exclusiveMinimum}`)
      if (schema.exclusiveMaximum !== undefined && v >= schema.exclusiveMaximum) errors.push(`${at || '/'} must be < ${schema.exclusiveMaximum}`)
      if (schema.multipleOf !== undefined && !Number.isInteger(v / schema.multipleOf)) errors.push(`${at || '/'} must be a multiple of ${schema.multipleOf}`)
    }
    if (t === 'string') {
      const len = [...v].length // code points, as JSON Schema counts
      if (schema.minLength !== undefined && len < schema.minLength) errors.push(`${at || '/'} must have at least ${schema.minLength} characters`)
      if (schema.maxLength !== undefined && len > schema.maxLength) errors.push(`${at || '/'} must have at most ${schema.maxLength} characters`)
      if (schema.pattern !== undefined && !regex(schema.pattern).test(v)) errors.push(`${at || '/'} must match ${schema.pattern}`)
    }
    if (t === 'array') {
      if (schema.minItems !== undefined && v.length < schema.minItems) errors.push(`${at || '/'} must have at least ${schema.minItems} items`)
      if (schema.maxItems !== undefined && v.length > schema.maxItems) errors.push(`${at || '/'} must have at most ${schema.maxItems} items`)
      if (schema.uniqueItems && new Set(v.map(canon)).size !== v.length) errors.push(`${at || '/'} must not repeat items`)
      if (schema.items !== undefined) {
        if (Array.isArray(schema.items)) schema.items.forEach((s, i) => { if (i < v.length) check(s, v[i], `${at}/${i}`, errors) })
        else v.forEach((item, i) => check(schema.items, item, `${at}/${i}`, errors))
      }
    }
    if (t === 'object') {
      const keys = Object.keys(v)
      if (schema.minProperties !== undefined && keys.length < schema.minProperties) errors.push(`${at || '/'} must have at least ${schema.minProperties} properties`)
      if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) errors.push(`${at || '/'} must have at most ${schema.maxProperties} properties`)
      for (const r of schema.required || []) if (!(r in v)) errors.push(`${at || '/'} must have property '${r}'`)
      const props = schema.properties || {}
      const pats = Object.entries(schema.patternProperties || {})
      for (const k of keys) {
        let known = false
        if (Object.prototype.hasOwnProperty.call(props, k)) { known = true; check(props[k], v[k], `${at}/${k}`, errors) }
        for (const [p, s] of pats) if (regex(p).test(k)) { known = true; check(s, v[k], `${at}/${k}`, errors) }
        if (!known && schema.additionalProperties !== undefined) {
          if (schema.additionalProperties === false) errors.push(`${at || '/'} must not have property '${k}'`)
          else check(schema.additionalProperties, v[k], `${at}/${k}`, errors)
        }
      }
    }
    if (schema.allOf) for (const s of schema.allOf) check(s, v, at, errors)
    if (schema.anyOf && !schema.anyOf.some((s) => valid(s, v, at)))
      errors.push(`${at || '/'} matches none of anyOf (${firstErrors(schema.anyOf, v, at)})`)
    if (schema.oneOf) {
      const n = schema.oneOf.filter((s) => valid(s, v, at)).length
      if (n !== 1) errors.push(`${at || '/'} must match exactly one of oneOf, matches ${n}${n === 0 ? ` (${firstErrors(schema.oneOf, v, at)})` : ''}`)
    }
    if (schema.not !== undefined && valid(schema.not, v, at)) errors.push(`${at || '/'} must not match a 'not' schema`)
  }

  function valid(schema, v, at) {
    const e = []
    check(schema, v, at, e)
    return e.length === 0
  }

  function firstErrors(list, v, at) {
    return list.map((s) => { const e = []; check(s, v, at, e); return e[0] }).join('; ')
  }

  /** Validates value against the schema at ref (a "#/..." pointer into root). */
  return function validate(ref, value) {
    const errors = []
    check(resolvePointer(root, ref), value, '', errors)
    return errors
  }
}
