// A probe, not a test: what CRIU does with a real sandbox of the backend in
// the cgroup v2 guest. Starts a backend (full isolation), a sandbox with a
// counter in memory, dumps the sandbox's tree from its init
// (criu dump, the init's two socket pairs named as external), and restores it
// with new socket pairs handed in (--inherit-fd). Prints each step and the end
// of CRIU's logs; the logs are copied to $E2BW_GUEST_OUT.
//   tests/guest/run --timeout 500 --out /tmp/out -- node tests/guest/criu-sandbox-probe.mjs [criu restore options...]
import { startBackend } from '../../host/backend.mjs';
import { sandbox } from '../cgroup2/cgroup2-lib.mjs';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';

const sh = (c) => { const r = spawnSync('bash', ['-c', c], { encoding: 'utf8' }); return `${r.stdout}${r.stderr} [rc=${r.status}]`; };
const out = process.env.E2BW_GUEST_OUT || '/tmp';
const img = '/tmp/criu-probe';
const b = await startBackend({});
const sb = await sandbox(b);
let r = await sb.run('setsid sh -c \'i=0; while :; do i=$((i+1)); echo $i > /tmp/c; sleep 0.5; done\' </dev/null >/dev/null 2>&1 & sleep 1; cat /tmp/c');
console.log('counter before', r.out.trim());
const children = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
  try { return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(b.pid); } catch { return false; }
});
const init = children.find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('e2b-sandbox-ini'));
const inodes = readdirSync(`/proc/${init}/fd`).map((f) => readlinkSync(`/proc/${init}/fd/${f}`))
  .filter((l) => l.startsWith('socket:')).map((l) => /\d+/.exec(l)[0]);
console.log('init', init, 'socket inodes', inodes);
mkdirSync(img, { recursive: true });
let t0 = Date.now();
const inBackend = `nsenter -t ${b.pid} -m --`; // its mounts: the sandbox's root is mounted there
const root = `${b.stateDir}/sandboxes/${sb.id}/rootfs`;
console.log(sh(`${inBackend} criu dump -t ${init} -D ${img} -v4 -o ${img}/dump.log --ext-unix-sk ${inodes.map((i) => `--external 'unix[${i}]'`).join(' ')} --manage-cgroups=ignore; echo dump rc=$?; grep Error ${img}/dump.log | tail -5; cp ${img}/dump.log ${out}/; du -sh ${img}`));
console.log('dump ms', Date.now() - t0);
writeFileSync(`${img}/restore.py`, `
import os, socket, subprocess, sys, json
args = ['criu', 'restore', '-D', '${img}', '-v4', '-o', '${img}/restore.log', '--ext-unix-sk', '--manage-cgroups=ignore', '-d', '--pidfile', '${img}/pid', '--root', '${root}'] + json.loads(sys.argv[1])
keep = []
for ino in json.loads(sys.argv[2]):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    keep += [a, b]
    os.set_inheritable(b.fileno(), True)
    args += ['--inherit-fd', 'fd[%d]:socket:[%s]' % (b.fileno(), ino)]
print('restore rc', subprocess.call(args, close_fds=False), flush=True)
`);
t0 = Date.now();
console.log(sh(`${inBackend} python3 ${img}/restore.py '${JSON.stringify(process.argv.slice(2))}' '${JSON.stringify(inodes)}'; grep -e Error -e BUG ${img}/restore.log | tail -5; cp ${img}/restore.log ${out}/; p=$(cat ${img}/pid 2>/dev/null) && { ${inBackend} cat /proc/$p/root/tmp/c; sleep 1; ${inBackend} cat /proc/$p/root/tmp/c; ps -o pid,ppid,args --ppid $p; }`));
console.log('restore ms', Date.now() - t0);
await b.stop().catch((e) => console.log('stop:', e.message));
process.exit(0);
