// The cgroup v2 guest from the command line (docs/testing.md, "The cgroup v2 guest"):
//
//   tests/guest/run [--as root|user] [--timeout SECONDS] [--out DIR] [--mem MiB] [--cpus N]
//                   [--env NAME=VALUE]... [--cwd DIR] [--keep] [--times] -- COMMAND [ARG]...
//
// boots the guest, runs COMMAND there (in the repository, or --cwd), prints its
// stdout and stderr as they come, copies its $E2BW_GUEST_OUT to --out, and exits
// with its exit status: 124 when the guest did not finish within --timeout (600),
// 125 when the guest could not run it (a boot stuck before the command, three
// times). --times prints when QEMU and the command start, and boot, command and
// shutdown times, on stderr.
import { parseArgs } from 'node:util';
import { runInGuest } from './guest.mjs';

function usage(message) {
  process.stderr.write(`tests/guest/run: ${message}\nusage: tests/guest/run [--as root|user] [--timeout SECONDS] [--out DIR] [--mem MiB] [--cpus N] [--env NAME=VALUE]... [--cwd DIR] [--keep] [--times] -- COMMAND [ARG]...\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      as: { type: 'string', default: 'root' }, timeout: { type: 'string', default: '600' }, out: { type: 'string' },
      mem: { type: 'string', default: '3072' }, cpus: { type: 'string', default: '2' }, env: { type: 'string', multiple: true, default: [] },
      cwd: { type: 'string' }, keep: { type: 'boolean', default: false }, times: { type: 'boolean', default: false },
    },
  });
} catch (err) {
  usage(err.message);
}
const { values: o, positionals: command } = parsed;
if (command.length === 0) usage('no command');
if (o.as !== 'root' && o.as !== 'user') usage(`--as is root or user, not '${o.as}'`);
const positive = (name, text) => (/^[1-9][0-9]*$/.test(text) ? Number(text) : usage(`--${name} must be a positive integer`));
const env = {};
for (const pair of o.env) {
  const eq = pair.indexOf('=');
  if (eq <= 0) usage(`--env takes NAME=VALUE, not '${pair}'`);
  env[pair.slice(0, eq)] = pair.slice(eq + 1);
}

// Ctrl-C or a kill of this process ends the guest too (guest.mjs's exit handler).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[signal]));
const r = await runInGuest({
  command, as: o.as, env, cwd: o.cwd, output: process.stdout, outDir: o.out, keep: o.keep, progress: o.times ? process.stderr : undefined,
  timeoutMs: positive('timeout', o.timeout) * 1000, memoryMiB: positive('mem', o.mem), cpus: positive('cpus', o.cpus),
});
if (o.times) process.stderr.write(`guest times (ms): ${JSON.stringify(r.times)}\n`);
if (r.status === null) {
  process.stderr.write(`tests/guest/run: ${r.error}\nthe guest's console (its end; whole in ${r.runDir}/console.log):\n${r.console}\n`);
  process.exit(r.timedOut ? 124 : 125);
}
process.exit(r.status);
