// manifest.mjs — reads and validates abx-provider.toml the way the reference
// host understands the plugin contract (docs/plugin-contract.md, "Manifest"). Any problem is an
// E8014 error naming the field.
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'smol-toml'

// The feature names (docs/plugin-contract.md): `abx provider test` case 1 fails on any other.
export const KNOWN_FEATURES = [
  'sandbox.lifecycle', 'sandbox.timeout', 'sandbox.pause', 'exec.run', 'exec.stream',
  'process.manage', 'files.rw', 'ports.url', 'templates.build',
]
const RESERVED_IDS = new Set(['alicloud-express', 'abx', 'local', 'default'])
const FIELD_TYPES = new Set(['string', 'enum', 'bool', 'number', 'integer'])

export class ManifestError extends Error {
  constructor(field, problem) {
    super(`Invalid abx-provider.toml: ${field} ${problem}`)
    this.code = 'E8014'
    this.field = field
  }
}

const isStr = (v) => typeof v === 'string' && v.length > 0
const isStrArray = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string')

export async function loadManifest(dir) {
  const file = path.join(dir, 'abx-provider.toml')
  let doc
  try {
    doc = parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw new ManifestError('(file)', `cannot be parsed: ${err.message.split('\n')[0]}`)
  }
  return validateManifest(doc, dir)
}

export async function validateManifest(doc, dir) {
  const fail = (field, problem) => { throw new ManifestError(field, problem) }
  if (doc.manifest_version !== 1) fail('manifest_version', 'must be 1')

  const p = doc.provider || fail('[provider]', 'is missing')
  if (!isStr(p.id) || !/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(p.id)) fail('provider.id', 'must match ^[a-z][a-z0-9]*(-[a-z0-9]+)*$')
  if (RESERVED_IDS.has(p.id)) fail('provider.id', 'is reserved')
  if (!isStr(p.name)) fail('provider.name', 'must be a non-empty string')
  if (!isStr(p.version)) fail('provider.version', 'must be a non-empty string')

  const c = doc.compat || fail('[compat]', 'is missing')
  if (!['epp/1', 'node/1'].includes(c.protocol)) fail('compat.protocol', 'must be "epp/1" or "node/1"')
  if (!c.requires || typeof c.requires !== 'object') fail('compat.requires', 'must be a table')
  for (const [k, v] of Object.entries(c.requires)) if (!isStr(v)) fail(`compat.requires.${k}`, 'must be a version range string')

  const r = doc.runtime || fail('[runtime]', 'is missing')
  if (c.protocol === 'node/1') {
    if (r.kind !== 'node') fail('runtime.kind', 'must be "node" for protocol node/1')
    if (!isStr(r.entry)) fail('runtime.entry', 'must name the ES module')
    const entry = path.resolve(dir, r.entry)
    if (!entry.startsWith(path.resolve(dir) + path.sep)) fail('runtime.entry', 'must stay inside the plugin directory')
    try { await stat(entry) } catch { fail('runtime.entry', `does not exist: ${r.entry}`) }
  } else {
    if (r.kind !== 'exec') fail('runtime.kind', 'must be "exec" for protocol epp/1')
    if (!Array.isArray(r.command) || r.command.length === 0 || !isStrArray(r.command)) fail('runtime.command', 'must be a non-empty array of strings')
  }

  const f = doc.features || fail('[features]', 'is missing')
  if (!isStrArray(f.supported)) fail('features.supported', 'must be an array of strings')
  for (const name of f.supported) if (!KNOWN_FEATURES.includes(name)) fail('features.supported', `names an unknown feature "${name}"`)
  if (new Set(f.supported).size !== f.supported.length) fail('features.supported', 'lists a feature twice')

  const s = doc.security || fail('[security]', 'is missing')
  if (!isStrArray(s.network)) fail('security.network', 'must be an array of strings')
  if (!isStrArray(s.filesystem)) fail('security.filesystem', 'must be an array of strings')
  if (typeof s.spawns_processes !== 'boolean') fail('security.spawns_processes', 'must be a boolean')

  if (doc.core && doc.core.inherit !== undefined && !isStrArray(doc.core.inherit)) fail('core.inherit', 'must be an array of strings')

  if (doc.template !== undefined) validateTemplate(doc.template)

  const fields = (doc.config && doc.config.fields) || {}
  for (const [name, spec] of Object.entries(fields)) {
    const at = `config.fields.${name}`
    if (!/^[a-z][a-z0-9_]*$/.test(name)) fail(at, 'name must match [a-z][a-z0-9_]*')
    if (!FIELD_TYPES.has(spec.type)) fail(`${at}.type`, `must be one of ${[...FIELD_TYPES].join(', ')}`)
    for (const flag of ['secret', 'credential', 'required']) if (spec[flag] !== undefined && typeof spec[flag] !== 'boolean') fail(`${at}.${flag}`, 'must be a boolean')
    if (spec.env !== undefined && !isStrArray(spec.env)) fail(`${at}.env`, 'must be an array of variable names')
    if (spec.type === 'enum' && (!isStrArray(spec.choices) || spec.choices.length === 0)) fail(`${at}.choices`, 'must list the enum values')
    if (spec.default !== undefined && !typeMatches(spec, spec.default)) fail(`${at}.default`, `does not fit type ${spec.type}`)
    if (spec.secret && spec.default !== undefined) fail(`${at}.default`, 'a secret cannot have a default')
  }
  return doc
}

// The optional [template] table (docs/plugin-contract.md, "Template table"):
// how a Dockerfile abx generates must look to build on the provider. Each
// rule as the seed gives it; an error names the field as
// "Invalid abx-provider.toml: [template] <field> ...".
export function validateTemplate(t) {
  const fail = (name, problem) => {
    const e = new ManifestError(`[template] ${name}`, problem)
    e.field = `template.${name}`
    throw e
  }
  if (!t || typeof t !== 'object' || Array.isArray(t)) fail('(table)', 'must be a table')
  if (!isStr(t.base_image)) fail('base_image', 'is required: a non-empty string (the Dockerfile\'s FROM)')
  if (typeof t.entrypoint_replaceable !== 'boolean') fail('entrypoint_replaceable', 'is required: a boolean (false: the generator writes no ENTRYPOINT)')
  if (!['image_cmd', 'platform_start_cmd'].includes(t.server_start)) fail('server_start', 'is required: "image_cmd" or "platform_start_cmd"')
  if (t.server_start === 'image_cmd') {
    if (!Array.isArray(t.cmd) || t.cmd.length === 0 || !isStrArray(t.cmd)) fail('cmd', 'is required with server_start = "image_cmd": a non-empty array of strings')
    if (t.start_cmd !== undefined && t.start_cmd !== '') fail('start_cmd', 'must be omitted or empty with server_start = "image_cmd"')
  } else {
    if (!isStr(t.start_cmd)) fail('start_cmd', 'is required with server_start = "platform_start_cmd": a non-empty string')
    if (t.cmd !== undefined && !(Array.isArray(t.cmd) && t.cmd.length === 0)) fail('cmd', 'must be omitted or empty with server_start = "platform_start_cmd"')
  }
  if (t.ready_cmd !== undefined && typeof t.ready_cmd !== 'string') fail('ready_cmd', 'must be a string, or omitted')
  if (!isStr(t.arch)) fail('arch', 'is required: a non-empty string, e.g. "linux/amd64"')
  if (!isStr(t.workdir)) fail('workdir', 'is required: a non-empty string (the Dockerfile\'s WORKDIR)')
  if (t.reserved_ports !== undefined &&
      (!Array.isArray(t.reserved_ports) || !t.reserved_ports.every((p) => Number.isInteger(p) && p >= 1 && p <= 65535)))
    fail('reserved_ports', 'must be an array of integers from 1 to 65535 (or omitted, or [])')
  if (!isStr(t.registry)) fail('registry', 'is required: a non-empty description of how images are pulled (credentials stay in the provider\'s config)')
}

export function typeMatches(spec, v) {
  switch (spec.type) {
    case 'string': return typeof v === 'string'
    case 'enum': return typeof v === 'string' && spec.choices.includes(v)
    case 'bool': return typeof v === 'boolean'
    case 'number': return typeof v === 'number' && Number.isFinite(v)
    case 'integer': return Number.isInteger(v)
  }
  return false
}
