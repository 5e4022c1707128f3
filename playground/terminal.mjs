// terminal.mjs — an interactive shell in the selected sandbox: xterm.js (from
// npm, served from node_modules) on the PTY methods. pty.open starts bash on a
// terminal as wide as the screen, its output arrives as exec.output with stream
// "pty", keystrokes go back with pty.input, and pty.resize follows the window.
import { Terminal } from '/node_modules/@xterm/xterm/lib/xterm.mjs'
import { guarded, h, showError } from './ui.mjs'

const ROWS = 26
const FONT = 'ui-monospace, "DejaVu Sans Mono", Menlo, monospace'
const FONT_SIZE = 13

// As many columns as fit the screen's width (at least 20).
function fittingCols(el) {
  const ctx = document.createElement('canvas').getContext('2d')
  ctx.font = `${FONT_SIZE}px ${FONT}`
  const charWidth = ctx.measureText('M'.repeat(20)).width / 20
  const inner = el.clientWidth - 24 // the screen's padding and a scrollbar's worth
  return Math.max(20, Math.floor(inner / charWidth) - 1)
}

export function createTerminalPanel(root) {
  let client = null
  let sandboxId = null
  let session = null // { term, pid, sandboxId, closed }

  const openButton = h('button', { type: 'button', onclick: open }, 'Open terminal')
  const closeButton = h('button.danger', { type: 'button', disabled: true, onclick: close }, 'Close terminal')
  const status = h('span.term-status')
  const screen = h('div.terminal-screen', { 'aria-label': 'Terminal' })
  const unsupported = h('div.placeholder', { hidden: true }, 'terminals (pty) not supported by this backend')
  const body = h('div', {}, h('div.toolbar', {}, openButton, closeButton, status), screen)
  root.append(unsupported, body)

  async function open() {
    if (session && !session.closed) return
    screen.replaceChildren()
    const cols = fittingCols(screen)
    const term = new Terminal({ cols, rows: ROWS, cursorBlink: true, convertEol: false,
      fontFamily: FONT, fontSize: FONT_SIZE,
      theme: { background: '#0f172a', foreground: '#e2e8f0', cursor: '#38bdf8' } })
    term.open(screen)
    const current = { term, pid: null, sandboxId, closed: false }
    session = current
    await guarded(openButton, async () => {
      const started = await client.stream('pty.open', { sandbox_id: sandboxId, cols, rows: ROWS }, (n) => {
        if (n.method === 'exec.output') { if (current === session) term.write(n.params.data) }
        else if (n.method === 'exec.exit') ended(current, n.params)
      })
      current.pid = started.pid
      const showSize = () => { status.textContent = `bash · pid ${started.pid} · ${term.cols}×${term.rows}` }
      showSize()
      closeButton.disabled = false
      openButton.hidden = true
      // Keystrokes are sent in order: each waits for the one before it.
      let queue = Promise.resolve()
      term.onData((data) => {
        if (current.closed) return
        queue = queue.then(() => client.call('pty.input', { sandbox_id: current.sandboxId, pid: current.pid, data }))
          .catch((err) => { if (!current.closed) showError(err) })
      })
      term.onResize(({ cols, rows }) => {
        client.call('pty.resize', { sandbox_id: current.sandboxId, pid: current.pid, cols, rows })
          .then(() => { if (!current.closed) showSize() }, showError)
      })
      term.focus()
    })
    if (current.pid === null) {
      current.closed = true
      term.dispose()
    }
  }

  // The terminal follows the window's width; pty.resize tells the shell.
  window.addEventListener('resize', () => {
    const current = session
    if (!current || current.closed || current.pid === null || screen.clientWidth === 0) return
    const cols = fittingCols(screen)
    if (cols !== current.term.cols) current.term.resize(cols, ROWS)
  })

  function ended(current, exit) {
    current.closed = true
    if (current !== session) return
    const why = exit.failure ? exit.failure.message : `exit code ${exit.exit_code}`
    current.term.write(`\r\n\x1b[2m[terminal ended: ${why}]\x1b[0m\r\n`)
    status.textContent = `ended (${why})`
    closeButton.disabled = true
    openButton.hidden = false
  }

  async function close() {
    const current = session
    if (!current || current.closed) return
    await guarded(closeButton, () => client.call('pty.close', { sandbox_id: current.sandboxId, pid: current.pid }))
  }

  return {
    show(nextClient, id) {
      // A terminal belongs to one sandbox: leaving it closes the shell.
      if (session && !session.closed && client) {
        const old = session
        client.call('pty.close', { sandbox_id: old.sandboxId, pid: old.pid }).catch(() => {})
      }
      if (session) session.term.dispose()
      session = null
      client = nextClient
      sandboxId = id
      screen.replaceChildren()
      status.textContent = ''
      closeButton.disabled = true
      openButton.hidden = false
      // pty.* are optional methods of exec.stream (seed §3: "pty" is no feature)
      const supported = Boolean(client) && client.has('exec.stream')
      unsupported.hidden = supported || !client
      body.hidden = !supported
    },
    visible() {
      session?.term.focus()
    },
  }
}
