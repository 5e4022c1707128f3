// The Makefile builds object by object, each with the headers it read
// (-MMD), so a second make recompiles only what a change reaches; the fuzz
// targets take from the core's archive only the members they use. Checked
// on the build directory the tests run on (E2BW_BUILD, as ./build.sh left
// it) with `make -n -W FILE`: what make would run were FILE just changed,
// with nothing built and no file touched.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const build = path.resolve(process.env.E2BW_BUILD || path.join(root, 'build'))

/** The commands `make -n` prints for args (without those making directories). */
function dryRun(...args) {
  const r = spawnSync('make', ['--no-print-directory', '-n', `BUILD=${build}`, ...args], { cwd: root, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return r.stdout.split('\n').filter((l) => l.trim() && !/^(mkdir -p |make: Nothing to be done)/.test(l))
}
/** [source, object] of each compile among the commands. */
const compiles = (lines) => lines.filter((l) => / -c /.test(l)).map((l) => [l.match(/ -c (\S+)/)[1], l.match(/ -o (\S+)/)[1]])
const outputs = (lines) => lines.map((l) => l.match(/ -o (\S+)$/)?.[1]).filter(Boolean)
const rel = (p) => path.relative(build, p)

// One of the backend's own files, whichever the folder holds.
const lib = readdirSync(path.join(root, 'backend/lib')).filter((f) => f.endsWith('.c')).sort()[0]
const backendFile = `backend/lib/${lib}`

test('the build directory is up to date: make has nothing to do', () => {
  assert.deepEqual(dryRun('all'), [], `run ./build.sh (or make all BUILD=${build}) first`)
})

test('one backend .c file changed: make backend compiles that one object, then archives and links', () => {
  const lines = dryRun('-W', backendFile, 'backend')
  assert.deepEqual(compiles(lines).map(([src, obj]) => [src, rel(obj)]), [[backendFile, `backend/obj/${backendFile.replace(/\.c$/, '.o')}`]])
  assert.ok(outputs(lines).map(rel).includes('bin/e2b-local-backend'), lines.join('\n'))
  for (const l of lines.filter((x) => !/ -c /.test(x)))
    assert.match(l, /^(rm -f \S+\.a|ar qcs \S+\.a .*|cc -g .* -o \S+)$/, 'nothing else than archives and links')
})

test('the same change under make all: one compile in each flavour that links it (native, ASan)', () => {
  const built = compiles(dryRun('-W', backendFile, 'all'))
  assert.deepEqual(built.map(([src]) => src), [backendFile, backendFile])
  assert.deepEqual(built.map(([, obj]) => rel(obj).split('/obj/')[0]).sort(), ['asan-backend', 'backend'])
})

test('a backend header changed: the files that include it are compiled again, and only those', () => {
  const header = backendFile.replace(/\.c$/, '.h')
  const built = compiles(dryRun('-W', header, 'backend')).map(([src]) => src)
  const all = spawnSync('find', ['backend', 'tests/backend', '-name', '*.c'], { cwd: root, encoding: 'utf8' }).stdout.trim().split('\n')
  const includers = all.filter((f) => readFileSync(path.join(root, f), 'utf8').includes(`#include "${header.replace('backend/', '')}"`))
  assert.ok(includers.length > 1, `files that include ${header}`)
  for (const f of includers.filter((x) => !x.startsWith('tests/backend/unit/'))) assert.ok(built.includes(f), `${f} includes ${header}`)
  assert.ok(built.length < all.length / 2, `${built.length} of ${all.length} files compiled again`)
})

test('a core .c file changed: one compile per flavour (native, ASan, core.wasm\'s bitcode, core-wasi.wasm)', () => {
  const lines = dryRun('-W', 'core/url.c', 'all')
  assert.deepEqual(compiles(lines).map(([src, obj]) => [src, rel(obj)]).sort(), [
    ['core/url.c', 'asan/obj/core/url.o'],
    ['core/url.c', 'native/obj/core/url.o'],
    ['core/url.c', 'wasm/obj-wasi/core/url.o'],
    ['core/url.c', 'wasm/obj/core/url.o'],
  ])
  assert.ok(outputs(lines).map(rel).includes('wasm/core.wasm'), lines.join('\n'))
})

// The replay programs are built by `./build.sh test` (make replay) before the node tests run.
const replay = (name) => path.join(build, 'replay', name)
test('fuzz targets link only what they test: no cJSON in the egress parsers\' targets', { skip: !existsSync(replay('fuzz_egress_sni')) && `no ${replay('fuzz_egress_sni')}: make replay first` }, () => {
  const defined = (name) => {
    const r = spawnSync('nm', ['--defined-only', replay(name)], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    return r.stdout.split('\n').map((l) => l.split(' ').at(-1))
  }
  const core = defined('fuzz_jsonrpc')
  assert.ok(core.includes('cJSON_Parse') && core.includes('e2bw_rpc_parse'), 'a target of the core has the core and cJSON')
  for (const name of ['fuzz_egress_sni', 'fuzz_egress_host', 'fuzz_image_ref', 'fuzz_strtod']) {
    const symbols = defined(name)
    assert.ok(!symbols.includes('cJSON_Parse'), `${name} links no cJSON`)
    assert.deepEqual(symbols.filter((s) => s.startsWith('e2bw_')), [], `${name} links none of the core`)
  }
})
