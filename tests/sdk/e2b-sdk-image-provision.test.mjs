// E2B's `user` provisioned in images that lack it (docs/templates.md,
// "Images from registries", the template's configuration), through the
// official e2b SDK's Template().fromImage and the plugin's templates.build
// with a Dockerfile FROM. The images are made here from the base template's
// root filesystem, with `user` taken out of its account files, and pushed to
// a docker-registry on 127.0.0.1:
//   - no-user: useradd and sudo as Debian has them: the account is made with
//     useradd, uid 1000, sudo without a password;
//   - no-tools: no useradd, no adduser, no sudo, and uid and gid 1000 taken
//     by another account: the account files are written directly, uid 1001,
//     no sudoers drop-in;
//   - with-user: base's files as they are: no provisioning step, no layer.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBackend } from '../../host/backend.mjs'
import { loadProvider } from '../../host/reference/host.mjs'
import { ociLayout, push, startRegistry, tarOf } from '../lib/registry.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox, Template } = await import('e2b')

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const rootfs = path.join(process.env.E2BW_BUILD || path.join(repo, 'build'), 'templates', 'base', 'rootfs')
const T = { timeout: 300_000 }
const PROVISIONING = 'Provisioning: useradd --create-home user'

// base's account files with `user` left out (rename: its lines under that name instead).
function accountFiles(tree, rename) {
  mkdirSync(path.join(tree, 'etc'), { recursive: true })
  for (const [file, mode] of [['passwd', 0o644], ['group', 0o644], ['shadow', 0o640], ['gshadow', 0o640]]) {
    const lines = readFileSync(path.join(rootfs, 'etc', file), 'utf8').split('\n').filter(Boolean)
    const kept = lines.flatMap((l) => !l.startsWith('user:') ? [l] : rename ? [l.replace(/^user:/, `${rename}:`).replace('/home/user', `/home/${rename}`)] : [])
    writeFileSync(path.join(tree, 'etc', file), `${kept.join('\n')}\n`)
    chmodSync(path.join(tree, 'etc', file), mode)
  }
}
// Overlay whiteouts (.wh.NAME) of paths, in the layer tree.
function whiteouts(tree, paths) {
  for (const p of paths) {
    mkdirSync(path.join(tree, path.dirname(p)), { recursive: true })
    writeFileSync(path.join(tree, path.dirname(p), `.wh.${path.basename(p)}`), '')
  }
}

describe('official e2b SDK and the plugin: images without E2B\'s user get it', () => {
  let backend, opts, stateDir, work, registry
  const uniq = `${process.pid}-${Date.now().toString(36)}`
  const stackOf = (templateId) => JSON.parse(readFileSync(path.join(stateDir, 'records', 'templates', `${templateId}.json`), 'utf8')).builds[0].config.layers
  const build = async (template, name) => {
    const logs = []
    const built = await Template.build(template, name, { ...opts, onBuildLogs: (e) => logs.push(e.message) })
    return { built, logs }
  }
  const inSandbox = async (name, command, asRoot = '') => {
    const sandbox = await Sandbox.create(name, { ...opts, timeoutMs: 120_000 })
    try {
      const out = (await sandbox.commands.run(command)).stdout
      return asRoot ? out + (await sandbox.commands.run(asRoot, { user: 'root' })).stdout : out
    } finally {
      await sandbox.kill()
    }
  }
  const image = (name) => `${registry.host}/e2bw/${name}:v1`

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'e2bw-provision-'))
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-provision-state-'))
    registry = await startRegistry()
    const base = tarOf(rootfs, path.join(work, 'base.tar'))
    const layout = async (name, top) => {
      const layers = [{ tar: path.join(work, `${name}-base.tar`) }]
      writeFileSync(layers[0].tar, readFileSync(base))
      if (top) layers.push({ tar: tarOf(top, path.join(work, `${name}-top.tar`), { ownerRoot: true }), compress: 'gzip' })
      const oci = await ociLayout(path.join(work, `oci-${name}`), { layers, env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'] })
      push(`oci:${oci.dir}:latest`, registry, `e2bw/${name}:v1`)
      return oci
    }
    // mkdirSync, not mkdtemp: the tree's own directories are 0755 in the layer.
    const noUser = path.join(work, 'tree-no-user')
    accountFiles(noUser)
    whiteouts(noUser, ['home/user', 'etc/sudoers.d/user'])
    await layout('no-user', noUser)
    const noTools = path.join(work, 'tree-no-tools')
    accountFiles(noTools, 'other')
    whiteouts(noTools, ['home/user', 'usr/sbin/useradd', 'usr/sbin/groupadd', 'usr/sbin/adduser', 'usr/sbin/addgroup',
      'etc/sudoers', 'etc/sudoers.d', 'usr/bin/sudo'])
    await layout('no-tools', noTools)
    await layout('with-user', null)
    backend = await startBackend({ stateDir })
    opts = { apiKey: backend.apiKey, apiUrl: backend.apiUrl, sandboxUrl: backend.sandboxUrl, debug: false, requestTimeoutMs: 60_000 }
  }, T)

  after(async () => {
    const { code } = await backend.stop()
    await registry.stop()
    rmSync(work, { recursive: true, force: true })
    rmSync(stateDir, { recursive: true, force: true })
    // Last: a failed assertion must not leave the registry running, which
    // would keep this file from ever ending.
    assert.equal(code, 0, backend.stderr())
  })

  test('useradd and sudo in the image: user, uid 1000, its home, sudo; a rebuild takes it from the cache; setUser(root) wins', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const name = `prov-a-${uniq}`
    const { built, logs } = await build(Template().fromImage(image('no-user')).runCmd('echo "step as $(whoami)"'), name)
    assert.ok(logs.includes(PROVISIONING), logs.join('\n'))
    assert.ok(logs.includes('Provisioned user: uid 1000, gid 1000, home /home/user, shell /bin/bash, sudo without a password (useradd)'), logs.join('\n'))
    assert.ok(logs.includes('step as user'), 'the steps after it run as user')
    const stack = stackOf(built.templateId)
    assert.equal(stack.length, 4, 'the image\'s two layers, the provisioning\'s, the step\'s')
    const out = await inSandbox(name, 'whoami; echo "$HOME"; id -u; pwd; touch ~/written && stat -c "%U %a" ~ ~/written; ' +
      'sudo -n true && echo sudo-ok; sudo -n whoami; stat -c "%U %a" /etc/sudoers.d/user; getent passwd user | cut -d: -f7')
    assert.equal(out, 'user\n/home/user\n1000\n/home/user\nuser 755\nuser 644\nsudo-ok\nroot\nroot 440\n/bin/bash\n')

    // The same image again, in another template: the provisioning's layer
    // is reused (nothing runs), and setUser('root') after it wins.
    const again = await build(Template().fromImage(image('no-user')).setUser('root'), `prov-a-root-${uniq}`)
    assert.ok(again.logs.includes(`CACHED ${PROVISIONING}`), again.logs.join('\n'))
    assert.ok(!again.logs.some((l) => l.startsWith('Provisioned user')), 'the provisioning did not run again')
    assert.deepEqual(stackOf(again.built.templateId), stack.slice(0, 3))
    assert.equal(await inSandbox(`prov-a-root-${uniq}`, 'whoami; test -d /home/user && echo home-kept'), 'root\nhome-kept\n')
  })

  test('no useradd, no adduser, no sudo, uid 1000 taken: the account files are written, the other account stays; setUser of another account too', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const name = `prov-b-${uniq}`
    const { logs } = await build(Template().fromImage(image('no-tools')), name)
    assert.ok(logs.includes(PROVISIONING), logs.join('\n'))
    assert.ok(logs.includes('Provisioned user: uid 1001, gid 1001, home /home/user, shell /bin/bash (/etc/passwd and /etc/group written)'), logs.join('\n'))
    const out = await inSandbox(name, 'whoami; echo "$HOME"; id -u; id -gn; echo hi > ~/note && cat ~/note; ' +
      'stat -c "%U:%G" /home/user; test -e /etc/sudoers.d/user || echo no-sudoers; grep -c "^other:" /etc/passwd /etc/group',
    'grep "^user:" /etc/shadow /etc/gshadow | cut -d: -f1-3')
    assert.equal(out, 'user\n/home/user\n1001\nuser\nhi\nuser:user\nno-sudoers\n/etc/passwd:1\n/etc/group:1\n/etc/shadow:user:!\n/etc/gshadow:user:!\n')

    // setUser of another missing account on the same image: made the same way.
    const guest = await build(Template().fromImage(image('no-tools')).setUser('guest'), `prov-b-guest-${uniq}`)
    assert.ok(guest.logs.includes(`CACHED ${PROVISIONING}`), guest.logs.join('\n'))
    assert.equal(await inSandbox(`prov-b-guest-${uniq}`, 'whoami; id -u; echo "$HOME"; stat -c %U ~'), 'guest\n1002\n/home/guest\nguest\n')
  })

  test('an image that has user gets no provisioning step and no layer', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const name = `prov-c-${uniq}`
    const { built, logs } = await build(Template().fromImage(image('with-user')), name)
    assert.ok(!logs.some((l) => l.includes('Provisioning')), logs.join('\n'))
    assert.equal(stackOf(built.templateId).length, 1, 'the image\'s layer only')
    assert.equal(await inSandbox(name, 'whoami; id -u'), 'user\n1000\n')
  })

  test('plugin: templates.build with a Dockerfile FROM an image without user, then a sandbox of it', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const infra = await loadProvider(repo, { env: { E2B_API_KEY: backend.apiKey, E2B_API_URL: backend.apiUrl, E2B_SANDBOX_URL: backend.sandboxUrl } })
    const built = await infra.call('templates.build', { name: `prov-plugin-${uniq}`, dockerfile: `FROM ${image('no-tools')}\nRUN whoami > /opt/built-by\n` })
    assert.equal(built.status, 'ready')
    const { sandbox_id } = await infra.call('sandbox.create', { template: `prov-plugin-${uniq}`, timeout: 120 })
    try {
      const r = await infra.call('exec.run', { sandbox_id, command: 'cat /opt/built-by; whoami; echo "$HOME"' })
      // The Dockerfile's steps run as root (the SDK's USER root first), the sandbox as user (its USER user last).
      assert.equal(r.stdout, 'root\nuser\n/home/user\n')
    } finally {
      await infra.call('sandbox.kill', { sandbox_id })
    }
    await infra.call('templates.delete', { template_id: built.template_id })
  })
})
