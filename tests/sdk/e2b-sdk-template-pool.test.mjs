// Built templates in the warm pool (backend/warm/, docs/backend/runtime-and-isolation.md
// "Warm pool"): once a template is created from, the backend keeps
// --warm-pool sandboxes of its stack started ahead, so the next creates only
// claim one, with everything the template gives its sandboxes (files,
// environment, user, workdir). The official e2b SDK against a real backend;
// that a sandbox came from the pool is read from inside it (its init is
// older than the create request) and from /health/details' counts.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startBackend } from '../../host/backend.mjs';
import { until, sleep } from '../../host/wait.mjs';

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name];
const { Sandbox, Template } = await import('e2b');

const T = { timeout: 180_000 };
const uniq = `${process.pid}-${Date.now().toString(36)}`;
let backend;
let opts;
const health = async () => (await (await fetch(`${backend.apiUrl}/health/details`)).json()).warm;
const del = (id) => fetch(`${backend.apiUrl}/templates/${id}`, { method: 'DELETE', headers: { 'X-API-Key': backend.apiKey } });

// Seconds since the sandbox's init started, from inside it.
async function initAge(sandbox) {
  const out = (await sandbox.commands.run("awk '{print $1}' /proc/uptime; awk '{print $22}' /proc/1/stat; getconf CLK_TCK")).stdout;
  const [uptime, start, tick] = out.trim().split('\n').map(Number);
  return uptime - start / tick;
}

// The ids of the layers a template's ready build stands on (its record).
function stackOf(templateId) {
  return JSON.parse(readFileSync(path.join(backend.stateDir, 'records', 'templates', `${templateId}.json`), 'utf8')).builds[0].config.layers;
}

describe('official e2b SDK: built templates in the warm pool', () => {
  before(async () => {
    backend = await startBackend();
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 30000 };
  });

  after(async () => {
    const { code } = await backend.stop();
    assert.equal(code, 0, backend.stderr());
  });

  test('a template created from gets a pool: the next create claims a sandbox with its files, environment, user and workdir', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('the warm pool and layers need full isolation'); return; }
    const name = `tpl-pool-${uniq}`;
    const template = Template().fromTemplate('base')
      .runCmd('mkdir -p /srv/app && echo pooled-layer > /srv/app/marker', { user: 'root' })
      .setEnvs({ POOL_ENV: 'from-the-template' })
      .setUser('root')
      .setWorkdir('/srv/app');
    const built = await Template.build(template, name, opts);
    assert.equal((await health()).templates, 0, 'no pool before a create');
    const first = await Sandbox.create(name, { ...opts, timeoutMs: 60_000 });
    assert.equal((await first.commands.run('cat marker')).stdout, 'pooled-layer\n');
    // Reported as E2B does: the built template's id and name, not the base it stands on.
    const info = await first.getInfo();
    assert.equal(info.templateId, built.templateId);
    assert.equal(info.name, name);
    await until(async () => (await health()).templates === 1 && (await health()).templates_ready === (await health()).size,
      'the template\'s pool fills', 60_000);
    // Not a wait for an event: the pooled inits need an age to tell them by.
    await sleep(1500);
    const taken = (await health()).taken;
    const second = await Sandbox.create(name, { ...opts, timeoutMs: 60_000, envs: { ASKED: 'by-the-create' } });
    assert.equal((await health()).taken, taken + 1, 'claimed from the pool');
    assert.ok(await initAge(second) >= 1.2, 'its init was started before the request');
    const r = await second.commands.run('cat marker; echo "$POOL_ENV $ASKED"; whoami; pwd');
    assert.equal(r.stdout, 'pooled-layer\nfrom-the-template by-the-create\nroot\n/srv/app\n');
    assert.equal((await second.getInfo()).templateId, built.templateId, 'a pooled one too');
    const listed = await Sandbox.list({ ...opts, query: { metadata: {} } }).nextItems();
    assert.deepEqual(listed.filter((x) => x.templateId === built.templateId).map((x) => x.sandboxId).sort(),
      [first.sandboxId, second.sandboxId].sort());
    await first.kill();
    await second.kill();

    // Deleting the template drops its pool: nothing holds its own layer.
    const own = stackOf(built.templateId).at(-1);
    assert.ok(existsSync(path.join(backend.stateDir, 'layers', own)));
    assert.equal((await del(built.templateId)).status, 204);
    await until(async () => (await health()).templates === 0, 'the pool is dropped');
    await until(() => !existsSync(path.join(backend.stateDir, 'layers', own)), 'its layer is collected', 30_000);
  });

  test('a template\'s pool nobody created from for --warm-template-idle seconds is dropped', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('the warm pool and layers need full isolation'); return; }
    const b = await startBackend({ extraArgs: ['--warm-template-idle', '1'] });
    try {
      const o = { ...opts, apiKey: b.apiKey, apiUrl: b.apiUrl, sandboxUrl: b.sandboxUrl };
      const warm = async () => (await (await fetch(`${b.apiUrl}/health/details`)).json()).warm;
      await Template.build(Template().fromTemplate('base').setEnvs({ IDLE: '1' }), `tpl-idle-${uniq}`, o);
      const s = await Sandbox.create(`tpl-idle-${uniq}`, { ...o, timeoutMs: 60_000 });
      await until(async () => (await warm()).templates === 1, 'the template has a pool');
      await until(async () => (await warm()).templates === 0, 'its pool is dropped once idle', 15_000);
      assert.equal((await s.commands.run('echo $IDLE')).stdout, '1\n', 'its sandboxes in use are not');
      await s.kill();
    } finally {
      assert.equal((await b.stop()).code, 0, b.stderr());
    }
  });

  test('a template with a start command gets no pool: its command runs at each create', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('the warm pool and layers need full isolation'); return; }
    const name = `tpl-pool-start-${uniq}`;
    const template = Template().fromTemplate('base')
      .runCmd('echo x > /tmp/x', { user: 'root' })
      .setStartCmd('sleep 3600', 'true');
    const built = await Template.build(template, name, opts);
    const before = (await health()).templates;
    const s = await Sandbox.create(name, { ...opts, timeoutMs: 60_000 });
    // By its command line: the login shell may not have exec'd sleep yet
    // ([3]: the pattern does not match the shell that runs pgrep).
    assert.equal((await s.commands.run("pgrep -f 'sleep [3]600' >/dev/null && echo started")).stdout, 'started\n');
    await sleep(500); // a pool would have been made at the create, synchronously
    assert.equal((await health()).templates, before, 'no pool for it');
    await s.kill();
    assert.equal((await del(built.templateId)).status, 204);
  });
});
