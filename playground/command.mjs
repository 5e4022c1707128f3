// command.mjs — run a shell command in the selected sandbox and watch its
// output stream in: exec.start, then exec.output notifications (stdout and
// stderr shown apart) and one exec.exit with the exit code. Without the
// exec.stream feature it falls back to exec.run (the output arrives at the end).
import { guarded, h } from './ui.mjs'

export function createCommandPanel(root) {
  let client = null
  let sandboxId = null
  let running = null // { pid } of the command in flight

  const input = h('input.command', { name: 'command', placeholder: 'echo hello; echo oops >&2; exit 3',
    value: 'for i in 1 2 3; do echo "out $i"; echo "err $i" >&2; sleep 0.3; done; exit 3', spellcheck: false })
  const runButton = h('button', { type: 'submit' }, 'Run')
  const stopButton = h('button.danger', { type: 'button', disabled: true, onclick: stop }, 'Stop')
  const output = h('pre.output', { 'aria-live': 'polite' })
  const exit = h('div.exit')
  const legend = h('div.legend', {}, h('span.stdout', {}, 'stdout'), h('span.stderr', {}, 'stderr'))
  const form = h('form.run', { onsubmit: run }, input, runButton, stopButton)
  root.append(form, h('div.output-head', {}, legend, exit), output)

  // Output is drawn in batches (every FLUSH_MS at most), and the page keeps the
  // last MAX_CHARS of it: laying out a big <pre> again for every chunk, or
  // without end, would freeze the page.
  const MAX_CHARS = 256 * 1024
  const FLUSH_MS = 30
  let shownChars = 0
  let dropped = 0
  let queued = [] // [stream, text] not drawn yet
  let flushTimer = null

  function append(stream, text) {
    queued.push([stream, text])
    flushTimer ??= setTimeout(flush, FLUSH_MS)
  }

  function flush() {
    clearTimeout(flushTimer)
    flushTimer = null
    const batch = queued
    queued = []
    for (const [stream, text] of batch) {
      const last = output.lastElementChild
      if (last && last.dataset.stream === stream) last.firstChild.appendData(text)
      else output.append(h(`span.${stream}`, { dataset: { stream } }, document.createTextNode(text)))
      shownChars += text.length
    }
    if (shownChars > MAX_CHARS) {
      let notice = output.querySelector('.dropped')
      if (!notice) output.prepend((notice = h('span.dropped')))
      while (shownChars > MAX_CHARS * 0.75) {
        const first = notice.nextElementSibling
        const cut = Math.min(first.firstChild.length, shownChars - MAX_CHARS * 0.75)
        first.firstChild.deleteData(0, cut)
        if (!first.firstChild.length) first.remove()
        shownChars -= cut
        dropped += cut
      }
      notice.textContent = `… ${dropped} earlier characters not shown …\n`
    }
    output.scrollTop = output.scrollHeight
  }

  function clearOutput() {
    clearTimeout(flushTimer)
    flushTimer = null
    queued = []
    output.replaceChildren()
    shownChars = 0
    dropped = 0
  }

  function showExit(info) {
    flush() // everything before the exit is on screen when the exit is
    if (info.failure) {
      exit.className = 'exit failed'
      exit.textContent = `stream ended without an exit: ${info.failure.message}`
      return
    }
    const code = info.exit_code
    exit.className = `exit ${code === 0 ? 'ok' : 'failed'}`
    exit.textContent = `exit code ${code}${info.signal ? ` (${info.signal})` : ''}${info.timed_out ? ' — timed out' : ''}`
  }

  async function run(event) {
    event.preventDefault()
    const command = input.value.trim()
    if (!command || !client) return
    clearOutput()
    exit.className = 'exit running'
    exit.textContent = 'running…'
    stopButton.disabled = false
    const owner = sandboxId
    await guarded(runButton, async () => {
      if (!client.has('exec.stream')) {
        const result = await client.call('exec.run', { sandbox_id: owner, command })
        if (result.stdout) append('stdout', result.stdout)
        if (result.stderr) append('stderr', result.stderr)
        showExit(result)
        return
      }
      const done = new Promise((resolve) => {
        client.stream('exec.start', { sandbox_id: owner, command }, (n) => {
          if (owner !== sandboxId) return // the user moved on to another sandbox
          if (n.method === 'exec.output') append(n.params.stream, n.params.data)
          else if (n.method === 'exec.exit') resolve({ exit: n.params })
        }).then((started) => { running = started }, (err) => resolve({ failed: err }))
      })
      const end = await done
      running = null
      if (end.failed) throw end.failed
      if (owner === sandboxId) showExit(end.exit)
    })
    if (exit.classList.contains('running')) {
      exit.className = 'exit failed'
      exit.textContent = 'not run'
    }
    stopButton.disabled = true
  }

  async function stop() {
    if (!running) return
    await guarded(stopButton, () => client.call('process.kill', { sandbox_id: running.sandbox_id, pid: running.pid }))
  }

  return {
    show(nextClient, id) {
      client = nextClient
      sandboxId = id
      running = null
      clearOutput()
      exit.className = 'exit'
      exit.textContent = ''
      stopButton.disabled = true
      stopButton.hidden = Boolean(client) && !client.has('process.manage')
    },
  }
}

