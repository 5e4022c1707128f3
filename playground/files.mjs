// files.mjs — browse, open, edit and upload files in the selected sandbox
// with the files.rw methods (files.list / read / write / mkdir / remove).
// When initialize did not declare files.rw the panel says so and does nothing.
import { bytesToBase64, formatSize, guarded, h, showError } from './ui.mjs'

const HOME = '/home/user'

export function createFilesPanel(root) {
  let client = null
  let sandboxId = null
  let cwd = HOME
  let opened = null // { path, binary }
  let loadedFor = null // sandbox whose listing is shown

  const pathInput = h('input.path', { name: 'path', value: HOME, spellcheck: false, 'aria-label': 'Directory' })
  const upButton = h('button.ghost', { type: 'button', title: 'Parent directory', onclick: () => go(parent(cwd)) }, '↑')
  const uploadInput = h('input', { type: 'file', multiple: true, hidden: true, onchange: upload })
  const toolbar = h('form.toolbar', { onsubmit: (e) => { e.preventDefault(); go(pathInput.value.trim()) } },
    h('span.where', {}, upButton, pathInput, h('button', { type: 'submit' }, 'Go')),
    h('span.add', {},
      h('button', { type: 'button', onclick: () => askName('file') }, 'New file'),
      h('button', { type: 'button', onclick: () => askName('folder') }, 'New folder'),
      h('button', { type: 'button', onclick: () => uploadInput.click() }, 'Upload…')),
    uploadInput)
  // The name of a new file or folder, asked for in the page (no prompt()).
  const nameInput = h('input.new-name', { name: 'new-name', spellcheck: false, required: true })
  const nameLabel = h('span.new-label')
  const nameForm = h('form.new-entry', { hidden: true, onsubmit: createEntry },
    nameLabel, nameInput, h('button', { type: 'submit' }, 'Create'),
    h('button.ghost', { type: 'button', onclick: () => { nameForm.hidden = true } }, 'Cancel'))
  const rows = h('tbody')
  const table = h('table.list.files', {},
    h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th.num', {}, 'Size'), h('th.mode', {}, 'Mode'), h('th.owner', {}, 'Owner'), h('th.when', {}, 'Modified'), h('th'))),
    rows)
  // The path on one line: the directory gives way (…) before the file's name does.
  const editorDir = h('span.dir')
  const editorBase = h('span.base')
  const editorName = h('code.editor-name', {}, editorDir, editorBase)
  const editorInfo = h('span.editor-info')
  const editorText = h('textarea.editor', { spellcheck: false, 'aria-label': 'File content' })
  // A file that is not UTF-8 is not shown as text: what it is, its size, and a download.
  const binaryText = h('p')
  const binaryNote = h('div.binary-note', { hidden: true }, binaryText,
    h('button', { type: 'button', onclick: download }, 'Download'))
  const saveButton = h('button', { type: 'button', onclick: save }, 'Save')
  const downloadButton = h('button.ghost', { type: 'button', onclick: download }, 'Download')
  const editor = h('div.editor-box', { hidden: true },
    h('div.editor-head', {}, editorName, editorInfo,
      h('span.editor-buttons', {}, downloadButton, saveButton, h('button.ghost', { type: 'button', onclick: closeEditor }, 'Close'))),
    editorText, binaryNote)
  const unsupported = h('div.placeholder.unsupported', { hidden: true }, 'files not supported by this backend')
  const body = h('div.files-body', {}, toolbar, nameForm, h('div.files-split', {}, h('div.files-list', {}, table), editor))
  root.append(unsupported, body)

  // "2026-11-30 16:36", local time.
  const shortTime = (iso) => {
    const d = new Date(iso)
    const two = (n) => String(n).padStart(2, '0')
    return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
  }
  const join = (dir, name) => (dir === '/' ? `/${name}` : `${dir}/${name}`)
  const parent = (p) => p.replace(/\/[^/]*$/, '') || '/'

  async function list(path) {
    const { entries } = await client.call('files.list', { sandbox_id: sandboxId, path })
    entries.sort((a, b) => (a.type === 'dir') === (b.type === 'dir') ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1)
    cwd = path
    pathInput.value = path
    rows.replaceChildren(...(entries.length ? entries.map(row) : [h('tr.empty', {}, h('td', { colSpan: 6 }, 'empty directory'))]))
  }

  function row(entry) {
    const isDir = entry.type === 'dir'
    const open = () => (isDir ? go(entry.path) : openFile(entry.path))
    return h(`tr.entry.${entry.type}`, { dataset: { name: entry.name } },
      h('td.name', { title: entry.symlink_target ? `${entry.name} → ${entry.symlink_target}` : entry.name },
        h('a', { href: '#', onclick: (e) => { e.preventDefault(); if (!root.disabled) open() } },
          h(`span.icon.${entry.type}`, { 'aria-hidden': 'true' }), h('span.label', {}, entry.name),
          entry.symlink_target ? h('span.sub', {}, ` → ${entry.symlink_target}`) : null)),
      h('td.num', {}, isDir ? '' : formatSize(entry.size)),
      h('td.mode', {}, h('code', {}, entry.permissions || '')),
      h('td.owner', {}, entry.owner || ''),
      h('td.when', { title: entry.modified_at || '' }, entry.modified_at ? shortTime(entry.modified_at) : ''),
      h('td.row-actions', {}, h('button.ghost.small', { type: 'button', title: `Delete ${entry.name}`, onclick: (e) => remove(entry, e.currentTarget) }, 'Delete')))
  }

  // A path that cannot be listed leaves the listing as it was, under its own path.
  async function go(path) {
    if (!path.startsWith('/')) showError(`files: "${path}" is not an absolute path`)
    else await guarded(null, () => list(path))
    pathInput.value = cwd
  }

  async function openFile(path) {
    await guarded(null, async () => {
      // Read as base64 so that any bytes arrive intact; shown as text when they are UTF-8.
      const result = await client.call('files.read', { sandbox_id: sandboxId, path, encoding: 'base64' })
      const bytes = Uint8Array.from(atob(result.content), (c) => c.charCodeAt(0))
      let text = null
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
      } catch {
        // Not UTF-8: the page says it is binary and offers it for download.
      }
      opened = { path, binary: text === null, bytes }
      editorName.title = path
      editorDir.textContent = path.slice(0, path.lastIndexOf('/') + 1)
      editorBase.textContent = path.slice(path.lastIndexOf('/') + 1)
      editorInfo.textContent = formatSize(bytes.length)
      binaryText.textContent = `${editorBase.textContent} is a binary file (${formatSize(bytes.length)}, not UTF-8 text): it is not shown here.`
      editorText.value = text ?? ''
      editorText.hidden = opened.binary
      binaryNote.hidden = !opened.binary
      saveButton.hidden = opened.binary
      downloadButton.hidden = opened.binary
      editor.hidden = false
      editor.scrollIntoView({ block: 'nearest' })
    })
  }

  // The bytes as read (binary files too), or the text being edited.
  function download() {
    if (!opened) return
    const blob = new Blob([opened.binary ? opened.bytes : editorText.value])
    const link = h('a', { href: URL.createObjectURL(blob), download: opened.path.split('/').pop() })
    link.click()
    setTimeout(() => URL.revokeObjectURL(link.href), 0)
  }

  function closeEditor() {
    opened = null
    editor.hidden = true
  }

  async function save() {
    if (!opened || opened.binary) return
    await guarded(saveButton, async () => {
      const entry = await client.call('files.write', { sandbox_id: sandboxId, path: opened.path, content: editorText.value })
      editorInfo.textContent = `${formatSize(entry.size)} · saved`
      if (parent(opened.path) === cwd) await list(cwd)
    })
  }

  function askName(kind) {
    nameForm.dataset.kind = kind
    nameLabel.textContent = kind === 'file' ? `New file in ${cwd}:` : `New folder in ${cwd}:`
    nameInput.value = ''
    nameInput.placeholder = kind === 'file' ? 'notes.txt' : 'src'
    nameForm.hidden = false
    nameInput.focus()
  }

  async function createEntry(event) {
    event.preventDefault()
    const name = nameInput.value.trim()
    if (!name) return
    const path = name.startsWith('/') ? name : join(cwd, name)
    const button = nameForm.querySelector('button[type=submit]')
    await guarded(button, async () => {
      if (nameForm.dataset.kind === 'file') {
        await client.call('files.write', { sandbox_id: sandboxId, path, content: '' })
        nameForm.hidden = true
        await list(cwd)
        await openFile(path)
      } else {
        await client.call('files.mkdir', { sandbox_id: sandboxId, path })
        nameForm.hidden = true
        await list(cwd)
      }
    })
  }

  // Two clicks: the first arms the button, the second deletes.
  async function remove(entry, button) {
    if (!button.classList.contains('armed')) {
      button.classList.add('armed')
      button.textContent = entry.type === 'dir' ? 'Delete folder?' : 'Delete?'
      return
    }
    await guarded(button, async () => {
      await client.call('files.remove', { sandbox_id: sandboxId, path: entry.path })
      if (opened?.path === entry.path) closeEditor()
      await list(cwd)
    })
  }

  async function upload() {
    const files = [...uploadInput.files]
    uploadInput.value = ''
    const limit = client.limits?.max_message_bytes
    await guarded(null, async () => {
      for (const file of files) {
        // base64 grows the content by a third; the EPP message must stay under the limit.
        if (limit && file.size * 4 / 3 + 1024 > limit)
          throw new Error(`upload: ${file.name} is ${formatSize(file.size)}, over what one EPP message can carry (${formatSize(limit)})`)
        const content = bytesToBase64(new Uint8Array(await file.arrayBuffer()))
        await client.call('files.write', { sandbox_id: sandboxId, path: join(cwd, file.name), content, encoding: 'base64' })
      }
      await list(cwd)
    })
  }

  async function load() {
    loadedFor = sandboxId
    try {
      await list(cwd)
    } catch (err) {
      if (cwd !== '/' && err.code === -32002) return go('/') // no home directory in this template
      showError(err)
    }
  }

  return {
    show(nextClient, id) {
      client = nextClient
      sandboxId = id
      cwd = HOME
      loadedFor = null
      closeEditor()
      nameForm.hidden = true
      rows.replaceChildren()
      const supported = Boolean(client) && client.has('files.rw')
      unsupported.hidden = supported || !client
      body.hidden = !supported
    },
    // Listed when the tab is first shown for a sandbox, not on every selection;
    // not while the sandbox is paused (the page disables the tab, app.mjs).
    visible() {
      if (client && client.has('files.rw') && loadedFor !== sandboxId && !root.disabled) load()
    },
  }
}
