// code.mjs — E2B's code interpreter in the selected sandbox (a template with
// one, such as code-interpreter-v1): cells run one after the other in the
// sandbox's default context, so state carries from cell to cell. code.run,
// with its code.output notifications drawn as they come: stdout and stderr,
// images (PNG, JPEG, SVG), HTML (in a sandboxed frame: the cell's HTML never
// runs in this page, which holds the API key), DataFrames as tables, text,
// and an error with its traceback.
import { guarded, h } from './ui.mjs'

const IMAGE_TYPES = { png: 'image/png', jpeg: 'image/jpeg' }

export function createCodePanel(root) {
  let client = null
  let sandboxId = null

  const cells = h('div.cells', { 'aria-live': 'polite' })
  const input = h('textarea.cell-input', { name: 'code', rows: 6, spellcheck: false,
    placeholder: 'print("hello")  — Shift+Enter runs the cell' })
  input.value = 'import pandas as pd\nimport matplotlib.pyplot as plt\n\nplt.plot([1, 2, 3, 4], [1, 4, 9, 16])\nplt.show()\npd.DataFrame({"n": [1, 2, 3], "square": [1, 4, 9]})'
  const runButton = h('button', { type: 'submit' }, 'Run cell')
  const clearButton = h('button.ghost', { type: 'button', onclick: () => cells.replaceChildren() }, 'Clear')
  const note = h('p.code-note', { hidden: true })
  const form = h('form.cell-form', { onsubmit: run }, input, h('div.cell-buttons', {}, runButton, clearButton))
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.shiftKey) { e.preventDefault(); form.requestSubmit() } })
  root.append(note, cells, form)

  async function run(event) {
    event.preventDefault()
    const code = input.value
    if (!code.trim() || !client) return
    const owner = sandboxId
    const outputs = h('div.cell-outputs')
    const status = h('span.cell-status.running', {}, 'running…')
    const cell = h('div.cell', {}, h('div.cell-head', {}, h('span.cell-count', {}, '[*]'), status), h('pre.cell-code', {}, code), outputs)
    cells.append(cell)
    cell.scrollIntoView({ block: 'nearest' })
    const shown = { count: 0 }
    const result = await guarded(runButton, () => client.stream('code.run', { sandbox_id: owner, code }, (n) => {
      if (owner !== sandboxId || n.method !== 'code.output') return
      show(outputs, n.params)
      shown.count++
      cells.scrollTop = cells.scrollHeight // the newest output in sight
    }))
    if (owner !== sandboxId) return
    if (!result) {
      status.className = 'cell-status failed'
      status.textContent = 'not run'
      return
    }
    // The answer holds every output again: draw what no notification did.
    if (shown.count === 0) drawAll(outputs, result)
    cell.querySelector('.cell-count').textContent = `[${result.execution_count ?? ' '}]`
    status.className = `cell-status ${result.error ? 'failed' : 'ok'}`
    status.textContent = result.error ? result.error.name : 'done'
    cells.scrollTop = cells.scrollHeight
  }

  return {
    show(nextClient, id) {
      client = nextClient
      sandboxId = id
      cells.replaceChildren()
      const supported = !client || client.has('exec.run')
      note.hidden = supported
      note.textContent = supported ? '' : 'code is not supported by this backend'
      runButton.disabled = !supported
    },
  }
}

function drawAll(outputs, execution) {
  for (const text of execution.logs.stdout) show(outputs, { stream: 'stdout', text })
  for (const text of execution.logs.stderr) show(outputs, { stream: 'stderr', text })
  for (const result of execution.results) show(outputs, { stream: 'result', result })
  if (execution.error) show(outputs, { stream: 'error', error: execution.error })
}

/** One code.output: appended to the cell's outputs. */
function show(outputs, { stream, text, result, error }) {
  if (stream === 'stdout' || stream === 'stderr') {
    const last = outputs.lastElementChild
    if (last && last.dataset.stream === stream) last.append(text)
    else outputs.append(h(`pre.out.${stream}`, { dataset: { stream } }, text))
  } else if (stream === 'error') {
    outputs.append(h('div.out.error-out', {}, h('div.error-name', {}, `${error.name}: ${error.value}`), h('pre.traceback', {}, error.traceback)))
  } else if (stream === 'result') {
    outputs.append(render(result))
  }
}

/** A result by its richest type: a table for a DataFrame's data, an image, HTML in a sandboxed frame, else text. */
function render(result) {
  return h(`div.out.result${result.is_main_result ? '.main' : ''}`, {}, content(result))
}

function content(result) {
  for (const [field, type] of Object.entries(IMAGE_TYPES))
    if (result[field]) return h('img.result-image', { alt: result.text || 'an image', src: `data:${type};base64,${result[field]}` })
  if (result.svg) return h('img.result-image', { alt: result.text || 'an SVG image', src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(result.svg)}` })
  if (result.data && typeof result.data === 'object') return table(result.data)
  // In a frame without scripts, same-origin rights or navigation.
  if (result.html) return h('iframe.result-html', { sandbox: '', title: 'HTML output', srcdoc: result.html })
  return h('pre.result-text', {}, result.text ?? result.markdown ?? result.latex ?? JSON.stringify(result.json ?? result))
}

/** {column: [values]} as a table. */
function table(data) {
  const columns = Object.keys(data)
  const rows = Math.max(0, ...columns.map((c) => (Array.isArray(data[c]) ? data[c].length : 0)))
  return h('div.table-wrap', {}, h('table.result-table', {},
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c)))),
    h('tbody', {}, ...Array.from({ length: rows }, (_, i) => h('tr', {}, ...columns.map((c) => h('td', {}, cellText(data[c]?.[i]))))))))
}

const cellText = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))
