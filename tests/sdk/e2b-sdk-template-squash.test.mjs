// Deep templates through the official e2b SDK (docs/templates.md, "Depth"):
// a template with more steps that change files than a stack may hold has
// its stack squashed (the layers above base merged into one) and builds;
// its sandboxes see every step's files, deletions (of a base file and of a
// file an earlier step made), directories replaced, a symbolic link, the
// owner and mode of a copy; the layers the merge replaced are collected; a
// rebuild is fully cached (nothing runs again); a template built on the
// deep one is squashed the same way; deleting them collects the merged
// layers. An image of 41 layers (from Debian's docker-registry on
// 127.0.0.1, filled here) is squashed to two. A build deleted while its
// squash runs kills the squash and leaves nothing half made. A backend with
// a state directory of its own: its layers are read.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { api, startBackend } from '../../host/backend.mjs';
import { ociLayout, push, startRegistry, tarOf } from '../../host/registry.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Template } = await import('e2b');

const STACK_MAX = 32; // TEMPLATES_STACK_MAX (backend/templates/templates_stack.h)
const FILL = 30;
// Holds a write lease (fcntl F_SETLEASE, F_WRLCK) on a file: another
// process's open of it waits until the lease is given up (here: never, so
// for lease-break-time, 45 s), and the holder hears of it (SIGIO).
const LEASE_HOLDER = `import fcntl, os, signal, sys
signal.signal(signal.SIGIO, lambda *_: print('broken', flush=True))
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)
print('held', flush=True)
while True:
    signal.pause()
`;

describe('official e2b SDK: a template deeper than a stack may be is squashed', () => {
  let backend;
  let opts;
  let context;
  let stateDir;
  const uniq = `${process.pid}-${Date.now().toString(36)}`;
  const stamp = 'head -c 16 /dev/urandom | od -An -tx1 | tr -d " \\n"';
  const stackOf = (templateId) => JSON.parse(readFileSync(path.join(stateDir, 'records', 'templates', `${templateId}.json`), 'utf8')).builds[0].config.layers;
  const layerDir = (id) => path.join(stateDir, 'layers', id);
  // The store's layers of one origin (layer.json), by id.
  const layersOf = (origin) => readdirSync(path.join(stateDir, 'layers')).filter((id) => !id.startsWith('.')).filter((id) => {
    try { return JSON.parse(readFileSync(path.join(layerDir(id), 'layer.json'), 'utf8')).origin === origin; } catch { return false; }
  });

  // 41 steps that change files (one layer each): the squash comes before
  // the 32nd, when base and 31 layers are the stack.
  const deep = () => {
    let t = Template({ fileContextPath: context }).fromTemplate('base')
      .runCmd(`mkdir -p /opt/sq && echo early > /opt/sq/early.txt && echo temp > /opt/sq/temp.txt && ${stamp} > /opt/sq/stamp1`, { user: 'root' })
      .copy('tool.sh', '/opt/sq/tool.sh', { user: 'user', mode: 0o750 })
      .makeDir('/opt/sq/dir', { user: 'root' })
      .runCmd('echo a > /opt/sq/dir/a.txt', { user: 'root' })
      .makeSymlink('/opt/sq/early.txt', '/opt/sq/link', { user: 'root' })
      .remove('/etc/issue', { user: 'root' })
      .remove('/opt/sq/temp.txt', { user: 'root' })
      .runCmd('rm -rf /opt/sq/dir && mkdir /opt/sq/dir && echo b > /opt/sq/dir/b.txt', { user: 'root' })
      .runCmd('rm -rf /etc/skel && mkdir /etc/skel && echo mine > /etc/skel/only', { user: 'root' })
      .setEnvs({ SQ: 'yes' });
    for (let i = 0; i < FILL; i++) t = t.runCmd(`echo ${i} > /opt/sq/fill-${i}`, { user: 'root' });
    return t.remove('/opt/sq/fill-0', { user: 'root' })
      .runCmd(`echo "late $SQ" > /opt/sq/late && ${stamp} > /opt/sq/stamp2`, { user: 'root' });
  };
  const FILE_STEPS = 9 + FILL + 2;

  const read = async (name, extra = '') => {
    const sandbox = await Sandbox.create(name, { ...opts, timeoutMs: 60_000 });
    try {
      const r = await sandbox.commands.run([
        'cd /opt/sq', 'cat early.txt', 'test -e temp.txt && echo temp-present || echo temp-gone',
        'ls -A dir', 'ls -A /etc/skel', 'test -e /etc/issue && echo issue-present || echo issue-gone',
        'readlink link', 'cat link', 'stat -c "%U %a" tool.sh', 'cat tool.sh',
        'test -e fill-0 && echo fill-0-present || echo fill-0-gone', `cat $(seq -f "fill-%g" 1 ${FILL - 1}) | tr "\\n" " "; echo`,
        'cat late', 'cat stamp1; echo', 'cat stamp2; echo', extra,
      ].join('; '), { user: 'root' });
      return r.stdout;
    } finally {
      await sandbox.kill();
    }
  };
  const expected = (first) => {
    const lines = first.split('\n');
    assert.deepEqual(lines.slice(0, 12), ['early', 'temp-gone', 'b.txt', 'only', 'issue-gone', '/opt/sq/early.txt', 'early',
      'user 750', 'echo tool', 'fill-0-gone', `${Array.from({ length: FILL - 1 }, (_, i) => i + 1).join(' ')} `, 'late yes'], first);
    assert.match(lines[12], /^[0-9a-f]{32}$/);
    assert.match(lines[13], /^[0-9a-f]{32}$/);
    return lines;
  };
  const squashLine = /^Stack of 32 layers squashed: layers 2 to 32 merged into squash-[0-9a-f]{64} \([0-9.]+ MiB\) in \d+ ms$/;

  before(async () => {
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-squash-state-'));
    context = mkdtempSync(path.join(tmpdir(), 'e2bw-squash-ctx-'));
    writeFileSync(path.join(context, 'tool.sh'), 'echo tool\n');
    backend = await startBackend({ stateDir });
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    rmSync(context, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('it builds, its sandboxes see every step, the merged layers are collected with the templates, a rebuild is cached', async (t) => {
    if (backend.isolation !== 'full') { t.skip('sealing and squashing layers need full isolation'); return; }
    const name = `tpl-deep-${uniq}`;
    const logs = [];
    const built = await Template.build(deep(), name, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    const squashed = logs.filter((m) => squashLine.test(m));
    assert.equal(squashed.length, 1, logs.join('\n'));
    const stack = stackOf(built.templateId);
    assert.equal(stack.length, 2 + FILE_STEPS - (STACK_MAX - 1), 'base, the merged layer, one layer per step after it');
    assert.match(stack[1], /^squash-[0-9a-f]{64}$/);
    assert.ok(squashed[0].includes(stack[1]));
    assert.equal(JSON.parse(readFileSync(path.join(layerDir(stack[1]), 'layer.json'), 'utf8')).origin, 'template-squash');
    const first = expected(await read(name));
    // The step layers the merge replaced are used by nothing now: collected.
    await until(() => layersOf('template-step').every((id) => stack.includes(id)), 'the replaced layers are collected');

    // The same steps again: their layers up to the squash are gone, yet
    // nothing runs: the keys lead to the merged layer, then to the rest.
    const again = [];
    await Template.build(deep(), name, { ...opts, onBuildLogs: (e) => again.push(e.message) });
    assert.equal(again.filter((m) => /^CACHED \[builder \d+\/\d+\] (RUN|COPY|WORKDIR)/.test(m)).length, FILE_STEPS, again.join('\n'));
    assert.ok(!again.some((m) => /^\[builder \d+\/\d+\] (RUN|COPY|WORKDIR)/.test(m)), 'no step that changes files ran again');
    assert.ok(again.includes(`Stack squashed: ${stack[1]}, in the store already`), again.join('\n'));
    assert.equal(await read(name), first.join('\n'), 'the same files, stamps included');
    assert.deepEqual(stackOf(built.templateId), stack);

    // A template on the deep one: its stack is squashed the same way,
    // the parent's merged layer merged again with the rest.
    const child = `tpl-deep-child-${uniq}`;
    let c = Template().fromTemplate(name);
    for (let i = 0; i < 25; i++) c = c.runCmd(`echo ${i} > /opt/sq/child-${i}`, { user: 'root' });
    const childLogs = [];
    const childBuilt = await Template.build(c, child, { ...opts, onBuildLogs: (e) => childLogs.push(e.message) });
    assert.equal(childLogs.filter((m) => squashLine.test(m)).length, 1, childLogs.join('\n'));
    const childStack = stackOf(childBuilt.templateId);
    assert.equal(childStack.length, 2 + (stack.length + 25) - STACK_MAX);
    assert.match(childStack[1], /^squash-/);
    assert.notEqual(childStack[1], stack[1]);
    const childLines = (await read(child, 'cat /opt/sq/child-0 /opt/sq/child-24')).split('\n');
    assert.deepEqual(childLines.slice(0, 14), first.slice(0, 14), 'the parent\'s files');
    assert.deepEqual(childLines.slice(14, 16), ['0', '24']);

    // Deleting both collects the merged layers and every step layer.
    const del = (id) => fetch(`${backend.apiUrl}/templates/${id}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } });
    assert.equal((await del(childBuilt.templateId)).status, 204);
    await until(() => !existsSync(layerDir(childStack[1])), "the child's merged layer is collected");
    assert.ok(existsSync(layerDir(stack[1])), "the parent's stays");
    assert.equal((await del(built.templateId)).status, 204);
    await until(() => !existsSync(layerDir(stack[1])), 'the merged layer is collected');
    await until(() => layersOf('template-step').length === 0 && layersOf('template-squash').length === 0, 'no layer of theirs is left');
  });

  test('a template deleted while its stack is squashed: the squash is killed, nothing half made is left', async (t) => {
    if (backend.isolation !== 'full') { t.skip('sealing and squashing layers need full isolation'); return; }
    const leftovers = () => readdirSync(path.join(stateDir, 'layers')).filter((n) => n.startsWith('.tmp-'));
    const squashHelpers = () => readdirSync('/proc').filter((n) => /^\d+$/.test(n)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'e2b-squash' &&
          /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1] === String(backend.pid);
      } catch { return false; }
    });
    // A parent as deep as a stack may be (base and 31 layers): the first
    // step of a template on it squashes first. The merge opens the files of
    // the parent's layers, the first of them held by a lease: it waits there
    // (the squash runs, and will not end by itself), and the holder hears it.
    const parent = `tpl-lease-${uniq}`;
    let p = Template().fromTemplate('base').runCmd('mkdir -p /opt/lease && echo held > /opt/lease/held.txt', { user: 'root' });
    for (let i = 1; i < STACK_MAX - 1; i++) p = p.runCmd(`echo ${i} > /opt/lease/f-${i}`, { user: 'root' });
    const stack = stackOf((await Template.build(p, parent, opts)).templateId);
    assert.equal(stack.length, STACK_MAX);
    const holder = spawn('python3', ['-c', LEASE_HOLDER, path.join(layerDir(stack[1]), 'root', 'opt', 'lease', 'held.txt')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    holder.stdout.on('data', (d) => { said += d; });
    const steps = [{ type: 'RUN', args: ['echo child > /opt/lease/child', 'root'] }];
    try {
      await until(() => said.includes('held\n'), 'the lease to be taken');
      const merged = layersOf('template-squash');
      const child = (await api(backend, 'POST', '/v3/templates', { name: `tpl-lease-child-${uniq}` })).json;
      assert.equal((await api(backend, 'POST', `/v2/templates/${child.templateID}/builds/${child.buildID}`, { fromTemplate: parent, steps })).status, 202);
      await until(() => said.includes('broken\n'), 'the squash to open the held file');
      assert.equal(squashHelpers().length, 1, 'the squash runs in its helper');
      assert.equal((await api(backend, 'DELETE', `/templates/${child.templateID}`)).status, 204);
      // Not after the lease gives way: the helper is killed now.
      await until(() => squashHelpers().length === 0, 'the squash helper to be killed while the lease still holds');
      assert.equal(holder.exitCode, null, 'the lease still holds');
      await until(() => leftovers().length === 0, () => `scratch directories left: ${leftovers()}`);
      assert.deepEqual(layersOf('template-squash'), merged, 'no merged layer');
    } finally {
      holder.kill('SIGKILL');
    }
    // The same build again merges afresh (nothing of the killed squash is
    // taken for its layer), and its sandboxes see every layer.
    const logs = [];
    const name = `tpl-lease-child2-${uniq}`;
    await Template.build(Template().fromTemplate(parent).runCmd('echo child > /opt/lease/child', { user: 'root' }), name, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    assert.equal(logs.filter((m) => squashLine.test(m)).length, 1, logs.join('\n'));
    const sandbox = await Sandbox.create(name, { ...opts, timeoutMs: 60_000 });
    try {
      assert.equal((await sandbox.commands.run('cat /opt/lease/held.txt /opt/lease/f-30 /opt/lease/child')).stdout, 'held\n30\nchild\n');
    } finally {
      await sandbox.kill();
    }
  });
});

describe('official e2b SDK: an image with more layers than a stack may hold is squashed', () => {
  let backend, opts, stateDir, work, registry;
  const uniq = `${process.pid}-${Date.now().toString(36)}`;
  const LAYERS = 41;
  const stackOf = (templateId) => JSON.parse(readFileSync(path.join(stateDir, 'records', 'templates', `${templateId}.json`), 'utf8')).builds[0].config.layers;

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'e2bw-squash-image-'));
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-squash-image-state-'));
    registry = await startRegistry();
    // Layer 0, the bottom: a few files and the mount points of a base (the
    // sandbox's init comes from the backend). Then one layer per file, a whiteout of a bottom file, one of a
    // file a layer above made, and a bottom directory made opaque.
    const layers = [];
    for (let i = 0; i < LAYERS; i++) {
      const tree = path.join(work, `tree-${i}`);
      mkdirSync(path.join(tree, 'opt', 'deep'), { recursive: true });
      mkdirSync(path.join(tree, 'etc', 'skel'), { recursive: true });
      if (i === 0) {
        writeFileSync(path.join(tree, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
        writeFileSync(path.join(tree, 'etc', 'issue'), 'the bottom\n');
        writeFileSync(path.join(tree, 'etc', 'skel', 'from-bottom'), 'x\n');
        for (const d of ['root', 'proc', 'dev', 'sys', 'tmp']) mkdirSync(path.join(tree, d));
      }
      writeFileSync(path.join(tree, 'opt', 'deep', `f-${i}`), `layer ${i}\n`);
      if (i === 5) writeFileSync(path.join(tree, 'etc', '.wh.issue'), '');
      if (i === 6) writeFileSync(path.join(tree, 'opt', 'deep', '.wh.f-3'), '');
      if (i === 7) {
        writeFileSync(path.join(tree, 'etc', 'skel', '.wh..wh..opq'), '');
        writeFileSync(path.join(tree, 'etc', 'skel', 'only'), 'y\n');
      }
      layers.push({ tar: tarOf(tree, path.join(work, `l${i}.tar`), { ownerRoot: true }), compress: 'gzip' });
    }
    const layout = await ociLayout(path.join(work, 'oci'), { layers });
    push(`oci:${layout.dir}:latest`, registry, 'e2bw/deep:v1');
    backend = await startBackend({ stateDir });
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    await registry.stop();
    rmSync(work, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
    // Last: a failed assertion must not leave the registry running, which
    // would keep this file from ever ending.
    assert.equal(code, 0, backend.stderr());
  });

  test('its stack is the bottom layer and one merged layer; its sandboxes see every layer; a second template finds the merged layer', async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return; }
    const logs = [];
    const image = () => Template().fromImage(`${registry.host}/e2bw/deep:v1`).setEnvs({ DEEP: '1' });
    const built = await Template.build(image(), `tpl-deep-image-${uniq}`, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    assert.ok(logs.some((m) => /^Stack of 41 layers squashed: layers 2 to 41 merged into squash-[0-9a-f]{64} /.test(m)), logs.join('\n'));
    // Its /etc/passwd lacks user, but it has no shell to make it with.
    assert.ok(logs.includes("Provisioning: skipped, the image has no /bin/sh to run it: the template's user stays root"), logs.join('\n'));
    const stack = stackOf(built.templateId);
    assert.equal(stack.length, 2);
    assert.match(stack[0], /^sha256:[0-9a-f]{64}$/);
    assert.match(stack[1], /^squash-[0-9a-f]{64}$/);
    const sandbox = await Sandbox.create(`tpl-deep-image-${uniq}`, { ...opts, timeoutMs: 60_000 });
    try {
      assert.equal(await sandbox.files.read('/opt/deep/f-0'), 'layer 0\n');
      assert.equal(await sandbox.files.read('/opt/deep/f-40'), 'layer 40\n');
      assert.equal(await sandbox.files.exists('/opt/deep/f-3'), false, 'deleted by a layer above the one that made it');
      assert.equal(await sandbox.files.exists('/etc/issue'), false, 'a bottom file deleted');
      assert.deepEqual((await sandbox.files.list('/etc/skel')).map((e) => e.name), ['only'], 'a bottom directory made opaque');
      assert.equal((await sandbox.files.list('/opt/deep')).length, LAYERS - 1);
    } finally {
      await sandbox.kill();
    }
    const again = [];
    const second = await Template.build(image(), `tpl-deep-image2-${uniq}`, { ...opts, onBuildLogs: (e) => again.push(e.message) });
    assert.ok(again.includes(`Stack of 41 layers squashed: ${stack[1]}, in the store already`), again.join('\n'));
    assert.deepEqual(stackOf(second.templateId), stack);
    for (const id of [built.templateId, second.templateId])
      assert.equal((await fetch(`${backend.apiUrl}/templates/${id}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } })).status, 204);
    await until(() => !existsSync(path.join(stateDir, 'layers', stack[1])), 'the merged layer is collected');
  });
});
