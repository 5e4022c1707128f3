// Every source file the docs name exists: README.md, host/README.md,
// docs/*.md and docs/backend/*.md name files in backticks — `envd/fs/fs_list.c`, `calls.h`,
// `host/backend.mjs` — and a file that moves or goes must take its mentions
// with it. A name with a folder must exist from the repo root or from
// backend/, core/ or docs/; a bare name must be some tracked file's name.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const SOURCE = /\.(c|h|mjs|js|sh|md|json|toml|recipe)$/
// Names that are no file of the repository: what a server makes up at run time.
const NOT_FILES = new Set(['local-backend.json']) // playground/serve.mjs answers it

function mentions(text) {
  const out = []
  for (const [, raw] of text.matchAll(/`([^`\s]+)`/g)) {
    const name = raw.replace(/[(),:;]+$/, '')
    if (!SOURCE.test(name) || name.startsWith('.') || /[<>*{}$]|:\/\//.test(name)) continue
    if (name.startsWith('build/') || name.startsWith('/') || name.startsWith('node_modules/')) continue
    out.push(name)
  }
  return out
}

test('every file named in README.md, host/README.md, docs/*.md and docs/backend/*.md exists', () => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' }).split('\n').filter(Boolean)
  const names = new Set(tracked.map((f) => path.basename(f)))
  const docs = ['README.md', 'host/README.md', ...tracked.filter((f) => /^docs\/(backend\/)?[^/]+\.md$/.test(f))]
  const missing = []
  for (const doc of docs) {
    for (const name of mentions(readFileSync(path.join(repo, doc), 'utf8'))) {
      if (NOT_FILES.has(name)) continue
      const found = name.includes('/') ? ['', 'backend/', 'core/', 'docs/'].some((dir) => existsSync(path.join(repo, dir, name))) : names.has(name)
      if (!found) missing.push(`${doc}: ${name}`)
    }
  }
  assert.deepEqual(missing, [])
})

test('the reader finds file names in backticks and skips patterns', () => {
  assert.deepEqual(mentions('see `envd/fs/fs_list.c`, `calls.h`), `*.recipe`, `<name>.recipe`, `.c`, `x`'), ['envd/fs/fs_list.c', 'calls.h'])
})
