// Fork of a running sandbox with its processes (docs/backend/state.md,
// "Snapshots and fork"): where CRIU works (the guest), {count: 2} gives two
// forks that carry their source's processes and memory into new namespaces:
// the shell's token and counter (held in memory only) and the Python
// server's token answer the same in each fork, which counts on from where
// its source stood, while the source and the other fork run and count on by
// themselves. Each fork has its own address and its own pid, uts (hostname)
// and network namespaces; every server answers through the port proxy.
// Skipped with the reason where `criu check` fails; there a fork copies the
// files only (tests/sdk/e2b-sdk-pause.test.mjs checks its answer's kind).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBackend, api } from '../../host/backend.mjs';
import { envdClient } from '../../host/connect.mjs';
import { skip, forceRun, sleep, run, parse, READ, counting, check } from './checkpoint-lib.mjs';

// The sandbox's address on its veth, its hostname and its namespaces' inodes.
const IDENTITY = "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1; hostname; readlink /proc/self/ns/pid /proc/self/ns/uts /proc/self/ns/net";

async function identity(b, sb) {
  const [address, hostname, ...ns] = (await run(b, sb, IDENTITY)).trim().split('\n');
  return { address, hostname, ns };
}

// What the Python server on port 8080 of sandbox id answers through the
// backend's port proxy (as a client of the sandbox reaches its ports).
async function served(b, id) {
  const r = await fetch(`${b.sandboxUrl}/`, { headers: { 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': '8080' }, signal: AbortSignal.timeout(30_000) });
  assert.equal(r.status, 200, `port 8080 of ${id}`);
  return (await r.text()).trim();
}

test('a fork of a running sandbox carries its processes and memory into new namespaces; the source runs on', { skip: forceRun ? false : skip, timeout: 600_000 }, async () => {
  const b = await startBackend({ apiKey: 'e2b_checkpoint_test_key' });
  try {
    const src = await counting(b);
    const before = await identity(b, src);
    assert.match(before.address, /^\d+\.\d+\.\d+\.\d+$/, JSON.stringify(before));
    const r = await api(b, 'POST', `/sandboxes/${src.id}/fork`, { count: 2, timeout: 900 });
    assert.equal(r.status, 201, JSON.stringify(r.json) + b.stderr());
    assert.equal(r.json.length, 2, JSON.stringify(r.json));
    const forks = r.json.map(({ sandbox: made }) => {
      assert.ok(made, JSON.stringify(r.json));
      assert.deepEqual(made.fork, { kind: 'checkpoint' }, `the fork carries the processes: ${JSON.stringify(made.fork)}\n${b.stderr()}`);
      const fork = { id: made.sandboxID, token: made.envdAccessToken, first: src.first };
      fork.envd = envdClient({ sandboxUrl: b.sandboxUrl, sandboxId: fork.id, token: fork.token });
      return fork;
    });

    // The same processes (pids in its own pid namespace), memory and server.
    for (const [i, fork] of forks.entries()) {
      await check(b, fork, `fork ${i}`);
      const f1 = parse(await run(b, fork, READ));
      await sleep(1500);
      const f2 = parse(await run(b, fork, READ));
      assert.ok(f2.n > f1.n, `fork ${i}'s counter counts on (${f1.n} then ${f2.n})`);
    }

    // The source and the other fork run on, their processes counting on their own.
    await check(b, src, 'the source after the fork');
    await run(b, forks[0], 'kill $(cut -d" " -f1 /tmp/c)');
    for (const [label, sb] of [['the source', src], ['fork 1', forks[1]]]) {
      const s1 = parse(await run(b, sb, READ));
      await sleep(1500);
      const s2 = parse(await run(b, sb, READ));
      assert.ok(s2.n > s1.n, `${label} counts on after fork 0's counter ended (${s1.n} then ${s2.n})`);
    }

    // Its own identity: address and namespaces (uts: its hostname is its own,
    // carried from the source's).
    const after = await identity(b, src);
    assert.deepEqual(after, before, 'the source keeps its address, hostname and namespaces');
    const seen = [before];
    for (const [i, fork] of forks.entries()) {
      const forked = await identity(b, fork);
      assert.match(forked.address, /^\d+\.\d+\.\d+\.\d+$/, JSON.stringify(forked));
      assert.equal(forked.hostname, before.hostname, 'the hostname is carried');
      for (const other of seen) {
        assert.notEqual(forked.address, other.address, `fork ${i} has its own address`);
        for (let k = 0; k < 3; k++) assert.notEqual(forked.ns[k], other.ns[k], `fork ${i} has its own ${['pid', 'uts', 'net'][k]} namespace`);
      }
      seen.push(forked);
    }

    // Each server answers through the port proxy: the same token, held in
    // each one's memory.
    assert.equal(await served(b, src.id), src.first.served, 'the source\'s server');
    for (const [i, fork] of forks.entries()) assert.equal(await served(b, fork.id), src.first.served, `fork ${i}'s server`);
  } catch (e) {
    throw new Error(`${e.stack}\n--- backend:\n${b.stderr()}`);
  } finally {
    await b.stop().catch(() => {});
  }
});
