// No committed file keeps a merge's conflict markers: a README with both
// sides of a conflict once passed every other test (the figures it checks
// were on the first side).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const marker = /^(<{7} |>{7} |={7}$)/m

test('no tracked text file holds conflict markers', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root }).toString().split('\0').filter(Boolean)
  const bad = []
  for (const f of files) {
    let text
    try {
      text = readFileSync(path.join(root, f))
    } catch {
      continue // listed but not in this checkout (a deletion not yet committed)
    }
    if (text.includes(0)) continue // binary
    const s = text.toString('utf8')
    if (marker.test(s)) bad.push(f)
  }
  assert.deepEqual(bad, [], `conflict markers in: ${bad.join(', ')}`)
})
