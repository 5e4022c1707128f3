// ui.mjs — small DOM helpers shared by the playground's panels, and the one
// place errors are shown: a readable message at the top of the page.

/** h('div.cls', { attr }, ...children) → Element. Strings become text nodes. */
export function h(tag, attrs = {}, ...children) {
  const [name, ...classes] = tag.split('.')
  const el = document.createElement(name)
  if (classes.length) el.className = classes.join(' ')
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value)
    else if (key === 'dataset') Object.assign(el.dataset, value)
    else if (key in el && typeof value !== 'string') el[key] = value
    else el.setAttribute(key, value === true ? '' : value)
  }
  for (const child of children.flat()) if (child != null && child !== false) el.append(child)
  return el
}

export const $ = (selector, root = document) => root.querySelector(selector)

const errorList = () => $('#errors')

/**
 * Shows an error (or a message) at the top of the page until it is dismissed:
 * one at a time, the newest replacing the one before. The same failure again
 * (e.g. the periodic refresh of an unreachable backend) is counted, not repeated.
 */
export function showError(err) {
  const text = err instanceof Error ? err.message : String(err)
  const shown = errorList().firstElementChild
  if (shown && shown.querySelector('.text').textContent === text) {
    const count = shown.querySelector('.count')
    count.textContent = `×${Number(count.textContent.slice(1) || 1) + 1}`
    return shown
  }
  const item = h('li.error', { role: 'alert' },
    h('span.text', {}, text),
    h('span.count'),
    h('button.dismiss', { type: 'button', title: 'Dismiss', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'))
  errorList().replaceChildren(item)
  return item
}

export function clearErrors() {
  errorList().replaceChildren()
}

/**
 * Runs an action for a button: disables it while running, shows any error.
 * Resolves to the action's result, or undefined when it failed.
 */
export async function guarded(button, action) {
  if (button) button.disabled = true
  try {
    return await action()
  } catch (err) {
    showError(err)
    return undefined
  } finally {
    if (button) button.disabled = false
  }
}

/** "4m 05s" from now until an RFC 3339 time; "expired" when past. */
export function timeLeft(expiresAt, now = Date.now()) {
  if (!expiresAt) return '—'
  const ms = Date.parse(expiresAt) - now
  if (!Number.isFinite(ms)) return '—'
  if (ms <= 0) return 'expired'
  return duration(ms / 1000)
}

/** "4m 05s" (or "2h 05m") for a number of seconds, whole seconds down. */
export function duration(totalSeconds) {
  const s = Math.max(0, Math.floor(totalSeconds))
  const hours = Math.floor(s / 3600)
  const minutes = Math.floor((s % 3600) / 60)
  const seconds = String(s % 60).padStart(2, '0')
  return hours ? `${hours}h ${String(minutes).padStart(2, '0')}m` : `${minutes}m ${seconds}s`
}

/** 1536 → "1.5 KiB". */
export function formatSize(bytes) {
  if (typeof bytes !== 'number') return ''
  const units = ['B', 'KiB', 'MiB', 'GiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}

/** Base64 of bytes, for files.write with encoding "base64". */
export function bytesToBase64(bytes) {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}
