// The official e2b SDK's Template builder (2.51) against the local backend's
// template API (docs/templates.md, "The backend"): builds run their steps in
// a build sandbox made from `base`, with E2B's log entries and failure
// messages; aliases, tags, delete; start and ready commands in every sandbox
// of a template. No network: no step reaches beyond the sandbox.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, symlinkSync, rmSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackend } from '../../host/backend.mjs';
import { until } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Template, waitForPort, BuildError } = await import('e2b');

describe('official e2b SDK: templates', () => {
  let backend;
  let opts;
  let context;
  const uniq = `${process.pid}-${Date.now().toString(36)}`;

  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
    context = mkdtempSync(path.join(tmpdir(), 'e2bw-tpl-'));
    writeFileSync(path.join(context, 'hello.txt'), `hello ${uniq}\n`);
    symlinkSync('hello.txt', path.join(context, 'link.txt'));
  });

  after(async () => {
    rmSync(context, { recursive: true, force: true });
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    assert.ok(!backend.stderr().includes(backend.apiKey), 'the API key must never be logged');
  });

  test('runCmd as user and root, copy with a symlink, env, workdir, user: each step runs in the build sandbox', async () => {
    const logs = [];
    const template = Template({ fileContextPath: context })
      .fromTemplate('base')
      .runCmd('echo "I am $(whoami)"')
      .runCmd('echo "root is $(whoami)"', { user: 'root' })
      .copy('hello.txt', '/opt/ctx/', { user: 'root', mode: 0o640 })
      .copy('link.txt', '/opt/ctx/')
      .setEnvs({ GREETING: 'hi there' })
      .setWorkdir('/opt/ctx')
      .runCmd('echo "env=$GREETING pwd=$(pwd)"; stat -c "%U %a %n" hello.txt; readlink link.txt; cat link.txt', { user: 'root' })
      .setUser('root')
      .runCmd('echo "now $(whoami)"')
    const built = await Template.build(template, `tpl-steps-${uniq}`, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    assert.match(built.templateId, /^[a-z0-9]{20}$/);
    const text = logs.join('\n');
    assert.match(text, /^I am user$/m);
    assert.match(text, /^root is root$/m);
    assert.match(text, /^env=hi there pwd=\/opt\/ctx$/m);
    assert.match(text, /^root 640 hello\.txt$/m, 'copy user and mode');
    assert.match(text, /^hello\.txt$/m, 'the symlink is kept as a link');
    assert.match(text, new RegExp(`^hello ${uniq}$`, 'm'));
    assert.match(text, /^now root$/m);
    const status = await Template.getBuildStatus(built, opts);
    assert.equal(status.status, 'ready');
    // The build's log from an offset: the entries after it, none twice.
    const all = status.logEntries.length;
    const tail = await Template.getBuildStatus(built, { ...opts, logsOffset: all - 2 });
    assert.equal(tail.logEntries.length, 2);
  });

  test('a failing command fails the build with E2B\'s message and the log up to it', async () => {
    const logs = [];
    const template = Template().fromBaseImage().runCmd('echo before-the-failure').runCmd('echo oops >&2; exit 3').runCmd('echo never')
    await assert.rejects(Template.build(template, `tpl-fail-${uniq}`, { ...opts, onBuildLogs: (e) => logs.push(e.message) }), (err) => {
      assert.ok(err instanceof BuildError, String(err));
      assert.equal(err.message, "failed to run command 'echo oops >&2; exit 3': exit status 3");
      return true;
    });
    const text = logs.join('\n');
    assert.match(text, /^before-the-failure$/m);
    assert.match(text, /^oops$/m);
    assert.doesNotMatch(text, /^never$/m);
    // A user that does not exist fails with E2B's message: envd's Connect
    // error as the builder's command stream ends with it.
    const nobody = Template().fromTemplate('base').runCmd('whoami', { user: 'root123' });
    await assert.rejects(Template.build(nobody, `tpl-nouser-${uniq}`, opts), (err) => {
      assert.ok(err instanceof BuildError, String(err));
      assert.equal(err.message, "failed to run command 'whoami': command failed: unauthenticated: invalid username: 'root123'");
      return true;
    });
  });

  // Before, such a step waited on its full pipe for ever: the build never ended.
  test('a step that prints more than a pipe holds is read as it runs: the build ends with every line in its log', { timeout: 120_000 }, async () => {
    const logs = [];
    // 3,000 lines of 150 bytes: 450 KiB, seven times a pipe's 64 KiB
    const loud = Template().fromTemplate('base').runCmd('yes "$(printf "%0150d" 0)" | head -n 3000; echo done-printing');
    await Template.build(loud, `tpl-loud-${uniq}`, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    assert.equal(logs.filter((l) => /^0{150}$/.test(l)).length, 3000);
    assert.ok(logs.includes('done-printing'));
  });

  test('setUser of an account that does not exist makes it, as E2B\'s builder does (useradd --create-home); a rebuild takes it from the cache', async () => {
    const template = () => Template().fromTemplate('base')
      .setUser('newbie')
      .runCmd('echo "who=$(whoami) home=$HOME"; stat -c "owner=%U" "$HOME"');
    const logs = [];
    await Template.build(template(), `tpl-newuser-${uniq}`, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    const text = logs.join('\n');
    assert.match(text, /^who=newbie home=\/home\/newbie$/m);
    assert.match(text, /^owner=newbie$/m, 'its home is made and is its own');
    const sbx = await Sandbox.create(`tpl-newuser-${uniq}`, opts);
    try {
      assert.equal((await sbx.commands.run('whoami')).stdout, 'newbie\n', 'the sandboxes\' default user');
      assert.match((await sbx.commands.run('getent passwd newbie')).stdout, /^newbie:x:\d+:\d+::\/home\/newbie:/);
    } finally {
      await sbx.kill();
    }
    const again = [];
    await Template.build(template(), `tpl-newuser2-${uniq}`, { ...opts, onBuildLogs: (e) => again.push(e.message) });
    assert.match(again.join('\n'), /CACHED \[builder \d+\/\d+\] USER newbie/, 'the account\'s layer came from the cache');
    assert.doesNotMatch(again.join('\n'), /^who=/m, 'nothing ran again');
    // An account that exists is only remembered: no layer, nothing run.
    const root = [];
    await Template.build(Template().fromTemplate('base').setUser('root').runCmd('whoami'), `tpl-rootuser-${uniq}`, { ...opts, onBuildLogs: (e) => root.push(e.message) });
    assert.doesNotMatch(root.join('\n'), /useradd/);
    assert.match(root.join('\n'), /^root$/m);
  });

  test('bad input: unknown step types and paths leaving the context are 400s; a missing upload fails the build', async () => {
    const create = await fetch(`${backend.apiUrl}/v3/templates`, { method: 'POST', headers: { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: `tpl-bad-${uniq}` }) });
    assert.equal(create.status, 202);
    const { templateID, buildID } = await create.json();
    const start = (steps) => fetch(`${backend.apiUrl}/v2/templates/${templateID}/builds/${buildID}`, { method: 'POST', headers: { 'X-API-Key': backend.apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ fromTemplate: 'base', steps }) });
    let res = await start([{ type: 'FROBNICATE', args: [] }]);
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /steps\[0\]: unknown step type 'FROBNICATE'/);
    res = await start([{ type: 'COPY', args: ['../etc/passwd', '/x'], filesHash: 'a'.repeat(64) }]);
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /steps\[0\]: COPY source must be a path inside the build context/);
    res = await start([{ type: 'COPY', args: ['f', '/x'], filesHash: 'b'.repeat(64) }]);
    assert.equal(res.status, 202);
    const status = await Template.getBuildStatus({ templateId: templateID, buildId: buildID }, opts).then(async (s) => {
      for (let i = 0; i < 200 && (s.status === 'building' || s.status === 'waiting'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        s = await Template.getBuildStatus({ templateId: templateID, buildId: buildID }, opts);
      }
      return s;
    });
    assert.equal(status.status, 'error');
    assert.match(status.reason.message, /were not uploaded/);
    assert.equal(status.reason.step, '1');
    // An upload link is refused without its token.
    const put = await fetch(`${backend.apiUrl}/templates/${templateID}/files/${'c'.repeat(64)}?token=${'0'.repeat(64)}`, { method: 'PUT', body: 'x' });
    assert.equal(put.status, 403);
  });

  test('start and ready command: create returns once the server answers', async () => {
    const template = Template().fromTemplate('base')
      .setEnvs({ PAGE: 'served-by-the-start-command' })
      .setWorkdir('/tmp')
      .setStartCmd('mkdir -p /tmp/www && echo "$PAGE" > /tmp/www/index.html && cd /tmp/www && exec python3 -m http.server 8000', waitForPort(8000));
    // setWorkdir makes the directory: a file change, so a layer of its own.
    const configOnly = Template().fromTemplate('base')
      .setEnvs({ PAGE: 'served-by-the-start-command' })
      .setStartCmd('mkdir -p /tmp/www && echo "$PAGE" > /tmp/www/index.html && cd /tmp/www && exec python3 -m http.server 8000', waitForPort(8000));
    const name = `tpl-web-${uniq}`;
    await Template.build(configOnly, name, opts);
    const sandbox = await Sandbox.create(name, { ...opts, timeoutMs: 60_000 });
    try {
      // No waiting here: create returned only once the ready command succeeded.
      const r = await sandbox.commands.run('curl -s http://127.0.0.1:8000/index.html');
      assert.equal(r.stdout, 'served-by-the-start-command\n');
    } finally {
      await sandbox.kill();
    }
    await Template.build(template, `${name}-wd`, opts);
    const wd = await Sandbox.create(`${name}-wd`, { ...opts, timeoutMs: 60_000 });
    try {
      assert.equal((await wd.commands.run('curl -s http://127.0.0.1:8000/index.html')).stdout, 'served-by-the-start-command\n');
    } finally {
      await wd.kill();
    }
    // A start command that dies fails the create, saying so.
    const dying = Template().fromTemplate('base').setStartCmd('exit 4', waitForPort(8001));
    await Template.build(dying, `tpl-dies-${uniq}`, opts);
    await assert.rejects(Sandbox.create(`tpl-dies-${uniq}`, opts), /start command 'exit 4' ended \(exit status 4\) before the sandbox was ready/);
  });

  test('the built-in templates are visible by name, as to create: exists, their alias and the template', async () => {
    assert.equal(await Template.exists('base', opts), true);
    assert.equal(await Template.exists(`no-such-template-${uniq}`, opts), false);
    const get = async (p) => {
      const res = await fetch(`${backend.apiUrl}${p}`, { headers: { 'X-API-Key': backend.apiKey } });
      return { status: res.status, json: await res.json() };
    };
    assert.deepEqual(await get('/templates/aliases/base'), { status: 200, json: { templateID: 'base', public: true } });
    const { status, json } = await get('/templates/base');
    assert.equal(status, 200);
    assert.equal(json.templateID, 'base');
    assert.deepEqual([json.names, json.aliases, json.public], [['base'], ['base'], true]);
    assert.equal(json.builds.length, 1);
    const [build] = json.builds;
    assert.match(build.buildID, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(build.status, 'ready');
    assert.deepEqual([build.cpuCount, build.memoryMB, build.diskSizeMB], [2, 512, 1024]);
    assert.equal((await get('/templates/base')).json.builds[0].buildID, build.buildID, 'the same build id each time');
    assert.equal((await get(`/templates/aliases/no-such-template-${uniq}`)).status, 404);
    assert.equal((await get(`/templates/no-such-template-${uniq}`)).status, 404);
    // and a sandbox of it reports it as it is named here
    const sbx = await Sandbox.create('base', opts);
    try {
      assert.equal((await sbx.getInfo()).templateId, json.templateID);
    } finally {
      await sbx.kill();
    }
  });

  test('exists, tags, delete', async () => {
    const name = `tpl-tags-${uniq}`;
    assert.equal(await Template.exists(name, opts), false);
    const t = Template().fromTemplate('base').setEnvs({ V: '1' });
    const b1 = await Template.build(t, `${name}:v1`, opts);
    assert.equal(await Template.exists(name, opts), true);
    assert.deepEqual(b1.tags, ['v1']);
    const assigned = await Template.assignTags(`${name}:v1`, ['prod', 'stable'], opts);
    assert.equal(assigned.buildId, b1.buildId);
    let tags = (await Template.getTags(name, opts)).map((x) => x.tag).sort();
    assert.deepEqual(tags, ['prod', 'stable', 'v1']);
    await Template.removeTags(name, 'stable', opts);
    tags = (await Template.getTags(name, opts)).map((x) => x.tag).sort();
    assert.deepEqual(tags, ['prod', 'v1']);
    const sandbox = await Sandbox.create(`${name}:prod`, { ...opts, timeoutMs: 30_000 });
    assert.equal((await sandbox.commands.run('echo $V')).stdout, '1\n');
    await sandbox.kill();
    const del = await fetch(`${backend.apiUrl}/templates/${b1.templateId}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } });
    assert.equal(del.status, 204);
    assert.equal(await Template.exists(name, opts), false);
    await assert.rejects(Template.getBuildStatus(b1, opts), /not found/);
    await assert.rejects(Sandbox.create(name, opts), /not found/);
  });
});

// The layer store under templates: each step that changes files is a layer
// of the template's stack (docs/templates.md, "Layers and the cache").
describe('official e2b SDK: template layers, cache, restart, collection', () => {
  let backend;
  let opts;
  let context;
  let stateDir;
  const uniq = `${process.pid}-${Date.now().toString(36)}`;
  const start = async () => {
    backend = await startBackend({ stateDir });
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
  };
  // The template's stack, from its record in the state directory.
  const stackOf = (templateId) => JSON.parse(readFileSync(path.join(stateDir, 'records', 'templates', `${templateId}.json`), 'utf8')).builds[0].config.layers;
  const layerDir = (id) => path.join(stateDir, 'layers', id);
  const steps = (stampCmd) => Template({ fileContextPath: context })
    .fromTemplate('base')
    .runCmd('echo from-user > ~/mine.txt')
    .runCmd('mkdir -p /opt/app && echo from-root > /opt/app/root.txt && rm -f /etc/issue', { user: 'root' })
    .copy('data.txt', '/opt/app/', { user: 'user', mode: 0o600 })
    .setWorkdir('/opt/app')
    .runCmd(stampCmd, { user: 'root' });
  const stamp = 'head -c 16 /dev/urandom | od -An -tx1 | tr -d " \\n" > /opt/app/stamp';

  before(async () => {
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-tpl-state-'));
    context = mkdtempSync(path.join(tmpdir(), 'e2bw-tpl-ctx-'));
    writeFileSync(path.join(context, 'data.txt'), `data ${uniq}\n`);
    await start();
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
    rmSync(context, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  });

  const read = async (name) => {
    const sandbox = await Sandbox.create(name, { ...opts, timeoutMs: 60_000 });
    try {
      const r = await sandbox.commands.run('stat -c "%U %a %n" /home/user/mine.txt /opt/app/root.txt /opt/app/data.txt; cat /home/user/mine.txt /opt/app/root.txt /opt/app/data.txt /opt/app/stamp; echo; test -e /etc/issue && echo issue-present || echo issue-gone');
      return r.stdout;
    } finally {
      await sandbox.kill();
    }
  };

  test('a sandbox of a built template sees every step\'s files with their owners; a rebuild is cached, skipCache reruns', async (t) => {
    if (backend.isolation !== 'full') { t.skip('sealing layers needs full isolation'); return; }
    const name = `tpl-layers-${uniq}`;
    const logs = [];
    const built = await Template.build(steps(stamp), name, { ...opts, onBuildLogs: (e) => logs.push(e.message) });
    assert.doesNotMatch(logs.join('\n'), /CACHED/);
    const first = await read(name);
    const lines = first.split('\n');
    assert.deepEqual(lines.slice(0, 6), ['user 644 /home/user/mine.txt', 'root 644 /opt/app/root.txt', 'user 600 /opt/app/data.txt', 'from-user', 'from-root', `data ${uniq}`]);
    assert.match(lines[6], /^[0-9a-f]{32}$/);
    assert.deepEqual(lines.slice(7), ['issue-gone', '']);
    const stack = stackOf(built.templateId);
    assert.equal(stack.length, 6, 'base + one layer per step that changed files');
    for (const id of stack) assert.ok(existsSync(path.join(layerDir(id), 'layer.json')), id);

    // The same steps again: every step that changes files is a cache hit,
    // so the stamp (random) is the first build's.
    const again = [];
    await Template.build(steps(stamp), name, { ...opts, onBuildLogs: (e) => again.push(e.message) });
    const ran = logs.filter((m) => /^\[builder \d+\/\d+\] (RUN|COPY|WORKDIR)/.test(m)).length;
    assert.equal(ran, 5, logs.join('\n'));
    assert.equal(again.filter((m) => /^CACHED \[builder \d+\/\d+\] (RUN|COPY|WORKDIR)/.test(m)).length, ran, again.join('\n'));
    assert.ok(!again.some((m) => /^\[builder/.test(m) && !/ (ENV|USER)/.test(m)), 'no step that changes files ran again');
    assert.equal(await read(name), first);

    // skipCache: every step runs again, the stamp is new.
    const forced = [];
    await Template.build(steps(stamp), name, { ...opts, skipCache: true, onBuildLogs: (e) => forced.push(e.message) });
    assert.doesNotMatch(forced.join('\n'), /CACHED/);
    const third = await read(name);
    assert.notEqual(third.split('\n')[6], lines[6]);
  });

  test('templates survive a restart with --state-dir; deleting one collects the layers no other template uses', async (t) => {
    if (backend.isolation !== 'full') { t.skip('sealing layers needs full isolation'); return; }
    const a = await Template.build(steps(`${stamp} # a`), `tpl-a-${uniq}`, opts);
    // b shares a's first four layers (the same chain) and has a last one of its own.
    const b = await Template.build(steps(`${stamp}; echo b >> /opt/app/stamp`), `tpl-b-${uniq}`, opts);
    const before = await read(`tpl-a-${uniq}`);
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    await start();
    assert.equal(await Template.exists(`tpl-a-${uniq}`, opts), true);
    assert.equal(await read(`tpl-a-${uniq}`), before);
    const stackA = stackOf(a.templateId);
    const stackB = stackOf(b.templateId);
    assert.deepEqual(stackA.slice(0, 5), stackB.slice(0, 5));
    assert.notEqual(stackA[5], stackB[5]);
    const del = (id) => fetch(`${backend.apiUrl}/templates/${id}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } });
    assert.equal((await del(a.templateId)).status, 204);
    await until(() => !existsSync(layerDir(stackA[5])), "a's own layer is collected");
    for (const id of stackB) assert.ok(existsSync(layerDir(id)), `b's layer ${id} stays`);
    assert.match(await read(`tpl-b-${uniq}`), /^[0-9a-f]{32}b$/m);
    assert.equal((await del(b.templateId)).status, 204);
    // The earlier test's template still holds the shared layers; delete it too.
    const other = await fetch(`${backend.apiUrl}/templates/tpl-layers-${uniq}`, { headers: { 'X-API-Key': backend.apiKey } });
    if (other.status === 200) assert.equal((await del((await other.json()).templateID)).status, 204);
    await until(() => stackB.slice(1).every((id) => !existsSync(layerDir(id))), 'every step layer is collected');
  });

  test('deleting a template leaves the layers a snapshot of one of its sandboxes stands on', async (t) => {
    if (backend.isolation !== 'full') { t.skip('sealing layers needs full isolation'); return; }
    const c = await Template.build(steps(`${stamp} # c`), `tpl-c-${uniq}`, opts);
    const stackC = stackOf(c.templateId);
    const sandbox = await Sandbox.create(`tpl-c-${uniq}`, { ...opts, timeoutMs: 60_000 });
    const before = (await sandbox.commands.run('cat /opt/app/stamp')).stdout;
    await sandbox.files.write('/home/user/after.txt', 'written after the build');
    const snap = await sandbox.createSnapshot();
    await sandbox.kill();
    const del = await fetch(`${backend.apiUrl}/templates/${c.templateId}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } });
    assert.equal(del.status, 204);
    assert.equal(await Template.exists(`tpl-c-${uniq}`, opts), false);
    // A restart collects at once, before the first request: a sandbox from
    // the snapshot still needs every layer of the template's stack.
    assert.equal((await backend.stop()).code, 0, backend.stderr());
    await start();
    const fromSnap = await Sandbox.create(snap.snapshotId, { ...opts, timeoutMs: 60_000 });
    try {
      assert.equal((await fromSnap.commands.run('cat /opt/app/stamp')).stdout, before);
      assert.equal(await fromSnap.files.read('/home/user/after.txt'), 'written after the build');
      for (const id of stackC) assert.ok(existsSync(layerDir(id)), `the template's layer ${id} stays under the snapshot`);
    } finally {
      await fromSnap.kill();
      await Sandbox.deleteSnapshot(snap.snapshotId, opts);
    }
  });
});
