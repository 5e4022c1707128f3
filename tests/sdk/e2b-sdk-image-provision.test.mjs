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
//   - with-user: base's files as they are: no provisioning step, no layer;
//   - busybox: Alpine-like, a static busybox with adduser and addgroup (built
//     by build.sh from Debian's source: Debian's own busybox has neither) and
//     its applet links, root and nobody, no bash, no sudo: the account is
//     made with adduser -D; commands (bash -l -c, as E2B's envd runs them)
//     run with /bin/sh instead;
//   - scratch: the same tree without /proc, /sys and /dev, as FROM scratch
//     images are: the sandboxes make their mount points in their own layer.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, copyFileSync, symlinkSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBackend } from '../../host/backend.mjs'
import { loadProvider } from '../../host/reference/host.mjs'
import { ociLayout, push, startRegistry, tarOf } from '../../host/registry.mjs'

for (const name of Object.keys(process.env)) if (name.startsWith('E2B_')) delete process.env[name]
const { Sandbox, Template, CommandExitError } = await import('e2b')

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const buildDir = process.env.E2BW_BUILD || path.join(repo, 'build')
const rootfs = path.join(buildDir, 'templates', 'base', 'rootfs')
const busybox = path.join(buildDir, 'busybox', 'busybox')
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

// An Alpine-like tree: busybox, a link per applet where busybox puts it
// (--list-full), root's and nobody's accounts, /tmp; no bash, no sudo;
// /dev, /proc and /sys unless mountPoints is false.
const BUSYBOX_ACCOUNTS = {
  passwd: ['root:x:0:0:root:/root:/bin/sh', 'nobody:x:65534:65534:nobody:/:/sbin/nologin'],
  group: ['root:x:0:root', 'nogroup:x:65534:'],
  shadow: ['root:*::0:::::', 'nobody:!::0:::::'],
}
function busyboxTree(tree, { mountPoints = true } = {}) {
  for (const dir of ['bin', 'sbin', 'usr/bin', 'usr/sbin', 'etc', 'root', 'home', 'tmp', ...(mountPoints ? ['dev', 'proc', 'sys'] : [])]) mkdirSync(path.join(tree, dir), { recursive: true })
  chmodSync(path.join(tree, 'tmp'), 0o1777)
  chmodSync(path.join(tree, 'root'), 0o700)
  copyFileSync(busybox, path.join(tree, 'bin', 'busybox'))
  chmodSync(path.join(tree, 'bin', 'busybox'), 0o755)
  for (const link of execFileSync(busybox, ['--list-full'], { encoding: 'utf8' }).split('\n').filter(Boolean)) symlinkSync('/bin/busybox', path.join(tree, link))
  for (const [file, lines] of Object.entries(BUSYBOX_ACCOUNTS)) writeFileSync(path.join(tree, 'etc', file), `${lines.join('\n')}\n`)
  chmodSync(path.join(tree, 'etc', 'shadow'), 0o640)
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
  // A template of the image whose log shows the provisioning and what it made.
  const provisioned = async (img, name, made) => {
    const r = await build(Template().fromImage(image(img)), name)
    assert.ok(r.logs.includes(PROVISIONING), r.logs.join('\n'))
    assert.ok(r.logs.includes(`Provisioned user: ${made}`), r.logs.join('\n'))
    return r
  }
  const withSandbox = async (name, fn) => {
    const sandbox = await Sandbox.create(name, { ...opts, timeoutMs: 120_000 })
    try {
      return await fn(sandbox)
    } finally {
      await sandbox.kill()
    }
  }
  const inSandbox = (name, command, asRoot = '') => withSandbox(name, async (sandbox) => {
    const out = (await sandbox.commands.run(command).catch((e) => assert.fail(`${command}: ${e.message}\n${e.stdout}${e.stderr}`))).stdout
    return asRoot ? out + (await sandbox.commands.run(asRoot, { user: 'root' })).stdout : out
  })
  const image = (name) => `${registry.host}/e2bw/${name}:v1`

  before(async () => {
    if (!existsSync(busybox)) throw new Error(`${busybox} is missing: ./build.sh test builds it (busybox with adduser, from Debian's source)`)
    work = mkdtempSync(path.join(tmpdir(), 'e2bw-provision-'))
    stateDir = mkdtempSync(path.join(tmpdir(), 'e2bw-provision-state-'))
    registry = await startRegistry()
    const base = tarOf(rootfs, path.join(work, 'base.tar'))
    const layout = async (name, top, { alone = false } = {}) => {
      const layers = alone ? [] : [{ tar: path.join(work, `${name}-base.tar`) }]
      if (!alone) writeFileSync(layers[0].tar, readFileSync(base))
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
    const bb = path.join(work, 'tree-busybox')
    busyboxTree(bb)
    await layout('busybox', bb, { alone: true })
    const scratch = path.join(work, 'tree-scratch')
    busyboxTree(scratch, { mountPoints: false })
    await layout('scratch', scratch, { alone: true })
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
    await provisioned('no-tools', name, 'uid 1001, gid 1001, home /home/user, shell /bin/bash (/etc/passwd and /etc/group written)')
    const out = await inSandbox(name, 'whoami; echo "$HOME"; id -u; id -gn; echo hi > ~/note && cat ~/note; ' +
      'stat -c "%U:%G" /home/user; test -e /etc/sudoers.d/user || echo no-sudoers; grep -c "^other:" /etc/passwd /etc/group',
    'grep "^user:" /etc/shadow /etc/gshadow | cut -d: -f1-3')
    assert.equal(out, 'user\n/home/user\n1001\nuser\nhi\nuser:user\nno-sudoers\n/etc/passwd:1\n/etc/group:1\n/etc/shadow:user:!\n/etc/gshadow:user:!\n')

    // setUser of another missing account on the same image: made the same way.
    const guest = await build(Template().fromImage(image('no-tools')).setUser('guest'), `prov-b-guest-${uniq}`)
    assert.ok(guest.logs.includes(`CACHED ${PROVISIONING}`), guest.logs.join('\n'))
    assert.equal(await inSandbox(`prov-b-guest-${uniq}`, 'whoami; id -u; echo "$HOME"; stat -c %U ~'), 'guest\n1002\n/home/guest\nguest\n')
  })

  test('busybox, no bash, no sudo: user made with adduser -D, commands run with /bin/sh, setUser of another account with adduser -D too', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const name = `prov-d-${uniq}`
    await provisioned('busybox', name, 'uid 1000, gid 1000, home /home/user, shell /bin/sh (adduser -D)')
    await withSandbox(name, async (sandbox) => {
      // busybox's lines: its GECOS, the user a member of its own group
      // (adduser -G runs addgroup USER GROUP), a locked password.
      assert.equal(await sandbox.files.read('/etc/passwd'), `${BUSYBOX_ACCOUNTS.passwd.join('\n')}\nuser:x:1000:1000:Linux User,,,:/home/user:/bin/sh\n`)
      assert.equal(await sandbox.files.read('/etc/group'), `${BUSYBOX_ACCOUNTS.group.join('\n')}\nuser:x:1000:user\n`)
      const shadow = (await sandbox.files.read('/etc/shadow', { user: 'root' })).split('\n')
      assert.deepEqual(shadow.slice(0, 2), BUSYBOX_ACCOUNTS.shadow)
      assert.match(shadow[2], /^user:!:\d+:0:99999:7:::$/)
      assert.equal(await sandbox.files.exists('/etc/sudoers.d'), false, 'no sudo, no drop-in')
      const home = await sandbox.files.getInfo('/home/user')
      // busybox makes it 2755 (envd's mode is the permission bits; its string is Go's, g for setgid)
      assert.deepEqual([home.type, home.owner, home.group, home.mode, home.permissions], ['dir', 'user', 'user', 0o755, 'dgrwxr-xr-x'])
      // the sandbox's user (the template's) writes in its home
      await sandbox.files.write('note', 'hi')
      const note = await sandbox.files.getInfo('/home/user/note')
      assert.deepEqual([note.owner, note.group], ['user', 'user'])

      // A command: the SDK runs it as /bin/bash -l -c, which this image
      // lacks: /bin/sh runs it, with the same arguments.
      assert.equal((await sandbox.commands.run('echo "$0 as $(whoami)"')).stdout, '/bin/sh as user\n')
      const err = await sandbox.commands.run('exit 3').then(() => null, (e) => e)
      assert.ok(err instanceof CommandExitError, String(err))
      assert.equal(err.exitCode, 3, 'exit codes are the command\'s own')
    })

    // setUser of a missing account: busybox's adduser -D with its defaults
    // (the next free uid, a group of its own made by addgroup, root's shell).
    const guest = await build(Template().fromImage(image('busybox')).setUser('guest'), `prov-d-guest-${uniq}`)
    assert.ok(guest.logs.includes(`CACHED ${PROVISIONING}`), guest.logs.join('\n'))
    await withSandbox(`prov-d-guest-${uniq}`, async (other) => {
      assert.match(await other.files.read('/etc/passwd'), /\nguest:x:1001:1001:Linux User,,,:\/home\/guest:\/bin\/sh\n$/)
      assert.match(await other.files.read('/etc/group'), /\nuser:x:1000:user\nguest:x:1001:\n$/)
      const home = await other.files.getInfo('/home/guest')
      assert.deepEqual([home.owner, home.group], ['guest', 'guest'])
      await other.files.write('note', 'as guest')
      assert.equal((await other.files.getInfo('/home/guest/note')).owner, 'guest', 'the sandbox runs as guest')
    })
  })

  test('an image without /proc, /sys, /dev or bash (FROM scratch): its sandboxes make their mount points in their own layer, steps and commands run with /bin/sh', T, async (t) => {
    if (backend.isolation !== 'full') { t.skip('images need full isolation'); return }
    const name = `prov-s-${uniq}`
    const { built, logs } = await build(Template().fromImage(image('scratch')).runCmd('echo "step in $0" > ~/step.txt; test -c /dev/null && ls -d /proc/self/fd'), name)
    assert.ok(logs.includes('Provisioned user: uid 1000, gid 1000, home /home/user, shell /bin/sh (adduser -D)'), logs.join('\n'))
    const stack = stackOf(built.templateId)
    assert.equal(stack.length, 3, 'the image\'s layer, the provisioning\'s, the step\'s')
    const imageLayer = path.join(stateDir, 'layers', stack[0], 'root')
    assert.ok(existsSync(path.join(imageLayer, 'bin', 'busybox')))
    for (const dir of ['proc', 'sys', 'dev']) assert.equal(existsSync(path.join(imageLayer, dir)), false, `/${dir} is never made in the image's layer`)
    // The step's layer holds the mount points its build sandbox made (/dev/null
    // an empty file there): a sandbox still gets devices, its own /proc.
    const out = await inSandbox(name, 'echo "$0"; cat /proc/self/comm; stat -c %F /dev/null /dev/zero /dev/urandom; ' +
      'echo x > /dev/null; cat /dev/null; cat ~/step.txt; ls -d /sys /proc/1')
    assert.equal(out, `/bin/sh\ncat\n${'character special file\n'.repeat(3)}step in /bin/sh\n/proc/1\n/sys\n`)
    // The image alone (no step): the same in the sandbox's own layer.
    await build(Template().fromImage(image('scratch')).setUser('root'), `prov-s-bare-${uniq}`)
    assert.equal(await inSandbox(`prov-s-bare-${uniq}`, 'whoami; test -c /dev/zero && test -d /proc/self && echo mounted'), 'root\nmounted\n')
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
