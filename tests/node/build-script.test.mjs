// build.sh itself, sourced for its functions (nothing is built here):
//   - the test layers' runner (tests/layers.sh) prints one line per layer,
//     the whole output of a failing layer only, keeps every log, ends with
//     "N passed, N failed" and fails when a layer failed,
//     and names each layer as it starts;
//   - cJSON's source comes through an apt configuration of build.sh's own
//     under the build directory: the system's apt state is never written
//     Checked offline: nothing is downloaded.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Runs a bash script at the repo root with build.sh's functions loaded. */
function withBuildSh(script) {
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT // nested `node --test` runs report on their own
  const r = spawnSync('bash', ['-c', `. ./build.sh\nset +e\n${script}`], { cwd: root, env, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('test layers: one line each, a failing layer\'s whole output, every log kept, "N passed, N failed" last', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-layers-'))
  try {
    writeFileSync(path.join(dir, 'good.test.mjs'), "import { test } from 'node:test'\nconsole.log('GOOD-LAYER-OUTPUT')\ntest('fine', () => {})\ntest('also fine', () => {})\ntest('later', { skip: true }, () => {})\n")
    writeFileSync(path.join(dir, 'bad.test.mjs'), "import { test } from 'node:test'\ntest('breaks', () => { throw new Error('BAD-LAYER-OUTPUT') })\ntest('fine', () => {})\n")
    const logs = path.join(dir, 'logs')
    const { code, stdout } = withBuildSh(`
      . tests/layers.sh
      layers_start ${logs}
      layer "C unit" unit sh -c 'echo "UNIT-LAYER-OUTPUT"; echo "codecs     ok"; echo "files      ok"; echo "42 checks, 0 failed"'
      layer "replay" replay sh -c 'echo "replayed 7 inputs"'
      layer "node good" node node_tests ${dir}/good.test.mjs
      layer "node bad" node node_tests ${dir}/bad.test.mjs
      layers_finish
      echo "status $?"`)
    assert.equal(code, 0)
    const lines = stdout.trimEnd().split('\n')
    assert.equal(lines.at(-1), 'status 1', 'a failed layer fails the run')
    assert.equal(lines.at(-2), '3 passed, 1 failed', 'the closing line counts layers')
    assert.match(lines[0], /^test layers \(each log in .*logs\/\):$/)
    const row = (name) => lines.find((l) => l.startsWith(`  ${name} `))
    assert.match(row('C unit'), /2 suites passed, 0 failed; 42 checks, 0 failed +[\d.]+ s {2}ok$/)
    assert.match(row('replay'), /replayed 7 inputs +[\d.]+ s {2}ok$/)
    assert.match(row('node good'), /2 passed, 0 failed, 1 skipped +[\d.]+ s {2}ok$/)
    assert.match(row('node bad'), /1 passed, 1 failed, 0 skipped +[\d.]+ s {2}FAILED \(exit 1\)$/)
    // only the failing layer's output reaches the terminal, whole
    assert.ok(!stdout.includes('GOOD-LAYER-OUTPUT') && !stdout.includes('UNIT-LAYER-OUTPUT'), stdout)
    assert.match(stdout, /----- node bad: its whole output \(also in .*node-bad\.log\) -----\n[\s\S]*BAD-LAYER-OUTPUT[\s\S]*----- end of node bad -----/)
    // every log is kept
    assert.match(readFileSync(path.join(logs, 'node-good.log'), 'utf8'), /GOOD-LAYER-OUTPUT/)
    assert.match(readFileSync(path.join(logs, 'c-unit.log'), 'utf8'), /UNIT-LAYER-OUTPUT/)
    assert.match(readFileSync(path.join(logs, 'node-good.tap'), 'utf8'), /^# pass 2$/m)
    // nothing else: the header, four rows, the failing layer's block, the closing line
    const block = stdout.slice(stdout.indexOf('----- node bad:'), stdout.indexOf('----- end of node bad -----'))
    assert.equal(lines.length - block.split('\n').length, 1 + 4 + 1 + 1)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('test layers: a layer\'s name is on the terminal from the moment it starts', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-layers-'))
  try {
    const out = path.join(dir, 'out')
    const seen = path.join(dir, 'seen') // the terminal's text while the second layer runs
    const { code, stderr } = withBuildSh(`
      . tests/layers.sh
      {
        layers_start ${dir}/logs
        layer "first" unit sh -c 'echo "1 checks, 0 failed"'
        layer "second, running" unit sh -c 'cat ${out} > ${seen}; echo "1 checks, 0 failed"'
        layers_finish
      } > ${out}`)
    assert.equal(code, 0, stderr)
    const running = readFileSync(seen, 'utf8').split('\n')
    assert.equal(running.length, 3, 'the header, the first layer\'s row, the second\'s name')
    assert.match(running[1], /^  first +0 suites passed.* s {2}ok$/)
    assert.match(running[2], /^  second, running +$/, 'the running layer is named, its row not ended')
    // and its row, once ended, is one line in the usual form
    assert.match(readFileSync(out, 'utf8'), /\n  second, running +0 suites passed, 0 failed; 1 checks, 0 failed +[\d.]+ s {2}ok\n/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

// Names, sizes and times of every file under dir (one level of subdirectories).
function snapshot(dir) {
  const out = {}
  for (const name of readdirSync(dir)) {
    const st = statSync(path.join(dir, name))
    out[name] = `${st.size}:${st.mtimeMs}`
    if (st.isDirectory()) for (const sub of readdirSync(path.join(dir, name))) out[`${name}/${sub}`] = statSync(path.join(dir, name, sub)).mtimeMs
  }
  return out
}

test('apt for cJSON\'s source: a private configuration under the build directory, the system\'s untouched', () => {
  const source = readFileSync(path.join(root, 'build.sh'), 'utf8')
  assert.doesNotMatch(source, /(tee|>|cp|mv|install)\s+[^\n]*\/etc\/apt\//, 'build.sh writes nothing under /etc/apt')
  for (const line of source.split('\n').filter((l) => /apt-get source|apt-cache showsrc/.test(l) && !/^\s*(#|say )/.test(l)))
    assert.match(line, /private_apt (apt-get|apt-cache)/, `not through the private configuration: ${line}`)

  const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-apt-'))
  const system = ['/etc/apt', '/etc/apt/sources.list.d', '/var/lib/apt/lists', '/var/cache/apt'].filter(existsSync)
  const before = system.map(snapshot)
  try {
    const { code, stdout, stderr } = withBuildSh(`
      BUILD=${dir}; APT_DIR=${dir}/apt
      private_apt_sources
      private_apt apt-config dump | grep -iE '^Dir::(Etc::SourceList|Etc::SourceParts|State::Lists|Cache) '
      echo "showsrc: $(private_apt apt-cache showsrc cjson 2>/dev/null | grep -c '^Version:')"`)
    assert.equal(code, 0, stderr)
    assert.match(stdout, new RegExp(`^Dir::Etc::SourceList "${dir}/apt/sources.list";$`, 'mi'))
    assert.match(stdout, new RegExp(`^Dir::Etc::SourceParts "${dir}/apt/sources.list.d";$`, 'mi'))
    assert.match(stdout, new RegExp(`^Dir::State::Lists "${dir}/apt/lists";$`, 'mi'))
    assert.match(stdout, new RegExp(`^Dir::Cache "${dir}/apt/cache";$`, 'mi'))
    // (apt-config prints the names as apt spells them: Dir::State::lists …)
    // its sources are deb-src copies of the machine's own; its lists are its own (still empty here)
    const parts = readdirSync(path.join(dir, 'apt', 'sources.list.d'))
    const text = parts.map((f) => readFileSync(path.join(dir, 'apt', 'sources.list.d', f), 'utf8')).join('') + readFileSync(path.join(dir, 'apt', 'sources.list'), 'utf8')
    assert.match(text, /deb-src/)
    assert.doesNotMatch(text, /^(Types: deb|deb) /m, 'source entries only')
    assert.match(stdout, /^showsrc: 0$/m, 'the system\'s package lists are not read')
    assert.deepEqual(system.map(snapshot), before, 'nothing under /etc/apt, /var/lib/apt/lists or /var/cache/apt changed')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('--help, -h and help print the usage and exit 0, building nothing; an unknown command is exit 2 with the usage', () => {
  for (const arg of ['--help', '-h', 'help']) {
    const r = spawnSync('bash', ['build.sh', arg], { cwd: root, encoding: 'utf8' })
    assert.equal(r.status, 0, `${arg}: ${r.stderr}`)
    assert.match(r.stdout, /^usage: \.\/build\.sh \[build\|test\|demo\|update-wasm\]\n/)
    for (const cmd of ['build', 'test', 'demo', 'update-wasm']) assert.match(r.stdout, new RegExp(`^  ${cmd} `, 'm'))
    assert.equal(r.stderr, '', `${arg}: nothing is built or installed`)
  }
  const bad = spawnSync('bash', ['build.sh', 'tset'], { cwd: root, encoding: 'utf8' })
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /^build\.sh: unknown command 'tset'\nusage: \.\/build\.sh /)
  assert.equal(bad.stdout, '')
})
