// app.mjs — the playground page: connect to a backend, list and create
// sandboxes, act on the selected one (pause, resume, kill) and hand it to the
// command, code, files and terminal panels. Every failure is shown in the page.
import { connect } from './client.mjs'
import { createCodePanel } from './code.mjs'
import { createCommandPanel } from './command.mjs'
import { createFilesPanel } from './files.mjs'
import { createTerminalPanel } from './terminal.mjs'
import { $, clearErrors, duration, guarded, h, showError, timeLeft } from './ui.mjs'

const REFRESH_MS = 5000

const state = {
  client: null,
  sandboxes: [], // SandboxRecords from the last sandbox.list
  selected: null, // sandbox_id
  refreshTimer: null,
  tab: 'command', // the panel on show
  pausedShown: null, // sandbox_id of the paused sandbox the panels are disabled for
}

const panels = {
  command: createCommandPanel($('#tab-command')),
  code: createCodePanel($('#tab-code')),
  files: createFilesPanel($('#tab-files')),
  terminal: createTerminalPanel($('#tab-terminal')),
}

// Nothing fails only in the console: stray errors land in the page too.
window.addEventListener('error', (event) => showError(event.error || event.message))
window.addEventListener('unhandledrejection', (event) => showError(event.reason))

// ---- connection ---------------------------------------------------------

const connectForm = $('#connect')

async function onConnect(event) {
  event.preventDefault()
  clearErrors()
  const form = connectForm
  const config = { api_key: form.api_key.value.trim() }
  if (form.api_url.value.trim()) config.api_url = form.api_url.value.trim()
  if (form.sandbox_url.value.trim()) config.sandbox_url = form.sandbox_url.value.trim()
  await guarded($('#connect-button'), async () => {
    await disconnect()
    setConnection('connecting…')
    const client = await connect(config)
    try {
      await client.call('sandbox.list', {}) // proves the URL and the key before the page says "connected"
    } catch (err) {
      await client.close()
      setConnection('not connected')
      // In a browser a refused CORS request and a closed port look the same.
      if (err.data?.kind === 'unreachable') err.message += '. Check the URL, and that the backend allows requests from this page (CORS).'
      throw err
    }
    state.client = client
    window.playground.client = client
    setConnection(`connected · ${client.provider.id} ${client.provider.version}`, client.features)
    $('#create-button').disabled = false
    $('#refresh').disabled = false
    await refresh()
    state.refreshTimer = setInterval(() => refresh().catch(showError), REFRESH_MS)
  }).catch(showError)
  if (!state.client) setConnection('not connected')
}

async function disconnect() {
  clearInterval(state.refreshTimer)
  for (const panel of Object.values(panels)) panel.show(null, null)
  if (state.client) await state.client.close()
  state.client = null
  state.sandboxes = []
  state.selected = null
  $('#create-button').disabled = true
  $('#refresh').disabled = true
  renderList()
  renderSelected()
}

function setConnection(text, features = []) {
  const el = $('#connection')
  el.replaceChildren(h('span.state', {}, text), ...features.map((f) => h('span.feature', { title: 'declared feature' }, f)))
  el.classList.toggle('ok', text.startsWith('connected'))
}

// ---- sandboxes ----------------------------------------------------------

async function refresh() {
  if (!state.client) return
  const { sandboxes } = await state.client.call('sandbox.list', {})
  sandboxes.sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)))
  state.sandboxes = sandboxes
  renderList()
  if (state.selected && !sandboxes.some((s) => s.sandbox_id === state.selected)) select(null)
  else renderSelected()
}

function upsert(record) {
  const i = state.sandboxes.findIndex((s) => s.sandbox_id === record.sandbox_id)
  if (i >= 0) state.sandboxes[i] = { ...state.sandboxes[i], ...record }
  else state.sandboxes.unshift(record)
  renderList()
  renderSelected()
}

function renderList() {
  const rows = $('#sandbox-rows')
  if (!state.client) {
    rows.replaceChildren(h('tr.empty', {}, h('td', { colSpan: 3 }, 'Connect to a backend to see its sandboxes.')))
    return
  }
  if (state.sandboxes.length === 0) {
    rows.replaceChildren(h('tr.empty', {}, h('td', { colSpan: 3 }, 'No sandboxes yet: create one.')))
    return
  }
  rows.replaceChildren(...state.sandboxes.map((s) => h(
    `tr.sandbox${s.sandbox_id === state.selected ? '.selected' : ''}`,
    { dataset: { id: s.sandbox_id }, tabIndex: 0, onclick: () => select(s.sandbox_id),
      onkeydown: (e) => { if (e.key === 'Enter') select(s.sandbox_id) } },
    h('td.id', {}, h('code', {}, s.sandbox_id), h('div.sub', {}, s.template || '')),
    h('td', {}, h(`span.badge.${s.status}`, {}, s.status)),
    leftCell(h('td.left'), s),
  )))
}

async function onCreate(event) {
  event.preventDefault()
  const form = $('#create')
  const params = { template: form.template.value.trim() || 'base', metadata: { via: 'playground' } }
  if (form.timeout.value) params.timeout = Number(form.timeout.value)
  await guarded($('#create-button'), async () => {
    const record = await state.client.call('sandbox.create', params)
    upsert(record)
    select(record.sandbox_id)
    await refresh() // the listing carries expires_at
  })
}

// ---- the selected sandbox -----------------------------------------------

function select(id) {
  if (id === state.selected) return
  state.selected = id
  state.pausedShown = null // the panels are shown afresh below
  renderList()
  renderSelected()
  for (const panel of Object.values(panels)) panel.show(id ? state.client : null, id)
  if (id) panels[state.tab].visible?.()
}

function renderSelected() {
  const record = state.sandboxes.find((s) => s.sandbox_id === state.selected)
  $('#no-selection').hidden = Boolean(record)
  $('#selected').hidden = !record
  if (!record) return
  $('#selected-id').textContent = record.sandbox_id
  const badge = $('#selected-status')
  badge.textContent = record.status
  badge.className = `badge ${record.status}`
  leftCell($('#selected-left'), record)
  $('#selected-template').textContent = record.template ? `template ${record.template}` : ''
  $('#pause').disabled = record.status !== 'running' || !state.client.has('sandbox.pause')
  $('#resume').disabled = record.status !== 'paused' || !state.client.has('sandbox.pause')
  showPaused(record)
}

// A paused sandbox answers no command, file or terminal call (unavailable,
// data.status "paused"): its panels are disabled, and the page says why,
// until it runs again. Each tab is a <fieldset>, so disabling it disables
// every control in it without touching their own state.
function showPaused(record) {
  const paused = record.status === 'paused'
  const resumed = !paused && state.pausedShown === record.sandbox_id
  state.pausedShown = paused ? record.sandbox_id : null
  $('#paused-note').hidden = !paused
  for (const tab of document.querySelectorAll('fieldset.tab')) tab.disabled = paused
  if (resumed) panels[state.tab].visible?.() // what could not load while it was paused
}

// Time left counts down only while a sandbox runs (the ticker below updates
// every element with data-expires); a paused one keeps its time, which the
// backend may report (lifetime_left: the local backend does, E2B does not).
function leftCell(el, record) {
  const running = record.status === 'running' && record.expires_at
  if (running) el.dataset.expires = record.expires_at
  else delete el.dataset.expires
  if (running) el.textContent = leftText(el, record.expires_at)
  else if (record.status === 'paused') onHold(el, record)
  else el.textContent = '—'
  return el
}

function onHold(el, record) {
  if (typeof record.lifetime_left !== 'number') {
    el.textContent = 'on hold'
    return
  }
  const left = duration(record.lifetime_left)
  if (el.id === 'selected-left') el.textContent = `${left} left (on hold)`
  else el.replaceChildren(left, h('div.sub', {}, 'on hold')) // the list's column is narrow
}

const leftText = (el, expiresAt) => {
  const left = timeLeft(expiresAt)
  return el.id === 'selected-left' && left !== 'expired' ? `${left} left` : left
}

async function act(button, method) {
  const id = state.selected
  for (const b of document.querySelectorAll('.actions button')) b.disabled = true
  await guarded(null, async () => {
    const result = await state.client.call(method, { sandbox_id: id })
    if (method === 'sandbox.kill') {
      state.sandboxes = state.sandboxes.filter((s) => s.sandbox_id !== id)
      select(null)
      renderList()
    } else if (method === 'sandbox.pause') {
      upsert({ sandbox_id: id, status: result.status })
    } else {
      upsert(result) // resume answers the whole record
    }
    await refresh()
  })
  renderSelected() // the buttons that fit the sandbox's state
  $('#kill').disabled = false
}

// Time left ticks every second without asking the backend.
setInterval(() => {
  for (const el of document.querySelectorAll('[data-expires]')) el.textContent = leftText(el, el.dataset.expires)
}, 1000)

function showTab(name) {
  state.tab = name
  for (const button of document.querySelectorAll('.tabs [data-tab]')) {
    const active = button.dataset.tab === name
    button.classList.toggle('active', active)
    button.setAttribute('aria-selected', String(active))
    $(`#tab-${button.dataset.tab}`).hidden = !active
  }
  panels[name].visible?.()
}

// ---- wiring -------------------------------------------------------------

connectForm.addEventListener('submit', onConnect)
$('#create').addEventListener('submit', onCreate)
$('#refresh').addEventListener('click', (e) => guarded(e.currentTarget, refresh))
$('#pause').addEventListener('click', (e) => act(e.currentTarget, 'sandbox.pause'))
$('#resume').addEventListener('click', (e) => act(e.currentTarget, 'sandbox.resume'))
$('#kill').addEventListener('click', (e) => {
  // Killing cannot be undone: the sandbox's processes and files are gone.
  if (confirm(`Kill sandbox ${state.selected}? Its processes and files are gone for good.`)) act(e.currentTarget, 'sandbox.kill')
})
for (const button of document.querySelectorAll('.tabs [data-tab]'))
  button.addEventListener('click', () => showTab(button.dataset.tab))

// Opened as index.html?local (./build.sh demo prints such a link), the page asks
// the server that serves it for its local backend and connects at once. A link
// may also carry api_url / sandbox_url / api_key in its #fragment: read once,
// then removed from the address bar.
async function prefill() {
  let given = new URLSearchParams(location.hash.slice(1))
  if (location.hash) history.replaceState(null, '', location.pathname + location.search)
  if (new URLSearchParams(location.search).has('local')) {
    const res = await fetch('local-backend.json', { cache: 'no-store' })
    if (!res.ok) throw new Error(`?local: this server has no local backend to offer (HTTP ${res.status})`)
    given = new URLSearchParams(await res.json())
  }
  for (const name of ['api_url', 'sandbox_url', 'api_key']) if (given.get(name)) connectForm[name].value = given.get(name)
  if (given.get('api_key')) connectForm.requestSubmit()
}

window.playground = { ready: true, client: null, state, terminal: panels.terminal }
prefill().catch(showError)
