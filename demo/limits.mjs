// limits.mjs — which of a sandbox's cpu, memory and disk limits the local
// backend enforces, from the `limits` of its ready line (or of
// GET /health/details): `true` (full isolation: cgroups and disk images),
// `false` (rootless or no isolation: none), or an object with a member per
// limit (`{ "memory": true, "pids": true, "cpu": false, ... }`, or values
// that say more than a boolean). Anything else counts as not enforced.

const KINDS = { cpu: /^cpu/, memory: /^mem/, pids: /^pids/, disk: /^disk/ }

// A member's value says the limit applies: true, a positive number, a word
// other than off/none/false/no, or an object not marked off.
function applies(value) {
  if (typeof value === 'boolean') return value
  if (typeof value === 'number') return value > 0
  if (typeof value === 'string') return value !== '' && !/^(off|none|false|no|unlimited)$/i.test(value)
  if (value && typeof value === 'object') return ![value.enforced, value.applies, value.enabled, value.on].includes(false)
  return false
}

/** { cpu, memory, pids, disk }: booleans, from the backend's `limits`. */
export function enforcedLimits(limits) {
  const out = {}
  for (const [kind, name] of Object.entries(KINDS)) {
    if (limits === true || limits === false) out[kind] = limits
    else if (limits && typeof limits === 'object') out[kind] = Object.entries(limits).some(([k, v]) => name.test(k) && applies(v))
    else out[kind] = false
  }
  return out
}

/** A record's cpu / memory / disk as they apply: "2 vCPU / 512 MiB / 1024 MiB
 *  (enforced)", or each one asked but not enforced said so. */
export function describeLimits(rec, limits) {
  const on = enforcedLimits(limits)
  const parts = [['cpu', `${rec.cpu} vCPU`], ['memory', `${rec.memory} MiB`], ['disk', `${rec.disk} MiB`]]
  if (parts.every(([k]) => on[k])) return `${parts.map(([, v]) => v).join(' / ')} (enforced)`
  if (!parts.some(([k]) => on[k])) return `none enforced by this backend (asked: ${parts.map(([, v]) => v).join(' / ')})`
  return parts.map(([k, v]) => `${v}${on[k] ? '' : ' (not enforced)'}`).join(' / ')
}

/** The backend's limits in a few words, for its start line. */
export function limitsLine(limits) {
  const on = enforcedLimits(limits)
  const kinds = Object.keys(on).filter((k) => on[k])
  const list = (names) => names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]
  if (kinds.length === 4) return 'cpu, memory, pids and disk limits enforced'
  return kinds.length ? `${list(kinds)} limits only` : 'no cpu, memory, pids or disk limits'
}
