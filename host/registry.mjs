// registry.mjs — a loopback OCI registry for the image tests and benchmarks:
// Debian's docker-registry on 127.0.0.1 (a free port, a temporary storage
// directory, optionally htpasswd auth), filled with images the test makes
// itself (an OCI layout written here, pushed with skopeo). Nothing here
// reaches beyond the machine: every address is 127.0.0.1.
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, createReadStream, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { until } from './wait.mjs'

const MEDIA = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  tar: 'application/vnd.oci.image.layer.v1.tar',
  gzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  zstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
}

const live = new Set()
process.on('exit', () => { for (const child of live) child.kill('SIGKILL') })

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`)
  return r.stdout
}

async function sha256File(file) {
  const h = createHash('sha256')
  for await (const chunk of createReadStream(file)) h.update(chunk)
  return h.digest('hex')
}

export async function freePort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts docker-registry on 127.0.0.1. { host: '127.0.0.1:PORT', storage, log(), requests(), stop() }.
 *  auth: { username, password } makes it ask for them (htpasswd, bcrypt). */
export async function startRegistry({ auth } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'e2bw-registry-'))
  const storage = path.join(dir, 'storage')
  mkdirSync(storage)
  let authConf = ''
  if (auth) {
    // bcrypt, as the registry requires; the password goes on htpasswd's stdin.
    run('htpasswd', ['-iBc', path.join(dir, 'htpasswd'), auth.username], { input: auth.password })
    authConf = `auth:\n  htpasswd:\n    realm: e2bw-test\n    path: ${path.join(dir, 'htpasswd')}\n`
  }
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    const host = `127.0.0.1:${port}`
    writeFileSync(path.join(dir, 'config.yml'), `version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\n` +
      `storage:\n  filesystem:\n    rootdirectory: ${storage}\n  delete:\n    enabled: true\n` +
      `http:\n  addr: ${host}\n${authConf}`)
    // Its log goes to a file, not a pipe: push() blocks this process in
    // spawnSync, and a registry writing into a full pipe nobody reads
    // would stall the push it is logging (an image of a few dozen layers).
    const logFile = path.join(dir, `registry-${attempt}.log`)
    const out = openSync(logFile, 'a')
    const child = spawn('/usr/bin/docker-registry', ['serve', path.join(dir, 'config.yml')], { stdio: ['ignore', out, out] })
    closeSync(out)
    live.add(child)
    const readLog = () => { try { return readFileSync(logFile, 'utf8') } catch { return '' } }
    let exited = false
    child.on('exit', () => { exited = true; live.delete(child) })
    const up = await until(async () => {
      if (exited) return 'exited'
      try { return (await fetch(`http://${host}/v2/`)).status ? 'up' : false } catch { return false }
    }, () => `docker-registry on ${host} to answer:\n${readLog()}`, 20000, 50)
    if (up === 'up') {
      return {
        host,
        storage,
        log: readLog,
        /** The request lines of the access log: "GET /v2/x/blobs/sha256:..." */
        requests: () => [...readLog().matchAll(/"(GET|HEAD|PUT|POST|PATCH|DELETE) ([^ "]+) HTTP/g)].map((m) => `${m[1]} ${m[2]}`),
        async stop() {
          if (!exited) {
            child.kill('SIGTERM')
            await until(() => exited, 'docker-registry to exit', 10000)
          }
          rmSync(dir, { recursive: true, force: true })
        },
      }
    }
    if (attempt >= 3) throw new Error(`docker-registry would not start:\n${readLog()}`)
  }
}

/** A directory tree as an uncompressed layer tar: files owned by 0:0 unless
 *  the tree says otherwise (tar --numeric-owner keeps the owners as they are). */
export function tarOf(dir, out, { ownerRoot = false } = {}) {
  run('tar', ['--numeric-owner', '--sort=name', '--xattrs', '--xattrs-include=security.capability', ...(ownerRoot ? ['--owner=0', '--group=0'] : []), '-C', dir, '-cf', out, '.'])
  return out
}

/** An OCI image layout in dir (made here) of the layers (tar files, each
 *  { tar, compress: 'none' | 'zstd' | 'gzip' }) and a config; the tar files
 *  are moved into the layout. Returns { dir, diffIds, configDigest, layerDigests }. */
export async function ociLayout(dir, { layers, env = [], workdir = '', architecture = 'amd64', tag = 'latest' }) {
  const blobs = path.join(dir, 'blobs', 'sha256')
  mkdirSync(blobs, { recursive: true })
  const put = async (file) => {
    const hex = await sha256File(file)
    renameSync(file, path.join(blobs, hex))
    return { digest: `sha256:${hex}`, size: statSync(path.join(blobs, hex)).size }
  }
  const putJson = async (obj) => {
    const tmp = path.join(dir, 'tmp.json')
    writeFileSync(tmp, JSON.stringify(obj))
    return put(tmp)
  }
  const diffIds = []
  const descs = []
  for (const { tar, compress = 'none' } of layers) {
    diffIds.push(`sha256:${await sha256File(tar)}`)
    let blob = tar
    if (compress === 'zstd') { run('zstd', ['-q', '-3', '--rm', tar, '-o', `${tar}.zst`]); blob = `${tar}.zst` }
    if (compress === 'gzip') { run('gzip', ['-1', '-n', tar]); blob = `${tar}.gz` }
    descs.push({ mediaType: MEDIA[compress === 'none' ? 'tar' : compress], ...(await put(blob)) })
  }
  const config = await putJson({ architecture, os: 'linux', config: { Env: env, WorkingDir: workdir }, rootfs: { type: 'layers', diff_ids: diffIds } })
  const manifest = await putJson({ schemaVersion: 2, mediaType: MEDIA.manifest, config: { mediaType: MEDIA.config, ...config }, layers: descs })
  writeFileSync(path.join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }))
  writeFileSync(path.join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: MEDIA.manifest, ...manifest, annotations: { 'org.opencontainers.image.ref.name': tag } }] }))
  return { dir, diffIds, configDigest: config.digest, layerDigests: descs.map((d) => d.digest) }
}

/** Pushes an OCI layout (or any skopeo source) to registry/name:tag. creds:
 *  { username, password } through an auth file (never on a command line). */
export function push(source, registry, name, { creds, compress, srcCreds } = {}) {
  const args = ['--insecure-policy', 'copy', '--quiet', '--dest-tls-verify=false']
  let authDir
  if (creds) {
    authDir = mkdtempSync(path.join(tmpdir(), 'e2bw-auth-'))
    const auth = Buffer.from(`${creds.username}:${creds.password}`).toString('base64')
    writeFileSync(path.join(authDir, 'auth.json'), JSON.stringify({ auths: { [registry.host]: { auth } } }), { mode: 0o600 })
    args.push('--dest-authfile', path.join(authDir, 'auth.json'))
  } else {
    args.push('--dest-no-creds')
  }
  if (compress) args.push('--dest-compress-format', compress)
  if (source.startsWith('docker://')) args.push('--src-tls-verify=false', ...(srcCreds ? [] : ['--src-no-creds']))
  try {
    run('skopeo', [...args, source, `docker://${registry.host}/${name}`])
  } finally {
    if (authDir) rmSync(authDir, { recursive: true, force: true })
  }
}

/** The registry's stored file of a blob (to tamper with it). */
export function blobFile(registry, digest) {
  const hex = digest.replace(/^sha256:/, '')
  return path.join(registry.storage, 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data')
}

/** The digests of an image's layers as the registry serves them. */
export async function layerDigests(registry, name, tag) {
  const res = await fetch(`http://${registry.host}/v2/${name}/manifests/${tag}`, { headers: { Accept: `${MEDIA.manifest}, application/vnd.docker.distribution.manifest.v2+json` } })
  const m = await res.json()
  return m.layers.map((l) => ({ digest: l.digest, mediaType: l.mediaType }))
}

