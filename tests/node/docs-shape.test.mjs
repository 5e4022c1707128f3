// The docs as a reference a reader can use: README.md short enough to read
// first, docs/PERFORMANCE.md current figures rather than a diary, no table
// cell longer than a few sentences, every relative link and anchor landing
// somewhere, and no history (issue numbers, dates, working periods) in the
// docs or in the code's comments: a reader of either cannot see the
// tracker, and history belongs in commit messages.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const tracked = execFileSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' }).split('\n').filter(Boolean)
const read = (file) => readFileSync(path.join(repo, file), 'utf8')

const README_MAX_LINES = 200
const PERFORMANCE_MAX_LINES = 400
const CELL_MAX_CHARS = 300

// The docs a reader opens: README.md and every page under docs/.
const DOCS = ['README.md', 'host/README.md', ...tracked.filter((f) => /^docs\/.*\.md$/.test(f))]
// Where the code's comments live.
const CODE = tracked.filter((f) => /^(core|backend|js-shim|host|tests|wasm|bench)\/.*\.(c|h|mjs|js|sh|py)$/.test(f) && !f.startsWith('tests/fuzz/corpus/'))

// History words: an issue's number, a working period, and (in docs) a date.
const HISTORY = [
  /\bissues? #?\d+/i,
  /\b(this|that|last|previous|earlier|next) (round|session)s?\b/i,
  /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|\d+(st|nd|rd|th)) (round|session)\b/i,
  /\b(end|start) of (the |this )?(round|session)\b/i,
  /\b(earlier|previous) rounds?\b/i,
]
const DATE = /\b20\d\d-[01]\d-[0-3]\d\b(?!T\d)/

/** Lines outside fenced code blocks, with their numbers. */
function prose(text) {
  const out = []
  let fenced = false
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced
    else if (!fenced) out.push([i + 1, line])
  })
  return out
}

/** A table row's cells: split at `|` outside code spans, `\|` kept. */
export function cells(line) {
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '')
  const out = []
  let cur = ''
  let code = false
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c === '\\' && i + 1 < body.length) { cur += c + body[++i]; continue }
    if (c === '`') code = !code
    if (c === '|' && !code) { out.push(cur.trim()); cur = '' } else cur += c
  }
  out.push(cur.trim())
  return out
}

/** Cells over the limit in a markdown text: "line: N characters". */
export function longCells(text, max = CELL_MAX_CHARS) {
  const found = []
  for (const [n, line] of prose(text)) {
    if (!/^\s*\|.*\|\s*$/.test(line)) continue
    for (const cell of cells(line)) if (cell.length > max) found.push(`${n}: ${cell.length} characters: ${cell.slice(0, 60)}…`)
  }
  return found
}

/** History words in a text: "line: words". Dates only where asked (docs). */
export function history(text, { dates = false } = {}) {
  const found = []
  text.split('\n').forEach((line, i) => {
    for (const re of dates ? [...HISTORY, DATE] : HISTORY) {
      const m = line.match(re)
      if (m) { found.push(`${i + 1}: ${m[0]}`); break }
    }
  })
  return found
}

/** GitHub's anchor for a heading's text. */
export function slug(heading) {
  return heading.trim().toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-')
}

/** Every anchor a markdown text defines: its headings (numbered when repeated) and <a id>s. */
export function anchors(text) {
  const found = new Set()
  const seen = new Map()
  for (const [, line] of prose(text)) {
    for (const [, id] of line.matchAll(/<a (?:id|name)="([^"]+)"/g)) found.add(id)
    const h = line.match(/^#{1,6} (.*)$/)
    if (!h) continue
    const base = slug(h[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    found.add(n ? `${base}-${n}` : base)
  }
  return found
}

test(`README.md has at most ${README_MAX_LINES} lines`, () => {
  const lines = read('README.md').split('\n').length
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines: move the long material into docs/`)
})

test(`docs/PERFORMANCE.md has at most ${PERFORMANCE_MAX_LINES} lines`, () => {
  const lines = read('docs/PERFORMANCE.md').split('\n').length
  assert.ok(lines <= PERFORMANCE_MAX_LINES, `docs/PERFORMANCE.md has ${lines} lines: current figures only`)
})

test(`no table cell in the docs is over ${CELL_MAX_CHARS} characters`, () => {
  const found = DOCS.flatMap((doc) => longCells(read(doc)).map((where) => `${doc}:${where}`))
  assert.deepEqual(found, [], 'put the detail in a paragraph or list under the table')
})

test('no issue numbers, dates or working periods in the docs', () => {
  const found = DOCS.flatMap((doc) => history(read(doc), { dates: true }).map((where) => `${doc}:${where}`))
  assert.deepEqual(found, [], 'history belongs in commit messages')
})

test('no issue numbers or working periods in the code', () => {
  const found = CODE.flatMap((file) => history(read(file)).map((where) => `${file}:${where}`))
  assert.deepEqual(found, [], 'a comment explains the code, not how it came to be')
})

test('every relative link in the docs reaches a file, and its anchor a heading there', () => {
  const broken = []
  for (const doc of DOCS) {
    const text = read(doc)
    for (const [n, line] of prose(text)) {
      for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
        const [file, anchor] = target.split('#')
        const resolved = file ? path.join(path.dirname(path.join(repo, doc)), decodeURIComponent(file)) : path.join(repo, doc)
        if (!existsSync(resolved)) { broken.push(`${doc}:${n}: ${target} (no such file)`); continue }
        if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) continue
        if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${doc}:${n}: ${target} (no such anchor)`)
      }
    }
  }
  assert.deepEqual(broken, [])
})

test('the checks find what they look for', () => {
  const longCell = `| a | ${'x'.repeat(CELL_MAX_CHARS + 1)} |`
  assert.equal(longCells(`| h | h |\n|---|---|\n${longCell}\n`).length, 1)
  assert.deepEqual(longCells(`| a | \`x|y\` ${'x'.repeat(CELL_MAX_CHARS - 10)} |`), [])
  assert.deepEqual(longCells('```\n' + longCell + '\n```\n'), [], 'a table in a code block is no table')
  for (const words of ['see iss' + 'ue 16', 'as this ro' + 'und showed', 'the ninth ses' + 'sion', 'at the end of the ses' + 'sion', 'Earlier ro' + 'unds'])
    assert.equal(history(words).length, 1, words)
  for (const words of ['a session keyring', 'a round trip', 'the same session', 'setsid: a new session', '--rounds 5'])
    assert.deepEqual(history(words), [], words)
  assert.equal(history('run on ' + '2026-12-01', { dates: true }).length, 1)
  assert.deepEqual(history('"created_at":"2026-12-02T06:15:20.080Z"', { dates: true }), [])
  assert.equal(slug('Cgroups: v1, v2 and systemd'), 'cgroups-v1-v2-and-systemd')
  assert.equal(slug('`GET /files` (`envd/fs/fs_files_get.c`)'), 'get-files-envdfsfs_files_getc')
  assert.deepEqual([...anchors('# A\n## Limits\n```\n# not a heading\n```\n### Limits\n<a id="x"></a>')], ['a', 'limits', 'limits-1', 'x'])
})
