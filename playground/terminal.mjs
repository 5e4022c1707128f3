// terminal.mjs — an interactive shell in the selected sandbox: xterm.js (from
// npm, served from node_modules) on the PTY methods. pty.open starts bash on a
// terminal that fills the screen, its output arrives as exec.output with stream
// "pty", keystrokes go back with pty.input, and pty.resize follows the window.
import { FitAddon } from '/node_modules/@xterm/addon-fit/lib/addon-fit.mjs'
import { Terminal } from '/node_modules/@xterm/xterm/lib/xterm.mjs'
import { guarded, h, showError } from './ui.mjs'

const FONT = 'ui-monospace, "DejaVu Sans Mono", Menlo, monospace'
const FONT_SIZE = 13
const MIN_HEIGHT = 240 // px: below this the page scrolls instead
const BELOW = 40 // px under the screen: its padding, the panel's and the layout's

// The screen reaches down to the bottom of the window (the footer may scroll
// into view below it), so the terminal has as many rows as the window has room for.
function fillHeight(fitBox) {
  const top = fitBox.getBoundingClientRect().top + window.scrollY
  fitBox.style.height = `${Math.max(MIN_HEIGHT, Math.floor(window.innerHeight - top - BELOW))}px`
}

export function createTerminalPanel(root) {
  let client = null
  let sandboxId = null
  // { term, fit, pid, sandboxId, closed, cols, rows (what the pty was told), resizing }
  let session = null

  const openButton = h('button', { type: 'button', onclick: open }, 'Open terminal')
  const closeButton = h('button.danger', { type: 'button', disabled: true, onclick: close }, 'Close terminal')
  const status = h('span.term-status')
  const fitBox = h('div.terminal-fit') // xterm's parent, no padding: the fit addon measures it
  const screen = h('div.terminal-screen', { 'aria-label': 'Terminal' }, fitBox)
  const unsupported = h('div.placeholder', { hidden: true }, 'terminals (pty) not supported by this backend')
  const body = h('div', {}, h('div.toolbar', {}, openButton, closeButton, status), screen)
  root.append(unsupported, body)

  const showSize = (current) => {
    if (current === session && !current.closed) status.textContent = `bash · pid ${current.pid} · ${current.cols}×${current.rows}`
  }

  // xterm's size fitted to the screen; a change reaches the pty through onResize → tellSize.
  function refit(current) {
    if (!current || current.closed || fitBox.clientWidth === 0) return // hidden: refitted when shown
    fillHeight(fitBox)
    current.fit.fit()
  }

  // The pty gets xterm's size: one pty.resize at a time, then the newest size
  // if it changed meanwhile. The header shows the size the pty has.
  async function tellSize(current) {
    if (current.resizing || current.pid === null) return
    current.resizing = true
    try {
      while (!current.closed && (current.term.cols !== current.cols || current.term.rows !== current.rows)) {
        const { cols, rows } = current.term
        await client.call('pty.resize', { sandbox_id: current.sandboxId, pid: current.pid, cols, rows })
        current.cols = cols
        current.rows = rows
        showSize(current)
      }
    } catch (err) {
      if (!current.closed) showError(err)
    } finally {
      current.resizing = false
    }
  }

  async function open() {
    if (session && !session.closed) return
    fitBox.replaceChildren()
    const term = new Terminal({ cursorBlink: true, convertEol: false, fontFamily: FONT, fontSize: FONT_SIZE,
      theme: { background: '#0f172a', foreground: '#e2e8f0', cursor: '#38bdf8' } })
    const fit = new FitAddon()
    term.loadAddon(fit)
    const current = { term, fit, pid: null, sandboxId, closed: false, cols: 0, rows: 0, resizing: false }
    session = current
    term.open(fitBox)
    refit(current)
    term.onResize(() => tellSize(current))
    await guarded(openButton, async () => {
      const { cols, rows } = term
      const started = await client.stream('pty.open', { sandbox_id: sandboxId, cols, rows }, (n) => {
        if (n.method === 'exec.output') { if (current === session) term.write(n.params.data) }
        else if (n.method === 'exec.exit') ended(current, n.params)
      })
      Object.assign(current, { pid: started.pid, cols, rows })
      showSize(current)
      tellSize(current) // the window may have changed while the shell started
      closeButton.disabled = false
      openButton.hidden = true
      // Keystrokes are sent in order: each waits for the one before it.
      let queue = Promise.resolve()
      term.onData((data) => {
        if (current.closed) return
        queue = queue.then(() => client.call('pty.input', { sandbox_id: current.sandboxId, pid: current.pid, data }))
          .catch((err) => { if (!current.closed) showError(err) })
      })
      term.focus()
    })
    if (current.pid === null) {
      current.closed = true
      term.dispose()
    }
  }

  window.addEventListener('resize', () => refit(session))

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
      if (session) {
        session.closed = true
        session.term.dispose()
      }
      session = null
      client = nextClient
      sandboxId = id
      fitBox.replaceChildren()
      status.textContent = ''
      closeButton.disabled = true
      openButton.hidden = false
      // pty.* are optional methods of exec.stream (docs/plugin-contract.md, "Methods and features": "pty" is no feature)
      const supported = Boolean(client) && client.has('exec.stream')
      unsupported.hidden = supported || !client
      body.hidden = !supported
    },
    // Shown again (a tab switch): the window may have changed meanwhile.
    visible() {
      refit(session)
      session?.term.focus()
    },
    /** xterm's own size while a shell runs ({ cols, rows }), else null: for the Chromium test. */
    xtermSize() {
      return session && !session.closed ? { cols: session.term.cols, rows: session.term.rows } : null
    },
  }
}
