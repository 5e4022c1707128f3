// format.test.mjs — every C file the repository tracks is as .clang-format
// lays it out (one style for core/, backend/, tests/, bench/ and wasm/), so a
// change cannot bring back a second one. clang-format comes from Debian's
// clang-format package (./build.sh test installs it); without it this fails,
// never skips.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

test('every tracked .c and .h file is formatted as .clang-format says', () => {
  const files = spawnSync('git', ['ls-files', '*.c', '*.h'], { cwd: root, encoding: 'utf8' }).stdout.trim().split('\n')
  assert.ok(files.length > 300, `the tracked C files (${files.length})`)
  const r = spawnSync('clang-format', ['--dry-run', '--Werror', '--style=file', ...files], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 })
  assert.ok(!r.error, `clang-format: ${r.error?.message} (apt-get install clang-format)`)
  const offenders = [...new Set([...r.stderr.matchAll(/^(\S+?):\d+:\d+: error/gm)].map((m) => m[1]))]
  assert.deepEqual(offenders, [], `not formatted (clang-format -i FILE): ${offenders.join(' ')}\n${r.stderr.slice(0, 2000)}`)
  assert.equal(r.status, 0, r.stderr.slice(0, 2000))
})

test('the check catches a file laid out otherwise', () => {
  const r = spawnSync('clang-format', ['--dry-run', '--Werror', '--style=file', '--assume-filename=backend/x.c'], {
    cwd: root, input: 'int f(void) {\n  return 0;\n}\n', encoding: 'utf8' })
  assert.notEqual(r.status, 0, 'two spaces and a brace on the line of a function are not the style')
})
