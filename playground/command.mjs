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

  function append(stream, text) {
    const last = output.lastElementChild
    if (last && last.dataset.stream === stream) last.textContent += text
    else output.append(h(`span.${stream}`, { dataset: { stream } }, text))
    output.scrollTop = output.scrollHeight
  }

  function showExit(info) {
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
    output.replaceChildren()
    exit.className = 'exit running'
    exit.textContent = 'running…'
    stopButton.disabled = false
    const owner = sandboxId
    await guarded(runButton, async () => {
      if (!client.has('exec.stream')) {
        const result = await client.call('exec.run', { sandbox_id: owner, command })
        append('stdout', result.stdout ?? '')
        append('stderr', result.stderr ?? '')
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
      output.replaceChildren()
      exit.className = 'exit'
      exit.textContent = ''
      stopButton.disabled = true
      stopButton.hidden = Boolean(client) && !client.has('process.manage')
    },
  }
}

