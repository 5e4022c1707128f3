// bench/state.mjs --checkpoint: pause with a checkpoint (docs/backend/state.md,
// "Pause") where CRIU works (the cgroup v2 guest, tests/guest/), each figure
// against a create from `base` in the same run, so that a slow machine (the
// guest's TCG) still gives ratios that mean something:
//   create         — POST /v2/sandboxes until its 201: median
//   idle           — pause (until its 204, pause.kind checkpoint) and resume
//                    (until its 201) of a sandbox running nothing but a sleep
//   loaded         — the same, of a sandbox whose process holds --mib MiB of
//                    random bytes (resident, checked after the last resume)
//   fork           — fork of a running sandbox (a sleep and a shell counting
//                    in memory) with its processes (until its 201, fork.kind
//                    checkpoint; the fork's counter checked to count on)
//   paused memory  — the machine's used memory (MemTotal - MemAvailable) and
//                    the backend's RSS with --paused sandboxes running a sleep,
//                    then with all of them paused, against none (--drop-caches:
//                    the page cache dropped before each reading); the images'
//                    size on disk
// --only fork runs the creates and the forks alone.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBackend } from '../../host/backend.mjs'
import { envdClient, dataOf } from '../../host/connect.mjs'

const round = (x) => Math.round(x * 100) / 100
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const meminfo = () => Object.fromEntries(readFileSync('/proc/meminfo', 'utf8').trim().split('\n')
  .map((l) => l.split(/:\s+/)).map(([k, v]) => [k, Number.parseInt(v, 10) / 1024]))
// With dropCaches (a machine of the bench's own, as the guest is), the page
// cache is dropped first, so that what is left is what the sandboxes hold.
let dropCaches = false
const usedMiB = () => {
  if (dropCaches) { execFileSync('sync'); writeFileSync('/proc/sys/vm/drop_caches', '3\n') }
  const m = meminfo()
  return m.MemTotal - m.MemAvailable
}
const rssMiB = (pid) => {
  try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024 } catch { return 0 }
}

export async function checkpointBench({ runs, paused, mib, json, drop, only }) {
  dropCaches = drop
  const dir = mkdtempSync(path.join(tmpdir(), 'e2b-bench-ckpt-'))
  const apiKey = `e2b_local_${randomBytes(16).toString('hex')}`
  const backend = await startBackend({ apiKey, stateDir: dir })
  const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' }
  const call = async (method, p, body, want) => {
    const res = await fetch(`${backend.apiUrl}${p}`, { method, headers, body: body ? JSON.stringify(body) : undefined })
    const text = await res.text()
    if (res.status !== want) throw new Error(`${method} ${p}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : undefined
  }
  const timed = async (fn) => { const t0 = performance.now(); await fn(); return performance.now() - t0 }
  const create = () => call('POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600 }, 201)
  const kill = (id) => call('DELETE', `/sandboxes/${id}`, undefined, 204)
  const run = async (sb, script) => {
    const envd = envdClient({ sandboxUrl: backend.sandboxUrl, sandboxId: sb.sandboxID, token: sb.envdAccessToken })
    const r = await envd.stream('process.Process/Start', { process: { cmd: '/bin/bash', args: ['-c', script] } })
    return dataOf(r.messages).stdout.toString().trim()
  }
  const pause = async (sb) => {
    await call('POST', `/sandboxes/${sb.sandboxID}/pause`, undefined, 204)
    const kind = (await call('GET', `/sandboxes/${sb.sandboxID}`, undefined, 200)).pause
    if (kind?.kind !== 'checkpoint') throw new Error(`pause: ${JSON.stringify(kind)}`)
  }
  const resume = (sb) => call('POST', `/sandboxes/${sb.sandboxID}/resume`, { timeout: 3600 }, 201)
  const SLEEPER = 'setsid sleep infinity </dev/null >/dev/null 2>&1 & echo started'
  try {
    const health = await call('GET', '/health/details', undefined, 200)
    if (!health.checkpoint?.available) throw new Error(`no checkpoints here: ${health.checkpoint?.reason}`)
    const creates = []
    for (let i = 0; i < runs; i++) {
      let sb
      creates.push(await timed(async () => { sb = await create() }))
      await kill(sb.sandboxID)
    }
    const cycles = async (sb, check) => {
      const pauses = [], resumes = []
      for (let i = 0; i < runs; i++) {
        pauses.push(await timed(() => pause(sb)))
        resumes.push(await timed(() => resume(sb)))
        await check()
      }
      return { pause: round(median(pauses)), resume: round(median(resumes)) }
    }
    const source = await create()
    await run(source, `${SLEEPER}; setsid bash -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/n; sleep 0.2; done' </dev/null >/dev/null 2>&1 &`)
    const forks = []
    for (let i = 0; i < runs; i++) {
      let made
      forks.push(await timed(async () => { made = (await call('POST', `/sandboxes/${source.sandboxID}/fork`, { count: 1, timeout: 3600 }, 201))[0].sandbox }))
      if (made?.fork?.kind !== 'checkpoint') throw new Error(`fork: ${JSON.stringify(made?.fork)}`)
      const n0 = Number(await run(made, 'cat /tmp/n'))
      await sleep(1000)
      const n1 = Number(await run(made, 'cat /tmp/n'))
      if (!(n1 > n0)) throw new Error(`the fork's counter does not count on (${n0} then ${n1})`)
      await kill(made.sandboxID)
    }
    await kill(source.sandboxID)
    const forkFigure = round(median(forks))
    if (only === 'fork') {
      const create50 = median(creates)
      const result = { runs, createMs: round(create50), fork: { ms: forkFigure, overCreate: round(forkFigure / create50) } }
      if (json) console.log(JSON.stringify(result))
      else console.log(`create          median ${result.createMs} ms (${runs} runs)\nfork            ${forkFigure} ms = ${result.fork.overCreate} x create (with its processes)`)
      return
    }

    const idle = await create()
    await run(idle, SLEEPER)
    const idleFigures = await cycles(idle, async () => {})
    await kill(idle.sandboxID)

    const loaded = await create()
    const holder = `import os, time; b = bytearray(os.urandom(1 << 20)) * ${mib}; open('/tmp/held', 'w').write(str(os.getpid())); time.sleep(1e9)`
    await run(loaded, `setsid python3 -c "${holder}" </dev/null >/dev/null 2>&1 & echo started`)
    let nsPid = ''
    for (let i = 0; i < 600 && !nsPid; i++) { nsPid = await run(loaded, 'cat /tmp/held 2>/dev/null'); if (!nsPid) await sleep(500) }
    const held = () => rssMiB(backend.hostPid(loaded.sandboxID, Number(nsPid)))
    if (held() < mib) throw new Error(`the holder's RSS is ${held()} MiB, not ${mib}`)
    const loadedFigures = await cycles(loaded, async () => {
      if (held() < mib) throw new Error(`after a resume the holder's RSS is ${held()} MiB, not ${mib}`)
    })
    await kill(loaded.sandboxID)

    const before = usedMiB()
    const backendBefore = rssMiB(backend.pid)
    const many = []
    for (let i = 0; i < paused; i++) {
      const sb = await create()
      await run(sb, SLEEPER)
      many.push(sb)
    }
    const running = usedMiB() - before
    for (const sb of many) await pause(sb)
    await sleep(1000)
    const pausedUsed = usedMiB() - before
    const left = many.flatMap((sb) => backend.hostPids(sb.sandboxID))
    if (left.length) throw new Error(`paused sandboxes still have ${left.length} processes`)
    const images = Number(execFileSync('du', ['-sm', '--', ...many.map((sb) => path.join(dir, 'sandboxes', sb.sandboxID, 'checkpoint'))], { encoding: 'utf8' })
      .trim().split('\n').reduce((n, l) => n + Number(l.split('\t')[0]), 0))
    const backendGrowth = rssMiB(backend.pid) - backendBefore
    for (const sb of many) await kill(sb.sandboxID)

    const create50 = median(creates)
    const result = {
      runs, mib,
      createMs: round(create50),
      idle: { ...idleFigures, pauseOverCreate: round(idleFigures.pause / create50), resumeOverCreate: round(idleFigures.resume / create50) },
      loaded: { ...loadedFigures, pauseOverCreate: round(loadedFigures.pause / create50), resumeOverCreate: round(loadedFigures.resume / create50) },
      fork: { ms: forkFigure, overCreate: round(forkFigure / create50) },
      paused: { count: paused, runningMiB: round(running), pausedMiB: round(pausedUsed), backendRssGrowthMiB: round(backendGrowth), imagesOnDiskMiB: images },
    }
    if (json) console.log(JSON.stringify(result))
    else {
      console.log(`create          median ${result.createMs} ms (${runs} runs)`)
      for (const [name, f] of [['idle', result.idle], [`${mib} MiB`, result.loaded]]) {
        console.log(`${name.padEnd(15)} pause ${f.pause} ms = ${f.pauseOverCreate} x create, resume ${f.resume} ms = ${f.resumeOverCreate} x create`)
      }
      console.log(`fork            ${result.fork.ms} ms = ${result.fork.overCreate} x create (with its processes)`)
      const p = result.paused
      console.log(`${paused} sandboxes    running: ${p.runningMiB} MiB used; paused: ${p.pausedMiB} MiB used (backend RSS +${p.backendRssGrowthMiB} MiB), images ${p.imagesOnDiskMiB} MiB on disk`)
    }
  } finally {
    await backend.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
