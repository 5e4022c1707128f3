// The "Run one layer" commands of docs/testing.md, as a user types them at
// the repository root: every path they name exists, and each starts right
// with relative paths (a relative E2BW_BUILD must still let the
// control-plane test find its symlinked templates). Commands that take minutes run
// a cheap part of themselves: one named test, one contract case.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const build = path.resolve(process.env.E2BW_BUILD || path.join(root, 'build'))

/** The sh block under "## Run one layer": one command per line, comments dropped. */
function documentedCommands() {
  const text = readFileSync(path.join(root, 'docs', 'testing.md'), 'utf8')
  const section = text.split('\n## Run one layer\n')[1]
  assert.ok(section, 'docs/testing.md has a "Run one layer" section')
  const block = section.match(/```sh\n([\s\S]*?)```/)
  assert.ok(block, 'with a sh block')
  return block[1].split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean).map(words)
}

/** Shell words: plain, 'single' or "double" quoted (all the block uses). */
function words(line) {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3])
}

/** Runs argv (leading NAME=value words become the environment) at the repo root. */
function run(argv) {
  // As a user's shell has it, without E2B or abx settings: the suite must
  // start its own local backend, never reach an account named there.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(E2B_|ABX_)/.test(k)))
  delete env.NODE_TEST_CONTEXT // a nested `node --test` must report on its own, not to our runner
  delete env.E2BW_BUILD // only what the command sets
  while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0])) {
    const [name, value] = argv.shift().split(/=(.*)/s)
    env[name] = value
  }
  const [command, ...args] = argv
  return new Promise((resolve, reject) => {
    const child = spawn(command === 'node' ? process.execPath : command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { out += d })
    child.on('error', reject)
    child.on('exit', (code) => resolve({ code, out }))
  })
}

/** argv with `--test-name-pattern=pattern` after `--test` (options precede the files). */
function onlyTests(argv, pattern) {
  const at = argv.indexOf('--test') + 1
  return [...argv.slice(0, at), `--test-name-pattern=${pattern}`, ...argv.slice(at)]
}

const commands = documentedCommands()
const find = (pred, what) => {
  const found = commands.find(pred)
  assert.ok(found, `docs/testing.md documents ${what}`)
  return [...found]
}

test('every path the documented commands name exists (build outputs in the build directory)', () => {
  for (const argv of commands) {
    for (const word of argv.filter((w) => /^(tests|bench|build)\//.test(w))) {
      const file = word.startsWith('build/') ? path.join(build, word.slice('build/'.length)) : path.join(root, word)
      if (/^build\/(fuzz|replay)\//.test(word) && !existsSync(path.dirname(file))) continue // made by ./build.sh test only
      assert.ok(existsSync(file), `${argv.join(' ')}: no ${word}`)
    }
  }
})

test('one node test file from the repo root: its backend finds the templates (relative E2BW_BUILD)', async () => {
  const argv = find((a) => a.includes('--test') && a.some((w) => w.endsWith('backend-control-plane.test.mjs')), 'one node test file')
  // the test that creates a sandbox through the symlinked templates, with the build named relatively
  const { code, out } = await run(['E2BW_BUILD=' + path.relative(root, build), ...onlyTests(argv, 'POST /v2/sandboxes creates')])
  assert.equal(code, 0, out)
  assert.match(out, /# pass [1-9]/, out)
  assert.match(out, /# fail 0/)
})

test('a directory of node tests with E2BW_BUILD=build: the files load and start', async () => {
  const argv = find((a) => a.some((w) => w.startsWith('E2BW_BUILD=')) && a.includes('--test'), 'a directory of node tests')
  // every file loads; only one cheap test runs
  const { code, out } = await run(onlyTests(argv, 'declared features are known'))
  assert.equal(code, 0, out)
  assert.match(out, /# pass [1-9]/, out)
})

test('the contract suite as a tool, one case', async () => {
  const argv = find((a) => a.some((w) => w.endsWith('tests/contract/suite.mjs')), 'the contract suite')
  const { code, out } = await run(argv)
  assert.equal(code, 0, out)
  assert.match(out, /\n1 passed, 0 failed, 0 skipped\n$/)
})
