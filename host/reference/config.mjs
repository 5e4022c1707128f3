// config.mjs — resolves a plugin's options from declared fields only
// (docs/plugin-contract.md, "Manifest"): explicit options, then ABX_<ID>_<KEY>, then the field's
// declared env aliases, then its default. Nothing undeclared reaches the
// plugin. Secrets are collected so every message the host shows is masked.
import { typeMatches } from './manifest.mjs'

export class ConfigError extends Error {
  constructor(code, message, field) {
    super(message)
    this.code = code
    this.field = field
  }
}

export function envName(providerId, key) {
  return `ABX_${providerId}_${key}`.toUpperCase().replace(/-/g, '_')
}

function coerce(spec, raw, field) {
  if (typeof raw !== 'string') return raw
  switch (spec.type) {
    case 'bool':
      if (/^(true|1|yes)$/i.test(raw)) return true
      if (/^(false|0|no)$/i.test(raw)) return false
      throw new ConfigError('E8014', `config ${field} must be a boolean`, field)
    case 'number':
    case 'integer': {
      const n = Number(raw)
      if (raw.trim() === '' || !Number.isFinite(n) || (spec.type === 'integer' && !Number.isInteger(n)))
        throw new ConfigError('E8014', `config ${field} must be a ${spec.type}`, field)
      return n
    }
    default:
      return raw
  }
}

/** → { options, secrets }. overrides: options given on the command line (-o). */
export function resolveConfig(manifest, { env = process.env, overrides = {} } = {}) {
  const id = manifest.provider.id
  const fields = (manifest.config && manifest.config.fields) || {}
  for (const key of Object.keys(overrides))
    if (!(key in fields)) throw new ConfigError('E8014', `unknown option '${key}': ${id} declares ${Object.keys(fields).join(', ')}`, key)
  const options = {}
  const secrets = []
  for (const [key, spec] of Object.entries(fields)) {
    let value = overrides[key]
    if (value === undefined) {
      for (const name of [envName(id, key), ...(spec.env || [])]) {
        if (env[name] !== undefined && env[name] !== '') { value = env[name]; break }
      }
    }
    if (value === undefined) value = spec.default
    if (value === undefined) {
      if (spec.required) throw new ConfigError('E8003', `config ${key} is required: set ${envName(id, key)}${spec.env ? ' or ' + spec.env.join(' or ') : ''}`, key)
      continue
    }
    value = coerce(spec, value, key)
    if (!typeMatches(spec, value)) throw new ConfigError('E8014', `config ${key} does not fit type ${spec.type}`, key)
    options[key] = value
    if (spec.secret && typeof value === 'string' && value) secrets.push(value)
  }
  return { options, secrets }
}

export function mask(text, secrets) {
  let out = String(text)
  for (const s of secrets) if (s) out = out.split(s).join('****')
  return out
}
