// The playground (playground/index.html) clicked through once in headless
// Chromium against the local backend: connect (a wrong key first: the error
// shows in the page), create, see it listed with its status and time left, run
// commands (stdout and stderr apart, streamed before the exit, the exit code),
// files (when the backend declares files.rw) and their layout at 1024, 1280
// and 1920 px, a terminal that fits the window (and the pty agrees), pause,
// resume, kill (after a confirmation). What the page shows is checked against
// the backend itself where it can be.
// Screenshots go to $E2BW_BUILD/test-output/playground/ (default build/).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { startBackend } from '../../host/backend.mjs'
import { until } from '../../host/wait.mjs'
import { launchChromium } from './chromium.mjs'
import { layoutProblems } from './layout.mjs'
import { repoRoot, startStaticServer } from './server.mjs'

const PLAYGROUND_PATH = '/playground/index.html'

// A loopback port nothing listens on (bound, then released).
async function closedPort() {
  const srv = net.createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}
const OUT = path.join(process.env.E2BW_BUILD || path.join(repoRoot, 'build'), 'test-output', 'playground')
const WAIT = { timeout: 20000 }
const WIDTHS = [1024, 1280, 1920]
const VIEWPORT = { width: 1280, height: 900 }

describe('the playground in headless Chromium', () => {
  let backend, server, browser, page
  let sandboxId = null
  let features = []
  const pageErrors = []
  const consoleErrors = []

  const shot = (name) => page.screenshot({ path: path.join(OUT, `${name}.png`) })
  const errorsShown = () => page.locator('#errors li .text').allTextContents()
  const noErrorsShown = async (when) => assert.deepEqual(await errorsShown(), [], `errors shown in the page ${when}`)
  // The control plane itself, to check what the page shows.
  const apiGet = (p) => fetch(backend.apiUrl + p, { headers: { 'X-API-Key': backend.apiKey } })
  const selectedRow = () => page.locator(`tr.sandbox[data-id="${sandboxId}"]`)

  before(async () => {
    await mkdir(OUT, { recursive: true })
    backend = await startBackend()
    server = await startStaticServer()
    browser = await launchChromium()
    page = await browser.newPage({ viewport: VIEWPORT })
    page.setDefaultTimeout(WAIT.timeout)
    page.on('pageerror', (err) => pageErrors.push(err.stack || String(err)))
    page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(`${msg.text()} ${msg.location().url || ''}`) })
    const res = await page.goto(server.url + PLAYGROUND_PATH)
    assert.equal(res.status(), 200)
    await page.waitForFunction(() => window.playground?.ready === true, null, WAIT)
  })

  after(async () => {
    const problems = []
    for (const [what, fn] of [['Chromium', () => browser?.close()], ['static server', () => server?.close()],
      ['backend', () => backend?.stop()]]) {
      try { await fn() } catch (err) { problems.push(`${what}: ${err.message}`) }
    }
    assert.deepEqual(problems, [])
  })

  test('an unreachable backend: the page says so', async () => {
    const port = await closedPort()
    await page.fill('input[name=api_url]', `http://127.0.0.1:${port}`)
    await page.fill('input[name=api_key]', 'e2b_some_key_0123456789')
    await page.click('#connect-button')
    await page.locator('#errors li').first().waitFor(WAIT)
    const [shown] = await errorsShown()
    assert.match(shown, /^sandbox\.list: Cannot reach .* \(-32012, unreachable\)\. Check the URL, and that the backend allows requests from this page \(CORS\)\.$/, shown)
    assert.ok(!shown.includes('e2b_some_key_0123456789'))
    // Nothing is cut off in the connect form: every placeholder fits its input.
    assert.deepEqual(await layoutProblems(page, { placeholdersFit: ['#connect input'] }), [])
  })

  test('a wrong key: the page shows a readable error, without the key', async () => {
    const wrongKey = 'e2b_wrong_key_0123456789abcdef'
    await page.fill('input[name=api_url]', backend.apiUrl)
    await page.fill('input[name=sandbox_url]', backend.sandboxUrl)
    await page.fill('input[name=api_key]', wrongKey)
    await page.click('#connect-button')
    // One banner at a time: the newest error replaces the one before.
    await page.locator('#errors li .text', { hasText: /unauthenticated/i }).waitFor(WAIT)
    const all = await errorsShown()
    assert.equal(all.length, 1, `one error shown: ${all}`)
    const [shown] = all
    assert.match(shown, /sandbox\.list: .*unauthenticated/i, shown)
    assert.ok(!shown.includes(wrongKey), 'the key must not appear in the error')
    assert.equal(await page.locator('#connection').getAttribute('class'), 'connection')
    assert.equal(await page.locator('#create-button').isDisabled(), true)
    await shot('01-wrong-key')
    await page.click('#errors li .dismiss')
    await noErrorsShown('after dismissing')
  })

  test('connect: the declared features are shown', async () => {
    await page.fill('input[name=api_key]', backend.apiKey)
    await page.click('#connect-button')
    await page.locator('#connection.ok').waitFor(WAIT)
    features = await page.locator('#connection .feature').allTextContents()
    for (const f of ['sandbox.lifecycle', 'exec.stream', 'files.rw']) assert.ok(features.includes(f), `features: ${features}`)
    assert.equal(await page.locator('tr.empty').textContent(), 'No sandboxes yet: create one.')
  })

  test('create: the new sandbox is listed, selected, running, with time left', async () => {
    await page.fill('#create input[name=timeout]', '600')
    await page.click('#create-button')
    await page.locator('tr.sandbox.selected').waitFor(WAIT)
    sandboxId = await page.locator('tr.sandbox.selected').getAttribute('data-id')
    assert.match(sandboxId, /^[a-z0-9]+$/)
    assert.equal(await page.locator('#selected-id').textContent(), sandboxId)
    assert.equal(await selectedRow().locator('.badge').textContent(), 'running')
    await selectedRow().locator('td.left').filter({ hasText: /^(9|10)m \d\ds$/ }).waitFor(WAIT)
    // The backend has it, with the page's metadata.
    const res = await apiGet(`/sandboxes/${sandboxId}`)
    assert.equal(res.status, 200)
    const detail = await res.json()
    assert.equal(detail.state, 'running')
    // plus the plugin's own create key (a lost create answer can find its sandbox; records hide it)
    const { e2bw_create_key: createKey, ...metadata } = detail.metadata
    assert.deepEqual(metadata, { via: 'playground' })
    assert.match(createKey, /\S/)
    await noErrorsShown('after create')
  })

  test('a command streams stdout and stderr apart, before it ends; Stop kills it', async () => {
    await page.fill('input.command', 'echo first-out; echo first-err >&2; sleep 600')
    await page.click('form.run button[type=submit]')
    // Both lines are on screen while the command still runs: they were streamed.
    await page.locator('pre.output .stdout', { hasText: 'first-out' }).waitFor(WAIT)
    await page.locator('pre.output .stderr', { hasText: 'first-err' }).waitFor(WAIT)
    assert.equal(await page.locator('.exit').textContent(), 'running…')
    await page.click('form.run button.danger') // Stop
    await page.locator('.exit.failed', { hasText: /exit code \d+ \(SIGKILL\)/ }).waitFor(WAIT)
    await noErrorsShown('after stopping a command')
  })

  test('a command: exit code, and each stream in its own colour', async () => {
    await page.fill('input.command', 'echo to-out; echo to-err >&2; echo "more out"; exit 7')
    await page.click('form.run button[type=submit]')
    await page.locator('.exit', { hasText: 'exit code 7' }).waitFor(WAIT)
    assert.equal(await page.locator('.exit').getAttribute('class'), 'exit failed')
    const stdout = (await page.locator('pre.output .stdout').allTextContents()).join('')
    const stderr = (await page.locator('pre.output .stderr').allTextContents()).join('')
    assert.equal(stdout, 'to-out\nmore out\n')
    assert.equal(stderr, 'to-err\n')
    const colours = await page.evaluate(() => ['.stdout', '.stderr'].map((s) => getComputedStyle(document.querySelector(`pre.output ${s}`)).color))
    assert.notEqual(colours[0], colours[1], 'stdout and stderr must look different')
    await shot('02-command')
    await noErrorsShown('after a command')
  })

  test('a command that prints a lot: the page keeps the last 256 KiB and says so', async () => {
    await page.fill('input.command', "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END-OF-OUTPUT")
    await page.click('form.run button[type=submit]')
    await page.locator('.exit', { hasText: 'exit code 0' }).waitFor(WAIT)
    const notice = await page.locator('pre.output .dropped').textContent()
    const dropped = Number(notice.match(/(\d+) earlier characters not shown/)[1])
    const shown = await page.evaluate(() => [...document.querySelectorAll('pre.output .stdout')].map((s) => s.textContent).join(''))
    assert.equal(dropped + shown.length, 3000000 + '\nEND-OF-OUTPUT\n'.length, 'what is shown plus what was dropped is all of it')
    assert.ok(shown.length <= 256 * 1024, `${shown.length} characters shown`)
    assert.ok(shown.endsWith('x\nEND-OF-OUTPUT\n'))
  })

  test('files: list, write, read back (or "not supported" when files.rw is not declared)', async () => {
    await page.click('[data-tab=files]')
    if (!features.includes('files.rw')) {
      const note = page.locator('#tab-files .unsupported')
      await note.waitFor(WAIT)
      assert.equal(await note.textContent(), 'files not supported by this backend')
      assert.equal(await page.locator('#tab-files .files-body').isHidden(), true)
      await shot('03-files-unsupported')
      await noErrorsShown('on the files tab')
      return
    }
    await page.locator('#tab-files tr.entry, #tab-files tr.empty').first().waitFor(WAIT)
    const dir = await page.inputValue('#tab-files input.path')
    // New file → editor → save → close → open it again from the list.
    await page.click('#tab-files button:has-text("New file")')
    await page.fill('#tab-files input.new-name', 'playground-note.txt')
    await page.click('#tab-files form.new-entry button[type=submit]')
    await page.locator('#tab-files .editor-box:not([hidden])').waitFor(WAIT)
    const text = 'hello from the playground ✓\nline two\n'
    await page.fill('#tab-files textarea.editor', text)
    await page.click('#tab-files .editor-head button:has-text("Save")')
    await page.locator('#tab-files .editor-info', { hasText: 'saved' }).waitFor(WAIT)
    await page.click('#tab-files .editor-head button:has-text("Close")')
    await page.locator('#tab-files tr.entry[data-name="playground-note.txt"] a').click()
    await page.locator('#tab-files .editor-box:not([hidden])').waitFor(WAIT)
    assert.equal(await page.inputValue('#tab-files textarea.editor'), text)
    // Delete buttons are there to see, without hovering over the row.
    await page.mouse.move(0, 0)
    assert.equal(await page.locator('#tab-files tr.entry[data-name="playground-note.txt"] .row-actions button').isVisible(), true)
    // Upload a binary file: it is listed with its exact size.
    await page.setInputFiles('#tab-files input[type=file]',
      { name: 'upload.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0, 1, 2, 255, 254, 10, 13, 0x80]) })
    await page.locator('#tab-files tr.entry[data-name="upload.bin"] td.num', { hasText: '8 B' }).waitFor(WAIT)
    // Opened, it says it is binary, with its size, and offers a download instead of
    // an empty text area; downloaded, it is the same bytes.
    await page.locator('#tab-files tr.entry[data-name="upload.bin"] a').click()
    const note = page.locator('#tab-files .binary-note')
    await note.waitFor(WAIT)
    assert.match(await note.locator('p').textContent(), /^upload\.bin is a binary file \(8 B, not UTF-8 text\)/)
    assert.equal(await page.locator('#tab-files textarea.editor').isHidden(), true)
    assert.equal(await page.locator('#tab-files .editor-head button:has-text("Save")').isHidden(), true)
    const [download] = await Promise.all([page.waitForEvent('download'), note.locator('button:has-text("Download")').click()])
    assert.equal(download.suggestedFilename(), 'upload.bin')
    const chunks = []
    for await (const chunk of await download.createReadStream()) chunks.push(chunk)
    assert.deepEqual([...Buffer.concat(chunks)], [0, 1, 2, 255, 254, 10, 13, 0x80])
    await page.locator('#tab-files tr.entry[data-name="playground-note.txt"] a').click()
    await page.locator('#tab-files .editor-name', { hasText: 'playground-note.txt' }).waitFor(WAIT)
    assert.equal(await page.locator('#tab-files textarea.editor').isVisible(), true)
    // A path that cannot be listed: the error, and the path box back on what is listed.
    // Two errors in a row: the second replaces the first (one banner at a time).
    for (const bad of ['/no/such/dir', 'not-absolute']) {
      await page.fill('#tab-files input.path', bad)
      await page.click('#tab-files .toolbar button:has-text("Go")')
      await page.locator('#errors li .text', { hasText: bad }).waitFor(WAIT)
      const shown = await errorsShown()
      assert.equal(shown.length, 1, `one error shown: ${shown}`)
      assert.equal(await page.inputValue('#tab-files input.path'), dir)
      assert.equal(await page.locator('#tab-files tr.entry[data-name="playground-note.txt"]').count(), 1)
    }
    await page.click('#errors li .dismiss')
    await shot('03-files')
    await noErrorsShown('on the files tab')
    // What the page wrote is in the sandbox: cat it with a command.
    await page.click('[data-tab=command]')
    await page.fill('input.command', `cat ${dir === '/' ? '' : dir}/playground-note.txt`)
    await page.click('form.run button[type=submit]')
    await page.locator('.exit', { hasText: 'exit code 0' }).waitFor(WAIT)
    assert.equal((await page.locator('pre.output .stdout').allTextContents()).join(''), text)
  })

  test('layout at 1024, 1280 and 1920 px with a text file and a binary file open', async (t) => {
    if (!features.includes('files.rw')) return t.skip('files.rw is not declared: no file to open')
    // A long name in a long path: it must end in "…", not wrap down the page.
    const longDir = '/home/user/a-directory-with-a-rather-long-name/and-another-one-below-it'
    await page.click('[data-tab=command]')
    await page.fill('input.command', `mkdir -p ${longDir} && printf 'x' > ${longDir}/a-file-with-a-long-name-that-goes-on-and-on.txt`)
    await page.click('form.run button[type=submit]')
    await page.locator('.exit', { hasText: 'exit code 0' }).waitFor(WAIT)
    await page.click('[data-tab=files]')
    const openFile = async (dirPath, name) => {
      await page.fill('#tab-files input.path', dirPath)
      await page.click('#tab-files .toolbar button:has-text("Go")')
      await page.locator(`#tab-files tr.entry[data-name="${name}"] a`).click()
      await page.locator('#tab-files .editor-name', { hasText: name }).waitFor(WAIT)
    }
    const expect = {
      inViewport: ['.detail-head button', '#tab-files .toolbar button', '#tab-files .row-actions button',
        '#tab-files .editor-head button', '#tab-files .binary-note button'],
      oneLine: ['#tab-files td.name .label', '#tab-files .editor-name', '#tab-files .editor-name .base',
        '#tab-files th', '.detail-head h2'],
      minWidth: 80,
      placeholdersFit: ['#connect input'],
    }
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: VIEWPORT.height })
      for (const [dirPath, name, shotName] of [['/home/user', 'playground-note.txt', 'text'], ['/home/user', 'upload.bin', 'binary'],
        [longDir, 'a-file-with-a-long-name-that-goes-on-and-on.txt', 'long-path']]) {
        await openFile(dirPath, name)
        await page.evaluate(() => window.scrollTo(0, 0))
        await shot(`03-files-${width}-${shotName}`)
        assert.deepEqual(await layoutProblems(page, expect), [], `at ${width} px with ${name} open`)
        // The file's name itself is shown whole; only the directory before it gives way.
        const base = page.locator('#tab-files .editor-name .base')
        assert.ok(await base.evaluate((el) => el.scrollWidth <= el.clientWidth), `${name} shown whole at ${width} px`)
      }
    }
    await page.setViewportSize(VIEWPORT)
    await page.fill('#tab-files input.path', '/home/user')
    await page.click('#tab-files .toolbar button:has-text("Go")')
    await page.click('#tab-files .editor-head button:has-text("Close")')
    await noErrorsShown('after the layout checks')
  })

  test('terminal: a prompt, what is typed runs in the shell, and the pty has the size xterm fits to the window', async () => {
    await page.click('[data-tab=terminal]')
    await page.click('#tab-terminal button:has-text("Open terminal")')
    // The screen as lines of text, as xterm.js renders them (one element per row).
    const screenHas = (pattern) => page.waitForFunction((source) => {
      const lines = [...document.querySelectorAll('#tab-terminal .xterm-rows > div')].map((row) => row.textContent.trimEnd())
      return lines.some((line) => new RegExp(source).test(line))
    }, pattern.source, WAIT)
    await screenHas(/[#$]$/) // bash's prompt
    await page.locator('#tab-terminal .xterm-helper-textarea').focus()
    await page.keyboard.type('echo pg-$((6*7))')
    await page.keyboard.press('Enter')
    // The echo of the input, then the shell's answer (42 is computed, not typed).
    await screenHas(/[#$] echo pg-\$\(\(6\*7\)\)$/)
    await screenHas(/^pg-42$/)

    // The terminal is settled when the header (the size the pty was told) is xterm's
    // own size and that size fits the screen's box: the columns fill its width but for
    // the scrollbar, the rows its height, each to within one cell; and the box ends
    // inside the window. Checked by polling: a resize takes effect a moment later.
    const measure = () => page.evaluate(() => {
      const shown = document.querySelector('#tab-terminal .term-status').textContent.match(/· (\d+)×(\d+)$/)
      const box = document.querySelector('#tab-terminal .terminal-fit').getBoundingClientRect()
      const screen = document.querySelector('#tab-terminal .xterm-screen').getBoundingClientRect()
      return { header: shown && { cols: Number(shown[1]), rows: Number(shown[2]) }, xterm: window.playground.terminal.xtermSize(),
        rowsDrawn: document.querySelectorAll('#tab-terminal .xterm-rows > div').length,
        box: { width: box.width, height: box.height, bottom: box.bottom + scrollY }, screen: { width: screen.width, height: screen.height }, innerHeight }
    })
    const SCROLLBAR = 14 // the fit addon leaves room for xterm's scrollbar
    const fitted = (m) => {
      if (!m.header || !m.xterm || m.header.cols !== m.xterm.cols || m.header.rows !== m.xterm.rows || m.rowsDrawn !== m.xterm.rows) return false
      const spareWidth = m.box.width - SCROLLBAR - m.screen.width
      const spareHeight = m.box.height - m.screen.height
      return spareWidth >= -0.5 && spareWidth < m.screen.width / m.xterm.cols &&
        spareHeight >= -0.5 && spareHeight < m.screen.height / m.xterm.rows && m.box.bottom <= m.innerHeight
    }
    let asked = 0
    const settledSize = async (when) => {
      let m
      try {
        await until(async () => fitted(m = await measure()), when)
      } catch (err) {
        assert.fail(`${when}: the terminal does not fit its screen, or the pty has another size: ${m ? JSON.stringify(m) : err.message}`)
      }
      const { cols, rows } = m.xterm
      // And the shell agrees: stty size is rows and columns.
      asked++
      await page.locator('#tab-terminal .xterm-helper-textarea').focus()
      await page.keyboard.type(`echo size-${asked} $(stty size)`)
      await page.keyboard.press('Enter')
      await screenHas(new RegExp(`^size-${asked} ${rows} ${cols}$`))
      return { cols, rows }
    }
    const opened = await settledSize(`opened at ${VIEWPORT.width}×${VIEWPORT.height}`)
    await shot(`04-terminal-${VIEWPORT.width}`)
    // A smaller window: fewer columns and fewer rows, in xterm and in the shell (pty.resize).
    await page.setViewportSize({ width: 1024, height: 700 })
    const small = await settledSize('at 1024×700')
    assert.ok(small.cols < opened.cols && small.rows < opened.rows, `${JSON.stringify(small)} vs ${JSON.stringify(opened)}`)
    await shot('04-terminal-1024')
    // A larger window while another tab is shown: the terminal fits it when it is shown again.
    await page.click('[data-tab=command]')
    await page.setViewportSize({ width: 1920, height: 1000 })
    await page.click('[data-tab=terminal]')
    const large = await settledSize('at 1920×1000, after a tab switch')
    assert.ok(large.cols > opened.cols && large.rows > opened.rows, `${JSON.stringify(large)} vs ${JSON.stringify(opened)}`)
    assert.deepEqual(await layoutProblems(page, { inViewport: ['#tab-terminal button'] }), [])
    await shot('04-terminal-1920')
    await page.setViewportSize(VIEWPORT)
    await settledSize('back at the first size')
    await page.click('#tab-terminal button:has-text("Close terminal")')
    await page.locator('#tab-terminal .term-status', { hasText: 'ended' }).waitFor(WAIT)
    await noErrorsShown('after the terminal')
  })

  test('a second sandbox: both listed, the panels follow the selection', async () => {
    await page.click('[data-tab=files]')
    await page.click('#create-button')
    await page.locator(`tr.sandbox.selected:not([data-id="${sandboxId}"])`).waitFor(WAIT)
    const second = await page.locator('tr.sandbox.selected').getAttribute('data-id')
    assert.equal(await page.locator('tr.sandbox').count(), 2)
    if (features.includes('files.rw')) {
      // The new sandbox's home, listed at once: the first one's file is not there.
      await page.locator('#tab-files tr.entry[data-name=".bashrc"]').waitFor(WAIT)
      assert.equal(await page.locator('#tab-files tr.entry[data-name="playground-note.txt"]').count(), 0)
    }
    await selectedRow().click()
    assert.equal(await page.locator('#selected-id').textContent(), sandboxId)
    if (features.includes('files.rw')) await page.locator('#tab-files tr.entry[data-name="playground-note.txt"]').waitFor(WAIT)
    await page.click(`tr.sandbox[data-id="${second}"]`)
    // Kill asks first: declined, nothing happens.
    const asked = []
    page.once('dialog', (dialog) => { asked.push([dialog.type(), dialog.message()]); dialog.dismiss() })
    await page.click('#kill')
    await until(() => asked.length, 'the confirmation')
    assert.deepEqual(asked, [['confirm', `Kill sandbox ${second}? Its processes and files are gone for good.`]])
    assert.equal((await (await apiGet(`/sandboxes/${second}`)).json()).state, 'running')
    assert.equal(await page.locator('#selected-id').textContent(), second)
    assert.equal(await page.locator('#kill').isEnabled(), true)
    page.once('dialog', (dialog) => dialog.accept())
    await page.click('#kill')
    await page.locator(`tr.sandbox[data-id="${second}"]`).waitFor({ state: 'detached', ...WAIT })
    assert.equal((await apiGet(`/sandboxes/${second}`)).status, 404)
    await selectedRow().click()
    await page.click('[data-tab=command]')
    await noErrorsShown('with two sandboxes')
  })

  // A paused sandbox answers unavailable (data.status "paused") to every command,
  // file and terminal call: the page disables those panels and says why, and
  // shows the lifetime the sandbox keeps; resumed without a timeout, it has that
  // lifetime again (not E2B's 300 s) and the panels work again.
  test('pause: panels disabled with a note, the lifetime left kept; resume: panels back, with that lifetime; kill', async () => {
    // A long lifetime (set on the backend itself), so what resume gives back cannot be 300 s.
    const set = await fetch(`${backend.apiUrl}/sandboxes/${sandboxId}/timeout`, { method: 'POST',
      headers: { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ timeout: 3000 }) })
    assert.equal(set.status, 204)
    // A terminal open across the pause and a listed file, to see both disabled and back.
    await page.click('[data-tab=terminal]')
    await page.click('#tab-terminal button:has-text("Open terminal")')
    await page.locator('#tab-terminal .term-status', { hasText: /^bash · pid/ }).waitFor(WAIT)
    const files = features.includes('files.rw')
    if (files) {
      await page.click('[data-tab=files]')
      await page.locator('#tab-files tr.entry[data-name="playground-note.txt"]').waitFor(WAIT)
    }
    await page.click('[data-tab=command]')
    const controls = ['#tab-command input.command', '#tab-command button:has-text("Run")',
      '#tab-terminal button:has-text("Close terminal")', '#tab-terminal .xterm-helper-textarea']
    if (files) controls.push('#tab-files input.path', '#tab-files button:has-text("Go")', '#tab-files button:has-text("New file")',
      '#tab-files button:has-text("Upload")', '#tab-files tr.entry[data-name="playground-note.txt"] button:has-text("Delete")')
    const enabled = async (want) => {
      for (const c of controls) assert.equal(await page.locator(c).isEnabled(), want, `${c} ${want ? 'enabled' : 'disabled'}`)
    }
    await enabled(true)
    assert.equal(await page.locator('#paused-note').isHidden(), true)

    await page.click('#pause')
    await selectedRow().locator('.badge', { hasText: 'paused' }).waitFor(WAIT)
    assert.equal(await page.locator('#selected-status').textContent(), 'paused')
    assert.equal(await page.locator('#pause').isDisabled(), true)
    assert.equal(await page.locator('#resume').isEnabled(), true)
    const paused = await (await apiGet(`/sandboxes/${sandboxId}`)).json()
    assert.equal(paused.state, 'paused')
    await page.locator('#paused-note').waitFor(WAIT)
    assert.match(await page.locator('#paused-note').textContent(),
      /^This sandbox is paused: commands, code, files\s+and the terminal are unavailable until you resume it\.$/)
    await enabled(false)
    // What it has left, as the backend keeps it (lifetimeLeft), standing still.
    const left = Math.floor(paused.lifetimeLeft)
    const kept = `${Math.floor(left / 60)}m ${String(left % 60).padStart(2, '0')}s`
    assert.ok(left > 2900 && left < 3000, `lifetimeLeft ${paused.lifetimeLeft}`)
    await selectedRow().locator('td.left', { hasText: kept }).waitFor(WAIT)
    assert.equal(await selectedRow().locator('td.left').textContent(), `${kept}on hold`) // the time, "on hold" under it
    assert.equal(await page.locator('#selected-left').textContent(), `${kept} left (on hold)`)
    assert.deepEqual(await layoutProblems(page, { contained: [['.panel', 'table.list'], ['.panel', '#paused-note']] }), [])
    await shot('05-paused')
    if (files) {
      await page.click('[data-tab=files]')
      await shot('05-paused-files')
      await page.click('[data-tab=command]')
    }
    await noErrorsShown('while paused')

    const from = Date.now()
    await page.click('#resume')
    await selectedRow().locator('.badge', { hasText: 'running' }).waitFor(WAIT)
    const resumed = await (await apiGet(`/sandboxes/${sandboxId}`)).json()
    assert.equal(resumed.state, 'running')
    // The lifetime it had when it paused (whole seconds, rounded up), from the resume on: not 300 s.
    assert.ok(Date.parse(resumed.endAt) >= from + Math.ceil(paused.lifetimeLeft) * 1000 - 1,
      `endAt ${resumed.endAt}: less than the ${paused.lifetimeLeft} s it had left, counted from ${new Date(from).toISOString()}`)
    const shown = await page.locator('#selected-left', { hasText: /^\d+m \d\ds left$/ }).textContent()
    const [, m, sec] = shown.match(/^(\d+)m (\d\d)s left$/)
    assert.ok(Number(m) * 60 + Number(sec) >= left - (Date.now() - from) / 1000 - 1, `the page shows ${shown} after a pause with ${kept} left`)
    assert.equal(await page.locator('#resume').isDisabled(), true)
    assert.equal(await page.locator('#paused-note').isHidden(), true)
    await enabled(true)
    // The terminal works again: what is typed runs.
    await page.click('[data-tab=terminal]')
    await page.locator('#tab-terminal .xterm-helper-textarea').focus()
    await page.keyboard.type('echo after-$((2+3))')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => [...document.querySelectorAll('#tab-terminal .xterm-rows > div')]
      .some((row) => row.textContent.trimEnd() === 'after-5'), null, WAIT)
    await page.click('#tab-terminal button:has-text("Close terminal")')
    await page.locator('#tab-terminal .term-status', { hasText: 'ended' }).waitFor(WAIT)
    await page.click('[data-tab=command]')
    await noErrorsShown('after resume')

    page.once('dialog', (dialog) => dialog.accept())
    await page.click('#kill')
    await selectedRow().waitFor({ state: 'detached', ...WAIT })
    await page.locator('#no-selection').waitFor(WAIT)
    assert.equal((await apiGet(`/sandboxes/${sandboxId}`)).status, 404)
    await shot('06-killed')
    await noErrorsShown('after kill')
  })

  test('no uncaught exception in the page; console errors only from the closed port, the wrong key and the missing directory', () => {
    assert.deepEqual(pageErrors, [])
    for (const text of consoleErrors)
      assert.match(text, /401|ERR_CONNECTION_REFUSED|404 \(Not Found\) http:\S+\/filesystem\.Filesystem\/ListDir/, `unexpected console error: ${text}`)
  })
})

describe('playground/serve.mjs --backend (what ./build.sh demo runs)', () => {
  test('prints a URL without the key; the page connects by itself; stops when stdin ends', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'playground', 'serve.mjs'), '--backend'],
      { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env } })
    let stdout = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d) => { stdout += d })
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    let browser
    try {
      const url = await until(() => stdout.match(/^playground: (http:\/\/\S+)$/m)?.[1], 'the playground URL')
      assert.match(url, /\/playground\/index\.html\?local$/)
      const given = await (await fetch(new URL('local-backend.json', url))).json()
      assert.ok(given.api_key && given.api_url && given.sandbox_url)
      assert.ok(!stdout.includes(given.api_key), 'the key is not printed')
      browser = await launchChromium()
      const page = await browser.newPage()
      await page.goto(url)
      await page.locator('#connection.ok').waitFor(WAIT)
      assert.deepEqual(await page.locator('#errors li').allTextContents(), [])
    } finally {
      await browser?.close()
      child.stdin.end()
    }
    assert.deepEqual(await exited, { code: 0, signal: null })
  })
})
